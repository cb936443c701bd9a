"""How good is the agent's judge? Every candidate it judged, labelled by our scorer.

A system runs once per task, as in ``actsagent birdcritic run``. Every candidate the agent judged
is read from its run output through ``judged_candidates`` (the one function that knows where the
verdicts live), and each distinct candidate SQL is scored by our scorer in a fresh copy of the
database. The scorer uses ``sol_sql`` and ``test_cases``; the agent never sees them. The judge's
verdict against the scorer's label gives its accept rate, precision (accepted candidates the
scorer passes) and recall (scorer-passing candidates it accepted).

One JSON line per task goes to ``bench_judge.jsonl``; a rerun skips finished tasks and retries
those whose system failed (a provider outage, a replay miss).
"""

from __future__ import annotations

import random
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from actsagent.birdcritic.runner import (
    CATEGORIES,
    TaskRunner,
    _check_same_system,
    _exclusive,
    make_task_runner,
    run_benchmark,
)
from actsagent.birdcritic.scorer import ScoreResult
from actsagent.birdcritic.tasks import PublicTask
from actsagent.reporting import Report, ReportTable, ResultLog, batch_progress
from actsagent.tools import GenerateSqlOutput
from actsagent.tools.judge import Score

LOG_FILE = "bench_judge.jsonl"
STEM = "bench_judge"


# --------------------------------------------------------------------------- the adapter to the agent's output


class JudgedCandidate(BaseModel):
    """One candidate the agent judged, as the benchmark records it."""

    node: str
    order: int | None = None
    tool: str = ""
    sql: list[str]
    passed: bool
    method: str | None = None
    semantic_score: float | None = None
    entailment_score: float | None = None
    scores: dict[str, float] = Field(default_factory=dict)  # per judged dimension, when the judge gives them
    reasons: list[str] = Field(default_factory=list)
    confirmed: bool = False  # approved with evidence beyond any model's reading: the agent calls it verified
    corroborated: bool = False  # approved, and an independently written approved candidate agreed
    evidence: list[str] = Field(default_factory=list)
    checks: dict[str, int] = Field(default_factory=dict)  # check results by status
    judge_verdict: str | None = None  # the model's own word: correct, wrong or unsure
    final: bool = False
    strategy: str | None = None  # how a generate_sql candidate was written: minimal_edit or rewrite
    hypothesis: str = ""  # the reading it was written under, if any


def judged_candidates(run: Any) -> list[JudgedCandidate]:
    """The judged candidates of an ``actsagent.agent.AgentRun``, in execution order.

    Today a verdict sits on the plan tree's ``generate_sql`` nodes (``node.verdict``, a typed
    ``Verdict``) and the candidate SQL is what the node's output produced. Any node carrying a verdict
    counts, so a new verifying tool only needs a verdict and SQL its output produces or its input names. A run without a tree (a system that is not the agent) has no judged candidates.
    """
    tree = getattr(run, "tree", None)
    if tree is None:
        return []
    final = getattr(run, "final_node", None)
    out = []
    for node in sorted(tree.nodes.values(), key=lambda n: (n.order is None, n.order or 0, n.id)):
        verdict = node.verdict
        if verdict is None:
            continue
        produced = node.output.produced_sql() if node.output is not None else None
        sql = produced or (node.resolved_input or {}).get("sql") or node.input.get("sql")
        statements = [sql] if isinstance(sql, str) else [s for s in (sql or []) if isinstance(s, str)]
        scores = {k: float(v.score) for k, v in verdict.scores or () if isinstance(v, Score)}
        out.append(
            JudgedCandidate(
                node=node.id,
                order=node.order,
                tool=node.tool,
                sql=statements,
                passed=verdict.passed,
                method=verdict.method,
                semantic_score=verdict.semantic_score,
                entailment_score=verdict.entailment_score,
                scores=scores,
                reasons=[str(r)[:300] for r in verdict.reasons][:5],
                confirmed=verdict.confirmed,
                corroborated=verdict.corroborated,
                evidence=[str(e)[:300] for e in verdict.evidence][:5],
                checks=dict(Counter(c.status for c in verdict.checks)),
                judge_verdict=verdict.scores.verdict if verdict.scores is not None else None,
                final=node.id == final,
                strategy=node.output.strategy if isinstance(node.output, GenerateSqlOutput) else None,
                hypothesis=node.hypothesis,
            )
        )
    return out


