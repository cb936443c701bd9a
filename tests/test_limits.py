"""Resource limits on the real embedded server and on SQLite: result bytes, temp files, work_mem,
server memory, the deadline end to end, the connect timeout, and NUL bytes as a second layer."""

from __future__ import annotations

import logging
import sys
import time

import psycopg
import pytest
from pydantic import ValidationError

from actsagent.config import Limits
from actsagent.db import ErrorClass, open_embedded
from actsagent.db.base import row_bytes
from actsagent.db.pgfetch import DeadlinePassed, fetch
from actsagent.db.postgres import PostgresDatabase
from actsagent.db.roles import provision_readonly_role
from actsagent.db.watchdog import WATCHDOG
from actsagent.errors import DatabaseUnavailable
from actsagent.guard import run_guarded

CAP = 1_000_000
WIDE = "SELECT repeat('x', 100000) AS v FROM generate_series(1, 1000)"  # 100 MB if nothing stops it


def test_result_bytes_are_capped_in_the_fetch_with_a_typed_truncation(pg_db_factory):
    admin = pg_db_factory([], limits=Limits(max_result_bytes=CAP))
    reader = open_embedded(admin.name, limits=Limits(max_result_bytes=CAP))
    try:
        for db in (admin, reader):
            for res in (db.execute(WIDE), run_guarded(db, WIDE)):
                assert res.ok and res.truncated and res.truncated_by == "bytes", res
                assert 1 <= res.row_count < 10 and sum(row_bytes(r) for r in res.rows) <= CAP
            small = db.execute("SELECT generate_series(1, 50)", max_rows=10)
            assert small.truncated_by == "rows" and small.row_count == 10
            assert db.execute("SELECT 1").truncated_by is None
            one = db.execute("SELECT repeat('x', 2000000)")  # a single row over the cap: nothing to keep
            assert not one.ok and one.error_class is ErrorClass.RESOURCE_LIMIT and "result cap" in one.message
            assert db.execute("SELECT 2").rows == [[2]]  # the cancelled stream left the pool healthy
    finally:
        reader.close()


def test_sqlite_caps_result_bytes_and_value_length(sqlite_db, tmp_path):
    from actsagent.db.sqlite import SqliteDatabase

    db = SqliteDatabase(sqlite_db.path, limits=Limits(max_result_bytes=CAP))
    try:
        res = db.execute(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000) "
            "SELECT printf('%.*c', 100000, 'x') FROM r"
        )
        assert res.ok and res.truncated_by == "bytes" and 1 <= res.row_count < 10
        for sql in ("SELECT zeroblob(1000000000)", "SELECT replace(hex(zeroblob(400000)), '0', 'xx')"):
            res = db.execute(sql)
            assert not res.ok and res.error_class is ErrorClass.RESOURCE_LIMIT, (sql, res)
        assert db.execute("SELECT count(*) FROM customers").rows == [[3]]
    finally:
        db.close()


SPILL = "SELECT count(*) FROM (SELECT g FROM generate_series(1, 3000000) g ORDER BY g DESC) s"  # sorts on disk


def test_temp_files_and_work_mem_are_bounded_for_the_admin_and_the_role(pg_db, role_name_factory):
    tight = Limits(temp_file_limit_mb=1, work_mem_mb=1)
    admin = PostgresDatabase(pg_db.url, limits=tight)
    info = provision_readonly_role(pg_db, role_name_factory(), temp_file_limit_mb=1)
    role = PostgresDatabase(info.url, limits=tight)
    try:
        assert admin.superuser and not role.superuser
        for db in (admin, role):
            assert db.execute("SHOW work_mem").rows == [["1MB"]]
            assert db.execute("SHOW temp_file_limit").rows == [["1MB"]]
            res = db.execute(SPILL)
            assert not res.ok and res.error_class is ErrorClass.RESOURCE_LIMIT and "temp_file_limit" in res.message
        # the role cannot lift its limit: temp_file_limit is a superuser-only setting
        assert role.execute("SET temp_file_limit = -1").error_class is ErrorClass.PERMISSION_DENIED
        roomy = PostgresDatabase(pg_db.url, limits=Limits(temp_file_limit_mb=1024, work_mem_mb=1))
        assert roomy.execute(SPILL).rows == [[3000000]]  # same query, enough room: the limit did it
        roomy.close()
    finally:
        admin.close()
        role.close()


