"""Spider dev and BIRD dev as typed questions, their SQLite files, and each benchmark's result metric.

The degraded-schema builder, the retrieval benchmark and the ask benchmark read the same data
(``shared/data/realerrors``) and must compare results the same way: Spider as ordered lists when
the gold SQL orders, else as multisets; BIRD as sets (its official metric). Floats are rounded
to 6 decimals so engines' float formatting does not decide a match.
"""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from actsagent import config
from actsagent.config import Limits
from actsagent.db.results import ErrorClass
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
    """The realerrors folder (``spider_dev/``, ``bird_dev/``): ``$ACTSAGENT_BENCH_DATA``, else
    ``$ACTSAGENT_DATA_DIR/realerrors`` (``config.data_dir``)."""
    found = config.data_dir("realerrors", "ACTSAGENT_BENCH_DATA")
    if found is None:
        raise UserError(
            "benchmark data not found: set ACTSAGENT_BENCH_DATA to the realerrors folder "
            "(or ACTSAGENT_DATA_DIR to the folder holding realerrors/)"
        )
    return found


def db_path(root: Path, bench: str, db_id: str) -> Path:
    return root / bench / "databases" / db_id / f"{db_id}.sqlite"


def load_questions(root: Path, bench: str) -> list[BenchQuestion]:
    """The benchmark's questions whose database is present (BIRD: three of eleven)."""
    if bench not in BENCHMARKS:
        raise UserError(f"unknown benchmark {bench!r}: use {' or '.join(BENCHMARKS)}")
    path = root / bench / "questions.json"
    if not path.is_file():
        raise UserError(f"no questions file at {path}")
    records = json.loads(path.read_text(encoding="utf-8"))
    return [question_of(bench, q) for q in records if db_path(root, bench, q["db_id"]).is_file()]


def question_of(bench: str, q: dict[str, Any], *, evidence: bool = True) -> BenchQuestion:
    """A record of a questions file as a question (``evidence=False``: without the file's evidence)."""
    return BenchQuestion(
        bench=bench,
        idx=q["idx"],
        db_id=q["db_id"],
        question=q["question"],
        gold_sql=q["gold_sql"],
        evidence=(q.get("evidence") or "") if evidence else "",
        difficulty=q.get("difficulty") or "",
    )


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


def run_sqlite(path: Path, sql: str, *, timeout_s: float = 30.0) -> tuple[bool, list[list[Any]] | str]:
    """Run ``sql`` on a read-only SQLite file, every row: (True, rows) or (False, message); never raises for SQL."""
    from actsagent.db.sqlite import SqliteDatabase

    limits = Limits(statement_timeout_s=timeout_s, max_rows=10**9, max_result_bytes=2**62)
    with SqliteDatabase(path, limits=limits) as db:
        res = db.execute(sql)
    if res.ok:
        return True, res.rows
    return False, "timeout" if res.error_class is ErrorClass.TIMEOUT else res.message


def pg_copy(sqlite_path: Path, name: str, *, replace: bool = False) -> str:
    """URL of ``sqlite_path`` loaded into database ``name`` on the embedded server (loaded once), with the
    file's foreign keys, so PostgreSQL copies show the same relationships as the files."""
    from actsagent.db.loader import load_embedded

    return load_embedded(sqlite_path, name, if_exists="replace" if replace else "reuse", foreign_keys=True).url


def spider_pairs(system: str, limit: int, *, on_postgres: bool = False) -> list[dict[str, Any]]:
    """The first ``limit`` Spider dev pairs (id, question, ``system``'s predicted SQL, db) to clean, on the
    SQLite files or their copies in the embedded PostgreSQL; incomplete databases and empty predictions left out."""
    root = data_root()
    preds = json.loads((root / "spider_dev" / "predictions" / f"{system}.json").read_text(encoding="utf-8"))
    rows: list[dict[str, Any]] = []
    dbs: dict[str, str] = {}
    for q in load_questions(root, "spider_dev"):
        sql = preds[q.idx]  # the i-th prediction answers question idx i (data README)
        if q.db_id in INCOMPLETE_DBS or not sql.strip():
            continue
        if q.db_id not in dbs:
            file = db_path(root, "spider_dev", q.db_id)
            dbs[q.db_id] = pg_copy(file, f"spider_{q.db_id}") if on_postgres else str(file)
        rows.append({"id": q.idx, "question": q.question, "sql": sql, "db": dbs[q.db_id]})
        if len(rows) == limit:
            break
    return rows
