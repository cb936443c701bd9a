"""Build the degraded-schema variant of Spider dev and BIRD dev (EGRefine's controlled degradation).

Every table and column gets a seeded obscure name (abbreviations such as ``cntry``/``dname``/``cnt_k12``,
positional codes such as ``A2`` for a share of tables) in a copy of each SQLite file; each gold SQL is
rewritten through sqlglot and kept only when it returns the original gold's rows. Hints are left out.
``--level hard``: no name keeps a lexical link to its meaning (tables ``T07``, columns ``C4``/``c07``, keys
``id03``). Beside each degraded file, ``data_dictionary.json`` (the glossary format of ``kb build``) describes
every degraded table and column in words made from its original name - what a team's data dictionary holds.

    python evals/make_degraded.py [--out evals/out/degraded] [--seed 0] [--code-share 0.2] [--level default|hard]
                                  [--load-pg]

``--load-pg`` also loads every degraded file into the embedded PostgreSQL as ``degraded_<db>``
(``degraded_hard_<db>`` for the hard level).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    from actsagent.benchmarks import data_root, db_path, pg_copy
    from actsagent.degrade import LEVELS, build_degraded_set
    from actsagent.reporting import Report, ReportTable

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="realerrors folder (default: shared/data/realerrors)")
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "out" / "degraded")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--code-share", type=float, default=0.2, help="share of tables whose columns become codes")
    ap.add_argument("--level", default="default", help="default (abbreviations, some codes) or hard (codes only)")
    ap.add_argument("--load-pg", action="store_true", help="load the degraded files into the embedded PostgreSQL")
    args = ap.parse_args(argv)
    if not 0 <= args.code_share <= 1:
        print("error: --code-share must be between 0 and 1", file=sys.stderr)
        return 2
    if args.level not in LEVELS:
        print(f"error: --level must be one of {', '.join(LEVELS)}", file=sys.stderr)
        return 2
    root = args.data or data_root()
    summary = build_degraded_set(
        root,
        args.out,
        seed=args.seed,
        code_share=args.code_share,
        level=args.level,
        progress=lambda b, d, k, x: print(f"{b}/{d}: kept {k}, dropped {x}", file=sys.stderr),
    )
    if args.load_pg:
        for bench in summary:
            for q_db in sorted({q["db_id"] for q in json.loads((args.out / bench / "questions.json").read_text())}):
                prefix = "degraded_" if args.level == "default" else f"degraded_{args.level}_"
                pg_copy(db_path(args.out, bench, q_db), f"{prefix}{q_db}"[:63], replace=True)
    report = Report(
        name="Degraded schema set",
        config={"seed": args.seed, "code_share": args.code_share, "level": args.level, "out": str(args.out)},
    )
    for bench, s in summary.items():
        report.summary[f"{bench}_kept"] = f"{s['kept']} of {s['questions']}"
        report.notes += s["notes"]
    report.tables.append(
        ReportTable(
            title="Dropped questions by reason",
            columns=["benchmark", "reason", "count"],
            rows=[[b, r, n] for b, s in summary.items() for r, n in s["dropped_by_reason"].items()],
        )
    )
    paths = report.write(args.out, "degraded_set")
    for bench, s in summary.items():
        print(f"{bench}: kept {s['kept']} of {s['questions']} questions; dropped {s['dropped_by_reason'] or 'none'}")
    print("wrote " + " and ".join(map(str, paths)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
