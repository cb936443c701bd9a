"""Clean synthetic (question, SQL, database) pairs before training: keep, repair, or reject each.

Without an LLM a pair is checked for executability through the guard (strict policy: one
read-only statement, reviewed functions, a row cap) and SafeQL refinement repairs what it can.
With an LLM the ACTS agent repairs the SQL and its judge decides whether the result answers
the question. Every verdict carries its evidence. Results are appended one JSON line per pair
(``ResultLog``), so a killed run resumes without losing or repeating pairs.
"""

from __future__ import annotations

import csv
import io
import json
import threading
import time
from collections import Counter
from difflib import SequenceMatcher
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypedDict, get_args

from pydantic import BaseModel, Field
from rich.console import Console

from actsagent.batch_engine import Engine, run_batch
from actsagent.db import Database, DbError, QueryResult, open_database
from actsagent.errors import ActsagentError, LLMUnavailable, UserError
from actsagent.guard import Policy, check_sql, rejection_error, run_guarded
from actsagent.reporting import Report, ReportTable, ResultLog, batch_progress
from actsagent.safeql import RefineOptions, refine

if TYPE_CHECKING:
    from actsagent.graphs.models import Mode

PairVerdict = Literal["kept", "repaired", "rejected"]  # what cleaning decided for one pair (not the judge's Verdict)
PAIR_VERDICTS: tuple[PairVerdict, ...] = get_args(PairVerdict)
# Without an LLM nothing checks meaning, so a SafeQL repair is accepted only when every edit is a
# lexical fix: a rename of a column, table, function or literal to a near-identical spelling (string
# similarity and embedding distance; "nme"->"name" passes, "shipments"->"orders" does not), on the
# same table qualifier, with no table lost. Structural edits (joins added, GROUP BY added, text cut,
# ambiguous columns assigned to a table) change what the query means and need the LLM judge.
MAX_EDIT_DISTANCE = 0.5
MIN_NAME_SIMILARITY = 0.75
LEXICAL_OPERATORS = frozenset({"attribute", "relation", "function", "value", "mismatch"})
MAX_REASON = 500  # characters of an error kept as a rejection reason


class CleanPair(BaseModel):
    id: str
    question: str
    sql: str
    db: str
    problem: str | None = None  # why the row cannot be cleaned: it is rejected as it is and the batch goes on


class CleanResult(BaseModel):
    id: str
    question: str
    db: str
    original_sql: str
    verdict: PairVerdict
    reason: str | None = None
    repaired_sql: str | None = None
    method: Literal["execution", "safeql", "agent", "none"] = "execution"
    evidence: dict[str, Any] = Field(default_factory=dict)
    elapsed_s: float = 0.0


class _PairFields(TypedDict):
    """What every verdict repeats of its pair."""

    id: str
    question: str
    db: str
    original_sql: str


def _pair_fields(pair: CleanPair) -> _PairFields:
    return _PairFields(id=pair.id, question=pair.question, db=pair.db, original_sql=pair.sql)


# --------------------------------------------------------------------------- input
# What the file as a whole gets wrong (missing, not JSONL/CSV at all, no pairs, ids that are not unique)
# stops the run with one line; what one row gets wrong (a line that is not JSON, a field that is not
# text, a missing field, bytes that are not UTF-8) rejects that pair with its reason, like a bad SQL.

FIELDS = {"question": ("question",), "sql": ("sql", "SQL"), "db": ("db", "db_id", "database")}
CSV_FIELD_LIMIT = 2**31 - 1  # Python's csv stops at 128 KB per field by default; long SQL is still a pair


class _Row(NamedTuple):
    n: int  # 1-based among non-blank rows: the id of a row without one
    where: str  # "line 3": where the row starts in the file, for messages
    data: dict[str, Any] | None
    problem: str | None = None


