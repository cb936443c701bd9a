"""The ask benchmark's pipeline on three Spider questions with a scripted model (no model is reached):
SQLite and PostgreSQL engines, single_shot and tree modes, original and degraded sets, with and
without the knowledge base, the benchmark metric, and resuming."""

from __future__ import annotations

import importlib.util
import json
import re
from typing import Any

import pytest
from agent_scripts import scores

from actsagent.benchmarks import data_root, db_path, load_questions
from actsagent.degrade import degrade_questions, plan_renames, write_degraded
from actsagent.llm import FailingChatModel, ScriptedChatModel


def _bench():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "evals" / "bench_ask.py"
    s = importlib.util.spec_from_file_location("bench_ask", path)
    mod = importlib.util.module_from_spec(s)
    s.loader.exec_module(mod)
    return mod


ba = _bench()
IDX = (0, 6, 9)  # three concert_singer questions


def _questions(root=None, bench="spider_dev"):
    qs = {q.idx: q for q in load_questions(root or data_root(), bench)}
    return [qs[i] for i in IDX]


def _answers(qs, wrong: int, broken: int) -> dict[str, str]:
    """The gold SQL for the first question, a wrong one for the second, an invalid one for the third."""
    out = {qs[0].question: qs[0].gold_sql, qs[wrong].question: "SELECT 42", qs[broken].question: "SELECT nope FROM x"}
    return out


def script_for(answers: dict[str, str], seen: list[str]):
    def answer_sql(text: str) -> str:
        for question, sql in answers.items():
            if question in text:
                return sql
        raise AssertionError(f"no scripted answer for {text[:200]!r}")

    def script(messages: list[dict], role: str, response_model: Any) -> Any:
        name = response_model.__name__ if response_model else ""
        text = "\n".join(m["content"] for m in messages if m["role"] == "user")
        seen.append(text)
        if name == "GeneratedSQL":
            return {"sql": answer_sql(text), "rationale": "scripted"}
        if name == "RepairedSQL":
            return {"sql": answer_sql(text), "explanation": "scripted"}
        if name == "PlannerReply":
            if "Phase: initial" in text:
                return {
                    "reason": "run the draft, then answer",
                    "cursor": "r",
                    "plan": {
                        "id": "r",
                        "tool": "run_sql",
                        "description": "run the draft",
                        "children": [{"id": "g", "tool": "generate_sql", "description": "answer"}],
                    },
                }
            m = re.search(r'set "cursor" to one of (\[.*?\])', text)
            if "Phase: select" in text and m:
                return {"cursor": json.loads(m.group(1))[0]}
            return {"stop": True, "reason": "done"}
        if name == "AmbiguityReport":
            return {"ambiguities": []}
        if name == "CheckPlan":  # the tree's checks: nothing checkable (the rewrite sibling then confirms)
            return {"checks": []}
        if name == "JudgeScores":
            return scores(9, "scripted")
        raise AssertionError(f"unexpected request {name}")

    return script


def test_single_shot_on_sqlite_scores_and_resumes(tmp_path):
    qs = _questions()
    seen: list[str] = []
    model = ScriptedChatModel(script_for(_answers(qs, 1, 2), seen))
    cfg = ba.AskConfig(bench="spider_dev", engine="sqlite", mode="single_shot", idx=list(IDX))
    records, path = ba.run_bench(cfg, model=model, out=tmp_path)
    by = {r["idx"]: r for r in records}
    assert [by[i]["outcome"] for i in IDX] == ["match", "wrong_result", "exec_error"]
    assert all(by[i]["llm_calls"] == 1 for i in IDX)  # single-shot: one generation, run as written
    assert all(by[i]["prompt_tokens"] > 0 and by[i]["wall_ms"] > 0 for i in IDX)
    rep = ba.summarise(cfg, records)
    assert rep.summary["execution_accuracy_pct"] == pytest.approx(100 / 3, abs=0.01)
    # resumable: a second run asks nothing (a failing model would fail the run if it were called)
    again, _ = ba.run_bench(cfg, model=FailingChatModel(), out=tmp_path)
    assert sorted(r["key"] for r in again) == sorted(r["key"] for r in records)
    assert len(path.read_text().splitlines()) == 3


