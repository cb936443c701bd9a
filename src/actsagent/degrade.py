"""Controlled schema degradation (EGRefine's benchmark set-up): the same data under obscure names.

Every table and column of a SQLite database gets a deterministic, seeded obscure name - an
abbreviation (``cntry``, ``dname``, ``cnt_k12``, ``sic``) or, for some tables, positional codes
(``A2``, ``A3`` ... like BIRD's ``district``) - and is copied into a new file; the original is never
written. The ``hard`` level leaves no lexical link at all: tables become codes (``T07``), columns
positional or shuffled codes (``C4``, ``c07``), key columns shared codes (``id03``); only the declared
keys and the data dictionary (``data_dictionary``, built from the original names) say what they are. Each gold SQL is rewritten through sqlglot's AST (``sqlnames.rename``) and kept only when
it returns the same rows on the copy as the original gold on the original database; the rest are
dropped with a reason. Hints (BIRD evidence) are left out of the degraded set on purpose.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from pydantic import BaseModel, Field
from sqlglot import exp

from actsagent.benchmarks import BenchQuestion, question_of, run_sqlite, same_result
from actsagent.config import Limits
from actsagent.db.sqlite import SqliteDatabase, create_sqlite_file
from actsagent.errors import UserError
from actsagent.naming import abbreviate
from actsagent.sqlnames import SqlNamesError, rename

_READ_ALL = Limits(max_rows=1_000_000, statement_timeout_s=60)


class TableRename(BaseModel):
    name: str
    new_name: str
    style: str  # "abbreviation" | "codes" | (level hard) "positional" | "shuffled"
    columns: dict[str, str] = Field(default_factory=dict)  # old -> new (catalog spelling of old)


LEVELS = ("default", "hard")
DICTIONARY_FILE = "data_dictionary.json"


class RenamePlan(BaseModel):
    """How one database is degraded; JSON-serialisable so a run can be reproduced and inspected."""

    database: str
    seed: int
    code_share: float
    level: str = "default"
    tables: list[TableRename] = Field(default_factory=list)

    def table_map(self) -> dict[str, str]:
        return {t.name.lower(): t.new_name for t in self.tables}

    def column_map(self) -> dict[tuple[str, str], str]:
        return {(t.name.lower(), c.lower()): new for t in self.tables for c, new in t.columns.items()}


class DegradedQuestion(BaseModel):
    bench: str
    idx: int
    db_id: str
    question: str
    gold_sql: str  # over the degraded names
    original_gold_sql: str
    difficulty: str = ""


class DroppedQuestion(BaseModel):
    bench: str
    idx: int
    db_id: str
    reason: str


class DegradeOutcome(BaseModel):
    kept: list[DegradedQuestion] = Field(default_factory=list)
    dropped: list[DroppedQuestion] = Field(default_factory=list)


class _Table(BaseModel):
    """One table of a SQLite file as PRAGMA table_info and foreign_key_list give it."""

    name: str
    columns: list[tuple[str, str, bool, int]]  # name, declared type, NOT NULL, position in the primary key
    foreign_keys: list[tuple[int, str, str, str | None]]  # key id, referenced table, from column, to column


def _layout(path: Path) -> list[_Table]:
    """The tables of the SQLite file at ``path`` (read-only), in name order."""
    with SqliteDatabase(path, limits=_READ_ALL) as db:
        names = [
            r[0]
            for r in _rows(
                db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        out = []
        for t in names:
            lit = exp.Literal.string(t).sql("sqlite")
            info = _rows(db, f"SELECT * FROM pragma_table_info({lit})")
            cols = [(c[1], c[2] or "", bool(c[3]), int(c[5])) for c in info]
            fks = [(f[0], f[2], f[3], f[4]) for f in _rows(db, f"SELECT * FROM pragma_foreign_key_list({lit})")]
            out.append(_Table(name=t, columns=cols, foreign_keys=fks))
    return out


def _rows(db: SqliteDatabase, sql: str) -> list[list]:
    res = db.execute(sql)
    if not res.ok:
        raise UserError(f"cannot read {db.path.name}: {res.message}")
    return res.rows


# SQLite's keyword list (https://sqlite.org/lang_keywords.html): a new name must not be one
SQLITE_KEYWORDS = frozenset(
    [
        "abort",
        "action",
        "add",
        "after",
        "all",
        "alter",
        "always",
        "analyze",
        "and",
        "as",
        "asc",
        "attach",
        "autoincrement",
        "before",
        "begin",
        "between",
        "by",
        "cascade",
        "case",
        "cast",
        "check",
        "collate",
        "column",
        "commit",
        "conflict",
        "constraint",
        "create",
        "cross",
        "current",
        "current_date",
        "current_time",
        "current_timestamp",
        "database",
        "default",
        "deferrable",
        "deferred",
        "delete",
        "desc",
        "detach",
        "distinct",
        "do",
        "drop",
        "each",
        "else",
        "end",
        "escape",
        "except",
        "exclude",
        "exclusive",
        "exists",
        "explain",
        "fail",
        "filter",
        "first",
        "following",
        "for",
        "foreign",
        "from",
        "full",
        "generated",
        "glob",
        "group",
        "groups",
        "having",
        "if",
        "ignore",
        "immediate",
        "in",
        "index",
        "indexed",
        "initially",
        "inner",
        "insert",
        "instead",
        "intersect",
        "into",
        "is",
        "isnull",
        "join",
        "key",
        "last",
        "left",
        "like",
        "limit",
        "match",
        "materialized",
        "natural",
        "no",
        "not",
        "nothing",
        "notnull",
        "null",
        "nulls",
        "of",
        "offset",
        "on",
        "or",
        "order",
        "others",
        "outer",
        "over",
        "partition",
        "plan",
        "pragma",
        "preceding",
        "primary",
        "query",
        "raise",
        "range",
        "recursive",
        "references",
        "regexp",
        "reindex",
        "release",
        "rename",
        "replace",
        "restrict",
        "returning",
        "right",
        "rollback",
        "row",
        "rows",
        "savepoint",
        "select",
        "set",
        "table",
        "temp",
        "temporary",
        "then",
        "ties",
        "to",
        "transaction",
        "trigger",
        "unbounded",
        "union",
        "unique",
        "update",
        "using",
        "vacuum",
        "values",
        "view",
        "virtual",
        "when",
        "where",
        "window",
        "with",
        "without",
    ]
)


def plan_renames(path: Path, *, seed: int = 0, code_share: float = 0.2, level: str = "default") -> RenamePlan:
    """Deterministic obscure names for every table and column of the SQLite file at ``path``.

    The same original column name gets the same abbreviation in every table of a database (so a
    join key still looks alike on both sides, as in real schemas); a ``code_share`` of tables get
    positional codes for their non-key columns instead. Names are unique per scope and never a
    keyword. ``level="hard"``: codes only (``plan_hard``; ``code_share`` is not used).
    """
    if level not in LEVELS:
        raise UserError(f"level must be one of {', '.join(LEVELS)}")
    if level == "hard":
        return plan_hard(path, seed=seed)
    if not 0 <= code_share <= 1:
        raise UserError("code_share must be between 0 and 1")
    reserved = set(SQLITE_KEYWORDS)
    db = path.stem
    plan = RenamePlan(database=db, seed=seed, code_share=code_share)
    used_tables: set[str] = set()
    by_column_name: dict[str, str] = {}
    for ti, t in enumerate(_layout(path)):
        rng = random.Random(f"{seed}|{db}|table|{t.name}")
        new_t = _unique(abbreviate(t.name, rng), used_tables | reserved)
        used_tables.add(new_t)
        keys = {name.lower() for name, _, _, pk in t.columns if pk}
        keys |= {frm.lower() for _, _, frm, _ in t.foreign_keys}
        style = "codes" if rng.random() < code_share else "abbreviation"
        letter = chr(ord("A") + ti % 26)
        used: set[str] = set()
        tr = TableRename(name=t.name, new_name=new_t, style=style)
        for pos, (name, _, _, _) in enumerate(t.columns, start=1):
            if style == "codes" and name.lower() not in keys:
                cand = f"{letter}{pos}"
            elif (known := by_column_name.get(name.lower())) is not None:
                cand = known
            else:
                cand = abbreviate(name, random.Random(f"{seed}|{db}|column|{name.lower()}"))
                by_column_name[name.lower()] = cand
            new_c = _unique(cand, used | reserved)
            used.add(new_c.lower())
            tr.columns[name] = new_c
        plan.tables.append(tr)
    return plan


def _letters(n: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA: a table's letter code."""
    out = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(ord("A") + r) + out
    return out