def provider_failure(run: Any) -> str | None:
    """The agent's note when its LLM provider failed mid-run (the run is then redone on resume)."""
    return next((str(n) for n in getattr(run, "notes", None) or [] if str(n).startswith("LLM provider failed")), None)


# --------------------------------------------------------------------------- one task


def _label(result: ScoreResult | None) -> dict[str, Any]:
    if result is None:
        return {"passed": False, "status": "no_keys", "tests_passed": 0, "tests_total": 0, "message": ""}
    return {
        "passed": result.passed,
        "status": result.status,
        "tests_passed": result.tests_passed,
        "tests_total": result.tests_total,
        "message": (result.messages[0][:300] if result.messages else ""),
    }


def run_task(runner: TaskRunner, task: PublicTask) -> dict[str, Any]:
    """Solve once, then label every judged candidate and the final answer with the scorer."""
    if (skipped := runner.unsupported_record(task)) is not None:
        return skipped | {"candidates": []}
    start = time.perf_counter()
    rec = runner.base_record(task)
    out, system_error, pre_error = runner.solve(task)
    solve_s = time.perf_counter() - start
    t1 = time.perf_counter()
    labels: dict[tuple[str, ...], dict[str, Any]] = {}  # equal SQL scores equally: score it once

    def label(statements: list[str]) -> dict[str, Any]:
        key = tuple(statements)
        if key not in labels:
            labels[key] = _label(runner.score_prediction(task, statements))
        return labels[key]

    candidates = [c.model_dump() | {"label": label(c.sql)} for c in judged_candidates(out.trace)]
    final = label(out.pred_sqls)
    run = out.trace
    system_error = system_error or provider_failure(run)
    rec |= {
        "status": "error" if system_error else "done",
        "error": system_error,
        "preprocess_error": pre_error,
        "agent_status": getattr(run, "status", None),
        "final_node": getattr(run, "final_node", None),
        "outvoted": getattr(run, "outvoted", None),
        "alternatives": list(getattr(run, "alternatives", None) or []),
        "final_sql": out.pred_sqls,
        "final": final,
        "final_judged": next((c["passed"] for c in candidates if c["final"]), None),
        "candidates": candidates,
        "llm_calls": out.llm_calls,
        "tokens": out.tokens,
        "cost_usd": out.cost_usd,
        "notes": out.notes[:5],
        "solve_s": round(solve_s, 3),
        "score_s": round(time.perf_counter() - t1, 3),
        "total_s": round(time.perf_counter() - start, 3),
    }
    return rec


# --------------------------------------------------------------------------- which tasks


def gold_passing(
    task_set: str, out_dir: Path, *, root: Path | None = None, workers: int = 2, progress: bool = True
) -> set[str]:
    """Ids of the tasks whose gold ``sol_sql`` passes its own tests here (a resumable gold run in ``out_dir``)."""
    from actsagent.birdcritic.systems import GoldSystem

    run_benchmark(
        task_set,
        GoldSystem(task_set, root=root),
        out_dir,
        workers=workers,
        progress=progress,
        root=root,
        report_name=f"BIRD-CRITIC {task_set} gold (which tasks the judge benchmark may draw)",
    )
    return {
        str(r["instance_id"])
        for r in ResultLog(out_dir / "results.jsonl", key="instance_id").records()
        if r.get("passed")
    }


def draw(tasks: list[PublicTask], eligible: set[str], n: int | None, seed: int) -> list[PublicTask]:
    """``n`` tasks drawn with ``seed`` among the eligible ones (all of them without ``n``), in file order."""
    pool = [t for t in tasks if t.instance_id in eligible]
    if n is None or n >= len(pool):
        return pool
    chosen = set(random.Random(seed).sample([t.instance_id for t in pool], n))
    return [t for t in pool if t.instance_id in chosen]


