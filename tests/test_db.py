"""The typed database interface on the real embedded PostgreSQL and on SQLite files."""

from __future__ import annotations

import threading

import psycopg
import pytest

from actsagent.config import Limits
from actsagent.db import DbError, ErrorClass, QueryResult, open_database
from actsagent.db.sandbox import sandbox
from actsagent.errors import DatabaseUnavailable, UserError


@pytest.mark.parametrize(
    "sql, cls, ident",
    [
        ("SELEC * FROM customers", ErrorClass.SYNTAX, "SELEC"),
        ("SELECT * FROM customer", ErrorClass.UNKNOWN_RELATION, "customer"),
        ("SELECT nme FROM customers", ErrorClass.UNKNOWN_COLUMN, "nme"),
        ("SELECT c.nme FROM customers c", ErrorClass.UNKNOWN_COLUMN, "c.nme"),
        ("SELECT strftime('%Y', created_at) FROM customers", ErrorClass.UNKNOWN_FUNCTION, "strftime"),
        (
            "SELECT id FROM customers JOIN orders ON orders.customer_id = customers.id",
            ErrorClass.AMBIGUOUS_COLUMN,
            "id",
        ),
        ("SELECT * FROM customers WHERE id = 'abc'", ErrorClass.TYPE_MISMATCH, "abc"),
        ("SELECT * FROM customers WHERE created_at > 5", ErrorClass.TYPE_MISMATCH, None),
    ],
)
def test_postgres_errors_are_classified(pg_db, sql, cls, ident):
    res = pg_db.execute(sql)
    assert isinstance(res, DbError)
    assert res.error_class is cls, res.message
    assert res.code is not None
    if ident is not None:
        assert res.identifier == ident
    assert res.engine == "postgres"


def test_postgres_error_position_points_at_offender(pg_db):
    sql = "SELECT name, nme FROM customers"
    res = pg_db.execute(sql)
    assert not res.ok and res.position is not None
    assert sql[res.position - 1 :].startswith("nme")


@pytest.mark.parametrize(
    "sql, cls, ident",
    [
        ("SELEC * FROM customers", ErrorClass.SYNTAX, "SELEC"),
        ("SELECT * FROM customer", ErrorClass.UNKNOWN_RELATION, "customer"),
        ("SELECT nme FROM customers", ErrorClass.UNKNOWN_COLUMN, "nme"),
        ("SELECT to_char(created_at, 'YYYY') FROM customers", ErrorClass.UNKNOWN_FUNCTION, "to_char"),
        (
            "SELECT id FROM customers JOIN orders ON orders.customer_id = customers.id",
            ErrorClass.AMBIGUOUS_COLUMN,
            "id",
        ),
    ],
)
def test_sqlite_errors_are_classified(sqlite_db, sql, cls, ident):
    res = sqlite_db.execute(sql)
    assert isinstance(res, DbError)
    assert res.error_class is cls, res.message
    assert res.identifier == ident


def test_results_are_typed_and_empty_is_distinct(pg_db):
    full = pg_db.execute("SELECT id, name, created_at FROM customers ORDER BY id")
    empty = pg_db.execute("SELECT id FROM customers WHERE name = 'nobody'")
    assert isinstance(full, QueryResult) and full.row_count == 3 and not full.empty
    assert [c.name for c in full.columns] == ["id", "name", "created_at"]
    assert [c.type for c in full.columns] == ["integer", "text", "date"]
    assert isinstance(empty, QueryResult) and empty.ok and empty.empty and empty.columns[0].name == "id"
    assert full.elapsed_ms >= 0


def test_timeout_really_stops_a_slow_query(pg_db, sqlite_db):
    res = pg_db.execute("SELECT pg_sleep(10)", timeout_s=0.3)
    assert not res.ok and res.error_class is ErrorClass.TIMEOUT and res.elapsed_ms < 5000
    slow = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    res = sqlite_db.execute(slow, timeout_s=0.3)
    assert not res.ok and res.error_class is ErrorClass.TIMEOUT and res.elapsed_ms < 5000
    assert pg_db.execute("SELECT 1").ok  # the pooled connection is healthy afterwards


def test_row_cap_holds_in_the_fetch(pg_db, sqlite_db):
    for db in (pg_db, sqlite_db):
        res = db.execute(
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5000) SELECT n FROM r",
            max_rows=100,
        )
        assert res.ok and res.row_count == 100 and res.truncated
        small = db.execute("SELECT 1", max_rows=100)
        assert small.ok and not small.truncated


def test_a_failed_statement_is_not_cancelled_again_but_one_left_early_is(pg_db, monkeypatch):
    """The server ends a failing statement itself: no cancel request (a server process of its own) follows it. A
    result left at the row cap is still cancelled, and the pooled connection serves the next statement."""
    cancels: list[int] = []
    real = psycopg.Connection.cancel_safe

    def counted(conn, *args, **kwargs):
        cancels.append(conn.info.backend_pid)
        return real(conn, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "cancel_safe", counted)
    for sql in ("SELECT 1/0", "SELECT nme FROM customers", "SELECT * FROM customers WHERE id = 'abc'"):
        assert not pg_db.execute(sql).ok
    assert cancels == []
    res = pg_db.execute("SELECT generate_series(1, 1000000)", max_rows=3)
    assert res.ok and res.truncated and res.row_count == 3 and len(cancels) == 1
    assert pg_db.execute("SELECT count(*) FROM customers").rows == [[3]]


