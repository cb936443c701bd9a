"""The BIRD-CRITIC runner end to end on the real embedded PostgreSQL and the sample databases."""

from __future__ import annotations

import json
import os
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from pydantic import ValidationError

from actsagent.birdcritic.runner import COPY_PREFIX, run_benchmark
from actsagent.birdcritic.systems import IssueSqlSystem, SystemOutput, make_system
from actsagent.birdcritic.tasks import PublicTask, data_dir
from actsagent.db import admin
from actsagent.db.postgres import PostgresDatabase
from actsagent.errors import UserError

DATA = data_dir()


def _checks() -> dict[str, dict]:
    with (DATA / "checks/sample_db_check_flash_exp_200.jsonl").open() as f:
        return {str(r["instance_id"]): r for r in map(json.loads, f)}


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _root_with(tmp_path: Path, rows: list[dict]) -> Path:
    """A data folder with our own tasks on the real sample databases."""
    root = tmp_path / "bc"
    (root / "tasks").mkdir(parents=True)
    (root / "databases").mkdir()
    (root / "databases" / "sample_pg").symlink_to(DATA / "databases" / "sample_pg")
    with (root / "tasks" / "flash_exp_200.jsonl").open("w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return root


def _task_row(i: int, **kw) -> dict:
    row = {
        "dialect": "PostgreSQL",
        "version": "14.12",
        "instance_id": i,
        "db_id": "debit_card_specializing",
        "query": f"How many customers have an id above {i}?",
        "issue_sql": [f"SELECT count(*) FROM customer WHERE customerid > {i}"],
        "preprocess_sql": [],
        "clean_up_sql": [],
        "category": "Query",
        "efficiency": False,
        "sol_sql": [f"SELECT count(*) FROM customers WHERE customerid > {i}"],
        "test_cases": [
            "def test_case(pred_sqls, sol_sqls, db_name, conn):\n"
            "    assert ex_base(pred_sqls, sol_sqls, db_name, conn) == 1\n"
        ],
    }
    return row | kw


def test_issue_sql_on_flash_tasks_matches_the_reference_run(tmp_path):
    ids = ["0", "1", "2", "6", "10"]
    report = run_benchmark("flash", IssueSqlSystem(), tmp_path / "out", ids=ids, workers=2, progress=False)
    raw = _records(tmp_path / "out")
    assert all(type(r["instance_id"]) is int for r in raw)  # the flash file's id type, not text
    recs = {str(r["instance_id"]): r for r in raw}
    assert sorted(recs) == sorted(ids)
    checks = _checks()
    for i in ids:
        assert recs[i]["passed"] == checks[i]["issue_sql_passes_tests"], (i, recs[i].get("messages"))
    assert {i for i in ids if recs[i]["passed"]} == {"6", "10"}
    assert recs["2"]["score_status"] == "pred_error" and "syntax error" in recs["2"]["messages"][0]
    assert report.summary["passed"] == 2 and report.summary["tasks"] == 5
    for name in ("summary.json", "summary.md", "accuracy_by_category.png", "time_per_task.png", "tokens_per_task.png"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    assert "Accuracy by category" in (tmp_path / "out" / "summary.md").read_text()


class ScriptedFixes:
    """Fixed SQL per task; checks what it is given on the way."""

    name = "scripted"

    def __init__(self) -> None:
        self.seen: list[tuple[str, bool, str]] = []

    def solve(self, task: PublicTask, db: PostgresDatabase, schema_text: str) -> SystemOutput:
        # preprocess ran in the system's copy (task 10 adds the column `attend`)
        probe = db.execute("SELECT attend FROM attendance LIMIT 1") if task.instance_id == "10" else None
        self.seen.append((task.instance_id, probe is None or probe.ok, db.name))
        assert db.writable and "Table" in schema_text
        fixes = {
            "1": ["SELECT to_char(CreationDate, 'FMHH24:MI:SS') FROM comments;"],
            "10": [
                "INSERT INTO attendance (link_to_event, link_to_member, attend) VALUES "
                "('recEVTik3MlqbvLFi', 'rec280Sk7o31iG0Tx', 1) ON CONFLICT (link_to_event, link_to_member) "
                "DO UPDATE SET attend = 1"
            ],
        }
        return SystemOutput(pred_sqls=fixes.get(task.instance_id, list(task.issue_sql)), llm_calls=1, tokens=10)


def test_resume_accepts_ids_written_as_text_by_earlier_runs(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    old = {
        "instance_id": "6",
        "db_id": "student_club",
        "category": "Query",
        "system": "issue_sql",
        "status": "passed",
        "passed": True,
        "total_s": 0.0,
    }
    (out / "results.jsonl").write_text(json.dumps(old) + "\n")
    report = run_benchmark("flash", IssueSqlSystem(), out, ids=["6", "10"], workers=1, progress=False)
    recs = _records(out)
    assert [r["instance_id"] for r in recs] == ["6", 10]  # task 6 was not run again; task 10 was, with an int id
    assert report.summary["tasks"] == 2 and report.summary["passed"] == 2


def test_scripted_system_end_to_end(tmp_path, pg_admin_url):
    system = ScriptedFixes()
    report = run_benchmark("flash", system, tmp_path / "out", ids=["1", "10", "4"], workers=2, progress=False)
    recs = {str(r["instance_id"]): r for r in _records(tmp_path / "out")}
    assert recs["1"]["passed"] and recs["10"]["passed"] and not recs["4"]["passed"]
    assert all(ok for _, ok, _ in system.seen)
    assert report.summary["llm_calls_total"] == 3 and report.summary["tokens_per_task"] == 10
    # every copy handed to the system was dropped
    with psycopg.connect(pg_admin_url) as conn:
        left = {r[0] for r in conn.execute("SELECT datname FROM pg_database")}
    assert not {name for _, _, name in system.seen} & left


CANARY = "CANARY_7f3a91"


class Spy:
    name = "spy"

    def __init__(self) -> None:
        self.received: list[str] = []

    def solve(self, task, db, schema_text):
        assert isinstance(task, PublicTask)
        assert not hasattr(task, "sol_sql") and not hasattr(task, "test_cases")
        self.received += [task.model_dump_json(), repr(task), schema_text, repr(vars(task)), repr(db.__dict__)]
        # nothing in the database copy carries the answers either
        res = db.execute("SELECT string_agg(coalesce(description, ''), ' ') FROM pg_description")
        self.received.append(repr(res.rows))
        return SystemOutput(pred_sqls=[f"SELECT count(*) FROM customers WHERE customerid > {task.instance_id}"])


def test_runner_cannot_leak_answers_to_the_system(tmp_path):
    rows = [
        _task_row(
            i,
            sol_sql=[f"SELECT count(*) /* {CANARY} */ FROM customers WHERE customerid > {i}"],
            test_cases=[
                f"# {CANARY}\ndef test_case(pred_sqls, sol_sqls, db_name, conn):\n"
                f"    assert '{CANARY}' in sol_sqls[0]\n"
                "    assert ex_base(pred_sqls, sol_sqls, db_name, conn) == 1\n"
            ],
        )
        for i in (3, 4)
    ]
    spy = Spy()
    run_benchmark("flash", spy, tmp_path / "out", workers=1, progress=False, root=_root_with(tmp_path, rows))
    assert spy.received and not any(CANARY in text for text in spy.received)
    recs = _records(tmp_path / "out")
    assert [r["passed"] for r in recs] == [True, True]  # the scorer did use the hidden keys
    assert not any(CANARY in json.dumps(r) for r in recs if r["system"] == "spy")
    with pytest.raises(ValidationError):
        PublicTask(**_task_row(1) | {"instance_id": "1"})  # answer fields are rejected, not silently kept
    with pytest.raises(UserError):
        make_system("gold", "flash")  # the reference replay is refused as a system under test


_CHILD = """
import sys, threading
from pathlib import Path
from actsagent.birdcritic.runner import run_benchmark
from actsagent.birdcritic.systems import SystemOutput

class Slow:
    \"\"\"Fixes the table name. With ``finish``, every task after the first ``finish`` it is given waits in its
    database copy until the process is killed, so the kill comes with copies in flight and never after the
    last task.\"\"\"

    name = "slow"

    def __init__(self, calls, finish=None):
        self.calls, self.finish, self.uses_database = calls, finish, finish is not None
        self._lock, self._n = threading.Lock(), 0

    def solve(self, task, db, schema_text):
        with self._lock:
            self._n += 1
            hold = self.finish is not None and self._n > self.finish
            with open(self.calls, "a") as f:
                f.write(task.instance_id + "\\n")
        if hold:
            threading.Event().wait()
        return SystemOutput(pred_sqls=[s.replace("customer ", "customers ") for s in task.issue_sql])

if __name__ == "__main__":
    run_benchmark("flash", Slow(sys.argv[3], int(sys.argv[4])), sys.argv[2], workers=2, progress=False,
                  root=Path(sys.argv[1]))
"""


def _copies_of(admin_url: str, pid: int) -> list[str]:
    """The task copies process ``pid`` made (its pid is in their names) that are still on the server."""
    return admin.databases(admin_url, like=f"{COPY_PREFIX}{pid}_".replace("_", r"\_") + "%")


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_killed_run_resumes_without_losing_or_repeating(tmp_path, pg_admin_url):
    root = _root_with(tmp_path, [_task_row(i) for i in range(10)])
    out = tmp_path / "out"
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    first_calls, second_calls = tmp_path / "calls1.txt", tmp_path / "calls2.txt"
    # three tasks finish; the two workers' next tasks then wait in their copies: killed with those in flight
    child = subprocess.Popen(
        [sys.executable, str(script), str(root), str(out), str(first_calls), "3"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 120
    results = out / "results.jsonl"
    while time.time() < deadline and (len(_lines(results)) < 3 or len(_lines(first_calls)) < 5):
        assert child.poll() is None, child.stderr.read().decode()[-2000:]
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    done_before = [str(json.loads(x)["instance_id"]) for x in results.read_text().splitlines() if x.endswith("}")]
    assert 3 <= len(done_before) < 10
    assert len(_copies_of(pg_admin_url, child.pid)) == 2  # the two waiting tasks' copies, left by the kill
    # the rerun, in this process: the same system, nothing waits
    run_benchmark(
        "flash", runpy.run_path(str(script))["Slow"](str(second_calls)), out, workers=2, progress=False, root=root
    )
    ids = [r["instance_id"] for r in _records(out)]
    assert sorted(ids) == list(range(10))  # every task exactly once, with the task file's (int) ids
    resumed = second_calls.read_text().split()
    assert not set(resumed) & set(done_before)  # finished tasks were not redone
    assert sorted(resumed + done_before, key=int) == [str(i) for i in range(10)]
    assert all(r["passed"] for r in _records(out))
    assert _copies_of(pg_admin_url, child.pid) == []  # copies left by the killed process were dropped on resume


def test_agent_adapter_with_a_scripted_model(tmp_path):
    from actsagent.birdcritic.systems import AgentSystem
    from actsagent.llm import ScriptedChatModel

    model = ScriptedChatModel([{"sql": "SELECT to_char(CreationDate, 'FMHH24:MI:SS') FROM comments"}])
    system = AgentSystem("single_shot", model=model)
    seen: list = []
    system.on_event = lambda task_id, ev: seen.append((task_id, ev.type))
    report = run_benchmark("flash", system, tmp_path / "out", ids=["1"], workers=1, progress=False)
    rec = _records(tmp_path / "out")[0]
    assert rec["passed"] and rec["llm_calls"] == 1 and report.summary["llm_calls_total"] == 1
    assert seen[0] == ("1", "node_start") and seen[-1] == ("1", "final")  # the agent's typed events, by task
    prompt = " ".join(str(m) for c in model.calls for m in c.messages)
    assert "CreationDate::time" in prompt  # the issue SQL and text reached the model...
    from actsagent.birdcritic.scorer import load_scoring_keys

    gold = load_scoring_keys("flash")["1"].sol_sql[0]
    assert gold not in prompt and "test_case" not in prompt  # ...and never the answers
