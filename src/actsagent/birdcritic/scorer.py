"""Our own implementation of the BIRD-CRITIC scoring helpers and flow (no code copied).

The official test cases are Python sources defining ``test_case(pred_sqls, sol_sqls, db_name,
conn)``; they call helpers by name (``execute_queries``, ``ex_base``, ...) and read the global
``pred_query_result``. We rebuild those helpers with the documented behaviour and limits
(statement_timeout 60 s, 15 s for ``WITH RECURSIVE``, at most 10,000 rows) on psycopg 3, through
``db.pg2_compat`` so ``conn`` behaves like the psycopg2 connection the tests were written against.

This is the only module that reads ``sol_sql`` and ``test_cases`` (``ScoringKeys``).
"""

from __future__ import annotations

import json
import threading
import traceback
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from actsagent.birdcritic.tasks import PublicTask, iter_rows, task_file
from actsagent.db import pg2_compat as pg2

STATEMENT_TIMEOUT = "60s"
RECURSIVE_TIMEOUT = "15s"
MAX_ROWS = 10_000
TEST_CASE_TIMEOUT_S = 60.0  # the official harness gives each test case 60 s
SESSION_OPTIONS = "-c default_text_search_config=pg_catalog.english"


class ScoringKeys(BaseModel):
    """The answer side of a task: for the scorer only, never handed to a system."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instance_id: str
    sol_sql: list[str]
    test_cases: list[str]

    def __repr__(self) -> str:  # keep answers out of logs and tracebacks
        return f"ScoringKeys({self.instance_id!r}, <{len(self.sol_sql)} sol, {len(self.test_cases)} tests>)"

    __str__ = __repr__


def load_scoring_keys(task_set: str, *, root: Path | None = None) -> dict[str, ScoringKeys]:
    out: dict[str, ScoringKeys] = {}
    for row in iter_rows(task_file(task_set, root)):
        sol = row.get("sol_sql") or []
        out[str(row["instance_id"])] = ScoringKeys(
            instance_id=str(row["instance_id"]),
            sol_sql=[sol] if isinstance(sol, str) else list(sol),
            test_cases=list(row.get("test_cases") or []),
        )
    return out


# --------------------------------------------------------------------------- helpers the tests call


def perform_query_on_postgresql_databases(query: str, db_name: str, conn: pg2.CompatConnection | None = None):
    """Run one statement and commit; return ``(rows or None, conn)``; errors roll back and propagate.

    Whatever the statement, up to ``MAX_ROWS`` rows are fetched, and a statement that yields no
    rows (an INSERT, or a ``WITH ... INSERT`` without RETURNING) gives ``None``, as in the official
    helper since June 2025; it used to fetch only after SELECT/WITH and then failed such writes.
    """
    if conn is None:
        conn = _default_connection()
    cur = conn.cursor()
    timeout = RECURSIVE_TIMEOUT if "WITH RECURSIVE" in query.upper() else STATEMENT_TIMEOUT
    try:
        cur.execute(f"SET statement_timeout = '{timeout}'")
        cur.execute(query)
        conn.commit()
        try:
            return cur.fetchmany(MAX_ROWS + 1)[:MAX_ROWS], conn
        except pg2.ProgrammingError:  # the statement produced no rows
            return None, conn
    except Exception:
        conn.rollback()
        raise
    finally:
        try:
            cur.execute(f"SET statement_timeout = '{STATEMENT_TIMEOUT}'")
        except Exception:
            pass
        cur.close()


def execute_queries(queries, db_name, conn=None, logger=None, section_title=""):
    """Run statements in order; ``(result of the last one, error flag, timeout flag)``, stop at the first error."""
    result, error, timeout = run_statements(queries, db_name, conn)
    return result, error is not None and not timeout, timeout


def run_statements(queries, db_name, conn=None):
    """``execute_queries`` that also keeps the first error's message (for the result record)."""
    if isinstance(queries, str):
        queries = [queries]
    result = None
    for q in queries:
        try:
            result, conn = perform_query_on_postgresql_databases(q, db_name, conn=conn)
        except pg2.QueryCanceled as e:
            return result, _first_line(e), True
        except Exception as e:
            return result, _first_line(e), False
    return result, None, False


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0][:300] if text else ''}"


