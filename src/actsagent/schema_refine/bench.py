"""The ask benchmark's refinement step (``evals/bench_ask.py --refine``).

Each drawn database is refined once, on a workload of that database's degraded questions that are
*not* in the draw (so no scored question's gold SQL decides a name), and the result is cached in
``<out>/refine/<bench>_<db_id>.json`` with its safety figures; it is reused while the workload and
the glossary are the same and the views in the database are the ones cached. Questions are then asked
over the views and their SQL translated back to the base tables (``translate``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import sqlglot

from actsagent.errors import ActsagentError
from actsagent.kb.glossary import Glossary, load_glossary
from actsagent.reporting import Report, ReportTable
from actsagent.schema_refine.measure import refine_database, refined_glossary
from actsagent.schema_refine.models import Refinement, WorkloadItem
from actsagent.schema_refine.views import RefinedDatabase, load_refinement, to_base

GLOSSARY_SUFFIXES = (".glossary.json", ".glossary.toml")
DISJOINT_NOTE = (
    "refinement workload: each database's degraded questions that are not in the measured draw "
    "(disjoint from the scored questions: no scored gold SQL decides a name)"
)


def glossary_file(db_file: Path, db_id: str, glossary_dir: Path | None) -> Path | None:
    """``<db_id>.glossary.json|toml`` in ``glossary_dir`` (or its ``<bench>/`` folder), else beside the file."""
    where = [glossary_dir, glossary_dir / db_file.parents[2].name] if glossary_dir else [db_file.parent]
    for folder in where:
        for suffix in GLOSSARY_SUFFIXES:
            if (folder / f"{db_id}{suffix}").is_file():
                return folder / f"{db_id}{suffix}"
    return None


def postgres_sql(sqlite_sql: str) -> str:
    """A SQLite gold query in PostgreSQL's dialect (as written when sqlglot cannot read it)."""
    try:
        return sqlglot.transpile(sqlite_sql, read="sqlite", write="postgres")[0]
    except sqlglot.errors.SqlglotError:
        return sqlite_sql


def workload_for(pool: list, drawn: set[str], db_id: str) -> list:
    """The database's questions outside the draw."""
    return [q for q in pool if q.db_id == db_id and q.key not in drawn]


def _cached(path: Path, key: str, stored: Refinement | None) -> dict | None:
    if not path.is_file() or stored is None:
        return None
    try:
        prev = json.loads(path.read_text(encoding="utf-8"))
        ref = Refinement.model_validate(prev["run"]["refinement"])
    except (ValueError, KeyError, TypeError):
        return None
    same = prev.get("key") == key and (ref.schema_name, ref.tables) == (stored.schema_name, stored.tables)
    return prev if same else None


def refine_drawn(
    qs: list,
    dbs: Any,
    degraded_dir: Path,
    out: Path,
    *,
    glossary_dir: Path | None = None,
    dictionary: bool = False,
    log=lambda m: None,
) -> list[dict]:
    """Refine (or reuse the refinement of) every database the draw ``qs`` touches; ``dbs.refined`` then
    holds the view of each. ``dictionary``: without a glossary file, the degraded set's data dictionary is
    the glossary. Returns the cached records (refinement, safety, workload keys)."""
    from actsagent import kb
    from actsagent.degrade import dictionary_path, load_degraded_questions

    drawn = {q.key for q in qs}
    runs = []
    for bench, db_id in sorted({(q.bench, q.db_id) for q in qs}):
        base = dbs.get(bench, db_id)
        wl = workload_for(load_degraded_questions(degraded_dir, bench), drawn, db_id)
        gfile = glossary_file(dbs.path(bench, db_id), db_id, glossary_dir)
        if gfile is None and dictionary and dictionary_path(degraded_dir, bench, db_id).is_file():
            gfile = dictionary_path(degraded_dir, bench, db_id)
        glossary: Glossary | None = load_glossary(gfile) if gfile else None
        key = hashlib.sha1(
            json.dumps([sorted(q.key for q in wl), gfile.read_text(encoding="utf-8") if gfile else ""]).encode()
        ).hexdigest()
        path = out / "refine" / f"{bench}_{db_id}.json"
        rec = _cached(path, key, load_refinement(base))
        if rec is None:
            log(f"refining {bench}/{db_id} on {len(wl)} workload questions outside the draw")
            items = [WorkloadItem(question=q.question, sql=postgres_sql(q.gold_sql)) for q in wl]
            run = refine_database(base, items, glossary=glossary)
            if glossary is not None:  # the refined schema's knowledge base explains the views with the glossary
                kb.build(RefinedDatabase(base, run.refinement), glossary=refined_glossary(glossary, run.refinement))
            rec = {
                "key": key,
                "bench": bench,
                "db": db_id,
                "glossary": str(gfile) if gfile else None,
                "drawn": sorted(q.key for q in qs if (q.bench, q.db_id) == (bench, db_id)),
                "workload_keys": sorted(q.key for q in wl),
                "run": run.model_dump(mode="json"),
            }
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(rec, indent=1), encoding="utf-8")
            tmp.replace(path)
        else:
            log(f"refinement of {bench}/{db_id} reused ({path})")
        dbs.refined[(bench, db_id)] = RefinedDatabase(base, Refinement.model_validate(rec["run"]["refinement"]))
        runs.append(rec)
    return runs


