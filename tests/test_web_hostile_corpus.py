"""Every statement of the hostile corpus (tests/data/hostile_sql/, whatever files it holds) sent through
the copilot's API as an edited SQL to rerun and as pasted SQL to repair (the agent's LLM-free path),
against the embedded PostgreSQL as a superuser: each answer is a refusal or an error message, no value
of a sensitive source reaches an event or the store, and the database is unchanged."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager

import httpx
import psycopg
from hostile_corpus import HostileStatement, load_corpus

from actsagent.web import create_app
from actsagent.web.app import event_stream_lines


def _snapshot(url: str) -> dict:
    """Every user relation with its rows, and the roles, settings and large objects of the server."""
    with psycopg.connect(url) as conn:
        rels = conn.execute(
            "SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') "
            "AND n.nspname NOT LIKE 'pg_toast%%' AND n.nspname NOT LIKE 'pg_temp%%' "
            "ORDER BY 1, 2"
        ).fetchall()
        rows = {
            f"{s}.{r}": conn.execute(f'SELECT * FROM "{s}"."{r}" ORDER BY 1').fetchall()
            for s, r, kind in rels
            if kind in ("r", "S")
        }
        return {
            "relations": rels,
            "rows": rows,
            "roles": conn.execute(
                "SELECT rolname, rolsuper, rolcanlogin, rolpassword FROM pg_authid ORDER BY 1"
            ).fetchall(),
            "settings": conn.execute("SELECT * FROM pg_db_role_setting ORDER BY 1, 2").fetchall(),
            "functions": conn.execute("SELECT count(*) FROM pg_proc").fetchone(),
            "large_objects": conn.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone(),
        }


@contextmanager
def _sensitive_values(db_url: str, admin_url: str) -> Iterator[list[str]]:
    """Values only a sensitive source holds: a password hash, another session's query, the data
    directory, a file's contents. None of them is in the corpus's own text."""
    role, marker = f"canary_{uuid.uuid4().hex[:10]}", f"activity-canary-{uuid.uuid4().hex}"
    with psycopg.connect(admin_url, autocommit=True) as admin, psycopg.connect(db_url, autocommit=True) as other:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-{uuid.uuid4().hex}'")
        try:
            (hashed,) = admin.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", [role]).fetchone()
            (data_dir,) = admin.execute("SHOW data_directory").fetchone()
            other.execute(f"SELECT '{marker}'")  # stays in pg_stat_activity.query while the session is idle
            with open("/etc/passwd") as f:
                passwd = f.readline().strip()
            yield [role, hashed, hashed.split("$")[-1], marker, data_dir, passwd]
        finally:
            admin.execute(f"DROP ROLE {role}")


async def _send_all(app, corpus: list[HostileStatement]) -> list[tuple[HostileStatement, str, int, list[dict]]]:
    """Each statement as a rerun and as a repair, one conversation per statement, eight statements at a
    time in one event loop (no thread per request); each turn's events read back from its stream."""
    gate = asyncio.Semaphore(8)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://copilot") as c:

        async def send(stmt: HostileStatement) -> list[tuple[HostileStatement, str, int, list[dict]]]:
            async with gate:
                cid = (await c.post("/api/conversations", json={})).json()["id"]
                out = []
                for action in ("run", "repair"):
                    r = await c.post(f"/api/conversations/{cid}/sql", json={"sql": stmt.sql, "action": action})
                    raw = (await c.get(f"/api/turns/{r.json()['id']}/events")).text if r.status_code == 202 else ""
                    out.append((stmt, action, r.status_code, event_stream_lines(raw)))
                return out

        return [turn for turns in await asyncio.gather(*(send(s) for s in corpus)) for turn in turns]


def _got_through(events: list[dict]) -> bool:
    """Anything but one plain error message and a failed end."""
    errors = [e for e in events if e["type"] == "error"]
    return not (
        events
        and events[-1]["type"] == "done"
        and events[-1]["data"]["status"] == "failed"
        and not any(e["type"] in ("result", "answer") for e in events)
        and len(errors) == 1
        and errors[0]["message"].strip()
        and "Traceback" not in errors[0]["message"]
        and errors[0]["data"]["kind"] != "internal"
    )


def test_the_hostile_corpus_through_the_copilot_gets_nothing(pg_db, pg_admin_url, tmp_path):
    corpus = load_corpus(pg_db.dialect)
    assert len(corpus) >= 300, "the corpus lost statements"
    app = create_app(db=pg_db, model=None, store_path=tmp_path / "c.sqlite")
    with _sensitive_values(pg_db.url, pg_admin_url) as secrets:
        assert not any(s in stmt.sql for s in secrets for stmt in corpus)
        before = _snapshot(pg_db.url)
        turns = asyncio.run(_send_all(app, corpus))
        after = _snapshot(pg_db.url)
    assert len(turns) == 2 * len(corpus) and {code for *_, code, _ in turns} == {202}
    assert [
        (action, stmt.file, stmt.sql, [(e["type"], e["message"][:200]) for e in events])
        for stmt, action, _, events in turns
        if _got_through(events)
    ] == []
    refused = {
        action: sum(
            1
            for _, a, _, events in turns
            if a == action and next(e for e in events if e["type"] == "error")["data"]["kind"] == "guard"
        )
        for action in ("run", "repair")
    }
    assert refused["run"] == len(corpus)  # an edited SQL runs only through the strict guard
    assert refused["repair"] >= 0.9 * len(corpus)  # repair refuses what the guard refuses for safety
    with closing(sqlite3.connect(tmp_path / "c.sqlite")) as stored:
        text = "\n".join(str(row) for table in ("turns", "events") for row in stored.execute(f"SELECT * FROM {table}"))
        statuses = dict(stored.execute("SELECT status, count(*) FROM turns GROUP BY status").fetchall())
    assert statuses == {"failed": 2 * len(corpus)}
    assert [s for s in secrets if s in text] == []
    assert after == before
