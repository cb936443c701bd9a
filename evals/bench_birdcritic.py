"""BIRD-CRITIC on the sample databases: run systems, or validate the scorer.

Each run writes ``evals/out/birdcritic/<set>/<system>/`` with ``results.jsonl`` (one line per
task, resumable), ``summary.json``/``summary.md`` (by category and database; LLM calls, tokens
and time per task) and PNG plots. ``--validate`` scores gold ``sol_sql`` against ``checks/``,
``issue_sql`` and the six official baselines, and writes ``validation.md``.

    python evals/bench_birdcritic.py --set flash --system issue_sql --system acts:tree [--limit N] [--workers 2]
    python evals/bench_birdcritic.py --validate [--set flash --set pg530]

PG-530 is held out: develop on flash, never tune prompts or rules on pg530 results.
"""

from __future__ import annotations

import argparse
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", dest="sets", action="append", choices=["flash", "pg530", "open-pg"])
    ap.add_argument(
        "--system",
        dest="systems",
        action="append",
        help="issue_sql | baseline:<model> | acts:tree | acts:linear | acts:regenerate | single_shot",
    )
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--ids", nargs="*")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--validate", action="store_true", help="scorer validation: gold, issue_sql, baselines")
    args = ap.parse_args()
    sets = args.sets or (["flash", "pg530"] if args.validate else ["flash"])

    if args.validate:
        from actsagent.birdcritic.validate import validate

        report = validate(args.out / "birdcritic_validation", sets=sets, workers=args.workers, limit=args.limit)
        print(report.to_markdown())
        return

    from actsagent.birdcritic.runner import run_benchmark
    from actsagent.birdcritic.systems import make_system

    for s in sets:
        for spec in args.systems or ["issue_sql"]:
            folder = args.out / "birdcritic" / s / spec.replace(":", "_").replace("@", "_").replace("/", "_")
            report = run_benchmark(
                s, make_system(spec, s), folder, workers=args.workers, limit=args.limit, ids=args.ids
            )
            print(
                f"{s} {spec}: {report.summary['passed']}/{report.summary['tasks']} passed "
                f"({report.summary['accuracy_all']}%), report in {folder}"
            )


if __name__ == "__main__":
    main()
