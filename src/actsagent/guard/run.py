"""Run SQL through the guard: a refusal comes back as a typed ``DbError`` and never reaches the database."""

from __future__ import annotations

from actsagent.db.base import Database
from actsagent.db.results import DbError, ErrorClass, ExecResult
from actsagent.guard.check import check_sql
from actsagent.guard.models import GuardRejection, Policy


def rejection_error(rej: GuardRejection) -> DbError:
    return DbError(
        sql=rej.original,
        engine="guard",
        error_class=ErrorClass.GUARD_REJECTED,
        message=rej.reason,
        code=rej.rule,
        identifier=rej.offending,
        position=rej.position,
    )


def run_guarded(db: Database, sql: str, policy: Policy | None = None) -> ExecResult:
    """Check ``sql`` for ``db.dialect`` and run the regenerated SQL read-only (strict, the default).

    Strict: the tree gets ``LIMIT cap + 1`` and the fetch keeps ``cap`` rows, so ``truncated`` says
    exactly whether rows were cut; the check uses the server's catalog (``Database.catalog()``, read only
    when a field needs it) to tell a column ``t.f`` from a call ``f(t)``. Sandbox: the statements run as written, in order, writes allowed
    (only where ``db`` is writable); the last result, or the first error, is returned.
    """
    policy = policy or Policy.strict(max_rows=db.limits.max_rows)
    if not policy.read_only:
        checked = check_sql(sql, db.dialect, policy)
        assert checked.ok
        stmts = checked.statements or [sql]
        if len(stmts) == 1:
            return db.execute(stmts[0], read_only=False)
        return db.execute_script(stmts)[-1]
    cap = policy.max_rows
    checked = check_sql(sql, db.dialect, policy, max_rows=cap + 1, catalog=db.catalog)
    if not checked.ok:
        return rejection_error(checked)
    return db.execute(checked.sql, max_rows=cap, read_only=True)
