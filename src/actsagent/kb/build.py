"""Building the knowledge base from the catalog: templated descriptions, or an LLM's when one is given.

Without an LLM every description is made from what the database itself says: the name as words
(abbreviations expanded: ``cntry`` -> country), the type, keys and foreign keys, comments,
frequent values or the value range, and the user's glossary. With an LLM (``model``), the
``kb_describe`` prompt rewrites the descriptions of each table from the same facts. A rebuild
keeps descriptions from more trusted sources (manual > glossary > llm > comment > template),
the verified examples and the history.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from pydantic import BaseModel, Field

from actsagent.db.base import Database
from actsagent.kb.glossary import Glossary
from actsagent.kb.models import SOURCE_RANK, ColumnEntry, KnowledgeBase, Relationship, TableEntry
from actsagent.naming import expand, parts, readable, words
from actsagent.schema.model import ColumnInfo, SchemaInfo, TableInfo

VALUE_CAP = 200  # frequent distinct text values kept per column for matching
VALUE_MAX_LEN = 60
SAMPLES_SHOWN = 5
SCAN_ROWS = 20_000
DESCRIPTION_MAX = 400
NUMERIC_HINTS = ("int", "real", "float", "double", "numeric", "decimal", "number", "date", "time", "year")
log = logging.getLogger("actsagent.kb")


def fingerprint(info: SchemaInfo) -> str:
    parts = sorted(f"{t.name}:" + ",".join(f"{c.name} {c.type}" for c in t.columns) for t in info.tables)
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:16]


def build_kb(
    db: Database, *, glossary: Glossary | None = None, model: Any = None, previous: KnowledgeBase | None = None
) -> KnowledgeBase:
    """A knowledge base for ``db``; ``previous`` (an earlier build) keeps its trusted parts."""
    info = db.schema(refresh=True)
    glossary = glossary or Glossary()
    kb = KnowledgeBase(
        database=db.name,
        dialect=db.dialect,
        fingerprint=fingerprint(info),
        glossary_terms={k.lower(): v for k, v in glossary.terms.items()},
    )
    referenced_by: dict[str, list[str]] = {}
    for t in info.tables:
        for fk in t.foreign_keys:
            referenced_by.setdefault(fk.ref_table.lower().split(".")[-1], []).append(t.name)
    for t in info.tables:
        entry = TableEntry(
            name=t.name,
            readable=readable(t.name),
            row_count=t.row_estimate,
            relationships=[
                Relationship(columns=fk.columns, ref_table=fk.ref_table.split(".")[-1], ref_columns=fk.ref_columns)
                for fk in t.foreign_keys
            ],
        )
        for c in t.columns:
            col = ColumnEntry(
                name=c.name,
                type=c.type,
                readable=readable(c.name),
                primary_key=c.primary_key,
                references=c.references,
                samples=c.sample_values[:SAMPLES_SHOWN],
            )
            _values(db, t, c, col)
            col.description, col.source = _column_text(t, c, col, kb.glossary_terms), "template"
            if c.comment:
                col.description, col.source = f"{c.comment.strip()} ({col.description})", "comment"
            entry.columns.append(col)
        entry.description = _table_text(t, entry, referenced_by.get(t.name.lower(), []), kb.glossary_terms)
        if t.comment:
            entry.description, entry.source = f"{t.comment.strip()} ({entry.description})", "comment"
        kb.tables.append(entry)
    _apply_glossary(kb, glossary)
    if model is not None:
        describe_with_llm(kb, db, model)
    if previous is not None:
        _keep_trusted(kb, previous)
    return kb


# ----- facts from the data -----------------------------------------------------------------------


def _is_numeric(c: ColumnInfo) -> bool:
    return any(h in c.type.lower() for h in NUMERIC_HINTS)


def _values(db: Database, t: TableInfo, c: ColumnInfo, col: ColumnEntry) -> None:
    """Frequent text values (for matching a question's words) or the range of a numeric column."""
    scan = f"(SELECT {c.sql_name(db.dialect)} AS v FROM {t.sql_name(db.dialect)} LIMIT {SCAN_ROWS}) s"
    if _is_numeric(c):
        res = db.execute(f"SELECT min(v), max(v) FROM {scan} WHERE v IS NOT NULL", timeout_s=20)
        if res.ok and res.rows and res.rows[0][0] is not None:
            col.value_range = (str(res.rows[0][0])[:VALUE_MAX_LEN], str(res.rows[0][1])[:VALUE_MAX_LEN])
        return
    res = db.execute(
        f"SELECT v, count(*) FROM {scan} WHERE v IS NOT NULL GROUP BY v ORDER BY count(*) DESC, v LIMIT {VALUE_CAP}",
        max_rows=VALUE_CAP,
        timeout_s=20,
    )
    if not res.ok:
        return
    vals = [str(v) for v, _ in res.rows if not isinstance(v, bytes | bytearray | memoryview)]
    col.values = [v for v in vals if 0 < len(v) <= VALUE_MAX_LEN]
    if not col.samples:
        col.samples = col.values[:SAMPLES_SHOWN]


# ----- templates ------------------------------------------------------------------------------------


def _expansions(name: str) -> str:
    """``cntry`` -> 'cntry: probably country': said only where a word was expanded."""
    pairs = [(w, expand(w)) for w in words(name)]
    said = [f"{w} = {e}" for w, e in pairs if e]
    return f"({'; '.join(said)}, a guess from the name)" if said else ""


def _terms(name: str, terms: dict[str, str]) -> str:
    hits = [f"{w}: {terms[w]}" for w in dict.fromkeys(parts(name) + words(name)) if w in terms]
    if name.lower() in terms:
        hits.insert(0, f"{name}: {terms[name.lower()]}")
    return "; ".join(dict.fromkeys(hits))


def _column_text(t: TableInfo, c: ColumnInfo, col: ColumnEntry, terms: dict[str, str]) -> str:
    parts = [f"{col.readable or c.name} of {readable(t.name)}"]
    if exp_ := _expansions(c.name):
        parts[0] += f" {exp_}"
    kind = []
    if c.primary_key:
        kind.append("primary key")
    if c.references:
        kind.append(f"refers to {c.references}")
    if kind:
        parts.append(", ".join(kind))
    if col.value_range:
        parts.append(f"from {col.value_range[0]} to {col.value_range[1]}")
    elif col.values:
        n = len(col.values)
        shown = ", ".join(repr(v) for v in col.values[:SAMPLES_SHOWN])
        parts.append(
            f"{'about ' if n < VALUE_CAP else 'over '}{n} distinct values, e.g. {shown}" if n > 1 else f"always {shown}"
        )
    if term := _terms(c.name, terms):
        parts.append(term)
    return "; ".join(parts)


def _table_text(t: TableInfo, entry: TableEntry, referenced_by: list[str], terms: dict[str, str]) -> str:
    parts = [f"{entry.readable or t.name}" + (f" {_expansions(t.name)}" if _expansions(t.name) else "")]
    if t.row_estimate is not None:
        parts.append(f"{t.row_estimate} rows")
    cols = ", ".join(c.readable or c.name for c in entry.columns[:12])
    parts.append(f"columns: {cols}{', ...' if len(entry.columns) > 12 else ''}")
    if entry.relationships:
        parts.append("links to " + ", ".join(sorted({r.ref_table for r in entry.relationships})))
    if referenced_by:
        parts.append("referenced by " + ", ".join(sorted(set(referenced_by))))
    if term := _terms(t.name, terms):
        parts.append(term)
    return "; ".join(parts)


def _apply_glossary(kb: KnowledgeBase, glossary: Glossary) -> None:
    for name, text in glossary.tables.items():
        if (t := kb.table(name)) is not None:
            t.description, t.source = text, "glossary"
    for key, text in glossary.columns.items():
        table, _, column = key.rpartition(".")
        t = kb.table(table)
        c = t.column(column) if t is not None else None
        if c is not None:
            c.description, c.source = text, "glossary"


def _keep_trusted(kb: KnowledgeBase, previous: KnowledgeBase) -> None:
    """Carry over descriptions a rebuild must not overwrite, and the examples and history."""
    for t in kb.tables:
        old = previous.table(t.name)
        if old is None:
            continue
        if SOURCE_RANK[old.source] > SOURCE_RANK[t.source]:
            t.description, t.source = old.description, old.source
        for c in t.columns:
            oc = old.column(c.name)
            if oc is not None and SOURCE_RANK[oc.source] > SOURCE_RANK[c.source]:
                c.description, c.source = oc.description, oc.source
    kb.examples = list(previous.examples)
    kb.history = list(previous.history)


# ----- with an LLM --------------------------------------------------------------------------------


class TableDescriptions(BaseModel):
    """What the ``kb_describe`` prompt returns for one table."""

    table: str = Field(description="one or two sentences: what a row of the table is")
    columns: dict[str, str] = Field(default_factory=dict, description="column name -> what its values mean")


def describe_with_llm(kb: KnowledgeBase, db: Database, model: Any) -> None:
    """Rewrite templated descriptions table by table; a failed call keeps the templates of that table.

    Model output is untrusted: only columns of the table are taken, texts are cut to a bounded length.
    """
    from actsagent.llm import StructuredOutputError
    from actsagent.prompts import render

    names = {t.name for t in kb.tables}
    for t in kb.tables:
        messages = render(
            "kb_describe",
            dialect=db.dialect,
            database=kb.database,
            table=t.name,
            table_facts=t.description,
            related=", ".join(sorted({r.ref_table for r in t.relationships} & names)) or "none",
            columns=[{"name": c.name, "type": c.type, "facts": c.description} for c in t.columns],
        )
        try:
            resp = model.complete(messages, role="tools", response_model=TableDescriptions)
        except StructuredOutputError as e:
            log.warning("kb: no descriptions for table %s from the model (%s); templates kept", t.name, e)
            continue
        out: TableDescriptions = resp.parsed
        if out.table.strip() and SOURCE_RANK[t.source] <= SOURCE_RANK["llm"]:
            t.description, t.source = _clip(out.table), "llm"
        for name, text in out.columns.items():
            c = t.column(name)
            if c is not None and text.strip() and SOURCE_RANK[c.source] <= SOURCE_RANK["llm"]:
                c.description, c.source = _clip(text), "llm"
    kb.described_by = f"llm:{(getattr(model, 'config', None) and model.config.model_for('tools')) or 'model'}"


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DESCRIPTION_MAX else text[: DESCRIPTION_MAX - 3] + "..."
