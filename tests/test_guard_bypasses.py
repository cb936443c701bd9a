"""Bypass classes of the SQL guard, closed as classes: attribute notation (``(x).f`` runs ``f(x)``), control
characters (a NUL ends the statement on the server), functions by another dialect's name, settings and
statistics leaks, transaction-id side effects, parser crashes; and the whole hostile corpus refused on the
real embedded PostgreSQL, through ``run_guarded`` and through the agent's ``run_sql`` tool."""

from __future__ import annotations

import json
import re
from datetime import date

import pytest
from hostile_corpus import CORPUS_DIR, load_corpus
from typer.testing import CliRunner

from actsagent.guard import (
    ALLOWED,
    DENIED,
    DENIED_PREFIXES,
    DENIED_RELATIONS,
    SAFE_SETTINGS,
    Policy,
    check_sql,
    run_guarded,
)
from actsagent.guard.functions import WRITTEN_SYNTAX

ATTRIBUTE_FORMS = [
    "SELECT (1).{f}",
    "SELECT ('x'::text).{f}",
    "SELECT c.{f} FROM customers c",
    "SELECT public.customers.{f} FROM customers",
    'SELECT c."{f}" FROM customers c',
    "SELECT (c.name).{F} FROM customers c",
    "SELECT x.v.{f} FROM (SELECT 1 AS v) x",
    'SELECT ("c").{f} FROM customers AS "c"',
]
CONTROL = [c for c in map(chr, [*range(0x20), *range(0x7F, 0xA0)]) if c not in "\t\n\r\f"]
_CONTROL_RE = re.compile("[" + "".join(CONTROL) + "]")


@pytest.mark.parametrize("form", ATTRIBUTE_FORMS)
def test_attribute_notation_over_every_denied_function_is_refused(form):
    names = [*DENIED, *(prefix + "x" for prefix in DENIED_PREFIXES)]
    for name in names:
        sql = form.format(f=name, F=name.upper())
        r = check_sql(sql, "postgres")
        assert not r.ok and r.rule == "denied_function" and r.offending == name, (sql, r)


def test_every_denied_function_is_in_the_attribute_notation_corpus():
    text = (CORPUS_DIR / "attribute_notation.sql").read_text().lower()
    missing = [n for n in DENIED if not re.search(r'\."?' + re.escape(n) + r"(?![a-z0-9_])", text)]
    assert missing == []


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT (jsonb_each(doc)).key, (jsonb_each(doc)).value FROM docs",
        "SELECT (json_each_text(doc)).key FROM docs",
        "SELECT t.date, t.name, t.year, t.position FROM t",
        "SELECT public.t.date FROM public.t",
        "SELECT (c.name).upper, (t.d).date FROM c, t",
        "SELECT (p).x FROM (SELECT point(1, 2) AS p) s",
        "SELECT (c).relname FROM pg_class c",
    ],
)
def test_field_selections_that_are_no_calls_pass(sql):
    r = check_sql(sql, "postgres")
    assert r.ok, r


def test_without_a_catalog_a_parenthesized_field_named_like_a_function_is_refused():
    r = check_sql("SELECT (x).encrypt FROM t", "postgres")  # a name sqlglot knows as a function
    assert r.rule == "attribute_call" and r.offending == "encrypt" and "attribute notation" in r.reason


def test_the_server_catalog_tells_a_column_from_a_call(pg_db_factory):
    db = pg_db_factory(
        ["CREATE TABLE notes (id int, currval text, date date)", "INSERT INTO notes VALUES (1, 'x', '2024-01-01')"]
    )
    catalog = db.catalog()
    assert {"pg_sleep", "currval", "setseed", "upper"} <= catalog.functions
    assert {"notes", "id", "currval", "date"} <= catalog.columns
    # currval is a function too, but here it is a column: it reads
    res = run_guarded(db, "SELECT n.currval, n.date FROM notes n")
    assert res.ok and res.rows == [["x", date(2024, 1, 1)]]
    # no relation has a column setseed: PostgreSQL would run setseed(n)
    assert check_sql("SELECT n.setseed FROM notes n", "postgres").ok  # without a catalog: taken for a column
    res = run_guarded(db, "SELECT n.setseed FROM notes n")
    assert not res.ok and res.engine == "guard" and res.code == "attribute_call" and res.identifier == "setseed"
    res = run_guarded(db, "SELECT (jsonb_each('{\"a\": 1}'::jsonb)).key")
    assert res.ok and res.rows == [["a"]]


