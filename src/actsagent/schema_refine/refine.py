"""EGRefine's pipeline: screen obscure names, propose names, keep a rename only when the workload
shows no loss, and materialise the result as views.

Screening is heuristic (short names, codes, words not in the dictionary); foreign-key columns
follow their key and names shared with another table (likely implicit join keys) are left alone.
Proposals come from the knowledge base's expansions (``cntry`` -> ``country``) without an LLM,
from the ``refine_names`` prompt with one, or from the caller.

Verification is execution-grounded and column-local, then global: each candidate name is put
in a trial view and every workload query touching the identifier is rewritten as its author
would have written it against the new names (``sqlnames.rename(minimal=True)``: unqualified
columns stay unqualified) and must return the rows the original returns on the base tables.
A name that makes a query ambiguous, resolve to another column, or fail is rejected. The kept
renames are then checked together; renames a failing query touches are dropped until the whole
workload passes. An optional ``ask`` callable (text-to-SQL) adds EGRefine's model check: the
model's accuracy on those questions must not drop under the new name.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from actsagent.benchmarks import same_result
from actsagent.db.base import Database
from actsagent.db.postgres import PostgresDatabase
from actsagent.errors import UserError
from actsagent.naming import obscurity, parts, words
from actsagent.schema.model import SchemaInfo
from actsagent.schema_refine.models import IDENT, Candidate, Decision, Proposal, Refinement, TableMap, WorkloadItem
from actsagent.schema_refine.views import create_views, drop_views, require_postgres, with_search_path
from actsagent.sqlnames import SqlNamesError, SqlRefs, references, rename

TRIAL_SCHEMA = "actsagent_refine_trial"
log = logging.getLogger("actsagent.refine")
Ask = Callable[[str, Database], "str | None"]


def screen(info: SchemaInfo, *, threshold: float = 0.5) -> list[Candidate]:
    """Obscure table and column names, most obscure first."""
    seen: dict[str, set[str]] = {}
    for t in info.tables:
        for c in t.columns:
            seen.setdefault(f"{c.name.lower()}:{c.type}", set()).add(t.name)
    out: list[Candidate] = []
    for t in info.tables:
        score, reasons = obscurity(t.name)
        if score >= threshold:
            out.append(Candidate(table=t.name, obscurity=score, reasons=reasons))
        for c in t.columns:
            if c.references:
                continue  # a foreign key follows the key it references
            if len(seen[f"{c.name.lower()}:{c.type}"]) > 1 and not c.primary_key:
                continue  # the same name and type in another table: likely an implicit join key
            score, reasons = obscurity(c.name)
            if score >= threshold:
                out.append(Candidate(table=t.name, column=c.name, obscurity=score, reasons=reasons))
    return sorted(out, key=lambda c: (-c.obscurity, c.table, c.column or ""))


def _snake(text: str) -> str:
    return "_".join(w for w in words(text.replace(" ", "_")) if w)


def propose_from_kb(candidates: list[Candidate], kb: Any) -> list[Proposal]:
    """Names from the knowledge base's readable form of each name (abbreviations expanded)."""
    out = []
    for cand in candidates:
        t = kb.table(cand.table)
        entry = t if cand.column is None else (t.column(cand.column) if t is not None else None)
        if entry is None:
            continue
        name = _snake(entry.readable)
        same = name.replace("_", "") == (cand.column or cand.table).lower().replace("_", "")  # A2 -> a_2: no news
        if name and not same and IDENT.match(name):
            out.append(Proposal(table=cand.table, column=cand.column, names=[name], source="kb"))
    return out


def _lead_name(description: str) -> str | None:
    """A name from a description's leading phrase ("County name: the county ..." -> ``county_name``), when
    it is short enough to be a name (at most four words)."""
    lead = re.split(r"[:;,(.\n]| - ", description, maxsplit=1)[0]
    ws = [w for w in re.findall(r"[A-Za-z0-9]+", lead.lower()) if w not in _ARTICLES]
    name = "_".join(ws)
    return name if 0 < len(ws) <= 4 and IDENT.match(name) else None


_ARTICLES = frozenset({"a", "an", "the"})


