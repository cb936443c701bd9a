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
    near = RefineResult(
        status="refined",
        original_sql="SELECT nme FROM customers",
        refined_sql="SELECT name FROM customers",
        edits=[Edit(operator="attribute", reason="r", before="nme", after="name", embed_distance=0.29)],
    )
    far = near.model_copy(
        update={
            "edits": [Edit(operator="relation", reason="r", before="shipments", after="orders", embed_distance=0.9)]
        }
    )
    cut = RefineResult(
        status="refined",
        original_sql="SELECT COUNT(*) FROM order",
        refined_sql="SELECT COUNT(*)",
        edits=[Edit(operator="attribute", reason="r", before="x", after="x", embed_distance=0.2)],
    )
    joined = near.model_copy(
        update={
            "edits": [Edit(operator="join", reason="r", before="country", after="singer.Country", embed_distance=0.0)]
        }
    )
    moved = near.model_copy(
        update={
            "edits": [Edit(operator="attribute", reason="r", before="T2.Name", after="T1.Name", embed_distance=0.0)]
        }
    )
    assert gate(near.original_sql, near, "sqlite") is None
    assert "not a spelling fix" in gate(far.original_sql, far, "sqlite")
    typo_far = near.model_copy(
        update={"edits": [Edit(operator="attribute", reason="r", before="nme", after="name", embed_distance=0.9)]}
    )
    assert "changes meaning" in gate(typo_far.original_sql, typo_far, "sqlite")  # embedding distance too
    assert "drops a table" in gate(cut.original_sql, cut, "sqlite")
    assert "needs a judge" in gate(joined.original_sql, joined, "sqlite")
    assert "another table" in gate(moved.original_sql, moved, "sqlite")


def test_bad_input_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "sql": ""}\n')
    (pair,) = read_pairs(bad)  # a row's problem rejects that pair alone
    assert pair.problem == "line 1: missing sql, db"
    with pytest.raises(UserError, match="not found"):
        read_pairs(tmp_path / "nope.jsonl")
    with pytest.raises(UserError, match="is a folder"):
        read_pairs(tmp_path)
    (tmp_path / "x.txt").write_text("x")
    with pytest.raises(UserError, match=r"\.jsonl or \.csv"):
        read_pairs(tmp_path / "x.txt")


def _sqlite_bytes(tmp_path) -> bytes:
    import sqlite3

    path = tmp_path / "some.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    return path.read_bytes()


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("db.jsonl", "sqlite", "not a JSONL file of pairs (binary data)"),
        ("db.csv", "sqlite", "not a CSV file of pairs (binary data)"),
        ("latin1.jsonl", "caf\xe9\n".encode("latin-1"), "not a JSONL file of pairs (line 1: not UTF-8 text (byte 0xe9"),
        ("table.jsonl", b"question,sql\nq,SELECT 1\n", "not a JSONL file of pairs (line 1: not JSON"),
        ("arrays.jsonl", b"[1, 2]\n[3]\n", "not a JSONL file of pairs (line 1: a list, not a JSON object)"),
        ("other.csv", b"name,age\nAda,36\n", "the header has no question or sql column; found 'name', 'age'"),
        ("empty.jsonl", b"\n\n", "no pairs in the file"),
        ("empty.csv", b"question,sql,db\n", "no pairs in the file"),
        (
            "dup.jsonl",
            b'{"id": 1, "question": "q", "sql": "s", "db": "d"}\n{"id": "1", "question": "q", "sql": "s"}\n',
            "ids are not unique ('1')",
        ),
    ],
)
def test_files_that_are_not_pairs_stop_with_one_line(tmp_path, name, content, message):
    from actsagent.cli import app
    from actsagent.cli._common import run_app

    path = tmp_path / name
    path.write_bytes(_sqlite_bytes(tmp_path) if content == "sqlite" else content)
    with pytest.raises(UserError) as e:
        read_pairs(path)
    assert message in str(e.value)
    assert run_app(app, ["clean", str(path), "--out", str(tmp_path / "v.jsonl"), "--no-llm"]) == 1
    assert not (tmp_path / "v.jsonl").exists()


