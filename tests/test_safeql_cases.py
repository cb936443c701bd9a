"""The SafeQL source's own cases, on the real embedded PostgreSQL: rows are compared, not SQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from actsagent.safeql import refine

CASES_FILE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "safeql_cases" / "safeql_cases.jsonl"
REFINEMENT_KINDS = {
    "unknown relation",
    "unknown attribute",
    "unknown function",
    "empty result",
    "ambiguous",
    "argument",
    "operand",
}


def _cases():
    if not CASES_FILE.exists():
        pytest.fail(f"missing test data {CASES_FILE}")
    cases = [json.loads(line) for line in CASES_FILE.read_text().splitlines() if line.strip()]
    return [
        c for c in cases if c["expected_rows_consistent_with_setup"] is True and c["error_kind"] in REFINEMENT_KINDS
    ]


def _setup(stmts: list[str]) -> list[str]:
    # TEMP tables would vanish with the setup session; the tables themselves are what matter
    return [s.replace("CREATE TEMP TABLE", "CREATE TABLE") for s in stmts]


def _norm(rows) -> list[tuple[str, ...]]:
    return sorted(tuple(str(v) for v in r) for r in rows)


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["case_id"])
def test_consistent_case_refines_to_expected_rows(case, pg_db_factory):
    db = pg_db_factory(_setup(case["setup_sql"]))
    res = refine(db, case["input_sql"])
    assert res.status == "refined", res.why
    full = db.execute(res.refined_sql)
    assert full.ok
    assert _norm(full.rows) == _norm(case["expected_rows"]), (res.refined_sql, res.edits)
    assert res.edits and all(e.reason for e in res.edits)


def test_the_selection_is_not_empty():
    kinds = {c["error_kind"] for c in _cases()}
    assert {"unknown relation", "unknown attribute", "empty result"} <= kinds
