"""`actsagent refine` on a SQLite file: edit path and rows, JSON, and a clear failure."""

from __future__ import annotations

import json
import sqlite3

from typer.testing import CliRunner

from actsagent.cli import app


def _db(tmp_path):
    path = tmp_path / "c.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE country (country_id INTEGER PRIMARY KEY, country_name TEXT, region TEXT)")
        conn.execute("INSERT INTO country VALUES (1, 'South Korea', 'Asia'), (2, 'Germany', 'Europe')")
    return str(path)


def test_refine_prints_edits_and_rows(tmp_path):
    res = CliRunner().invoke(
        app, ["refine", "SELECT countryname FROM country WHERE region = 'asia'", "--db", _db(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    assert "refined" in res.output and "attribute" in res.output and "value" in res.output
    assert "South Korea" in res.output


def test_refine_json_and_gave_up_exit_code(tmp_path):
    db = _db(tmp_path)
    res = CliRunner().invoke(app, ["refine", "SELECT region FROM country WHERE country_id = 1", "--db", db, "--json"])
    assert res.exit_code == 0
    assert json.loads(res.output)["status"] == "already_ok"
    res = CliRunner().invoke(app, ["refine", "DELETE FROM country", "--db", db, "--json"])
    assert res.exit_code == 1
    assert json.loads(res.output)["status"] == "gave_up"
