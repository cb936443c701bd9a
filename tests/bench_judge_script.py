"""A scripted model for the judge benchmark's replay fixture, and the command that records it.

The model plays a judge that errs both ways, on two flash tasks, so the benchmark's labels and
figures have something to find. On each task the check writer finds nothing checkable and the planner asks for two readings;
the candidate of the first reading is judged first, and after a refutation the tree rolls back to
the second, whose direct rewrite (written the same way) confirms it by returning the same rows:

- task 1 (Query): the first candidate is a right fix (``to_char``), which the judge refutes; the
  second is the issue SQL again, which it accepts and returns (a wrong final answer);
- task 10 (Management): the first candidate only reads the table, and is refuted; the second is
  a right fix (an upsert), which it accepts.

The fixes are written here by hand; nothing comes from the answer fields. Record (no LLM needed):

    rm -r tests/fixtures/llm/bench_judge
    PYTHONPATH=src python tests/bench_judge_script.py

The exchanges go through the LLM response cache (model name ``scripted``) into
``tests/fixtures/llm/bench_judge/``; ``tests/test_bench_judge.py`` replays them through
``evals/bench_judge.py --cache replay_only``. A prompt change makes that test fail with a replay
miss: re-record with the command above.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "llm" / "bench_judge"
MODEL = "scripted"
SYSTEM = f"acts:tree@{MODEL}"
TASK_IDS = ["1", "10"]

UPSERT = (
    "INSERT INTO attendance (link_to_event, link_to_member, attend) VALUES ('recEVTik3MlqbvLFi', "
    "'rec280Sk7o31iG0Tx', 1) ON CONFLICT (link_to_event, link_to_member) DO UPDATE SET attend = 1"
)
# marker in the issue text -> (first reading's candidate, second reading's candidate)
CANDIDATES = {
    "'hh:mm:ss' part": (
        "SELECT to_char(CreationDate, 'FMHH24:MI:SS') FROM comments",
        "SELECT CreationDate::time FROM comments",
    ),
    "a member can attend multiple events": ("SELECT * FROM attendance", UPSERT),
}
# what the scripted judge thinks of each candidate (1-10 on every dimension)
JUDGE = {
    CANDIDATES["'hh:mm:ss' part"][0]: 3,
    CANDIDATES["'hh:mm:ss' part"][1]: 9,
    "SELECT * FROM attendance": 3,
    UPSERT: 9,
}
# what the scorer says, for the test to check the benchmark's labels against
SCORER_PASSES = {
    CANDIDATES["'hh:mm:ss' part"][0]: True,
    CANDIDATES["'hh:mm:ss' part"][1]: False,
    "SELECT * FROM attendance": False,
    UPSERT: True,
}


def script(messages: list[dict], role: str, response_model: Any) -> Any:
    sys.path.insert(0, str(HERE))
    from agent_scripts import options_of, phase_of, scores, user_text

    name = response_model.__name__ if response_model else ""
    text = user_text(messages)
    task = next((v for k, v in CANDIDATES.items() if k in text), None)
    if name == "PlannerReply":
        phase = phase_of(messages)
        if phase == "initial":
            return {
                "reason": "two readings of the request; write the SQL for each",
                "cursor": "d",
                "plan": {
                    "id": "d",
                    "tool": "detect_ambiguities",
                    "description": "find the readings",
                    "children": [{"id": "g", "tool": "generate_sql", "description": "write the SQL"}],
                },
            }
        if phase == "select":
            return {"reason": "first reading first", "cursor": options_of(messages)[0]}
        flat = text.replace("\n", " ")
        if "nearest unexplored alternative: " in flat:
            return {
                "reason": "refuted: try the other reading",
                "cursor": flat.split("nearest unexplored alternative: ")[1].split(")")[0].strip(),
            }
        return {"stop": True, "reason": "no alternative left"}
    if name == "CheckPlan":
        return {"checks": []}
    if name == "AmbiguityReport":
        return {
            "ambiguities": [
                {
                    "phrase": "the request",
                    "interpretations": [{"description": "reading one"}, {"description": "reading two"}],
                    "settle_with_data": True,
                    "question": "",
                }
            ]
        }
    if name == "GeneratedSQL":
        assert task is not None, "the scripted model only knows tasks 1 and 10"
        second = "means reading two" in text  # the minimal edit's reading, and the direct rewrite's
        return {"sql": task[1] if second else task[0], "rationale": "scripted candidate"}
    if name == "JudgeScores":
        shown = text.split("SQL to judge:", 1)[-1]  # the judged SQL comes first after its heading
        found = sorted((shown.find(s), s) for s in JUDGE if s in shown)
        assert found, "the judge prompt shows none of the scripted candidates"
        return scores(JUDGE[found[0][1]], "scripted verdict")
    raise AssertionError(f"unexpected request {name}")


def record(fixtures: Path = FIXTURES, out: Path | None = None) -> Any:
    """Run the benchmark pipeline with the scripted model, every exchange written to ``fixtures``."""
    import tempfile

    from actsagent.birdcritic.judge_bench import run_judge_bench
    from actsagent.birdcritic.systems import make_system
    from actsagent.birdcritic.tasks import load_tasks
    from actsagent.llm import RoleModels, ScriptedChatModel, scripted_config

    config = scripted_config(
        cache_mode="read_write", cache_dir=fixtures, models=RoleModels(planner=MODEL, tools=MODEL, judge=MODEL)
    )
    system = make_system(SYSTEM, "flash", model=ScriptedChatModel(script, config=config))
    out = out or Path(tempfile.mkdtemp(prefix="bench-judge-record-"))
    return run_judge_bench("flash", system, load_tasks("flash", ids=TASK_IDS), out, progress=False)


if __name__ == "__main__":
    report = record()
    print(report.to_markdown())
    print(f"fixtures: {FIXTURES} ({len(list(FIXTURES.glob('*.json')))} exchanges)")
