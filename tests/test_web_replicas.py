"""Copilot replicas sharing one PostgreSQL store, as real processes on real ports: a turn started on one streams
from another, a replica killed mid-turn leaves its turn interrupted, a clarification asked on one is answered on
another and the run resumes there (the agent's checkpoints are in the store too). Bad ``--store`` values are one
line and a non-zero exit."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest
from copilot_script import REVENUE_PAID
from test_web_turns import one_turn_starts

import actsagent
from actsagent.db.admin import advisory_lock
from actsagent.demo import ensure_demo
from actsagent.web.store import INTERRUPTED_TEXT, PG_SCHEMA
from actsagent.web.stores import open_store

TESTS = Path(__file__).parent
SRC = str(Path(actsagent.__file__).parents[1])


_GIVEN: set[int] = set()


def _free_port() -> int:
    """A free port, never one handed out before (replicas started together pick theirs before either binds)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _GIVEN:
            _GIVEN.add(port)
            return port


def _env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)  # each replica its own home: only the store is shared
    return {**os.environ, "ACTSAGENT_HOME": str(home), "PYTHONUNBUFFERED": "1", "PYTHONPATH": SRC}


@contextmanager
def _process(argv: list[str], home: Path, port: int) -> Iterator[tuple[subprocess.Popen, httpx.Client]]:
    """A server process and a client for its port; killed (if still alive) when the block ends."""
    log = open(home.with_suffix(".log"), "w")  # noqa: SIM115 - closed below, after the process
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=_env(home), cwd=TESTS)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
    try:
        yield proc, client
    finally:
        client.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)
        log.close()


def _answers(proc: subprocess.Popen, client: httpx.Client, home: Path) -> None:
    """Wait until the server answers on its port (it must not exit meanwhile)."""
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, home.with_suffix(".log").read_text()
        try:
            if client.get("/api/status").status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, home.with_suffix(".log").read_text()
        time.sleep(0.05)


@contextmanager
def _replicas(*specs: tuple[list[str], Path, int]) -> Iterator[list[tuple[subprocess.Popen, httpx.Client]]]:
    """Server processes, all started at once (they start up side by side), yielded once each one answers."""
    with ExitStack() as stack:
        started = [stack.enter_context(_process(*spec)) for spec in specs]
        for (proc, client), (_, home, _) in zip(started, specs, strict=True):
            _answers(proc, client, home)
        yield started


def _serve(db_url: str, store_url: str, home: Path, lease: float = 2.0) -> tuple[list[str], Path, int]:
    port = _free_port()
    argv = [sys.executable, "-c", "from actsagent.cli import main; main()", "serve", "--port", str(port)]
    argv += ["--db", db_url, "--store", store_url, "--no-llm", "--lease", str(lease)]
    return argv, home, port


def _scripted(db_url: str, store_url: str, home: Path, lease: float = 2.0) -> tuple[list[str], Path, int]:
    port = _free_port()
    return [sys.executable, "replica_server.py", db_url, store_url, str(port), str(lease)], home, port


def _stream(client: httpx.Client, tid: str, after: int = 0) -> Iterator[dict]:
    """The turn's events as the replica sends them, one at a time, until its stream ends."""
    with client.stream("GET", f"/api/turns/{tid}/events", params={"after": after}) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data: ") and line != "data: {}":
                yield json.loads(line[6:])