def test_tree_mode_with_postgres_and_the_knowledge_base_on_the_degraded_set(tmp_path, pg_admin_url):
    root = data_root()
    src = db_path(root, "spider_dev", "concert_singer")
    plan = plan_renames(src, seed=0)
    dst = db_path(tmp_path / "degraded", "spider_dev", "concert_singer")
    write_degraded(src, dst, plan)
    out = degrade_questions(_questions(), src, dst, plan)
    (tmp_path / "degraded" / "spider_dev" / "questions.json").write_text(json.dumps([q.model_dump() for q in out.kept]))
    qs = out.kept
    answers = {qs[0].question: qs[0].gold_sql, qs[1].question: "SELECT 42", qs[2].question: qs[2].gold_sql}
    seen: list[str] = []
    model = ScriptedChatModel(script_for(answers, seen))
    cfg = ba.AskConfig(
        bench="spider_dev", engine="postgres", mode="tree", variant="degraded", kb=True, kb_budget=900, idx=list(IDX)
    )
    records, _ = ba.run_bench(cfg, model=model, out=tmp_path, degraded_dir=tmp_path / "degraded")
    by = {r["idx"]: r for r in records}
    assert [by[q.idx]["outcome"] for q in qs] == ["match", "wrong_result", "match"]
    assert all(by[q.idx]["kb"]["chars"] <= 900 for q in qs)
    singer = next(t for t in plan.tables if t.name == "singer")
    # the prompts show the degraded names, never the original ones, and carry the knowledge base's notes
    assert any(f"Table {singer.new_name}" in s for s in seen)
    assert not any("Table singer" in s for s in seen)
    assert any(" -- " in s and "rows" in s for s in seen)


def test_the_data_dictionary_reaches_the_prompts_of_the_hard_set_and_keeps_its_own_knowledge_base(tmp_path):
    from actsagent.degrade import data_dictionary, dictionary_path
    from actsagent.errors import UserError

    root = data_root()
    src = db_path(root, "spider_dev", "concert_singer")
    plan = plan_renames(src, seed=0, level="hard")
    dst = db_path(tmp_path / "hard", "spider_dev", "concert_singer")
    write_degraded(src, dst, plan)
    dictionary_path(tmp_path / "hard", "spider_dev", "concert_singer").write_text(
        data_dictionary(plan).model_dump_json()
    )
    qs = degrade_questions(_questions(), src, dst, plan).kept
    (tmp_path / "hard" / "spider_dev" / "questions.json").write_text(json.dumps([q.model_dump() for q in qs]))
    answers = {q.question: q.gold_sql for q in qs}
    singer = next(t for t in plan.tables if t.name == "singer")
    runs = {}
    for glossary in (False, True):
        seen: list[str] = []
        cfg = ba.AskConfig(
            mode="single_shot", variant="degraded", kb=True, glossary=glossary, kb_budget=1200, idx=list(IDX)
        )
        records, path = ba.run_bench(
            cfg, model=ScriptedChatModel(script_for(answers, seen)), out=tmp_path, degraded_dir=tmp_path / "hard"
        )
        assert all(r["outcome"] == "match" for r in records)
        runs[glossary] = (seen, path)
    (plain, plain_log), (described, dict_log) = runs[False], runs[True]
    assert plain_log != dict_log and dict_log.name.endswith("_kb1200dict.jsonl")  # the runs never share a log
    line = f"{singer.columns['Country']} text -- country of the singer"
    assert any(line in s for s in described)  # the dictionary's words are in the prompt the model reads
    assert not any("of the singer" in s for s in plain)  # the plain knowledge base has no such words
    assert len(list((tmp_path / "kb_dictionary").glob("sqlite_spider_dev_concert_singer_*.json"))) == 1
    with pytest.raises(UserError, match="--glossary needs --kb"):
        ba.run_bench(ba.AskConfig(variant="degraded", glossary=True), model=ScriptedChatModel([]), out=tmp_path)


