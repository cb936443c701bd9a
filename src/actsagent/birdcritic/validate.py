"""Scorer validation: gold ``sol_sql`` against ``checks/``, and the six official baselines.

Gold passing its own tests on the same tasks as the reference run shows the helpers behave
like the official ones; the baseline table gives reference points on the sample databases.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from actsagent.birdcritic.runner import run_benchmark
from actsagent.birdcritic.scorer import load_scoring_keys
from actsagent.birdcritic.systems import BaselineSystem, GoldSystem, IssueSqlSystem, baseline_models
from actsagent.birdcritic.tasks import data_dir
from actsagent.db import admin
from actsagent.reporting import Report, ReportTable, ResultLog

CHECK_FILES = {
    "flash": "checks/sample_db_check_flash_exp_200.jsonl",
    "pg530": "checks/sample_db_check_postgresql_530.jsonl",
}


def load_checks(task_set: str, root: Path | None = None) -> dict[str, dict[str, Any]]:
    path = (root or data_dir()) / CHECK_FILES[task_set]
    with path.open(encoding="utf-8") as f:
        return {str(r["instance_id"]): r for r in map(json.loads, filter(str.strip, f))}


def _server_version() -> str:
    return admin.server_version(admin.server_admin_url())


def _assigns_pred_result(source: str) -> bool:
    """True when the test computes pred_query_result itself instead of reading the global."""
    import re

    assigns = re.search(r"^\s*pred_query_result\s*=", source, re.M) is not None
    return assigns and "global pred_query_result" not in source


def _records(out: Path) -> dict[str, dict[str, Any]]:
    return {str(r["instance_id"]): r for r in ResultLog(out / "results.jsonl", key="instance_id").records()}


def compare_with_checks(
    ours: dict[str, dict[str, Any]],
    checks: dict[str, dict[str, Any]],
    field: str,
    reads_pred_result: set[str] | None = None,
) -> tuple[list[Any], list[list[Any]]]:
    """Counts (ours, checks, agree) and the list of disagreements with our failure message."""
    ids = [i for i in checks if i in ours]
    ours_pass = {i for i in ids if ours[i].get("passed")}
    ref_pass = {i for i in ids if checks[i].get(field)}
    diffs = []
    for i in ids:
        if (i in ours_pass) != (i in ref_pass):
            r = ours[i]
            msg = r.get("reason") or "; ".join(r.get("messages") or [])
            row = [i, checks[i].get("db_id"), "ours" if i in ours_pass else "checks/", r.get("status"), msg[:300]]
            if reads_pred_result is not None:
                row.insert(3, "yes" if i in reads_pred_result else "no")
            diffs.append(row)
    return [len(ids), len(ours_pass), len(ref_pass), len(ids) - len(diffs)], diffs


def validate(
    out_dir: str | Path,
    *,
    sets: Sequence[str] = ("flash", "pg530"),
    workers: int = 2,
    limit: int | None = None,
    baselines: bool = True,
    progress: bool = True,
) -> Report:
    out = Path(out_dir)
    summary: dict[str, Any] = {}
    tables: list[ReportTable] = []
    agree_rows, base_rows = [], []
    explained: list[str] = []
    for s in sets:
        checks = load_checks(s)
        run_benchmark(s, GoldSystem(s), out / s / "gold", workers=workers, limit=limit, progress=progress)
        run_benchmark(s, IssueSqlSystem(), out / s / "issue_sql", workers=workers, limit=limit, progress=progress)
        g, i = _records(out / s / "gold"), _records(out / s / "issue_sql")
        reads = {
            k
            for k, v in load_scoring_keys(s).items()
            if any("pred_query_result" in tc and not _assigns_pred_result(tc) for tc in v.test_cases)
        }
        counts: dict[str, int] = {}
        for label, recs, field, system, folder in (
            ("gold sol_sql", g, "gold_passes_tests", GoldSystem(s), "gold"),
            ("issue_sql", i, "issue_sql_passes_tests", IssueSqlSystem(), "issue_sql"),
        ):
            (n, ours_n, ref_n, agree_n), diffs = compare_with_checks(recs, checks, field, reads)
            unsup = sum(1 for r in recs.values() if r.get("status") == "unsupported")
            agree_rows.append([s, label, n, unsup, ours_n, ref_n, agree_n])
            counts[folder], counts[folder + "_checks"] = ours_n, ref_n
            if not diffs:
                continue
            tables.append(
                ReportTable(
                    title=f"{s}: {label} disagreements with checks/",
                    columns=[
                        "instance_id",
                        "db_id",
                        "passes in",
                        "tests read pred_query_result",
                        "our status",
                        "our message",
                    ],
                    rows=diffs,
                )
            )
            # Diagnostic: re-score the disagreeing, supported tasks the way the checks/ run did.
            redo = [d[0] for d in diffs if d[4] != "unsupported"]
            n_unsup = len(diffs) - len(redo)
            if redo:
                run_benchmark(
                    s,
                    system,
                    out / s / f"{folder}_checks_variant",
                    workers=workers,
                    ids=redo,
                    progress=progress,
                    scorer_variant="checks",
                    report_name=f"BIRD-CRITIC {s} {label}, checks/ variant of the scorer (diagnostic)",
                )
                v = _records(out / s / f"{folder}_checks_variant")
                (nv, oursv, refv, agreev), diffsv = compare_with_checks(
                    {k: v[k] for k in redo if k in v}, checks, field
                )
                agree_rows.append(
                    [
                        s,
                        f"{label}, checks/ variant (diagnostic, disagreeing supported tasks)",
                        nv,
                        "",
                        oursv,
                        refv,
                        agreev,
                    ]
                )
                if diffsv:
                    tables.append(
                        ReportTable(
                            title=f"{s}: {label}, still different under the checks/ variant",
                            columns=["instance_id", "db_id", "passes in", "our status", "our message"],
                            rows=diffsv,
                        )
                    )
            explained.append(
                f"{s} {label}: {len(diffs)} verdicts differ from checks/: {n_unsup} tasks are unsupported here "
                f"(extension, libxml or PostGIS missing on this server); {len(redo)} are re-scored with the checks/ "
                "variant of the scorer (no pred_query_result global, regex remove_distinct), see the diagnostic row."
            )
        ours, ref, ours2 = counts["gold"], counts["gold_checks"], counts["issue_sql"]
        summary[f"{s}_gold_passed"] = ours
        summary[f"{s}_gold_passed_checks"] = ref
        summary[f"{s}_issue_sql_passed"] = ours2
        gold_ok = {k for k, r in g.items() if r.get("passed")}
        if baselines and s in ("flash", "pg530"):
            for model in baseline_models():
                rep = run_benchmark(
                    s,
                    BaselineSystem(model, s),
                    out / s / f"baseline_{model}",
                    workers=workers,
                    limit=limit,
                    progress=progress,
                )
                recs = _records(out / s / f"baseline_{model}")
                on_gold = sum(1 for k in gold_ok if recs.get(k, {}).get("passed"))
                base_rows.append(
                    [
                        s,
                        model,
                        rep.summary["tasks"],
                        rep.summary["passed"],
                        rep.summary["accuracy_all"],
                        len(gold_ok),
                        on_gold,
                        round(100.0 * on_gold / len(gold_ok), 1) if gold_ok else 0.0,
                    ]
                )
    tables.insert(
        0,
        ReportTable(
            title="Gold and issue_sql against checks/ (reference run, PostgreSQL 15)",
            columns=[
                "set",
                "prediction",
                "tasks compared",
                "unsupported here",
                "pass (ours)",
                "pass (checks/)",
                "same verdict",
            ],
            rows=agree_rows,
        ),
    )
    if base_rows:
        tables.insert(
            1,
            ReportTable(
                title="Official baseline predictions on the sample databases",
                columns=[
                    "set",
                    "model",
                    "tasks",
                    "passed",
                    "accuracy %",
                    "gold-passing tasks",
                    "passed of those",
                    "% of those",
                ],
                rows=sorted(base_rows, key=lambda r: (r[0], -r[3])),
            ),
        )
    report = Report(
        name="BIRD-CRITIC scorer validation",
        config={
            "sets": list(sets),
            "workers": workers,
            "limit": limit,
            "data": str(data_dir()),
            "server": _server_version(),
        },
        summary=summary,
        tables=tables,
        notes=[
            *explained,
            "checks/ was produced on PostgreSQL 15; a verdict that still differs under the checks/ "
            "variant comes from the server version (e.g. PostgreSQL 16+ accepts a subquery in FROM "
            "without an alias).",
            "Multi-statement strings return their last statement's rows (psycopg2 behaviour, which "
            "the official scorer relies on); psycopg 3 alone returns the first result.",
            "gold and issue_sql are references for the scorer, not systems under test.",
            "Sample databases hold 3 rows per table: scores are a proxy for the official metric.",
        ],
    )
    report.write(out, stem="validation")
    return report