def preprocess_results(results):
    """Dates and datetimes become ``YYYY-MM-DD`` strings, rows become tuples."""
    return [tuple(v.strftime("%Y-%m-%d") if isinstance(v, (date, datetime)) else v for v in row) for row in results]


def remove_distinct(sql_list):
    """Drop every whitespace-separated token equal to DISTINCT (any case); tokens are re-joined by spaces."""
    return [" ".join(tok for tok in q.split() if tok.lower() != "distinct") for q in sql_list]


def check_sql_function_usage(sqls, required_keywords):
    if not sqls:
        return 0
    text = " ".join(s.lower() for s in sqls)
    return int(all(k.lower() in text for k in required_keywords))


def ex_base(pred_sqls, sol_sqls, db_name, conn):
    """1 when both lists run cleanly, both give rows, and the row sets are equal (dates as strings)."""
    if not pred_sqls or not sol_sqls:
        return 0
    pred, p_err, p_to = execute_queries(pred_sqls, db_name, conn)
    gold, g_err, g_to = execute_queries(sol_sqls, db_name, conn)
    if p_err or p_to or g_err or g_to or not pred or not gold:
        return 0
    return int(set(preprocess_results(pred)) == set(preprocess_results(gold)))


def _plan_cost(sqls, db_name, conn) -> float:
    total = 0.0
    for q in sqls:
        if not q.strip().upper().startswith(("SELECT", "INSERT", "UPDATE", "DELETE", "WITH")):
            try:  # not explainable: run it so later statements see its effect
                perform_query_on_postgresql_databases(q, db_name, conn=conn)
            except Exception:
                pass
            continue
        try:
            rows, _ = perform_query_on_postgresql_databases(f"EXPLAIN (FORMAT JSON) {q}", db_name, conn=conn)
        except Exception:
            continue
        if not rows:
            continue
        plan = rows[0][0]
        if isinstance(plan, str):
            plan = json.loads(plan)
        if isinstance(plan, list) and plan:
            total += float(plan[0].get("Plan", {}).get("Total Cost", 0.0))
    return total


def performance_compare_by_qep(old_sqls, sol_sqls, db_name, conn):
    """1 when the summed EXPLAIN total cost of ``sol_sqls`` is below that of ``old_sqls``."""
    if not old_sqls or not sol_sqls:
        return 0
    costs = []
    for side in (old_sqls, sol_sqls):
        try:
            perform_query_on_postgresql_databases("BEGIN", db_name, conn=conn)
            costs.append(_plan_cost(side, db_name, conn))
        finally:
            perform_query_on_postgresql_databases("ROLLBACK", db_name, conn=conn)
    return int(costs[1] < costs[0])


_local = threading.local()


def _default_connection() -> pg2.CompatConnection:
    conn = getattr(_local, "conn", None)
    if conn is None:
        raise RuntimeError("perform_query_on_postgresql_databases called without conn outside a scoring run")
    return conn


ScorerVariant = Literal["official", "checks"]


def _remove_distinct_regex(sql_list):
    """The checks/ run's variant: also removes DISTINCT inside tokens such as COUNT(DISTINCT x)."""
    import re

    return [re.sub(r"\bDISTINCT\b", "", q, flags=re.I) for q in sql_list]


def helper_namespace(pred_query_result: Any, *, variant: ScorerVariant = "official") -> dict[str, Any]:
    """The names test cases use. ``variant="checks"`` is a diagnostic that reproduces the two ways
    the reference run in ``checks/`` differs from the official scorer: no ``pred_query_result``
    global, and a regex ``remove_distinct``."""
    ns = {
        "perform_query_on_postgresql_databases": perform_query_on_postgresql_databases,
        "execute_queries": execute_queries,
        "ex_base": ex_base,
        "performance_compare_by_qep": performance_compare_by_qep,
        "check_sql_function_usage": check_sql_function_usage,
        "remove_distinct": remove_distinct,
        "preprocess_results": preprocess_results,
        "pred_query_result": pred_query_result,
        "date": date,
        "print": lambda *a, **k: None,  # tests print diagnostics; keep the progress display clean
    }
    if variant == "checks":
        del ns["pred_query_result"]
        ns["remove_distinct"] = _remove_distinct_regex
    return ns


