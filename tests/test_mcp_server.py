"""`actsagent mcp` through the official SDK's own client: over stdio (a subprocess of the real command)
and over streamable HTTP (a real server on 127.0.0.1), on the embedded PostgreSQL."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import httpx
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from conftest import REPO
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from test_graph_control import BAD, GOOD, INTENT, clarify_script
from typer.testing import CliRunner

from actsagent.cli import app
from actsagent.errors import UserError
from actsagent.integrations.mcp_server import build_server, http_app
from actsagent.llm import ScriptedChatModel

TOKEN = "s3cret-token"


def _stdio(db_url: str) -> Client:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return Client(
        StdioServerParameters(
            command=sys.executable,
            args=["-c", "from actsagent.cli import main; main()", "mcp", "--db", db_url],
            env=env,
        )
    )


@pytest.fixture(scope="module")
def stdio(module_shop) -> Iterator[tuple[BlockingPortal, Client]]:
    """One ``actsagent mcp`` subprocess for the module's stdio tests, connected through the SDK's client (its
    start, imports and SafeQL model load cost seconds): each test runs its session on the portal's event loop."""
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(_stdio(module_shop.url)) as client:
        yield portal, client


def test_stdio_lists_tools_runs_queries_refuses_and_refines(stdio, module_shop):
    portal, client = stdio

    async def session():
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"list_schema", "run_sql", "inspect_columns", "refine_sql", "repair_sql"} <= names
        assert "ask" not in names  # no model configured: the agent's LLM-free tools only

        ok = await client.call_tool("run_sql", {"sql": "SELECT name FROM customers ORDER BY name"})
        assert not ok.is_error
        first = ok.structured_content["statements"][0]
        assert first["columns"] == ["name"] and first["rows"] == [["Ada"], ["Bob"], ["Chloe"]]

        refused = await client.call_tool("run_sql", {"sql": "DELETE FROM orders"})
        assert refused.is_error
        err = refused.structured_content["statements"][0]["error"]
        assert err["engine"] == "guard" and err["error_class"] == "guard_rejected"

        missing = await client.call_tool("run_sql", {"sql": "SELECT totl FROM orders"})
        assert missing.is_error
        assert missing.structured_content["statements"][0]["error"]["error_class"] == "unknown_column"

        # runs but matches nothing: SafeQL finds the stored value ('DE')
        fixed = await client.call_tool("refine_sql", {"sql": "SELECT name FROM customers WHERE country = 'de'"})
        assert not fixed.is_error
        assert fixed.structured_content["status"] == "refined"
        assert fixed.structured_content["sql"] == "SELECT name FROM customers WHERE country = 'DE'"
        assert fixed.structured_content["rows_preview"] == [["Ada"]]
        renamed = await client.call_tool("refine_sql", {"sql": "SELECT nme FROM customer ORDER BY 1"})
        assert renamed.structured_content["sql"] == "SELECT name FROM customers ORDER BY 1"

        schema = await client.read_resource("actsagent://schema")
        assert "Table customers" in schema.contents[0].text and "Table orders" in schema.contents[0].text
        sample = await client.read_resource("actsagent://tables/orders/sample")
        assert '"row_count":4' in sample.contents[0].text
        with pytest.raises(MCPError, match="unknown table"):
            await client.read_resource('actsagent://tables/orders";DROP TABLE orders;--/sample')
        return True

    assert portal.call(session)
    assert module_shop.execute("SELECT count(*) FROM orders").rows == [[4]]  # the refused DELETE never ran


def test_stdio_repair_without_a_model_reports_progress(stdio):
    portal, client = stdio

    async def session():
        progress: list[tuple[float, str | None]] = []

        async def on_progress(p, total, message):
            progress.append((p, message))

        res = await client.call_tool(
            "repair_sql",
            {"intent": "names of customers from Germany", "sql": "SELECT nme FROM customers WHERE country = 'DE'"},
            progress_callback=on_progress,
        )
        return res, progress

    res, progress = portal.call(session)
    assert res.structured_content["final_sql"] == "SELECT name FROM customers WHERE country = 'DE'"
    assert res.structured_content["result"]["rows"] == [["Ada"]]
    assert [p for p, _ in progress] == sorted({p for p, _ in progress})  # one notification a step, increasing
    assert any("safeql_refine" in (m or "") for _, m in progress)


