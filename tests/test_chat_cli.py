"""`actsagent chat`: the copilot's turns in a terminal (streamed steps, SQL, a table, clarification),
on the real demo database with the scripted model, and through the CLI without an LLM."""

from __future__ import annotations

import io

from copilot_script import ORDERS_BY_STATUS, REVENUE_PAID, copilot_model
from rich.console import Console
from typer.testing import CliRunner

from actsagent.cli import app
from actsagent.cli.chat import ChatSession
from actsagent.demo import ensure_demo
from actsagent.web.agent_bridge import AgentBridge
from actsagent.web.answer import Answerer
from actsagent.web.flow import DatabaseHandle, Flow
from actsagent.web.store_sqlite import SqliteStore

runner = CliRunner()


def _feed(lines: list[str]):
    it = iter(lines)

    def read(prompt: str) -> str:
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    return read


def test_chat_streams_steps_sql_rows_and_asks_back(tmp_path):
    db = ensure_demo()
    model = copilot_model(answer="PAID leads.")
    out = io.StringIO()
    console = Console(file=out, width=140, color_system=None)
    store = SqliteStore(tmp_path / "c.sqlite")
    session = ChatSession(
        Flow(DatabaseHandle(db), AgentBridge(model), Answerer(model)),
        store,
        console,
        read=_feed(
            [
                "How many orders per status?",
                "What is the revenue per product category?",
                "2",
                "/run SELECT count(*) AS n",
                "FROM customers;",
                "/bogus",
                "/quit",
            ]
        ),
    )
    failures = session.run()
    text = out.getvalue()
    assert failures == 0, text
    assert "plan:" in text and "▶ n0 run_sql: run the first draft" in text
    assert ORDERS_BY_STATUS.split(" FROM")[0] in text and "PAID leads." in text
    for status, n in db.execute(ORDERS_BY_STATUS).rows:
        assert status in text and str(n) in text
    assert "3 row(s)" in text
    assert "the copilot asks" in text and "Which orders should count as revenue?" in text
    assert "1. all orders, whatever their status" in text and "2. only PAID orders" in text
    assert "you answered: only PAID orders" in text
    assert "note: user clarified 'revenue': only PAID orders" in text  # the run's notes come with its answer
    assert "o.status = 'PAID'" in text
    assert "unknown command /bogus" in text
    (n_customers,) = db.execute("SELECT count(*) FROM customers").rows[0]
    assert f"{n_customers}" in text

    convs = store.list_conversations()
    assert len(convs) == 1 and convs[0].turns == 3  # the browser shows this conversation too
    turns = store.get_conversation(convs[0].id).turn_list
    assert [t.status for t in turns] == ["done", "done", "done"]
    assert turns[1].final_sql == REVENUE_PAID
    # the follow-up carried the first question's SQL as context
    drafts = [c for c in model.calls if c.response_model == "GeneratedSQL"]
    assert ORDERS_BY_STATUS in drafts[1].last_user
    store.close()
    db.close()


def test_chat_command_without_llm(sqlite_db, tmp_path):
    res = runner.invoke(
        app,
        ["chat", "--db", str(sqlite_db.path), "--store", str(tmp_path / "c.sqlite")],
        input="/run SELECT name, country FROM customers ORDER BY id;\n"
        "Who spent the most?\n"
        "/run DROP TABLE orders;\n"
        "/quit\n",
    )
    out = res.output
    assert "No LLM is configured" in out
    assert "Ada" in out and "Chloe" in out and "3 row(s)" in out
    assert "needs a model" in out
    assert "The SQL safety guard refused this statement" in out
    assert "Traceback" not in out
    assert res.exit_code == 1  # two turns failed: the exit code says so for scripted use
    assert sqlite_db.execute("SELECT count(*) FROM orders").rows[0][0] == 4


def test_bad_database_and_unsafe_bind_are_clear_errors(tmp_path):
    import sys

    from actsagent.cli._common import run_app

    argv = sys.argv
    try:
        sys.argv = ["actsagent", "chat", "--db", str(tmp_path / "missing.sqlite")]
        assert run_app(app) == 1
        sys.argv = ["actsagent", "serve", "--host", "0.0.0.0", "--db", str(tmp_path / "missing.sqlite")]
        assert run_app(app) == 1
    finally:
        sys.argv = argv
    res = runner.invoke(app, ["serve", "--host", "0.0.0.0"])
    assert res.exit_code != 0
    assert "without an access token" in str(res.exception) or "without an access token" in res.output