# --------------------------------------------------------------------------- the scoring flow

Status = Literal["passed", "pred_error", "pred_timeout", "test_failed", "scorer_error"]


class ScoreResult(BaseModel):
    passed: bool
    status: Status
    tests_total: int = 0
    tests_passed: int = 0
    failed_tests: list[int] = []
    messages: list[str] = []


def _run_test_case(
    source: str, index: int, pred_sqls, sol_sqls, db_name, conn, pred_result, variant: ScorerVariant = "official"
) -> str | None:
    """Run one test case source; ``None`` when it passes, else a short reason."""
    outcome: list[str | None] = []

    def body() -> None:
        _local.conn = conn
        ns = helper_namespace(pred_result, variant=variant)
        try:
            code = compile("from datetime import date\n" + source, f"<test_case {index}>", "exec")
            exec(code, ns)
            ns["test_case"](pred_sqls, sol_sqls, db_name, conn)
            outcome.append(None)
        except AssertionError as e:
            outcome.append(f"assertion: {str(e)[:300]}")
        except BaseException as e:
            outcome.append(f"{type(e).__name__}: {str(e)[:300]}")
            if not isinstance(e, Exception):
                outcome.append(traceback.format_exc(limit=1))
        finally:
            _local.conn = None

    worker = threading.Thread(target=body, name=f"bc-test-{index}", daemon=True)
    worker.start()
    worker.join(TEST_CASE_TIMEOUT_S)
    if worker.is_alive():
        return f"test case timed out after {TEST_CASE_TIMEOUT_S:.0f}s"
    return outcome[0] if outcome else "test case produced no outcome"


def score(
    task: PublicTask, keys: ScoringKeys, pred_sqls: list[str], url: str, *, variant: ScorerVariant = "official"
) -> ScoreResult:
    """Score ``pred_sqls`` in the fresh database copy at ``url`` (the official flow, README section 4).

    ``variant="checks"`` is a diagnostic reproducing the reference run in ``checks/``; real scoring
    is always ``"official"``.
    """
    db_name = task.db_id
    try:
        conn = pg2.CompatConnection.connect(url, options=SESSION_OPTIONS)
    except pg2.Error as e:
        return ScoreResult(passed=False, status="scorer_error", messages=[f"cannot connect: {e}"])
    try:
        if task.preprocess_sql:
            execute_queries(task.preprocess_sql, db_name, conn)
        pred_result, err, timeout = run_statements(pred_sqls, db_name, conn)
        if err is not None:
            return ScoreResult(
                passed=False,
                status="pred_timeout" if timeout else "pred_error",
                tests_total=len(keys.test_cases),
                messages=[err],
            )
        # Efficiency tasks compare the issue SQL (as "pred") with the prediction (as "sol").
        a, b = (task.issue_sql, pred_sqls) if task.efficiency else (pred_sqls, keys.sol_sql)
        failed, messages = [], []
        for i, source in enumerate(keys.test_cases, 1):
            reason = _run_test_case(source, i, list(a), list(b), db_name, conn, pred_result, variant)
            if reason is not None:
                failed.append(i)
                messages.append(f"test {i}: {reason}")
            try:
                conn.rollback()  # a test that left the transaction aborted must not poison the next
            except pg2.Error:
                pass
        n = len(keys.test_cases)
        return ScoreResult(
            passed=not failed,
            status="test_failed" if failed else "passed",
            tests_total=n,
            tests_passed=n - len(failed),
            failed_tests=failed,
            messages=messages,
        )
    finally:
        try:
            conn.close()
        except pg2.Error:
            pass
        if task.clean_up_sql:
            try:
                clean = pg2.CompatConnection.connect(url, options=SESSION_OPTIONS)
                try:
                    execute_queries(task.clean_up_sql, db_name, clean)
                finally:
                    clean.close()
            except pg2.Error:
                pass