@contextmanager
def _http_server(asgi) -> Iterator[str]:
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(asgi, host="127.0.0.1", port=0, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the HTTP server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _http(url: str, token: str = TOKEN) -> Client:
    return Client(
        streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
    )


def test_http_checks_the_token_and_serves_a_guarded_query(pg_db):
    with _http_server(http_app(build_server(pg_db), token=TOKEN)) as url:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        anonymous = httpx.post(url, json=body)
        wrong = httpx.post(url, json=body, headers={"Authorization": "Bearer nope"})
        assert anonymous.status_code == 401 and wrong.status_code == 401
        assert "access token" in anonymous.json()["error"]

        async def session():
            async with _http(url) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert tools["run_sql"].output_schema is not None  # typed results, advertised
                res = await client.call_tool("run_sql", {"sql": "SELECT count(*) AS n FROM orders"})
                refused = await client.call_tool("run_sql", {"sql": "SELECT pg_sleep(1)"})
                return res, refused

        res, refused = anyio.run(session)
    assert res.structured_content["statements"][0]["rows"] == [[4]]
    assert refused.is_error and refused.structured_content["statements"][0]["error"]["error_class"] == "guard_rejected"


def test_http_repair_with_a_model_asks_then_finishes_with_the_chosen_reading(pg_db):
    """A scripted model finds an ambiguity: the tool returns the question, the client answers by calling again."""
    server = build_server(pg_db, model=ScriptedChatModel(clarify_script))
    with _http_server(http_app(server, token=TOKEN)) as url:

        async def session():
            progress: list[str] = []

            async def on_progress(p, total, message):
                progress.append(message or "")

            async with _http(url) as client:
                assert "ask" in {t.name for t in (await client.list_tools()).tools}
                paused = await client.call_tool(
                    "repair_sql", {"intent": INTENT, "sql": BAD}, progress_callback=on_progress
                )
                data = paused.structured_content
                done = await client.call_tool(
                    "repair_sql", {"thread_id": data["thread_id"], "answer": "1"}, progress_callback=on_progress
                )
                unknown = await client.call_tool("repair_sql", {"thread_id": "no-such-run", "answer": "1"})
                empty = await client.call_tool("repair_sql", {"intent": "  ", "sql": BAD})
            return paused, done, unknown, empty, progress

        paused, done, unknown, empty, progress = anyio.run(session)
    data = paused.structured_content
    assert data["status"] == "paused" and not paused.is_error
    assert data["clarification"]["question"] == "Should refunded orders count as paid?"
    assert len(data["clarification"]["options"]) == 2 and "thread_id=" in data["next_step"]
    assert "Should refunded orders count as paid?" in paused.content[0].text
    assert any("detect_ambiguities" in m for m in progress) and any("generate_sql" in m for m in progress)
    assert done.structured_content["status"] == "solved" and done.structured_content["final_sql"] == GOOD
    assert done.structured_content["result"]["rows"] == [["Ada", "120.50"], ["Bob", "99.99"]]
    assert unknown.is_error and "no agent run with thread id" in unknown.content[0].text
    assert empty.is_error and "intent" in empty.content[0].text


def test_cli_refuses_a_public_bind_without_a_token_and_names_the_missing_extra(monkeypatch):
    """Bad input is a UserError: ``run_app`` prints its one line and exits 1."""
    runner = CliRunner()
    res = runner.invoke(app, ["mcp", "--transport", "http", "--host", "0.0.0.0"])
    assert res.exit_code == 1 and isinstance(res.exception, UserError)
    assert "without an access token" in str(res.exception)
    res = runner.invoke(app, ["mcp", "--transport", "carrier-pigeon"])
    assert isinstance(res.exception, UserError) and "--transport must be stdio or http" in str(res.exception)

    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a))
    res = runner.invoke(app, ["mcp"])
    assert isinstance(res.exception, UserError) and "pip install 'actsagent[mcp]'" in str(res.exception)


def test_http_repair_names_the_other_readings_left_standing_with_their_sql(pg_db):
    """The judge is unsure of both candidates and no check settles it: the client gets the answer and, typed, the
    other reading with its SQL (the minimal edit, which returns other rows)."""
    import test_graph_verify as gv

    def unsure(messages):
        return {**gv.scores(5, "cannot tell"), "verdict": "unsure"}

    script = gv.leaf_script({"checks": []}, gv.MINIMAL, gv.REWRITE, JudgeScores=unsure)
    server = build_server(pg_db, model=ScriptedChatModel(script))
    with _http_server(http_app(server, token=TOKEN)) as url:

        async def session():
            async with _http(url) as client:
                return await client.call_tool("repair_sql", {"intent": gv.INTENT, "sql": gv.BAD})

        done = anyio.run(session)
    data = done.structured_content
    assert data["status"] == "best_effort" and data["final_sql"] == gv.REWRITE
    (alt,) = data["alternatives"]
    assert alt["sql"] == gv.MINIMAL and alt["node"] != "" and alt["written_as"]
    assert f"return other rows: {alt['node']} (minimal edit of the original)" in done.content[0].text