def test_default_limits_apply(pg_db_factory):
    db = pg_db_factory([], limits=Limits(max_rows=7, statement_timeout_s=0.2))
    res = db.execute("SELECT generate_series(1, 50)")
    assert res.row_count == 7 and res.truncated
    assert db.execute("SELECT pg_sleep(3)").error_class is ErrorClass.TIMEOUT


def test_read_only_unless_sandbox(pg_db, sqlite_db):
    res = pg_db.execute("DELETE FROM orders")
    assert not res.ok and res.error_class is ErrorClass.PERMISSION_DENIED
    res = pg_db.execute("DELETE FROM orders", read_only=False)  # not a sandbox: still read-only
    assert not res.ok and res.error_class is ErrorClass.PERMISSION_DENIED
    assert pg_db.execute("SELECT count(*) FROM orders").rows == [[4]]
    res = sqlite_db.execute("DELETE FROM orders", read_only=False)
    assert not res.ok and res.error_class is ErrorClass.PERMISSION_DENIED


def test_multiple_statements_are_refused_by_the_server(pg_db, sqlite_db):
    res = pg_db.execute("SELECT 1; DELETE FROM orders")
    assert not res.ok and "multiple" in res.message
    assert not sqlite_db.execute("SELECT 1; DELETE FROM orders").ok
    assert pg_db.execute("SELECT count(*) FROM orders").rows == [[4]]


def test_sandbox_writes_never_reach_the_template(pg_db):
    with sandbox(pg_db) as sb:
        assert sb.writable and sb.name != pg_db.name
        assert sb.execute("DELETE FROM orders", read_only=False).ok
        assert sb.execute("CREATE TABLE scratch (x int); INSERT INTO scratch VALUES (1)", read_only=False).ok
        assert sb.execute("SELECT count(*) FROM orders").rows == [[0]]
        name = sb.name
    assert pg_db.execute("SELECT count(*) FROM orders").rows == [[4]]
    assert pg_db.execute("SELECT * FROM scratch").error_class is ErrorClass.UNKNOWN_RELATION
    with psycopg.connect(pg_db.url.replace(f"/{pg_db.name}?", "/postgres?")) as conn:
        assert conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None


def test_pool_serves_threads(pg_db):
    out: list[bool] = []

    def work() -> None:
        out.extend(pg_db.execute("SELECT count(*) FROM customers").ok for _ in range(5))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [True] * 20


def test_bad_targets_give_clear_errors(tmp_path):
    with pytest.raises(UserError, match="not found"):
        open_database(str(tmp_path / "missing.sqlite"))
    with pytest.raises(DatabaseUnavailable, match="cannot connect"):
        open_database("postgresql://nobody@127.0.0.1:1/nothing?connect_timeout=2")
    with pytest.raises(UserError, match="no database named"):
        open_database("no_such_embedded_db")
    with pytest.raises(UserError, match="no database given"):
        open_database(None)  # the db layer opens no default: the CLI and the copilot choose the demo
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database" * 100)
    with pytest.raises(DatabaseUnavailable, match="cannot open SQLite"):
        open_database(str(garbage)).execute("SELECT 1")


def test_schema_introspection(pg_db, sqlite_db):
    for db in (pg_db, sqlite_db):
        schema = db.schema()
        orders = schema.table("orders")
        assert orders is not None and orders.primary_key == ["id"]
        assert orders.column("customer_id").references == "customers.id"
        assert orders.row_estimate == 4
        assert sorted(orders.column("status").sample_values) == ["cancelled", "paid", "refunded"]
        text = schema.render()
        assert "Table orders" in text and "FK -> customers.id" in text and "'paid'" in text
        assert db.schema() is schema  # cached


def test_schema_comments_and_cache_refresh(pg_db_factory):
    db = pg_db_factory(
        [
            "CREATE TABLE t (a int PRIMARY KEY, b text)",
            "COMMENT ON TABLE t IS 'tiny table'",
            "COMMENT ON COLUMN t.b IS 'free text'",
        ]
    )
    text = db.schema().render()
    assert "Table t -- tiny table" in text and "-- free text" in text
    with psycopg.connect(db.url, autocommit=True) as conn:
        conn.execute("CREATE TABLE u (x int)")
    assert db.schema().table("u") is None
    assert db.schema(refresh=True).table("u") is not None


def test_embedded_demo_database_is_loaded_once():
    from actsagent.db.roles import READER
    from actsagent.demo import ensure_demo

    db = ensure_demo()
    assert db.user == READER and not db.superuser  # queries run as the read-only role, not the superuser
    assert db.execute("SELECT current_user").rows == [[READER]]
    counts = {
        t: db.execute(f"SELECT count(*) FROM {t}").rows[0][0]
        for t in ("customers", "orders", "order_items", "payments", "product_catalog", "employees")
    }
    assert counts["orders"] == 2500 and counts["customers"] == 400 and sum(counts.values()) > 5000
    again = ensure_demo()
    assert again.execute("SELECT count(*) FROM orders").rows == [[2500]]
    assert '"FirstName"' in again.schema().render()


def test_reserved_and_mixed_case_names_are_shown_quoted(pg_db_factory):
    db = pg_db_factory(['CREATE TABLE "order" (id int PRIMARY KEY, "Amount" numeric, "user" text, total int)'])
    text = db.schema().render()
    assert 'Table "order"' in text
    assert '"Amount"' in text and '"user"' in text
    assert "  total" in text and '"total"' not in text