def plan_hard(path: Path, *, seed: int = 0) -> RenamePlan:
    """Names with no lexical link to their meaning, for the SQLite file at ``path``.

    Tables are numbered in a seeded order (``T07``); each table's non-key columns become, by a seeded
    choice, positional codes under the table's letter (``C1``, ``C2`` ... as BIRD's ``district``) or
    codes in a shuffled order (``c07``); a key column (primary key, foreign key, or a foreign key's
    target) gets a code shared by every key column of the same original name (``id03``), so joins
    read alike on both sides. Every name is unique in the database (no new ambiguity).
    """
    db = path.stem
    layout = _layout(path)
    rng = random.Random(f"{seed}|{db}|hard")
    numbers = list(range(len(layout)))
    rng.shuffle(numbers)
    keys: dict[str, set[str]] = {t.name.lower(): {n.lower() for n, _, _, pk in t.columns if pk} for t in layout}
    for t in layout:
        for _, ref, frm, to in t.foreign_keys:
            keys[t.name.lower()].add(frm.lower())
            if to and ref.lower() in keys:
                keys[ref.lower()].add(to.lower())
    key_codes: dict[str, str] = {}
    for t in layout:  # numbered in name order of the columns, so the codes do not follow the tables' order
        for name in sorted(keys[t.name.lower()]):
            key_codes.setdefault(name, "")
    for i, name in enumerate(rng.sample(sorted(key_codes), len(key_codes)), start=1):
        key_codes[name] = f"id{i:02d}"
    plan = RenamePlan(database=db, seed=seed, code_share=0.0, level="hard")
    taken = set(SQLITE_KEYWORDS) | set(key_codes.values())
    width = max(2, len(str(len(layout))))
    for t, n in zip(layout, numbers):
        trng = random.Random(f"{seed}|{db}|hard|{t.name}")
        style = trng.choice(("positional", "shuffled"))
        letter = _letters(n)
        order = list(range(1, len(t.columns) + 1))
        trng.shuffle(order)
        tr = TableRename(name=t.name, new_name=f"T{n + 1:0{width}d}", style=style)
        used: set[str] = set()
        for pos, (name, _, _, _) in zip(order if style == "shuffled" else range(1, len(t.columns) + 1), t.columns):
            if name.lower() in keys[t.name.lower()]:
                new = key_codes[name.lower()]
            else:
                cand = f"{letter}{pos}" if style == "positional" else f"{letter.lower()}{pos:02d}"
                new = _unique(cand, taken | used)
                taken.add(new.lower())
            used.add(new.lower())
            tr.columns[name] = new
        plan.tables.append(tr)
    return plan