# --------------------------------------------------------------------------- the run


def run_judge_bench(
    task_set: str,
    system: Any,
    tasks: list[PublicTask],
    out_dir: str | Path,
    *,
    root: Path | None = None,
    progress: bool = True,
    config: dict[str, Any] | None = None,
) -> Report:
    """Run (or resume) the benchmark on ``tasks``; writes ``bench_judge.{json,md}`` and returns the report."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with _exclusive(out):  # one writer per folder, as for `birdcritic run`
        return _run_locked(task_set, system, tasks, out, root=root, progress=progress, config=config)


def _run_locked(
    task_set: str,
    system: Any,
    tasks: list[PublicTask],
    out: Path,
    *,
    root: Path | None,
    progress: bool,
    config: dict[str, Any] | None,
) -> Report:
    log = ResultLog(out / LOG_FILE, key="instance_id")
    _check_same_system(log, system.name)
    latest = {str(r.get("instance_id")): r for r in log.records()}  # the last attempt of a task counts
    finished = {i for i, r in latest.items() if _complete(r)}
    pending = [t for t in tasks if t.instance_id not in finished]
    if pending:
        runner = make_task_runner(task_set, system, pending, root=root)
        with batch_progress(disable=not progress, eta=False) as bar:
            job = bar.add_task(
                f"judge bench ({system.name})", total=len(tasks), completed=len(tasks) - len(pending), info=""
            )
            for task in pending:
                bar.update(job, info=f"task {task.instance_id}")
                log.append(run_task(runner, task))
                bar.advance(job)
    latest = {str(r.get("instance_id")): r for r in log.records()}
    records = [latest[t.instance_id] for t in tasks if t.instance_id in latest]
    report = summarize(
        records,
        name=f"Judge benchmark: {system.name} on BIRD-CRITIC {task_set}",
        config={
            "task_set": task_set,
            "system": system.name,
            "tasks": len(tasks),
            "log": str(out / LOG_FILE),
            **(config or {}),
        },
    )
    report.write(out, stem=STEM)
    return report


def _complete(r: dict[str, Any]) -> bool:
    """A finished task's line; anything else (a failed system, a line edited by hand) is run again."""
    if r.get("status") == "unsupported":
        return True

    def judged(c: Any) -> bool:
        return isinstance(c, dict) and isinstance(c.get("passed"), bool) and _verdict(c.get("label"))

    numbers = all(isinstance(r.get(k), (int, float)) for k in ("llm_calls", "tokens", "total_s"))
    return (
        r.get("status") == "done"
        and numbers
        and _verdict(r.get("final"))
        and isinstance(r.get("candidates"), list)
        and all(map(judged, r["candidates"]))
    )


def _verdict(label: Any) -> bool:
    return isinstance(label, dict) and isinstance(label.get("passed"), bool)


# --------------------------------------------------------------------------- figures


def _pct(a: int, b: int) -> float | None:
    return round(100.0 * a / b, 2) if b else None


def verified(c: dict[str, Any]) -> bool:
    """Approved and confirmed by evidence (a check the original fails, a faster plan): the agent's 'verified'."""
    return bool(c["passed"] and c.get("confirmed"))


# the kinds of verdict, from the strongest approval to none
TIERS = (
    "verified (confirmed by a check or plan)",
    "approved, corroborated by an agreeing candidate",
    "approved on the judge's reading alone",
    "refuted",
)


def tier(c: dict[str, Any]) -> str:
    """Which kind of approval a candidate got (one of ``TIERS``)."""
    if not c["passed"]:
        return TIERS[3]
    return TIERS[0] if verified(c) else TIERS[1] if c.get("corroborated") else TIERS[2]


