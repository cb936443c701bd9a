"""Text-to-SQL with the agent (``actsagent.agent.ask``) on Spider dev and BIRD dev: execution accuracy,
LLM calls, tokens and time per question.

Axes: benchmark (spider_dev | bird_dev), engine (sqlite: the benchmark's files | postgres: the
same files loaded into the embedded server, foreign keys included), mode (single_shot | linear |
tree), hints (BIRD evidence appended to the question; original set only), variant (original |
degraded, from ``evals/make_degraded.py``), knowledge base (off | on: the agent sees only the
knowledge base's retrieved context, ``kb.scoped.KbScopedDatabase``, at ``--kb-budget`` characters).

Gold results come from the gold SQL on the variant's SQLite file; the prediction runs on the
chosen engine with a large row cap; they are compared with the benchmark's metric
(``benchmarks.same_result``: Spider ordered-if-ORDER-BY else multiset, BIRD set). Each finished
question is appended to ``<out>/bench_ask_<config>.jsonl``, so an interrupted run resumes.

    python evals/bench_ask.py --bench bird_dev --engine sqlite --mode tree [--hints] [--variant degraded] [--kb]
                              [--limit N | --sample N --seed S] [--model NAME] [--out evals/out]

It needs an LLM (``OPENAI_API_KEY``/``OPENAI_BASE_URL``, or ``--model`` on the configured endpoint);
``run_bench(..., model=...)`` takes any ChatModel (the tests pass a scripted one).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

ROOT = Path(__file__).resolve().parents[1]
MODES = ("single_shot", "linear", "tree")


class AskConfig(BaseModel):
    bench: str = "spider_dev"
    engine: str = "sqlite"
    mode: str = "tree"
    hints: bool = False
    variant: str = "original"
    kb: bool = False
    kb_budget: int = Field(default=2200, ge=200)
    max_nodes: int = Field(default=24, ge=1)
    limit: int | None = None
    sample: int | None = None
    idx: list[int] | None = None  # only these questions (their ``idx``)
    seed: int = 0

    def tag(self) -> str:
        parts = [
            self.bench,
            self.engine,
            self.mode,
            self.variant,
            "hints" if self.hints else "nohints",
            f"kb{self.kb_budget}" if self.kb else "nokb",
        ]
        return "_".join(parts)


def check_config(cfg: AskConfig) -> None:
    from actsagent.benchmarks import BENCHMARKS
    from actsagent.errors import UserError

    if cfg.bench not in BENCHMARKS:
        raise UserError(f"--bench must be one of {', '.join(BENCHMARKS)}")
    if cfg.engine not in ("sqlite", "postgres"):
        raise UserError("--engine must be sqlite or postgres")
    if cfg.mode not in MODES:
        raise UserError(f"--mode must be one of {', '.join(MODES)}")
    if cfg.variant not in ("original", "degraded"):
        raise UserError("--variant must be original or degraded")
    if cfg.hints and (cfg.variant == "degraded" or cfg.bench != "bird_dev"):
        raise UserError("--hints needs BIRD's original set (the degraded set has no hints, Spider none at all)")


def questions(cfg: AskConfig, root: Path, degraded_dir: Path):
    from actsagent.benchmarks import load_questions
    from actsagent.degrade import load_degraded_questions

    qs = (
        load_questions(root, cfg.bench)
        if cfg.variant == "original"
        else load_degraded_questions(degraded_dir, cfg.bench)
    )
    if cfg.idx is not None:
        qs = [q for q in qs if q.idx in set(cfg.idx)]
    if cfg.sample and cfg.sample < len(qs):
        qs = sorted(random.Random(f"{cfg.seed}|{cfg.tag()}").sample(qs, cfg.sample), key=lambda q: q.idx)
    return qs[: cfg.limit] if cfg.limit else qs


class _Databases:
    """One open database per db_id for the run (PostgreSQL copies loaded once and kept)."""

    def __init__(self, cfg: AskConfig, files: Path) -> None:
        self.cfg, self.files, self.open = cfg, files, {}

    def path(self, db_id: str) -> Path:
        from actsagent.benchmarks import db_path

        return db_path(self.files, self.cfg.bench, db_id)

    def get(self, db_id: str):
        if db_id not in self.open:
            if self.cfg.engine == "sqlite":
                from actsagent.db.sqlite import SqliteDatabase

                self.open[db_id] = SqliteDatabase(self.path(db_id))
            else:
                from actsagent.benchmarks import pg_copy
                from actsagent.db.postgres import PostgresDatabase

                digest = hashlib.sha1(str(self.path(db_id).resolve()).encode()).hexdigest()[:6]
                name = f"bench_{self.cfg.variant[:4]}_{db_id}_{digest}"[:63]
                self.open[db_id] = PostgresDatabase(pg_copy(self.path(db_id), name))
        return self.open[db_id]

    def close(self) -> None:
        for db in self.open.values():
            db.close()


def one(cfg: AskConfig, q, dbs: _Databases, model: Any) -> dict:
    """Ask one question; the record carries the outcome, the match and the costs."""
    from actsagent import agent, kb
    from actsagent.benchmarks import run_sqlite, same_result
    from actsagent.graphs.models import Budget
    from actsagent.guard import Policy, run_guarded

    rec: dict[str, Any] = {"key": q.key, "db": q.db_id, "idx": q.idx, "difficulty": q.difficulty}
    ok, gold = run_sqlite(dbs.path(q.db_id), q.gold_sql)
    if not ok:
        rec.update(outcome="gold_error", error=str(gold)[:300])
        return rec
    db = dbs.get(q.db_id)
    question = f"{q.question}\nHint: {q.evidence}" if cfg.hints and q.evidence else q.question
    target = db
    t0 = time.perf_counter()
    if cfg.kb:
        r = kb.retriever(db)
        ctx = r.retrieve(question, budget_chars=cfg.kb_budget)
        from actsagent.kb.scoped import KbScopedDatabase

        target = KbScopedDatabase(db, ctx, r.kb)
        rec["kb"] = {
            "tables": len(ctx.tables),
            "columns": len(ctx.columns),
            "chars": len(ctx.text),
            "relevance": ctx.relevance,
            "completeness": ctx.completeness,
            "iterations": ctx.iterations,
        }
    run = agent.ask(question, target, model=model, mode=cfg.mode, budget=Budget(max_nodes=cfg.max_nodes))
    rec["wall_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    rec.update(
        status=run.status,
        pred_sql=run.final_sql,
        llm_calls=run.usage.llm_calls,
        prompt_tokens=run.usage.prompt_tokens,
        completion_tokens=run.usage.completion_tokens,
        framework_ms=round(run.framework_ms, 1),
    )
    if not run.final_sql:
        rec.update(outcome="no_sql", match=False)
        return rec
    res = run_guarded(db, run.final_sql, Policy.strict(max_rows=100_000))
    if not res.ok:
        rec.update(outcome="exec_error", match=False, error=res.message[:300])
        return rec
    match = same_result(gold, res.rows, bench=cfg.bench, gold_sql=q.gold_sql)
    rec.update(outcome="match" if match else "wrong_result", match=match)
    return rec


def run_bench(
    cfg: AskConfig,
    *,
    model: Any,
    out: Path,
    root: Path | None = None,
    degraded_dir: Path | None = None,
    log=lambda m: None,
) -> tuple[list[dict], Path]:
    """Run (or resume) one configuration; returns every record of the log and its path."""
    from actsagent.benchmarks import data_root
    from actsagent.errors import UserError
    from actsagent.reporting import ResultLog

    check_config(cfg)
    if model is None:
        raise UserError("bench_ask needs an LLM: set OPENAI_API_KEY/OPENAI_BASE_URL or pass --model")
    root = root or data_root()
    degraded_dir = degraded_dir or ROOT / "evals" / "out" / "degraded"
    files = root if cfg.variant == "original" else degraded_dir
    qs = questions(cfg, root, degraded_dir)
    rlog = ResultLog(out / f"bench_ask_{cfg.tag()}.jsonl", key="key")
    todo = rlog.pending(qs, lambda q: q.key)
    log(f"{cfg.tag()}: {len(qs) - len(todo)} done, {len(todo)} to run")
    dbs = _Databases(cfg, files)
    try:
        for q in todo:
            rlog.append(one(cfg, q, dbs, model))
    finally:
        dbs.close()
    wanted = {q.key for q in qs}
    return [r for r in rlog.records() if r["key"] in wanted], rlog.path


def summarise(cfg: AskConfig, records: list[dict]):
    from actsagent.reporting import Report, ReportTable

    rep = Report(name="Ask benchmark", config=cfg.model_dump())
    scored = [r for r in records if r.get("outcome") != "gold_error"]
    n = len(scored)
    hits = sum(bool(r.get("match")) for r in scored)
    rep.summary.update(
        {
            "questions": len(records),
            "gold_errors": len(records) - n,
            "execution_accuracy_pct": round(100 * hits / n, 2) if n else None,
            "llm_calls_mean": round(statistics.mean(r.get("llm_calls", 0) for r in scored), 2) if n else None,
            "tokens_mean": round(
                statistics.mean(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in scored)
            )
            if n
            else None,
            "wall_ms_median": statistics.median(r.get("wall_ms", 0.0) for r in scored) if n else None,
            "framework_ms_median": statistics.median(r.get("framework_ms", 0.0) for r in scored) if n else None,
        }
    )
    by: dict[str, list[dict]] = {}
    for r in scored:
        by.setdefault(r.get("difficulty") or r["db"], []).append(r)
    rep.tables.append(
        ReportTable(
            title="Execution accuracy by difficulty (BIRD) or database (Spider)",
            columns=["group", "questions", "EX %"],
            rows=[
                [g, len(rs), round(100 * sum(bool(x.get("match")) for x in rs) / len(rs), 1)]
                for g, rs in sorted(by.items())
            ],
        )
    )
    outcomes: dict[str, int] = {}
    for r in scored:
        outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
    rep.tables.append(ReportTable(title="Outcomes", columns=["outcome", "questions"], rows=sorted(outcomes.items())))
    if cfg.kb:
        rep.notes.append(
            f"with the knowledge base: the agent saw only the retrieved context ({cfg.kb_budget} chars "
            f"budget), rendered by the agent's own schema listing (so its prompts may be a little longer)"
        )
    return rep


def main(argv: list[str] | None = None) -> int:
    from actsagent.errors import ActsagentError

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="spider_dev")
    ap.add_argument("--engine", default="sqlite")
    ap.add_argument("--mode", default="tree")
    ap.add_argument("--hints", action="store_true")
    ap.add_argument("--variant", default="original")
    ap.add_argument("--kb", action="store_true")
    ap.add_argument("--kb-budget", type=int, default=2200)
    ap.add_argument("--max-nodes", type=int, default=24)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default=None, help="a model name on the configured endpoint")
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "out")
    args = ap.parse_args(argv)
    try:
        cfg = AskConfig(**{k: v for k, v in vars(args).items() if k in AskConfig.model_fields})
        from actsagent.llm import LLMConfig, RoleModels, get_chat_model

        model = (
            get_chat_model(
                LLMConfig.from_env(models=RoleModels(planner=args.model, tools=args.model, judge=args.model))
            )
            if args.model
            else get_chat_model()
        )
        records, path = run_bench(cfg, model=model, out=args.out, log=lambda m: print(m, file=sys.stderr))
    except (ActsagentError, ValueError) as e:
        print(f"error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    rep = summarise(cfg, records)
    jp, mp = rep.write(args.out, f"bench_ask_{cfg.tag()}")
    print(rep.to_markdown())
    print(f"wrote {jp}, {mp} and {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