def data_dictionary(plan: RenamePlan):
    """The data dictionary a team keeps for the degraded database: for each degraded table and column
    (by its new name) one line made mechanically from the original name (``superhero.full_name`` ->
    'full name of the superhero'), as a knowledge base ``Glossary``. No question or gold SQL is read."""
    from actsagent.kb.glossary import Glossary
    from actsagent.naming import humanize

    tables: dict[str, str] = {}
    columns: dict[str, str] = {}
    for t in plan.tables:
        what = humanize(t.name)
        cols = [humanize(c) for c in t.columns]
        holds = ", ".join(cols)
        tables[t.new_name] = _cut(f"{what}: one row per {what} record; columns: {holds}")
        for old, new in t.columns.items():
            col = humanize(old)
            text = f"{col} of the {what}" if col != what else f"the {what} itself (the value the table is named for)"
            columns[f"{t.new_name}.{new}"] = _cut(text)
    return Glossary(tables=tables, columns=columns)


def _cut(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def dictionary_path(root: Path, bench: str, db_id: str) -> Path:
    """Where a degraded database's data dictionary is written: beside its SQLite file."""
    from actsagent.benchmarks import db_path

    return db_path(root, bench, db_id).parent / DICTIONARY_FILE


def _unique(name: str, taken: set[str]) -> str:
    out, i = name, 2
    while out.lower() in taken:
        out, i = f"{name}{i}", i + 1
    return out


def _q(name: str) -> str:
    return exp.to_identifier(name, quoted=True).sql("sqlite")


def write_degraded(src: Path, dst: Path, plan: RenamePlan) -> list[str]:
    """Copy ``src`` into a new SQLite file at ``dst`` under the plan's names; returns notes.

    Tables are recreated (declared types, NOT NULL, primary and foreign keys kept) and filled with
    ``INSERT ... SELECT`` from the attached read-only original; a foreign key to a table or
    column that does not exist (Spider has a few) is dropped with a note. ``src`` is only read.
    """
    notes: list[str] = []
    tmap = {t.name.lower(): t for t in plan.tables}
    layout = {t.name: t for t in _layout(src)}
    stmts: list[str] = []
    for tr in plan.tables:
        t = layout[tr.name]
        defs = [
            f"{_q(tr.columns[name])} {typ}{' NOT NULL' if notnull else ''}".rstrip()
            for name, typ, notnull, _ in t.columns
        ]
        pk = [name for name, _, _, pos in sorted(t.columns, key=lambda c: c[3]) if pos]
        if pk:
            defs.append("PRIMARY KEY (" + ", ".join(_q(tr.columns[c]) for c in pk) + ")")
        fks: dict[int, list[tuple[str, str, str | None]]] = {}
        for fid, ref_table, frm, to in t.foreign_keys:
            fks.setdefault(fid, []).append((ref_table, frm, to))
        for parts in fks.values():
            ref = tmap.get(parts[0][0].lower())
            ref_cols = {c.lower(): new for c, new in ref.columns.items()} if ref else {}
            if (
                ref is None
                or any(to and to.lower() not in ref_cols for _, _, to in parts)
                or any(frm not in tr.columns for _, frm, _ in parts)
            ):
                notes.append(f"{plan.database}.{tr.name}: foreign key to {parts[0][0]} dropped (target missing)")
                continue
            frm_cols = ", ".join(_q(tr.columns[frm]) for _, frm, _ in parts)
            to_cols = [ref_cols[to.lower()] for _, _, to in parts if to]
            target = _q(ref.new_name) + (f" ({', '.join(map(_q, to_cols))})" if to_cols else "")
            defs.append(f"FOREIGN KEY ({frm_cols}) REFERENCES {target}")
        stmts.append(f"CREATE TABLE {_q(tr.new_name)} ({', '.join(defs)})")
        stmts.append(f"INSERT INTO main.{_q(tr.new_name)} SELECT * FROM src.{_q(tr.name)}")
    create_sqlite_file(dst, stmts, attach={"src": src})
    return notes


def degrade_questions(questions: list[BenchQuestion], src: Path, dst: Path, plan: RenamePlan) -> DegradeOutcome:
    """Rewrite each gold SQL to the degraded names and keep it only if it returns the original's rows."""
    out = DegradeOutcome()
    with SqliteDatabase(src) as original:
        info = original.schema()
    tables, columns = plan.table_map(), plan.column_map()

    def drop(q: BenchQuestion, reason: str) -> None:
        out.dropped.append(DroppedQuestion(bench=q.bench, idx=q.idx, db_id=q.db_id, reason=reason))

    for q in questions:
        ok, gold = run_sqlite(src, q.gold_sql)
        if not ok or isinstance(gold, str):
            drop(q, f"gold fails on the original database: {gold}")
            continue
        try:
            new_sql = rename(q.gold_sql, info, "sqlite", tables=tables, columns=columns)
        except SqlNamesError as e:
            drop(q, f"gold cannot be rewritten: {e}")
            continue
        ok, rows = run_sqlite(dst, new_sql)
        if not ok or isinstance(rows, str):
            drop(q, f"rewritten gold fails on the degraded copy: {rows}")
            continue
        if not same_result(gold, rows, bench=q.bench, gold_sql=q.gold_sql):
            drop(q, "rewritten gold returns different rows")
            continue
        out.kept.append(
            DegradedQuestion(
                bench=q.bench,
                idx=q.idx,
                db_id=q.db_id,
                question=q.question,
                gold_sql=new_sql,
                original_gold_sql=q.gold_sql,
                difficulty=q.difficulty,
            )
        )
    return out


def build_degraded_set(
    root: Path,
    out_dir: Path,
    *,
    seed: int = 0,
    code_share: float = 0.2,
    level: str = "default",
    benches: tuple[str, ...] = ("spider_dev", "bird_dev"),
    progress=None,
) -> dict:
    """Degrade every database of ``benches`` under ``root`` into ``out_dir`` (same layout:
    ``<bench>/databases/<db>/<db>.sqlite`` with its ``data_dictionary.json`` beside it,
    ``<bench>/questions.json`` without hints, ``<bench>/dropped.json``, ``<bench>/renames.json``);
    returns counts per benchmark."""
    from actsagent.benchmarks import db_path, load_questions

    summary: dict = {}
    for bench in benches:
        qs = load_questions(root, bench)
        by_db: dict[str, list[BenchQuestion]] = {}
        for q in qs:
            by_db.setdefault(q.db_id, []).append(q)
        outcome, plans, notes = DegradeOutcome(), [], []
        for db_id, items in sorted(by_db.items()):
            src = db_path(root, bench, db_id)
            dst = db_path(out_dir, bench, db_id)
            plan = plan_renames(src, seed=seed, code_share=code_share, level=level)
            notes += write_degraded(src, dst, plan)
            dictionary_path(out_dir, bench, db_id).write_text(data_dictionary(plan).model_dump_json(indent=1))
            res = degrade_questions(items, src, dst, plan)
            outcome.kept += res.kept
            outcome.dropped += res.dropped
            plans.append(plan)
            if progress:
                progress(bench, db_id, len(res.kept), len(res.dropped))
        bdir = out_dir / bench
        bdir.mkdir(parents=True, exist_ok=True)
        (bdir / "questions.json").write_text(json.dumps([q.model_dump() for q in outcome.kept], indent=1))
        (bdir / "dropped.json").write_text(json.dumps([d.model_dump() for d in outcome.dropped], indent=1))
        (bdir / "renames.json").write_text(json.dumps([p.model_dump() for p in plans], indent=1))
        reasons: dict[str, int] = {}
        for d in outcome.dropped:
            key = d.reason.split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
        summary[bench] = {
            "questions": len(qs),
            "kept": len(outcome.kept),
            "dropped": len(outcome.dropped),
            "dropped_by_reason": reasons,
            "notes": notes,
        }
    return summary


def load_degraded_questions(out_dir: Path, bench: str) -> list[BenchQuestion]:
    """The degraded set as benchmark questions (no evidence), for the benchmarks to run."""
    path = out_dir / bench / "questions.json"
    if not path.is_file():
        raise UserError(f"no degraded set at {path}: build it with `python evals/make_degraded.py`")
    return [question_of(bench, q, evidence=False) for q in json.loads(path.read_text(encoding="utf-8"))]
