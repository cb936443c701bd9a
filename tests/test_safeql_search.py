"""Search internals: type pruning really cuts candidates, TED, the catalog on PostgreSQL."""

from __future__ import annotations

import sqlite3

import sqlglot

from actsagent.db.sqlite import SqliteDatabase
from actsagent.safeql import RefineOptions, refine
from actsagent.safeql.analyze import Analysis
from actsagent.safeql.catalog import get_catalog
from actsagent.safeql.distance import normalised_ted, tree_edit_distance
from actsagent.safeql.types import count_mismatches

USERS = [
    "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, age INTEGER)",
    "INSERT INTO users VALUES (1, 'Leo', 22), (2, 'Hana', 35), (3, 'James', 29)",
]


def _sqlite(tmp_path, stmts):
    path = tmp_path / "u.sqlite"
    with sqlite3.connect(path) as conn:
        for s in stmts:
            conn.execute(s)
    return SqliteDatabase(path)


def test_type_pruning_cuts_numeric_columns_for_a_text_literal(tmp_path):
    db = _sqlite(tmp_path, USERS)
    # 'leo' is text: user -> age and user -> id would compare a number with 'leo' and are cut
    res = refine(db, "SELECT id, age FROM users WHERE usr = 'leo'", options=RefineOptions(k=5))
    assert res.status == "refined"
    assert res.pruned_by_type >= 2
    assert "name = 'Leo'" in res.refined_sql
    assert [e.operator for e in res.edits] == ["attribute", "value"]
    cat = get_catalog(db)
    ok = sqlglot.parse_one("SELECT id FROM users WHERE name = 'leo'", read="sqlite")
    bad = sqlglot.parse_one("SELECT id FROM users WHERE age = 'leo'", read="sqlite")
    assert count_mismatches(Analysis(ok, cat.schema), "sqlite") == 0
    assert count_mismatches(Analysis(bad, cat.schema), "sqlite") == 1


def test_type_pruning_on_postgres(pg_db_factory):
    db = pg_db_factory(USERS)
    res = refine(db, "SELECT id, age FROM users WHERE usr = 'leo'", options=RefineOptions(k=5))
    assert res.status == "refined" and res.rows_preview == [[1, 22]]
    assert res.pruned_by_type >= 2  # age = 'leo' and id = 'leo' would fail in PostgreSQL: never executed
    res = refine(db, "SELECT sum(name) FROM users")  # casts follow sum's real signatures, so none is cut
    assert res.status == "refined" and res.rows_preview in ([[6]], [[86]])


def test_tree_edit_distance_is_local_and_normalised():
    a = sqlglot.parse_one("SELECT a, b FROM t WHERE c > 1")
    b = sqlglot.parse_one("SELECT a, bb FROM t WHERE c > 1")
    c = sqlglot.parse_one("SELECT a, b FROM t JOIN u ON t.id = u.id WHERE c > 1")
    assert tree_edit_distance(a, a) == 0
    assert tree_edit_distance(a, b) == 1
    assert 0 < normalised_ted(a, b) < normalised_ted(a, c) <= 1


def test_pg_catalog_is_stored_with_pgvector_and_refreshed_incrementally(pg_db_factory):
    db = pg_db_factory(
        USERS
        + ["CREATE TABLE pets (id INTEGER PRIMARY KEY, kind TEXT)", "INSERT INTO pets VALUES (1, 'dog'), (2, 'cat')"]
    )
    cat = get_catalog(db, refresh=True)
    assert cat.backend == "pgvector" and cat.tables_refreshed == 2
    idx = db.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = 'actsagent' AND indexdef LIKE '%hnsw%'")
    assert idx.ok and idx.rows
    n = db.execute("SELECT count(*) FROM actsagent.catalog_values").rows[0][0]
    assert n == 5  # Leo, Hana, James, dog, cat
    from actsagent.db.postgres import PostgresDatabase

    w = PostgresDatabase(db.url, writable=True)
    assert w.execute("INSERT INTO pets VALUES (3, 'parrot')", read_only=False).ok
    w.close()
    db.invalidate_schema()
    cat2 = get_catalog(db, refresh=True)
    assert cat2.tables_refreshed == 1  # only pets changed
    assert db.execute("SELECT count(*) FROM actsagent.catalog_values").rows[0][0] == 6
    assert [
        v
        for v, _ in cat2.nearest_values(db.schema().table("pets"), db.schema().table("pets").column("kind"), "parot", 1)
    ] == ["parrot"]


