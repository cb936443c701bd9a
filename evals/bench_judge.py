"""Judge benchmark: how often the agent's judge accepts a candidate the BIRD-CRITIC scorer fails, and rejects one it passes.

Runs a system (``acts:tree`` by default; any spec ``actsagent birdcritic run`` takes) on BIRD-CRITIC
tasks through the configured OpenAI-compatible endpoint (OPENAI_BASE_URL, OPENAI_API_KEY,
ACTSAGENT_MODEL*), records every candidate the agent judged (task, node, SQL, verdict, whether it
was the final answer), labels each with our scorer in a fresh database copy, and reports the
judge's accept rate, precision and recall overall and per category, the final-answer pass rate,
and LLM calls, tokens and time per task (see ``actsagent.birdcritic.judge_bench``).

Tasks: ``--ids``, or ``--n`` drawn with ``--seed`` among the tasks whose gold ``sol_sql`` passes its
own tests here (all of those without ``--n``; a gold run in ``<out>/gold`` finds them). Every LLM
exchange goes through the response cache (``--cache read_write`` into ``<out>/llm_cache`` by
default), so a run can be replayed with ``--cache replay_only`` and no model request.

    OPENAI_BASE_URL=... OPENAI_API_KEY=... python evals/bench_judge.py --n 20 --seed 1
    python evals/bench_judge.py --ids 1,10 --system acts:tree@scripted --cache replay_only \\
        --cache-dir tests/fixtures/llm/bench_judge

Results: ``<out>/bench_judge.jsonl`` (one line per task, resumable) and ``<out>/bench_judge.{json,md}``.
PG-530 is held out: develop on flash.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "evals" / "out" / "bench_judge"
CACHE_MODES = ("read_write", "replay_only", "off")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--system", default="acts:tree", help="system spec, as `actsagent birdcritic run --system` [acts:tree]"
    )
    p.add_argument("--set", dest="task_set", default="flash", choices=["flash", "pg530", "open-pg"])
    p.add_argument("--ids", default="", help="comma-separated instance ids (taken as given)")
    p.add_argument("--n", type=int, default=None, help="draw N tasks among those whose gold passes [all of them]")
    p.add_argument("--seed", type=int, default=0, help="seed of the draw [0]")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"results folder [{DEFAULT_OUT}]")
    p.add_argument(
        "--cache",
        default="read_write",
        choices=CACHE_MODES,
        help="LLM response cache: read_write records every exchange, replay_only sends nothing [read_write]",
    )
    p.add_argument("--cache-dir", type=Path, default=None, help="cache folder [<out>/llm_cache]")
    p.add_argument("--workers", type=int, default=2, help="workers of the gold run that finds drawable tasks [2]")
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def chat_model(spec: str, cache: str, cache_dir: Path):
    """The model for an agent spec: the environment's endpoint and models, ``@name`` for every role, our cache."""
    from actsagent import llm
    from actsagent.errors import UserError

    name = spec.partition("@")[2]
    overrides: dict = {"cache_mode": cache, "cache_dir": cache_dir}
    if name:
        overrides["models"] = llm.RoleModels(planner=name, tools=name, judge=name)
    if cache == "replay_only":
        llm.openai_model.ALLOW_MODEL_REQUESTS = False  # a missing recording fails the task; nothing reaches a model
        overrides |= {"base_url": "http://127.0.0.1:9/v1", "api_key": "none"}
    config = llm.LLMConfig.from_env(**overrides)
    if cache != "replay_only" and not (config.base_url or config.api_key):
        raise UserError(
            "no LLM endpoint: set OPENAI_BASE_URL and/or OPENAI_API_KEY, or replay with --cache replay_only"
        )
    return llm.get_chat_model(config)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # one warning per opaque statement (DO blocks, ALTER TYPE)
    if args.n is not None and args.n < 1:
        print("error: --n must be at least 1", file=sys.stderr)
        return 2
    from actsagent.birdcritic.judge_bench import draw, gold_passing, run_judge_bench
    from actsagent.birdcritic.systems import make_system
    from actsagent.birdcritic.tasks import load_tasks
    from actsagent.errors import ActsagentError

    cache_dir = (args.cache_dir or args.out / "llm_cache").resolve()
    try:
        agent = args.system.startswith("acts:") or args.system.partition("@")[0] == "single_shot"
        model = chat_model(args.system, args.cache, cache_dir) if agent else None
        system = make_system(args.system, args.task_set, model=model)
        ids = [i.strip() for i in args.ids.split(",") if i.strip()]
        config = {"cache": args.cache, "cache_dir": str(cache_dir)}
        if ids:
            tasks = load_tasks(args.task_set, ids=ids)
            config["selection"] = "ids as given"
        else:
            eligible = gold_passing(
                args.task_set, args.out / "gold", workers=args.workers, progress=not args.no_progress
            )
            tasks = draw(load_tasks(args.task_set), eligible, args.n, args.seed)
            config["selection"] = f"{len(tasks)} of the {len(eligible)} tasks whose gold passes" + (
                f", drawn with seed {args.seed}" if args.n is not None else ""
            )
        report = run_judge_bench(args.task_set, system, tasks, args.out, progress=not args.no_progress, config=config)
    except ActsagentError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    show(report, args.out / "bench_judge.md")
    return 1 if report.summary.get("errors") else 0


def show(report, path: Path) -> None:
    """The summary and the judge's figures by category; the per-task table stays in the report file."""
    width = max(map(len, report.summary), default=0)
    lines = [f"{k:<{width}}  {v}" for k, v in report.summary.items()]
    cat = next((t for t in report.tables if t.title == "By category"), None)
    if cat is not None:
        lines += ["", " | ".join(cat.columns), *(" | ".join(map(str, r)) for r in cat.rows)]
    print("\n".join([*lines, "", f"report: {path}"]))


if __name__ == "__main__":
    sys.exit(main())