def test_a_turn_started_on_one_replica_streams_from_another_and_a_killed_one_leaves_it_interrupted(
    pg_db_factory, tmp_path
):
    store = pg_db_factory()
    db = pg_db_factory(["CREATE TABLE t (x int)", "INSERT INTO t VALUES (1), (2)"])
    with (
        _replicas(_serve(db.url, store.url, tmp_path / "a"), _serve(db.url, store.url, tmp_path / "b")) as [
            (proc_a, a),
            (_, b),
        ],
        psycopg.connect(db.url) as locker,
    ):
        cid = a.post("/api/conversations", json={}).json()["id"]
        assert [c["id"] for c in b.get("/api/conversations").json()] == [cid]

        # a turn on A, held by a lock on its table, streams from B while it runs, and to its end
        locker.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
        turn = a.post(f"/api/conversations/{cid}/sql", json={"sql": "SELECT sum(x) AS s FROM t"}).json()
        events = _stream(b, turn["id"])
        assert next(events)["type"] == "start"
        assert b.get(f"/api/turns/{turn['id']}").json()["status"] == "running"
        assert b.post(f"/api/conversations/{cid}/sql", json={"sql": "SELECT 1"}).status_code == 409  # one at a time
        locker.rollback()
        rest = list(events)
        assert next(e for e in rest if e["type"] == "result")["data"]["result"]["rows"] == [[3]]
        assert rest[-1]["type"] == "done" and rest[-1]["data"]["status"] == "done"
        assert b.get(f"/api/turns/{turn['id']}").json()["status"] == "done"

        # A is killed mid-turn: B, streaming that turn, sees it end as interrupted once A's lease runs out
        locker.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
        stuck = a.post(f"/api/conversations/{cid}/sql", json={"sql": "SELECT count(*) FROM t"}).json()
        events = _stream(b, stuck["id"])
        assert next(events)["type"] == "start"
        proc_a.send_signal(signal.SIGKILL)
        proc_a.wait(30)
        rest = list(events)
        locker.rollback()
        assert [e["type"] for e in rest] == ["error", "done"]
        assert rest[0]["message"] == INTERRUPTED_TEXT and rest[1]["data"]["status"] == "interrupted"
        conv = b.get(f"/api/conversations/{cid}").json()
        assert [t["status"] for t in conv["turn_list"]] == ["done", "interrupted"]
        # the conversation is free again, on the replica that is left
        again = b.post(f"/api/conversations/{cid}/sql", json={"sql": "SELECT count(*) AS n FROM t"}).json()
        assert list(_stream(b, again["id"]))[-1]["data"]["status"] == "done"


def test_a_clarification_asked_on_one_replica_is_answered_on_another(pg_db_factory, tmp_path):
    store = pg_db_factory()
    demo = ensure_demo()
    try:
        demo_url = demo.url
    finally:
        demo.close()
    with _replicas(_scripted(demo_url, store.url, tmp_path / "a"), _scripted(demo_url, store.url, tmp_path / "b")) as [
        (proc_a, a),
        (_, b),
    ]:
        cid = a.post("/api/conversations", json={}).json()["id"]
        r = a.post(f"/api/conversations/{cid}/ask", json={"question": "What is the revenue per product category?"})
        turn = r.json()
        asked = list(_stream(a, turn["id"]))
        clarify = next(e for e in asked if e["type"] == "clarify")
        assert clarify["message"] == "Which orders should count as revenue?"
        assert asked[-1]["data"]["status"] == "awaiting_clarification"
        proc_a.send_signal(signal.SIGKILL)  # the run's state is in the store, not in A
        proc_a.wait(30)

        assert b.get(f"/api/turns/{turn['id']}").json()["status"] == "awaiting_clarification"
        assert b.post(f"/api/turns/{turn['id']}/clarify", json={"answer": "2"}).status_code == 202
        assert b.post(f"/api/turns/{turn['id']}/clarify", json={"answer": "2"}).status_code == 409  # resumed once
        more = list(_stream(b, turn["id"], after=asked[-1]["seq"]))
        assert more[0]["type"] == "reply" and more[0]["message"] == "2"
        assert next(e for e in more if e["type"] == "final")["data"]["final_sql"] == REVENUE_PAID
        assert more[-1]["data"]["status"] == "done"
        assert b.get(f"/api/turns/{turn['id']}").json()["status"] == "done"
    with psycopg.connect(store.url) as conn:  # both halves of the run were checkpointed in the store
        (n,) = conn.execute(
            f"SELECT count(*) FROM {PG_SCHEMA}.checkpoints WHERE thread_id = %s", [turn["thread_id"]]
        ).fetchone()
    assert n > 0
    assert not list((tmp_path / "b").glob("agent_runs.sqlite"))  # no local checkpoints on either replica
    assert not list((tmp_path / "a").glob("agent_runs.sqlite"))


