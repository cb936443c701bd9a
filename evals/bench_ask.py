"""Text-to-SQL with the agent (``actsagent.agent.ask``) on Spider dev and BIRD dev: execution accuracy,
LLM calls, tokens and time per question.

Axes: benchmark (spider_dev | bird_dev | both, ``spider_dev,bird_dev``), engine (sqlite: the
benchmark's files | postgres: the same files loaded into the embedded server, foreign keys included),
mode (single_shot | linear | tree), hints (BIRD evidence appended to the question; original set only),
variant (original | degraded, from ``evals/make_degraded.py``), knowledge base (off | on: every prompt
takes its schema context from the knowledge base's retrieval for its request and SQL,
``ToolContext.schema_source="kb"``, at ``--kb-budget`` characters; built on first use), data dictionary
(``--glossary``, with ``--kb`` on a degraded set: the knowledge base is built with the ``data_dictionary.json``
beside each degraded file as its glossary, stored apart under ``<out>/kb_dictionary`` keyed by the
dictionary's content, so runs with and without it never share a knowledge base).

``--refine`` (PostgreSQL, degraded set): before the questions run, each drawn database is refined once
(EGRefine, no LLM: names from the knowledge base and from the database's glossary when there is one,
``<db_id>.glossary.json``/``.toml`` in ``--glossary-dir`` or beside the degraded file) on a workload of
that database's degraded questions *not* in the draw, with views in schema ``refined`` of a copy of its
own; the questions are asked over the views, the SQL returned is translated back to the base tables and
run there. The refinement and its safety figures are kept in ``<out>/refine/`` (reused while the
workload is the same); run ``--refine --build-kb-only`` once before parallel runs.

``--sample N --seed S`` draws N questions at random from the benchmarks' pooled questions; the draw
depends only on the seed, the benchmarks and ``--paired`` (draw from questions both the original and
the degraded set hold), so every system run with the same three answers the same questions.

Gold results come from the gold SQL on the variant's SQLite file; the prediction runs on the
chosen engine with a large row cap; they are compared with the benchmark's metric
(``benchmarks.same_result``: Spider ordered-if-ORDER-BY else multiset, BIRD set). Each finished
question is appended to ``<out>/bench_ask_<config>.jsonl``, so an interrupted run resumes.

    python evals/bench_ask.py --bench bird_dev --engine sqlite --mode tree [--hints] [--variant degraded] [--kb]
                              [--glossary] [--limit N | --sample N --seed S [--paired]] [--workers W] [--model NAME]
                              [--out evals/out] [--degraded DIR]
    python evals/bench_ask.py --compare ORIGINAL.jsonl DEGRADED.jsonl [OTHER.jsonl ...]   # one table

It needs an LLM (``OPENAI_API_KEY``/``OPENAI_BASE_URL``, or ``--model`` on the configured endpoint);
``run_bench(..., model=...)`` takes any ChatModel (the tests pass a scripted one).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import threading
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
    glossary: bool = False  # the knowledge base built with the degraded set's data dictionary
    max_nodes: int = Field(default=24, ge=1)
    limit: int | None = None
    sample: int | None = None
    idx: list[int] | None = None  # only these questions (their ``idx``)
    seed: int = 0
    paired: bool = False  # draw only from questions both the original and the degraded set hold
    refine: bool = False  # ask over EGRefine's views (see the module's docstring)

    def benches(self) -> list[str]:
        return [b.strip() for b in self.bench.split(",") if b.strip()]

    def tag(self) -> str:
        parts = [
            "+".join(self.benches()),
            self.engine,
            self.mode,
            self.variant,
            "hints" if self.hints else "nohints",
            (f"kb{self.kb_budget}" + ("dict" if self.glossary else "")) if self.kb else "nokb",
        ]
        if self.refine:
            parts.append("refined")
        return "_".join(parts)


def check_config(cfg: AskConfig) -> None:
    from actsagent.benchmarks import BENCHMARKS
    from actsagent.errors import UserError

    if not cfg.benches() or any(b not in BENCHMARKS for b in cfg.benches()):
        raise UserError(f"--bench must be one or more (comma-separated) of {', '.join(BENCHMARKS)}")
    if cfg.engine not in ("sqlite", "postgres"):
        raise UserError("--engine must be sqlite or postgres")
    if cfg.mode not in MODES:
        raise UserError(f"--mode must be one of {', '.join(MODES)}")
    if cfg.variant not in ("original", "degraded"):
        raise UserError("--variant must be original or degraded")
    if cfg.hints and (cfg.variant == "degraded" or cfg.benches() != ["bird_dev"]):
        raise UserError("--hints needs BIRD's original set (the degraded set has no hints, Spider none at all)")
    if cfg.glossary and not (cfg.kb and cfg.variant == "degraded"):
        raise UserError("--glossary needs --kb and --variant degraded (the data dictionary describes a degraded set)")
    if cfg.refine and (cfg.engine != "postgres" or cfg.variant != "degraded"):
        raise UserError("--refine needs --engine postgres and --variant degraded (views live in PostgreSQL)")


def questions(cfg: AskConfig, root: Path, degraded_dir: Path):
    """The configuration's questions: all of its benchmarks', narrowed by ``idx``, the seeded draw, ``limit``."""
    from actsagent.benchmarks import load_questions
    from actsagent.degrade import load_degraded_questions

    qs = []
    for bench in cfg.benches():
        mine = (
            load_questions(root, bench) if cfg.variant == "original" else load_degraded_questions(degraded_dir, bench)
        )
        if cfg.paired:
            other = load_degraded_questions(degraded_dir, bench) if cfg.variant == "original" else None
            both = {q.key for q in (other if other is not None else load_questions(root, bench))}
            mine = [q for q in mine if q.key in both]
        qs += sorted(mine, key=lambda q: q.idx)
    if cfg.idx is not None:
        qs = [q for q in qs if q.idx in set(cfg.idx)]
    if cfg.sample and cfg.sample < len(qs):
        draw = f"{cfg.seed}|{'+'.join(cfg.benches())}|{'paired' if cfg.paired else 'all'}"
        picked = set(random.Random(draw).sample(range(len(qs)), cfg.sample))
        qs = [q for i, q in enumerate(qs) if i in picked]
    return qs[: cfg.limit] if cfg.limit else qs


class _Databases:
    """One open database per (benchmark, db_id) for the run (PostgreSQL copies loaded once and kept)."""

    def __init__(self, cfg: AskConfig, files: Path, kb_dir: Path | None = None) -> None:
        self.cfg, self.files, self.open = cfg, files, {}
        self.kb_dir = kb_dir
        self.lock, self.kb_lock = threading.Lock(), threading.Lock()
        self.refined: dict[tuple[str, str], Any] = {}  # (bench, db_id) -> the RefinedDatabase asked instead

    def path(self, bench: str, db_id: str) -> Path:
        from actsagent.benchmarks import db_path

        return db_path(self.files, bench, db_id)

    def get(self, bench: str, db_id: str):
        with self.lock:
            if (bench, db_id) not in self.open:
                self.open[(bench, db_id)] = self._open(bench, db_id)
            return self.open[(bench, db_id)]

    def _open(self, bench: str, db_id: str):
        if self.cfg.engine == "sqlite":
            from actsagent.db.sqlite import SqliteDatabase

            return SqliteDatabase(self.path(bench, db_id))
        from actsagent.benchmarks import pg_copy
        from actsagent.db.postgres import PostgresDatabase

        digest = hashlib.sha1(str(self.path(bench, db_id).resolve()).encode()).hexdigest()[:6]
        refined = "r" if self.cfg.refine else ""  # a copy of its own: its views stay out of the other runs' catalog
        name = f"bench_{self.cfg.variant[:4]}{refined}_{db_id}_{digest}"[:63]
        return PostgresDatabase(pg_copy(self.path(bench, db_id), name))

    def asked(self, bench: str, db_id: str):
        """The database the questions are asked on: the refined views when refined, else the database."""
        return self.refined.get((bench, db_id)) or self.get(bench, db_id)

    def knowledge_base(self, bench: str, db_id: str):
        """The retriever the prompts read: the database's own knowledge base, or with ``--glossary`` one built
        with the data dictionary beside the degraded file, in a file named by the dictionary's digest."""
        from actsagent import kb
        from actsagent.degrade import dictionary_path
        from actsagent.errors import UserError

        db = self.asked(bench, db_id)
        if not self.cfg.glossary or (bench, db_id) in self.refined:  # the views' own, built by the refinement
            return kb.retriever(db)
        src = dictionary_path(self.files, bench, db_id)
        if not src.is_file():
            raise UserError(f"no data dictionary at {src}: rebuild the degraded set with evals/make_degraded.py")
        digest = hashlib.sha1(src.read_bytes() + str(self.path(bench, db_id).resolve()).encode()).hexdigest()[:10]
        path = (self.kb_dir or self.files / "kb_dictionary") / f"{self.cfg.engine}_{bench}_{db_id}_{digest}.json"
        with self.kb_lock:
            if not path.is_file():
                kb.build(db, glossary=src, path=path)
            return kb.retriever(db, path=path)

    def close(self) -> None:
        for db in [*self.open.values(), *self.refined.values()]:
            db.close()


