"""One turn at a time per conversation, kept by the store itself (threads of one server, or processes
sharing the SQLite file); a crashed turn frees its conversation; what a turn stores and streams is
bounded however large the rows or the messages are."""

from __future__ import annotations

import json
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import psycopg
import pytest
from fastapi.testclient import TestClient
from web_server import LiveServer

from actsagent.config import Limits
from actsagent.graphs.tree import PlanNode, PlanTree
from actsagent.tools import ExecSummary, GenerateSqlOutput, RunSqlOutput
from actsagent.web import create_app
from actsagent.web.app import event_stream_lines
from actsagent.web.flow import Step
from actsagent.web.limits import MAX_CELL_CHARS, MAX_MESSAGE_CHARS, MAX_PREVIEW_BYTES, MAX_TEXT_CHARS
from actsagent.web.runner import TurnRunner, record
from actsagent.web.store import ConversationBusy, ConversationStore
from actsagent.web.store_sqlite import SqliteStore

BUSY = {"detail": "An answer is still being worked out in this conversation."}


def _drain(runner: TurnRunner, tid: str) -> None:
    """Wait (on the turn's channel, no polling) until its worker has finished (and dropped the channel)."""
    ch = runner.channel(tid)
    seen, more = 0, ch is not None
    while more:
        evs, more = ch.wait(seen, 30.0)
        seen = evs[-1].seq if evs else seen


def test_twenty_simultaneous_posts_start_exactly_one_turn(pg_db_factory, tmp_path):
    db = pg_db_factory(
        ["CREATE TABLE t (x int)", "INSERT INTO t VALUES (1), (2)"], limits=Limits(statement_timeout_s=60)
    )
    app = create_app(db=db, store_path=tmp_path / "c.sqlite")
    with LiveServer(app) as url, httpx.Client(base_url=url, timeout=60) as c, psycopg.connect(db.url) as locker:
        cid = c.post("/api/conversations", json={}).json()["id"]
        # the table is locked: the turn that starts stays running until the test lets it go
        locker.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
        barrier = threading.Barrier(20)

        def post(i: int) -> httpx.Response:
            barrier.wait()
            return c.post(f"/api/conversations/{cid}/sql", json={"sql": f"SELECT count(*) + {i} AS n FROM t"})

        with ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(post, range(20)))
        assert sorted(r.status_code for r in answers) == [202] + [409] * 19
        assert all(r.json() == BUSY for r in answers if r.status_code == 409)
        started = next(r.json() for r in answers if r.status_code == 202)
        # while it runs the conversation cannot be deleted either
        assert (c.delete(f"/api/conversations/{cid}").json()) == BUSY
        locker.rollback()  # the turn goes on

        events = event_stream_lines(c.get(f"/api/turns/{started['id']}/events").text)
        offset = int(started["sql"].split("+ ")[1].split()[0])
        assert next(e for e in events if e["type"] == "result")["data"]["result"]["rows"] == [[2 + offset]]
        conv = c.get(f"/api/conversations/{cid}").json()
        assert [(t["id"], t["status"]) for t in conv["turn_list"]] == [(started["id"], "done")]
        # the conversation is free again
        assert c.post(f"/api/conversations/{cid}/sql", json={"sql": "SELECT 1 AS one"}).status_code == 202


def one_turn_starts(stores: list[ConversationStore], cid: str) -> tuple[int, str]:
    """Twenty requests at once on two stores of one conversation: exactly one starts a turn, which then blocks
    deleting the conversation; returns which store started it, and the turn's id."""
    barrier = threading.Barrier(20)

    def start(i: int) -> tuple[int, str] | None:
        barrier.wait()
        try:
            return i % 2, stores[i % 2].add_turn(cid, "run", sql="SELECT 1").id
        except ConversationBusy:
            return None

    with ThreadPoolExecutor(20) as pool:
        started = [t for t in pool.map(start, range(20)) if t]
    assert len(started) == 1
    with pytest.raises(ConversationBusy):
        stores[1].delete_conversation(cid)
    with pytest.raises(KeyError):
        stores[0].add_turn("no-such-conversation", "run")
    return started[0]


def test_stores_sharing_one_file_start_one_turn_between_them(tmp_path):
    path = tmp_path / "c.sqlite"
    stores = [SqliteStore(path), SqliteStore(path)]  # two connections, as two processes would have
    cid = stores[0].create_conversation("race").id
    _, started = one_turn_starts(stores, cid)
    assert stores[1].end_if_running(started, "done")
    turn = stores[1].add_turn(cid, "run", sql="SELECT 2")
    assert (turn.index, turn.status) == (1, "running")