PERSON = [
    "CREATE TABLE person (person_id INTEGER PRIMARY KEY, first_name TEXT, age INTEGER)",
    "INSERT INTO person VALUES (1, 'Alice', 28), (2, 'Bob', 35)",
]


def test_error_located_by_position_and_alias_on_postgres(pg_db_factory):
    from actsagent.safeql.locate import locate_columns, start_of
    from actsagent.safeql.operators.base import Failure

    db = pg_db_factory(PERSON)
    sql = "SELECT x.first_name FROM person x WHERE x.person_id IN (SELECT p.person_id FROM person p WHERE p.agee > 30)"
    err = db.execute(sql)
    assert not err.ok and err.position is not None
    an = Analysis(sqlglot.parse_one(sql, read="postgres"), get_catalog(db).schema)
    (hit,) = locate_columns(an, Failure(err.error_class.value, err))
    assert hit.column.sql() == "p.agee" and hit.scope.depth == 1
    assert start_of(hit.column) == err.position - 1
    assert hit.source is not None and hit.source.table.name == "person"


def test_inside_out_on_sqlite_without_positions(tmp_path):
    from actsagent.safeql.locate import locate_columns
    from actsagent.safeql.operators.base import Failure

    db = _sqlite(tmp_path, PERSON)
    sql = "SELECT agee FROM person WHERE person_id IN (SELECT person_id FROM person WHERE agee > 30)"
    err = db.execute(sql)
    assert not err.ok and err.position is None
    an = Analysis(sqlglot.parse_one(sql, read="sqlite"), get_catalog(db).schema)
    first = locate_columns(an, Failure(err.error_class.value, err))
    assert [r.scope.depth for r in first] == [1]  # the subquery's occurrence comes first
    res = refine(db, sql)
    assert res.status == "refined" and res.refined_sql.count("age") == 2 and "agee" not in res.refined_sql
    assert [e.operator for e in res.edits] == ["attribute", "attribute"]


def test_check_hook_sees_every_query_before_it_runs(tmp_path):
    from actsagent.db.results import DbError, ErrorClass

    db = _sqlite(
        tmp_path,
        USERS + ["CREATE TABLE user_names (id INTEGER, name TEXT)", "INSERT INTO user_names VALUES (1, 'Leo')"],
    )
    seen: list[str] = []

    def check(sql: str):
        seen.append(sql)
        if "user_names" in sql:  # a policy forbidding this table
            return DbError(sql=sql, engine="guard", error_class=ErrorClass.GUARD_REJECTED, message="forbidden")
        return None

    res = refine(db, "SELECT name FROM usernames", check=check)
    assert seen[0] == "SELECT name FROM usernames"
    assert len(seen) == res.candidates_explored + 1
    assert res.status == "refined" and "user_names" not in res.refined_sql and "users" in res.refined_sql
    res = refine(db, "SELECT name FROM users WHERE id = 1", check=check)
    assert res.status == "already_ok"
    blocked = refine(db, "SELECT name FROM user_names", check=check)
    assert blocked.status == "gave_up" and "guard_rejected" in blocked.why


def test_statements_that_write_are_not_refined_even_when_broken_or_behind_a_comment(sqlite_db):
    for sql in ["/* tidy up */ DELETE FROM orders WHERE (", "(UPDATE orders SET status = 'x'", "INSERT INTO orders"]:
        res = refine(sqlite_db, sql)
        assert res.status != "refined" and res.why.startswith("only SELECT queries are refined; this is "), sql
        assert res.why.split()[-1] in ("DELETE", "UPDATE", "INSERT")
    assert sqlite_db.execute("SELECT count(*) FROM orders").rows == [[4]]