def one(cfg: AskConfig, q, dbs: _Databases, model: Any) -> dict:
    """Ask one question; the record carries the outcome, the match and the costs."""
    from actsagent import agent
    from actsagent.benchmarks import run_sqlite, same_result
    from actsagent.graphs.models import Budget
    from actsagent.guard import Policy, run_guarded

    rec: dict[str, Any] = {"key": q.key, "db": q.db_id, "idx": q.idx, "difficulty": q.difficulty}
    ok, gold = run_sqlite(dbs.path(q.bench, q.db_id), q.gold_sql)
    if not ok:
        rec.update(outcome="gold_error", error=str(gold)[:300])
        return rec
    base = dbs.get(q.bench, q.db_id)
    db = dbs.asked(q.bench, q.db_id)
    question = f"{q.question}\nHint: {q.evidence}" if cfg.hints and q.evidence else q.question
    t0 = time.perf_counter()
    retriever = dbs.knowledge_base(q.bench, q.db_id) if cfg.kb else None
    if retriever is not None:  # what retrieval finds for the question alone (each prompt retrieves for its SQL too)
        ctx = retriever.retrieve(question, budget_chars=cfg.kb_budget)
        rec["kb"] = {
            "tables": len(ctx.tables),
            "columns": len(ctx.columns),
            "chars": len(ctx.text),
            "relevance": ctx.relevance,
            "completeness": ctx.completeness,
            "iterations": ctx.iterations,
        }
    run = agent.ask(
        question,
        db,
        model=model,
        mode=cfg.mode,
        budget=Budget(max_nodes=cfg.max_nodes),
        schema_source="kb" if cfg.kb else "listing",
        kb_budget=cfg.kb_budget,
        knowledge_base=retriever,
    )
    rec["wall_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    rec.update(
        status=run.status,
        pred_sql=run.final_sql,
        llm_calls=run.usage.llm_calls,
        prompt_tokens=run.usage.prompt_tokens,
        completion_tokens=run.usage.completion_tokens,
        framework_ms=round(run.framework_ms, 1),
        # how the tree ended: whether it kept its first draft, and on what evidence its answer was approved
        draft_kept=run.final_sql == run.original_sql,
        verdict=run.verdict.method if run.verdict else None,
        confirmed=bool(run.verdict and run.verdict.passed and run.verdict.confirmed),
    )
    if not run.final_sql:
        rec.update(outcome="no_sql", match=False)
        return rec
    if cfg.refine:  # SQL over the views runs on the base tables, translated
        from actsagent.schema_refine.bench import translate

        target, sql = translate(rec, run.final_sql, db, base)
    else:
        target, sql = base, run.final_sql
    res = run_guarded(target, sql, Policy.strict(max_rows=100_000))
    if not res.ok:
        rec.update(outcome="exec_error", match=False, error=res.message[:300])
        return rec
    match = same_result(gold, res.rows, bench=q.bench, gold_sql=q.gold_sql)
    rec.update(outcome="match" if match else "wrong_result", match=match)
    return rec


