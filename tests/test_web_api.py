"""The copilot's HTTP API on the real demo database, with the real agent and a scripted model:
streamed steps, clarification, guarded reruns, stored conversations, and failures as messages."""

from __future__ import annotations

import psycopg
import pytest
from copilot_script import ORDERS_BY_STATUS, PAID_BY_MONTH, REVENUE_PAID, copilot_model
from fastapi.testclient import TestClient

from actsagent.demo import ensure_demo
from actsagent.web import create_app
from actsagent.web.app import event_stream_lines
from actsagent.web.results import jsonable


def _rows(db, sql: str) -> list[list]:
    """What the database itself returns for ``sql``, as the page receives it."""
    return [[jsonable(v) for v in r] for r in db.execute(sql).rows]


@pytest.fixture(scope="module")
def demo_db():
    db = ensure_demo()  # the embedded demo database, loaded on first use
    yield db
    db.close()


def _client(db, tmp_path, **kw) -> TestClient:
    kw.setdefault("store_path", tmp_path / "copilot.sqlite")
    return TestClient(create_app(db=db, **kw))


def _events(client: TestClient, turn_id: str, after: int = 0) -> list[dict]:
    r = client.get(f"/api/turns/{turn_id}/events", params={"after": after})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    return event_stream_lines(r.text)


def _conversation(client: TestClient) -> str:
    r = client.post("/api/conversations", json={})
    assert r.status_code == 201
    return r.json()["id"]


def _ask(client: TestClient, cid: str, question: str) -> tuple[dict, list[dict]]:
    r = client.post(f"/api/conversations/{cid}/ask", json={"question": question})
    assert r.status_code == 202, r.text
    turn = r.json()
    return turn, _events(client, turn["id"])


def _run(client: TestClient, cid: str, sql: str, action: str = "run") -> tuple[dict, list[dict]]:
    r = client.post(f"/api/conversations/{cid}/sql", json={"sql": sql, "action": action})
    assert r.status_code == 202, r.text
    turn = r.json()
    return turn, _events(client, turn["id"])


def _last_tree(events: list[dict]) -> dict:
    """The plan tree as the last step that changed it left it."""
    return next(e["tree"] for e in reversed(events) if e["tree"] is not None)


def _one(events: list[dict], etype: str) -> dict:
    found = [e for e in events if e["type"] == etype]
    assert len(found) == 1, (etype, [e["type"] for e in events])
    return found[0]


def test_ask_streams_plan_then_sql_rows_words_and_chart(demo_db, tmp_path):
    client = _client(demo_db, tmp_path, model=copilot_model())
    cid = _conversation(client)
    turn, events = _ask(client, cid, "How many orders per status?")
    types = [e["type"] for e in events]
    assert types[0] == "start" and types[-1] == "done"
    for t in ("plan", "node_start", "node_end", "candidate", "final", "result", "answer"):
        assert t in types, types
    assert types.index("plan") < types.index("node_start") < types.index("final") < types.index("result")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))

    plan = _one(events, "plan")
    assert plan["tree"]["root"] in plan["tree"]["nodes"]  # the agent's own tree
    statuses = sorted((n["tool"], n["status"]) for n in _last_tree(events)["nodes"].values())
    # the planned leaf is accepted; its direct-rewrite sibling, which returned the same rows, is done
    assert statuses == [("generate_sql", "accepted"), ("generate_sql", "done"), ("run_sql", "done")]

    final = _one(events, "final")
    assert final["data"]["final_sql"] == ORDERS_BY_STATUS
    assert final["data"]["verdict_ok"] is True
    result = _one(events, "result")["data"]["result"]
    assert result["columns"] == ["status", "orders"]
    assert result["rows"] == _rows(demo_db, ORDERS_BY_STATUS)
    answer = _one(events, "answer")["data"]
    assert answer["text"] == "Scripted answer in words." and answer["by"] == "llm"
    assert answer["chart"]["kind"] == "bar"
    assert _one(events, "done")["data"]["status"] == "done"

    stored = client.get(f"/api/turns/{turn['id']}").json()
    assert stored["status"] == "done" and stored["final_sql"] == ORDERS_BY_STATUS
    assert [e["seq"] for e in stored["events"]] == [e["seq"] for e in events]
    convs = client.get("/api/conversations").json()
    assert convs[0]["id"] == cid and convs[0]["title"] == "How many orders per status?" and convs[0]["turns"] == 1
    # a listener that reconnects gets only what it missed
    assert [e["seq"] for e in _events(client, turn["id"], after=len(events) - 2)] == [len(events) - 1, len(events)]