def read_pairs(path: str | Path, *, default_db: str | None = None) -> list[CleanPair]:
    """JSONL or CSV with ``question``, ``sql`` and ``db`` (a path, URL or embedded name) per row."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{p} is a folder: give a .jsonl or .csv file of pairs")
    if not p.is_file():
        raise UserError(f"input file not found: {p}")
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        rows = _jsonl_rows(p)
        if rows and all(r.data is None for r in rows):
            why = "binary data" if _looks_binary(p) else f"{rows[0].where}: {rows[0].problem}"
            raise UserError(f"{p}: not a JSONL file of pairs ({why})")
    elif suffix == ".csv":
        rows = _csv_rows(p)
    else:
        raise UserError(f"{p}: give a .jsonl or .csv file")
    if not rows:
        raise UserError(f"{p}: no pairs in the file")
    pairs = [_pair(r, default_db, p.parent) for r in rows]
    dup = sorted(k for k, v in Counter(x.id for x in pairs).items() if v > 1)
    if dup:
        raise UserError(
            f"{p}: ids are not unique ({', '.join(map(repr, dup[:5]))}"
            f"{f' and {len(dup) - 5} more' if len(dup) > 5 else ''}): verdicts are kept by id"
        )
    return pairs


def _jsonl_rows(p: Path) -> list[_Row]:
    rows: list[_Row] = []
    data = p.read_bytes().removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark is not part of the first line
    for no, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        n, where = len(rows) + 1, f"line {no}"
        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            rows.append(_Row(n, where, None, f"not UTF-8 text (byte {raw[e.start]:#04x} at column {e.start + 1})"))
            continue
        except json.JSONDecodeError as e:
            rows.append(_Row(n, where, None, f"not JSON ({e.msg} at column {e.colno})"))
            continue
        except RecursionError:
            rows.append(_Row(n, where, None, "not JSON (nested too deeply)"))
            continue
        rows.append(
            _Row(n, where, obj, None)
            if isinstance(obj, dict)
            else _Row(n, where, None, f"{_kind(obj)}, not a JSON object")
        )
    return rows


def _csv_rows(p: Path) -> list[_Row]:
    # undecodable bytes become lone surrogates, so one bad row is rejected instead of the whole file
    text = p.read_bytes().decode("utf-8-sig", errors="surrogateescape")
    csv.field_size_limit(CSV_FIELD_LIMIT)
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[_Row] = []
    try:
        header = [h.strip() for h in next(reader, [])]
        lacking = [f for f in ("question", "sql") if not set(FIELDS[f]).intersection(header)]
        if lacking:
            shown = ", ".join(repr(_printable(h)[:40]) for h in header[:8]) or "nothing"
            why = (
                "binary data" if _looks_binary(p) else f"the header has no {' or '.join(lacking)} column; found {shown}"
            )
            raise UserError(f"{p}: not a CSV file of pairs ({why})")
        start = reader.line_num + 1
        for record in reader:
            if any(f.strip() for f in record):
                rows.append(_Row(len(rows) + 1, f"line {start}", dict(zip(header, record))))
            start = reader.line_num + 1
    except csv.Error as e:
        raise UserError(f"{p}:{reader.line_num}: not CSV ({e})") from e
    return rows


def _pair(row: _Row, default_db: str | None, base: Path) -> CleanPair:
    """The pair of one row, or its text and why it is rejected (every stored string is valid UTF-8)."""
    data = row.data or {}
    raw_id = data.get("id")
    problems = [row.problem] if row.problem else []
    pid = str(row.n)
    if isinstance(raw_id, str | int | float) and not isinstance(raw_id, bool) and raw_id != "":
        pid = str(raw_id)
    elif raw_id not in (None, ""):
        problems.append(f"id is {_kind(raw_id)}, not text or a number")
    values: dict[str, str] = {}
    missing = []
    for field, names in FIELDS.items() if row.data is not None else ():
        value = next((data[k] for k in names if data.get(k) not in (None, "")), None)
        if value is None and field == "db":
            value = default_db
        if isinstance(value, str) and value.strip(_PLAIN_SPACE):
            values[field] = value.strip(_PLAIN_SPACE)  # str.strip() would also drop \x0b, \x1c-\x1f, \x85 …
            if _has_surrogates(value):
                problems.append(f"{field} is not UTF-8 text")
            elif field == "db" and any(ord(c) < 32 for c in value):
                problems.append("db has control characters: not a path, URL or database name")
        elif value is None or isinstance(value, str):
            missing.append(field)
        else:
            values[field] = json.dumps(value, ensure_ascii=False, default=str)
            problems.append(f"{field} is {_kind(value)}, not text")
    if missing:
        problems.append(f"missing {', '.join(missing)}")
    if _has_surrogates(pid):
        problems.append("id is not UTF-8 text")
    if problems:
        return CleanPair(
            id=_printable(pid),
            question=_printable(values.get("question", "")),
            sql=_printable(values.get("sql", "")),
            db=_printable(values.get("db", "")),
            problem=f"{row.where}: {'; '.join(problems)}",
        )
    return CleanPair(id=pid, question=values["question"], sql=values["sql"], db=_resolve_db(values["db"], base))


def _kind(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _looks_binary(p: Path) -> bool:
    with p.open("rb") as f:
        return b"\0" in f.read(8192)


def _has_surrogates(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


def _printable(text: str) -> str:
    """``text`` with undecodable bytes (``\\xe9``) and lone surrogates spelled as escapes, so it can be written out."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that stands for no byte (a JSON "\\ud800" escape)
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _resolve_db(db: str, base: Path) -> str:
    """A relative file path is taken relative to the input file; URLs and names pass through."""
    if "://" in db or "=" in db:
        return db
    cand = base / db
    try:
        return str(cand.resolve()) if cand.exists() else db
    except (OSError, ValueError):  # a name too long for a path: opening it fails for this pair alone
        return db