def test_a_backend_over_the_memory_bound_is_cancelled(pg_db_factory):
    db = pg_db_factory([], limits=Limits(max_server_memory_mb=64, statement_timeout_s=60))
    res = db.execute("SELECT length(string_agg(repeat('x', 100000), ',')) FROM generate_series(1, 4000)")  # 400 MB
    assert not res.ok and res.error_class is ErrorClass.RESOURCE_LIMIT and "more than 64 MB" in res.message
    assert db.execute("SELECT length(string_agg(repeat('x', 1000), ',')) FROM generate_series(1, 100)").rows == [
        [100099]
    ]


def test_the_deadline_holds_without_the_server_timeout(pg_db):
    with psycopg.connect(pg_db.url) as conn:
        conn.execute("SET statement_timeout = 0")
        # the watchdog cancels a statement still running at its deadline ...
        with pytest.raises(psycopg.errors.QueryCanceled), WATCHDOG.watch(conn, 0.3) as w:
            conn.execute("SELECT pg_sleep(30)")
        assert w.reason == "timeout"
        conn.rollback()
        # ... and the fetch stops when rows are still arriving after it (10 kB rows: each is sent at once)
        slow = "SELECT repeat('x', 10000), pg_sleep(0.01) FROM generate_series(1, 3000) g"
        with pytest.raises(DeadlinePassed):
            fetch(conn, slow, max_rows=10_000, max_bytes=10**9, deadline=time.monotonic() + 0.3)
        conn.rollback()
        assert conn.execute("SELECT 1").fetchone() == (1,)
    res = pg_db.execute("SELECT g, pg_sleep(0.02) FROM generate_series(1, 2000) g", timeout_s=0.3, max_rows=5000)
    assert not res.ok and res.error_class is ErrorClass.TIMEOUT


def test_an_unreachable_server_fails_with_one_line(monkeypatch, capsys):
    from actsagent.cli import app
    from actsagent.cli._common import run_app

    url = "postgresql://nobody@127.0.0.1:1/nothing"  # no connect_timeout in the URL: Limits gives it
    with pytest.raises(DatabaseUnavailable, match="cannot connect") as e:
        PostgresDatabase(url, limits=Limits(connect_timeout_s=0.5))
    assert "\n" not in str(e.value)
    monkeypatch.setattr(sys, "argv", ["actsagent", "sql", "SELECT 1", "--db", url])
    assert run_app(app) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot connect to PostgreSQL") and "Traceback" not in err


def test_nul_bytes_are_refused_before_the_driver(pg_db, sqlite_db):
    for db in (pg_db, sqlite_db):
        res = db.execute("SELECT 1\x00; DELETE FROM orders")
        assert not res.ok and res.error_class is ErrorClass.SYNTAX and "NUL" in res.message
        assert res.position == 9 and "\x00" not in res.sql
        assert db.execute("SELECT count(*) FROM orders").rows == [[4]]


def test_copy_to_the_client_is_a_typed_error_and_the_pool_stays_clean(pg_db, caplog):
    caplog.set_level(logging.WARNING, logger="psycopg")
    for sql in ("COPY orders TO STDOUT", "COPY (SELECT repeat('x', 100000) FROM generate_series(1, 5000)) TO STDOUT"):
        res = pg_db.execute(sql)
        assert not res.ok and "COPY" in res.message
    assert pg_db.execute("SELECT count(*) FROM orders").rows == [[4]]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_limits_are_validated():
    for bad in (
        {"max_result_bytes": 0},
        {"connect_timeout_s": 0},
        {"temp_file_limit_mb": 0},
        {"work_mem_mb": 0},
        {"max_server_memory_mb": 1},
    ):
        with pytest.raises(ValidationError):
            Limits(**bad)
    assert Limits().connect_timeout_s <= 3 and Limits().max_result_bytes == 32 * 1024 * 1024


@pytest.fixture
def role_name_factory(pg_db):
    import uuid

    made: list[str] = []

    def make() -> str:
        made.append(f"ro_{uuid.uuid4().hex[:10]}")
        return made[-1]

    yield make
    with psycopg.connect(pg_db.url, autocommit=True) as conn:
        for name in made:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [name])
            conn.execute(f'DROP OWNED BY "{name}"')
            conn.execute(f'DROP ROLE IF EXISTS "{name}"')