def test_follow_up_question_carries_the_previous_question_and_sql(demo_db, tmp_path):
    model = copilot_model()
    client = _client(demo_db, tmp_path, model=model)
    cid = _conversation(client)
    _ask(client, cid, "How many orders per status?")
    _, events = _ask(client, cid, "and the payments per month?")
    assert _one(events, "final")["data"]["final_sql"] == PAID_BY_MONTH
    assert _one(events, "answer")["data"]["chart"]["kind"] == "line"
    drafts = [c for c in model.calls if c.response_model == "GeneratedSQL"]
    follow_up = drafts[-1].last_user
    assert "and the payments per month?" in follow_up
    assert "Earlier in this conversation" in follow_up and ORDERS_BY_STATUS in follow_up


def test_clarification_pauses_the_run_and_the_reply_resumes_it(demo_db, tmp_path):
    client = _client(demo_db, tmp_path, model=copilot_model())
    cid = _conversation(client)
    turn, events = _ask(client, cid, "What is the revenue per product category?")
    clarify = _one(events, "clarify")
    assert clarify["data"]["question"] == "Which orders should count as revenue?"
    assert clarify["data"]["options"] == ["all orders, whatever their status", "only PAID orders"]
    assert events[-1]["data"]["status"] == "awaiting_clarification"
    assert "final" not in [e["type"] for e in events]
    branches = [n for n in _last_tree(events)["nodes"].values() if n["parent"] is not None]
    assert len(branches) == 2  # one branch per reading, both still open
    assert client.get(f"/api/turns/{turn['id']}").json()["status"] == "awaiting_clarification"

    r = client.post(f"/api/turns/{turn['id']}/clarify", json={"answer": "only PAID orders"})
    assert r.status_code == 202, r.text
    more = _events(client, turn["id"], after=events[-1]["seq"])
    assert more[0]["type"] == "reply" and more[0]["message"] == "only PAID orders"
    assert _one(more, "final")["data"]["final_sql"] == REVENUE_PAID
    assert _one(more, "result")["data"]["result"]["rows"] == _rows(demo_db, REVENUE_PAID)
    tree = _last_tree(more)["nodes"]
    branches = {n["description"]: n["status"] for n in tree.values() if n["parent"] is not None}
    # the chosen reading's candidate was confirmed by its direct rewrite returning the same rows
    assert branches == {
        "reading 1 of 'revenue': all orders, whatever their status": "skipped",  # you chose the other reading
        "reading 2 of 'revenue': only PAID orders": "accepted",
        "direct rewrite from the request (a second, independent candidate)": "done",
    }, branches
    assert more[-1]["data"]["status"] == "done"
    # answering again is refused: the run is no longer waiting
    assert client.post(f"/api/turns/{turn['id']}/clarify", json={"answer": "1"}).status_code == 409


def test_edited_sql_reruns_through_the_strict_guard(demo_db, tmp_path):
    client = _client(demo_db, tmp_path)
    cid = _conversation(client)
    _, events = _run(client, cid, "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY n")
    result = _one(events, "result")["data"]["result"]
    assert [r[0] for r in result["rows"]] == ["CANCELLED", "REFUNDED", "PAID"]
    sql_ran = _one(events, "final")["data"]["final_sql"]
    assert "LIMIT" in sql_ran.upper()  # the guard's regenerated SQL is what ran
    assert _one(events, "answer")["data"]["by"] == "rule"

    before = demo_db.execute("SELECT count(*) FROM orders").rows[0][0]
    for hostile in ("DELETE FROM orders", "SELECT 1; DROP TABLE orders", "SELECT pg_sleep(10)"):
        turn, events = _run(client, cid, hostile)
        err = _one(events, "error")
        assert err["data"]["kind"] == "guard", err
        assert err["message"].startswith("The SQL safety guard refused this statement:")
        assert "Traceback" not in err["message"]
        assert "result" not in [e["type"] for e in events]
        assert client.get(f"/api/turns/{turn['id']}").json()["status"] == "failed"
    assert demo_db.execute("SELECT count(*) FROM orders").rows[0][0] == before


def test_sql_errors_are_messages(demo_db, tmp_path):
    client = _client(demo_db, tmp_path)
    cid = _conversation(client)
    _, events = _run(client, cid, "SELECT nope FROM orders")
    err = _one(events, "error")
    assert err["data"]["kind"] == "sql" and err["data"]["error_class"] == "unknown_column"
    assert "nope" in err["message"] and err["message"].startswith("The database rejected the SQL")