def test_bad_rows_are_rejected_one_by_one_and_the_batch_resumes(tmp_path, sqlite_db):
    """Wrong types, bytes that are not UTF-8, lines that are not objects, a corrupt or missing database: each
    rejects its own pair with a reason; the pairs after it are still cleaned, and a rerun redoes nothing."""
    (tmp_path / "corrupt.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 16)
    (tmp_path / "cut.sqlite").write_bytes(sqlite_db.path.read_bytes()[:100])
    good = {"question": "Names of all customers", "sql": "SELECT name FROM customers", "db": sqlite_db.path.name}
    rows = [
        good | {"id": "first"},  # the byte order mark before it is not part of its first key
        good | {"id": "q_number", "question": 42},
        good | {"id": "sql_list", "sql": ["SELECT 1"]},
        good | {"id": "db_object", "db": {"path": "x"}},
        good | {"id": "sql_null", "sql": None},
        good | {"id": "q_bool", "question": True},
        good | {"id": "corrupt", "db": "corrupt.sqlite"},
        good | {"id": "cut", "db": "cut.sqlite"},
        good | {"id": "missing_db", "db": "not-there.sqlite"},
        good | {"id": "surrogate", "sql": "SELECT name FROM customers WHERE name = '\udc80'"},
        good | {"id": "nul_db", "db": "shop\x00.sqlite"},
        good | {"id": ["not", "an", "id"]},
        good | {"id": "after"},
    ]
    src = tmp_path / "pairs.jsonl"
    with src.open("wb") as f:
        f.write(b"\xef\xbb\xbf")
        f.write(b"".join(json.dumps(r).encode() + b"\n" for r in rows))
        f.write(b'{"id": "latin1", "question": "caf\xe9", "sql": "SELECT 1", "db": "x"}\n')
        f.write(b"not json at all\n")
        f.write(b"[" * 100_000 + b"\n")
        f.write(b'"just a string"\n')
    out = tmp_path / "out" / "v.jsonl"
    report = clean_file(src, out, workers=2, progress=False)
    got = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert got["first"]["verdict"] == "kept" and got["after"]["verdict"] == "kept"
    reasons = {k: r["reason"] for k, r in got.items() if r["verdict"] == "rejected"}
    assert reasons == {
        "q_number": "bad input: line 2: question is a number, not text",
        "sql_list": "bad input: line 3: sql is a list, not text",
        "db_object": "bad input: line 4: db is an object, not text",
        "sql_null": "bad input: line 5: missing sql",
        "q_bool": "bad input: line 6: question is a boolean, not text",
        "corrupt": f"database unavailable: cannot open SQLite file {tmp_path / 'corrupt.sqlite'}: file is not a database",
        "cut": f"database unavailable: cannot open SQLite file {tmp_path / 'cut.sqlite'}: "
        "database disk image is malformed",
        "missing_db": "database unavailable: SQLite database not found: not-there.sqlite",
        "surrogate": "bad input: line 10: sql is not UTF-8 text",
        "nul_db": "bad input: line 11: db has control characters: not a path, URL or database name",
        "12": "bad input: line 12: id is a list, not text or a number",
        "14": "bad input: line 14: not UTF-8 text (byte 0xe9 at column 34)",
        "15": "bad input: line 15: not JSON (Expecting value at column 1)",
        "16": "bad input: line 16: not JSON (nested too deeply)",
        "17": "bad input: line 17: a string, not a JSON object",
    }
    assert got["sql_list"]["original_sql"] == '["SELECT 1"]'  # the row as given, for the person fixing it
    assert report.summary["pairs"] == 17 and report.summary["kept"] == 2
    before = out.read_bytes()
    again = clean_file(src, out, workers=2, progress=False)
    assert out.read_bytes() == before and again.summary == report.summary


def test_csv_with_a_bom_long_fields_and_a_bad_byte(tmp_path, sqlite_db):
    long_sql = "SELECT name FROM customers WHERE name <> '" + "x" * 200_000 + "'"  # over csv's 128 KB default
    long_question = "Which customers " + "really " * 30_000 + "exist?"
    src = tmp_path / "pairs.csv"
    with src.open("w", newline="", encoding="utf-8-sig") as f:
        w = csv.writer(f)
        w.writerow(["question", "sql", "db"])
        w.writerow(["Everyone but x", long_sql, str(sqlite_db.path)])
        w.writerow([long_question, "SELECT name FROM customers", str(sqlite_db.path)])
    with src.open("ab") as f:
        f.write(b"Caf\xe9 names,SELECT name FROM customers," + str(sqlite_db.path).encode() + b"\n")
        f.write(b"No SQL,," + str(sqlite_db.path).encode() + b"\n")
    out = tmp_path / "v.jsonl"
    clean_file(src, out, workers=1, progress=False)
    got = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert got["1"]["original_sql"] == long_sql and got["1"]["reason"].startswith("unsafe: the SQL is 200043 char")
    assert got["2"]["verdict"] == "kept" and got["2"]["question"] == long_question
    assert got["3"]["reason"] == "bad input: line 4: question is not UTF-8 text"
    assert got["3"]["question"] == "Caf\\xe9 names"  # the undecodable byte spelled out, the output stays UTF-8
    assert got["4"]["reason"] == "bad input: line 5: missing sql"


def test_output_that_is_not_a_verdicts_file_is_left_alone(tmp_path, sqlite_db):
    src = tmp_path / "pairs.jsonl"
    _write_jsonl(src, [{"question": "q", "sql": "SELECT 1", "db": str(sqlite_db.path)}])
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"todo": "keep me"}\n')
    for out, message in ((src, "is the input file"), (tmp_path, "is a folder"), (notes, "holds something other")):
        with pytest.raises(UserError, match=message):
            clean_file(src, out, progress=False)
    assert notes.read_text() == '{"todo": "keep me"}\n'
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="cannot write the verdicts"):
        clean_file(src, tmp_path / "file" / "v.jsonl", progress=False)


