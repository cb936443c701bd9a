"""Disposable copies of the task database where checks run: one per scenario, made on first use.

A scenario is the database as it is ("sample"), with probe rows added ("probe"), or with a check's
own rows (the request's example). Each is a ``CREATE DATABASE ... TEMPLATE`` copy (db/sandbox.py)
of the task database with its rows inserted; the task database itself is never written. SQL under
test goes through the guard with the run's policy: read-only SQL runs in the scenario copy inside a
read-only transaction, SQL that writes runs in a fresh copy of the scenario, so no candidate sees
another's changes. Read queries of checks run under the strict policy. The rows we insert are built
from typed values (identifiers from the catalog, literals quoted by sqlglot), never from model-written
SQL text.

Copies are made only where that is harmless: under the sandbox policy (the task database is itself
a disposable copy) or when the caller allows it (``ToolContext.verify_copies``). A live database
under the strict policy is never copied: ``CREATE DATABASE ... TEMPLATE`` ends its other sessions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from actsagent.db import DbError, QueryResult
from actsagent.tools._sqltext import QUERY_KEYWORDS, is_read

if TYPE_CHECKING:
    from actsagent.db.postgres import PostgresDatabase
    from actsagent.guard import Policy
    from actsagent.tools._context import ToolContext

Scalar = bool | int | float | str | None
MAX_SETUP_ROWS = 60  # rows one scenario may insert (over all its tables)
MAX_VALUE_CHARS = 10_000
READ_ONLY_VIOLATION = "25006"  # read_only_sql_transaction: the "read" SQL wrote after all
_COST = re.compile(r"cost=\d+(?:\.\d+)?\.\.(\d+(?:\.\d+)?)")


class TableRows(BaseModel):
    """Rows to insert into one table of a disposable copy (values as JSON scalars, in ``columns`` order)."""

    table: str
    columns: list[str] = Field(min_length=1)
    rows: list[list[Scalar]] = Field(default_factory=list)
    replace: bool = Field(default=False, description="empty the table first: these rows are all of it")


class CannotRun(Exception):
    """A scenario or check cannot run here; the message says why (reported as could-not-run)."""


class StatementPlan(BaseModel):
    sql: str
    cost: float | None = None  # the planner's total estimated cost; None for statements EXPLAIN cannot take
    plan: list[str] = []  # EXPLAIN's text lines (capped)


class PlanReport(BaseModel):
    """EXPLAIN (no ANALYZE) of every explainable statement, run in order in a fresh copy."""

    ok: bool
    error: str | None = None
    statements: list[StatementPlan] = []

    @property
    def total_cost(self) -> float:
        return sum(s.cost or 0.0 for s in self.statements)

    def describe(self, lines: int = 12) -> str:
        if not self.ok:
            return f"could not explain: {self.error}"
        out = [f"total estimated cost {self.total_cost:.2f}"]
        for s in self.statements:
            if s.plan:
                out += [f"  {ln}" for ln in s.plan[:lines]]
        return "\n".join(out)


class ScenarioEnv:
    """The scenario copies of one run; ``close`` drops them (the agent calls it when the run returns)."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self._stack = ExitStack()
        self._dbs: dict[str, PostgresDatabase] = {}
        self._broken: dict[str, str] = {}

    def unavailable(self) -> str | None:
        """Why no copy can be made here, or None."""
        db = self.ctx.db
        if db.dialect != "postgres":
            return f"no disposable copy of a {db.dialect} database can be made"
        allowed = (
            self.ctx.verify_copies if self.ctx.verify_copies is not None else not self.ctx.active_policy().read_only
        )
        if not allowed:
            return (
                "the database is live (strict policy) and copying it would end its other sessions; "
                "allow verification copies to run this check"
            )
        return None

    # ---- scenario databases ---------------------------------------------------------------------
    def database(self, key: str, setup: list[TableRows]) -> PostgresDatabase:
        """The copy for scenario ``key`` with ``setup`` inserted (made once per run); raises CannotRun."""
        if key in self._dbs:
            return self._dbs[key]
        if key in self._broken:
            raise CannotRun(self._broken[key])
        why = self.unavailable()
        if why:
            raise CannotRun(why)
        try:
            script = setup_script(self.ctx, setup)
            copy = self._stack.enter_context(_copy_of(self.ctx.db))
            if script:
                _apply_setup(copy, script)
        except CannotRun as e:
            self._broken[key] = str(e)
            raise
        self._dbs[key] = copy
        return copy

    def run(
        self, key: str, setup: list[TableRows], statements: list[str], policy: Policy, reads: list[str]
    ) -> tuple[list[QueryResult | DbError], list[QueryResult | DbError]]:
        """Run ``statements`` (stopping at the first error), then each read query, in scenario ``key``."""
        base = self.database(key, setup)
        if all(is_read(s, base.dialect) for s in statements):
            results = _run_statements(base, statements, policy, read_only=True)
            if not (results and not results[-1].ok and results[-1].code == READ_ONLY_VIOLATION):
                return results, [_read(base, q) for q in reads]
        with _copy_of(base) as fresh:
            results = _run_statements(fresh, statements, policy, read_only=False)
            after = [_read(fresh, q) for q in reads] if results and results[-1].ok else []
            return results, after

    def explain(self, statements: list[str], policy: Policy) -> PlanReport:
        """Plans of the statements in a fresh copy of the sample scenario: earlier statements are executed so
        later ones are planned against their effects (an index the list creates, say)."""
        try:
            return _explain(self.database("sample", []), statements, policy)
        except CannotRun as e:
            return PlanReport(ok=False, error=str(e))

    def close(self) -> None:
        self._stack.close()
        self._dbs.clear()
        self._broken.clear()


