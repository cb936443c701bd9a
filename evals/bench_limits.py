"""Benchmark the resource limits: hostile queries through actsagent on the embedded default.

Each query runs in a fresh client process (``ensure_demo()``: the demo database, queried as
the read-only role, default ``Limits``), so its figures are its own:

- wall time of ``Database.execute``, against the bound ``statement_timeout_s * 1.1``;
- the client's peak RSS during the query (``VmHWM`` after resetting it through ``/proc/self/clear_refs``),
  over its RSS just before, against ``3 * max_result_bytes``;
- the server backend's peak RSS (``VmHWM`` of the backend process, which lives only for this client),
  against ``max_server_memory_mb`` + shared_buffers + 64 MB for one polling interval of the watchdog.

The same queries run on SQLite files through ``SqliteDatabase`` (no server: client figures only).
``--baseline`` adds what actsagent did before the limits: raw psycopg as the superuser, statement_timeout
only, ``execute`` + ``fetchmany(1001)`` (it reads the whole result; it used 1.5 GB and 8 s on wide rows).

    python evals/bench_limits.py [--out evals/out] [--baseline] [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024

PG_QUERIES = {
    "wide_rows": "SELECT repeat('x', 500000) FROM generate_series(1, 1000)",
    "temp_files": "SELECT count(*) FROM generate_series(1, 10000000000)",
    "string_agg_1gb": "SELECT string_agg(repeat('x', 500000), ',') FROM generate_series(1, 2000)",
    "one_200mb_value": "SELECT repeat('x', 200000000)",
    "slow_transfer": "SELECT repeat('x', 10000), pg_sleep(0.01) FROM generate_series(1, 3000)",
    "sleep": "SELECT pg_sleep(30)",
}
SQLITE_QUERIES = {
    "wide_rows": (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000) "
        "SELECT printf('%.*c', 500000, 'x') FROM r"
    ),
    "huge_blob": "SELECT zeroblob(1000000000)",
    "endless_recursion": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "group_concat_1gb": (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2000) "
        "SELECT group_concat(printf('%.*c', 500000, 'x')) FROM r"
    ),
}


def _status(pid: int | str, field: str) -> int:
    """A ``Vm*`` field of /proc/<pid>/status in bytes (0 when the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
        return True
    except OSError:
        return False


def child(engine: str, name: str, baseline: bool, sqlite_path: str | None) -> dict:
    """Run one query in this (fresh) process and measure it."""
    from actsagent.config import Limits

    limits = Limits()
    backend = None
    if engine == "sqlite":
        from actsagent.db.sqlite import SqliteDatabase

        db = SqliteDatabase(sqlite_path, limits=limits)
        sql = SQLITE_QUERIES[name]
        db.execute("SELECT 1")

        def run():
            return db.execute(sql)
    elif baseline:
        import psycopg

        from actsagent.db import embedded

        conn = psycopg.connect(embedded.server_url("actsagent_demo"))
        conn.execute(f"SET statement_timeout = {int(limits.statement_timeout_s * 1000)}")
        backend = conn.info.backend_pid
        sql = PG_QUERIES[name]

        def run():
            try:
                cur = conn.execute(sql)
                rows = cur.fetchmany(limits.max_rows + 1)
                return {"ok": True, "rows": len(rows)}
            except psycopg.Error as e:
                return {"ok": False, "error": str(e).splitlines()[0]}
    else:
        from actsagent.demo import ensure_demo

        db = ensure_demo()
        sql = PG_QUERIES[name]
        backend = db.execute("SELECT pg_backend_pid()").rows[0][0]

        def run():
            return db.execute(sql)

    reset = _reset_peak()
    rss0 = _status("self", "VmRSS")
    start = time.perf_counter()
    res = run()
    wall = time.perf_counter() - start
    out = {
        "wall_s": wall,
        "client_rss_before": rss0,
        "client_peak": _status("self", "VmHWM"),
        "peak_reset": reset,
        "backend_peak": _status(backend, "VmHWM") if backend else None,
        "timeout_s": limits.statement_timeout_s,
        "max_result_bytes": limits.max_result_bytes,
        "max_server_memory_mb": limits.max_server_memory_mb,
    }
    if isinstance(res, dict):
        out["outcome"] = f"{res['rows']} rows" if res["ok"] else f"error: {res['error']}"
    elif res.ok:
        out["outcome"] = f"{res.row_count} rows" + (f", cut by {res.truncated_by}" if res.truncated else "")
    else:
        out["outcome"] = f"{res.error_class.value}: {res.message}"
    if backend and not baseline and engine == "postgres":
        out["same_backend_after"] = db.execute("SELECT pg_backend_pid()").rows == [[backend]]
    return out


def _spawn(engine: str, name: str, baseline: bool, sqlite_path: str | None) -> dict:
    cmd = [sys.executable, __file__, "--child", engine, name] + (["--baseline"] if baseline else [])
    if sqlite_path:
        cmd += ["--sqlite", sqlite_path]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=False)
    if proc.returncode != 0:
        return {"outcome": f"child failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}", "wall_s": None}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _shared_buffers() -> int:
    import psycopg

    from actsagent.db import embedded

    with psycopg.connect(embedded.server_url("postgres")) as conn:
        return int(
            conn.execute(
                "SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings "
                "WHERE name = 'shared_buffers'"
            ).fetchone()[0]
        )


