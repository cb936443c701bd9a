"""The knowledge base (Reflect-SQL): descriptions of tables, columns and relationships, searched
hierarchically to give a prompt the part of an obscure schema a question needs.

    from actsagent import kb
    kb.build(db)                                   # templated (or LLM-written) descriptions, stored
    ctx = kb.context_for("How many heroes are from Marvel?", db, budget_chars=2200)
    ctx.text, ctx.tables, ctx.columns, ctx.relevance, ctx.completeness

Enrichment only from verified answers: ``add_example(db, question, sql, Provenance(...))`` checks
the SQL (guard, execution, names) and records who vouched for it; ``retract_example`` and
``undo`` take changes back; ``edit_description`` sets a description by hand (source "manual").
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

from actsagent.db.base import Database
from actsagent.errors import UserError
from actsagent.kb.build import build_kb, fingerprint
from actsagent.kb.glossary import Glossary, load_glossary
from actsagent.kb.models import Change, KnowledgeBase, Provenance, VerifiedExample
from actsagent.kb.retrieve import DEFAULT_BUDGET, Retriever, SchemaContext
from actsagent.kb.store import KbStore, dumps, open_store
from actsagent.safeql.embeddings import Embedder, shared_embedder

__all__ = [
    "DEFAULT_BUDGET",
    "Glossary",
    "KnowledgeBase",
    "Provenance",
    "Retriever",
    "SchemaContext",
    "VerifiedExample",
    "add_example",
    "add_verified_run",
    "build",
    "context_for",
    "dumps",
    "edit_description",
    "load",
    "load_glossary",
    "retract_example",
    "retriever",
    "undo",
]

_RETRIEVERS: dict[tuple[str, str], tuple[str, Retriever]] = {}
_LOCK = threading.Lock()


def build(
    db: Database,
    *,
    glossary: Glossary | str | Path | None = None,
    model: Any = None,
    path: Path | None = None,
    replace: bool = False,
    embedder: Embedder | None = None,
) -> KnowledgeBase:
    """Build (or rebuild) and store the knowledge base of ``db``; a rebuild keeps manual, glossary and
    LLM descriptions, examples and history unless ``replace``."""
    if isinstance(glossary, str | Path):
        glossary = load_glossary(glossary)
    store = open_store(db, path=path)
    previous = None if replace else store.load()
    kb = build_kb(db, glossary=glossary, model=model, previous=previous)
    store.save(kb, embedder or shared_embedder())
    _forget(db, path)
    return kb


def load(db: Database, *, path: Path | None = None) -> KnowledgeBase | None:
    return open_store(db, path=path).load()


def _key(db: Database, path: Path | None) -> tuple[str, str]:
    return db.url, str(path or "")


def _forget(db: Database, path: Path | None) -> None:
    with _LOCK:
        _RETRIEVERS.pop(_key(db, path), None)


def retriever(
    db: Database,
    *,
    path: Path | None = None,
    model: Any = None,
    build_missing: bool = True,
    embedder: Embedder | None = None,
) -> Retriever:
    """The retriever of ``db``'s knowledge base (built on first use unless ``build_missing`` is off);
    cached per database for the process, rebuilt when the catalog changed."""
    emb = embedder or shared_embedder()
    key = _key(db, path)
    fp = fingerprint(db.schema())
    with _LOCK:
        cached = _RETRIEVERS.get(key)
        if cached is not None and cached[0] == fp:
            cached[1].model = model
            return cached[1]
    store = open_store(db, path=path)
    kb = store.load()
    if kb is None or kb.fingerprint != fp:
        if kb is None and not build_missing:
            raise UserError(f"no knowledge base for {db.name}: build one with `actsagent kb build`")
        kb = build_kb(db, previous=kb)
        store.save(kb, emb)
    r = Retriever(kb=kb, index=store.index(kb, emb), embedder=emb, model=model)
    with _LOCK:
        _RETRIEVERS[key] = (fp, r)
    return r


def context_for(
    question: str,
    db: Database,
    budget_chars: int = DEFAULT_BUDGET,
    *,
    evidence: str = "",
    model: Any = None,
    path: Path | None = None,
    sql: str | list[str] | None = None,
) -> SchemaContext:
    """The schema context for ``question`` within ``budget_chars`` characters (the knowledge base is
    built on first use); the tables ``sql`` names are always in it. ``ctx.prompt_vars()`` fills the
    ``_schema.md`` partial like ``tools._schema_context.schema_view`` does."""
    if not question or not question.strip():
        raise UserError("the question is empty")
    if budget_chars < 200:
        raise UserError("the context budget must be at least 200 characters")
    from actsagent.tools._schema_context import sql_tables

    named = sql_tables(sql, db.dialect) if sql else set()
    return retriever(db, path=path, model=model).retrieve(
        question, budget_chars=budget_chars, evidence=evidence, tables=named
    )


# ----- enrichment from verified answers -------------------------------------------------------------


def _mutate(db: Database, path: Path | None, embedder: Embedder | None, change) -> Any:
    store: KbStore = open_store(db, path=path)
    kb = store.load()
    if kb is None:
        raise UserError(f"no knowledge base for {db.name}: build one with `actsagent kb build`")
    out = change(kb)
    store.save(kb, embedder or shared_embedder())
    _forget(db, path)
    return out


def add_example(
    db: Database,
    question: str,
    sql: str,
    provenance: Provenance,
    *,
    path: Path | None = None,
    embedder: Embedder | None = None,
) -> VerifiedExample:
    """Record a verified (question, SQL): the SQL must pass the strict guard, run, and name catalog
    tables; the provenance says who verified it. Its tables and columns then rank higher for
    similar questions."""
    from actsagent.guard import check_sql, run_guarded
    from actsagent.sqlnames import SqlNamesError, references

    question, sql = (question or "").strip(), (sql or "").strip()
    if not question:
        raise UserError("the question is empty")
    if len(question) > 2000 or len(sql) > 20000:
        raise UserError("question or SQL too long for a knowledge base example")
    checked = check_sql(sql, db.dialect)
    if not checked.ok:
        raise UserError(f"not added: the SQL is refused by the guard ({checked.reason})")
    res = run_guarded(db, sql)
    if not res.ok:
        raise UserError(f"not added: the SQL fails on {db.name}: {res.message}")
    try:
        refs = references(sql, db.schema(), db.dialect)
    except SqlNamesError as e:
        raise UserError(f"not added: {e}") from e
    if not refs.tables:
        raise UserError("not added: the SQL reads no table of the database")
    info = db.schema()
    ex = VerifiedExample(
        id=hashlib.sha1(f"{question}\n{sql}".encode()).hexdigest()[:12],
        question=question,
        sql=sql,
        tables=sorted(info.table(t).name for t in refs.tables),  # type: ignore[union-attr]
        columns=sorted(
            f"{info.table(t).name}.{info.table(t).column(c).name}"  # type: ignore[union-attr]
            for t, c in refs.columns
        ),
        provenance=provenance,
        row_count=res.row_count,
    )

    def change(kb: KnowledgeBase) -> VerifiedExample:
        if any(e.id == ex.id and e.status == "active" for e in kb.examples):
            raise UserError(f"example {ex.id} is already in the knowledge base")
        kb.examples = [e for e in kb.examples if e.id != ex.id] + [ex]
        kb.history.append(Change(kind="example_add", target=ex.id, after=question, by=provenance.verified_by))
        return ex

    return _mutate(db, path, embedder, change)


def add_verified_run(
    db: Database, run: Any, *, verified_by: str, path: Path | None = None, embedder: Embedder | None = None
) -> VerifiedExample:
    """Record an agent run as an example only when it was solved and its verdict passed."""
    passed = run.verdict is not None and run.verdict.passed
    if run.status != "solved" or not passed or not run.final_sql:
        raise UserError(
            f"run {run.thread_id} is not a verified answer (status {run.status}, "
            f"verdict {'passed' if passed else 'not passed'})"
        )
    return add_example(
        db,
        run.intent,
        run.final_sql,
        Provenance(source="agent", verified_by=verified_by, reference=run.thread_id or ""),
        path=path,
        embedder=embedder,
    )


def retract_example(
    db: Database, example_id: str, *, reason: str, by: str, path: Path | None = None, embedder: Embedder | None = None
) -> VerifiedExample:
    """Take a verified example back (kept, marked retracted, so the audit trail stays)."""

    def change(kb: KnowledgeBase) -> VerifiedExample:
        ex = next((e for e in kb.examples if e.id == example_id), None)
        if ex is None or ex.status != "active":
            raise UserError(f"no active example {example_id!r}")
        ex.status, ex.retracted_reason = "retracted", reason
        kb.history.append(Change(kind="example_retract", target=example_id, before="active", after="retracted", by=by))
        return ex

    return _mutate(db, path, embedder, change)


def edit_description(
    db: Database,
    table: str,
    column: str | None,
    text: str,
    *,
    by: str,
    path: Path | None = None,
    embedder: Embedder | None = None,
) -> Change:
    """Set a description by hand (source "manual": rebuilds keep it)."""
    text = " ".join((text or "").split())
    if not text or len(text) > 1000:
        raise UserError("a description must have 1 to 1000 characters")

    def change(kb: KnowledgeBase) -> Change:
        t = kb.table(table)
        if t is None:
            raise UserError(f"no table {table!r} in the knowledge base")
        target: Any = t
        if column:
            target = t.column(column)
            if target is None:
                raise UserError(f"no column {column!r} in table {t.name}")
        ch = Change(
            kind="edit",
            target=t.name + (f".{target.name}" if column else ""),
            before=target.description,
            before_source=target.source,
            after=text,
            by=by,
        )
        target.description, target.source = text, "manual"
        kb.history.append(ch)
        return ch

    return _mutate(db, path, embedder, change)


def undo(db: Database, *, path: Path | None = None, embedder: Embedder | None = None) -> Change:
    """Reverse the latest change not undone yet (an edit, an added or a retracted example)."""

    def change(kb: KnowledgeBase) -> Change:
        ch = next((c for c in reversed(kb.history) if not c.undone), None)
        if ch is None:
            raise UserError("nothing to undo")
        if ch.kind == "edit":
            table, _, column = ch.target.partition(".")
            t = kb.table(table)
            target = (t.column(column) if column else t) if t is not None else None
            if target is None:
                raise UserError(f"cannot undo the edit of {ch.target}: it is no longer in the database")
            target.description, target.source = ch.before or "", ch.before_source or "template"
        else:
            ex = next((e for e in kb.examples if e.id == ch.target), None)
            if ex is not None and ch.kind == "example_add":
                kb.examples.remove(ex)
            elif ex is not None:
                ex.status, ex.retracted_reason = "active", ""
        ch.undone = True
        kb.history.append(
            Change(kind=ch.kind, target=ch.target, before=ch.after, after=ch.before, by=f"undo of {ch.at}", undone=True)
        )
        return ch

    return _mutate(db, path, embedder, change)
