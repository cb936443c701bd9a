"""`actsagent mcp`: the MCP server (stdio for a desktop client, streamable HTTP for a shared one)."""

from __future__ import annotations

import importlib.util
import os

import typer

from actsagent.cli._common import DbOption, err_console
from actsagent.cli.web_cmds import _model, bind_address
from actsagent.errors import UserError

_TRANSPORTS = ("stdio", "http")


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp_cmd)


def mcp_cmd(
    db: str = DbOption,
    transport: str = typer.Option(
        "stdio", "--transport", "-t", help="stdio (a client starts this command) or http (streamable HTTP at /mcp)"
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="address to bind (http); anything but localhost needs --token"
    ),
    port: int = typer.Option(8766, "--port", min=1, max=65535),
    token: str = typer.Option(
        None,
        "--token",
        envvar="ACTSAGENT_TOKEN",
        help="access token HTTP clients must send (Authorization: Bearer ...)",
    ),
    max_rows: int = typer.Option(50, "--max-rows", min=1, max=1000, help="row cap of every query"),
    no_llm: bool = typer.Option(False, "--no-llm", help="run the agent's LLM-free path even if a model is configured"),
) -> None:
    """Serve the schema, guarded read-only SQL, SafeQL refinement and the repair agent over MCP."""
    if transport not in _TRANSPORTS:
        raise UserError(f"--transport must be stdio or http, not {transport!r}")
    if importlib.util.find_spec("mcp") is None:
        raise UserError("the MCP server needs the mcp package: pip install 'actsagent[mcp]'")
    bind, url_host, local = bind_address(host)
    if transport == "http" and not local and not token:
        raise UserError(
            f"refusing to serve MCP on {url_host} without an access token: pass --token (or set "
            f"ACTSAGENT_TOKEN), or bind to 127.0.0.1"
        )
    from actsagent.demo import open_target
    from actsagent.integrations.mcp_server import build_server, http_app

    database = open_target(db)
    try:
        server = build_server(database, model=_model(no_llm), max_rows=max_rows)
        if transport == "stdio":
            server.run("stdio")  # stdout carries the protocol: nothing else may print there
            return
        import uvicorn

        url = f"http://{url_host}:{port}/mcp"
        err_console.print(
            f"actsagent MCP server on {database.name} at {url}" + (" (token required)" if token else ""), markup=False
        )
        uvicorn.run(
            http_app(server, host=bind, token=token),
            host=bind,
            port=port,
            access_log=False,
            log_level=os.environ.get("ACTSAGENT_LOG_LEVEL", "warning"),
        )
    finally:
        database.close()
