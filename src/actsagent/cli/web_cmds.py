"""`actsagent serve` (the web copilot) and `actsagent chat` (the same copilot in the terminal)."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.style import Style
from rich.text import Text

from actsagent.cli._common import DbOption, console, err_console
from actsagent.errors import UserError
from actsagent.web.limits import MAX_BODY_BYTES
from actsagent.web.store import DEFAULT_LEASE_S, parse_store
from actsagent.web.stores import open_store

if TYPE_CHECKING:
    from starlette.types import ASGIApp

StoreOption = typer.Option(
    None,
    "--store",
    help="where conversations are kept: a SQLite file (default: copilot.sqlite in the actsagent home directory), "
    "or a postgresql:// URL that several `serve` replicas behind one address share",
)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("chat")(chat)


def bind_address(host: str) -> tuple[str, str, bool]:
    """``--host`` as (address to bind, host as written in a URL, whether only this machine can reach it).

    Local means ``localhost`` or a loopback address (127.0.0.0/8, ::1); an IPv6 address may come in
    brackets and goes into URLs in brackets.
    """
    bind = host.strip()
    if bind.startswith("[") and bind.endswith("]"):
        bind = bind[1:-1]
    if not bind or any(c.isspace() or c in "[]/@\\" for c in bind):  # (not echoed: it may be rich markup)
        raise UserError("--host is not an address or a host name (give 127.0.0.1, ::1, 0.0.0.0 or a name)")
    try:
        ip = ipaddress.ip_address(bind)
    except ValueError:
        ip = None
    if ip is None and ":" in bind:
        raise UserError("--host takes an address without a port: give the port with --port")
    mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is the IPv4 loopback too
    local = bind.lower() == "localhost" or bool(ip and (ip.is_loopback or (mapped and mapped.is_loopback)))
    return bind, f"[{bind}]" if ip is not None and ip.version == 6 else bind, local


def _model(no_llm: bool):
    if no_llm:
        os.environ["ACTSAGENT_NO_LLM"] = "1"  # the agent reads the same switch: no model anywhere
        return None
    from actsagent.llm import get_chat_model

    return get_chat_model()


def serve(
    db: str = DbOption,
    host: str = typer.Option(
        "127.0.0.1", "--host", help="address to bind; anything but localhost, 127.x or ::1 needs --token"
    ),
    port: int = typer.Option(8765, "--port", min=1, max=65535),
    token: str = typer.Option(
        None, "--token", envvar="ACTSAGENT_TOKEN", help="access token the page and API require (header or ?token=)"
    ),
    tokens: Path = typer.Option(
        None,
        "--tokens",
        help="JSON file mapping each access token to "
        '{"user": ..., "settings": {"app.tenant_id": 42}}: every user gets '
        "their own conversations, and their settings are SET LOCAL in each query "
        "(for row-level security)",
    ),
    store: str = StoreOption,
    lease: float = typer.Option(
        DEFAULT_LEASE_S,
        "--lease",
        min=1.0,
        help="seconds a replica may go silent before its running turns count as interrupted",
    ),
    no_llm: bool = typer.Option(False, "--no-llm", help="run the agent's LLM-free path even if a model is configured"),
    max_body: int = typer.Option(
        MAX_BODY_BYTES,
        "--max-body-bytes",
        min=1024,
        envvar="ACTSAGENT_MAX_BODY_BYTES",
        help="largest request body accepted (bigger ones get 413)",
    ),
    open_browser: bool = typer.Option(False, "--open", help="open the page in a browser"),
) -> None:
    """Start the analyst copilot: a chat page showing the agent's plan, SQL and rows as they come."""
    bind, url_host, local = bind_address(host)
    target = parse_store(store)  # a bad --store is one line, before anything starts (or is imported)
    if token and tokens:
        raise UserError("give either --token (one user) or --tokens (a file of users), not both")
    callers = None
    if tokens:
        from actsagent.web.tenants import load_tokens

        callers = load_tokens(tokens)
    if not local and not (token or callers):
        raise UserError(
            f"refusing to serve on {url_host} without an access token: pass --token (or set "
            f"ACTSAGENT_TOKEN) or --tokens, or bind to 127.0.0.1"
        )
    import uvicorn

    from actsagent.web import create_app

    model = _model(no_llm)
    # DNS rebinding guard for a local server (Starlette compares the Host header without its port)
    allowed = sorted({"127.0.0.1", "localhost", "[::1]", url_host.lower()}) if local else None
    app: ASGIApp
    if callers:
        from actsagent.web.tenants import create_tenant_app

        tenants = create_tenant_app(
            callers,
            db=db,
            model=model,
            store_path=target,
            allowed_hosts=allowed,
            max_body_bytes=max_body,
            lease_s=lease,
        )
        app, label = tenants, tenants.label
    else:
        single = create_app(
            db=db,
            model=model,
            store_path=target,
            token=token,
            allowed_hosts=allowed,
            max_body_bytes=max_body,
            lease_s=lease,
        )
        app, label = single, single.state.db.label
    url = f"http://{url_host}:{port}/"
    # Text, not markup: a URL such as http://[::1]:8765/ is not a rich tag
    console.print(
        Text.assemble(
            ("actsagent copilot", "bold"),
            f" on {label} at ",
            (url, Style(link=url)),
            " (token required)" if token or callers else "",
        )
    )
    if model is None:
        err_console.print(
            "[yellow]no LLM configured:[/] the agent runs its LLM-free path; set OPENAI_API_KEY "
            "(and OPENAI_BASE_URL) to let it write SQL from questions"
        )
    if open_browser:
        import webbrowser

        webbrowser.open(url + (f"?token={token}" if token else ""))
    uvicorn.run(app, host=bind, port=port, log_level=os.environ.get("ACTSAGENT_LOG_LEVEL", "warning"), access_log=False)


def chat(
    db: str = DbOption,
    store: str = StoreOption,
    no_llm: bool = typer.Option(False, "--no-llm", help="run the agent's LLM-free path even if a model is configured"),
) -> None:
    """Chat with the copilot in the terminal: streamed steps, the SQL and a table of rows."""
    from actsagent.cli.chat import ChatSession
    from actsagent.web.agent_bridge import AgentBridge
    from actsagent.web.answer import Answerer
    from actsagent.web.flow import DatabaseHandle, Flow

    model = _model(no_llm)
    handle = DatabaseHandle(db)
    handle.get()  # fail now, with a clear message, if the database cannot be opened
    conversations = open_store(store)
    try:
        failures = ChatSession(Flow(handle, AgentBridge(model), Answerer(model)), conversations, console).run()
    finally:
        conversations.close()
        handle.close()
    if failures:
        raise typer.Exit(1)