def test_the_sqlite_catalog_comes_from_pragmas(sqlite_db):
    catalog = sqlite_db.catalog()
    assert {"abs", "json_extract", "strftime"} <= catalog.functions
    assert {"customers", "orders", "name", "customer_id"} <= catalog.columns
    assert run_guarded(sqlite_db, "SELECT c.name FROM customers c ORDER BY c.id").rows[0] == ["Ada"]
    res = run_guarded(sqlite_db, "SELECT c.load_extension FROM customers c")
    assert not res.ok and res.code == "denied_function"


@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
def test_every_control_character_is_refused_wherever_it_is(dialect):
    for c in CONTROL:
        for sql in (
            f"SELECT name FROM customers{c}",
            f"{c}SELECT 1",
            f"SELECT 'a{c}b'",
            f"SELECT 1 -- {c}",
            f'SELECT "a{c}b" FROM t',
            f"SELECT 1 /* {c} */",
        ):
            r = check_sql(sql, dialect)
            assert not r.ok and r.rule == "control_character" and r.offending == f"\\x{ord(c):02x}", (sql, r)
            assert sql[r.position - 1] == c
    assert check_sql("SELECT\t1\r\n\f", dialect).ok
    r = check_sql("SELECT 'a\ud800'", dialect)  # no encoding carries an unpaired surrogate to the server
    assert r.rule == "control_character" and r.offending == "\\ud800"


def test_nothing_generated_contains_a_control_character():
    sqls = [
        r"SELECT E'\x00'",
        r"SELECT E'\x01'",
        r"SELECT E'\001'",
        r"SELECT U&'\0001'",
        r"SELECT U&'\0000'",
        r"SELECT U&'!0007' UESCAPE '!'",
        r"SELECT E'\u0085'",
        "SELECT chr(0)",
        "SELECT char(1)",
        r"SELECT X'00'",
        r"SELECT '\x00'",
        "SELECT $$\\x1b$$",
    ]
    outputs = [r.sql for s in sqls for d in ("postgres", "sqlite") if (r := check_sql(s, d)).ok]
    assert len(outputs) >= 8
    assert [o for o in outputs if _CONTROL_RE.search(o)] == []


def _sqlglot_function_names() -> set[str]:
    """Every function name sqlglot's parsers model, in any dialect: what a typed node may be built from."""
    from sqlglot.dialects.dialect import Dialect, Dialects

    names: set[str] = set()
    for d in Dialects:
        if d.value:
            parser = Dialect.get_or_raise(d.value).parser_class
            names |= {k.lower() for k in (*parser.FUNCTIONS, *parser.FUNCTION_PARSERS)}
    return names


@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
def test_every_function_sqlglot_models_that_we_did_not_review_is_refused(dialect):
    names = sorted(_sqlglot_function_names() - ALLOWED[dialect] - WRITTEN_SYNTAX[dialect])
    assert len(names) > 300
    through = []
    for name in names:
        for args in ("", "1", "name, 'x'", "1, 2, 3"):
            r = check_sql(f"SELECT {name}({args}) FROM customers", dialect)  # never raises
            if r.ok:
                through.append(r.sql)
    assert through == []


@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
@pytest.mark.parametrize(
    "sql,name",
    [
        ("SELECT MATCH_AGAINST(name, 'x') FROM customers", "match_against"),
        ("SELECT PARAMETERIZED_AGG(1,2,3)", "parameterized_agg"),
        ("SELECT X_M_L_TABLE(1,2)", "x_m_l_table"),
        ("SELECT VAR_MAP('a') FROM customers", "var_map"),
    ],
)
def test_inputs_that_crashed_the_guard_are_refused_naming_the_function(sql, name, dialect):
    r = check_sql(sql, dialect)
    assert r.rule == "unknown_function" and r.offending == name, r