def main() -> None:
    from actsagent.reporting import Report, ReportTable

    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--out", default=str(ROOT / "evals" / "out"))
    ap.add_argument("--baseline", action="store_true", help="also run the raw-psycopg path actsagent used before")
    ap.add_argument("--only", help="run only this query name")
    args = ap.parse_args()

    from actsagent.config import Limits
    from actsagent.demo import ensure_demo

    ensure_demo().close()  # start the server and provision the demo database before timing anything
    limits = Limits()
    shared = _shared_buffers()
    wall_bound = limits.statement_timeout_s * 1.1
    client_bound = 3 * limits.max_result_bytes
    server_bound = limits.max_server_memory_mb * MIB + shared + 64 * MIB
    with tempfile.TemporaryDirectory() as tmp:
        sqlite_path = str(Path(tmp) / "empty.sqlite")
        import sqlite3

        sqlite3.connect(sqlite_path).execute("CREATE TABLE t (x int)").connection.commit()
        runs = [("postgres", n, False) for n in PG_QUERIES] + [("sqlite", n, False) for n in SQLITE_QUERIES]
        if args.baseline:
            runs += [("postgres", n, True) for n in PG_QUERIES]
        if args.only:
            runs = [r for r in runs if r[1] == args.only]
        rows, worst = [], {"wall_s": 0.0, "client_mb": 0.0, "backend_mb": 0.0}
        within = True
        for engine, name, baseline in runs:
            print(f"{engine} {name}{' (baseline)' if baseline else ''} ...", file=sys.stderr, flush=True)
            r = _spawn(engine, name, baseline, sqlite_path if engine == "sqlite" else None)
            wall = r.get("wall_s")
            client = (r["client_peak"] - r["client_rss_before"]) / MIB if r.get("client_peak") else None
            backend = r["backend_peak"] / MIB if r.get("backend_peak") else None
            ok = (
                wall is not None
                and wall <= wall_bound
                and (client or 0) <= client_bound / MIB
                and (backend or 0) <= server_bound / MIB
            )
            label = (
                "raw psycopg, superuser (before)"
                if baseline
                else ("actsagent" if engine == "postgres" else "actsagent (SQLite)")
            )
            if not baseline:
                within &= ok
                worst["wall_s"] = max(worst["wall_s"], wall or 0)
                worst["client_mb"] = max(worst["client_mb"], client or 0)
                worst["backend_mb"] = max(worst["backend_mb"], backend or 0)
            rows.append([name, label, r.get("outcome"), wall, client, backend, "yes" if ok else "NO"])
    report = Report(
        name="bench_limits",
        config={
            "statement_timeout_s": limits.statement_timeout_s,
            "max_rows": limits.max_rows,
            "max_result_bytes": limits.max_result_bytes,
            "work_mem_mb": limits.work_mem_mb,
            "temp_file_limit_mb": limits.temp_file_limit_mb,
            "max_server_memory_mb": limits.max_server_memory_mb,
            "shared_buffers_mb": shared / MIB,
            "database": "embedded default (actsagent_demo, read-only role)",
        },
        summary={
            "all_actsagent_runs_within_bounds": within,
            "wall_bound_s": wall_bound,
            "client_bound_mb": client_bound / MIB,
            "backend_bound_mb": server_bound / MIB,
            "worst_wall_s": worst["wall_s"],
            "worst_client_peak_over_start_mb": worst["client_mb"],
            "worst_backend_peak_mb": worst["backend_mb"],
        },
        tables=[
            ReportTable(
                title="Hostile resource queries",
                columns=[
                    "query",
                    "path",
                    "outcome",
                    "wall s",
                    "client peak over start MB",
                    "backend peak RSS MB",
                    "within bounds",
                ],
                rows=rows,
            )
        ],
        notes=[
            (
                f"bounds: wall <= timeout x 1.1 = {wall_bound:.1f} s; client peak RSS over its RSS before the query "
                f"<= 3 x result byte cap = {client_bound / MIB:.0f} MB; backend peak RSS <= max_server_memory_mb + "
                f"shared_buffers + 64 MB = {server_bound / MIB:.0f} MB"
            ),
            (
                "backend peak RSS includes the shared buffers the backend touched; the watchdog judges private "
                "memory (RssAnon) every 50 ms, so one large allocation (a value being copied for sending) can pass "
                "max_server_memory_mb by its own size before the cancel (PostgreSQL caps a value at 1 GB)"
            ),
            "each run is a fresh client process with a fresh backend, so the peaks are the query's own",
            "SQLite runs in the client process: its memory is the client's",
        ],
    )
    jp, mp = report.write(args.out)
    print(report.to_markdown())
    print(f"wrote {jp} and {mp}", file=sys.stderr)


if __name__ == "__main__":
    if "--child" in sys.argv:
        i = sys.argv.index("--child")
        engine, name = sys.argv[i + 1], sys.argv[i + 2]
        path = sys.argv[sys.argv.index("--sqlite") + 1] if "--sqlite" in sys.argv else None
        print(json.dumps(child(engine, name, "--baseline" in sys.argv, path)))
    else:
        main()
