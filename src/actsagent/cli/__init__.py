"""The ``actsagent`` command: a thin layer over the library (the sqlite-utils shape).

Each ``*_cmds`` module of this package that defines ``register(app)`` adds its commands, so features
land without editing a central file; other modules (``chat``) load when a command needs them, so the
command starts without the agent's graph library. Library exceptions become one clear line and exit 1.
"""

from __future__ import annotations

import gc
import importlib
import pkgutil
import sys

import typer

from actsagent.cli._common import (  # modules add `actsagent db ...` commands to db_app
    CheckedGroup,
    SettingOption,
    db_app,
)

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=CheckedGroup,
    help="actsagent: make LLM-written SQL correct and safe.",
)

app.add_typer(db_app, name="db")


@app.callback()
def _global_options(setting: list[str] = SettingOption) -> None:
    # options for every command (the app's help text stays the one given to typer.Typer above)
    from actsagent.db.connect import set_default_settings
    from actsagent.db.settings import parse_assignments

    set_default_settings(parse_assignments(setting or []))  # also reset: tests run many commands in one process


for _mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _mod.endswith("_cmds"):
        _module = importlib.import_module(f"{__name__}.{_mod}")
        if hasattr(_module, "register"):
            _module.register(app)


def main() -> None:
    import logging

    from actsagent.cli._common import run_app, show_warnings

    # sqlglot logs a warning for every statement it keeps as an opaque Command (function bodies, DO
    # blocks); actsagent reports what it could not parse itself, so the CLI keeps that log quiet.
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    show_warnings()
    code = run_app(app)
    # Nothing is left to collect: at exit the interpreter would walk every object of every imported module
    # (hundreds of thousands) through the cyclic collector, about a second of a short command's time.
    gc.freeze()
    sys.exit(code)
