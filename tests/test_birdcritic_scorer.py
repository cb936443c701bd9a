"""The scoring helpers on the real embedded PostgreSQL, through the psycopg2-like connection."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from actsagent.birdcritic import scorer
from actsagent.birdcritic.scorer import (
    ScoringKeys,
    check_sql_function_usage,
    ex_base,
    execute_queries,
    perform_query_on_postgresql_databases,
    performance_compare_by_qep,
    preprocess_results,
    remove_distinct,
    score,
)
from actsagent.birdcritic.tasks import PublicTask
from actsagent.db.pg2_compat import CompatConnection

SETUP = [
    "CREATE TABLE t (id INT PRIMARY KEY, d DATE, tag TEXT, u UUID)",
    "INSERT INTO t SELECT g, DATE '2024-01-01' + g, CASE WHEN g % 2 = 0 THEN 'even' ELSE 'odd' END, "
    "'8a70180b-3644-4b17-af5f-93cbe0090cce' FROM generate_series(1, 50) g",
    "ANALYZE t",
]


@pytest.fixture
def conn(pg_db_factory):
    db = pg_db_factory(SETUP)
    c = CompatConnection.connect(db.url)
    yield c
    c.close()


def test_pure_helpers_follow_the_documented_behaviour():
    assert remove_distinct(["SELECT DISTINCT a FROM t", "select\n  distinct(b) from t"]) == [
        "SELECT a FROM t",
        "select distinct(b) from t",
    ]  # whole tokens only, whitespace collapsed
    assert check_sql_function_usage(["SELECT ROW_NUMBER() OVER () FROM t"], ["row_number", "over"]) == 1
    assert check_sql_function_usage(["SELECT 1"], ["lag"]) == 0
    assert check_sql_function_usage([], ["x"]) == 0
    assert preprocess_results([(date(2024, 1, 2), datetime(2024, 1, 2, 5, 6), 3)]) == [("2024-01-02", "2024-01-02", 3)]


def test_execute_queries_returns_last_result_and_stops_at_first_error(conn):
    res, err, to = execute_queries(["SELECT 1", "SELECT count(*) FROM t"], "x", conn)
    assert (res, err, to) == ([(50,)], False, False)
    res, err, to = execute_queries(["SELECT 1", "SELECT nope FROM t", "DELETE FROM t"], "x", conn)
    assert err is True and to is False
    assert execute_queries(["SELECT count(*) FROM t"], "x", conn)[0] == [(50,)]  # the DELETE never ran
    # statements commit one by one, like the official helper
    execute_queries(["UPDATE t SET tag = 'x' WHERE id = 1", "SELECT 1/0"], "x", conn)
    assert execute_queries(["SELECT tag FROM t WHERE id = 1"], "x", conn)[0] == [("x",)]


def test_timeout_flag(conn, monkeypatch):
    monkeypatch.setattr(scorer, "STATEMENT_TIMEOUT", "200ms")
    _res, err, to = execute_queries(["SELECT pg_sleep(2)"], "x", conn)
    assert to is True and err is False


def test_pg2_compatibility(conn):
    # a multi-statement string yields the LAST statement's rows, as with psycopg2
    rows, _ = perform_query_on_postgresql_databases("CREATE TEMP TABLE z (a int); SELECT 7", "x", conn)
    assert rows == [(7,)]
    rows, _ = perform_query_on_postgresql_databases("SELECT u FROM t WHERE id = 1", "x", conn)
    assert rows == [("8a70180b-3644-4b17-af5f-93cbe0090cce",)]  # uuid as text
    with conn:  # noqa: SIM117 - psycopg2 semantics: ends the transaction, keeps the connection
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM t WHERE tag = %s", ("odd",))
            assert cur.fetchall() == [(25,)]
    assert not conn.closed
    rows, _ = perform_query_on_postgresql_databases("INSERT INTO t VALUES (99) RETURNING id", "x", conn)
    assert rows == [(99,)]
    assert perform_query_on_postgresql_databases("UPDATE t SET tag = 'y' WHERE id = 99", "x", conn)[0] is None


def test_a_write_without_rows_yields_none_not_an_error(conn):
    """The official helper fetches after every statement and takes "no rows to fetch" as None (June 2025)."""
    cte_write = "WITH n AS (SELECT 200 AS id) INSERT INTO t (id, tag) SELECT id, 'cte' FROM n"
    assert execute_queries([cte_write], "x", conn) == (None, False, False)
    assert execute_queries(["SELECT 1; UPDATE t SET tag = 'z' WHERE id = 200"], "x", conn) == (None, False, False)
    assert execute_queries(["SELECT tag FROM t WHERE id = 200"], "x", conn)[0] == [("z",)]  # both committed
    rows, _ = perform_query_on_postgresql_databases(
        "WITH d AS (DELETE FROM t WHERE id = 200 RETURNING id) SELECT count(*) FROM d", "x", conn
    )
    assert rows == [(1,)]


def test_a_prediction_ending_in_a_cte_write_is_scored_by_its_tests(pg_db_factory):
    db = pg_db_factory(SETUP)
    keys = ScoringKeys(
        instance_id="t1",
        sol_sql=["INSERT INTO t (id, tag) VALUES (300, 'new')"],
        test_cases=[
            "def test_case(pred_sqls, sol_sqls, db_name, conn):\n"
            "    assert pred_query_result is None\n"
            "    rows = execute_queries(['SELECT tag FROM t WHERE id = 300'], db_name, conn)[0]\n"
            "    assert rows == [('new',)], rows\n"
        ],
    )
    task = _task(category="Management")
    good = score(
        task, keys, ["WITH v AS (SELECT 300 AS id, 'new' AS tag) INSERT INTO t (id, tag) SELECT * FROM v"], db.url
    )
    assert good.passed and good.status == "passed", good.messages
    fresh = pg_db_factory(SETUP)  # score() runs in the copy it is given; the official flow uses a fresh one
    wrong = score(
        task, keys, ["WITH v AS (SELECT 301 AS id) INSERT INTO t (id, tag) SELECT id, 'new' FROM v"], fresh.url
    )
    assert wrong.status == "test_failed"  # the tests ran and judged it; it is not an execution error


def test_ex_base_compares_row_sets_with_dates_as_strings(conn):
    as_text = "SELECT to_char(d, 'YYYY-MM-DD') FROM t WHERE id < 3 ORDER BY 1 DESC"
    assert ex_base(["SELECT d FROM t WHERE id < 3"], [as_text], "x", conn) == 1
    assert ex_base(["SELECT id FROM t WHERE id < 3"], ["SELECT id FROM t WHERE id < 4"], "x", conn) == 0
    assert ex_base(["SELECT id FROM t WHERE id < 0"], ["SELECT id FROM t WHERE id < 0"], "x", conn) == 0  # empty
    assert ex_base(["SELECT nope FROM t"], ["SELECT id FROM t"], "x", conn) == 0
    assert ex_base([], ["SELECT 1"], "x", conn) == 0


def test_performance_compare_by_qep_prefers_the_cheaper_plan(conn):
    slow = ["SELECT * FROM t a CROSS JOIN t b"]
    fast = ["SELECT * FROM t WHERE id = 3"]
    assert performance_compare_by_qep(slow, fast, "x", conn) == 1
    assert performance_compare_by_qep(fast, slow, "x", conn) == 0
    assert performance_compare_by_qep([], fast, "x", conn) == 0


def _task(**kw) -> PublicTask:
    base = dict(instance_id="t1", db_id="x", query="q", issue_sql=["SELECT 1"], category="Query")
    return PublicTask(**(base | kw))


def test_score_runs_the_official_flow(pg_db_factory):
    db = pg_db_factory(SETUP)
    keys = ScoringKeys(
        instance_id="t1",
        sol_sql=["SELECT id FROM t WHERE tag = 'even' AND id <= 10"],
        test_cases=[
            "def test_case(pred_sqls, sol_sqls, db_name, conn):\n"
            "    assert ex_base(remove_distinct(pred_sqls), remove_distinct(sol_sqls), db_name, conn) == 1\n",
            # the global pred_query_result holds the prediction's last result
            "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    assert len(pred_query_result) == 5\n",
            # tests see preprocess effects and may define helpers and import modules
            "import json\ndef test_case(pred_sqls, sol_sqls, db_name, conn):\n"
            "    rows = execute_queries(['SELECT count(*) FROM extra'], db_name, conn)[0]\n"
            "    assert json.loads(json.dumps(rows[0][0])) == 2\n",
        ],
    )
    task = _task(
        preprocess_sql=["CREATE TABLE extra (a int)", "INSERT INTO extra VALUES (1), (2)"],
        clean_up_sql=["DROP TABLE extra"],
    )
    good = score(task, keys, ["SELECT DISTINCT id FROM t WHERE id % 2 = 0 AND id < 11"], db.url)
    assert good.passed and good.status == "passed" and good.tests_passed == 3
    wrong = score(task, keys, ["SELECT id FROM t WHERE id < 11"], db.url)
    assert not wrong.passed and wrong.failed_tests == [1, 2]
    broken = score(task, keys, ["SELECT nope FROM t"], db.url)
    assert broken.status == "pred_error" and "nope" in broken.messages[0]
    # clean_up_sql ran after each scoring (otherwise preprocess would fail: table exists, count 4)
    assert db.execute("SELECT to_regclass('extra') IS NULL").rows == [[True]]


def test_efficiency_tasks_compare_issue_sql_with_the_prediction(pg_db_factory):
    db = pg_db_factory(SETUP)
    keys = ScoringKeys(
        instance_id="t1",
        sol_sql=["SELECT 1"],
        test_cases=[
            "def test_case(pred_sqls, sol_sqls, db_name, conn):\n"
            "    assert ex_base(pred_sqls, sol_sqls, db_name, conn) == 1\n"
            "    assert performance_compare_by_qep(pred_sqls, sol_sqls, db_name, conn) == 1\n"
        ],
    )
    task = _task(
        category="Efficiency",
        efficiency=True,
        issue_sql=["SELECT DISTINCT a.id FROM t a JOIN t b ON a.tag = b.tag WHERE a.id + 0 = 3"],
    )
    assert score(task, keys, ["SELECT id FROM t WHERE id = 3"], db.url).passed
    assert not score(task, keys, list(task.issue_sql), db.url).passed  # not cheaper than itself