def _explain(base: PostgresDatabase, statements: list[str], policy: Policy) -> PlanReport:
    from actsagent.guard import check_sql

    plans: list[StatementPlan] = []
    with _copy_of(base) as fresh:
        for s in _split(statements, fresh.dialect, policy):
            checked = check_sql(s, fresh.dialect, policy)
            if not checked.ok:
                return PlanReport(ok=False, error=checked.describe(), statements=plans)
            if _explainable(s, fresh.dialect):
                res = fresh.execute(f"EXPLAIN {s}", read_only=True)
                if not res.ok:
                    return PlanReport(ok=False, error=res.describe(), statements=plans)
                lines = [str(r[0]) for r in res.rows]
                m = _COST.search(lines[0]) if lines else None
                plans.append(StatementPlan(sql=s, cost=float(m.group(1)) if m else None, plan=lines[:40]))
            if not is_read(s, fresh.dialect):
                done = _run_statements(fresh, [s], policy, read_only=False)
                if not done[-1].ok:
                    return PlanReport(ok=False, error=done[-1].describe(), statements=plans)
    return PlanReport(ok=True, statements=plans)


def _split(statements: list[str], dialect: str, policy: Policy) -> list[str]:
    """One statement per element, so each is explained on its own (the strict guard refuses several anyway)."""
    if policy.read_only:
        return statements
    from actsagent.guard import split_statements

    return [p for s in statements for p in (split_statements(s, dialect) or [s])]


@contextmanager
def _copy_of(db: Any) -> Iterator[PostgresDatabase]:
    """A disposable copy of ``db``; a copy the server refuses (no CREATEDB right, no space, a template in use)
    makes the check could-not-run, never a crash of the run."""
    from actsagent.db.sandbox import sandbox

    cm = sandbox(db, limits=db.limits)
    try:
        copy = cm.__enter__()
    except Exception as e:  # environmental: psycopg, UserError, DatabaseUnavailable alike
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise CannotRun(f"no disposable copy could be made: {first}"[:300]) from e
    try:
        yield copy
    finally:
        cm.__exit__(None, None, None)


