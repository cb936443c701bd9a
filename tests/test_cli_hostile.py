"""The whole hostile SQL corpus through the command line (`actsagent sql`) and one `clean` batch: nothing gets
through. Every statement is refused by the guard or fails; none runs and returns rows; clean keeps and repairs
none of them; the databases are unchanged afterwards. The tests iterate the corpus folder, new files included."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator

import psycopg
import pytest
from hostile_corpus import load_corpus
from typer.testing import CliRunner

from actsagent.cli import app

runner = CliRunner()


def _targets(pg_db, sqlite_db) -> dict[str, str]:
    return {"postgres": pg_db.url, "sqlite": str(sqlite_db.path)}


def _state(pg_db, sqlite_db) -> tuple:
    """What a statement that got through could have changed: data, relations, roles, the SQLite folder."""
    with psycopg.connect(pg_db.url) as conn:
        pg = tuple(
            conn.execute(q).fetchall()
            for q in (
                "SELECT * FROM customers ORDER BY id",
                "SELECT * FROM orders ORDER BY id",
                "SELECT relname, relkind FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY 1",
                "SELECT rolname, rolsuper, rolcanlogin FROM pg_roles ORDER BY 1",
                "SELECT count(*) FROM pg_proc",
            )
        )
    folder = sqlite_db.path.parent
    files = sorted((p.name, hashlib.sha256(p.read_bytes()).hexdigest()) for p in folder.iterdir() if p.is_file())
    return pg, files


@pytest.fixture
def targets_opened_once(monkeypatch) -> Iterator[dict]:
    """`actsagent sql` opens its target (a connection pool) for each statement. Across the corpus the target and
    its options never change, so each is opened once, by the command's own ``open_target`` call, and kept open: each
    statement's invocation gets a copy whose ``close`` does nothing (same class, same pool). What each statement
    exercises is unchanged: the command line, the guard, the run and the output."""
    import actsagent.demo

    real, opened = actsagent.demo.open_target, {}

    def open_once(target=None, **options):
        key = (target, repr(sorted(options.items())))
        if key not in opened:
            opened[key] = real(target, **options)
        kept = copy.copy(opened[key])
        kept.close = lambda: None
        return kept

    monkeypatch.setattr(actsagent.demo, "open_target", open_once)
    yield opened
    for database in opened.values():
        database.close()


def test_hostile_corpus_through_actsagent_sql(pg_db, sqlite_db, targets_opened_once):
    corpus = load_corpus()
    assert len(corpus) >= 150 and {d for _, d, _ in corpus} == {"postgres", "sqlite"}
    targets = _targets(pg_db, sqlite_db)
    before = _state(pg_db, sqlite_db)
    through, crashed = [], []
    for file, dialect, sql in corpus:
        # `--` ends the options: a statement starting with a comment is still the SQL argument
        res = runner.invoke(app, ["sql", "--db", targets[dialect], "--json", "--", sql])
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            crashed.append((file, sql, repr(res.exception)))
        elif res.exit_code == 0:
            through.append((file, sql, res.stdout[:300]))
        else:
            assert json.loads(res.stdout)["ok"] is False, (file, sql)
    assert crashed == []
    assert through == []
    assert sorted(target for target, _ in targets_opened_once) == sorted(targets.values())
    assert _state(pg_db, sqlite_db) == before


def test_hostile_corpus_through_one_clean_batch(tmp_path, pg_db, sqlite_db):
    corpus = load_corpus()
    targets = _targets(pg_db, sqlite_db)
    (tmp_path / "batch").mkdir()  # beside the SQLite file, whose folder must not change
    src = tmp_path / "batch" / "hostile.jsonl"
    with src.open("w", encoding="utf-8") as f:
        for i, (file, dialect, sql) in enumerate(corpus):
            f.write(
                json.dumps({"id": f"{file}:{i}", "question": "Show me the data", "sql": sql, "db": targets[dialect]})
                + "\n"
            )
    before = _state(pg_db, sqlite_db)
    out = tmp_path / "batch" / "verdicts.jsonl"
    res = runner.invoke(app, ["clean", str(src), "--out", str(out), "--no-llm", "--workers", "2", "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    assert len(records) == len(corpus) and json.loads(res.stdout)["rejected"] == len(corpus)
    not_rejected = [(r["id"], r["verdict"], r["original_sql"]) for r in records if r["verdict"] != "rejected"]
    assert not_rejected == []
    executed = [
        (r["id"], r["original_sql"])
        for r in records
        if (r["evidence"].get("execution") or {}).get("ok")
        or (r["evidence"].get("repaired_execution") or {}).get("ok")
        or r.get("repaired_sql")
    ]
    assert executed == []
    # refused up front (the guard, or input that is not text), not after a SafeQL repair attempt
    assert {r["reason"].split(":", 1)[0] for r in records} <= {"unsafe", "bad input"}
    assert _state(pg_db, sqlite_db) == before
