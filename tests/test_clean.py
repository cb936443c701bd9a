"""The cleaning job on real SQLite and PostgreSQL databases: good, repairable and hopeless pairs."""

from __future__ import annotations

import csv
import json

import pytest

from actsagent.clean import clean_file, read_pairs
from actsagent.errors import UserError

PAIRS = [
    {"id": "good", "question": "Names of all customers", "sql": "SELECT name FROM customers"},
    {"id": "typo_col", "question": "Names of all customers", "sql": "SELECT nme FROM customers"},
    {"id": "typo_table", "question": "How many orders are there?", "sql": "SELECT COUNT(*) FROM order"},
    {"id": "typo_table2", "question": "German customers", "sql": "SELECT name FROM customer WHERE country = 'DE'"},
    {"id": "unsafe", "question": "Remove every customer", "sql": "DELETE FROM customers"},
    {"id": "hopeless", "question": "Average shipping weight", "sql": "SELECT AVG(weight_kg) FROM shipments"},
]


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_clean_sqlite_pairs(tmp_path, sqlite_db):
    src = tmp_path / "pairs.jsonl"
    _write_jsonl(src, [r | {"db": sqlite_db.path.name} for r in PAIRS])  # db path relative to the input file
    (tmp_path / sqlite_db.path.name).exists() or (tmp_path / sqlite_db.path.name).symlink_to(sqlite_db.path)
    out = tmp_path / "clean" / "verdicts.jsonl"
    report = clean_file(src, out, workers=2, progress=False)
    got = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert got["good"]["verdict"] == "kept" and got["good"]["evidence"]["execution"]["row_count"] == 3
    assert got["typo_col"]["verdict"] == "repaired"
    assert "name" in got["typo_col"]["repaired_sql"].lower() and got["typo_col"]["evidence"]["safeql"]["edits"]
    assert got["typo_col"]["evidence"]["execution"]["error_class"] == "unknown_column"
    assert got["typo_table"]["verdict"] == "rejected"  # a reserved word as table name: no safe repair
    assert got["unsafe"]["verdict"] == "rejected" and got["unsafe"]["reason"].startswith("unsafe")
    assert got["hopeless"]["verdict"] == "rejected" and "unknown_relation" in got["hopeless"]["reason"]
    assert "not a spelling fix" in got["hopeless"]["reason"]  # shipments -> orders is not a repair
    assert got["typo_table2"]["verdict"] == "repaired" and "FROM customers" in got["typo_table2"]["repaired_sql"]
    assert report.summary["pairs"] == 6 and report.summary["kept"] == 1 and report.summary["repaired"] == 2
    assert (tmp_path / "clean" / "verdicts_summary.md").exists()
    # a rerun resumes: nothing is redone or duplicated
    clean_file(src, out, workers=2, progress=False)
    assert len(out.read_text().splitlines()) == 6


def test_clean_csv_on_postgres(tmp_path, pg_db):
    src = tmp_path / "pairs.csv"
    with src.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["question", "sql", "db"])
        w.writeheader()
        for r in [r for r in PAIRS if r["id"] != "typo_table"]:
            w.writerow({"question": r["question"], "sql": r["sql"], "db": pg_db.url})
    out = tmp_path / "v.jsonl"
    report = clean_file(src, out, workers=2, progress=False)
    verdicts = [json.loads(x)["verdict"] for x in out.read_text().splitlines()]
    assert sorted(verdicts) == ["kept", "rejected", "rejected", "repaired", "repaired"]
    assert report.summary["repaired"] == 2


def test_gate_refuses_repairs_that_change_meaning():
    from actsagent.clean import Cleaner
    from actsagent.safeql import Edit, RefineResult

    gate = Cleaner()._gate
    near = RefineResult(status="refined", original_sql="SELECT nme FROM customers",
                        refined_sql="SELECT name FROM customers",
                        edits=[Edit(operator="attribute", reason="r", before="nme", after="name", embed_distance=0.29)])
    far = near.model_copy(update={"edits": [Edit(operator="relation", reason="r", before="shipments", after="orders",
                                                 embed_distance=0.9)]})
    cut = RefineResult(status="refined", original_sql="SELECT COUNT(*) FROM order", refined_sql="SELECT COUNT(*)",
                       edits=[Edit(operator="attribute", reason="r", before="x", after="x", embed_distance=0.2)])
    joined = near.model_copy(update={"edits": [Edit(operator="join", reason="r", before="country",
                                                    after="singer.Country", embed_distance=0.0)]})
    moved = near.model_copy(update={"edits": [Edit(operator="attribute", reason="r", before="T2.Name",
                                                   after="T1.Name", embed_distance=0.0)]})
    assert gate(near.original_sql, near, "sqlite") is None
    assert "not a spelling fix" in gate(far.original_sql, far, "sqlite")
    typo_far = near.model_copy(update={"edits": [Edit(operator="attribute", reason="r", before="nme", after="name",
                                                      embed_distance=0.9)]})
    assert "changes meaning" in gate(typo_far.original_sql, typo_far, "sqlite")  # embedding distance too
    assert "drops a table" in gate(cut.original_sql, cut, "sqlite")
    assert "needs a judge" in gate(joined.original_sql, joined, "sqlite")
    assert "another table" in gate(moved.original_sql, moved, "sqlite")


def test_bad_input_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "sql": ""}\n')
    with pytest.raises(UserError, match="missing sql, db"):
        read_pairs(bad)
    with pytest.raises(UserError, match="not found"):
        read_pairs(tmp_path / "nope.jsonl")
    (tmp_path / "x.txt").write_text("x")
    with pytest.raises(UserError, match=".jsonl or .csv"):
        read_pairs(tmp_path / "x.txt")


def test_cli_reports_bad_input_with_non_zero_exit(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "actsagent"
    proc = subprocess.run([str(exe), "clean", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o.jsonl"),
                           "--no-llm"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "input file not found" in proc.stderr


def test_clean_with_a_scripted_llm_uses_the_agent_repair_and_judge(tmp_path, pg_db):
    from agent_scripts import scores

    from actsagent.llm import ScriptedChatModel

    def script(messages, role, response_model):
        name = response_model.__name__
        if name == "PlannerReply":
            return {"cursor": "r", "plan": {"id": "r", "tool": "run_sql",
                                            "children": [{"id": "g", "tool": "generate_sql"}]}}
        if name == "GeneratedSQL":
            return {"sql": "SELECT name FROM customers WHERE country = 'DE'"}
        return scores(9)

    src = tmp_path / "pairs.jsonl"
    _write_jsonl(src, [{"id": "de", "question": "Names of German customers",
                        "sql": "SELECT nme FROM customers WHERE country = 'DE'", "db": pg_db.url}])
    out = tmp_path / "v.jsonl"
    model = ScriptedChatModel(script)
    report = clean_file(src, out, workers=1, use_llm=True, model=model, progress=False)
    rec = json.loads(out.read_text().splitlines()[0])
    assert rec["verdict"] == "repaired" and rec["method"] == "agent", rec
    assert rec["repaired_sql"].startswith("SELECT name FROM customers")
    assert rec["evidence"]["usage"]["llm_calls"] >= 2 and model.calls
    assert report.summary["repaired"] == 1
