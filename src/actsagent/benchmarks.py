"""Spider dev and BIRD dev as typed questions, their SQLite files, and each benchmark's result metric.

The degraded-schema builder, the retrieval benchmark and the ask benchmark read the same data
(``shared/data/realerrors``) and must compare results the same way: Spider as ordered lists when
the gold SQL orders, else as multisets; BIRD as sets (its official metric). Floats are rounded
to 6 decimals so engines' float formatting does not decide a match.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from actsagent.errors import UserError

Benchmark = Literal["spider_dev", "bird_dev"]
BENCHMARKS: tuple[str, ...] = ("spider_dev", "bird_dev")
BIRD_DBS = ("superhero", "toxicology", "student_club")  # the BIRD dev databases that could be retrieved
INCOMPLETE_DBS = {"wta_1"}  # rebuilt without its `rankings` table (see the data README)


class BenchQuestion(BaseModel):
    bench: str
    idx: int
    db_id: str
    question: str
    gold_sql: str
    evidence: str = ""
    difficulty: str = ""

    @property
    def key(self) -> str:
        return f"{self.bench}:{self.idx}"


def data_root() -> Path:
    """``ACTSAGENT_BENCH_DATA``, else ``shared/data/realerrors`` beside the checkout."""
    env = os.environ.get("ACTSAGENT_BENCH_DATA")
    if env:
        return Path(env)
    for base in (Path.cwd().parent, Path(__file__).resolve().parents[3]):
        cand = base / "shared" / "data" / "realerrors"
        if cand.is_dir():
            return cand
    raise UserError("benchmark data not found: set ACTSAGENT_BENCH_DATA to the realerrors folder")


def db_path(root: Path, bench: str, db_id: str) -> Path:
    return root / bench / "databases" / db_id / f"{db_id}.sqlite"


def load_questions(root: Path, bench: str) -> list[BenchQuestion]:
    """The benchmark's questions whose database is present (BIRD: three of eleven)."""
    if bench not in BENCHMARKS:
        raise UserError(f"unknown benchmark {bench!r}: use {' or '.join(BENCHMARKS)}")
    path = root / bench / "questions.json"
    if not path.is_file():
        raise UserError(f"no questions file at {path}")
    out = []
    for q in json.loads(path.read_text(encoding="utf-8")):
        if not db_path(root, bench, q["db_id"]).is_file():
            continue
        out.append(BenchQuestion(bench=bench, idx=q["idx"], db_id=q["db_id"], question=q["question"],
                                 gold_sql=q["gold_sql"], evidence=q.get("evidence") or "",
                                 difficulty=q.get("difficulty") or ""))
    return out


def metric_for(bench: str) -> Literal["ordered_or_multiset", "set"]:
    return "set" if bench.startswith("bird") else "ordered_or_multiset"


def _norm(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, Decimal):
        v = float(v)
    if isinstance(v, float):
        return int(v) if v.is_integer() else round(v, 6)
    if isinstance(v, bytes | bytearray | memoryview):
        return bytes(v).hex()
    return v


def result_key(rows: list[list[Any]] | list[tuple[Any, ...]], *, ordered: bool, as_set: bool = False) -> Any:
    """Rows in the comparable form a metric uses (values normalised across engines)."""
    norm = [tuple(repr(_norm(v)) for v in r) for r in rows]
    if as_set:
        return frozenset(norm)
    return norm if ordered else Counter(norm)


def same_result(gold_rows: list, pred_rows: list, *, bench: str, gold_sql: str) -> bool:
    """Whether the prediction's rows match the gold's under ``bench``'s metric."""
    if metric_for(bench) == "set":
        return result_key(gold_rows, ordered=False, as_set=True) == result_key(pred_rows, ordered=False, as_set=True)
    ordered = "order by" in " ".join(gold_sql.lower().split())
    return result_key(gold_rows, ordered=ordered) == result_key(pred_rows, ordered=ordered)


def run_sqlite(path: Path, sql: str, *, timeout_s: float = 30.0) -> tuple[bool, list[tuple] | str]:
    """Run ``sql`` on a read-only SQLite file: (True, rows) or (False, message); never raises for SQL."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.text_factory = lambda b: b.decode("utf-8", errors="replace")
    deadline = time.perf_counter() + timeout_s
    conn.set_progress_handler(lambda: 1 if time.perf_counter() > deadline else 0, 10_000)
    try:
        return True, conn.execute(sql).fetchall()
    except (sqlite3.Error, sqlite3.Warning, ValueError, OverflowError) as e:
        msg = str(e)
        return False, ("timeout" if msg == "interrupted" else f"{type(e).__name__}: {msg}")
    finally:
        conn.close()


def pg_copy(sqlite_path: Path, name: str, *, replace: bool = False) -> str:
    """URL of ``sqlite_path`` loaded into database ``name`` on the embedded server (loaded once).

    ``db.loader`` copies tables and primary keys; the foreign keys are added here from the SQLite
    file (``NOT VALID``: Spider's data do not always satisfy their own keys), so PostgreSQL copies
    show the same relationships as the files.
    """
    import psycopg
    from psycopg import sql as pgsql

    from actsagent.db import embedded
    from actsagent.db.loader import load_sqlite_file

    admin = embedded.server_url("postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists and not replace:
            return embedded.server_url(name)
        if exists:
            conn.execute(pgsql.SQL("DROP DATABASE {} WITH (FORCE)").format(pgsql.Identifier(name)))
        conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name)))
    url = embedded.server_url(name)
    try:
        load_sqlite_file(url, sqlite_path)
        _add_foreign_keys(url, sqlite_path)
    except Exception:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name)))
        raise
    return url


def _add_foreign_keys(url: str, sqlite_path: Path) -> None:
    import psycopg
    from psycopg import sql as pgsql

    src = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                            "AND name NOT LIKE 'sqlite_%'")]
        fks: list[tuple[str, list[str], str, list[str]]] = []
        for t in tables:
            groups: dict[int, tuple[str, list[str], list[str]]] = {}
            for fid, _seq, ref, frm, to, *_ in src.execute(f'PRAGMA foreign_key_list("{t.replace(chr(34), chr(34) * 2)}")'):
                g = groups.setdefault(fid, (ref, [], []))
                g[1].append(frm)
                g[2].append(to)
            fks += [(t, frm, ref, to) for ref, frm, to in groups.values()]
    finally:
        src.close()
    with psycopg.connect(url, autocommit=True) as conn:
        for table, frm, ref, to in fks:
            if not all(to):
                continue  # a key to the implicit rowid has no PostgreSQL counterpart
            stmt = pgsql.SQL("ALTER TABLE {} ADD FOREIGN KEY ({}) REFERENCES {} ({}) NOT VALID").format(
                pgsql.Identifier(table), pgsql.SQL(", ").join(map(pgsql.Identifier, frm)), pgsql.Identifier(ref),
                pgsql.SQL(", ").join(map(pgsql.Identifier, to)))
            try:
                conn.execute(stmt)
            except psycopg.Error:
                continue  # a key to a missing table or a non-unique column (Spider has both): left out
