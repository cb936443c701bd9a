"""Catalog spelling (mixed case, reserved words) and aggregates over an empty filter, on the real
embedded PostgreSQL and on SQLite."""

from __future__ import annotations

import pytest
from engines import open_engine, sorted_rows

from actsagent.safeql import aggregates_nothing, refine

SETUP = [
    'CREATE TABLE employees (emp_id INTEGER PRIMARY KEY, "FirstName" TEXT, last_name TEXT, "order" INTEGER)',
    (
        'CREATE TABLE "Orders" (order_id INTEGER PRIMARY KEY, sales_rep INTEGER REFERENCES employees(emp_id), '
        "status TEXT, amount NUMERIC(10,2))"
    ),
    "INSERT INTO employees VALUES (1, 'Olga', 'Larsen', 2), (2, 'Kemi', 'Okafor', 1)",
    """INSERT INTO "Orders" VALUES (10, 1, 'PAID', 5.00), (11, 1, 'PAID', 7.00), (12, 2, 'REFUNDED', 3.00),
    (13, 2, 'CANCELLED', 4.00)""",
]


@pytest.fixture(params=["postgres", "sqlite"])
def db(request, tmp_path):
    return open_engine(request, tmp_path, SETUP)


def test_mixed_case_column_is_quoted_as_stored(db):
    sql = 'SELECT FirstName, count(*) FROM "Orders" o JOIN employees e ON e.emp_id = o.sales_rep GROUP BY FirstName'
    res = refine(db, sql)
    if db.dialect == "sqlite":  # names are case-insensitive there: nothing to fix
        assert res.status == "already_ok"
        return
    assert res.status == "refined", res.why
    assert res.error_class == "unknown_column"
    first = res.edits[0]
    assert first.operator == "attribute" and first.embed_distance == 0.0, res.edits
    assert '"FirstName"' in res.refined_sql and "last_name" not in res.refined_sql
    assert sorted_rows(db, res.refined_sql) == [("Kemi", "2"), ("Olga", "2")]


def test_engine_hint_names_the_column(db):
    res = refine(db, "SELECT e.FirstNam FROM employees e WHERE e.emp_id = 1")
    assert res.status == "refined", res.why
    assert res.edits[0].operator == "attribute", res.edits
    if db.dialect == "postgres":  # PostgreSQL says: Perhaps you meant to reference the column "e.FirstName"
        assert res.edits[0].embed_distance == 0.0 and "engine suggests" in res.edits[0].reason
    assert sorted_rows(db, res.refined_sql) == [("Olga",)]


def test_reserved_column_is_quoted(db):
    res = refine(db, "SELECT last_name FROM employees ORDER BY ordr")
    assert res.status == "refined", res.why
    assert '"order"' in res.refined_sql, res.refined_sql
    assert db.execute(res.refined_sql).rows == [["Okafor"], ["Larsen"]]


def test_mixed_case_table_is_quoted_as_stored(db):
    res = refine(db, "SELECT count(*) FROM Orders WHERE status = 'PAID'")
    if db.dialect == "sqlite":
        assert res.status == "already_ok"
        return
    assert res.status == "refined", res.why
    assert res.error_class == "unknown_relation"
    assert res.edits[0].operator == "relation" and res.edits[0].embed_distance == 0.0, res.edits
    assert '"Orders"' in res.refined_sql
    assert sorted_rows(db, res.refined_sql) == [("2",)]


def test_aggregate_over_empty_filter_refines_the_literal(db):
    sql = (
        'SELECT count(*), sum(o.amount) FROM "Orders" o JOIN employees e ON e.emp_id = o.sales_rep '
        "WHERE o.status = 'paid'"
    )
    assert len(db.execute(sql).rows) == 1  # one row [0, NULL]: not empty to a plain check
    assert aggregates_nothing(db, sql)
    assert not aggregates_nothing(db, sql.replace("'paid'", "'PAID'"))
    res = refine(db, sql)
    assert res.status == "refined", res.why
    assert res.error_class == "empty_result" and "aggregates an empty row set" in res.error_message
    assert "aggregate" in res.why
    assert [e.operator for e in res.edits] == ["value"] and res.edits[0].after == "PAID"
    count, total = db.execute(res.refined_sql).rows[0]
    assert count == 2 and float(total) == 12.0


def test_aggregates_that_see_rows_are_left_alone(db):
    for sql in [
        "SELECT count(*), sum(amount) FROM \"Orders\" WHERE status = 'PAID'",
        "SELECT count(*) OVER () FROM \"Orders\" WHERE status = 'REFUNDED'",
        "SELECT (SELECT count(*) FROM employees WHERE last_name = 'nobody') FROM \"Orders\" LIMIT 1",
    ]:
        res = refine(db, sql)
        assert res.status == "already_ok", (sql, res.why)


def test_join_to_a_mixed_case_table_qualifies_with_its_stored_name(db):
    res = refine(db, "SELECT e.last_name, amount FROM employees e WHERE e.emp_id = 2")
    assert res.status == "refined", res.why
    assert "join" in [e.operator for e in res.edits], res.edits
    if db.dialect == "postgres":
        assert '"Orders".amount' in res.refined_sql, res.refined_sql
    rows = db.execute(res.refined_sql).rows
    assert sorted((r[0], float(r[1])) for r in rows) == [("Okafor", 3.0), ("Okafor", 4.0)]
