"""`actsagent check` (the guard on one statement) and `actsagent db provision-role`."""

from __future__ import annotations

import typer

from actsagent.cli._common import DbOption, JsonOption, console, db_app, err_console, print_json
from actsagent.errors import UserError


def register(app: typer.Typer) -> None:
    app.command("check")(check)


def check(sql: str = typer.Argument(..., help="the SQL to check"),
          dialect: str = typer.Option("postgres", "--dialect", help="postgres or sqlite"),
          max_rows: int = typer.Option(1000, "--max-rows", min=1, help="row cap for the injected LIMIT"),
          json_out: bool = JsonOption) -> None:
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


@db_app.command("provision-role")
def provision_role(name: str = typer.Argument(..., help="role to create or reset"),
                   schema: list[str] = typer.Option(["public"], "--schema", help="schema to grant SELECT on "
                                                    "(repeat for several)"),
                   db: str = DbOption,
                   password: str = typer.Option(None, "--password", help="login password (the embedded server "
                                                "uses trust auth on its socket and needs none)"),
                   timeout: float = typer.Option(5.0, "--timeout", help="the role's statement_timeout in seconds"),
                   connection_limit: int = typer.Option(5, "--connection-limit", min=1),
                   adopt: bool = typer.Option(False, "--adopt", help="reset an existing role actsagent did not "
                                              "create (it loses its memberships, attributes and settings)"),
                   json_out: bool = JsonOption) -> None:
    """Create or reset a read-only PostgreSQL login role (SELECT only, read-only default, timeouts)."""
    from actsagent.db import open_database
    from actsagent.db.roles import provision_readonly_role

    database = open_database(db)
    try:
        if database.dialect != "postgres":
            raise UserError("read-only roles are for PostgreSQL; SQLite files are opened read-only already")
        info = provision_readonly_role(database.url, name, schemas=schema, password=password,
                                       statement_timeout_s=timeout, connection_limit=connection_limit, adopt=adopt)
    finally:
        database.close()
    if json_out:
        print_json(info)
        return
    verb = "created" if info.created else "reset"
    console.print(f"[green]{verb}[/] read-only role [bold]{info.role}[/] on {info.database}: SELECT on "
                  f"{info.tables_granted} relations in {', '.join(info.schemas)}; statement_timeout "
                  f"{info.statement_timeout_s:g}s, connection limit {info.connection_limit}")
    console.print(f"connect with: --db '{info.url}'", markup=False, highlight=False)