def test_database_down_is_a_message(pg_db_factory, pg_admin_url, tmp_path):
    db = pg_db_factory(["CREATE TABLE t (x int)", "INSERT INTO t VALUES (1), (2)"])
    client = _client(db, tmp_path)
    cid = _conversation(client)
    _, events = _run(client, cid, "SELECT x FROM t ORDER BY x")
    assert _one(events, "result")["data"]["result"]["rows"] == [[1], [2]]
    name = db.name
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:  # the database goes away under the copilot
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", [name])
        conn.execute(f'DROP DATABASE "{name}"')
    _, events = _run(client, cid, "SELECT x FROM t")
    err = _one(events, "error")
    assert err["data"]["kind"] == "database"
    assert err["message"].startswith("The database is unavailable:") and "Traceback" not in err["message"]
    assert f'database "{name}" does not exist' in err["message"]  # the server's answer, not a wait that ran out
    assert events[-1]["data"]["status"] == "failed"
    # a database that cannot be opened at all: the status says so, the page shows a banner
    down = _client("/nonexistent/copilot.sqlite", tmp_path)
    st = down.get("/api/status").json()
    assert st["database_ok"] is False and "not found" in st["database_error"]


def test_llm_failure_is_a_message(demo_db, tmp_path):
    from actsagent.llm import ProviderError

    client = _client(demo_db, tmp_path, model=copilot_model(fail_with=ProviderError.server_error("upstream 500")))
    cid = _conversation(client)
    _turn, events = _ask(client, cid, "How many orders per status?")
    err = _one(events, "error")
    assert err["data"]["kind"] == "llm" and err["message"].startswith("The language model failed:")
    assert "upstream 500" in err["message"] and "Traceback" not in err["message"]
    assert events[-1]["data"]["status"] == "failed"


def test_without_llm_the_status_says_so_and_pasted_sql_still_runs(demo_db, tmp_path):
    client = _client(demo_db, tmp_path, model=None)
    st = client.get("/api/status").json()
    assert st["llm"] is False and "No LLM is configured" in st["llm_note"]
    assert st["database_ok"] is True and st["dialect"] == "postgres"
    cid = _conversation(client)
    _, events = _ask(client, cid, "How many orders per status?")
    assert _one(events, "start")["data"]["llm"] is False
    err = _one(events, "error")
    assert "needs a model" in err["message"]
    # the LLM-free path repairs pasted SQL: a misspelt column is refined by SafeQL
    _, events = _run(client, cid, "SELECT statuss, count(*) FROM orders GROUP BY statuss", action="repair")
    final = _one(events, "final")["data"]["final_sql"]
    assert final and "statuss" not in final and "status" in final
    assert len(_one(events, "result")["data"]["result"]["rows"]) == 3


def test_conversations_survive_a_restart(demo_db, tmp_path):
    store = tmp_path / "copilot.sqlite"
    first = _client(demo_db, tmp_path, store_path=store)
    cid = _conversation(first)
    _run(first, cid, "SELECT count(*) AS n FROM customers")
    stuck = first.app.state.store.add_turn(cid, "ask", question="left running when the server died")
    first.close()

    second = _client(demo_db, tmp_path, store_path=store)
    conv = second.get(f"/api/conversations/{cid}").json()
    assert [t["kind"] for t in conv["turn_list"]] == ["run", "ask"]
    done, interrupted = conv["turn_list"]
    assert done["status"] == "done" and any(e["type"] == "result" for e in done["events"])
    assert interrupted["id"] == stuck.id and interrupted["status"] == "interrupted"
    assert interrupted["events"][-2]["type"] == "error"
    assert second.get("/api/conversations").json()[0]["id"] == cid
    assert second.delete(f"/api/conversations/{cid}").status_code == 204
    assert second.get(f"/api/conversations/{cid}").status_code == 404


