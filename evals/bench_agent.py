"""Benchmark the ACTS agent's own cost: framework overhead per task excluding LLM time, LLM calls and tokens.

Runs the agent over the BIRD-CRITIC flash tasks (public fields only: query, issue_sql, db_id,
preprocess_sql) on the sample template databases, each task in its own disposable copy with its
preprocess applied, under the sandbox policy. The model is *scripted* with a generic,
deterministic policy (no checks found in the request; plan run_sql -> safeql_refine ->
generate_sql; generate_sql, and the direct-rewrite sibling the unconfirmed candidate gets, return
the issue SQL unchanged; the judge passes; the two candidates agree), so the figures measure the
framework, not accuracy: graph steps, checkpointing, guard, database executions, isolated
candidate copies, the verification copies, SafeQL.
Mode ``branching`` scripts a tree that branches and rolls back once (detect_ambiguities with two
readings, the first candidate refuted by the judge, the second accepted), to price the tree itself.

Token counts are the scripted model's (characters / 4 of the real rendered prompts), so they
show prompt sizes our templates produce for these tasks, not a provider's tokenizer.

    python evals/bench_agent.py [--out evals/out] [--limit N] [--modes tree,branching,fallback] [--fresh]

Per-task records go to ``<out>/bench_agent.jsonl`` (resumable); the report to
``<out>/bench_agent.{json,md}``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def generic_script(issue_sql: list[str]):
    """A deterministic stand-in model: same decisions for every task, answers from the request type."""
    answer_sql: str | list[str] = issue_sql[0] if len(issue_sql) == 1 else list(issue_sql)

    def script(messages: list[dict], role: str, response_model: Any) -> Any:
        name = response_model.__name__ if response_model else ""
        text = messages[-1]["content"]
        if name == "PlannerReply":
            if "Phase: initial" in text:
                return {
                    "reason": "run it, try the LLM-free refinement, then write the answer",
                    "cursor": "r",
                    "plan": {
                        "id": "r",
                        "tool": "run_sql",
                        "description": "run the issue SQL",
                        "children": [
                            {
                                "id": "s",
                                "tool": "safeql_refine",
                                "description": "refine",
                                "children": [{"id": "g", "tool": "generate_sql", "description": "answer"}],
                            }
                        ],
                    },
                }
            if "Phase: select" in text:
                import json
                import re

                m = re.search(r'set "cursor" to one of (\[.*?\])', text)
                return {"cursor": json.loads(m.group(1))[0] if m else None}
            return {"stop": True, "reason": "no alternative"}
        if name == "AmbiguityReport":
            return {"ambiguities": []}
        if name == "CheckPlan":
            return {"checks": []}
        if name == "ComparisonReply":
            return {"verdicts": [], "best": "A", "reason": "benchmark policy"}
        if name == "GeneratedSQL":
            return {"sql": answer_sql, "rationale": "unchanged (benchmark policy)"}
        if name == "RepairedSQL":
            return {"sql": issue_sql[0], "explanation": "unchanged"}
        if name == "JudgeScores":
            return _judge_scores(9)
        raise AssertionError(f"unexpected request {name}")

    return script


def _judge_scores(score: int) -> dict[str, Any]:
    s = {"score": score, "reason": "benchmark policy"}
    return {"columns": s, "granularity": s, "joins": s, "logic": s, "entailment": s, "issues": []}


def branching_script(issue_sql: list[str]):
    """A second stand-in that exercises the tree: two readings, the first refuted, rollback, the second passes."""
    generic = generic_script(issue_sql)
    judged = {"n": 0}

    def script(messages: list[dict], role: str, response_model: Any) -> Any:
        import re

        name = response_model.__name__ if response_model else ""
        text = messages[-1]["content"]
        if name == "PlannerReply":
            if "Phase: initial" in text:
                return {
                    "reason": "two readings",
                    "cursor": "d",
                    "plan": {
                        "id": "d",
                        "tool": "detect_ambiguities",
                        "description": "readings",
                        "children": [{"id": "g", "tool": "generate_sql", "description": "answer"}],
                    },
                }
            if "Phase: select" not in text:
                m = re.search(r"nearest unexplored alternative: (n\d+)", text)
                return {"cursor": m.group(1)} if m else {"stop": True}
        if name == "AmbiguityReport":
            return {
                "ambiguities": [
                    {
                        "phrase": "the request",
                        "interpretations": [{"description": "reading one"}, {"description": "reading two"}],
                    }
                ]
            }
        if name == "JudgeScores":
            judged["n"] += 1
            return _judge_scores(3 if judged["n"] == 1 else 9)
        return generic(messages, role, response_model)  # branch selection and SQL answers as in the generic policy

    return script


def run_task(task, tpl_url: str, mode: str, checkpointer: Any) -> dict[str, Any]:
    from actsagent.agent import repair
    from actsagent.db.sandbox import sandbox
    from actsagent.graphs.models import Budget
    from actsagent.guard import Policy
    from actsagent.llm import ScriptedChatModel

    rec: dict[str, Any] = {
        "key": f"{mode}:{task.instance_id}",
        "mode": mode,
        "instance_id": task.instance_id,
        "db_id": task.db_id,
        "category": task.category,
    }
    with sandbox(tpl_url) as work:
        pre = work.execute_script(task.preprocess_sql, timeout_s=60) if task.preprocess_sql else []
        rec["preprocess_error"] = next((r.describe() for r in pre if not r.ok), None)
        work.schema(refresh=True)  # introspection is the harness's cost, not the agent's
        scripts = {"tree": generic_script, "branching": branching_script}
        model = ScriptedChatModel(scripts[mode](task.issue_sql)) if mode in scripts else None
        t0 = time.perf_counter()
        run = repair(
            task.query,
            list(task.issue_sql),
            work,
            model=model,
            policy=Policy.sandbox(),
            budget=Budget(max_nodes=12),
            checkpointer=checkpointer,
            thread_id=f"bench-{mode}-{task.instance_id}-{time.time_ns()}",
        )
        wall = (time.perf_counter() - t0) * 1000
    nodes = run.tree.executed()
    per_tool: dict[str, float] = defaultdict(float)
    for n in nodes:
        per_tool[n.tool] += n.ms - n.llm_ms
    per_tool["probe (first run of the issue SQL)"] += run.timings.get("probe_ms", 0.0)
    if run.timings.get("checks_ms"):
        per_tool["checks on the issue SQL (scenario copies)"] += run.timings["checks_ms"]
    per_tool["final result"] += run.timings.get("final_ms", 0.0)
    tool_ms = sum(per_tool.values())
    rec |= {
        "status": run.status,
        "wall_ms": round(wall, 2),
        "framework_ms": round(run.framework_ms, 2),
        "llm_ms": round(run.usage.llm_ms, 2),
        "llm_calls": run.usage.llm_calls,
        "prompt_tokens": run.usage.prompt_tokens,
        "completion_tokens": run.usage.completion_tokens,
        "tokens": run.usage.prompt_tokens + run.usage.completion_tokens,
        "nodes": len(nodes),
        "tool_ms": round(tool_ms, 2),
        "graph_ms": round(run.framework_ms - tool_ms, 2),
        "per_tool_ms": {k: round(v, 2) for k, v in per_tool.items()},
        "model_failures": len(run.model_failures),
    }
    return rec


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "evals" / "out"))
    ap.add_argument("--limit", type=int, default=None, help="first N flash tasks (default: all 200)")
    ap.add_argument(
        "--modes",
        default="tree,branching,fallback",
        help="tree (scripted generic policy), branching (scripted: two readings, one rollback), fallback (no LLM)",
    )
    ap.add_argument("--fresh", action="store_true", help="discard earlier records instead of resuming")
    args = ap.parse_args(argv)

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from actsagent.birdcritic import load_tasks
    from actsagent.birdcritic.templates import ensure_template
    from actsagent.graphs.checkpoint import get_checkpointer
    from actsagent.reporting import Report, ReportTable, ResultLog

    os.environ["ACTSAGENT_NO_LLM"] = "1"  # "fallback" must not pick up a configured endpoint
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in ("tree", "branching", "fallback")]
    if bad:
        print(f"unknown mode(s): {', '.join(bad)} (use tree, branching, fallback)", file=sys.stderr)
        return 2
    out = Path(args.out)
    log_path = out / "bench_agent.jsonl"
    if args.fresh and log_path.exists():
        log_path.unlink()
    log = ResultLog(log_path, key="key")
    saver = get_checkpointer(out / "bench_agent_checkpoints.sqlite")
    tasks = load_tasks("flash", limit=args.limit)
    templates = {}
    for db_id in sorted({t.db_id for t in tasks}):
        templates[db_id] = ensure_template(db_id)
    runnable = [t for t in tasks if templates[t.db_id].ok]
    skipped = len(tasks) - len(runnable)
    jobs = log.pending([(m, t) for m in modes for t in runnable], lambda j: f"{j[0]}:{j[1].instance_id}")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) as prog:
        bar = prog.add_task("agent overhead", total=len(jobs))
        for mode, task in jobs:
            prog.update(bar, description=f"{mode} #{task.instance_id}")
            try:
                rec = run_task(task, templates[task.db_id].url, mode, saver)
            except Exception as e:
                rec = {
                    "key": f"{mode}:{task.instance_id}",
                    "mode": mode,
                    "instance_id": task.instance_id,
                    "db_id": task.db_id,
                    "category": task.category,
                    "status": "crashed",
                    "error": f"{type(e).__name__}: {e}"[:500],
                }
            log.append(rec)
            prog.advance(bar)

    records = [r for r in log.records() if r.get("mode") in modes]
    report = Report(
        name="bench_agent",
        config={
            "tasks": "BIRD-CRITIC flash (public fields)",
            "limit": args.limit,
            "modes": modes,
            "budget_nodes": 12,
            "policy": "sandbox",
            "model": "scripted generic policy (see module docstring)",
        },
    )
    rows = []
    for mode in modes:
        rs = [r for r in records if r["mode"] == mode and r.get("status") != "crashed"]
        if not rs:
            continue
        fw = [r["framework_ms"] for r in rs]
        key = f"{mode}_"
        report.summary |= {
            key + "tasks": len(rs),
            key + "crashed": sum(1 for r in records if r["mode"] == mode and r.get("status") == "crashed"),
            key + "framework_ms_median": statistics.median(fw),
            key + "framework_ms_mean": statistics.fmean(fw),
            key + "framework_ms_p90": pct(fw, 0.9),
            key + "graph_ms_median": statistics.median(r["graph_ms"] for r in rs),
            key + "tool_ms_median": statistics.median(r["tool_ms"] for r in rs),
            key + "llm_calls_mean": statistics.fmean(r["llm_calls"] for r in rs),
            key + "llm_ms_mean (scripted model, excluded above)": statistics.fmean(r["llm_ms"] for r in rs),
            key + "tokens_mean": statistics.fmean(r["tokens"] for r in rs),
            key + "prompt_tokens_mean": statistics.fmean(r["prompt_tokens"] for r in rs),
            key + "completion_tokens_mean": statistics.fmean(r["completion_tokens"] for r in rs),
            key + "nodes_mean": statistics.fmean(r["nodes"] for r in rs),
        }
        statuses = Counter(r["status"] for r in rs)
        rows.append(
            [
                mode,
                len(rs),
                round(statistics.median(fw), 1),
                round(statistics.fmean(fw), 1),
                round(pct(fw, 0.9), 1),
                round(statistics.median(r["graph_ms"] for r in rs), 1),
                round(statistics.fmean(r["llm_calls"] for r in rs), 2),
                round(statistics.fmean(r["tokens"] for r in rs)),
                dict(statuses),
            ]
        )
        tool_rows = defaultdict(list)
        for r in rs:
            for tool, ms in r["per_tool_ms"].items():
                tool_rows[tool].append(ms)
        report.tables.append(
            ReportTable(
                title=f"{mode}: time in tools (ms per task, summed over that tool's nodes, LLM time excluded)",
                columns=["tool", "tasks using it", "median ms", "p90 ms"],
                rows=[
                    [t, len(v), round(statistics.median(v), 1), round(pct(v, 0.9), 1)]
                    for t, v in sorted(tool_rows.items())
                ],
            )
        )
    report.tables.insert(
        0,
        ReportTable(
            title="Per task",
            columns=[
                "mode",
                "tasks",
                "framework ms median",
                "mean",
                "p90",
                "graph machinery ms median",
                "LLM calls mean",
                "tokens mean",
                "statuses",
            ],
            rows=rows,
        ),
    )
    report.notes += [
        "framework_ms = wall time of agent.repair minus the time spent inside model calls (scripted here, so near 0).",
        "graph machinery = framework time not spent executing tools or SQL: planning bookkeeping, state copies, "
        "SQLite checkpoints, prompt rendering, event emission.",
        "In the sandbox policy every statement list that writes runs in a fresh CREATE DATABASE ... TEMPLATE copy "
        "(so candidates never alter the task database); equal statement lists share one execution per run.",
        "Statuses are not accuracy: the scripted judge passes whatever executes (see bench_birdcritic for accuracy).",
        f"{skipped} task(s) skipped: their sample database is unavailable.",
    ]
    _jp, mp = report.write(out, "bench_agent")
    print(mp.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
