"""The SQL safety guard: hostile SQL never gets through, benchmark gold SQL always does, limits are right,
and guarded execution works on the real embedded PostgreSQL and on SQLite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_corpus import load_corpus
from typer.testing import CliRunner

from actsagent.guard import DENIED, GuardedSQL, GuardRejection, Policy, check_sql, run_guarded, split_statements

CORPUS = Path(__file__).parent / "data" / "hostile_sql"
REALERRORS = Path(__file__).resolve().parents[2] / "shared" / "data" / "realerrors"


def test_hostile_corpus_is_rejected():
    corpus = load_corpus()
    assert len(corpus) >= 150
    through = [(f, s, r.sql) for f, d, s in corpus if (r := check_sql(s, d)).ok]
    assert through == []


def test_every_denied_function_is_in_the_corpus_and_refused():
    text = (CORPUS / "denied_functions.sql").read_text().lower()
    for name in DENIED:
        assert f"{name}(" in text or f'"{name}"(' in text, name
        for dialect in ("postgres", "sqlite"):
            r = check_sql(f"SELECT {name}(1)", dialect)
            assert isinstance(r, GuardRejection) and r.rule == "denied_function" and r.offending == name, (name, r)


def _gold() -> list[tuple[str, int, str]]:
    out = []
    for bench in ("spider_dev", "bird_dev"):
        path = REALERRORS / bench / "questions.json"
        assert path.exists(), f"shared data missing: {path}"
        out += [(bench, q["idx"], q["gold_sql"]) for q in json.loads(path.read_text())]
    return out


def test_no_gold_sql_of_spider_and_bird_dev_is_rejected():
    gold = _gold()
    assert len(gold) == 1034 + 1534
    rejected = [(b, i, r.rule, r.reason) for b, i, s in gold if not (r := check_sql(s, "sqlite")).ok]
    assert rejected == []


@pytest.mark.parametrize(
    "sql,dialect,expected,action",
    [
        ("SELECT id FROM t", "postgres", "SELECT id FROM t LIMIT 100", "added"),
        ("SELECT id FROM t", "sqlite", "SELECT id FROM t LIMIT 100", "added"),
        ("SELECT id FROM t LIMIT 5000", "postgres", "SELECT id FROM t LIMIT 100", "lowered"),
        ("SELECT id FROM t LIMIT 7", "postgres", "SELECT id FROM t LIMIT 7", "kept"),
        ("SELECT id FROM t LIMIT 100", "postgres", "SELECT id FROM t LIMIT 100", "kept"),
        ("SELECT id FROM t LIMIT 5000 OFFSET 10", "postgres", "SELECT id FROM t LIMIT 100 OFFSET 10", "lowered"),
        ("SELECT id FROM t LIMIT 10, 5000", "sqlite", "SELECT id FROM t LIMIT 100 OFFSET 10", "lowered"),
        ("SELECT id FROM t LIMIT 10, 5", "sqlite", "SELECT id FROM t LIMIT 5 OFFSET 10", "kept"),
        (
            "SELECT id FROM t FETCH FIRST 5000 ROWS ONLY",
            "postgres",
            "SELECT id FROM t FETCH FIRST 100 ROWS ONLY",
            "lowered",
        ),
        ("SELECT id FROM t FETCH FIRST 5 ROWS ONLY", "postgres", "SELECT id FROM t FETCH FIRST 5 ROWS ONLY", "kept"),
        ("SELECT 1 UNION SELECT 2", "postgres", "SELECT 1 UNION SELECT 2 LIMIT 100", "added"),
        (
            "SELECT a FROM x EXCEPT SELECT a FROM y ORDER BY 1 LIMIT 999",
            "sqlite",
            "SELECT a FROM x EXCEPT SELECT a FROM y ORDER BY 1 LIMIT 100",
            "lowered",
        ),
        (
            "SELECT a FROM x INTERSECT SELECT a FROM y LIMIT 3",
            "sqlite",
            "SELECT a FROM x INTERSECT SELECT a FROM y LIMIT 3",
            "kept",
        ),
        (
            "WITH c AS (SELECT id FROM t LIMIT 9999) SELECT * FROM c",
            "postgres",
            "WITH c AS (SELECT id FROM t LIMIT 9999) SELECT * FROM c LIMIT 100",
            "added",
        ),
        ("(SELECT id FROM t)", "postgres", "SELECT id FROM t LIMIT 100", "added"),
        (
            "SELECT id FROM t LIMIT ALL",
            "postgres",
            "SELECT * FROM (SELECT id FROM t LIMIT ALL) AS guard_rows LIMIT 100",
            "wrapped",
        ),
        (
            "SELECT id FROM t LIMIT -1",
            "sqlite",
            "SELECT * FROM (SELECT id FROM t LIMIT -1) AS guard_rows LIMIT 100",
            "wrapped",
        ),
        (
            "SELECT id FROM t LIMIT (SELECT 5000)",
            "postgres",
            "SELECT * FROM (SELECT id FROM t LIMIT (SELECT 5000)) AS guard_rows LIMIT 100",
            "wrapped",
        ),
        (
            "SELECT id FROM t ORDER BY id FETCH FIRST 3 ROWS WITH TIES",
            "postgres",
            "SELECT * FROM (SELECT id FROM t ORDER BY id FETCH FIRST 3 ROWS WITH TIES) AS guard_rows LIMIT 100",
            "wrapped",
        ),
        ("VALUES (1), (2)", "postgres", "VALUES (1), (2)", "kept"),
    ],
)
def test_row_limit_is_injected_through_the_tree(sql, dialect, expected, action):
    r = check_sql(sql, dialect, max_rows=100)
    assert isinstance(r, GuardedSQL), r
    assert (r.sql, r.limit_action) == (expected, action)


def test_values_above_the_cap_are_wrapped_and_policy_cap_is_used():
    r = check_sql("VALUES (1), (2), (3)", "postgres", Policy.strict(max_rows=2))
    assert r.ok and r.sql == "SELECT * FROM (VALUES (1), (2), (3)) AS guard_rows LIMIT 2" and r.row_limit == 2


@pytest.mark.parametrize(
    "sql,rule,words",
    [
        (
            "SELECT 1; DROP TABLE t",
            "multiple_statements",
            "only one read-only statement is allowed; found 2 statements",
        ),
        ("SELEC 1", "parse", "does not parse as postgres"),
        ("SELECT 'unterminated", "parse", "tokenized"),
        ("", "empty", "empty"),
        ("-- only a comment", "empty", "no statement"),
        ("DELETE FROM t", "not_read_only", "DELETE statements are not allowed"),
        ("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "write", "inside WITH"),
        ("SELECT * INTO x FROM t", "select_into", "INTO"),
        ("SELECT * FROM t FOR UPDATE", "row_lock", "FOR UPDATE"),
        ("EXPLAIN ANALYZE DELETE FROM t", "not_read_only", "EXPLAIN"),
        ("SELECT pg_sleep(1)", "denied_function", "pg_sleep() is not allowed"),
        ("SELECT lo_whatever(1)", "denied_function", "large objects"),
        ("SELECT my_udf(1)", "unknown_function", "my_udf() is not on the reviewed list"),
        ("SELECT evil.lower(a) FROM t", "qualified_function", "schema-qualified"),
        ("SELECT rolpassword FROM pg_catalog.pg_authid", "denied_relation", "credentials"),
        ("SELECT " + "(" * 3000 + "1" + ")" * 3000, "too_complex", "nested too deeply"),
        ("SELECT 1 AS " + "x" * 100_001, "too_long", "characters long"),
        ("SELECT 1 FROM t\x00", "control_character", "control character \\x00 at position 16"),
        ("SELECT (x).encrypt FROM t", "attribute_call", "attribute notation"),
        ("SELECT (3::float8).pg_sleep", "denied_function", "would call function pg_sleep()"),
        ("SELECT SECRET('a', 'b')", "unknown_function", "secret() is not on the reviewed list"),
        ("SELECT current_setting('data_directory')", "denied_setting", "current_setting() may read only"),
        ("SELECT * FROM pg_stats", "denied_relation", "column statistics"),
    ],
)
def test_rejections_name_the_rule_and_a_fix(sql, rule, words):
    r = check_sql(sql, "postgres")
    assert isinstance(r, GuardRejection) and r.rule == rule, r
    assert words in r.reason


def test_parse_rejections_point_at_the_token():
    sql = "SELECT a,\n  b FROM t WHERE x = 1 garbage"
    r = check_sql(sql, "postgres")
    assert r.rule == "parse" and r.offending == "garbage" and sql[r.position - 1 :].startswith("garbage")


def test_reviewed_functions_pass_and_extra_functions_extend_the_list():
    ok = check_sql(
        "SELECT to_char(d, 'YYYY'), date_part('year', d), string_agg(n, ','), pg_catalog.lower(n) FROM t GROUP BY d",
        "postgres",
    )
    assert ok.ok, ok
    assert not check_sql("SELECT my_udf(1)", "postgres").ok
    assert check_sql("SELECT * FROM public.pg_settings", "postgres").ok  # an application table of that name
    assert check_sql("SELECT my_udf(1)", "postgres", Policy.strict(extra_functions={"MY_UDF"})).ok
    # the deny-list wins over a policy that names a denied function
    assert not check_sql("SELECT pg_sleep(1)", "postgres", Policy.strict(extra_functions={"pg_sleep"})).ok
    sqlite = check_sql(
        "SELECT strftime('%Y', d), iif(a > 1, 1, 0), julianday(d), instr(n, 'x'), substr(n, 1, 2) FROM t", "sqlite"
    )
    assert sqlite.ok and set(sqlite.functions) >= {"julianday"}


def test_the_sql_that_runs_is_regenerated_without_comments():
    r = check_sql("SELECT 1 -- */ ; DROP TABLE x\n", "postgres")
    assert r.ok and r.sql == "SELECT 1 LIMIT 1000" and r.statements == [r.sql]
    r = check_sql("SELECT /* hi */ $$;DROP TABLE t$$ AS s", "postgres")
    assert r.ok and "DROP" in r.sql and r.sql.startswith("SELECT ';DROP TABLE t' AS s")


def test_sandbox_policy_splits_and_lets_everything_through():
    script = (
        "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;\n-- note; with a semicolon\n"
        "INSERT INTO t VALUES ('a;b'); DROP TABLE t"
    )
    r = check_sql(script, "postgres", Policy.sandbox())
    assert r.ok and r.policy == "sandbox" and r.sql == script
    assert r.statements == [
        "CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql",
        "INSERT INTO t VALUES ('a;b')",
        "DROP TABLE t",
    ]
    assert split_statements("SELECT 'unterminated", "postgres") == ["SELECT 'unterminated"]


def test_run_guarded_on_postgres(pg_db):
    res = run_guarded(
        pg_db,
        "SELECT c.name, sum(o.total) AS spent FROM customers c JOIN orders o "
        "ON o.customer_id = c.id GROUP BY c.name ORDER BY spent DESC",
    )
    assert res.ok and res.rows[0][0] == "Ada" and [c.name for c in res.columns] == ["name", "spent"]
    assert "LIMIT 1001" in res.sql  # cap + 1 in the tree; the fetch keeps the cap and reports the cut
    res = run_guarded(pg_db, "SELECT id FROM orders ORDER BY id", Policy.strict(max_rows=2))
    assert res.ok and res.row_count == 2 and res.truncated
    res = run_guarded(pg_db, "SELECT id FROM orders ORDER BY id", Policy.strict(max_rows=4))
    assert res.ok and res.row_count == 4 and not res.truncated
    res = run_guarded(pg_db, "WITH d AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM d")
    assert not res.ok and res.engine == "guard" and res.error_class.value == "guard_rejected" and res.code == "write"
    res = run_guarded(pg_db, "SELECT nope FROM customers")  # engine errors still come back classified
    assert not res.ok and res.engine == "postgres" and res.error_class.value == "unknown_column"
    # tricks the guard neutralizes by regenerating: they run as harmless literals, nothing is written
    for sql in [
        "SELECT $$;DELETE FROM orders$$",
        "SELECT 'a'';DELETE FROM orders;--'",
        "SELECT E'\\\\' || ';DELETE FROM orders'",
        "SELECT 1 /* ; DELETE FROM orders */",
        "SELECT U&'\\0041;DELETE FROM orders'",
    ]:
        assert run_guarded(pg_db, sql).ok, sql
    assert run_guarded(pg_db, "SELECT count(*) FROM orders").rows == [[4]]


def test_run_guarded_on_sqlite(sqlite_db):
    res = run_guarded(sqlite_db, "SELECT name FROM customers WHERE strftime('%Y', created_at) = '2024' ORDER BY id")
    assert res.ok and [r[0] for r in res.rows] == ["Ada", "Bob", "Chloe"]
    res = run_guarded(sqlite_db, "SELECT id FROM customers ORDER BY id LIMIT 10, 5")
    assert res.ok and res.rows == []
    res = run_guarded(sqlite_db, "SELECT id FROM customers", Policy.strict(max_rows=1))
    assert res.ok and res.row_count == 1 and res.truncated
    res = run_guarded(sqlite_db, "SELECT load_extension('x')")
    assert not res.ok and res.code == "denied_function" and "load_extension" in res.message


def test_run_guarded_sandbox_policy_runs_scripts(pg_db_factory):
    db = pg_db_factory(
        [
            "CREATE TABLE customers (id SERIAL PRIMARY KEY, name TEXT)",
            "INSERT INTO customers (name) VALUES ('Ada'), ('Bob'), ('Chloe')",
        ],
        writable=True,
        single_statement=False,
    )
    res = run_guarded(
        db, "INSERT INTO customers (name) VALUES ('Dan'); SELECT count(*) FROM customers", Policy.sandbox()
    )
    assert res.ok and res.rows == [[4]]


def test_cli_check():
    from actsagent.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["check", "SELECT id FROM t LIMIT 5000", "--max-rows", "10"])
    assert res.exit_code == 0 and "SELECT id FROM t LIMIT 10" in res.stdout
    res = runner.invoke(app, ["check", "SELECT 1; DROP TABLE t", "--json"])
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    assert data["ok"] is False and data["rule"] == "multiple_statements"
    res = runner.invoke(app, ["check", "SELECT julianday('now')", "--dialect", "sqlite", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["functions"] == ["julianday"]
    res = runner.invoke(app, ["check", "SELECT 1", "--dialect", "oracle"])
    assert res.exit_code != 0


def test_results_round_trip_through_the_discriminated_union():
    from pydantic import TypeAdapter

    from actsagent.guard import GuardResult

    adapter = TypeAdapter(GuardResult)
    for sql in ("SELECT 1", "DROP TABLE t"):
        r = check_sql(sql, "postgres")
        assert adapter.validate_json(r.model_dump_json()) == r


def test_regenerated_gold_sql_returns_the_same_rows():
    """Regeneration must not change what a query means: every 4th Spider dev query, on the real SQLite
    files (evals/bench_guard.py runs them all)."""
    import sqlite3

    questions = json.loads((REALERRORS / "spider_dev" / "questions.json").read_text())[::4]
    checked = 0
    for q in questions:
        path = REALERRORS / "spider_dev" / "databases" / q["db_id"] / f"{q['db_id']}.sqlite"
        guarded = check_sql(q["gold_sql"], "sqlite", max_rows=10**9)
        assert guarded.ok
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            conn.text_factory = lambda b: b.decode("utf-8", errors="replace")

            def rows(sql: str) -> list | str:
                try:
                    return conn.execute(sql).fetchall()
                except sqlite3.Error as e:  # wta_1 is a partial rebuild: some gold SQL fails as written
                    return str(e)

            a, b = rows(q["gold_sql"]), rows(guarded.sql)
        if "order by" not in q["gold_sql"].lower() and isinstance(a, list) and isinstance(b, list):
            a, b = sorted(map(repr, a)), sorted(map(repr, b))
        assert a == b, (q["gold_sql"], guarded.sql)
        checked += 1
    assert checked == len(questions) > 250


def test_allow_and_deny_lists_do_not_overlap():
    from actsagent.guard import ALLOWED, denied_reason

    overlap = {(d, f) for d, names in ALLOWED.items() for f in names if denied_reason(f)}
    assert overlap == set()


def test_no_postgres_gold_sql_of_bird_minidev_is_rejected():
    """The PostgreSQL allow-list, tried on real PostgreSQL gold SQL (BIRD mini-dev, 500 queries)."""
    path = REALERRORS / "bird_minidev" / "mini_dev_postgresql.json"
    questions = json.loads(path.read_text())
    assert len(questions) == 500
    rejected = [
        (q["question_id"], r.rule, r.reason) for q in questions if not (r := check_sql(q["SQL"], "postgres")).ok
    ]
    assert rejected == []


@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
def test_malformed_input_is_a_rejection_never_an_exception(dialect):
    nasty = [
        "\x00",
        "SELECT 1\x00; DROP TABLE t",
        ";;;",
        "$$",
        "SELECT $$unterminated",
        "SELECT 'a",
        'SELECT "a',
        "/* unterminated",
        "SELECT (((1",
        "SELECT 1)))",
        "SELECT",
        "WITH",
        "SELECT * FROM",
        "\u00a0\u2028",
        "SELECT 1 FROM t WHERE x = \u2019a\u2019",
        "SELECT ¿?",
        "SELECT 1e999999",
        "SELECT 1 LIMIT 99999999999999999999",
        "SELECT * FROM t LIMIT 1 OFFSET -1",
        "SELECT 1 UNION",
        "))))((((",
        "SELECT CAST(",
        "'; DROP TABLE t; --",
    ]
    for sql in nasty:
        r = check_sql(sql, dialect)
        if r.ok:  # whatever passes must be one statement regenerated from the tree
            assert r.statements == [r.sql] and r.limit_action != "none", (sql, r)


def test_a_sqlglot_warning_is_a_rejection_not_a_guess():
    r = check_sql("SELECT json_extract(doc, '$.a[') FROM t", "sqlite")  # sqlglot warns and would guess the path
    assert r.rule == "parse" and "Invalid JSON path" in r.reason
    assert check_sql("SELECT json_extract(doc, '$.a') FROM t", "sqlite").ok


ANALYTICS_SQL = [  # everyday PostgreSQL an analyst or a model writes: none may be refused
    "SELECT DISTINCT ON (customer_id) customer_id, ordered_at FROM orders ORDER BY customer_id, ordered_at DESC",
    "SELECT date_trunc('month', ordered_at) AS m, sum(total) FILTER (WHERE status = 'paid') FROM orders GROUP BY 1",
    "SELECT to_char(ordered_at, 'YYYY-MM'), count(*) FROM orders WHERE ordered_at >= current_date - interval '30 days' "
    "GROUP BY 1",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY total), mode() WITHIN GROUP (ORDER BY status) FROM orders",
    "SELECT EXTRACT(EPOCH FROM now() - ordered_at::timestamp) FROM orders",
    "SELECT c.name, x.total FROM customers c CROSS JOIN LATERAL (SELECT total FROM orders o "
    "WHERE o.customer_id = c.id ORDER BY total DESC LIMIT 1) x",
    "SELECT d::date FROM generate_series('2024-01-01'::date, '2024-02-01'::date, interval '1 day') AS g(d)",
    "SELECT name FROM customers WHERE name ILIKE 'a%' OR name ~* '^b' OR name SIMILAR TO 'c%'",
    "SELECT status, country, sum(total) FROM orders o JOIN customers c ON c.id = o.customer_id "
    "GROUP BY ROLLUP (status, country)",
    "SELECT rank() OVER (PARTITION BY status ORDER BY total DESC NULLS LAST), lag(total) OVER w FROM orders "
    "WINDOW w AS (ORDER BY id)",
    "SELECT round(avg(total)::numeric, 2), width_bucket(total, 0, 200, 4) FROM orders GROUP BY 2",
    "SELECT age(now(), created_at), justify_interval(interval '40 days'), make_date(2024, 1, 1) FROM customers",
    "SELECT doc->>'a', doc #> '{a,b}', doc @> '{\"a\":1}'::jsonb, jsonb_array_elements(doc->'items') "
    "FROM (SELECT '{\"a\":1}'::jsonb AS doc) s",
    "SELECT ts_rank(to_tsvector('english', name), plainto_tsquery('english', 'ada')) FROM customers",
    "SELECT id FROM items ORDER BY embedding <-> '[1,2,3]' LIMIT 5",
    "SELECT split_part(name, ' ', 1), initcap(name), left(name, 2), lpad(name, 5, '*'), "
    "regexp_replace(name, '[aeiou]', '', 'g') FROM customers",
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10) SELECT sum(n) FROM t",
    "SELECT json_agg(c), json_build_object('n', count(*)) FROM customers c",
    "SELECT string_agg(DISTINCT name, ', ' ORDER BY name), array_agg(id ORDER BY id) FROM customers",
    "SELECT id, sum(total) OVER (ORDER BY ordered_at ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM orders",
    "SELECT pg_size_pretty(pg_total_relation_size('orders')), current_setting('TimeZone'), version()",
    "SELECT x FROM unnest(ARRAY[1,2,3]) WITH ORDINALITY AS t(x, i)",
    "SELECT trim(both ' ' from name), position('a' in name), substring(name from 1 for 2) FROM customers",
    "SELECT name FROM customers c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)",
]


@pytest.mark.parametrize("sql", ANALYTICS_SQL)
def test_everyday_postgres_analytics_passes(sql):
    r = check_sql(sql, "postgres")
    assert r.ok, r


def test_an_application_that_quiets_sqlglot_does_not_blind_the_guard(caplog):
    import logging

    logger = logging.getLogger("sqlglot")
    before = logger.level
    logger.setLevel(logging.ERROR)
    try:
        r = check_sql("SELECT json_extract(doc, '$.a[') FROM t", "sqlite")
        assert r.rule == "parse" and "Invalid JSON path" in r.reason
        with caplog.at_level(logging.WARNING):  # outside the guard the application's ERROR level still holds
            logger.warning("outside the guard")
        assert "outside the guard" not in caplog.text
    finally:
        logger.setLevel(before)