def test_a_paused_turn_is_resumed_once_and_never_beside_another(tmp_path):
    store = SqliteStore(tmp_path / "c.sqlite")
    cid = store.create_conversation("c").id
    paused = store.add_turn(cid, "ask", question="which revenue?")
    store.update_turn(paused.id, status="awaiting_clarification")
    running = store.add_turn(cid, "run", sql="SELECT 1")
    with pytest.raises(ConversationBusy):  # a reply may not resume a run beside a running turn
        store.claim_turn(paused.id)
    store.update_turn(running.id, status="done")
    barrier = threading.Barrier(10)

    def claim(_: int) -> bool:
        barrier.wait()
        return store.claim_turn(paused.id)

    with ThreadPoolExecutor(10) as pool:
        assert sorted(pool.map(claim, range(10))) == [False] * 9 + [True]


def test_a_store_from_before_the_rule_is_repaired_when_opened(tmp_path):
    path = tmp_path / "c.sqlite"
    store = SqliteStore(path)
    cid = store.create_conversation("old").id
    first = store.add_turn(cid, "run", sql="SELECT 1")
    store.close()
    with sqlite3.connect(path) as conn:  # what the race left behind before the unique index existed
        conn.execute("DROP INDEX turns_one_running")
        conn.execute(
            "INSERT INTO turns (id, conversation_id, idx, kind, question, sql, status, thread_id, final_sql, answer, "
            "created_at) SELECT 'second', conversation_id, 1, kind, question, sql, 'running', thread_id, "
            "final_sql, answer, created_at FROM turns WHERE id = ?",
            (first.id,),
        )
    conn.close()
    store = SqliteStore(path)
    conv = store.get_conversation(cid)
    assert [t.status for t in conv.turn_list] == ["interrupted", "interrupted"]
    assert conv.turn_list[0].events[0].message.startswith("The server stopped while this answer was being worked out")
    assert store.add_turn(cid, "run").index == 2


def test_a_crashed_turn_says_what_failed_and_frees_its_conversation(tmp_path):
    store = SqliteStore(tmp_path / "c.sqlite")
    runner = TurnRunner(store)
    cid = store.create_conversation("c").id
    turn = store.add_turn(cid, "ask", question="q")

    def steps():
        yield Step(type="start", message="q")
        raise RuntimeError("a bug in a step\nsecond line")

    runner.start(turn.id, steps)
    _drain(runner, turn.id)
    events = store.events(turn.id)
    assert [e.type for e in events] == ["start", "error", "done"]
    assert events[1].message == (
        "The copilot failed while working this out (RuntimeError: a bug in a step); the details are in the server log."
    )
    assert store.get_turn(turn.id).status == "failed"
    assert store.add_turn(cid, "run").index == 1
    runner.shutdown()


def test_a_turn_ended_by_a_sweep_while_its_worker_writes_keeps_every_event_and_its_status(tmp_path):
    store = SqliteStore(tmp_path / "c.sqlite")
    other = SqliteStore(tmp_path / "c.sqlite")  # another replica on the file: it sweeps this one's turn away
    turn = store.add_turn(store.create_conversation("c").id, "ask", question="q")

    def steps():
        yield Step(type="start", message="q")
        assert other.mark_interrupted(all_others=True) == 1  # takes seqs 2 and 3, which the worker counted on
        yield Step(type="final", data={"final_sql": "SELECT 1"})
        yield Step(type="done", data={"status": "done", "final_sql": "SELECT 1"})

    assert [e.seq for e in record(store, turn.id, steps())] == [1, 4, 5]
    assert [(e.seq, e.type) for e in store.events(turn.id)] == [
        (1, "start"),
        (2, "error"),
        (3, "done"),
        (4, "final"),
        (5, "done"),
    ]
    ended = store.get_turn(turn.id)
    assert (ended.status, ended.final_sql) == ("interrupted", "SELECT 1")


def _stored_sizes(store: SqliteStore) -> list[int]:
    with sqlite3.connect(store.path) as conn:
        return [r[0] for r in conn.execute("SELECT length(body) FROM events")]