def propose_from_glossary(candidates: list[Candidate], glossary: Any) -> list[Proposal]:
    """Names from a user's glossary (``kb.Glossary``): the leading phrase of the table's or column's
    description, and the name with its parts replaced by the glossary's terms (``cnt_k12`` with
    ``k12`` -> "kindergarten through grade 12" only when the term reads as a name of a few words)."""
    tables = {k.lower(): v for k, v in glossary.tables.items()}
    columns = {k.lower(): v for k, v in glossary.columns.items()}
    terms = {k.lower(): v for k, v in glossary.terms.items()}
    out = []
    for cand in candidates:
        old = cand.column or cand.table
        desc = tables.get(cand.table.lower()) if cand.column is None else columns.get(f"{cand.table}.{old}".lower())
        names = [n for n in [_lead_name(desc or "")] if n]
        ps = parts(old)
        expanded = [_lead_name(terms[p]) if p in terms else p for p in ps]
        if any(p in terms for p in ps) and all(expanded):
            names.append("_".join(expanded))  # type: ignore[arg-type]
        names = [n for n in names if n != old.lower()]
        if names:
            out.append(Proposal(table=cand.table, column=cand.column, names=names, source="user"))
    return out


def merge_proposals(*groups: list[Proposal]) -> list[Proposal]:
    """One proposal per identifier, its names in the order of ``groups`` (the first group's first)."""
    merged: dict[tuple[str, str | None], Proposal] = {}
    for group in groups:
        for p in group:
            key = (p.table.lower(), (p.column or "").lower() or None)
            if key in merged:
                merged[key].names = list(dict.fromkeys(merged[key].names + p.names))
            else:
                merged[key] = p.model_copy(deep=True)
    return list(merged.values())


def propose_with_llm(candidates: list[Candidate], kb: Any, model: Any, *, k: int = 3) -> list[Proposal]:
    """Up to ``k`` names per candidate from the ``refine_names`` prompt; invalid names are dropped."""
    from pydantic import BaseModel, Field

    from actsagent.llm import StructuredOutputError
    from actsagent.prompts import render

    class Names(BaseModel):
        names: list[str] = Field(default_factory=list, max_length=10)

    out = []
    for cand in candidates:
        t = kb.table(cand.table)
        if t is None:
            continue
        entry = t if cand.column is None else t.column(cand.column)
        if entry is None:
            continue
        messages = render(
            "refine_names",
            dialect=kb.dialect,
            table=t.name,
            column=cand.column or "",
            description=entry.description,
            k=k,
            neighbours=", ".join(c.name for c in t.columns if c.name != cand.column)[:600],
            samples=", ".join(repr(v) for v in getattr(entry, "samples", [])[:10]),
        )
        try:
            names = model.complete(messages, role="tools", response_model=Names).parsed.names
        except StructuredOutputError as e:
            log.warning("refine: no names for %s.%s from the model (%s)", cand.table, cand.column, e)
            continue
        p = Proposal(table=cand.table, column=cand.column, names=names, source="llm")  # invalid names dropped
        p.names = p.names[:k]
        if p.names:
            out.append(p)
    return out


# ----- verification ------------------------------------------------------------------------------------


class _Workload:
    """The workload's queries with their references and base results (computed once)."""

    def __init__(self, db: PostgresDatabase, info: SchemaInfo, items: list[WorkloadItem]) -> None:
        self.db, self.info = db, info
        self.items: list[tuple[WorkloadItem, SqlRefs, list]] = []
        self.skipped: list[str] = []
        from actsagent.guard import check_sql

        for w in items:
            if not (checked := check_sql(w.sql, "postgres")).ok:
                self.skipped.append(f"{w.sql[:60]}: refused by the guard ({checked.reason})")
                continue
            try:
                refs = references(w.sql, info, "postgres")
            except SqlNamesError as e:
                self.skipped.append(f"{w.sql[:60]}: {e}")
                continue
            res = db.execute(w.sql, max_rows=100_000, timeout_s=30)
            if not res.ok:
                self.skipped.append(f"{w.sql[:60]}: fails on the base tables ({res.message})")
                continue
            self.items.append((w, refs, res.rows))

    def drop_view_incompatible(self, trial: PostgresDatabase) -> None:
        """Set aside the queries that fail or differ over views with no rename at all (PostgreSQL infers no
        functional dependency from a view's key, so ``GROUP BY`` the key then selecting other columns
        fails): no rename can be blamed for them, and left in they would hide a rename's failure."""
        keep = []
        for i, (w, refs, rows) in enumerate(self.items):
            ok, why, _ = self.check(trial, [i], {}, {})
            if ok:
                keep.append((w, refs, rows))
            else:
                self.skipped.append(f"{w.sql[:60]}: fails over views even without renames ({why.split(': ', 1)[-1]})")
        self.items = keep

    def touching(self, table: str, column: str | None) -> list[int]:
        t = table.lower()
        return [
            i
            for i, (_, refs, _) in enumerate(self.items)
            if (t in refs.tables if column is None else (t, column.lower()) in refs.columns)
        ]

    def check(
        self, trial: PostgresDatabase, indices: list[int], tables: dict[str, str], columns: dict[tuple[str, str], str]
    ) -> tuple[bool, str, int | None]:
        """Run the queries as written against the new names on ``trial``; (ok, reason, failing index)."""
        for i in indices:
            w, _, rows = self.items[i]
            try:
                sql = rename(w.sql, self.info, "postgres", tables=tables, columns=columns, minimal=True)
            except SqlNamesError as e:
                return False, f"query #{i} cannot be rewritten: {e}", i
            res = trial.execute(sql, max_rows=100_000, timeout_s=30)
            if not res.ok:
                return False, f"query #{i} breaks: {res.message}", i
            if not same_result(rows, res.rows, bench="workload", gold_sql=w.sql):
                return False, f"query #{i} returns different rows", i
        return True, "", None