def test_cli_reports_bad_input_with_non_zero_exit(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "actsagent"
    proc = subprocess.run(
        [str(exe), "clean", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o.jsonl"), "--no-llm"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "input file not found" in proc.stderr


def test_clean_with_a_scripted_llm_uses_the_agent_repair_and_judge(tmp_path, pg_db):
    from agent_scripts import scores

    from actsagent.llm import ScriptedChatModel

    def script(messages, role, response_model):
        name = response_model.__name__
        if name == "PlannerReply":
            return {
                "cursor": "r",
                "plan": {"id": "r", "tool": "run_sql", "children": [{"id": "g", "tool": "generate_sql"}]},
            }
        if name == "GeneratedSQL":
            return {"sql": "SELECT name FROM customers WHERE country = 'DE'"}
        return scores(9)

    src = tmp_path / "pairs.jsonl"
    _write_jsonl(
        src,
        [
            {
                "id": "de",
                "question": "Names of German customers",
                "sql": "SELECT nme FROM customers WHERE country = 'DE'",
                "db": pg_db.url,
            }
        ],
    )
    out = tmp_path / "v.jsonl"
    model = ScriptedChatModel(script)
    report = clean_file(src, out, workers=1, use_llm=True, model=model, progress=False)
    rec = json.loads(out.read_text().splitlines()[0])
    assert rec["verdict"] == "repaired" and rec["method"] == "agent", rec
    assert rec["repaired_sql"].startswith("SELECT name FROM customers")
    assert rec["evidence"]["usage"]["llm_calls"] >= 2 and model.calls
    assert report.summary["repaired"] == 1


def test_a_model_that_is_down_stops_the_batch_and_a_rerun_resumes(tmp_path, sqlite_db):
    """Unlike one pair's problem, a failing LLM would fail every later pair alike: the run stops, nothing is
    recorded for the unfinished pairs, and the next run does them."""
    from actsagent.errors import LLMUnavailable
    from actsagent.llm import ScriptedChatModel

    def down(messages, role, response_model):
        raise LLMUnavailable("the provider failed after 3 retries")

    src = tmp_path / "pairs.jsonl"
    _write_jsonl(
        src,
        [
            {
                "id": "a",
                "question": "Names of all customers",
                "sql": "SELECT nme FROM customers",
                "db": str(sqlite_db.path),
            }
        ],
    )
    out = tmp_path / "v.jsonl"
    with pytest.raises(LLMUnavailable, match="after 3 retries"):
        clean_file(src, out, workers=1, use_llm=True, model=ScriptedChatModel(down), progress=False)
    assert not out.exists() or out.read_text() == ""
    report = clean_file(src, out, workers=1, use_llm=False, progress=False)
    assert report.summary["repaired"] == 1
