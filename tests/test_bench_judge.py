"""The judge benchmark end to end in replay mode, and its parts: the adapter to the agent's run, the draw, the figures.

``tests/fixtures/llm/bench_judge/`` holds the exchanges of a scripted judge that errs both ways on
flash tasks 1 and 10 (see ``tests/bench_judge_script.py``, which also re-records them). Replaying
them through ``evals/bench_judge.py`` with model requests forbidden runs the real agent, the real
scorer and the report; the test checks every label against what the scorer says of the hand-written
candidates and the figures against those labels.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from bench_judge_script import FIXTURES, JUDGE, SCORER_PASSES, SYSTEM, TASK_IDS
from pydantic import ValidationError
from test_birdcritic_runner import _root_with, _task_row

from actsagent.birdcritic.judge_bench import draw, gold_passing, judge_figures, judged_candidates, summarize
from actsagent.birdcritic.tasks import PublicTask
from actsagent.graphs.models import AgentRun
from actsagent.graphs.tree import PlanNode, PlanTree
from actsagent.tools import GenerateSqlOutput, RunSqlOutput

BENCH = Path(__file__).resolve().parents[1] / "evals" / "bench_judge.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_judge", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _replay(out: Path) -> int:
    return _bench().main(
        [
            "--system",
            SYSTEM,
            "--ids",
            ",".join(TASK_IDS),
            "--cache",
            "replay_only",
            "--cache-dir",
            str(FIXTURES),
            "--out",
            str(out),
            "--no-progress",
        ]
    )


def _lines(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "bench_judge.jsonl").read_text().splitlines()]


def test_replayed_run_labels_every_judged_candidate_and_computes_the_figures(tmp_path, pg_admin_url):
    from actsagent.llm import openai_model

    assert openai_model.ALLOW_MODEL_REQUESTS is False
    fixtures_before = sorted(p.name for p in FIXTURES.glob("*.json"))
    out = tmp_path / "judge"
    assert _replay(out) == 0
    assert sorted(p.name for p in FIXTURES.glob("*.json")) == fixtures_before  # replay writes nothing
    recs = {r["instance_id"]: r for r in _lines(out)}
    assert sorted(recs) == [1, 10]  # flash ids keep their int type
    for r in recs.values():
        assert r["status"] == "done" and r["system"] == SYSTEM and r["agent_status"] == "solved"
        assert r["llm_calls"] >= 6 and r["tokens"] > 0
        cands = r["candidates"]
        assert len(cands) == 3 and [c["order"] for c in cands] == sorted(c["order"] for c in cands)
        # the two readings' candidates, judged; then the second reading's direct rewrite, judged knowing it agrees
        assert [c["method"] for c in cands] == ["llm", "llm", "llm"] and cands[2]["sql"] == cands[1]["sql"]
        for c in cands:
            (sql,) = c["sql"]
            assert c["label"]["passed"] is SCORER_PASSES[sql], (sql, c["label"])  # the scorer's verdict
            assert c["passed"] is (JUDGE[sql] >= 6)  # the judge's verdict
            assert c["semantic_score"] == JUDGE[sql] and c["scores"]["joins"] == JUDGE[sql]
        (final,) = [c for c in cands if c["final"]]
        assert final["node"] == r["final_node"] and final["sql"] == r["final_sql"] and final["passed"]
        assert r["final"]["passed"] is SCORER_PASSES[final["sql"][0]] and r["final_judged"] is True
    assert not recs[1]["final"]["passed"] and recs[10]["final"]["passed"]
    assert recs[1]["final"]["status"] == "test_failed" and "ex_base" in recs[1]["final"]["message"]

    report = json.loads((out / "bench_judge.json").read_text())
    s = report["summary"]
    # 6 candidates: 4 accepted by the judge; the scorer passes 3; 2 accepted ones pass
    assert (s["candidates"], s["accepted"], s["scorer passed"], s["accepted and passed"]) == (6, 4, 3, 2)
    assert (s["accept rate %"], s["precision %"], s["recall %"]) == (66.67, 50.0, 66.67)
    assert (s["final answers passed"], s["final pass rate %"], s["final answers accepted by the judge"]) == (1, 50.0, 2)
    # task 1's final answer fails though one of its candidates passes: lost choosing, not writing
    assert s["tasks with a passing candidate"] == 2
    assert s["tasks lost choosing (a candidate passes, the final answer fails)"] == 1
    assert s["final answers chosen by outvoting"] == 0 and all(r["outvoted"] is None for r in recs.values())
    assert s["errors"] == 0 and s["llm calls / task"] == sum(r["llm_calls"] for r in recs.values()) / 2
    tables = {t["title"]: t for t in report["tables"]}
    by_cat = {row[0]: row for row in tables["By category"]["rows"]}
    # category, tasks, candidates, accepted, scorer passed, accept %, precision %, recall %, final passed, final %
    assert by_cat["Query"] == ["Query", 1, 3, 2, 1, 66.67, 0.0, 0.0, 0, 0.0]
    assert by_cat["Management"] == ["Management", 1, 3, 2, 2, 66.67, 100.0, 100.0, 1, 100.0]
    rows = {row[0]: row[1:] for row in tables["Judge against the scorer"]["rows"]}
    assert rows["final answers, approved"] == [2, 2, 1, 100.0, 50.0, 100.0]
    # no check confirmed anything: the agreeing pairs are corroborated, not verified, so nothing counts as verified
    assert rows["all, verified"] == [6, 0, 3, 0.0, "n/a", 0.0] and s["verified accepted"] == 0
    tiers = {row[0]: row[1:] for row in tables["How often each kind of verdict is right"]["rows"]}
    assert tiers == {
        "approved, corroborated by an agreeing candidate": [4, 2, 50.0],
        "refuted": [2, 1, 50.0],
    }
    assert all(c["corroborated"] and not c["confirmed"] for r in recs.values() for c in r["candidates"] if c["passed"])
    assert "precision" in (out / "bench_judge.md").read_text()

    # resumable: a rerun does nothing; a task whose system failed is run again
    assert _replay(out) == 0 and len(_lines(out)) == 2
    with (out / "bench_judge.jsonl").open("a") as f:
        f.write(json.dumps({"instance_id": 10, "system": SYSTEM, "status": "error", "error": "provider down"}) + "\n")
        f.write(json.dumps({"instance_id": 1, "system": SYSTEM, "status": "done", "candidates": "?"}) + "\n")
    assert _replay(out) == 0
    lines = _lines(out)
    assert [r["instance_id"] for r in lines[-2:]] == [1, 10] and all(r["status"] == "done" for r in lines[-2:])
    assert json.loads((out / "bench_judge.json").read_text())["summary"]["precision %"] == 50.0


def test_a_log_of_another_system_and_bad_options_are_refused(tmp_path, capsys):
    out = tmp_path / "judge"
    out.mkdir()
    (out / "bench_judge.jsonl").write_text(
        json.dumps({"instance_id": 1, "system": "issue_sql", "status": "done"}) + "\n"
    )
    assert _replay(out) == 1
    assert "holds results of issue_sql" in capsys.readouterr().err
    bench = _bench()
    assert bench.main(["--n", "0", "--out", str(tmp_path / "x")]) == 2
    assert bench.main(["--ids", "99999", "--system", "issue_sql", "--out", str(tmp_path / "y")]) == 1
    assert "no such task in flash: 99999" in capsys.readouterr().err


def _node(nid: str, order: int | None, verdict: dict | None, sql, tool: str = "generate_sql") -> PlanNode:
    ran = RunSqlOutput(ok=True, statements=[])
    output = GenerateSqlOutput(sql=sql, source="llm", execution=ran) if sql is not None else None
    return PlanNode(id=nid, tool=tool, order=order, status="done", verdict=verdict, output=output)


def test_the_adapter_reads_verdicts_from_any_node_of_the_tree():
    verdict = {
        "passed": False,
        "method": "llm",
        "semantic_score": 4.2,
        "entailment_score": 3.0,
        "scores": {
            "columns": {"score": 4, "reason": "x"},
            "granularity": {"score": 5},
            "joins": {"score": 6},
            "logic": {"score": 7},
            "entailment": {"score": 3},
            "issues": ["not a dimension"],
            "verdict": "wrong",
        },
        "reasons": ["columns: x"],
    }
    tree = PlanTree(
        nodes={
            "n0": _node("n0", 1, None, None, tool="detect_ambiguities"),
            "n2": _node(
                "n2", 3, {"passed": True, "method": "execution_only"}, ["UPDATE t SET a = 1", "SELECT a FROM t"]
            ),
            "n1": _node("n1", 2, verdict, "SELECT 1").model_copy(update={"hypothesis": "per day"}),
            "n4": PlanNode(
                id="n4",
                tool="run_sql",
                order=5,
                status="done",
                input={"sql": "SELECT 3"},
                verdict={"passed": True, "method": "checks"},
            ),  # another verifying node: SQL from its input
        },
        root="n0",
    )
    with pytest.raises(ValidationError):  # not a verdict: a node cannot carry it
        _node("n3", 4, {"passed": "yes"}, "SELECT 2")
    run = AgentRun(status="solved", tree=tree, final_node="n2")
    cands = judged_candidates(run)
    assert [c.node for c in cands] == ["n1", "n2", "n4"]
    first, second, third = cands
    assert first.sql == ["SELECT 1"] and not first.passed and first.semantic_score == 4.2
    assert first.scores == {"columns": 4.0, "granularity": 5.0, "joins": 6.0, "logic": 7.0, "entailment": 3.0}
    assert first.reasons == ["columns: x"] and not first.final
    assert (first.strategy, first.hypothesis) == ("minimal_edit", "per day")  # how it was written, under what reading
    assert second.sql == ["UPDATE t SET a = 1", "SELECT a FROM t"] and second.passed and second.final
    assert second.method == "execution_only" and second.semantic_score is None
    assert (
        third.sql == ["SELECT 3"] and third.method == "checks" and third.strategy is None
    )  # not a generate_sql output
    assert judged_candidates(object()) == []  # not the agent: nothing judged


def test_figures_are_undefined_not_zero_without_a_denominator():
    def cand(judged: bool, passes: bool) -> dict:
        return {"passed": judged, "label": {"passed": passes}}

    f = judge_figures([cand(False, False), cand(False, True)])
    assert f["accept_rate_pct"] == 0.0 and f["precision_pct"] is None and f["recall_pct"] == 0.0
    f = judge_figures([cand(True, True), cand(True, False), cand(True, True), cand(False, True)])
    assert (f["precision_pct"], f["recall_pct"], f["rejected_but_passed"]) == (66.67, 66.67, 1)
    assert judge_figures([])["accept_rate_pct"] is None


def _task(i: int) -> PublicTask:
    return PublicTask(instance_id=str(i), db_id="x", query="q", issue_sql=["SELECT 1"], category="Query")


def test_the_draw_takes_only_eligible_tasks_and_is_seeded():
    tasks = [_task(i) for i in range(30)]
    eligible = {str(i) for i in range(0, 30, 2)}
    a, b = draw(tasks, eligible, 5, seed=7), draw(tasks, eligible, 5, seed=7)
    assert [t.instance_id for t in a] == [t.instance_id for t in b] and len(a) == 5
    assert {t.instance_id for t in a} <= eligible
    assert [t.instance_id for t in a] == sorted((t.instance_id for t in a), key=int)  # file order
    assert {t.instance_id for t in draw(tasks, eligible, 5, seed=8)} != {t.instance_id for t in a}
    assert len(draw(tasks, eligible, None, seed=0)) == 15 and len(draw(tasks, eligible, 99, seed=0)) == 15


def test_gold_passing_finds_the_tasks_whose_gold_passes(tmp_path):
    rows = [_task_row(3), _task_row(4, sol_sql=["SELECT no_such_column FROM customers"]), _task_row(5)]
    root = _root_with(tmp_path, rows)
    assert gold_passing("flash", tmp_path / "gold", root=root, workers=1, progress=False) == {"3", "5"}


def test_the_summary_counts_final_answers_chosen_by_outvoting_and_who_was_right():
    def cand(node: str, judged: bool, passes: bool, final: bool = False) -> dict:
        return {"node": node, "passed": judged, "final": final, "method": "llm", "label": {"passed": passes}}

    def task(i: int, outvoted: str | None, cands: list[dict], alternatives: list[str] | None = None) -> dict:
        final = next(c for c in cands if c["final"])
        return {
            "instance_id": i, "category": "Query", "status": "done", "agent_status": "best_effort",
            "outvoted": outvoted, "candidates": cands, "final": final["label"], "final_judged": final["passed"],
            "alternatives": alternatives or [],
            "llm_calls": 5, "tokens": 100, "total_s": 1.0,
        }  # fmt: skip

    records = [
        task(1, "n2", [cand("n0", False, True, final=True), cand("n1", False, True), cand("n2", True, False)]),
        task(2, "n2", [cand("n0", False, False, final=True), cand("n1", False, False), cand("n2", True, True)], ["n2"]),
        task(3, None, [cand("n0", True, True, final=True)]),
        task(4, None, [cand("n0", True, True, final=True), cand("n1", False, False)], ["n1"]),
    ]
    s = summarize(records, name="t", config={}).summary
    assert s["final answers chosen by outvoting"] == 2
    assert s["outvoting: final answer passes"] == 1 and s["outvoting: the replaced choice passes"] == 1
    # the runs named other readings twice: once the answer failed and the named reading passes, once the answer passed
    assert s["answers with other readings named"] == 2
    assert s["other readings named: the answer fails and a named reading passes"] == 1
    assert s["other readings named: the answer passes"] == 1
