"""safeql_refine through the guard: a misspelt column is refined; forbidden SQL never reaches the engine."""

from __future__ import annotations

from actsagent.guard import check_sql
from actsagent.tools import SafeqlRefineInput, ToolContext, safeql_refine


def test_refines_unknown_column(pg_db):
    out = safeql_refine(SafeqlRefineInput(sql="SELECT nme FROM customers WHERE country = 'DE'"), ToolContext(db=pg_db))
    assert out.status == "refined" and out.sql == "SELECT name FROM customers WHERE country = 'DE'"
    assert out.edits


def test_forbidden_sql_is_rejected_before_refinement(pg_db):
    out = safeql_refine(SafeqlRefineInput(sql="DROP TABLE orders"), ToolContext(db=pg_db))
    assert out.status == "rejected" and "guard" in out.message
    assert pg_db.execute("SELECT count(*) FROM orders").rows == [[4]]


STRFTIME = "SELECT strftime('%Y', ordered_at) AS yr, count(*) FROM orders GROUP BY yr ORDER BY yr"


def test_unreviewed_function_is_refined_by_safeql_through_the_policy(pg_db):
    """strftime is not a reviewed PostgreSQL function: the guard's check stands in for executing it,
    SafeQL's function operator translates it, and the answer passes the policy."""
    out = safeql_refine(SafeqlRefineInput(sql=STRFTIME), ToolContext(db=pg_db))
    assert out.status == "refined", out.message
    assert "strftime" not in out.sql.lower() and "to_char" in out.sql.lower()
    assert check_sql(out.sql, "postgres").ok
    assert any("function" in e for e in out.edits)


def _hooked_engine(seen, answer):
    """A stand-in engine that proposes ``answer``: it asks the hook before executing anything, as refine() does."""

    def refine(db, sql, *, check=None, **_):
        from actsagent.safeql.result import RefineResult

        for q in (sql, answer):
            err = check(q)
            seen.append((q, err))
            if err is None:
                db.execute(q)  # only what passed the policy reaches the database
        return RefineResult(status="refined", original_sql=sql, refined_sql=answer)

    return refine


def test_unreviewed_function_is_refined_through_the_policy_hook(pg_db, monkeypatch):
    from actsagent import safeql

    seen = []
    fixed = "SELECT to_char(ordered_at, 'YYYY') AS yr, count(*) FROM orders GROUP BY yr ORDER BY yr"
    monkeypatch.setattr(safeql, "refine", _hooked_engine(seen, fixed))
    out = safeql_refine(SafeqlRefineInput(sql=STRFTIME), ToolContext(db=pg_db))
    assert out.status == "refined" and out.sql == fixed
    (orig, orig_err), (_, cand_err) = seen
    # the forbidden original never runs: the hook answers with a typed unknown_function error naming it
    assert orig == STRFTIME and orig_err.error_class.value == "unknown_function" and orig_err.identifier == "strftime"
    assert orig_err.engine == "guard" and cand_err is None


def test_a_refinement_the_policy_forbids_is_reported_as_rejected(pg_db, monkeypatch):
    from actsagent import safeql

    seen = []
    monkeypatch.setattr(safeql, "refine", _hooked_engine(seen, "SELECT pg_sleep(0) FROM orders"))
    out = safeql_refine(SafeqlRefineInput(sql=STRFTIME), ToolContext(db=pg_db))
    assert out.status == "rejected" and out.sql is None and "forbidden by the policy" in out.message
    assert seen[1][1] is not None and seen[1][1].error_class.value == "guard_rejected"  # never executed either


def test_other_rejections_never_reach_the_engine(pg_db, monkeypatch):
    from actsagent import safeql

    seen = []
    monkeypatch.setattr(safeql, "refine", _hooked_engine(seen, "SELECT 1"))
    out = safeql_refine(SafeqlRefineInput(sql="SELECT * FROM orders; DELETE FROM orders"), ToolContext(db=pg_db))
    assert out.status == "rejected" and seen == []