# --------------------------------------------------------------------------- one pair


class Cleaner:
    """Decides one pair at a time; database handles are shared across worker threads."""

    def __init__(
        self,
        *,
        use_llm: bool = False,
        model: Any = None,
        mode: Mode = "tree",
        max_rows: int = 1000,
        max_edit_distance: float = MAX_EDIT_DISTANCE,
        refine_time_limit_s: float = 30.0,
    ) -> None:
        self.use_llm = use_llm
        # A batch job can afford more search time than the interactive default (and stays stable under load).
        self.refine_time_limit_s = refine_time_limit_s
        self.max_edit_distance = max_edit_distance
        self.model = model
        self.mode = mode
        self.max_rows = max_rows
        self._dbs: dict[str, Database] = {}
        self._lock = threading.Lock()
        self._policy = Policy.strict(max_rows=max_rows)

    def db(self, target: str) -> Database:
        with self._lock:
            if target not in self._dbs:
                self._dbs[target] = open_database(target)
            return self._dbs[target]

    def close(self) -> None:
        for db in self._dbs.values():
            db.close()

    def record(self, pair: CleanPair) -> dict[str, Any]:
        """The verdict as the JSON line the log keeps (what a batch engine runs)."""
        return self.run(pair).model_dump(mode="json")

    def run(self, pair: CleanPair) -> CleanResult:
        """The verdict of one pair; nothing one pair brings (bad input, a corrupt database) stops the batch.

        Only a missing LLM is raised: every later pair would fail the same way, and a rerun resumes them.
        """
        t0 = time.perf_counter()
        base = _pair_fields(pair)
        reason = f"bad input: {pair.problem}" if pair.problem else None
        if reason is None:
            try:
                db = self.db(pair.db)
                res = self._decide_llm(pair, db) if self.use_llm else self._decide(pair, db)
                res.elapsed_s = round(time.perf_counter() - t0, 3)
                return res
            except LLMUnavailable:
                raise
            except (ActsagentError, OSError) as e:  # missing, corrupt or unreachable database
                reason = f"database unavailable: {e}"
            except Exception as e:  # a bug met on this pair: recorded with the pair, the others go on
                reason = f"internal error: {type(e).__name__}: {e}"
        return CleanResult(
            **base,
            verdict="rejected",
            method="none",
            reason=_printable(reason[:MAX_REASON]),
            elapsed_s=round(time.perf_counter() - t0, 3),
        )

    def _exec(self, db: Database, sql: str):
        return run_guarded(db, sql, self._policy)

    def _decide(self, pair: CleanPair, db: Database) -> CleanResult:
        base = _pair_fields(pair)
        first = self._exec(db, pair.sql)
        evidence: dict[str, Any] = {"execution": _describe(first)}
        if isinstance(first, QueryResult) and first.row_count > 0:
            return CleanResult(**base, verdict="kept", evidence=evidence)
        if isinstance(first, DbError) and first.error_class.value == "guard_rejected":
            return CleanResult(
                **base, verdict="rejected", reason=f"unsafe: {first.message}", method="none", evidence=evidence
            )
        ref = refine(
            db,
            pair.sql,
            options=RefineOptions(time_limit_s=self.refine_time_limit_s),
            check=self._guard_hook(db.dialect),
        )
        evidence["safeql"] = {
            "status": ref.status,
            "why": ref.why,
            "candidates_explored": ref.candidates_explored,
            "edits": [
                {"operator": e.operator, "reason": e.reason, "before": e.before, "after": e.after} for e in ref.edits
            ],
        }
        gate = self._gate(pair.sql, ref, db.dialect) if ref.status == "refined" and ref.refined_sql else None
        if gate:
            evidence["safeql"]["refused"] = gate
        if ref.status == "refined" and ref.refined_sql and not gate:
            again = self._exec(db, ref.refined_sql)
            evidence["repaired_execution"] = _describe(again)
            if isinstance(again, QueryResult) and again.row_count > 0:
                why = "empty result" if isinstance(first, QueryResult) else _reason(first)
                return CleanResult(
                    **base,
                    verdict="repaired",
                    repaired_sql=ref.refined_sql,
                    method="safeql",
                    reason=f"original: {why}",
                    evidence=evidence,
                )
        if isinstance(first, QueryResult):  # runs, but nothing found: keep, flagged
            return CleanResult(**base, verdict="kept", evidence=evidence | {"warning": "empty result"})
        return CleanResult(
            **base,
            verdict="rejected",
            method="safeql",
            reason=f"{_reason(first)}; SafeQL: {gate or ref.why or ref.status}",
            evidence=evidence,
        )

    def _guard_hook(self, dialect: str):
        """The guard as SafeQL's pre-execution hook: no candidate it refuses reaches the database."""

        def check(sql: str) -> DbError | None:
            verdict = check_sql(sql, dialect, self._policy)
            return None if verdict.ok else rejection_error(verdict)

        return check

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
            return (
                f"repair changes meaning ({e.before!r} -> {e.after!r}, distance {e.embed_distance:.2f} > "
                f"{self.max_edit_distance})"
            )
        if _table_count(ref.refined_sql, dialect) < _table_count(original, dialect):
            return "repair drops a table from the query"
        return None

    def _decide_llm(self, pair: CleanPair, db: Database) -> CleanResult:
        from actsagent.agent import repair

        base = _pair_fields(pair)
        run = repair(pair.question, pair.sql, db, mode=self.mode, model=self.model, policy=self._policy)
        # the agent reports a provider that failed for good as a note (agent.repair): not this pair's verdict
        down = next((n for n in run.notes if n.startswith("LLM provider failed")), None)
        if run.status == "failed" and down:
            raise LLMUnavailable(down.split("; completed steps", 1)[0])
        final = ";\n".join(run.final_sql_statements) if run.final_sql_statements else None
        evidence = {
            "agent_status": run.status,
            "verdict": run.verdict.model_dump(mode="json") if run.verdict else None,
            "notes": run.notes[:5],
            "usage": run.usage.model_dump(),
            "execution": _describe(run.result) if run.result else None,
        }
        if run.status == "solved" and final:
            if _norm(final) == _norm(pair.sql):
                return CleanResult(**base, verdict="kept", method="agent", evidence=evidence)
            return CleanResult(
                **base,
                verdict="repaired",
                repaired_sql=final,
                method="agent",
                reason="the agent's judge accepted a corrected SQL",
                evidence=evidence,
            )
        reason = "; ".join(str(r) for r in (run.verdict.reasons if run.verdict else [])[:3]) or run.status
        return CleanResult(**base, verdict="rejected", method="agent", reason=f"agent: {reason}", evidence=evidence)


