"""`actsagent check`: the guard on one statement."""

from __future__ import annotations

import typer

from actsagent.cli._common import JsonOption, console, err_console, print_json
from actsagent.errors import UserError


def register(app: typer.Typer) -> None:
    app.command("check")(check)


def check(
    sql: str = typer.Argument(..., help="the SQL to check"),
    dialect: str = typer.Option("postgres", "--dialect", help="postgres or sqlite"),
    max_rows: int = typer.Option(1000, "--max-rows", min=1, help="row cap for the injected LIMIT"),
    json_out: bool = JsonOption,
) -> None:
    """Check SQL with the strict guard: print the SQL that would run, or why it is refused (exit 1)."""
    from actsagent.guard import Policy, check_sql

    if dialect not in ("postgres", "sqlite"):
        raise UserError(f"unknown dialect {dialect!r}: use postgres or sqlite")
    res = check_sql(sql, dialect, Policy.strict(max_rows=max_rows))
    if json_out:
        print_json(res)
    elif res.ok:
        console.print(res.sql, markup=False, highlight=False, soft_wrap=True)
        if res.limit_action not in ("kept", "none"):
            err_console.print(f"[dim]row limit {res.limit_action}: {res.row_limit}[/]")
    else:
        err_console.print(f"[bold red]rejected[/] ({res.rule}): {res.reason}", highlight=False)
    if not res.ok:
        raise typer.Exit(1)
