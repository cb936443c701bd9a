"""Clean synthetic (question, SQL, database) pairs before training: keep, repair, or reject each.

Without an LLM a pair is checked for executability through the guard (strict policy: one
read-only statement, reviewed functions, a row cap) and SafeQL refinement repairs what it can.
With an LLM the ACTS agent repairs the SQL and its judge decides whether the result answers
the question. Every verdict carries its evidence. Results are appended one JSON line per pair
(``ResultLog``), so a killed run resumes without losing or repeating pairs.
"""

from __future__ import annotations

import csv
import json
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from actsagent.db import Database, DbError, QueryResult, open_database
from actsagent.errors import ActsagentError, UserError
from actsagent.reporting import Report, ReportTable, ResultLog

Verdict = Literal["kept", "repaired", "rejected"]
# Without an LLM nothing checks meaning, so a SafeQL repair is accepted only when every edit is a
# lexical fix: a rename of a column, table, function or literal to a near-identical spelling (string
# similarity and embedding distance; "nme"->"name" passes, "shipments"->"orders" does not), on the
# same table qualifier, with no table lost. Structural edits (joins added, GROUP BY added, text cut,
# ambiguous columns assigned to a table) change what the query means and need the LLM judge.
MAX_EDIT_DISTANCE = 0.5
MIN_NAME_SIMILARITY = 0.75
LEXICAL_OPERATORS = frozenset({"attribute", "relation", "function", "value", "mismatch"})


class CleanPair(BaseModel):
    id: str
    question: str
    sql: str
    db: str


class CleanResult(BaseModel):
    id: str
    question: str
    db: str
    original_sql: str
    verdict: Verdict
    reason: str | None = None
    repaired_sql: str | None = None
    method: Literal["execution", "safeql", "agent", "none"] = "execution"
    evidence: dict[str, Any] = Field(default_factory=dict)
    elapsed_s: float = 0.0


# --------------------------------------------------------------------------- input

