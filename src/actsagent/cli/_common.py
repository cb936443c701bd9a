"""Helpers every command module shares: options, JSON output, error-to-exit translation."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from actsagent.errors import ActsagentError

console = Console(soft_wrap=True)
err_console = Console(stderr=True)

DbOption = typer.Option(None, "--db", help="postgresql:// URL, SQLite file, or embedded database name "
                                          "(default: $DATABASE_URL, else the embedded demo database)")
JsonOption = typer.Option(False, "--json", help="print machine-readable JSON instead of tables")
SettingOption = typer.Option(None, "--setting", metavar="NAME=VALUE",
                             help="a per-caller setting (e.g. app.tenant_id=42) SET LOCAL in every transaction on "
                                  "PostgreSQL, for row-level security; repeatable")


def run_app(app: typer.Typer) -> int:
    try:
        rv = app(standalone_mode=False)  # click returns the code of typer.Exit instead of raising here
        return rv if isinstance(rv, int) else 0
    except ActsagentError as e:
        err_console.print(f"[bold red]error:[/] {e}")
        return 1
    except typer.Exit as e:
        return e.exit_code
    except typer.Abort:
        err_console.print("aborted")
        return 130
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return 130
    except Exception as e:  # click usage errors
        import click

        if isinstance(e, click.ClickException):
            e.show()
            return e.exit_code
        raise
    return 0


def print_json(obj: Any) -> None:
    if hasattr(obj, "model_dump"):
        obj = obj.model_dump(mode="json")
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def print_summary(summary: dict[str, Any], *, json_out: bool, footer: str) -> None:
    """A batch job's summary: JSON for scripts, else one metric a line and where the files are."""
    if json_out:
        print_json(summary)
        return
    for k, v in summary.items():
        console.print(f"{k}: {v}")
    console.print(footer)


def rows_table(columns: list[str], rows: list[list[Any]], *, title: str | None = None, max_rows: int = 50) -> Table:
    table = Table(title=title, show_lines=False, header_style="bold cyan")
    for c in columns:
        table.add_column(c)
    for r in rows[:max_rows]:
        table.add_row(*["NULL" if v is None else str(v) for v in r])
    if len(rows) > max_rows:
        table.caption = f"{len(rows) - max_rows} more rows not shown"
    return table


db_app = typer.Typer(no_args_is_help=True, help="Manage databases: the embedded server, loading, roles.")