def test_access_token_and_request_checks(demo_db, tmp_path):
    client = _client(demo_db, tmp_path, token="s3cret", allowed_hosts=["127.0.0.1", "localhost", "testserver"])
    page = client.get("/")
    assert page.status_code == 200 and "actsagent copilot" in page.text  # the page itself asks for the token
    assert client.get("/static/app.js").status_code == 200
    r = client.get("/api/status")
    assert r.status_code == 401 and r.json() == {"detail": "This copilot needs its access token."}
    assert client.get("/api/status", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/api/status", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert client.get("/api/status", headers={"X-Actsagent-Token": "s3cret"}).status_code == 200
    assert client.get("/api/status", params={"token": "s3cret"}).status_code == 200
    # a cross-site form post is not JSON: refused before it reaches the agent
    r = client.post(
        "/api/conversations",
        content="title=x",
        params={"token": "s3cret"},
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 415
    # DNS rebinding: a foreign Host header is refused
    assert client.get("/api/status", params={"token": "s3cret"}, headers={"Host": "evil.example"}).status_code == 400
    assert (
        client.post("/api/conversations/nope/ask", json={"question": "x"}, params={"token": "s3cret"}).status_code
        == 404
    )
    assert client.post("/api/conversations", json={"title": "x" * 500}, params={"token": "s3cret"}).status_code == 422


def test_copilot_runs_as_a_read_only_role(pg_db, tmp_path):
    import uuid

    from actsagent.db.roles import provision_readonly_role

    role = f"ro_{uuid.uuid4().hex[:10]}"
    info = provision_readonly_role(pg_db, role)
    client = _client(info.url, tmp_path)  # `actsagent serve --db <the role's URL>`
    try:
        cid = _conversation(client)
        _, events = _run(client, cid, "SELECT name FROM customers ORDER BY id")
        assert _one(events, "result")["data"]["result"]["rows"] == [["Ada"], ["Bob"], ["Chloe"]]
        assert client.get("/api/status").json()["database_ok"] is True
    finally:
        client.app.state.db.close()
        with psycopg.connect(pg_db.url, autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role])
            conn.execute(f'DROP OWNED BY "{role}"')
            conn.execute(f'DROP ROLE "{role}"')


def test_a_pending_clarification_survives_a_restart(demo_db, tmp_path):
    store = tmp_path / "copilot.sqlite"
    first = _client(demo_db, tmp_path, store_path=store, model=copilot_model())
    cid = _conversation(first)
    turn, events = _ask(first, cid, "What is the revenue per product category?")
    assert events[-1]["data"]["status"] == "awaiting_clarification"
    first.close()

    second = _client(demo_db, tmp_path, store_path=store, model=copilot_model())
    assert second.get(f"/api/turns/{turn['id']}").json()["status"] == "awaiting_clarification"
    assert second.post(f"/api/turns/{turn['id']}/clarify", json={"answer": "2"}).status_code == 202
    more = _events(second, turn["id"], after=events[-1]["seq"])
    assert _one(more, "final")["data"]["final_sql"] == REVENUE_PAID
    assert more[-1]["data"]["status"] == "done"


def test_agent_events_are_typed_and_carry_the_tree_as_it_stood():
    from pydantic import ValidationError

    from actsagent.graphs.models import NodeEvent
    from actsagent.graphs.runtime import Runtime, call_events
    from actsagent.graphs.tree import NodeSpec, PlanTree
    from actsagent.tools import ToolContext
    from actsagent.web.flow import agent_step

    tree = PlanTree()
    readings = [NodeSpec(description=f"reading {i}", tool="generate_sql") for i in (1, 2)]
    tree.add_spec(NodeSpec(description="find ambiguities", tool="detect_ambiguities", children=readings), None)
    rt = Runtime(ctx=ToolContext(db=None, model=None))  # type: ignore[arg-type]

    def end_n1() -> None:
        tree.nodes["n1"].status = "refuted"
        rt.emit("node_end", "generate_sql refuted", "n1", tree=tree)
        tree.nodes["n2"].status = "accepted"  # the run goes on changing its tree: the event keeps the one it sent

    (ev,) = list(call_events(end_n1))  # events reach the caller through the graph's custom stream
    assert isinstance(ev, NodeEvent) and ev.type == "node_end" and ev.node is not None and ev.node.status == "refuted"
    assert ev.tree.nodes["n2"].status == "pending"
    with pytest.raises(ValidationError, match="summary"):  # a key the kind lacks is refused where it is sent
        list(call_events(lambda: rt.emit("node_end", "refuted", "n1", tree=tree, summary="nothing reads this")))
    with pytest.raises(ValidationError):  # not a candidate status
        list(call_events(lambda: rt.emit("candidate", "PASS", "n2", sql="SELECT 2", status="accepted", passed=True)))
    with pytest.raises(RuntimeError):  # outside a graph's step there is no stream to write to
        rt.emit("note", "nobody hears this")
    step = agent_step(ev)
    assert step.type == "node_end" and step.data == {} and step.tree == ev.tree

    def clarify() -> None:
        rt.emit("clarify", "Which orders count?", "n0", question="Which orders count?", options=["all", "paid"])

    (ev,) = list(call_events(clarify))
    assert agent_step(ev).data == {"question": "Which orders count?", "phrase": "", "options": ["all", "paid"]}