def read_pairs(path: str | Path, *, default_db: str | None = None) -> list[CleanPair]:
    """JSONL or CSV with ``question``, ``sql`` and ``db`` (a path, URL or embedded name) per row."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"input file not found: {p}")
    suffix = p.suffix.lower()
    rows: list[dict[str, Any]] = []
    if suffix in (".jsonl", ".ndjson"):
        with p.open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        raise UserError(f"{p}:{n}: not JSON ({e.msg})") from e
    elif suffix == ".csv":
        with p.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
    else:
        raise UserError(f"{p}: give a .jsonl or .csv file")
    pairs, problems = [], []
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            problems.append(f"row {n}: not an object")
            continue
        question, sql = (row.get("question") or "").strip(), (row.get("sql") or row.get("SQL") or "").strip()
        db = str(row.get("db") or row.get("db_id") or row.get("database") or default_db or "").strip()
        missing = [k for k, v in (("question", question), ("sql", sql), ("db", db)) if not v]
        if missing:
            problems.append(f"row {n}: missing {', '.join(missing)}")
            continue
        pairs.append(CleanPair(id=str(row.get("id", n)), question=question, sql=sql, db=_resolve_db(db, p.parent)))
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise UserError(f"{p}: {shown}")
    ids = [x.id for x in pairs]
    if len(set(ids)) != len(ids):
        raise UserError(f"{p}: ids are not unique")
    return pairs


def _resolve_db(db: str, base: Path) -> str:
    """A relative file path is taken relative to the input file; URLs and names pass through."""
    if "://" in db or "=" in db:
        return db
    cand = base / db
    return str(cand.resolve()) if cand.exists() else db


# --------------------------------------------------------------------------- one pair

class Cleaner:
    """Decides one pair at a time; database handles are shared across worker threads."""

    def __init__(self, *, use_llm: bool = False, model: Any = None, mode: str = "tree",
                 max_rows: int = 1000, max_edit_distance: float = MAX_EDIT_DISTANCE,
                 refine_time_limit_s: float = 30.0) -> None:
        self.use_llm = use_llm
        # A batch job can afford more search time than the interactive default (and stays stable under load).
        self.refine_time_limit_s = refine_time_limit_s
        self.max_edit_distance = max_edit_distance
        self.model = model
        self.mode = mode
        self.max_rows = max_rows
        self._dbs: dict[str, Database] = {}
        self._lock = threading.Lock()
        self.notes: list[str] = []
        self._run_guarded, self._policy = _guard(max_rows, self.notes)
        self._refine = None if use_llm else _safeql(self.notes)

    def db(self, target: str) -> Database:
        with self._lock:
            if target not in self._dbs:
                self._dbs[target] = open_database(target)
            return self._dbs[target]

    def close(self) -> None:
        for db in self._dbs.values():
            db.close()

    def run(self, pair: CleanPair) -> CleanResult:
        t0 = time.perf_counter()
        base = dict(id=pair.id, question=pair.question, db=pair.db, original_sql=pair.sql)
        try:
            db = self.db(pair.db)
        except ActsagentError as e:
            return CleanResult(**base, verdict="rejected", method="none", reason=f"database unavailable: {e}",
                               elapsed_s=round(time.perf_counter() - t0, 3))
        res = self._decide_llm(pair, db) if self.use_llm else self._decide(pair, db)
        res.elapsed_s = round(time.perf_counter() - t0, 3)
        return res

    def _exec(self, db: Database, sql: str):
        return self._run_guarded(db, sql, self._policy) if self._run_guarded else db.execute(sql, read_only=True)

    def _decide(self, pair: CleanPair, db: Database) -> CleanResult:
        base = dict(id=pair.id, question=pair.question, db=pair.db, original_sql=pair.sql)
        first = self._exec(db, pair.sql)
        evidence: dict[str, Any] = {"execution": _describe(first)}
        if isinstance(first, QueryResult) and first.row_count > 0:
            return CleanResult(**base, verdict="kept", evidence=evidence)
        if isinstance(first, DbError) and first.error_class.value == "guard_rejected":
            return CleanResult(**base, verdict="rejected", reason=f"unsafe: {first.message}", method="none",
                               evidence=evidence)
        if self._refine is None:
            if isinstance(first, QueryResult):
                return CleanResult(**base, verdict="kept", evidence=evidence | {"warning": "empty result"})
            return CleanResult(**base, verdict="rejected", reason=_reason(first), evidence=evidence)
        from actsagent.safeql import RefineOptions

        ref = self._refine(db, pair.sql, options=RefineOptions(time_limit_s=self.refine_time_limit_s))
        evidence["safeql"] = {"status": ref.status, "why": ref.why, "candidates_explored": ref.candidates_explored,
                              "edits": [{"operator": e.operator, "reason": e.reason, "before": e.before,
                                         "after": e.after} for e in ref.edits]}
        gate = self._gate(pair.sql, ref, db.dialect) if ref.status == "refined" and ref.refined_sql else None
        if gate:
            evidence["safeql"]["refused"] = gate
        if ref.status == "refined" and ref.refined_sql and not gate:
            again = self._exec(db, ref.refined_sql)
            evidence["repaired_execution"] = _describe(again)
            if isinstance(again, QueryResult) and again.row_count > 0:
                why = "empty result" if isinstance(first, QueryResult) else _reason(first)
                return CleanResult(**base, verdict="repaired", repaired_sql=ref.refined_sql, method="safeql",
                                   reason=f"original: {why}", evidence=evidence)
        if isinstance(first, QueryResult):  # runs, but nothing found: keep, flagged
            return CleanResult(**base, verdict="kept", evidence=evidence | {"warning": "empty result"})
        return CleanResult(**base, verdict="rejected", method="safeql",
                           reason=f"{_reason(first)}; SafeQL: {gate or ref.why or ref.status}", evidence=evidence)

    def _gate(self, original: str, ref: Any, dialect: str) -> str | None:
        """Why a SafeQL repair is too far from the original to trust without a judge, or None."""
        for e in ref.edits:
            if e.operator not in LEXICAL_OPERATORS:
                return f"structural repair ({e.operator}: {e.before!r} -> {e.after!r}) needs a judge (LLM)"
            (qb, nb), (qa, na) = _split_name(e.before), _split_name(e.after)
            if qb and qa and qb != qa:
                return f"repair moves {e.before!r} to another table ({e.after!r})"
            if SequenceMatcher(None, nb, na).ratio() < MIN_NAME_SIMILARITY:
                return f"repair is not a spelling fix ({e.before!r} -> {e.after!r})"
        far = [e for e in ref.edits if e.embed_distance > self.max_edit_distance]
        if far:
            e = far[0]
            return (f"repair changes meaning ({e.before!r} -> {e.after!r}, distance {e.embed_distance:.2f} > "
                    f"{self.max_edit_distance})")
        if _table_count(ref.refined_sql, dialect) < _table_count(original, dialect):
            return "repair drops a table from the query"
        return None

    def _decide_llm(self, pair: CleanPair, db: Database) -> CleanResult:
        from actsagent.agent import repair

        base = dict(id=pair.id, question=pair.question, db=pair.db, original_sql=pair.sql)
        run = repair(pair.question, pair.sql, db, mode=self.mode, model=self.model, policy=self._policy)
        final = ";\n".join(run.final_sql_statements) if run.final_sql_statements else None
        evidence = {"agent_status": run.status, "verdict": run.verdict, "notes": run.notes[:5],
                    "usage": run.usage.model_dump(), "execution": _describe(run.result) if run.result else None}
        if run.status == "solved" and final:
            if _norm(final) == _norm(pair.sql):
                return CleanResult(**base, verdict="kept", method="agent", evidence=evidence)
            return CleanResult(**base, verdict="repaired", repaired_sql=final, method="agent",
                               reason="the agent's judge accepted a corrected SQL", evidence=evidence)
        reason = "; ".join(str(r) for r in ((run.verdict or {}).get("reasons") or [])[:3]) or run.status
        return CleanResult(**base, verdict="rejected", method="agent", reason=f"agent: {reason}",
                           evidence=evidence)


def _guard(max_rows: int, notes: list[str]):
    try:
        from actsagent.guard import Policy, run_guarded
    except ImportError:
        notes.append("actsagent.guard is unavailable: SQL ran read-only without the guard's checks")
        return None, None
    return run_guarded, Policy.strict(max_rows=max_rows)


def _safeql(notes: list[str]):
    try:
        from actsagent.safeql import refine
    except ImportError:
        notes.append("actsagent.safeql is unavailable: failing SQL is rejected without repair attempts")
        return None
    return refine


def _describe(res: Any) -> dict[str, Any]:
    if isinstance(res, QueryResult):
        return {"ok": True, "row_count": res.row_count, "truncated": res.truncated,
                "columns": [c.name for c in res.columns], "preview": [[str(v) for v in r] for r in res.rows[:3]],
                "elapsed_ms": round(res.elapsed_ms, 1)}
    if isinstance(res, DbError):
        return {"ok": False, "error_class": res.error_class.value, "message": res.message, "code": res.code,
                "identifier": res.identifier, "engine": res.engine}
    return {"ok": False, "message": str(res)}


def _reason(err: Any) -> str:
    if isinstance(err, DbError):
        return f"{err.error_class.value}: {err.message}"
    return str(err)


def _split_name(text: str) -> tuple[str, str]:
    """('qualifier', 'name') of ``t.col`` (lowercase, quotes dropped); literals keep their text."""
    t = text.strip().strip('"`[]').lower()
    if "." in t and " " not in t and "'" not in t:
        q, _, n = t.rpartition(".")
        return q.strip('"`[]'), n.strip('"`[]')
    return "", t.strip("'")


def _table_count(sql: str, dialect: str) -> int:
    import sqlglot
    from sqlglot import exp

    try:
        return sum(len(list(t.find_all(exp.Table))) for t in sqlglot.parse(sql, read=dialect) if t is not None)
    except sqlglot.errors.SqlglotError:
        # unparsable original: count FROM/JOIN keywords instead
        words = sql.lower().split()
        return words.count("from") + words.count("join")


def _norm(sql: str) -> str:
    return " ".join(sql.strip().rstrip(";").split()).lower()


# --------------------------------------------------------------------------- batch

def clean_file(input_path: str | Path, out_path: str | Path, *, workers: int = 2, use_llm: bool = False,
               model: Any = None, mode: str = "tree", default_db: str | None = None, progress: bool = True) -> Report:
    """Clean every pair of ``input_path`` into ``out_path`` (JSONL, resumable) and write a summary beside it."""
    pairs = read_pairs(input_path, default_db=default_db)
    out = Path(out_path)
    log = ResultLog(out, key="id")
    pending = log.pending(pairs, lambda p: p.id)
    cleaner = Cleaner(use_llm=use_llm, model=model, mode=mode)
    try:
        columns = [TextColumn("[bold]clean"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                   TimeElapsedColumn(), TimeRemainingColumn()]
        with Progress(*columns, disable=not progress) as bar, \
                ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="clean") as pool:
            job = bar.add_task("clean", total=len(pairs), completed=len(pairs) - len(pending), info="")
            queue, running = list(pending), {}
            counts: dict[str, int] = {}
            while queue or running:
                while queue and len(running) < max(1, workers):
                    p = queue.pop(0)
                    running[pool.submit(cleaner.run, p)] = p
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    running.pop(fut)
                    res = fut.result()
                    log.append(res.model_dump(mode="json"))
                    counts[res.verdict] = counts.get(res.verdict, 0) + 1
                    bar.update(job, advance=1, info=" ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    finally:
        cleaner.close()
    wanted = {p.id for p in pairs}
    records = [r for r in log.records() if str(r.get("id")) in wanted]
    report = _summary(records, input_path=Path(input_path), out=out, use_llm=use_llm, workers=workers,
                      notes=cleaner.notes)
    report.write(out.parent, stem=f"{out.stem}_summary")
    return report


def _summary(records: list[dict[str, Any]], *, input_path: Path, out: Path, use_llm: bool, workers: int,
             notes: list[str]) -> Report:
    n = len(records)
    by = {v: [r for r in records if r.get("verdict") == v] for v in ("kept", "repaired", "rejected")}
    reasons: dict[str, int] = {}
    for r in by["rejected"]:
        key = (r.get("reason") or "").split(":", 1)[0]
        reasons[key] = reasons.get(key, 0) + 1
    per_db: dict[str, dict[str, int]] = {}
    for r in records:
        d = per_db.setdefault(Path(str(r.get("db"))).name, {"kept": 0, "repaired": 0, "rejected": 0})
        d[r["verdict"]] += 1
    times = [float(r.get("elapsed_s", 0)) for r in records]
    return Report(
        name="Training-data cleaning",
        config={"input": str(input_path), "output": str(out), "llm": use_llm, "workers": workers},
        summary={"pairs": n, "kept": len(by["kept"]), "repaired": len(by["repaired"]),
                 "rejected": len(by["rejected"]),
                 "usable_after_cleaning_pct": round(100.0 * (len(by["kept"]) + len(by["repaired"])) / n, 1) if n else 0,
                 "seconds_per_pair": round(sum(times) / n, 3) if n else 0},
        tables=[ReportTable(title="Rejection reasons", columns=["reason", "pairs"],
                            rows=sorted(([k, v] for k, v in reasons.items()), key=lambda x: -x[1])),
                ReportTable(title="By database", columns=["db", "kept", "repaired", "rejected"],
                            rows=[[k, v["kept"], v["repaired"], v["rejected"]] for k, v in sorted(per_db.items())])],
        notes=notes + ([] if use_llm else ["No LLM: verdicts check executability and SafeQL repairs only; "
                                           "semantic correctness was not judged."]))
