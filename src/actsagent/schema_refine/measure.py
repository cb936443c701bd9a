"""Refine one database for a measurement, and show the refinement is safe.

A benchmark asks over the refined views; what it may claim rests on three checks made here, on the
database itself rather than taken on trust: the base tables hold the same rows before and after
(row count and an order-independent checksum per table), every view holds exactly its base table's
rows (the same checksum over the view), and every workload query the refinement verified still
returns its rows when rewritten to the view names and run on the views (no workload loss).

Proposals come without an LLM: the knowledge base's expansions of each name and, when given, the
user's glossary (``kb.Glossary``), whose names are tried first.
"""

from __future__ import annotations

import time

from pydantic import BaseModel, Field

from actsagent.benchmarks import same_result
from actsagent.db.postgres import PostgresDatabase
from actsagent.errors import ActsagentError
from actsagent.kb.build import build_kb
from actsagent.kb.glossary import Glossary
from actsagent.schema.model import SchemaInfo
from actsagent.schema_refine.models import Refinement, TableMap, WorkloadItem
from actsagent.schema_refine.refine import (
    TRIAL_SCHEMA,
    _Workload,
    merge_proposals,
    propose_from_glossary,
    propose_from_kb,
    refine,
    screen,
)
from actsagent.schema_refine.views import (
    RefinedDatabase,
    _q,
    create_views,
    drop_views,
    require_postgres,
    to_base,
    with_search_path,
)
from actsagent.sqlnames import rename


class Safety(BaseModel):
    """The refinement's safety on one database (each figure measured, none assumed)."""

    tables: int
    base_rows: int
    base_unchanged: bool  # every base table: same row count and checksum after refinement as before
    changed_tables: list[str] = Field(default_factory=list)
    views_equal: bool  # every view: the row count and checksum of its base table
    unequal_views: list[str] = Field(default_factory=list)
    workload_verified: int  # workload queries that run on the base tables (the others are skipped)
    workload_kept: int  # of those, rewritten to the view names, same rows on the views
    workload_lost: list[str] = Field(default_factory=list)
    workload_view_incompatible: int = 0  # fail over views with no rename at all (set aside by the refinement)
    workload_translated_kept: int = 0  # of the queries that run on the base tables: renamed, translated back, same rows
    workload_translation_lost: list[str] = Field(default_factory=list)

    @property
    def safe(self) -> bool:
        return (
            self.base_unchanged and self.views_equal and not self.workload_lost and not self.workload_translation_lost
        )


class RefineRun(BaseModel):
    database: str
    screened: int
    proposed: int
    proposed_by: dict[str, int] = Field(default_factory=dict)  # identifiers with a name from "kb" / "glossary"
    renamed: int
    workload: int
    workload_skipped: int
    seconds: float
    refinement: Refinement
    safety: Safety


def digests(db: PostgresDatabase, relations: list[tuple[str, str]]) -> dict[str, tuple[int, str]]:
    """(row count, md5 over the sorted md5s of the rows' text) per ``(schema, relation)``: equal for two
    relations exactly when they hold the same multiset of rows (column order included)."""
    out = {}
    for schema, name in relations:
        rel = f"{_q(schema)}.{_q(name)}"
        res = db.execute(
            f"SELECT count(*), coalesce(md5(string_agg(md5(r::text), '' ORDER BY md5(r::text))), '') FROM {rel} r",
            timeout_s=600,
        )
        out[f"{schema}.{name}"] = (int(res.rows[0][0]), res.rows[0][1]) if res.ok else (-1, f"error: {res.message}")
    return out


def _public(info: SchemaInfo) -> SchemaInfo:
    return info.model_copy(update={"tables": [t for t in info.tables if (t.schema_name or "public") == "public"]})


