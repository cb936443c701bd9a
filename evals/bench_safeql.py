"""Benchmark SafeQL refinement on real LLM-written SQL (Spider dev, BIRD dev) without any LLM.

    python evals/bench_safeql.py --out evals/out [--systems DAIL-SQL_GPT-4 ...] [--limit N]

Every prediction and its gold query run on the benchmark's SQLite file (read-only). Only predictions
that fail or return no rows are handed to ``refine``; the rest are left as they are. One JSON line
per (benchmark, system, question) goes to a ResultLog, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from actsagent.benchmarks import data_root
from actsagent.config import Limits
from actsagent.db.base import Database
from actsagent.db.sqlite import SqliteDatabase
from actsagent.reporting import Report, ReportTable, ResultLog
from actsagent.safeql import RefineOptions, refine
from actsagent.safeql.catalog import get_catalog

DEFAULT_SYSTEMS = {
    "spider_dev": [
        "DAIL-SQL_GPT-4",
        "DIN-SQL_GPT-4",
        "C3-SQL_GPT-3.5",
        "SFT_CodeS-15B",
        "Pretrained_Llama3-8B",
        "Pretrained_Llama2-7B",
    ],
    "bird_dev": ["DAIL-SQL_GPT-4", "C3-SQL_GPT-3.5", "SFT_CodeS-15B_EK"],
    # BIRD mini-dev PostgreSQL predictions, run on the embedded PostgreSQL (the three BIRD databases loaded there)
    "bird_minidev_pg": [
        "gpt-4_postgresql",
        "gpt-4-turbo_postgresql",
        "gpt-4-32k_postgresql",
        "gpt-35-turbo_postgresql",
        "gpt-35-turbo-instruct_postgresql",
        "meta-llama-3-70b-instruct-2_postgresql",
        "meta-llama-3-8b-instruct-2_postgresql",
        "mistralai-mixtral-8x7b-instru-4_postgresql",
        "phi-3-medium-128k-instruct-1_postgresql",
    ],
}
PG_PREFIX = "actsagent_bench_"
BIRD_DBS = ("superhero", "toxicology", "student_club")
EXEC_TIMEOUT_S = 10.0
MAX_ROWS = 200_000


def _db_path(data: Path, bench: str, db_id: str) -> Path:
    return data / bench / "databases" / db_id / f"{db_id}.sqlite"


def _norm_value(v):
    if isinstance(v, float):
        return round(v, 6)
    if isinstance(v, bytes | bytearray | memoryview):
        return bytes(v).hex()
    return v


def _key_rows(rows, ordered: bool):
    norm = [tuple(_norm_value(v) for v in r) for r in rows]
    if ordered:
        return norm
    return sorted(norm, key=lambda t: tuple((v is None, str(type(v)), str(v)) for v in t))


def _outcome(res) -> tuple[str, str | None]:
    if not res.ok:
        return "fail", res.error_class.value
    return ("empty" if res.empty else "rows"), None


class Runner:
    def __init__(self, data: Path, opts: RefineOptions) -> None:
        self.data = data
        self.opts = opts
        self.dbs: dict[tuple[str, str], SqliteDatabase] = {}
        self.gold: dict[tuple[str, int], object] = {}
        self.builds: dict[str, float] = {}

    def db(self, bench: str, db_id: str) -> Database:
        key = (bench, db_id)
        if key not in self.dbs:
            limits = Limits(statement_timeout_s=EXEC_TIMEOUT_S, max_rows=MAX_ROWS)
            if bench == "bird_minidev_pg":
                self.dbs[key] = _pg_copy(self.data, db_id, limits)
            else:
                self.dbs[key] = SqliteDatabase(_db_path(self.data, bench, db_id), limits=limits)
            t0 = time.perf_counter()
            get_catalog(self.dbs[key])
            self.builds[f"{bench}/{db_id}"] = (time.perf_counter() - t0) * 1000
        return self.dbs[key]

    def gold_result(self, bench: str, q: dict):
        key = (bench, q["idx"])
        if key not in self.gold:
            self.gold[key] = self.db(bench, q["db_id"]).execute(q["gold_sql"], max_rows=MAX_ROWS)
        return self.gold[key]

    def one(self, bench: str, system: str, q: dict, pred: str) -> dict:
        db = self.db(bench, q["db_id"])
        gold = self.gold_result(bench, q)
        ordered = "order by" in q["gold_sql"].lower()
        gold_rows = _key_rows(gold.rows, ordered)
        before = db.execute(pred, max_rows=MAX_ROWS)
        b_out, b_cls = _outcome(before)
        match_before = before.ok and _key_rows(before.rows, ordered) == gold_rows
        rec = {
            "key": f"{bench}|{system}|{q['idx']}",
            "bench": bench,
            "system": system,
            "idx": q["idx"],
            "db_id": q["db_id"],
            "before": b_out,
            "before_class": b_cls,
            "before_message": None if before.ok else before.message[:200],
            "match_before": match_before,
            "gold_empty": not gold.rows,
            "touched": False,
            "after": b_out,
            "after_class": b_cls,
            "match_after": match_before,
        }
        if b_out == "rows":
            return rec
        rec["touched"] = True
        res = refine(db, pred, options=self.opts)
        rec.update(
            status=res.status,
            why=res.why,
            refine_ms=round(res.elapsed_ms, 2),
            catalog_ms=round(res.catalog_ms, 2),
            explored=res.candidates_explored,
            pruned_type=res.pruned_by_type,
            operators=[e.operator for e in res.edits],
            refined_sql=res.refined_sql,
        )
        if res.status == "refined":
            after = db.execute(res.refined_sql, max_rows=MAX_ROWS)
            a_out, a_cls = _outcome(after)
            rec.update(
                after=a_out,
                after_class=a_cls,
                match_after=bool(after.ok and _key_rows(after.rows, ordered) == gold_rows),
            )
        return rec


def _pg_copy(data: Path, db_id: str, limits: Limits) -> Database:
    """The BIRD SQLite file loaded once into the embedded PostgreSQL (kept for later runs)."""
    from actsagent.db.loader import load_embedded
    from actsagent.db.postgres import PostgresDatabase

    loaded = load_embedded(_db_path(data, "bird_dev", db_id), PG_PREFIX + db_id, if_exists="reuse")
    return PostgresDatabase(loaded.url, limits=limits)


def _questions(data: Path, bench: str) -> list[dict]:
    if bench == "bird_minidev_pg":
        raw = json.loads((data / "bird_minidev" / "mini_dev_postgresql.json").read_text())
        return [{"idx": i, "db_id": q["db_id"], "gold_sql": q["SQL"]} for i, q in enumerate(raw)]
    return json.loads((data / bench / "questions.json").read_text())


def _predictions_dir(data: Path, bench: str) -> Path:
    return data / ("bird_minidev" if bench == "bird_minidev_pg" else bench) / "predictions"


def load_items(data: Path, benches: list[str], systems: list[str] | None, limit: int | None):
    items = []
    notes = []
    for bench in benches:
        questions = _questions(data, bench)
        names = systems or DEFAULT_SYSTEMS[bench]
        for system in names:
            path = _predictions_dir(data, bench) / f"{system}.json"
            if not path.exists():
                alt = _predictions_dir(data, bench) / f"{system}_EK.json"
                if bench == "bird_dev" and alt.exists():
                    path, system = alt, f"{system}_EK"
                else:
                    notes.append(f"{bench}: no predictions file for {system}; skipped")
                    continue
            preds = json.loads(path.read_text())
            chosen = []
            for q, pred in zip(questions, preds):
                if bench in ("bird_dev", "bird_minidev_pg") and q["db_id"] not in BIRD_DBS:
                    continue
                chosen.append((bench, system, q, pred))
            items += chosen[:limit] if limit else chosen
    return items, notes


def summarise(records: list[dict], builds: dict[str, float]) -> Report:
    by = defaultdict(list)
    for r in records:
        if r.get("skipped"):
            continue
        by[(r["bench"], r["system"])].append(r)
    rows = []
    cls_rows = Counter()
    cls_res = Counter()
    all_ms = []
    tot = Counter()
    for (bench, system), rs in sorted(by.items()):
        n = len(rs)
        fb = sum(r["before"] == "fail" for r in rs)
        fa = sum(r["after"] == "fail" for r in rs)
        eb = sum(r["before"] == "empty" for r in rs)
        ea = sum(r["after"] == "empty" for r in rs)
        resolved = sum(r["before"] == "fail" and r["after"] != "fail" for r in rs)
        mb = sum(r["match_before"] for r in rs)
        ma = sum(r["match_after"] for r in rs)
        broke = sum(r["match_before"] and not r["match_after"] for r in rs)
        fixed = sum(not r["match_before"] and r["match_after"] for r in rs)
        ms = [r["refine_ms"] for r in rs if r.get("status") == "refined"]
        all_ms += ms
        rows.append(
            [
                bench,
                system,
                n,
                fb,
                fa,
                resolved,
                f"{100 * resolved / fb:.1f}" if fb else "-",
                eb,
                ea,
                f"{100 * mb / n:.1f}",
                f"{100 * ma / n:.1f}",
                fixed,
                broke,
                f"{statistics.median(ms):.1f}" if ms else "-",
                f"{_p95(ms):.1f}" if ms else "-",
            ]
        )
        for r in rs:
            if r["before"] == "fail":
                cls_rows[(bench, r["before_class"])] += 1
                cls_res[(bench, r["before_class"])] += r["after"] != "fail"
        tot.update(n=n, fb=fb, fa=fa, resolved=resolved, eb=eb, ea=ea, mb=mb, ma=ma, broke=broke, fixed=fixed)
    summary = {
        "predictions": tot["n"],
        "exec_failures_before": tot["fb"],
        "exec_failures_after": tot["fa"],
        "failures_resolved": tot["resolved"],
        "failures_resolved_pct": round(100 * tot["resolved"] / tot["fb"], 1) if tot["fb"] else None,
        "empty_before": tot["eb"],
        "empty_after": tot["ea"],
        "ex_before_pct": round(100 * tot["mb"] / tot["n"], 2) if tot["n"] else None,
        "ex_after_pct": round(100 * tot["ma"] / tot["n"], 2) if tot["n"] else None,
        "wrong_to_correct": tot["fixed"],
        "correct_to_wrong": tot["broke"],
        "refined_median_ms": round(statistics.median(all_ms), 1) if all_ms else None,
        "refined_p95_ms": round(_p95(all_ms), 1) if all_ms else None,
        "refined_queries": len(all_ms),
        "index_build_ms_total": round(sum(builds.values()), 1),
    }
    # the same runs seen as if only execution failures were refined (empty results left as they are)
    valid = [r for r in records if not r.get("skipped")]
    m_err = sum(r["match_after"] if r["before"] == "fail" else r["match_before"] for r in valid)
    summary["ex_after_errors_only_pct"] = round(100 * m_err / len(valid), 2) if valid else None
    summary["correct_to_wrong_errors_only"] = sum(
        r["match_before"] and not r["match_after"] for r in valid if r["before"] == "fail"
    )
    # Spider wta_1 lacks its rankings table: failures naming it cannot be resolved on this copy
    missing = [
        r
        for r in valid
        if r["before"] == "fail" and "rankings" in (r.get("before_message") or "") and r["db_id"] == "wta_1"
    ]
    fb_ok = tot["fb"] - len(missing)
    res_ok = tot["resolved"] - sum(r["after"] != "fail" for r in missing)
    summary["failures_naming_missing_wta1_rankings"] = len(missing)
    summary["failures_resolved_pct_excluding_missing_table"] = round(100 * res_ok / fb_ok, 1) if fb_ok else None
    broke_gold_empty = sum(r["match_before"] and not r["match_after"] and r["gold_empty"] for r in valid)
    summary["correct_to_wrong_where_gold_is_empty"] = broke_gold_empty
    bench_rows = []
    for bench in sorted({b for b, _ in by}):
        rs = [r for (b, _), xs in by.items() if b == bench for r in xs]
        fb = sum(r["before"] == "fail" for r in rs)
        res = sum(r["before"] == "fail" and r["after"] != "fail" for r in rs)
        ms = [r["refine_ms"] for r in rs if r.get("status") == "refined"]
        bench_rows.append(
            [
                bench,
                len(rs),
                fb,
                res,
                f"{100 * res / fb:.1f}" if fb else "-",
                sum(r["before"] == "empty" for r in rs),
                sum(r["after"] == "empty" for r in rs),
                f"{100 * sum(r['match_before'] for r in rs) / len(rs):.2f}",
                f"{100 * sum(r['match_after'] for r in rs) / len(rs):.2f}",
                sum(r["match_before"] and not r["match_after"] for r in rs),
                f"{statistics.median(ms):.1f}" if ms else "-",
                f"{_p95(ms):.1f}" if ms else "-",
            ]
        )
    tables = [
        ReportTable(
            title="Per benchmark",
            columns=[
                "bench",
                "n",
                "fail before",
                "resolved",
                "resolved %",
                "empty before",
                "empty after",
                "EX before %",
                "EX after %",
                "right->wrong",
                "median ms",
                "p95 ms",
            ],
            rows=bench_rows,
        ),
        ReportTable(
            title="Per benchmark and system",
            columns=[
                "bench",
                "system",
                "n",
                "fail before",
                "fail after",
                "resolved",
                "resolved %",
                "empty before",
                "empty after",
                "EX before %",
                "EX after %",
                "wrong->right",
                "right->wrong",
                "median ms",
                "p95 ms",
            ],
            rows=rows,
        ),
        ReportTable(
            title="Execution failures resolved per error class",
            columns=["bench", "error class", "failures", "resolved", "resolved %"],
            rows=[
                [b, c, n, cls_res[(b, c)], f"{100 * cls_res[(b, c)] / n:.1f}"] for (b, c), n in sorted(cls_rows.items())
            ],
        ),
        ReportTable(
            title="Index build (catalog) time per database",
            columns=["database", "build ms"],
            rows=[[k, round(v, 1)] for k, v in sorted(builds.items())],
        ),
    ]
    used = Counter(op for r in valid if r.get("status") == "refined" for op in set(r.get("operators") or []))
    right = Counter(
        op
        for r in valid
        if r.get("status") == "refined" and r["match_after"] and not r["match_before"]
        for op in set(r.get("operators") or [])
    )
    tables.append(
        ReportTable(
            title="Operators on the refinement path (refined queries)",
            columns=["operator", "refined queries using it", "of which now correct"],
            rows=[[op, n, right[op]] for op, n in used.most_common()],
        )
    )
    gave = Counter((r.get("why") or "")[:70] for r in records if r.get("status") == "gave_up")
    tables.append(
        ReportTable(
            title="Why refinement gave up (top 15)",
            columns=["why", "count"],
            rows=[[w, n] for w, n in gave.most_common(15)],
        )
    )
    return Report(name="SafeQL refinement on real errors", summary=summary, tables=tables)


def _p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]


def main(argv: list[str] | None = None) -> int:
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # predictions hold CREATE TABLE etc.: no warnings
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="evals/out")
    ap.add_argument("--data", default=None, help="the realerrors folder (default: benchmarks.data_root())")
    ap.add_argument("--systems", nargs="*", default=None, help="prediction file stems (default: the six main ones)")
    ap.add_argument("--benchmarks", nargs="*", default=["spider_dev", "bird_dev", "bird_minidev_pg"])
    ap.add_argument("--limit", type=int, default=None, help="first N questions per benchmark and system")
    ap.add_argument("--time-limit", type=float, default=5.0, help="search time limit per query (s)")
    args = ap.parse_args(argv)
    data = Path(args.data) if args.data else data_root()
    if not (data / "spider_dev").is_dir():
        print(f"error: no realerrors data under {data}", file=sys.stderr)
        return 2
    for b in args.benchmarks:
        if b not in DEFAULT_SYSTEMS:
            print(f"error: unknown benchmark {b!r} ({', '.join(DEFAULT_SYSTEMS)})", file=sys.stderr)
            return 2
    out = Path(args.out)
    log = ResultLog(out / "bench_safeql.jsonl", key="key")
    builds_log = ResultLog(out / "bench_safeql_index.jsonl", key="db")
    opts = RefineOptions(time_limit_s=args.time_limit)
    items, notes = load_items(data, args.benchmarks, args.systems, args.limit)
    pending = log.pending(items, lambda it: f"{it[0]}|{it[1]}|{it[2]['idx']}")
    runner = Runner(data, opts)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) as prog:
        task = prog.add_task("refining", total=len(items), completed=len(items) - len(pending))
        for bench, system, q, pred in pending:
            prog.update(task, description=f"{bench} {system[:24]} {q['db_id'][:16]}")
            if bench == "spider_dev" and q["db_id"] == "wta_1" and not runner.gold_result(bench, q).ok:
                log.append(
                    {
                        "key": f"{bench}|{system}|{q['idx']}",
                        "bench": bench,
                        "system": system,
                        "idx": q["idx"],
                        "db_id": q["db_id"],
                        "skipped": "gold fails (wta_1 is partial)",
                    }
                )
            else:
                log.append(runner.one(bench, system, q, pred))
            prog.advance(task)
    done_builds = builds_log.done()
    for db, ms in runner.builds.items():
        if db not in done_builds:
            builds_log.append({"db": db, "build_ms": round(ms, 1)})
    builds = {r["db"]: r["build_ms"] for r in builds_log.records()}
    wanted = {f"{b}|{s}|{q['idx']}" for b, s, q, _ in items}
    records = [r for r in log.records() if r["key"] in wanted]
    report = summarise(records, builds)
    skipped = sum(1 for r in records if r.get("skipped"))
    report.config = {
        "systems": sorted({s for _, s, _, _ in items}),
        "benchmarks": args.benchmarks,
        "limit": args.limit,
        "alpha": opts.alpha,
        "k": opts.k,
        "max_depth": opts.max_depth,
        "max_expansions": opts.max_expansions,
        "time_limit_s": opts.time_limit_s,
        "embedding_model": os.environ.get("ACTSAGENT_EMBED_MODEL_PATH", "default"),
    }
    report.notes = notes + [
        f"Spider wta_1 is partial (no rankings table): questions whose gold SQL fails there are skipped "
        f"({skipped} records: 8 questions x the Spider systems); the other wta_1 questions are evaluated, and "
        "predictions that name the missing rankings table count as unresolved failures (reported apart too).",
        "correct_to_wrong counts empty predictions whose gold is also empty and which value refinement turned "
        "into rows (Spider flight_2 stores airport codes with a leading space, so its gold returns nothing); "
        "ex_after_errors_only_pct / correct_to_wrong_errors_only show the same run if only execution failures "
        "were refined.",
        "BIRD dev: only superhero, toxicology and student_club (432 questions) have databases.",
        "bird_minidev_pg: BIRD mini-dev PostgreSQL predictions and gold SQL for the 140 questions on those three "
        "databases, each loaded from its SQLite file into the embedded PostgreSQL (actsagent_bench_<db>), where "
        "the catalog is stored with pgvector.",
        "Only predictions that fail or return no rows are refined; EX compares multisets of rows "
        "(ordered lists when the gold SQL has ORDER BY), floats rounded to 6 places.",
        "'resolved' = an execution failure whose refined query executes; refine never reports 'refined' "
        "for SQL that does not execute.",
        "Times are per refined query, after the catalog was built; index build time is reported apart.",
    ]
    jp, mp = report.write(out, "bench_safeql")
    print(json.dumps(report.summary, indent=2))
    print(f"wrote {jp} and {mp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