def _maps(
    info: SchemaInfo, kept: dict[tuple[str, str | None], str]
) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    tables = {t.lower(): new for (t, c), new in kept.items() if c is None}
    columns = {(t.lower(), c.lower()): new for (t, c), new in kept.items() if c is not None}
    return tables, columns


def _collision(info: SchemaInfo, table: str, column: str | None, new: str, kept: dict) -> str | None:
    t = info.table(table)
    if column is None:
        taken = {x.name.lower() for x in info.tables if x.name.lower() != table.lower()}
        taken |= {n.lower() for (tt, c), n in kept.items() if c is None and tt.lower() != table.lower()}
        return f"table {new} exists" if new.lower() in taken else None
    others = {c.name.lower() for c in t.columns if c.name.lower() != column.lower()}  # type: ignore[union-attr]
    others |= {
        n.lower() for (tt, c), n in kept.items() if tt.lower() == table.lower() and c and c.lower() != column.lower()
    }
    return f"column {new} exists in {table}" if new.lower() in others else None


def _refinement(db: Database, info: SchemaInfo, kept: dict[tuple[str, str | None], str], schema: str) -> Refinement:
    out = Refinement(database=db.name, schema_name=schema)
    for t in info.tables:
        cols = {c.name: kept[(t.name, c.name)] for c in t.columns if (t.name, c.name) in kept}
        out.tables.append(
            TableMap(
                base_schema=t.schema_name or "public", table=t.name, view=kept.get((t.name, None), t.name), columns=cols
            )
        )
    return out


def _propagate_keys(info: SchemaInfo, kept: dict[tuple[str, str | None], str]) -> dict[tuple[str, str | None], str]:
    """EGRefine's PK -> FK propagation: a foreign key column takes its renamed key's name when free."""
    out = dict(kept)
    for t in info.tables:
        for fk in t.foreign_keys:
            if len(fk.columns) != 1:
                continue
            ref = info.table(fk.ref_table)
            if ref is None or not fk.ref_columns[0]:
                continue
            ref_col = ref.column(fk.ref_columns[0])
            new = kept.get((ref.name, ref_col.name if ref_col else ""))
            col = t.column(fk.columns[0])
            if (
                new
                and col is not None
                and (t.name, col.name) not in out
                and not _collision(info, t.name, col.name, new, out)
            ):
                out[(t.name, col.name)] = new
    return out


