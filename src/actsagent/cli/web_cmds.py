"""`actsagent serve` (the web copilot) and `actsagent chat` (the same copilot in the terminal)."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from actsagent.cli._common import DbOption, console, err_console
from actsagent.errors import UserError

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
StoreOption = typer.Option(None, "--store", help="SQLite file for conversations (default: copilot.sqlite in the "
                                                 "actsagent home directory)")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("chat")(chat)


def _model(no_llm: bool):
    if no_llm:
        os.environ["ACTSAGENT_NO_LLM"] = "1"  # the agent reads the same switch: no model anywhere
        return None
    from actsagent.llm import get_chat_model

    return get_chat_model()


def serve(db: str = DbOption,
          host: str = typer.Option("127.0.0.1", "--host", help="address to bind; anything but localhost needs "
                                                                "--token"),
          port: int = typer.Option(8765, "--port", min=1, max=65535),
          token: str = typer.Option(None, "--token", envvar="ACTSAGENT_TOKEN",
                                    help="access token the page and API require (header or ?token=)"),
          tokens: Path = typer.Option(None, "--tokens", help="JSON file mapping each access token to "
                                      "{\"user\": ..., \"settings\": {\"app.tenant_id\": 42}}: every user gets "
                                      "their own conversations, and their settings are SET LOCAL in each query "
                                      "(for row-level security)"),
          store: Path = StoreOption,
          no_llm: bool = typer.Option(False, "--no-llm", help="run the agent's LLM-free path even if a model "
                                                              "is configured"),
          open_browser: bool = typer.Option(False, "--open", help="open the page in a browser")) -> None:
    """Start the analyst copilot: a chat page showing the agent's plan, SQL and rows as they come."""
    import uvicorn

    from actsagent.web import create_app

    loopback = host in _LOOPBACK
    if token and tokens:
        raise UserError("give either --token (one user) or --tokens (a file of users), not both")
    callers = None
    if tokens:
        from actsagent.web.tenants import load_tokens

        callers = load_tokens(tokens)
    if not loopback and not (token or callers):
        raise UserError(f"refusing to serve on {host} without an access token: pass --token (or set "
                        f"ACTSAGENT_TOKEN) or --tokens, or bind to 127.0.0.1")
    model = _model(no_llm)
    # DNS rebinding guard for a localhost server (Starlette compares the Host header without its port)
    allowed = ["127.0.0.1", "localhost"] if host in ("127.0.0.1", "localhost") else None
    if callers:
        from actsagent.web.tenants import create_tenant_app

        app = create_tenant_app(callers, db=db, model=model, store_path=store, allowed_hosts=allowed)
        label = app.label
    else:
        app = create_app(db=db, model=model, store_path=store, token=token, allowed_hosts=allowed)
        label = app.state.db.label
    url = f"http://{'[::1]' if host == '::1' else host}:{port}/"
    console.print(f"[bold]actsagent copilot[/] on {label} at [link={url}]{url}[/link]"
                  + (" (token required)" if token or callers else ""))
    if model is None:
        err_console.print("[yellow]no LLM configured:[/] the agent runs its LLM-free path; set OPENAI_API_KEY "
                          "(and OPENAI_BASE_URL) to let it write SQL from questions")
    if open_browser:
        import webbrowser

        webbrowser.open(url + (f"?token={token}" if token else ""))
    uvicorn.run(app, host=host, port=port, log_level=os.environ.get("ACTSAGENT_LOG_LEVEL", "warning"),
                access_log=False)


def chat(db: str = DbOption, store: Path = StoreOption,
         no_llm: bool = typer.Option(False, "--no-llm", help="run the agent's LLM-free path even if a model "
                                                             "is configured")) -> None:
    """Chat with the copilot in the terminal: streamed steps, the SQL and a table of rows."""
    from actsagent.web.agent_bridge import AgentBridge
    from actsagent.web.answer import Answerer
    from actsagent.web.flow import DatabaseHandle, Flow
    from actsagent.web.store import ConversationStore
    from actsagent.web.terminal import ChatSession

    model = _model(no_llm)
    handle = DatabaseHandle(db)
    handle.get()  # fail now, with a clear message, if the database cannot be opened
    conversations = ConversationStore(store)
    try:
        failures = ChatSession(Flow(handle, AgentBridge(model), Answerer(model)), conversations, console).run()
    finally:
        conversations.close()
        handle.close()
    if failures:
        raise typer.Exit(1)