def run_bench(
    cfg: AskConfig,
    *,
    model: Any,
    out: Path,
    root: Path | None = None,
    degraded_dir: Path | None = None,
    workers: int = 1,
    kb_only: bool = False,
    glossary_dir: Path | None = None,
    refine_log: list[dict] | None = None,
    log=lambda m: None,
) -> tuple[list[dict], Path]:
    """Run (or resume) one configuration; returns every record of the log and its path. ``kb_only``:
    only build the knowledge bases (and with ``--refine`` the refinements) the drawn questions need, so
    parallel runs never build one twice. ``refine_log`` receives each drawn database's refinement record."""
    from actsagent.benchmarks import data_root
    from actsagent.errors import UserError
    from actsagent.reporting import ResultLog, run_in_pool

    check_config(cfg)
    if model is None and not kb_only:
        raise UserError("bench_ask needs an LLM: set OPENAI_API_KEY/OPENAI_BASE_URL or pass --model")
    root = root or data_root()
    degraded_dir = degraded_dir or ROOT / "evals" / "out" / "degraded"
    files = root if cfg.variant == "original" else degraded_dir
    qs = questions(cfg, root, degraded_dir)
    rlog = ResultLog(out / f"bench_ask_{cfg.tag()}.jsonl", key="key")
    todo = qs if kb_only else rlog.pending(qs, lambda q: q.key)
    log(f"{cfg.tag()}: {len(qs) - len(todo)} done, {len(todo)} to run")
    dbs = _Databases(cfg, files, out / "kb_dictionary")
    try:
        if cfg.refine:  # one refinement per drawn database, before anything is asked over its views
            from actsagent.schema_refine import bench as refine_step

            runs = refine_step.refine_drawn(
                qs, dbs, degraded_dir, out, glossary_dir=glossary_dir, dictionary=cfg.glossary, log=log
            )
            if refine_log is not None:
                refine_log.extend(runs)
        if cfg.kb or kb_only:  # build missing knowledge bases one at a time, before the questions run in parallel
            for bench, db_id in sorted({(q.bench, q.db_id) for q in todo}):
                dbs.knowledge_base(bench, db_id)
                log(f"knowledge base of {bench}/{db_id}{' with its data dictionary' if cfg.glossary else ''} ready")
        if kb_only:
            return [], rlog.path
        for i, rec in enumerate(run_in_pool(lambda q: one(cfg, q, dbs, model), todo, workers=workers, name="ask"), 1):
            rlog.append(rec)
            log(f"{cfg.tag()}: {i}/{len(todo)} {rec['key']} {rec.get('outcome')}")
    finally:
        dbs.close()
    wanted = {q.key for q in qs}
    return [r for r in rlog.records() if r["key"] in wanted], rlog.path


