"""LangSmith tracing: off without the standard variables (no client is even created); on, a run, its graph
nodes and its model calls are posted, here to a fake LangSmith endpoint on 127.0.0.1."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import langsmith
import langsmith.run_trees
import langsmith.utils
import pytest
from test_graph_control import BAD, GOOD, INTENT, simple

from actsagent.agent import repair
from actsagent.llm import ScriptedChatModel
from actsagent.llm.tracing import flush, tracing_enabled

_SWITCHES = ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING")


@pytest.fixture
def clients(monkeypatch) -> Iterator[list]:
    """Every langsmith.Client constructed during the test; the env cache and the shared client reset around it."""
    made: list = []
    init = langsmith.Client.__init__

    def counting(self, *args, **kwargs):
        made.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(langsmith.Client, "__init__", counting)
    monkeypatch.setattr(langsmith.run_trees, "_CLIENT", None)
    for var in (*_SWITCHES, "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_ENDPOINT", "LANGCHAIN_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    langsmith.utils.get_env_var.cache_clear()
    yield made
    flush()
    langsmith.utils.get_env_var.cache_clear()


def test_no_tracing_and_no_client_without_the_variables(pg_db, clients):
    assert not tracing_enabled()
    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(simple()))
    assert run.status == "solved" and run.usage.llm_calls >= 2
    assert clients == [] and langsmith.run_trees._CLIENT is None


class _FakeLangSmith(BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[str, str, bytes]]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        self.received.append((self.command, self.path, body))
        payload = b"{}"
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = _answer

    def log_message(self, *args) -> None:  # quiet
        pass


@pytest.fixture
def fake_endpoint() -> Iterator[tuple[str, list]]:
    _FakeLangSmith.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeLangSmith)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _FakeLangSmith.received
    finally:
        server.shutdown()
        server.server_close()


def test_runs_nodes_and_model_calls_are_posted_when_enabled(pg_db, clients, fake_endpoint, monkeypatch):
    url, received = fake_endpoint
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_ENDPOINT", url)
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2-test-key")
    monkeypatch.setenv("LANGSMITH_PROJECT", "actsagent-tests")
    langsmith.utils.get_env_var.cache_clear()
    assert tracing_enabled()

    run = repair(INTENT, BAD, pg_db, model=ScriptedChatModel(simple()))
    flush()
    assert run.status == "solved" and run.final_sql == GOOD
    assert clients, "tracing on must create a LangSmith client"
    posts = [body for method, path, body in received if method in ("POST", "PATCH") and path.startswith("/runs")]
    assert posts, f"no runs were posted; requests seen: {[(m, p) for m, p, _ in received]}"
    text = b"\n".join(posts).decode("utf-8", errors="replace")
    names = set(re.findall(r'"name"\s*:\s*"([^"]+)"', text))
    assert "actsagent.repair" in names  # the run
    assert {"plan", "execute", "advance"} <= names  # its graph nodes, reported by LangGraph
    assert "chat_model" in names  # the model calls
    assert '"run_type":"llm"' in text.replace(" ", "")
    assert json.dumps(GOOD)[1:-1] in text  # the answer the scripted model gave is in the trace