def test_postgres_stores_keep_one_running_turn_and_end_a_stopped_replicas_turns(pg_db_factory):
    url = pg_db_factory().url
    with ThreadPoolExecutor(2) as pool:  # two replicas creating the tables at once
        stores = list(pool.map(lambda _: open_store(url, lease_s=60), range(2)))
    try:
        cid = stores[0].create_conversation("race").id
        which, running = one_turn_starts(stores, cid)
        # both replicas beat: a sweep ends nothing; one stops, and the other ends its turn at once
        assert stores[0].mark_interrupted() == stores[1].mark_interrupted() == 0
        other = stores[1 - which]
        assert other.get_turn(running).status == "running"
        stopped = open_store(url, lease_s=60)
        turn = stopped.add_turn(stopped.create_conversation("left").id, "ask", question="q")
        with psycopg.connect(url, autocommit=True) as conn:  # its heartbeat stops for good, as when it is killed
            conn.execute(f"DELETE FROM {PG_SCHEMA}.replicas WHERE id = %s", [stopped.replica])
        assert other.mark_interrupted() == 1 and stores[which].mark_interrupted() == 0
        assert other.get_turn(turn.id).status == "interrupted"
        assert [e.type for e in other.events(turn.id)] == ["error", "done"]
        assert other.get_turn(running).status == "running"  # the live replica's turn is untouched
        stopped.close()
    finally:
        for s in stores:
            s.close()


def test_a_replica_waiting_to_create_the_checkpoint_tables_never_stalls_the_one_creating_them(pg_db_factory):
    """The holder of the setup lock builds indexes concurrently, which waits for every older snapshot: a waiter
    must not hold one while it waits, or the two wait for each other forever (replicas started together)."""
    url = pg_db_factory(["CREATE TABLE t (x int)"]).url
    key, taken = f"setup {uuid.uuid4().hex}", threading.Event()

    def wait_for_the_lock() -> None:
        with advisory_lock(url, key):
            taken.set()

    with advisory_lock(url, key), psycopg.connect(url, autocommit=True) as builder:
        waiter = threading.Thread(target=wait_for_the_lock)
        waiter.start()
        for _ in range(1200):  # until the waiter has asked for the lock too
            (asking,) = builder.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE %s",
                ["SELECT pg_%advisory_lock(hashtext(%"],
            ).fetchone()
            if asking >= 2:
                break
            time.sleep(0.05)
        assert asking >= 2
        builder.execute("SET statement_timeout = '30s'")  # (a stalled build fails here, instead of hanging the run)
        builder.execute("CREATE INDEX CONCURRENTLY t_x ON t (x)")
        assert not taken.is_set()
    waiter.join(30)
    assert taken.is_set()


def test_each_user_of_a_multi_user_copilot_gets_a_schema_of_their_own(pg_db_factory):
    from actsagent.web.store import parse_store

    target = parse_store(pg_db_factory().url)
    alice, bob, dotted = (target.for_user(u) for u in ("alice", "a.l-ice", "a_l_ice"))
    assert len({alice.pg_schema, bob.pg_schema, dotted.pg_schema, target.pg_schema}) == 4
    a, b = open_store(alice), open_store(bob)
    try:
        a.create_conversation("alice's")
        assert [c.title for c in a.list_conversations()] == ["alice's"] and b.list_conversations() == []
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize(
    "store,message",
    [
        ("mysql://db.example/copilot", "--store takes a SQLite file or a postgresql:// URL"),
        (
            "postgresql://copilot:hunter2@127.0.0.1:1/copilot",
            "cannot open the conversation store postgresql://copilot:***@127.0.0.1:1/copilot: ",
        ),
        (".", "--store . is a directory: give a SQLite file or a postgresql:// URL"),
    ],
)
def test_a_bad_store_is_one_line_and_a_non_zero_exit(store, message, tmp_path):
    res = subprocess.run(
        [sys.executable, "-c", "from actsagent.cli import main; main()", "serve", "--store", store, "--no-llm"],
        capture_output=True,
        text=True,
        env=_env(tmp_path / "home"),
        cwd=tmp_path,
        timeout=120,
    )
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "hunter2" not in res.stderr, res.stderr
