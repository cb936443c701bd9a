"""safeql_refine through the guard: a misspelt column is refined; forbidden SQL never reaches the engine."""

from __future__ import annotations

from actsagent.tools import SafeqlRefineInput, ToolContext, safeql_refine


def test_refines_unknown_column(pg_db):
    out = safeql_refine(SafeqlRefineInput(sql="SELECT nme FROM customers WHERE country = 'DE'"), ToolContext(db=pg_db))
    assert out.status == "refined" and out.sql == "SELECT name FROM customers WHERE country = 'DE'"
    assert out.edits


def test_forbidden_sql_is_rejected_before_refinement(pg_db):
    out = safeql_refine(SafeqlRefineInput(sql="DROP TABLE orders"), ToolContext(db=pg_db))
    assert out.status == "rejected" and "guard" in out.message
    assert pg_db.execute("SELECT count(*) FROM orders").rows == [[4]]