def test_the_cli_refuses_a_former_crash_in_one_line():
    from actsagent.cli import app

    res = CliRunner().invoke(app, ["check", "SELECT MATCH_AGAINST(name, 'x') FROM customers", "--json"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    out = json.loads(res.stdout)
    assert out["rule"] == "unknown_function" and out["offending"] == "match_against"


def test_a_parser_failure_is_a_refusal_not_an_exception(monkeypatch):
    from actsagent.guard import check, postgres_parse

    def broken(*args, **kwargs):
        raise TypeError("'Literal' object is not iterable")

    monkeypatch.setattr(check, "apply_row_limit", broken)
    r = check_sql("SELECT 1", "sqlite")
    assert r.rule == "unsupported" and "TypeError" in r.reason
    monkeypatch.undo()
    monkeypatch.setattr(postgres_parse, "_pg", None)  # without PostgreSQL's parser nothing passes
    r = check_sql("SELECT 1", "postgres")
    assert r.rule == "unsupported" and "pglast" in r.reason
    monkeypatch.undo()
    r = check_sql(r"SELECT E'\x00'", "postgres")  # sqlglot accepts it, PostgreSQL's parser does not
    assert r.rule == "roundtrip" and "PostgreSQL's parser" in r.reason


def test_current_setting_reads_only_reviewed_settings_named_by_a_literal(pg_db):
    for name in SAFE_SETTINGS:
        assert check_sql(f"SELECT current_setting('{name}')", "postgres").ok, name
    assert check_sql("SELECT current_setting('TimeZone', true)", "postgres").ok
    for sql in [
        "SELECT current_setting('data_directory')",
        "SELECT current_setting('hba_file', true)",
        "SELECT current_setting('Config_File')",
        "SELECT current_setting('data_' || 'directory')",
        "SELECT current_setting(setting_name => 'TimeZone')",
        "SELECT current_setting(name) FROM t",
        "SELECT current_setting('TimeZone', 'x')",
        "SELECT pg_catalog.current_setting('ssl_key_file')",
    ]:
        r = check_sql(sql, "postgres")
        assert r.rule == "denied_setting", (sql, r)
    r = check_sql("SELECT ('data_directory'::text).current_setting", "postgres")
    assert r.rule == "attribute_call" and r.offending == "current_setting"
    res = run_guarded(pg_db, "SELECT current_setting('server_version_num')::int >= 180000")
    assert res.ok and res.rows == [[True]]


@pytest.mark.parametrize("schema", sorted(DENIED_RELATIONS))
def test_statistics_settings_and_user_mappings_are_refused_by_schema(schema):
    for name in DENIED_RELATIONS[schema]:
        for sql in (
            f"SELECT * FROM {name}",
            f"SELECT * FROM {schema}.{name}",
            f'SELECT * FROM "{schema}"."{name}"',
            f"SELECT 1 FROM t WHERE EXISTS (SELECT 1 FROM {schema}.{name.upper()})",
        ):
            r = check_sql(sql, "postgres")
            assert r.rule == "denied_relation" and r.offending == name, (sql, r)
        assert check_sql(f"SELECT * FROM public.{name}", "postgres").ok  # an application table of that name


def test_functions_that_assign_a_transaction_id_are_refused(pg_db):
    for name in ("txid_current", "pg_current_xact_id"):
        r = check_sql(f"SELECT {name}()", "postgres")
        assert r.rule == "denied_function" and "transaction id" in r.reason
    res = run_guarded(pg_db, "SELECT txid_current_if_assigned(), pg_current_xact_id_if_assigned()")
    assert res.ok and res.rows == [[None, None]]  # they only read: nothing was assigned


def _snapshot(db) -> list:
    return [
        db.execute(sql).rows
        for sql in (
            "SELECT * FROM customers ORDER BY id",
            "SELECT * FROM orders ORDER BY id",
            "SELECT last_value FROM customers_id_seq",
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()",
        )
    ]


def test_the_whole_postgres_corpus_is_refused_by_run_guarded_and_run_sql_on_the_real_server(pg_db):
    from actsagent.tools import RunSqlInput, ToolContext, run_sql

    corpus = load_corpus("postgres")
    assert len(corpus) >= 700
    before = _snapshot(pg_db)
    ctx = ToolContext(db=pg_db, policy=Policy.strict())
    leaked = []
    for file, _, sql in corpus:
        res = run_guarded(pg_db, sql)
        if res.ok or res.engine != "guard":
            leaked.append(("run_guarded", file, sql, res))
        out = run_sql(RunSqlInput(sql=sql), ctx)
        if out.ok or out.error is None or out.error.engine != "guard":
            leaked.append(("run_sql", file, sql, out.summary()))
    assert leaked == []
    assert _snapshot(pg_db) == before


def test_the_whole_sqlite_corpus_is_refused_by_run_guarded(sqlite_db):
    corpus = load_corpus("sqlite")
    assert len(corpus) >= 80
    leaked = [(f, s) for f, _, s in corpus if (res := run_guarded(sqlite_db, s)).ok or res.engine != "guard"]
    assert leaked == []