def refine(
    db: Database,
    proposals: list[Proposal],
    workload: list[WorkloadItem],
    *,
    schema: str = "refined",
    ask: Ask | None = None,
    materialise: bool = True,
) -> Refinement:
    """Verify ``proposals`` on ``workload`` and (unless ``materialise`` is off) create the views."""
    pg = require_postgres(db)
    if schema.lower() in ("public", "pg_catalog", "information_schema", "actsagent", "actsagent_kb", TRIAL_SCHEMA):
        raise UserError(f"schema {schema!r} is reserved: choose another --schema")
    info = pg.schema(refresh=True)
    info = info.model_copy(update={"tables": [t for t in info.tables if (t.schema_name or "public") == "public"]})
    wl = _Workload(pg, info, workload)
    trial = PostgresDatabase(with_search_path(pg.url, TRIAL_SCHEMA, "public"), limits=pg.limits)
    kept: dict[tuple[str, str | None], str] = {}
    decisions: list[Decision] = []
    try:
        create_views(pg, _refinement(pg, info, {}, TRIAL_SCHEMA), info, schema=TRIAL_SCHEMA, comment=False)
        trial.discard_broken_connections()
        wl.drop_view_incompatible(trial)
        for p in proposals:
            old = p.column or p.table
            if info.table(p.table) is None or (p.column and info.table(p.table).column(p.column) is None):  # type: ignore[union-attr]
                decisions.append(
                    Decision(table=p.table, column=p.column, old=old, new=None, reason="not in the database")
                )
                continue
            idx = wl.touching(p.table, p.column)
            d = Decision(table=p.table, column=p.column, old=old, new=None, tried=p.names, queries=len(idx), reason="")
            if not idx:
                d.reason = "no workload query touches it: nothing to verify against, original name kept"
                decisions.append(d)
                continue
            reasons = []
            for name in p.names:
                if clash := _collision(info, p.table, p.column, name, kept):
                    reasons.append(f"{name}: {clash}")
                    continue
                trial_kept = {**kept, (p.table, p.column): name}
                tables, columns = _maps(info, {(p.table, p.column): name})
                create_views(
                    pg,
                    _refinement(pg, info, {(p.table, p.column): name}, TRIAL_SCHEMA),
                    info,
                    schema=TRIAL_SCHEMA,
                    comment=False,
                )
                trial.discard_broken_connections()
                ok, why, _ = wl.check(trial, idx, tables, columns)
                if ok and ask is not None:
                    ok, why = _model_check(ask, wl, idx, pg, trial)
                if ok:
                    kept = trial_kept
                    d.new, d.reason = name, f"no loss on the {len(idx)} workload queries that touch it"
                    break
                reasons.append(f"{name}: {why}")
            if d.new is None:
                d.reason = "rejected: " + "; ".join(reasons)
            decisions.append(d)
        kept = _global_check(pg, info, wl, trial, kept, decisions)
    finally:
        trial.close()
        drop_views(pg, TRIAL_SCHEMA)
    out = _refinement(pg, info, kept, schema)
    out.decisions, out.skipped_workload = decisions, wl.skipped
    if materialise:
        create_views(pg, out, info)
    return out


def _global_check(
    pg: PostgresDatabase,
    info: SchemaInfo,
    wl: _Workload,
    trial: PostgresDatabase,
    kept: dict[tuple[str, str | None], str],
    decisions: list[Decision],
) -> dict:
    """All kept renames (and their propagated foreign keys) together: drop those a failing query touches."""
    propagate = True
    while True:
        full = _propagate_keys(info, kept) if propagate else dict(kept)
        create_views(pg, _refinement(pg, info, full, TRIAL_SCHEMA), info, schema=TRIAL_SCHEMA, comment=False)
        trial.discard_broken_connections()
        tables, columns = _maps(info, full)
        ok, why, bad = wl.check(trial, list(range(len(wl.items))), tables, columns)
        if ok:
            for (t, c), new in full.items():
                if (t, c) not in kept:
                    decisions.append(Decision(table=t, column=c, old=c or t, new=new, reason="follows its renamed key"))
            return full
        _, refs, _ = wl.items[bad]  # type: ignore[index]
        culprits = [
            k
            for k in kept
            if (k[1] is None and k[0].lower() in refs.tables)
            or (k[1] is not None and (k[0].lower(), k[1].lower()) in refs.columns)
        ]
        if not culprits and propagate:  # a propagated key broke it: verify again without propagating
            propagate = False
            continue
        if not culprits and not kept:  # nothing renamed: the views are the tables as they are
            return kept
        if not culprits:  # only renames together break it, none named by the query: keep none (never unverified)
            culprits = list(kept)
        for k in culprits:
            kept.pop(k)
            for d in decisions:
                if (d.table, d.column) == k:
                    d.new, d.reason = None, f"dropped: with the other renames, {why}"


def _model_check(
    ask: Ask, wl: _Workload, idx: list[int], base: PostgresDatabase, trial: PostgresDatabase
) -> tuple[bool, str]:
    """EGRefine's check: the model's execution accuracy on these questions must not drop."""

    def accuracy(db: PostgresDatabase) -> int:
        hits = 0
        for i in idx:
            w, _, rows = wl.items[i]
            sql = ask(w.question, db) if w.question else None
            res = db.execute(sql, max_rows=100_000, timeout_s=30) if sql else None
            hits += bool(res is not None and res.ok and same_result(rows, res.rows, bench="workload", gold_sql=w.sql))
        return hits

    before, after = accuracy(base), accuracy(trial)
    return (
        after >= before,
        f"model accuracy {after}/{len(idx)} < {before}/{len(idx)} before" if after < before else "",
    )
