"""The real runner, agent and scorer on BIRD-CRITIC flash tasks, replaying exchanges a careful reader wrote.

``tests/fixtures/llm/relay_flash/`` holds the exchanges of four tasks (10, 16, 17, 18) recorded through the
llm-relay (one reader, model name ``relay``) for ``single_shot``, ``acts:tree`` and ``acts:linear`` on the first
seven tasks, by id, of the second measured random draw (seed 20261201), after the judge prompt's last change;
the tasks kept are those whose three systems replay fully (three of the seven took another path on replay), and
``expected.json`` holds the scorer's verdict and LLM calls each system got on each (on task 16 single_shot and
the tree fail, linear passes; on 18 the tree's edge-case pass no longer confirms its candidate, so a direct
rewrite is written beside it and agrees, one exchange recorded afterwards through the relay). Replaying
them with model requests forbidden shows that the prompts, JSON formats and parsing survive a real reader, that
the prompts are deterministic, and that the whole pipeline (copy, preprocess, agent, score) still reaches the
recorded verdicts. A change to a prompt or to any evidence a prompt quotes makes these tests fail with a
ReplayMiss: re-record with the relay (README, "Measuring with a real reader").
These are replay fixtures, not benchmark figures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "llm" / "relay_flash"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())
TASK_IDS = ["10", "16", "17", "18"]


def _replay_model(fixtures: Path):
    """The relay's model name on every role, answering only from the recordings in ``fixtures``."""
    from actsagent.llm import LLMConfig, RoleModels, get_chat_model, openai_model

    assert openai_model.ALLOW_MODEL_REQUESTS is False  # replay only: nothing may reach a model
    config = LLMConfig.from_env(
        models=RoleModels(planner="relay", tools="relay", judge="relay"),
        cache_mode="replay_only",
        cache_dir=fixtures,
        max_retries=0,
        api_key="none",
        base_url="http://127.0.0.1:9/v1",
    )
    return get_chat_model(config)


@pytest.fixture(scope="module")
def replay_model():
    return _replay_model(FIXTURES)


@pytest.mark.parametrize("system", ["single_shot", "acts:tree", "acts:linear"])
def test_recorded_runs_replay_to_the_recorded_verdicts(system, replay_model, pg_admin_url):
    from actsagent.birdcritic.runner import make_task_runner
    from actsagent.birdcritic.systems import make_system
    from actsagent.birdcritic.tasks import load_tasks

    tasks = load_tasks("flash", ids=TASK_IDS)
    assert [str(t.instance_id) for t in tasks] == TASK_IDS
    assert not any(hasattr(t, "sol_sql") or hasattr(t, "test_cases") for t in tasks)
    runner = make_task_runner("flash", make_system(system, "flash", model=replay_model), tasks)
    before = replay_model.ledger.totals()
    got = {}
    for task in tasks:
        rec = runner.run(task)
        assert rec["system_error"] is None and rec["status"] in ("passed", "failed"), rec
        got[str(task.instance_id)] = {"passed": rec["passed"], "llm_calls": rec["llm_calls"]}
    after = replay_model.ledger.totals()
    assert after.cached_calls - before.cached_calls == after.calls - before.calls  # all from the recordings
    assert got == EXPECTED[system]


ESCALATE = Path(__file__).parent / "fixtures" / "llm" / "relay_flash_escalate"


def test_escalate_runs_replay_to_their_verdicts_through_the_judged_rewrite_and_the_planner(pg_admin_url):
    """``acts:escalate`` on four tasks of the fourth measured draw (seed 20261203), recorded through the relay:
    on 1 and 14 the judge approved the direct rewrite (three calls: rewrite, checks, judge); on 22 and 114 it
    did not and the planner's tree took over (6 and 8 calls; on 114 a later candidate met the rewrite head to head,
    the rewrite having been refuted on the judge's reading alone)."""
    from actsagent.birdcritic.runner import make_task_runner
    from actsagent.birdcritic.systems import make_system
    from actsagent.birdcritic.tasks import load_tasks

    expected = json.loads((ESCALATE / "expected.json").read_text())["acts:escalate"]
    model = _replay_model(ESCALATE)
    tasks = load_tasks("flash", ids=list(expected))
    runner = make_task_runner("flash", make_system("acts:escalate", "flash", model=model), tasks)
    got = {}
    for task in tasks:
        rec = runner.run(task)
        assert rec["system_error"] is None, rec
        got[str(task.instance_id)] = {"passed": rec["passed"], "llm_calls": rec["llm_calls"]}
    totals = model.ledger.totals()
    assert totals.cached_calls == totals.calls  # all from the recordings
    assert got == expected


OUTVOTE = Path(__file__).parent / "fixtures" / "llm" / "relay_flash_outvote"


def _tree_records(fixtures: Path, ids: list[str]) -> list[dict]:
    """The judge benchmark's record of ``acts:tree`` on each task, replayed only from ``fixtures``."""
    from actsagent.birdcritic.judge_bench import run_task
    from actsagent.birdcritic.runner import make_task_runner
    from actsagent.birdcritic.systems import make_system
    from actsagent.birdcritic.tasks import load_tasks

    model = _replay_model(fixtures)
    tasks = load_tasks("flash", ids=ids)
    runner = make_task_runner("flash", make_system("acts:tree", "flash", model=model), tasks)
    records = [run_task(runner, task) for task in tasks]
    totals = model.ledger.totals()
    assert totals.cached_calls == totals.calls  # all from the recordings
    return records


def test_agreeing_candidates_outvote_the_lone_approval_on_two_recorded_flash_runs(pg_admin_url):
    """``acts:tree`` on tasks 110 and 135 of the seventh measured draw (seed 20261206), recorded through the relay.
    On each the judge doubted the first two candidates (n0, n1), which return the same results on every scenario, and
    approved a third (n2) that agrees with neither; the scorer passes n0 and n1 and fails n2. The agreeing pair
    outvotes the lone approval, and the labels show who was right."""
    for rec in _tree_records(OUTVOTE, ["110", "135"]):
        assert rec["error"] is None and rec["agent_status"] == "best_effort", rec
        by_node = {c["node"]: c for c in rec["candidates"]}
        assert [(n, c["passed"], c["label"]["passed"]) for n, c in by_node.items()] == [
            ("n0", False, True),
            ("n1", False, True),
            ("n2", True, False),
        ]
        assert rec["outvoted"] == "n2" and rec["final_node"] in ("n0", "n1") and rec["final"]["passed"]
        assert any("n2, approved on the judge's reading alone, agreed with neither" in n for n in rec["notes"])


REWRITE = Path(__file__).parent / "fixtures" / "llm" / "relay_flash_rewrite"


def test_the_direct_rewrite_stands_when_the_judge_approves_nothing_on_two_recorded_flash_runs(pg_admin_url):
    """``acts:tree`` on task 101 of the eighth measured draw (seed 20261207) and task 126 of the ninth (20261208),
    recorded through the relay. The judge approved no candidate; the best-scored refuted one fails the scorer, and
    the direct rewrite from the request, which now stands, passes."""
    for rec in _tree_records(REWRITE, ["101", "126"]):
        assert rec["error"] is None and rec["agent_status"] == "best_effort", rec
        cands = rec["candidates"]
        assert not any(c["passed"] for c in cands)  # the judge approved nothing
        top = max(cands, key=lambda c: c["semantic_score"])
        assert not top["label"]["passed"] and top["node"] != rec["final_node"]
        assert rec["final"]["passed"] and rec["outvoted"] is None
        assert f"the direct rewrite from the request ({rec['final_node']}) stands" in " ".join(rec["notes"])