def translate(rec: dict, sql: str, db: Any, base: Any) -> tuple[Any, str]:
    """Where to run ``sql`` and as what: SQL written over the views goes to the base tables translated;
    one that cannot be translated runs on the views (the same rows). ``rec`` records which."""
    if not isinstance(db, RefinedDatabase):
        rec["refined"] = False
        return base, sql
    rec["refined"] = True
    try:
        out = to_base(sql, db.refinement, base.schema())
    except ActsagentError as e:
        rec.update(translated=False, translate_error=" ".join(str(e).split())[:300])
        return db, sql
    rec.update(translated=True, base_sql=out)
    return base, out


def _rows(runs: list[dict]) -> list[list]:
    rows = []
    for r in runs:
        run, s = r["run"], r["run"]["safety"]
        rows.append(
            [
                f"{r['bench']}/{r['db']}",
                len(r["drawn"]),
                run["workload"],
                s["workload_verified"],
                run["screened"],
                f"{run['proposed']} (glossary {run['proposed_by'].get('glossary', 0)})",
                run["renamed"],
                s["base_rows"],
                "yes" if s["base_unchanged"] else f"NO: {', '.join(s['changed_tables'][:3])}",
                "yes" if s["views_equal"] else f"NO: {', '.join(s['unequal_views'][:3])}",
                f"{s['workload_kept']}/{s['workload_verified']}",
                s.get("workload_view_incompatible", 0),
                f"{s.get('workload_translated_kept', 0)}/{s['workload_verified'] + s.get('workload_view_incompatible', 0)}",
                run["seconds"],
            ]
        )
    return rows


def _add(rep: Report, runs: list[dict]) -> None:
    disjoint = all(not set(r["drawn"]) & set(r["workload_keys"]) for r in runs)
    rep.summary.update(
        {
            "refined_databases": len(runs),
            "renames_kept": sum(r["run"]["renamed"] for r in runs),
            "refinement_safe": all(
                s["base_unchanged"]
                and s["views_equal"]
                and not s["workload_lost"]
                and not s["workload_translation_lost"]
                for s in (r["run"]["safety"] for r in runs)
            ),
            "workload_disjoint_from_draw": disjoint,
        }
    )
    rep.tables.append(
        ReportTable(
            title="Refinement per database (names from the knowledge base and glossary, no LLM) and its safety",
            columns=[
                "database",
                "drawn",
                "workload",
                "verified",
                "screened",
                "proposed",
                "renames kept",
                "base rows",
                "base unchanged",
                "views = tables",
                "workload kept on views",
                "fail on any view",
                "kept through translation",
                "s",
            ],
            rows=_rows(runs),
        )
    )
    rep.notes += [
        DISJOINT_NOTE,
        "base unchanged: row count and order-independent md5 of every base table equal before and after; "
        "views = tables: each view's count and md5 equal its base table's; workload kept on views: workload queries "
        "that run on the base tables and, rewritten to the view names, return the same rows on the views; fail on "
        "any view: queries that fail over views even without renames (PostgreSQL infers no functional dependency "
        "from a view's key), set aside by the refinement; kept through translation: the rewritten queries "
        "translated back to the base tables (the path scored) return the same rows",
        "renames kept counts the views' renamed tables and columns, foreign keys that follow a renamed key included",
    ]


def report(cfg: Any, runs: list[dict]) -> Report:
    """The refine-only step's report (``--refine --build-kb-only``)."""
    rep = Report(name="Ask benchmark: schema refinement", config=cfg.model_dump())
    _add(rep, runs)
    return rep


def add_to_report(rep: Report, records: list[dict], runs: list[dict]) -> None:
    """The ask report's refinement part: per-question use of the views and translation, and the safety."""
    asked = [r for r in records if "refined" in r]
    rep.summary.update(
        {
            "asked_over_views": sum(bool(r["refined"]) for r in asked),
            "translated_to_base": sum(r.get("translated") is True for r in asked),
            "translation_failed": sum(r.get("translated") is False for r in asked),
        }
    )
    _add(rep, runs)