def refine_database(
    db: PostgresDatabase,
    workload: list[WorkloadItem],
    *,
    glossary: Glossary | None = None,
    schema: str = "refined",
    threshold: float = 0.5,
) -> RefineRun:
    """Screen, propose (glossary, then knowledge base), verify on ``workload``, create the views in
    ``schema`` (replacing an earlier refinement there), then measure the safety figures."""
    pg = require_postgres(db)
    t0 = time.perf_counter()
    drop_views(pg, schema)  # a fresh catalog: the earlier views are no base tables
    info = _public(pg.schema(refresh=True))
    base_rels = [(t.schema_name or "public", t.name) for t in info.tables]
    before = digests(pg, base_rels)
    cands = screen(info, threshold=threshold)
    from_kb = propose_from_kb(cands, build_kb(pg, glossary=glossary))
    from_glossary = propose_from_glossary(cands, glossary) if glossary is not None else []
    props = merge_proposals(from_glossary, from_kb)
    ref = refine(pg, props, workload, schema=schema)
    after = digests(pg, base_rels)
    views = digests(pg, [(schema, tm.view) for tm in ref.tables])
    unequal = [
        f"{schema}.{tm.view}"
        for tm in ref.tables
        if views[f"{schema}.{tm.view}"] != before[f"{tm.base_schema}.{tm.table}"]
        or before[f"{tm.base_schema}.{tm.table}"][0] < 0
    ]
    view_only, lost, untranslated, n = _workload_check(pg, info, workload, ref)
    safety = Safety(
        tables=len(base_rels),
        base_rows=sum(n for n, _ in before.values()),
        base_unchanged=before == after and all(n >= 0 for n, _ in before.values()),
        changed_tables=[k for k in before if before[k] != after.get(k)],
        views_equal=not unequal,
        unequal_views=unequal,
        workload_verified=n - view_only,
        workload_kept=n - view_only - len(lost),
        workload_lost=lost,
        workload_view_incompatible=view_only,
        workload_translated_kept=n - len(untranslated),
        workload_translation_lost=untranslated,
    )
    return RefineRun(
        database=pg.name,
        screened=len(cands),
        proposed=len(props),
        proposed_by={"glossary": len(from_glossary), "kb": len(from_kb)},
        renamed=ref.renamed(),
        workload=len(workload),
        workload_skipped=len(ref.skipped_workload),
        seconds=round(time.perf_counter() - t0, 1),
        refinement=ref,
        safety=safety,
    )


def _workload_check(
    pg: PostgresDatabase, info: SchemaInfo, workload: list[WorkloadItem], ref: Refinement
) -> tuple[int, list[str], list[str], int]:
    """Each workload query that runs on the base tables, written against the refined names: on views
    without renames (a failure there is the views', not a rename's), on the refined views, and
    translated back (``to_base``) onto the base tables - the path the benchmark scores.
    Returns (view-incompatible count, losses on the views, losses through translation, queries)."""
    wl = _Workload(pg, info, workload)
    tables = {tm.table.lower(): tm.view for tm in ref.tables if tm.view != tm.table}
    create_views(
        pg,
        Refinement(database=pg.name, tables=[TableMap(table=t.name, view=t.name) for t in info.tables]),
        info,
        schema=TRIAL_SCHEMA,
        comment=False,
    )
    plain = PostgresDatabase(with_search_path(pg.url, TRIAL_SCHEMA, "public"), limits=pg.limits)
    rdb = RefinedDatabase(pg, ref)
    view_only, lost, untranslated = 0, [], []
    try:
        for i, (w, _, rows) in enumerate(wl.items):
            if not wl.check(plain, [i], {}, {})[0]:
                view_only += 1
            elif not (r := wl.check(rdb, [i], tables, ref.column_map()))[0]:
                lost.append(r[1])
            try:
                over_views = rename(w.sql, info, "postgres", tables=tables, columns=ref.column_map(), minimal=True)
                res = pg.execute(to_base(over_views, ref, info), max_rows=100_000, timeout_s=30)
                same = res.ok and same_result(rows, res.rows, bench="workload", gold_sql=w.sql)
                why = "" if same else (res.message if not res.ok else "different rows")
            except ActsagentError as e:
                same, why = False, str(e)
            if not same:
                untranslated.append(f"query #{i}: {why}"[:300])
    finally:
        plain.close()
        rdb.close()
        drop_views(pg, TRIAL_SCHEMA)
    return view_only, lost, untranslated, len(wl.items)


def refined_glossary(glossary: Glossary, refinement: Refinement) -> Glossary:
    """``glossary`` keyed by the views' names, for the knowledge base of the refined schema."""
    views = refinement.table_map()
    cols = refinement.column_map()
    columns = {}
    for key, text in glossary.columns.items():
        table, _, column = key.rpartition(".")
        new_table = views.get(table.lower(), table)
        columns[f"{new_table}.{cols.get((table.lower(), column.lower()), column)}"] = text
    return Glossary(
        terms=glossary.terms,
        tables={views.get(k.lower(), k): v for k, v in glossary.tables.items()},
        columns=columns,
    )
