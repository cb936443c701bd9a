"""Benchmark ``actsagent clean`` (no LLM) on real model-written SQL for Spider dev questions.

Pairs are (question, predicted SQL, SQLite database) from one prediction file of
``shared/data/realerrors``. The cleaner's verdicts are compared with the gold SQL by execution
(rows as multisets): how many kept pairs are right, how many repairs made the answer right,
how many rejected pairs were actually right. Writes ``evals/out/clean/`` (verdicts JSONL,
the cleaner's own summary, and ``bench_clean.json``/``.md``).

    python evals/bench_clean.py [--system Ablation_SFT_Llama2-7B-1000] [--limit 300] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import time
from collections import Counter
from pathlib import Path

from actsagent.benchmarks import data_root

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "evals" / "out" / "clean"
PARTIAL_DBS = {"wta_1"}  # rebuilt, partial: results would not be comparable


def build_input(system: str, limit: int | None, path: Path) -> int:
    spider = data_root() / "spider_dev"
    questions = json.loads((spider / "questions.json").read_text())
    preds = json.loads((spider / "predictions" / f"{system}.json").read_text())
    rows = []
    for q, sql in zip(questions, preds, strict=True):
        db = spider / "databases" / q["db_id"] / f"{q['db_id']}.sqlite"
        if q["db_id"] in PARTIAL_DBS or not db.exists() or not (sql or "").strip():
            continue
        rows.append({"id": q["idx"], "question": q["question"], "sql": sql, "db": str(db), "gold": q["gold_sql"]})
    rows = rows[:limit] if limit else rows
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)


def _rows(db: str, sql: str) -> Counter | None:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    deadline = time.monotonic() + 10
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        return Counter(tuple(r) for r in conn.execute(sql).fetchmany(100_000))
    except (sqlite3.Error, ValueError):
        return None
    finally:
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default="Ablation_SFT_Llama2-7B-1000")
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    from actsagent.clean import clean_file
    from actsagent.reporting import Report, ReportTable

    src = args.out / f"{args.system}_pairs.jsonl"
    n = build_input(args.system, args.limit, src)
    verdicts = args.out / f"{args.system}_verdicts.jsonl"
    t0 = time.perf_counter()
    summary = clean_file(src, verdicts, workers=args.workers, use_llm=False)
    wall = time.perf_counter() - t0
    gold = {str(json.loads(x)["id"]): json.loads(x)["gold"] for x in src.read_text().splitlines()}
    by: dict[str, list[bool]] = {"kept": [], "repaired": [], "rejected": []}
    before: list[bool] = []
    for line in verdicts.read_text().splitlines():
        r = json.loads(line)
        expected = _rows(r["db"], gold[str(r["id"])])
        right_before = expected is not None and _rows(r["db"], r["original_sql"]) == expected
        final = r.get("repaired_sql") or r["original_sql"]
        right_after = expected is not None and _rows(r["db"], final) == expected
        before.append(right_before)
        by[r["verdict"]].append(right_after if r["verdict"] == "repaired" else right_before)
    usable = by["kept"] + by["repaired"]
    rows = [[v, len(xs), sum(xs), round(100 * sum(xs) / len(xs), 1) if xs else 0.0] for v, xs in by.items()]
    report = Report(
        name="Training-data cleaning on real model-written SQL (no LLM)",
        config={
            "pairs": n,
            "source": f"realerrors/spider_dev/predictions/{args.system}.json",
            "workers": args.workers,
            "verdicts": str(verdicts),
        },
        summary={
            "pairs": n,
            "correct_before_cleaning_pct": round(100 * sum(before) / len(before), 1),
            "usable_after_cleaning": len(usable),
            "correct_among_usable_pct": round(100 * sum(usable) / len(usable), 1) if usable else 0.0,
            "repaired_now_correct": sum(by["repaired"]),
            "rejected_but_correct": sum(by["rejected"]),
            "seconds_per_pair": round(wall / max(n, 1), 3),
            **{f"cleaner_{k}": v for k, v in summary.summary.items() if k in ("kept", "repaired", "rejected")},
        },
        tables=[
            ReportTable(
                title="Verdicts against gold (execution match)",
                columns=["verdict", "pairs", "correct", "correct %"],
                rows=rows,
            )
        ],
        notes=[
            "'correct' compares result multisets with the gold SQL's on the same SQLite database.",
            "For kept and rejected pairs the original SQL is compared; for repaired pairs the repaired SQL.",
            "No LLM: meaning is not judged, so kept pairs that run but answer the wrong question stay in.",
        ],
    )
    report.write(args.out, stem="bench_clean")
    print(report.to_markdown())


if __name__ == "__main__":
    main()
