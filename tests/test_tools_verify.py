"""The verify tool on its own: checks in disposable copies of the real embedded PostgreSQL, hostile checks,
values as a person writes them, and the differences two candidates are compared on."""

from __future__ import annotations

import pytest

from actsagent.guard import Policy
from actsagent.tools import ToolContext
from actsagent.tools._values import matches, rows_match
from actsagent.tools.checks import CheckPlan, mentions_speed
from actsagent.tools.compare import agree, differences
from actsagent.tools.verify import VerifyInput, verify

NAMES = "SELECT name FROM customers ORDER BY name"


def run_checks(db, sql, plan: dict, **ctx_kw):
    ctx = ToolContext(db=db, verify_copies=True, **ctx_kw)
    try:
        return verify(VerifyInput(sql=sql, checks=CheckPlan.model_validate(plan)), ctx)
    finally:
        ctx.close_scenarios()


@pytest.mark.parametrize(
    ("expected", "got", "ok"),
    [
        ("120.50", 120.5, True),
        (33.33, 33.3333, True),
        (33.3, 33.36, False),
        (33, 33.4, False),
        ("7", 7, True),
        ("NULL", None, True),
        (None, 0, False),
        (True, "t", True),
        ("2024-05-01", "2024-05-01 00:00:00", True),
        ("2024-05-01 10:00", "2024-05-01 10:00:00", True),
        ("2024-05-01", "2024-05-02 00:00:00", False),
        ("{1,2}", [1, 2], True),
        ([1, 2], [2, 1], False),
        ("Ada", "Ada ", True),
        ("ada", "Ada", False),
    ],
)
def test_values_match_what_a_person_writes(expected, got, ok):
    assert matches(expected, got) is ok


def test_rows_match_exact_contains_and_order():
    got = [["a", 1], ["b", 2], ["c", 3]]
    assert rows_match([["c", 3], ["a", 1], ["b", 2]], got, ordered=False, exact=True)[0]
    ok, missing, extra = rows_match([["a", 1], ["b", 2]], got, ordered=False, exact=True)
    assert not ok and missing == [] and extra == [["c", 3]]
    assert rows_match([["a", 1], ["c", 3]], got, ordered=True, exact=False)[0]
    assert not rows_match([["c", 3], ["a", 1]], got, ordered=True, exact=False)[0]
    assert not rows_match([["b", 2], ["a", 1], ["c", 3]], got, ordered=True, exact=True)[0]


def test_speed_words():
    assert mentions_speed("This query is slow on big tables") and mentions_speed("how can I optimize it?")
    assert not mentions_speed("list the slowest drivers")


def test_shape_checks_on_the_sample_and_the_probe_rows(pg_db):
    plan = {
        "checks": [
            {"kind": "columns", "columns": [{"name": "name", "type": "text"}]},
            {"kind": "row_count", "relation": "exactly", "count_query": "SELECT count(*) FROM customers"},
            {"kind": "unique", "positions": [1]},
            {"kind": "ordering", "position": 1},
            {"kind": "row_count", "relation": "at_most", "count": 3},
        ],
        "probe_rows": [{"table": "customers", "columns": ["id", "name"], "rows": [[9, "Ada"], [10, "Aaron"]]}],
    }
    ver = run_checks(pg_db, NAMES, plan)
    status = {r.id: r.status for r in ver.results}
    assert status == {"c1": "passed", "c2": "passed", "c3": "failed", "c4": "passed", "c5": "failed"}
    assert (
        "duplicate ['Ada']" in ver.result("c3").detail and "the data with probe rows added" in ver.result("c3").detail
    )
    assert "5 row(s), expected at most 3" in ver.result("c5").detail
    assert ver.scenario("probe").output.rows == [["Aaron"], ["Ada"], ["Ada"], ["Bob"], ["Chloe"]]
    assert pg_db.execute("SELECT count(*) FROM customers").rows == [[3]]  # probe rows went into a copy only


def test_hostile_checks_never_run_as_sql_and_are_reported(pg_db):
    sneaky = "Robert'); DROP TABLE customers;--"
    plan = {
        "checks": [
            {
                "kind": "example",
                "setup": [{"table": "customers", "columns": ["id", "name"], "rows": [[7, sneaky]], "replace": True}],
                "expected": {"rows": [[sneaky]]},
            },
            {
                "kind": "edge",
                "setup": [{"table": "customers; DROP TABLE orders", "columns": ["id"], "rows": [[1]]}],
                "expected": {"rows": []},
            },
            {"kind": "state", "query": "DELETE FROM orders RETURNING id", "expected": {"rows": []}},
            {"kind": "row_count", "relation": "exactly", "count_query": "SELECT pg_sleep(5)"},
            {
                "kind": "edge",
                "setup": [
                    {"table": "customers", "columns": ["id", "name"], "rows": [[i, f"n{i}"] for i in range(100, 170)]}
                ],
                "expected": {"rows": []},
            },
            {"kind": "example", "expected": {"rows": [["x"]] * 500}},
        ]
    }
    ver = run_checks(pg_db, NAMES, plan)
    res = {r.id: r for r in ver.results}
    assert res["c1"].status == "passed"  # the quote is data: inserted and read back literally
    assert res["c2"].status == "could_not_run" and "no table named" in res["c2"].detail
    assert res["c3"].status == "could_not_run" and "guard" in res["c3"].detail  # a check's query must be a read
    assert res["c4"].status == "could_not_run" and "pg_sleep" in res["c4"].detail
    assert res["c5"].status == "could_not_run" and "more than 60 rows" in res["c5"].detail
    assert res["c6"].status == "could_not_run" and "more than 100 rows" in res["c6"].detail
    assert pg_db.execute("SELECT count(*) FROM customers").rows == [[3]]
    assert pg_db.execute("SELECT count(*) FROM orders").rows == [[4]]