def test_bad_configurations_are_refused(tmp_path):
    from actsagent.errors import UserError

    for bad in (
        {"mode": "fast"},
        {"engine": "mysql"},
        {"hints": True},
        {"bench": "bird_dev", "variant": "degraded", "hints": True},
    ):
        with pytest.raises(UserError):
            ba.run_bench(ba.AskConfig(**bad), model=ScriptedChatModel([]), out=tmp_path)
    with pytest.raises(UserError, match="needs an LLM"):
        ba.run_bench(ba.AskConfig(), model=None, out=tmp_path)
    assert ba.main(["--mode", "fast", "--out", str(tmp_path)]) == 2


def _degraded_subset(dst, root, keep_every: int) -> set[str]:
    """A degraded set's question files holding every ``keep_every``-th question (the draw reads only these)."""
    kept = set()
    for bench in ("spider_dev", "bird_dev"):
        qs = load_questions(root, bench)[::keep_every]
        (dst / bench).mkdir(parents=True)
        (dst / bench / "questions.json").write_text(json.dumps([q.model_dump() for q in qs]))
        kept |= {q.key for q in qs}
    return kept


def test_the_paired_draw_is_the_same_for_every_system(tmp_path):
    root = data_root()
    kept = _degraded_subset(tmp_path / "degraded", root, keep_every=3)

    def draw(**kw) -> list[str]:
        cfg = ba.AskConfig(**{"bench": "spider_dev,bird_dev", "sample": 40, "seed": 7, **kw})
        return [q.key for q in ba.questions(cfg, root, tmp_path / "degraded")]

    base = draw(paired=True)
    assert len(base) == 40 and set(base) <= kept
    assert {k.split(":")[0] for k in base} == {"spider_dev", "bird_dev"}  # drawn over both benchmarks
    for kw in ({"variant": "degraded"}, {"variant": "degraded", "kb": True, "mode": "single_shot"}, {"mode": "tree"}):
        assert draw(paired=True, **kw) == base
    assert draw(paired=True, seed=8) != base
    assert not set(draw()) <= kept  # unpaired, the original draw also takes questions the degraded set lost


def _log(path, outcomes: dict[str, bool], calls: int) -> None:
    path.write_text(
        "".join(
            json.dumps(
                {
                    "key": k,
                    "db": "d",
                    "match": m,
                    "outcome": "match" if m else "wrong_result",
                    "llm_calls": calls,
                    "prompt_tokens": 100 * calls,
                    "completion_tokens": 10,
                    "wall_ms": 2000.0,
                }
            )
            + "\n"
            for k, m in outcomes.items()
        )
    )


def test_compare_tabulates_the_shared_questions_and_the_loss_recovered(tmp_path, capsys):
    keys = [f"spider_dev:{i}" for i in (1, 2, 3, 4)]
    logs = [tmp_path / f"bench_ask_{n}.jsonl" for n in ("orig", "degr", "kb", "tree")]
    _log(logs[0], dict(zip(keys, [True, True, True, False])) | {"bird_dev:9": True}, 2)  # 9: only here
    _log(logs[1], dict(zip(keys, [True, False, False, False])), 2)
    _log(logs[2], dict(zip(keys, [True, True, False, False])), 2)
    _log(logs[3], dict(zip(keys, [True, True, True, True])), 9)
    rep = ba.compare(logs)
    assert rep.summary["question_ids"] == ",".join(keys)
    rows = {r[0]: r for r in rep.tables[0].rows}
    assert [rows[n][2] for n in ("orig", "degr", "kb", "tree")] == [75.0, 25.0, 50.0, 100.0]
    assert rows["orig"][3] == "" and rows["kb"][3] == 50.0 and rows["tree"][3] == 150.0
    assert rows["tree"][4] == 9 and rows["tree"][5] == 910 and rows["tree"][6] == 2.0
    assert [r[0] for r in rep.tables[1].rows] == keys and rep.tables[1].rows[1][2:] == [1, 0, 1, 1]
    assert ba.main(["--compare", *map(str, logs), "--out", str(tmp_path)]) == 0
    assert "loss recovered" in capsys.readouterr().out
    assert ba.main(["--compare", str(logs[0]), "--out", str(tmp_path)]) == 2
    assert ba.main(["--compare", str(logs[0]), str(tmp_path / "missing.jsonl"), "--out", str(tmp_path)]) == 2
