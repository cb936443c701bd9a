"""split_and_fix (hybrid): localise a failing query clause by clause, then repair it from that evidence.

The split is deterministic (``_decompose``): flat sub-queries per clause with empty stand-ins
for dependencies, all executed at once through the guard. The deterministic localiser names the
failing clause(s) with no LLM; when a model is configured it rewrites the whole query from the
clause-level evidence and the rewrite is executed.

A statement list (a script with DDL, DML, triggers) is first run whole, in order: its evidence is
the failing statement and the engine's error for it, since clauses of DDL cannot be checked apart
and a statement may fail only after the ones before it ran. Only a failing query whose
predecessors change nothing is split further into clauses.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import sqlglot
from pydantic import BaseModel, Field

from actsagent.db import DbError, QueryResult
from actsagent.tools._context import ToolContext
from actsagent.tools._decompose import (
    ClauseKind,
    clause_at,
    decompose,
    line_col_to_position,
)
from actsagent.tools._results import ExecSummary, ToolOutput
from actsagent.tools._sqltext import is_query, split_script, statements_text

_SPECIFICITY = ["join", "filter", "projection", "aggregation", "order", "unit"]
_CLAUSE_NAME = {
    "join": "FROM/JOIN",
    "filter": "WHERE",
    "projection": "SELECT list",
    "aggregation": "GROUP BY/aggregates",
    "order": "ORDER BY",
    "unit": "whole query",
    "statement": "whole statement",
}


class SplitAndFixInput(BaseModel):
    sql: str | list[str]  # one query, or a statement list (a script string is split the same way)
    intent: str = ""
    repair: bool = True  # let the LLM rewrite from the evidence when a model is configured


class SubQuery(BaseModel):
    unit: str
    kind: ClauseKind | Literal["statement"]  # "statement": one statement of a script, run in order
    sql: str
    depends_on: list[str] = Field(default_factory=list)
    ok: bool = True
    error: DbError | None = None


class Localisation(BaseModel):
    parsed: bool
    failing_statement: int | None = None  # 1-based, for a statement list
    statement_count: int = 1
    failing_units: list[str] = Field(default_factory=list)
    failing_clauses: list[str] = Field(default_factory=list)
    clause_at_error: str | None = None
    snippet: str = ""
    message: str

    def describe(self) -> str:
        return self.message


class RepairedSQL(BaseModel):
    sql: str | list[str] = Field(
        description="the whole corrected query as a string; for a statement list, an "
        "array holding every statement in execution order (no trailing ';')"
    )
    explanation: str = ""


class SplitAndFixOutput(ToolOutput):
    tool: Literal["split_and_fix"] = "split_and_fix"
    original_error: DbError | None = None
    localisation: Localisation
    sub_queries: list[SubQuery] = Field(default_factory=list)
    repaired_sql: str | list[str] | None = None
    explanation: str = ""
    repaired_result: ExecSummary | None = None

    def produced_sql(self) -> str | list[str] | None:
        return self.repaired_sql or None

    def executable_sql(self) -> str | list[str] | None:
        return self.repaired_sql if self.repaired_sql and self.repaired_result and self.repaired_result.ok else None

    def summary(self) -> str:
        lines = [self.localisation.message]
        for s in self.sub_queries:
            if not s.ok and s.error is not None:
                lines.append(f"  {s.unit}.{s.kind}: {s.error.describe()}")
        if self.repaired_sql:
            lines.append(f"repaired: {statements_text(self.repaired_sql)}")
            if self.repaired_result is not None:
                lines.append("  -> " + self.repaired_result.describe())
        return "\n".join(lines)


def localise(sql: str | list[str], ctx: ToolContext) -> SplitAndFixOutput:
    """The deterministic half: run the query, split it, run the parts in parallel, name the clause."""
    stmts = split_script(sql, ctx.db.dialect)
    if len(stmts) > 1 or (stmts and not is_query(stmts[0], ctx.db.dialect)):
        return _localise_script(stmts, ctx)
    return _localise_query(stmts[0] if stmts else (sql if isinstance(sql, str) else ""), ctx)


def _localise_script(stmts: list[str], ctx: ToolContext) -> SplitAndFixOutput:
    """Run the list in order (guarded; writes in a disposable copy) and name the failing statement."""
    from actsagent.tools.run_sql import execute_statements

    results, _ = execute_statements(ctx, stmts)
    n = len(stmts)
    subs = [
        SubQuery(
            unit=f"statement {i + 1}", kind="statement", sql=stmt, ok=r.ok, error=r if isinstance(r, DbError) else None
        )
        for i, (stmt, r) in enumerate(zip(stmts, results, strict=False))
    ]
    bad = next((i for i, r in enumerate(results) if not r.ok), None)
    if bad is None:
        return SplitAndFixOutput(
            sub_queries=subs,
            localisation=Localisation(
                parsed=True, statement_count=n, message=f"the script runs: all {n} statements succeed"
            ),
        )
    err = results[bad]
    assert isinstance(err, DbError)
    stmt = stmts[bad]
    if is_query(stmt, ctx.db.dialect) and all(is_query(s, ctx.db.dialect) for s in stmts[:bad]):
        # a query that fails on its own terms: its clauses can be checked apart
        inner = _localise_query(stmt, ctx)
        if inner.original_error is not None:
            inner.localisation.message = f"statement {bad + 1} of {n} fails: " + inner.localisation.message
            inner.localisation.failing_statement, inner.localisation.statement_count = bad + 1, n
            inner.sub_queries = [*subs, *inner.sub_queries]
            return inner
    clause, snippet = clause_at(stmt, err.position) if err.position else (None, "")
    tail = f" near {snippet!r}" if snippet else ""
    skipped = n - bad - 1
    later = (
        ""
        if not skipped
        else (f"; statement {n} did not run" if skipped == 1 else f"; statements {bad + 2}-{n} did not run")
    )
    why = (
        "it runs after statements that change the database, so the list is checked in order"
        if is_query(stmt, ctx.db.dialect)
        else "DDL/DML is checked as a whole statement, in order"
    )
    msg = (
        f"statement {bad + 1} of {n} fails ({_head(stmt)}): {err.describe()}{tail}{later}. "
        f"Not split into clauses ({why}): fix statement {bad + 1}"
    )
    return SplitAndFixOutput(
        original_error=err,
        sub_queries=subs,
        localisation=Localisation(
            parsed=True,
            failing_statement=bad + 1,
            statement_count=n,
            failing_units=[f"statement {bad + 1}"],
            failing_clauses=[f"statement {bad + 1}"],
            clause_at_error=clause,
            snippet=snippet,
            message=msg,
        ),
    )


def _head(sql: str, n: int = 60) -> str:
    one = " ".join(sql.split())
    return one if len(one) <= n else one[:n] + "..."


def _localise_query(sql: str, ctx: ToolContext) -> SplitAndFixOutput:
    from actsagent.guard import run_guarded

    policy = ctx.active_policy()
    first = run_guarded(ctx.db, sql, policy=policy)
    err = first if isinstance(first, DbError) else None
    pos = err.position if err else None
    temp = _temp_tables_possible(ctx)
    try:
        queries = decompose(sql, ctx.db.dialect, _schema_map(ctx), temp_tables=temp)
    except sqlglot.errors.ParseError as e:
        info = e.errors[0] if e.errors else {}
        if pos is None and info.get("line"):
            pos = line_col_to_position(sql, int(info["line"]), int(info["col"]))
        clause, snippet = clause_at(sql, pos)
        msg = (
            f"the query does not parse; the error is in the {clause or 'unknown'} clause near "
            f"{snippet!r}: {err.describe() if err else info.get('description', str(e))}"
        )
        return SplitAndFixOutput(
            original_error=err,
            localisation=Localisation(
                parsed=False,
                clause_at_error=clause,
                snippet=snippet,
                failing_clauses=[clause] if clause else [],
                message=msg,
            ),
        )
    run_one = (lambda q: _run_script(ctx, q.sql)) if temp else (lambda q: run_guarded(ctx.db, q.sql, policy=policy))
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run_one, queries))
    subs = [
        SubQuery(
            unit=q.unit,
            kind=q.kind,
            sql=q.sql,
            depends_on=q.depends_on,
            ok=r.ok,
            error=r if isinstance(r, DbError) else None,
        )
        for q, r in zip(queries, results, strict=True)
    ]
    clause, snippet = clause_at(sql, pos)
    failing = [s for s in subs if not s.ok]
    units = list(dict.fromkeys(s.unit for s in failing))
    clauses: list[str] = []
    for u in units:
        kinds = sorted({s.kind for s in failing if s.unit == u}, key=_SPECIFICITY.index)
        # the most specific failing clause explains the others (a bad JOIN breaks every later part)
        clauses.append(f"{u}: {_CLAUSE_NAME[kinds[0]]}")
    if err is None and not failing:
        msg = "the query runs; no clause fails"
    elif err is not None and failing and all(s.kind == "unit" for s in failing) and not is_query(sql, ctx.db.dialect):
        msg = f"the statement fails as a whole ({_head(sql)}): {err.describe()}"
        if snippet:
            msg += f" near {snippet!r}"
    elif not failing:
        msg = (
            f"every clause runs on its own; the error comes from combining them "
            f"({err.describe() if err else ''}) near {snippet!r}"
        )
    else:
        msg = "failing clause(s): " + "; ".join(clauses)
        if clause:
            msg += f" (engine error in the {clause} clause near {snippet!r})"
    return SplitAndFixOutput(
        original_error=err,
        sub_queries=subs,
        localisation=Localisation(
            parsed=True,
            failing_units=units,
            failing_clauses=clauses,
            clause_at_error=clause,
            snippet=snippet,
            message=msg,
        ),
    )


def split_and_fix(inp: SplitAndFixInput, ctx: ToolContext) -> SplitAndFixOutput:
    out = localise(inp.sql, ctx)
    if not inp.repair or ctx.model is None or (out.original_error is None and out.localisation.parsed):
        return out
    stmts = split_script(inp.sql, ctx.db.dialect)
    evidence = [
        {
            "unit": s.unit,
            "clause": _CLAUSE_NAME[s.kind],
            "sql": s.sql,
            "result": "ok" if s.ok else (s.error.describe() if s.error else "error"),
        }
        for s in out.sub_queries
    ]
    resp = ctx.complete(
        "split_and_fix",
        role="tools",
        response_model=RepairedSQL,
        intent=inp.intent,
        sql=statements_text(stmts if len(stmts) > 1 else inp.sql),
        statement_list=len(stmts) > 1,
        error=out.original_error.describe() if out.original_error else "",
        localisation=out.localisation.message,
        sub_queries=evidence,
        **ctx.schema_vars(sql=inp.sql, intent=inp.intent),
    )
    fixed: RepairedSQL = resp.parsed
    from actsagent.tools.run_sql import RunSqlInput, run_sql

    repaired = fixed.sql if isinstance(fixed.sql, str) or len(fixed.sql) != 1 else fixed.sql[0]
    res = run_sql(RunSqlInput(sql=repaired), ctx)
    out.repaired_sql, out.explanation = repaired, fixed.explanation
    out.repaired_result = next((s for s in res.statements if not s.ok), res.last)
    return out


def _temp_tables_possible(ctx: ToolContext) -> bool:
    """Temporary tables need a writable PostgreSQL and a policy that allows DDL (the sandbox)."""
    return (
        not ctx.active_policy().read_only
        and ctx.db.dialect == "postgres"
        and bool(getattr(ctx.db, "writable", False))
        and not getattr(ctx.db, "single_statement", True)
    )


def _run_script(ctx: ToolContext, script: str) -> QueryResult | DbError:
    """One transaction: create the empty temporary tables, run the sub-query; ON COMMIT DROP cleans up.

    The script passes the guard's check under the active (sandbox) policy first; it is sent as one
    execution because temporary tables live only in their session and transaction.
    """
    from actsagent.guard import check_sql
    from actsagent.guard.run import rejection_error

    verdict = check_sql(script, ctx.db.dialect, ctx.active_policy())
    if not verdict.ok:
        return rejection_error(verdict)
    return ctx.db.execute(script, max_rows=5, read_only=False)


def _schema_map(ctx: ToolContext) -> dict[str, dict[str, str]]:
    return {t.name: {c.name: c.type for c in t.columns} for t in ctx.db.schema().tables}