def test_big_results_and_messages_are_stored_and_sent_bounded(pg_db, tmp_path):
    client = TestClient(create_app(db=pg_db, store_path=tmp_path / "c.sqlite"))
    store = client.app.state.store
    cid = client.post("/api/conversations", json={}).json()["id"]

    def run(sql: str) -> tuple[list[dict], str]:
        r = client.post(f"/api/conversations/{cid}/sql", json={"sql": sql})
        assert r.status_code == 202, r.text
        raw = client.get(f"/api/turns/{r.json()['id']}/events").text
        return event_stream_lines(raw), raw

    # 500 rows of 6 KB, and 5 MB in the first row's last value: about 8 MB from the database
    events, raw = run(
        "SELECT g, repeat('a', 1999) AS a, repeat('b', 1999) AS b, repeat('c', 1999) AS c, "
        "CASE WHEN g = 1 THEN repeat('d', 5000000) END AS big FROM generate_series(1, 500) AS g"
    )
    view = next(e for e in events if e["type"] == "result")["data"]["result"]
    kept = len(view["rows"])
    assert view["row_count"] == 500 and view["truncated"] is True and view["more_rows"] is False and 0 < kept < 500
    assert [r[0] for r in view["rows"]] == list(range(1, kept + 1))
    assert view["rows"][0][4].startswith("d" * MAX_CELL_CHARS) and view["rows"][0][4].endswith(
        f"[{5_000_000 - MAX_CELL_CHARS:,} more characters cut]"
    )
    assert view["rows"][1][1] == "a" * 1999  # values under the cell cap are whole
    assert len(json.dumps(view["rows"]).encode()) <= MAX_PREVIEW_BYTES
    assert view["note"] == (
        f"showing {kept:,} of 500 rows, the preview keeps at most {MAX_PREVIEW_BYTES // 1024} KB"
        "; 1 long value(s) cut to 2,000 characters"
    )
    assert len(raw) < 2 * MAX_PREVIEW_BYTES
    words = next(e for e in events if e["type"] == "answer")["message"]
    assert words.startswith("500 rows. First: g = 1, a = aaaa") and len(words) < 300

    # more rows than a preview keeps (the database's cap is 1,000)
    events, _ = run("SELECT g FROM generate_series(1, 5000) AS g")
    view = next(e for e in events if e["type"] == "result")["data"]["result"]
    assert (view["row_count"], len(view["rows"]), view["truncated"], view["more_rows"]) == (1000, 500, True, True)
    assert view["note"] == (
        "the database stopped at its row cap; showing 500 of 1,000 rows, the preview keeps at most 500 rows"
    )

    # one row wider than a whole preview: no rows kept, and words that say so
    events, _ = run("SELECT " + ", ".join(f"repeat('w', 1999) AS c{i}" for i in range(140)))
    view = next(e for e in events if e["type"] == "result")["data"]["result"]
    assert (view["row_count"], view["rows"], len(view["columns"])) == (1, [], 140)
    assert next(e for e in events if e["type"] == "answer")["message"] == "1 row(s), too wide to preview."

    # a database error quoting a 3 MB literal
    events, raw = run("SELECT repeat('x', 3000000)::int")
    err = next(e for e in events if e["type"] == "error")
    assert err["message"].startswith("The database rejected the SQL") and "more characters cut]" in err["message"]
    assert len(err["message"]) < MAX_MESSAGE_CHARS + 100 and len(raw) < 3 * MAX_MESSAGE_CHARS
    assert max(_stored_sizes(store)) < 2 * MAX_PREVIEW_BYTES


def test_every_step_is_cut_to_size_before_it_is_stored(tmp_path):
    store = SqliteStore(tmp_path / "c.sqlite")
    cid = store.create_conversation("c").id
    turn = store.add_turn(cid, "repair", sql="SELECT 1")
    node = PlanNode(
        id="n0",
        tool="generate_sql",
        description="L" * 50_000,
        summary="D" * 1_000_000,
        output=GenerateSqlOutput(
            sql="S" * 500_000,
            source="llm",
            execution=RunSqlOutput(ok=False, statements=[ExecSummary(sql="S", ok=False)]),
        ),
    )
    tree = PlanTree(nodes={"n0": node}, root="n0")
    huge = Step(
        type="node_end",
        node_id="n0",
        message="M" * 1_000_000,
        tree=tree,
        data={"list": list(range(10_000)), "sql": "s" * 500_000, "rows": [["v" * 100_000] * 50] * 50},
    )
    done = Step(type="done", data={"status": "done", "final_sql": "F" * 500_000})
    stored = list(record(store, turn.id, iter([huge, done])))
    ev = store.events(turn.id)[0]
    assert ev == stored[0]
    assert len(ev.message) < MAX_MESSAGE_CHARS + 100 and ev.message.endswith("more characters cut]")
    assert len(ev.data["sql"]) < MAX_TEXT_CHARS + 100
    assert ev.data["list"][1000] == "… [9,000 more entries cut]"
    assert ev.data["rows"][0][0] == "v" * 100_000 and "more entries cut]" in ev.data["rows"][-1]  # the budget ran out
    node = ev.tree.nodes["n0"]
    assert len(node.description) < 1_100 and len(node.summary) < 4_100
    assert isinstance(node.output, GenerateSqlOutput) and len(node.output.sql) < MAX_TEXT_CHARS + 100
    assert max(_stored_sizes(store)) < 1_300_000
    finished = store.get_turn(turn.id)
    assert finished.status == "done" and len(finished.final_sql) < MAX_TEXT_CHARS + 100