def _explainable(sql: str, dialect: str) -> bool:
    from actsagent.guard.split import first_keyword

    return first_keyword(sql, dialect) in (*QUERY_KEYWORDS, "INSERT", "UPDATE", "DELETE", "MERGE")


def _run_statements(db: Any, statements: list[str], policy: Policy, *, read_only: bool) -> list[QueryResult | DbError]:
    """Each statement through the guard; ``read_only`` keeps a "read" statement from changing the scenario."""
    from actsagent.guard import check_sql, rejection_error, run_guarded

    out: list[QueryResult | DbError] = []
    for s in statements:
        if read_only and not policy.read_only:
            checked = check_sql(s, db.dialect, policy)
            res = db.execute(s, read_only=True) if checked.ok else rejection_error(checked)
        else:
            res = run_guarded(db, s, policy=policy)
        out.append(res)
        if not res.ok:
            break
    return out


def _read(db: Any, sql: str) -> QueryResult | DbError:
    """A check's read query: one SELECT under the strict policy."""
    from actsagent.guard import Policy, run_guarded

    return run_guarded(db, sql, policy=Policy.strict(max_rows=db.limits.max_rows))


def setup_script(ctx: ToolContext, setup: list[TableRows]) -> list[str]:
    """DELETE/INSERT statements for ``setup``, tables and columns resolved in the catalog; raises CannotRun."""
    from sqlglot import exp

    if sum(len(t.rows) for t in setup) > MAX_SETUP_ROWS:
        raise CannotRun(f"the scenario inserts more than {MAX_SETUP_ROWS} rows")
    info = ctx.db.schema()
    deletes: list[str] = []
    inserts: list[str] = []
    for part in setup:
        table = info.table(part.table)
        if table is None:
            raise CannotRun(f"no table named {part.table!r} to put rows into")
        cols = []
        for c in part.columns:
            col = table.column(c)
            if col is None:
                raise CannotRun(f"table {table.name} has no column {c!r}")
            cols.append(col.name)
        target = exp.Table(
            this=exp.to_identifier(table.name, quoted=True),
            db=exp.to_identifier(table.schema_name, quoted=True) if table.schema_name else None,
        )
        name = target.sql(dialect="postgres")
        if part.replace:
            deletes.append(f"DELETE FROM {name}")
        values = []
        for row in part.rows:
            if len(row) != len(cols):
                raise CannotRun(f"a row for {table.name} has {len(row)} values for {len(cols)} columns")
            values.append("(" + ", ".join(_literal(v) for v in row) + ")")
        if values:
            col_list = ", ".join(exp.to_identifier(c, quoted=True).sql(dialect="postgres") for c in cols)
            inserts.append(f"INSERT INTO {name} ({col_list}) OVERRIDING SYSTEM VALUE VALUES {', '.join(values)}")
    return deletes + inserts


def _literal(v: Any) -> str:
    """An untyped literal PostgreSQL coerces to the column's type ('12' into an integer, 'true' into a boolean)."""
    from sqlglot import exp

    if v is None:
        return "NULL"
    if isinstance(v, bool):
        text = "true" if v else "false"
    elif isinstance(v, float) and v.is_integer():
        text = str(int(v))
    else:
        text = str(v)
    if "\x00" in text:
        raise CannotRun("a value holds a NUL character")
    if len(text) > MAX_VALUE_CHARS:
        raise CannotRun(f"a value is longer than {MAX_VALUE_CHARS} characters")
    return exp.Literal.string(text).sql(dialect="postgres")


def _apply_setup(copy: Any, script: list[str]) -> None:
    """One transaction in the copy; foreign-key triggers off where the server lets us (a superuser role), so
    an example's rows need not bring every referenced row along."""
    body = ";\n".join(script)
    res = copy.execute("SET LOCAL session_replication_role = replica;\n" + body, read_only=False)
    if not res.ok and res.code == "42501":  # not a superuser: keep the constraints
        res = copy.execute(body, read_only=False)
    if not res.ok:
        raise CannotRun(f"the scenario's rows could not be inserted: {res.describe()}")
