"""run_sql: guarded execution, typed errors, row cap, statement lists in an isolated copy."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from actsagent.db.sandbox import sandbox
from actsagent.guard import Policy
from actsagent.tools import RunSqlInput, ToolContext, run_sql


def test_rows_and_cap(pg_db):
    out = run_sql(RunSqlInput(sql="SELECT id FROM orders ORDER BY id", max_rows=2), ToolContext(db=pg_db))
    assert out.ok and out.last.rows == [[1], [2]] and out.last.truncated
    assert out.last.columns == ["id"]


def test_error_is_typed_data(pg_db):
    out = run_sql(RunSqlInput(sql="SELECT nme FROM customers"), ToolContext(db=pg_db))
    assert not out.ok and out.error.error_class.value == "unknown_column"
    assert "ERROR unknown_column" in out.summary()


def test_strict_policy_rejects_writes_before_the_database(pg_db):
    out = run_sql(RunSqlInput(sql="DELETE FROM orders"), ToolContext(db=pg_db))
    assert out.error.error_class.value == "guard_rejected" and out.error.engine == "guard"
    assert pg_db.execute("SELECT count(*) FROM orders").rows == [[4]]


def test_empty_input_is_refused():
    with pytest.raises(ValidationError):
        RunSqlInput(sql=["  "])


def test_sandbox_statement_list_runs_in_a_throwaway_copy(pg_db):
    with sandbox(pg_db) as box:
        ctx = ToolContext(db=box, policy=Policy.sandbox())
        stmts = ["CREATE TABLE notes (id INT)", "INSERT INTO notes VALUES (1), (2)", "SELECT count(*) FROM notes"]
        out = run_sql(RunSqlInput(sql=stmts), ctx)
        assert out.ok and out.isolated and out.last.rows == [[2]]
        assert len(out.statements) == 3
        # the sandbox itself was not changed by trying the candidate
        assert not box.execute("SELECT to_regclass('notes') IS NOT NULL").rows[0][0]


def test_sandbox_list_stops_at_first_error(pg_db):
    with sandbox(pg_db) as box:
        out = run_sql(
            RunSqlInput(sql=["SELECT 1", "SELECT nope FROM orders", "SELECT 2"]),
            ToolContext(db=box, policy=Policy.sandbox()),
        )
        assert not out.ok and len(out.statements) == 2 and out.statements[1].error is not None


def test_preview_says_how_many_rows_it_shows(pg_db_factory):
    db = pg_db_factory(["CREATE TABLE t (n INT)", "INSERT INTO t SELECT g FROM generate_series(1, 25) g"])
    ctx = ToolContext(db=db)
    small = run_sql(RunSqlInput(sql="SELECT n FROM t WHERE n <= 6 ORDER BY n"), ctx).summary()
    assert small.splitlines()[0] == "6 rows, all shown; columns: n"
    assert small.splitlines()[1:] == ["1", "2", "3", "4", "5", "6"]  # the sixth row is not dropped
    large = run_sql(RunSqlInput(sql="SELECT n FROM t ORDER BY n"), ctx).summary()
    assert large.splitlines()[0] == "25 rows, first 5 shown; columns: n" and len(large.splitlines()) == 6
    kept = run_sql(RunSqlInput(sql="SELECT n FROM t ORDER BY n", max_rows=3), ctx).summary()
    assert kept.splitlines()[0] == "25 rows, first 3 shown; columns: n"  # fewer kept, the total still exact
    capped = run_sql(
        RunSqlInput(sql="SELECT n FROM t ORDER BY n"), ToolContext(db=db, policy=Policy.strict(max_rows=10))
    )
    assert capped.summary().splitlines()[0] == "10+ rows (cut at the row cap), first 5 shown; columns: n"
    one = run_sql(RunSqlInput(sql="SELECT n FROM t WHERE n = 7"), ctx).summary()
    assert one.splitlines()[0] == "1 row, all shown; columns: n"
    none = run_sql(RunSqlInput(sql="SELECT n FROM t WHERE n > 99"), ctx).summary()
    assert none == "0 rows; columns: n"
    both = run_sql(RunSqlInput(sql=["SELECT n FROM t WHERE n <= 6 ORDER BY n", "SELECT 1 AS x"]), ctx).summary()
    assert "[1] 6 rows, all shown" in both and "\n6\n" in both  # statement lists use the same preview rule


def test_the_first_keyword_is_read_past_comments_and_parentheses():
    from actsagent.tools._sqltext import is_query, is_read

    assert is_read("-- why\nSELECT 1", "postgres") and is_read("/* a */ (SELECT 1)", "sqlite")
    assert not is_read("/* SELECT */ DELETE FROM t", "postgres") and not is_read(
        "-- x\nINSERT INTO t VALUES (1)", "sqlite"
    )
    assert is_query("WITH x AS (SELECT 1) SELECT * FROM x", "postgres") and not is_query(
        "CREATE TABLE t (a int)", "postgres"
    )