def summarise(cfg: AskConfig, records: list[dict], refinements: list[dict] | None = None):
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
    if cfg.refine:
        from actsagent.schema_refine import bench as refine_step

        refine_step.add_to_report(rep, records, refinements or [])
    if cfg.kb:
        rep.notes.append(
            f"with the knowledge base: every prompt showed the knowledge base's retrieval for its request and SQL "
            f"({cfg.kb_budget} chars budget) instead of the schema listing"
            + (", built with the degraded set's data dictionary as its glossary" if cfg.glossary else "")
        )
    return rep


def compare(paths: list[Path]):
    """One table over several runs' logs, on the questions every log answered: accuracy, LLM calls,
    tokens and time per question, and (from the third log on) the share of the accuracy the second
    (degraded) lost against the first (original) that it recovers; then each question's outcome."""
    from actsagent.errors import UserError
    from actsagent.reporting import Report, ReportTable, ResultLog

    if len(paths) < 2:
        raise UserError("--compare needs at least two result logs (the original run first, the degraded second)")
    for p in paths:
        if not p.is_file():
            raise UserError(f"no result log at {p}")
    names = [p.stem.removeprefix("bench_ask_") for p in paths]
    parts = [n.split("_") for n in names]
    shared = next((i for i, ws in enumerate(zip(*parts)) if len(set(ws)) > 1), min(map(len, parts)) - 1)
    runs = {  # named without the words every run shares (benchmarks, engine)
        "_".join(w for w in ws[shared:] if w != "nohints"): {r["key"]: r for r in ResultLog(p, key="key").records()}
        for ws, p in zip(parts, paths)
    }
    if len(runs) < len(paths):
        raise UserError("--compare got the same result log twice")
    keys = set.intersection(*(set(r) for r in runs.values()))
    keys = {k for k in keys if all(r[k].get("outcome") != "gold_error" for r in runs.values())}
    if not keys:
        raise UserError("the logs have no scored question in common")
    order = sorted(keys, key=lambda k: (k.split(":")[0], int(k.split(":")[1])))
    first = next(iter(runs.values()))
    acc = {n: 100 * sum(bool(r[k].get("match")) for k in order) / len(order) for n, r in runs.items()}
    base, floor = list(acc.values())[:2]
    rows = []
    for i, (n, r) in enumerate(runs.items()):
        recs = [r[k] for k in order]
        lost = base - floor
        recovered = round(100 * (acc[n] - floor) / lost, 1) if i >= 2 and lost > 0 else ""
        rows.append(
            [
                n,
                len(recs),
                round(acc[n], 1),
                recovered,
                round(statistics.mean(x.get("llm_calls", 0) for x in recs), 2),
                round(statistics.mean(x.get("prompt_tokens", 0) + x.get("completion_tokens", 0) for x in recs)),
                round(statistics.mean(x.get("wall_ms", 0.0) for x in recs) / 1000, 1),
            ]
        )
    rep = Report(name="Ask comparison", config={"logs": [str(p) for p in paths]})
    rep.summary.update({"questions": len(order), "question_ids": ",".join(order)})
    rep.tables.append(
        ReportTable(
            title="Systems on the same questions",
            columns=["system", "questions", "EX %", "loss recovered %", "LLM calls/q", "tokens/q", "s/q"],
            rows=rows,
        )
    )
    rep.tables.append(
        ReportTable(
            title="Each question (1: same result as the gold SQL)",
            columns=["question", "db", *runs],
            rows=[[k, first[k]["db"]] + [int(bool(r[k].get("match"))) for r in runs.values()] for k in order],
        )
    )
    rep.notes.append(
        "loss recovered: (EX of the system - EX of the second log) / (EX of the first log - EX of the second log)"
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
    ap.add_argument(
        "--glossary", action="store_true", help="with --kb on a degraded set: build it with the set's data dictionary"
    )
    ap.add_argument("--max-nodes", type=int, default=24)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--paired", action="store_true", help="draw from questions in both the original and degraded set")
    ap.add_argument("--workers", type=int, default=1, help="questions asked at a time")
    ap.add_argument("--model", default=None, help="a model name on the configured endpoint")
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "out")
    ap.add_argument(
        "--degraded",
        type=Path,
        default=None,
        help="the degraded set (evals/make_degraded.py --out) [evals/out/degraded]",
    )
    ap.add_argument("--refine", action="store_true", help="ask over EGRefine's verified views (postgres, degraded)")
    ap.add_argument(
        "--glossary-dir", type=Path, default=None, help="<db_id>.glossary.json|toml files for --refine's names"
    )
    ap.add_argument("--compare", type=Path, nargs="+", help="result logs to tabulate together (no run)")
    ap.add_argument(
        "--build-kb-only", action="store_true", help="build the drawn questions' knowledge bases, then stop"
    )
    args = ap.parse_args(argv)
    if args.compare:
        try:
            rep = compare(args.compare)
        except ActsagentError as e:
            print(f"error: {' '.join(str(e).split())}", file=sys.stderr)
            return 2
        jp, mp = rep.write(args.out, "bench_ask_compare")
        print(rep.to_markdown())
        print(f"wrote {jp} and {mp}", file=sys.stderr)
        return 0
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
        refinements: list[dict] = []
        records, path = run_bench(
            cfg,
            model=model,
            out=args.out,
            workers=args.workers,
            kb_only=args.build_kb_only,
            degraded_dir=args.degraded,
            glossary_dir=args.glossary_dir,
            refine_log=refinements,
            log=lambda m: print(m, file=sys.stderr),
        )
        if args.build_kb_only:
            if cfg.refine:  # the refine-only step: its safety report, no questions asked
                from actsagent.schema_refine import bench as refine_step

                rep = refine_step.report(cfg, refinements)
                rep.write(args.out, f"bench_ask_refine_{cfg.tag()}")
                print(rep.to_markdown())
            return 0
    except (ActsagentError, ValueError) as e:
        print(f"error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    rep = summarise(cfg, records, refinements)
    jp, mp = rep.write(args.out, f"bench_ask_{cfg.tag()}")
    print(rep.to_markdown())
    print(f"wrote {jp}, {mp} and {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