def judge_figures(candidates: list[dict[str, Any]], *, verified_only: bool = False) -> dict[str, Any]:
    """Accept rate, precision and recall of the judge against the scorer's labels (None when undefined).

    ``verified_only``: count as accepted only the candidates the agent calls verified."""
    accepted = [c for c in candidates if (verified(c) if verified_only else c["passed"])]
    good = [c for c in candidates if c["label"]["passed"]]
    tp = sum(1 for c in accepted if c["label"]["passed"])
    return {
        "candidates": len(candidates),
        "accepted": len(accepted),
        "scorer_passed": len(good),
        "accepted_and_passed": tp,
        "accepted_but_failed": len(accepted) - tp,
        "rejected_but_passed": len(good) - tp,
        "accept_rate_pct": _pct(len(accepted), len(candidates)),
        "precision_pct": _pct(tp, len(accepted)),
        "recall_pct": _pct(tp, len(good)),
    }


def _scored(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("status") == "done"]


def summarize(records: list[dict[str, Any]], *, name: str, config: dict[str, Any]) -> Report:
    done = _scored(records)
    cands = [c for r in done for c in r["candidates"]]
    finals = [c for c in cands if c["final"]]
    overall = judge_figures(cands)
    overall_verified = judge_figures(cands, verified_only=True)
    final_figs = judge_figures(finals)
    final_verified = judge_figures(finals, verified_only=True)
    # the ceiling of selection: a task whose final answer fails but one of its candidates passes was lost choosing,
    # the others writing
    writable = [r for r in done if any(c["label"]["passed"] for c in r["candidates"])]
    final_passed = sum(1 for r in done if r["final"]["passed"])
    times = [r["total_s"] for r in done]
    summary: dict[str, Any] = {
        "tasks": len(records),
        "unsupported": sum(r.get("status") == "unsupported" for r in records),
        "errors": sum(r.get("status") == "error" for r in records),
        "tasks scored": len(done),
        **{k.replace("_pct", " %").replace("_", " "): v for k, v in overall.items()},
        "final answers passed": final_passed,
        "final pass rate %": _pct(final_passed, len(done)),
        "tasks with a passing candidate": len(writable),
        "tasks lost choosing (a candidate passes, the final answer fails)": sum(
            1 for r in writable if not r["final"]["passed"]
        ),
        **_outvoting(done),
        **_alternatives(done),
        "final answers accepted by the judge": final_figs["accepted"],
        "final answers: judge precision %": final_figs["precision_pct"],
        **{
            f"verified {k.replace('_pct', ' %').replace('_', ' ')}": v
            for k, v in overall_verified.items()
            if k in ("accepted", "accepted_and_passed", "precision_pct", "recall_pct")
        },
        "final answers verified": final_verified["accepted"],
        "final answers: verified precision %": final_verified["precision_pct"],
        "llm calls / task": round(statistics.fmean(r["llm_calls"] for r in done), 2) if done else 0,
        "tokens / task": round(statistics.fmean(r["tokens"] for r in done), 1) if done else 0,
        "seconds / task (mean)": round(statistics.fmean(times), 2) if times else 0,
        "seconds / task (median)": round(statistics.median(times), 2) if times else 0,
    }
    cols = ["candidates", "accepted", "scorer passed", "accept rate %", "precision %", "recall %"]

    def row(figs: dict[str, Any]) -> list[Any]:
        return [
            figs["candidates"],
            figs["accepted"],
            figs["scorer_passed"],
            *[_na(figs[k]) for k in ("accept_rate_pct", "precision_pct", "recall_pct")],
        ]

    by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in done:
        by_cat[str(r.get("category"))].append(r)
    cats = [c for c in CATEGORIES if c in by_cat] + sorted(set(by_cat) - set(CATEGORIES))
    cat_rows = []
    for c in cats:
        rs = by_cat[c]
        fp = sum(1 for r in rs if r["final"]["passed"])
        cat_rows.append(
            [c, len(rs), *row(judge_figures([x for r in rs for x in r["candidates"]])), fp, _na(_pct(fp, len(rs)))]
        )
    by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cands:
        by_method[str(c.get("method"))].append(c)
    task_rows = [
        [
            r["instance_id"],
            r.get("category"),
            r.get("agent_status"),
            len(r["candidates"]),
            sum(c["passed"] for c in r["candidates"]),
            sum(c["label"]["passed"] for c in r["candidates"]),
            "yes" if r["final"]["passed"] else "no",
            _na(r.get("final_judged")),
            r["llm_calls"],
            r["tokens"],
            r["total_s"],
        ]
        for r in done
    ]
    tables = [
        ReportTable(
            title="Judge against the scorer",
            columns=["candidates judged", *cols],
            rows=[
                ["all, approved", *row(overall)],
                ["all, verified", *row(overall_verified)],
                ["final answers, approved", *row(final_figs)],
                ["final answers, verified", *row(final_verified)],
            ],
        ),
        ReportTable(
            title="How often each kind of verdict is right",
            columns=["verdict", "candidates", "scorer passed", "right %"],
            rows=[
                [
                    t,
                    len(cs),
                    sum(c["label"]["passed"] for c in cs),
                    _na(_pct(sum(c["label"]["passed"] for c in cs), len(cs))),
                ]
                for t in TIERS
                if (cs := [c for c in cands if tier(c) == t])
            ],
        ),
        ReportTable(
            title="By category",
            columns=["category", "tasks", *cols, "final passed", "final pass rate %"],
            rows=cat_rows,
        ),
        ReportTable(
            title="By judging method",
            columns=["method", *cols],
            rows=[[m, *row(judge_figures(cs))] for m, cs in sorted(by_method.items())],
        ),
        ReportTable(
            title="Per task",
            columns=[
                "instance_id",
                "category",
                "agent status",
                "candidates",
                "accepted",
                "scorer passed",
                "final passes",
                "final accepted",
                "LLM calls",
                "tokens",
                "seconds",
            ],
            rows=task_rows,
        ),
    ]
    bad = [r for r in records if r.get("status") in ("error", "unsupported")]
    if bad:
        tables.append(
            ReportTable(
                title="Tasks not scored",
                columns=["instance_id", "status", "why"],
                rows=[[r["instance_id"], r["status"], (r.get("error") or r.get("reason") or "")[:300]] for r in bad],
            )
        )
    notes = [
        "precision = accepted candidates the scorer passes / accepted candidates; recall = scorer-passing "
        "candidates the judge accepted / scorer-passing candidates; n/a when the denominator is 0.",
        "approved = the judge (or a comparison) passed the candidate; verified = approved and confirmed by "
        "evidence beyond a reading of the candidate (a check written from the request before any candidate, with "
        "data the request fixes, that the original fails and the candidate passes; or a faster plan). Agreement "
        "between two candidates corroborates but does not verify.",
        "Each distinct candidate SQL is scored in a fresh copy of the sample database (3 rows per table): "
        "labels are a proxy for the official metric, like every score here.",
        "The final answer is the agent's returned SQL; 'final accepted' is the judge's verdict on it "
        "(n/a when it was never judged, e.g. the budget ran out first).",
    ]
    return Report(name=name, config=config, summary={k: _na(v) for k, v in summary.items()}, tables=tables, notes=notes)


def _outvoting(done: list[dict[str, Any]]) -> dict[str, int]:
    """How often agreeing candidates replaced the judge's unconfirmed choice, and who was right."""
    out = [r for r in done if r.get("outvoted")]
    replaced = [c for r in out for c in r["candidates"] if c["node"] == r["outvoted"]]
    return {
        "final answers chosen by outvoting": len(out),
        "outvoting: final answer passes": sum(1 for r in out if r["final"]["passed"]),
        "outvoting: the replaced choice passes": sum(1 for c in replaced if c["label"]["passed"]),
    }


def _alternatives(done: list[dict[str, Any]]) -> dict[str, int]:
    """How often the run named other readings beside its answer, and whether a user choosing among them could have
    won a task the answer fails."""
    named = [r for r in done if r.get("alternatives")]

    def passes(r: dict[str, Any]) -> bool:
        return any(c["label"]["passed"] for c in r["candidates"] if c["node"] in r["alternatives"])

    return {
        "answers with other readings named": len(named),
        "other readings named: the answer fails and a named reading passes": sum(
            1 for r in named if not r["final"]["passed"] and passes(r)
        ),
        "other readings named: the answer passes": sum(1 for r in named if r["final"]["passed"]),
    }


def _na(v: Any) -> Any:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return v
