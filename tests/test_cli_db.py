"""The database commands through the CLI: tables by default, --json for scripts, clear errors."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from actsagent.cli import app

runner = CliRunner()


@pytest.fixture
def shop_file(tmp_path):
    path = tmp_path / "tiny.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE pets (id INTEGER PRIMARY KEY, kind TEXT, weight REAL)")
        conn.executemany("INSERT INTO pets (kind, weight) VALUES (?, ?)", [("cat", 4.2), ("dog", 11.0), ("cat", 3.9)])
    return path


def test_schema_json_and_text(shop_file):
    res = runner.invoke(app, ["schema", "--db", str(shop_file), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["tables"][0]["name"] == "pets"
    assert [c["name"] for c in data["tables"][0]["columns"]] == ["id", "kind", "weight"]
    res = runner.invoke(app, ["schema", "--db", str(shop_file)])
    assert "Table pets" in res.stdout and "'cat'" in res.stdout


def test_missing_database_is_a_clear_error(tmp_path):
    import sys

    from actsagent.cli._common import run_app

    argv = sys.argv
    sys.argv = ["actsagent", "schema", "--db", str(tmp_path / "nope.sqlite")]
    try:
        assert run_app(app) == 1
    finally:
        sys.argv = argv


def test_unknown_table_is_rejected(shop_file):
    res = runner.invoke(app, ["schema", "--db", str(shop_file), "-t", "ghosts"])
    assert res.exit_code != 0
    assert "no such table: ghosts" in str(res.exception) or "ghosts" in res.output


def test_load_sqlite_into_embedded_and_query(shop_file, pg_admin_url):
    res = runner.invoke(app, ["db", "load", str(shop_file), "--name", "tiny_pets", "--replace", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["rows"] == {"pets": 3}
    from actsagent.db import open_database

    db = open_database("tiny_pets")
    got = db.execute("SELECT kind, count(*) FROM pets GROUP BY kind ORDER BY kind")
    assert got.rows == [["cat", 2], ["dog", 1]]
    db.close()
    again = runner.invoke(app, ["db", "load", str(shop_file), "--name", "tiny_pets"])
    assert again.exit_code != 0


def test_load_sql_script_skips_missing_extensions(tmp_path, pg_admin_url):
    script = tmp_path / "ext.sql"
    script.write_text("CREATE EXTENSION IF NOT EXISTS hstore;\nCREATE TABLE k (v int);\nINSERT INTO k VALUES (5);\n")
    res = runner.invoke(app, ["db", "load", str(script), "--name", "ext_test", "--replace", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["skipped_extensions"] == ["hstore"]