def _describe(res: Any) -> dict[str, Any]:
    if isinstance(res, QueryResult):
        return {
            "ok": True,
            "row_count": res.row_count,
            "truncated": res.truncated,
            "columns": [c.name for c in res.columns],
            "preview": [[str(v) for v in r] for r in res.rows[:3]],
            "elapsed_ms": round(res.elapsed_ms, 1),
        }
    if isinstance(res, DbError):
        return {
            "ok": False,
            "error_class": res.error_class.value,
            "message": res.message,
            "code": res.code,
            "identifier": res.identifier,
            "engine": res.engine,
        }
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


# what a pair's fields lose at their ends: the whitespace the guard accepts, nothing it would refuse
_PLAIN_SPACE = " \t\r\n\f"


def _norm(sql: str) -> str:
    return " ".join(sql.strip().rstrip(";").split()).lower()


# --------------------------------------------------------------------------- batch


def clean_file(
    input_path: str | Path,
    out_path: str | Path,
    *,
    workers: int = 2,
    use_llm: bool = False,
    model: Any = None,
    mode: Mode = "tree",
    default_db: str | None = None,
    progress: bool = True,
    engine: Engine | None = None,
) -> Report:
    """Clean every pair of ``input_path`` into ``out_path`` (JSONL, resumable) and write a summary beside it.

    ``engine`` runs the pairs on threads here (the default, ``workers`` of them) or on a Ray cluster."""
    engine = engine or Engine(workers=workers)
    pairs = read_pairs(input_path, default_db=default_db)
    out = Path(out_path)
    log = _verdict_log(out, Path(input_path))
    log.merge_parts()  # verdicts a killed Ray run left in its partitions
    pending = log.pending(pairs, lambda p: p.id)
    make_cleaner = partial(Cleaner, use_llm=use_llm, model=model, mode=mode)
    with batch_progress(console=Console(stderr=True), disable=not progress) as bar:
        job = bar.add_task("clean", total=len(pairs), completed=len(pairs) - len(pending), info="")
        counts: dict[str, int] = {}
        for rec in run_batch(make_cleaner, pending, log, engine=engine, name="clean"):
            counts[rec["verdict"]] = counts.get(rec["verdict"], 0) + 1
            bar.update(job, advance=1, info=" ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    wanted = {p.id for p in pairs}
    records = [r for r in log.records() if str(r.get("id")) in wanted]
    report = _summary(records, input_path=Path(input_path), out=out, use_llm=use_llm, engine=engine)
    report.write(out.parent, stem=f"{out.stem}_summary")
    return report


def _verdict_log(out: Path, input_path: Path) -> ResultLog:
    """The verdicts file to append to; refused when appending would spoil a file that holds something else."""
    if out.is_dir():
        raise UserError(f"{out} is a folder: give --out a .jsonl file for the verdicts")
    if out.exists():
        if out.resolve() == input_path.resolve():
            raise UserError(f"{out} is the input file: give --out another file for the verdicts")
        for no, line in enumerate(out.read_bytes().splitlines(keepends=True), 1):
            if not line.strip() or not line.endswith(b"\n"):
                continue  # blank, or cut by a crash (redone)
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):
                rec = None
            if not (isinstance(rec, dict) and "id" in rec and rec.get("verdict") in PAIR_VERDICTS):
                raise UserError(f"{out} holds something other than verdicts (line {no}): give --out another file")
    try:
        return ResultLog(out, key="id")
    except OSError as e:
        raise UserError(f"cannot write the verdicts to {out}: {e.strerror or e}") from e


