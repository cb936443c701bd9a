"""The degraded-schema variant: seeded obscure names, a copy never touching the original, gold SQL
rewritten through the AST and kept only when it returns the original rows."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import uuid

import psycopg
import pytest
from engines import sqlite_file

from actsagent.benchmarks import BenchQuestion, data_root, db_path, load_questions, pg_copy, run_sqlite
from actsagent.degrade import SQLITE_KEYWORDS, degrade_questions, plan_renames, write_degraded
from actsagent.sqlnames import SqlNamesError, references, rename

SETUP = [
    "CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER, note TEXT)",
    "CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT, year TEXT)",
    "CREATE TABLE singer_in_concert (concert_id INTEGER REFERENCES concert(concert_id), "
    "singer_id INTEGER REFERENCES singer(singer_id), PRIMARY KEY (concert_id, singer_id))",
    "INSERT INTO singer VALUES (1, 'Ada', 'France', 30, 'East'), (2, 'Bob', 'US', 41, NULL), (3, 'Cleo', 'France', 25, 'x')",
    "INSERT INTO concert VALUES (1, 'Spring', '2014'), (2, 'Autumn', '2015')",
    "INSERT INTO singer_in_concert VALUES (1, 1), (1, 2), (2, 3), (2, 1)",
]

GOLD = [
    "SELECT count(*) FROM singer",
    'SELECT name FROM singer WHERE country = "France" ORDER BY age DESC',  # SQLite's double-quoted string
    "SELECT name, country, age FROM singer ORDER BY age DESC",  # ORDER BY an output name
    "SELECT country, count(*) FROM singer GROUP BY country ORDER BY count(*) DESC LIMIT 1",
    "SELECT T2.name FROM singer_in_concert AS T1 JOIN singer AS T2 ON T1.singer_id = T2.singer_id "
    "JOIN concert AS T3 ON T1.concert_id = T3.concert_id WHERE T3.year = '2014'",
    "SELECT T.name FROM (SELECT name, age FROM singer WHERE age > 26) AS T ORDER BY T.name",
    "SELECT name FROM singer WHERE singer_id NOT IN (SELECT singer_id FROM singer_in_concert WHERE concert_id = 2)",
    "SELECT note FROM singer WHERE note LIKE '%East%'",
    "SELECT name FROM singer AS s WHERE EXISTS (SELECT 1 FROM singer_in_concert AS c WHERE c.singer_id = s.singer_id)",
]


@pytest.fixture
def shop(tmp_path):
    return sqlite_file(tmp_path / "concert.sqlite", SETUP)


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_plan_is_seeded_unique_and_avoids_keywords(shop):
    a, b = plan_renames(shop, seed=7), plan_renames(shop, seed=7)
    assert a == b
    assert plan_renames(shop, seed=8) != a
    assert {t.name for t in a.tables} == {"singer", "concert", "singer_in_concert"}
    tables = [t.new_name.lower() for t in a.tables]
    assert len(set(tables)) == len(tables)
    for t in a.tables:
        assert t.new_name.lower() not in SQLITE_KEYWORDS
        new = [c.lower() for c in t.columns.values()]
        assert len(set(new)) == len(new) == len(t.columns)
        assert not set(new) & SQLITE_KEYWORDS
    # the same column name reads the same in every table (join keys still look alike)
    by = {t.name: t.columns for t in a.tables}
    assert by["singer"]["singer_id"] == by["singer_in_concert"]["singer_id"]


def test_codes_style_gives_positional_codes(shop):
    plan = plan_renames(shop, seed=1, code_share=1.0)
    singer = next(t for t in plan.tables if t.name == "singer")
    assert singer.style == "codes"
    assert not singer.columns["singer_id"][1:].isdigit()  # keys keep abbreviations
    assert all(new[0].isalpha() and new[1:].isdigit() for c, new in singer.columns.items() if c != "singer_id")


def test_copy_keeps_data_and_keys_and_never_writes_the_original(shop, tmp_path):
    before = _digest(shop)
    plan = plan_renames(shop, seed=3)
    dst = tmp_path / "out" / "concert.sqlite"
    write_degraded(shop, dst, plan)
    assert _digest(shop) == before
    new = {t.name: t for t in plan.tables}
    with sqlite3.connect(dst) as conn:
        for old, t in new.items():
            _, n_old = run_sqlite(shop, f'SELECT count(*) FROM "{old}"')
            assert conn.execute(f'SELECT count(*) FROM "{t.new_name}"').fetchone()[0] == n_old[0][0]
            cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{t.new_name}")')]
            assert cols == list(t.columns.values())
        fks = conn.execute(f'PRAGMA foreign_key_list("{new["singer_in_concert"].new_name}")').fetchall()
        assert {r[2] for r in fks} == {new["singer"].new_name, new["concert"].new_name}


def test_rewritten_gold_returns_the_original_rows(shop, tmp_path):
    plan = plan_renames(shop, seed=0, code_share=0.5)
    dst = tmp_path / "d.sqlite"
    write_degraded(shop, dst, plan)
    qs = [
        BenchQuestion(bench="spider_dev", idx=i, db_id="concert", question=f"q{i}", gold_sql=s)
        for i, s in enumerate(GOLD)
    ]
    qs.append(
        BenchQuestion(bench="spider_dev", idx=99, db_id="concert", question="broken", gold_sql="SELECT x FROM rankings")
    )
    out = degrade_questions(qs, shop, dst, plan)
    assert [q.idx for q in out.kept] == list(range(len(GOLD)))
    assert [(d.idx, d.reason.split(":")[0]) for d in out.dropped] == [(99, "gold fails on the original database")]
    from actsagent.db.sqlite import SqliteDatabase

    with SqliteDatabase(shop) as a, SqliteDatabase(dst) as b:
        old_info, new_info = a.schema(), b.schema()
    tables, columns = plan.table_map(), plan.column_map()
    for q in out.kept:  # the rewritten gold reads exactly the renamed counterparts of what the original read
        old, new = references(q.original_gold_sql, old_info, "sqlite"), references(q.gold_sql, new_info, "sqlite")
        assert new.tables == {tables[t].lower() for t in old.tables}
        assert new.columns == {(tables[t].lower(), columns[(t, c)].lower()) for t, c in old.columns}


def test_a_rewrite_that_changes_rows_is_dropped(shop, tmp_path):
    """The check is real: a copy whose data differ makes the rewritten gold disagree, and it is dropped."""
    plan = plan_renames(shop, seed=0)
    dst = tmp_path / "d.sqlite"
    write_degraded(shop, dst, plan)
    singer = next(t for t in plan.tables if t.name == "singer")
    with sqlite3.connect(dst) as conn:
        conn.execute(f'DELETE FROM "{singer.new_name}" WHERE "{singer.columns["name"]}" = \'Bob\'')
    qs = [BenchQuestion(bench="spider_dev", idx=0, db_id="c", question="q", gold_sql="SELECT count(*) FROM singer")]
    out = degrade_questions(qs, shop, dst, plan)
    assert not out.kept and out.dropped[0].reason == "rewritten gold returns different rows"


def test_sqlnames_resolves_unqualified_and_aliased_columns(shop):
    from actsagent.db.sqlite import SqliteDatabase

    with SqliteDatabase(shop) as db:
        info = db.schema()
    refs = references(GOLD[4], info, "sqlite")
    assert refs.tables == {"singer", "singer_in_concert", "concert"}
    assert refs.columns == {
        ("singer", "name"),
        ("singer", "singer_id"),
        ("singer_in_concert", "singer_id"),
        ("singer_in_concert", "concert_id"),
        ("concert", "concert_id"),
        ("concert", "year"),
    }
    assert references(GOLD[1], info, "sqlite").columns == {("singer", "name"), ("singer", "country"), ("singer", "age")}
    with pytest.raises(SqlNamesError):
        rename("SELECT FROM WHERE", info, "sqlite", tables={}, columns={})


def test_spider_database_degrades_without_loss(tmp_path):
    root = data_root()
    qs = [q for q in load_questions(root, "spider_dev") if q.db_id == "concert_singer"]
    src = db_path(root, "spider_dev", "concert_singer")
    plan = plan_renames(src, seed=0)
    dst = tmp_path / "concert_singer.sqlite"
    write_degraded(src, dst, plan)
    out = degrade_questions(qs, src, dst, plan)
    assert len(qs) == 45 and len(out.kept) == 45, [d.reason for d in out.dropped]


def test_degraded_copy_loads_into_postgres_with_its_foreign_keys(shop, tmp_path, pg_admin_url):
    plan = plan_renames(shop, seed=0)
    dst = tmp_path / "d.sqlite"
    write_degraded(shop, dst, plan)
    name = f"t_deg_{uuid.uuid4().hex[:8]}"
    url = pg_copy(dst, name)
    try:
        new = {t.name: t for t in plan.tables}
        with psycopg.connect(url) as conn:
            s = new["singer"]
            n = conn.execute(
                f'SELECT count(*) FROM "{s.new_name}" WHERE "{s.columns["country"]}" = \'France\''
            ).fetchone()
            assert n[0] == 2
            refs = conn.execute("SELECT confrelid::regclass::text FROM pg_constraint WHERE contype = 'f'").fetchall()
            assert {r[0].strip('"') for r in refs} == {new["singer"].new_name, new["concert"].new_name}
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_hard_level_is_seeded_and_renames_everything_to_codes(shop):
    a, b = plan_renames(shop, seed=5, level="hard"), plan_renames(shop, seed=5, level="hard")
    assert a == b and a.level == "hard"
    assert plan_renames(shop, seed=6, level="hard") != a
    words = {"singer", "concert", "name", "country", "age", "note", "year", "id", "in"}
    new_cols = []
    for t in a.tables:
        assert re.fullmatch(r"T\d{2}", t.new_name), t.new_name
        assert set(t.columns) == {c for c, *_ in _columns(shop, t.name)}  # every column renamed
        for old, new in t.columns.items():
            assert re.fullmatch(r"[A-Za-z]{1,2}\d+", new), new  # a code: letters then digits
            assert new.lower() != old.lower() and not any(w in new.lower() for w in words - {"id"})
            new_cols.append((t.name, old, new))
    # keys share one code per original name (joins read alike); other columns are unique in the database
    by = {t.name: t.columns for t in a.tables}
    assert by["singer"]["singer_id"] == by["singer_in_concert"]["singer_id"]
    assert by["singer"]["singer_id"].startswith("id")
    plain = [n.lower() for t, o, n in new_cols if not n.startswith("id")]
    assert len(plain) == len(set(plain))


def _columns(path, table):
    with sqlite3.connect(path) as conn:
        return [(r[1],) for r in conn.execute(f'PRAGMA table_info("{table}")')]


def test_hard_level_rewrites_gold_with_the_same_rows(shop, tmp_path):
    plan = plan_renames(shop, seed=0, level="hard")
    dst = tmp_path / "hard.sqlite"
    write_degraded(shop, dst, plan)
    qs = [
        BenchQuestion(bench="spider_dev", idx=i, db_id="concert", question=f"q{i}", gold_sql=s)
        for i, s in enumerate(GOLD)
    ]
    out = degrade_questions(qs, shop, dst, plan)
    assert [q.idx for q in out.kept] == list(range(len(GOLD))), [d.reason for d in out.dropped]
    from actsagent.db.sqlite import SqliteDatabase

    with SqliteDatabase(dst) as b:
        new_info = b.schema()
    for q in out.kept:  # the rewritten gold reads only coded names, and the same rows
        refs = references(q.gold_sql, new_info, "sqlite")
        assert all(re.fullmatch(r"t\d{2}", t) for t in refs.tables), refs
        assert all(re.fullmatch(r"[a-z]{1,2}\d+", c) for _, c in refs.columns), refs
        ok, rows = run_sqlite(dst, q.gold_sql)
        assert ok and rows == run_sqlite(shop, q.original_gold_sql)[1]
    with sqlite3.connect(dst) as conn:  # the foreign keys are still declared, under the codes
        sic = next(t for t in plan.tables if t.name == "singer_in_concert")
        fks = conn.execute(f'PRAGMA foreign_key_list("{sic.new_name}")').fetchall()
        assert {r[3] for r in fks} == set(sic.columns.values())


def test_unknown_level_is_refused(shop):
    from actsagent.errors import UserError

    with pytest.raises(UserError, match="level must be one of"):
        plan_renames(shop, level="extreme")


def test_data_dictionary_is_keyed_by_degraded_names_and_loads_as_a_glossary(shop, tmp_path):
    from actsagent.degrade import data_dictionary
    from actsagent.kb import load_glossary

    plan = plan_renames(shop, seed=0, level="hard")
    path = tmp_path / "data_dictionary.json"
    path.write_text(data_dictionary(plan).model_dump_json())
    g = load_glossary(path)
    singer = next(t for t in plan.tables if t.name == "singer")
    assert set(g.tables) == {t.new_name for t in plan.tables}
    assert set(g.columns) == {f"{t.new_name}.{new}" for t in plan.tables for new in t.columns.values()}
    assert g.columns[f"{singer.new_name}.{singer.columns['country']}"] == "country of the singer"
    assert g.tables[singer.new_name].startswith("singer: one row per singer record; columns: singer id, name")
    sic = next(t for t in plan.tables if t.name == "singer_in_concert")
    assert g.columns[f"{sic.new_name}.{sic.columns['concert_id']}"] == "concert id of the singer in concert"


def test_build_writes_a_dictionary_beside_each_degraded_database(tmp_path):
    from actsagent.degrade import build_degraded_set, dictionary_path
    from actsagent.kb import load_glossary

    root = tmp_path / "data"
    src = db_path(root, "spider_dev", "concert")
    src.parent.mkdir(parents=True)
    sqlite_file(src, SETUP)
    (root / "spider_dev" / "questions.json").write_text(
        json.dumps([{"idx": i, "db_id": "concert", "question": f"q{i}", "gold_sql": s} for i, s in enumerate(GOLD)])
    )
    out = tmp_path / "hard"
    summary = build_degraded_set(root, out, seed=0, level="hard", benches=("spider_dev",))
    assert summary["spider_dev"]["kept"] == len(GOLD)
    g = load_glossary(dictionary_path(out, "spider_dev", "concert"))
    plan = json.loads((out / "spider_dev" / "renames.json").read_text())[0]
    assert plan["level"] == "hard" and set(g.tables) == {t["new_name"] for t in plan["tables"]}
