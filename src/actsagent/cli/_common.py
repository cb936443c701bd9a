"""Helpers every command module shares: options, JSON output, error-to-exit translation."""

from __future__ import annotations

import json
import logging
import math
import os
import sys
from typing import Any, NamedTuple

import pydantic
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from actsagent.errors import ActsagentError

console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)  # a message stays one line

DbOption = typer.Option(
    None,
    "--db",
    help="postgresql:// URL, SQLite file, or embedded database name "
    "(default: $DATABASE_URL, else the embedded demo database)",
)
EngineOption = typer.Option(
    "local", "--engine", help="local (threads here) | ray (actors on a Ray cluster; pip install 'actsagent[ray]')"
)
AddressOption = typer.Option(
    None,
    "--address",
    help="with --engine ray: the cluster to join (e.g. auto, ray://head:10001); default: start one here",
)
JsonOption = typer.Option(False, "--json", help="print machine-readable JSON instead of tables")
SettingOption = typer.Option(
    None,
    "--setting",
    metavar="NAME=VALUE",
    help="a per-caller setting (e.g. app.tenant_id=42) SET LOCAL in every transaction on "
    "PostgreSQL, for row-level security; repeatable",
)


def run_app(app: typer.Typer, args: list[str] | None = None) -> int:
    """Run the CLI: whatever goes wrong ends as one line on stderr and a non-zero exit, never a traceback.

    ``ACTSAGENT_DEBUG=1`` shows the traceback of an unexpected error (a bug) instead.
    """
    try:
        rv = app(args=args, prog_name="actsagent", standalone_mode=False)  # typer.Exit's code comes back
        return rv if isinstance(rv, int) else 0
    except ActsagentError as e:
        _error(str(e))
        return 1
    except typer.Exit as e:
        return e.exit_code
    except typer.Abort:
        err_console.print("aborted")
        return 130
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return 130
    except typer.TyperException as e:  # usage errors: bad or missing options and arguments
        ctx = getattr(e, "ctx", None)  # usage errors carry the command they belong to
        if e.format_message():  # (a bare group without a command has printed its help already)
            _error(e.format_message() + (f" (see {ctx.command_path} --help)" if ctx is not None else ""))
        return e.exit_code
    except pydantic.ValidationError as e:
        _error(
            "invalid value: " + "; ".join(f"{'.'.join(map(str, x['loc'])) or 'input'}: {x['msg']}" for x in e.errors())
        )
        return 2
    except OSError as e:
        _error(f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e) or type(e).__name__)
        return 1
    except Exception as e:
        if os.environ.get("ACTSAGENT_DEBUG"):
            raise
        _error(f"unexpected {type(e).__name__}: {e} (a bug: set ACTSAGENT_DEBUG=1 for the traceback and report it)")
        return 1


def _error(message: str) -> None:
    err_console.print(f"[bold red]error:[/] {escape(' '.join(message.split()))}", highlight=False)


class _WarningLine(logging.Handler):
    """actsagent's warnings (a missing embedding model, a degraded feature) as one line each on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        err_console.print(f"[yellow]warning:[/] {escape(record.getMessage())}", highlight=False)


def show_warnings() -> None:
    logger = logging.getLogger("actsagent")
    if not any(isinstance(h, _WarningLine) for h in logger.handlers):
        logger.addHandler(_WarningLine(logging.WARNING))
        logger.propagate = False


# --------------------------------------------------------------------------- numeric options
# Every int or float option of every command is checked here, by name, before the command runs: click's
# ranges let nan through, and a timeout of 0, -1 or inf would otherwise reach the database as a traceback.


class Bounds(NamedTuple):
    low: float
    high: float
    low_open: bool = True  # the lowest value itself is refused
    unit: str = ""


SECONDS = Bounds(0, 86_400, unit=" seconds")
COUNT = Bounds(1, 2**31 - 1, low_open=False)  # a count, cap or limit, within what both engines take
POSITIVE = Bounds(0, 2**31 - 1)
BOUNDS = {"alpha": Bounds(0, 1, low_open=False)}  # options that are none of the above


def _bounds(name: str, value: int | float) -> Bounds:
    if name in BOUNDS:
        return BOUNDS[name]
    if name.endswith(("timeout", "time_limit")):
        return SECONDS
    return COUNT if isinstance(value, int) else POSITIVE


def _number_check(name: str, then):
    def check(ctx: Any, param: Any, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            b = _bounds(name, value)
            too_low = value <= b.low if b.low_open else value < b.low
            if not math.isfinite(value) or too_low or value > b.high:
                raise typer.BadParameter(
                    f"must be {'greater than' if b.low_open else 'at least'} {b.low} and at most "
                    f"{b.high}{b.unit}, not {value:g}",
                    ctx=ctx,
                    param=param,
                )
        return then(ctx, param, value) if then else value

    check.numbers_checked = True  # type: ignore[attr-defined]
    return check


def check_numeric_options(command: Any) -> None:
    """Add the bounds check to every option of ``command`` and of its subcommands (numbers only are checked)."""
    for param in command.params:  # checked by value: typer's and click's parameter types differ
        if not getattr(param.callback, "numbers_checked", False):
            param.callback = _number_check(param.name or "", param.callback)
    for sub in (getattr(command, "commands", None) or {}).values():
        check_numeric_options(sub)


class CheckedGroup(TyperGroup):
    """The root group: builds the commands with their numeric options checked (see ``check_numeric_options``)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_numeric_options(self)


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