def _summary(records: list[dict[str, Any]], *, input_path: Path, out: Path, use_llm: bool, engine: Engine) -> Report:
    n = len(records)
    by = {v: [r for r in records if r.get("verdict") == v] for v in PAIR_VERDICTS}
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
        config={
            "input": str(input_path),
            "output": str(out),
            "llm": use_llm,
            "workers": engine.workers,
            "engine": engine.name,
        },
        summary={
            "pairs": n,
            "kept": len(by["kept"]),
            "repaired": len(by["repaired"]),
            "rejected": len(by["rejected"]),
            "usable_after_cleaning_pct": round(100.0 * (len(by["kept"]) + len(by["repaired"])) / n, 1) if n else 0,
            "seconds_per_pair": round(sum(times) / n, 3) if n else 0,
        },
        tables=[
            ReportTable(
                title="Rejection reasons",
                columns=["reason", "pairs"],
                rows=sorted(([k, v] for k, v in reasons.items()), key=lambda x: -x[1]),
            ),
            ReportTable(
                title="By database",
                columns=["db", "kept", "repaired", "rejected"],
                rows=[[k, v["kept"], v["repaired"], v["rejected"]] for k, v in sorted(per_db.items())],
            ),
        ],
        notes=(
            []
            if use_llm
            else ["No LLM: verdicts check executability and SafeQL repairs only; semantic correctness was not judged."]
        ),
    )
