"""`actsagent repair` / `actsagent ask` through the CLI runner, on a real SQLite file, without an LLM."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from actsagent.cli import app

runner = CliRunner()


def test_repair_streams_nodes_then_prints_the_run(sqlite_db):
    res = runner.invoke(
        app,
        [
            "repair",
            "--intent",
            "names of all customers",
            "--sql",
            "SELECT name FROM customers ORDER BY name",
            "--db",
            str(sqlite_db.path),
        ],
    )
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "▶ n0" in out and "run_sql" in out  # streamed as it ran
    assert "final SQL" in out and "Chloe" in out and "plan tree" in out
    assert "no LLM configured" in out


def test_repair_json(sqlite_db):
    res = runner.invoke(
        app, ["repair", "-i", "names", "-s", "SELECT name FROM customers", "--db", str(sqlite_db.path), "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["status"] == "best_effort" and data["final_sql"] == "SELECT name FROM customers"
    assert data["tree"]["nodes"]["n0"]["tool"] == "run_sql"


def test_bad_input_is_a_clear_error(sqlite_db):
    res = runner.invoke(app, ["repair", "-i", "x", "-s", "SELECT 1", "--db", str(sqlite_db.path), "--mode", "wild"])
    assert res.exit_code != 0
    res = runner.invoke(app, ["repair", "-i", "x", "--db", str(sqlite_db.path)])
    assert res.exit_code != 0


def test_ask_without_llm_exits_non_zero(sqlite_db):
    res = runner.invoke(app, ["ask", "how many customers?", "--db", str(sqlite_db.path)])
    assert res.exit_code == 1 and "needs a model" in res.stdout


def test_interactive_repair_asks_and_continues(pg_db, monkeypatch):
    """With a (scripted) model configured, an ambiguity the data cannot settle is asked on the terminal."""
    from test_graph_control import BAD, INTENT, clarify_script

    import actsagent.llm
    from actsagent.llm import ScriptedChatModel

    monkeypatch.setattr(actsagent.llm, "get_chat_model", lambda *a, **k: ScriptedChatModel(clarify_script))
    res = runner.invoke(app, ["repair", "-i", INTENT, "-s", BAD, "--db", pg_db.url, "--interactive"], input="2\n")
    assert res.exit_code == 0, res.output
    assert "Should refunded orders count as paid?" in res.stdout
    assert "1. sum of totals of orders with status paid" in res.stdout
    assert "solved" in res.stdout and "user clarified" in res.stdout
