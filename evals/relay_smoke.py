"""Record real LLM exchanges of the agent on BIRD-CRITIC flash tasks, for replay tests.

Point ``OPENAI_BASE_URL`` at the llm-relay (../shared/tools/llm-relay/README.md), answer its
requests, and this script runs ``actsagent.agent.repair`` on N flash tasks, each in a disposable
copy of its sample database with ``preprocess_sql`` applied. The agent sees only the public
fields (``query``, ``issue_sql``, ``db_id``); answer fields are never read here. Every exchange is
written by the LLM layer's cache (mode ``read_write``) into ``--fixtures`` as one
``<sha256>.json`` file, which replays with ``LLMConfig(cache_mode="replay_only", cache_dir=...)``.
Model names are part of the cache key: replay with the same ACTSAGENT_MODEL* settings as recorded.
A rerun skips finished tasks (``results_<mode>.jsonl``) and retries errored ones.

With ``--verify-replay`` a second pass re-runs the same tasks in ``replay_only`` mode with model
requests forbidden: it proves the recordings are complete and the prompts deterministic (a
prompt holding a random name or a timestamp would miss here).

    python3 ../shared/tools/llm-relay/relay.py serve --dir /tmp/relay --port 18900 &
    OPENAI_BASE_URL=http://127.0.0.1:18900/v1 OPENAI_API_KEY=none \\
        /work/venv/bin/python evals/relay_smoke.py --n 3 --verify-replay

Results go to ``--out`` (resumable ``results.jsonl`` plus ``summary.json``/``.md``). A relay run
measures whoever answered, not a named model: the figures are a smoke test, not a benchmark.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_FIXTURES = REPO / "tests" / "fixtures" / "llm" / "relay_flash"
DEFAULT_OUT = REPO / "evals" / "results" / "relay_smoke"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--n", type=int, default=3, help="number of flash tasks (file order) [3]")
    p.add_argument("--ids", default="", help="comma-separated instance ids instead of the first N")
    p.add_argument("--mode", default="tree", help="agent mode passed to repair() [tree]")
    p.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES, help=f"cache directory [{DEFAULT_FIXTURES}]")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"results directory [{DEFAULT_OUT}]")
    p.add_argument(
        "--llm-timeout",
        type=float,
        default=900.0,
        help="seconds to wait for one answer (a person answers the relay) [900]",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=0,
        help="LLM retries; >0 re-sends on timeout, which queues a duplicate in the relay [0]",
    )
    p.add_argument("--verify-replay", action="store_true", help="re-run in replay_only mode with requests forbidden")
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def configure_llm_env(args: argparse.Namespace, *, mode: str) -> None:
    """The agent builds its model with get_chat_model(): steer it through the environment."""
    os.environ.pop("ACTSAGENT_NO_LLM", None)
    os.environ["ACTSAGENT_LLM_CACHE"] = mode
    os.environ["ACTSAGENT_LLM_CACHE_DIR"] = str(args.fixtures.resolve())
    os.environ["ACTSAGENT_LLM_TIMEOUT"] = str(args.llm_timeout)
    os.environ["ACTSAGENT_LLM_MAX_RETRIES"] = str(args.retries)
    os.environ.setdefault("OPENAI_API_KEY", "none")
    if mode == "replay_only":
        os.environ.setdefault("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never contacted


def call_repair(repair: Any, task: Any, db: Any, mode: str, model: Any) -> Any:
    """Call the agent with the public fields only, passing the options its signature accepts."""
    from actsagent.birdcritic.systems import join_statements

    kwargs: dict[str, Any] = {}
    params = inspect.signature(repair).parameters
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if "mode" in params or accepts_any:
        kwargs["mode"] = mode
    if "model" in params or accepts_any:
        kwargs["model"] = model  # else the agent's get_chat_model() reads the same settings from the environment
    if "policy" in params or accepts_any:
        from actsagent.guard import Policy

        kwargs["policy"] = Policy.sandbox()
    return repair(task.query, join_statements(task.issue_sql), db, **kwargs)


def run_pass(args: argparse.Namespace, tasks: list[Any], *, cache_mode: str) -> list[dict[str, Any]]:
    import actsagent.llm as llm
    from actsagent.birdcritic.templates import ensure_templates
    from actsagent.db.sandbox import sandbox
    from actsagent.llm import openai_model
    from actsagent.reporting import ResultLog

    configure_llm_env(args, mode=cache_mode)
    openai_model.ALLOW_MODEL_REQUESTS = cache_mode != "replay_only"
    try:
        from actsagent.agent import repair
    except ImportError as e:
        raise SystemExit(f"error: actsagent.agent.repair is not available yet: {e}") from e

    log = ResultLog(args.out / f"results_{cache_mode}.jsonl", key="instance_id")
    # finished tasks are skipped on a rerun; errored ones (agent or relay trouble) are tried again
    finished = {str(r["instance_id"]) for r in log.records() if r.get("status") != "error"}
    pending = [t for t in tasks if t.instance_id not in finished]
    templates = ensure_templates(sorted({t.db_id for t in pending})) if pending else {}
    ledger = llm.UsageLedger()
    model = llm.get_chat_model(llm.LLMConfig.from_env())

    from actsagent.reporting import batch_progress

    with batch_progress(disable=args.no_progress, eta=False) as bar:
        job = bar.add_task(
            f"relay smoke ({cache_mode})", total=len(tasks), completed=len(tasks) - len(pending), info=""
        )
        for task in pending:
            bar.update(job, info=f"task {task.instance_id}")
            log.append(run_task(args, task, templates.get(task.db_id), repair, model, ledger, cache_mode, sandbox))
            bar.advance(job)
    latest = {str(r["instance_id"]): r for r in log.records()}  # the last attempt of each task counts
    return [latest[t.instance_id] for t in tasks if t.instance_id in latest]


def run_task(args, task, template, repair, model, ledger, cache_mode: str, sandbox) -> dict[str, Any]:
    from actsagent.config import Limits

    rec: dict[str, Any] = {"instance_id": task.instance_id, "db_id": task.db_id, "cache_mode": cache_mode}
    if template is None or not getattr(template, "ok", False):
        return {**rec, "status": "unsupported", "error": getattr(template, "reason", "no template")}
    before = set(p.name for p in args.fixtures.glob("*.json")) if args.fixtures.is_dir() else set()
    start = time.perf_counter()
    try:
        with sandbox(template.url, limits=Limits(statement_timeout_s=60.0, max_rows=10_000)) as work:
            if task.preprocess_sql:
                work.execute_script(task.preprocess_sql, timeout_s=60)
            with ledger.task(task.instance_id):
                run = call_repair(repair, task, work, args.mode, model)
        rec.update(
            status=str(getattr(run, "status", "done")),
            final_sql=getattr(run, "final_sql", None),
            verdict=getattr(run, "verdict", None),
            notes=list(getattr(run, "notes", []) or [])[:5],
            model_failures=len(getattr(run, "model_failures", []) or []),
        )
    except Exception as e:  # one task's failure (a replay miss, a provider error) must not stop the batch
        rec.update(status="error", error=f"{type(e).__name__}: {e}"[:2000])
    tot = ledger.totals(task_id=task.instance_id)
    after = set(p.name for p in args.fixtures.glob("*.json")) if args.fixtures.is_dir() else set()
    rec.update(
        llm_calls=tot.calls,
        cached_calls=tot.cached_calls,
        prompt_tokens=tot.prompt_tokens,
        completion_tokens=tot.completion_tokens,
        llm_s=round(tot.latency_ms / 1000, 3),
        seconds=round(time.perf_counter() - start, 3),
        new_fixtures=sorted(after - before),
    )
    return rec


def summarize(args: argparse.Namespace, passes: dict[str, list[dict[str, Any]]]) -> Any:
    from actsagent.reporting import Report, ReportTable

    rows = []
    summary: dict[str, Any] = {}
    for mode, recs in passes.items():
        summary[f"{mode}: tasks"] = len(recs)
        summary[f"{mode}: errors"] = sum(r["status"] == "error" for r in recs)
        summary[f"{mode}: llm calls"] = sum(r.get("llm_calls", 0) for r in recs)
        summary[f"{mode}: cached calls"] = sum(r.get("cached_calls", 0) for r in recs)
        summary[f"{mode}: tokens"] = sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in recs)
        for r in recs:
            rows.append(
                [
                    mode,
                    r["instance_id"],
                    r["db_id"],
                    r["status"],
                    r.get("llm_calls", 0),
                    r.get("cached_calls", 0),
                    r.get("model_failures", 0),
                    r.get("prompt_tokens", 0) + r.get("completion_tokens", 0),
                    len(r.get("new_fixtures", [])),
                    r.get("seconds", 0),
                    (r.get("error") or "")[:120],
                ]
            )
    if "replay_only" in passes:
        rp = passes["replay_only"]
        summary["replay complete"] = bool(rp) and all(
            r["status"] != "error" and r.get("cached_calls") == r.get("llm_calls") for r in rp
        )
    summary["fixture files"] = len(list(args.fixtures.glob("*.json"))) if args.fixtures.is_dir() else 0
    report = Report(
        name="LLM relay smoke run",
        config={"mode": args.mode, "fixtures": str(args.fixtures), "endpoint": os.environ.get("OPENAI_BASE_URL", "")},
        summary=summary,
        tables=[
            ReportTable(
                title="Tasks",
                columns=[
                    "pass",
                    "task",
                    "db",
                    "status",
                    "llm calls",
                    "cached",
                    "model failures",
                    "tokens",
                    "new fixtures",
                    "seconds",
                    "error",
                ],
                rows=rows,
            )
        ],
        notes=[
            "A relay run measures whoever answered, not a named model; not a benchmark result.",
            "replay_only errors mean the recordings do not cover a run: a prompt changed or "
            "holds something non-deterministic.",
        ],
    )
    report.write(args.out, stem="summary")
    return report


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.n < 1:
        print("error: --n must be at least 1", file=sys.stderr)
        return 2
    if not os.environ.get("OPENAI_BASE_URL"):
        print(
            "error: set OPENAI_BASE_URL to the llm-relay (e.g. http://127.0.0.1:18900/v1); "
            "see ../shared/tools/llm-relay/README.md",
            file=sys.stderr,
        )
        return 2
    from actsagent.birdcritic import load_tasks
    from actsagent.errors import ActsagentError

    try:
        ids = [i.strip() for i in args.ids.split(",") if i.strip()] or None
        tasks = load_tasks("flash", ids=ids, limit=None if ids else args.n)
        args.fixtures.mkdir(parents=True, exist_ok=True)
        passes = {"read_write": run_pass(args, tasks, cache_mode="read_write")}
        if args.verify_replay:
            passes["replay_only"] = run_pass(args, tasks, cache_mode="replay_only")
        report = summarize(args, passes)
    except ActsagentError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for k, v in report.summary.items():
        print(f"{k}: {v}")
    print(f"report: {args.out / 'summary.md'}")
    return 1 if any(r["status"] == "error" for recs in passes.values() for r in recs) else 0


if __name__ == "__main__":
    sys.exit(main())