def test_without_copies_only_the_sqls_own_result_is_read(sqlite_db, pg_db):
    plan = {
        "checks": [
            {"kind": "columns", "columns": [{"name": "name"}]},
            {
                "kind": "example",
                "setup": [{"table": "customers", "columns": ["name"], "rows": [["Zed"]]}],
                "expected": {"rows": [["Zed"]]},
            },
        ]
    }
    lite = run_checks(sqlite_db, NAMES, plan)
    assert lite.result("c1").status == "passed"
    assert lite.result("c2").status == "could_not_run" and "sqlite" in lite.result("c2").detail
    ctx = ToolContext(db=pg_db)  # strict policy, copies not allowed: a live database is never copied
    live = verify(VerifyInput(sql=NAMES, checks=CheckPlan.model_validate(plan)), ctx)
    assert live.result("c2").status == "could_not_run" and "live" in live.result("c2").detail


def test_a_writing_candidate_runs_in_a_fresh_copy_per_scenario(pg_db_factory):
    from conftest import SHOP_SETUP

    db = pg_db_factory(SHOP_SETUP, writable=True)
    plan = {
        "checks": [{"kind": "state", "query": "SELECT count(*) FROM orders", "expected": {"rows": [[3]]}}],
        "probe_rows": [
            {"table": "orders", "columns": ["id", "customer_id", "status", "total"], "rows": [[30, 1, "cancelled", 1]]}
        ],
    }
    ctx_kw = {"policy": Policy.sandbox()}
    once = run_checks(db, "DELETE FROM orders WHERE status = 'cancelled'", plan, **ctx_kw)
    assert once.result("c1").status == "passed"
    probe = once.scenario("probe")
    assert probe.read("SELECT count(*) FROM orders").rows == [[3]]  # 4 + 1 probe row - 2 cancelled
    assert db.execute("SELECT count(*) FROM orders").rows == [[4]]


def test_differences_name_the_rows_each_candidate_alone_returns(pg_db):
    plan = {"checks": [], "probe_rows": [{"table": "customers", "columns": ["id", "name"], "rows": [[8, "Eve"]]}]}
    a = run_checks(pg_db, "SELECT name FROM customers WHERE country IS NOT NULL ORDER BY name", plan)
    b = run_checks(pg_db, NAMES, plan)
    c = run_checks(pg_db, "SELECT name FROM customers ORDER BY name DESC", plan)
    diffs = differences(a, b)
    assert [d.scenario for d in diffs] == ["probe"]  # the sample data cannot tell them apart
    assert diffs[0].only_a == [] and diffs[0].only_b == [["Eve"]]
    assert "rows only B returns: (Eve)" in diffs[0].describe("A", "B")
    assert not agree(a, b)
    same_rows = differences(b, c)
    assert same_rows and all(d.note == "the same rows in a different order" for d in same_rows)
    assert agree(b, run_checks(pg_db, "SELECT c.name FROM customers c ORDER BY 1", plan))


def test_a_copy_the_server_refuses_makes_the_check_could_not_run(pg_db, pg_admin_url):
    """A role without CREATEDB: verification copies fail, the checks say so, the run does not crash."""
    import uuid

    import psycopg

    from actsagent.db.postgres import PostgresDatabase

    role = f"nocreate_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_db.url, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{role}" LOGIN NOCREATEDB')
        conn.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{role}"')
    info = psycopg.conninfo.conninfo_to_dict(pg_db.url)
    info["user"] = role
    limited = PostgresDatabase(psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items()}))
    try:
        ver = run_checks(
            limited,
            NAMES,
            {
                "checks": [
                    {
                        "kind": "example",
                        "setup": [{"table": "customers", "columns": ["id", "name"], "rows": [[5, "Zed"]]}],
                        "expected": {"rows": [["Zed"]]},
                    }
                ]
            },
        )
    finally:
        limited.close()
        with psycopg.connect(pg_db.url, autocommit=True) as conn:
            conn.execute(f'REVOKE ALL ON ALL TABLES IN SCHEMA public FROM "{role}"')
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute(f'DROP ROLE "{role}"')
    assert ver.result("c1").status == "could_not_run"
    assert "no disposable copy could be made" in ver.result("c1").detail


def test_plans_are_taken_only_in_copies(pg_db):
    """Strict policy on a live database: no EXPLAIN there (the strict guard refuses it); the speed check could
    not run. With copies allowed, the plan is taken in a copy."""
    plan = CheckPlan(about_speed=True)
    ref = verify(VerifyInput(sql=NAMES, checks=plan), ToolContext(db=pg_db))
    ver = verify(VerifyInput(sql=NAMES, checks=plan, reference=ref), ToolContext(db=pg_db))
    assert ver.plan is not None and not ver.plan.ok and "live" in ver.plan.error
    assert ver.result("plan").status == "could_not_run"
    copied = run_checks(pg_db, NAMES, {"about_speed": True})
    assert copied.plan.ok and copied.plan.total_cost > 0 and "Sort" in copied.plan.describe()
