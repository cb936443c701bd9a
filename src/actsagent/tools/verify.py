"""verify: run the checks written from the request on one SQL, in disposable copies, and report what they showed.

The SQL runs in each scenario (the database as it is, with probe rows added, with an example's own
rows; see ``_scenarios``), its outputs are kept (canonical digests and the first rows, so candidates
can later be compared on the rows where they differ), and every check gets one of three results:
passed, failed, or could-not-run with the reason. A check that cannot run is never a pass. For
requests about speed, EXPLAIN (no ANALYZE) plans of the SQL are taken in a fresh copy.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any, Literal

from pydantic import BaseModel, Field

from actsagent.db import DbError, QueryResult
from actsagent.tools._context import ToolContext
from actsagent.tools._scenarios import CannotRun, PlanReport, TableRows
from actsagent.tools._sqltext import is_read
from actsagent.tools._values import digests, plain, rows_match, sort_key
from actsagent.tools.checks import (
    MAX_EXPECTED_ROWS,
    Check,
    CheckKind,
    CheckPlan,
    ColumnsCheck,
    FasterCheck,
    OrderingCheck,
    RowCountCheck,
    SameResultCheck,
    ScenarioCheck,
    UniqueCheck,
    describe,
)
from actsagent.tools.run_sql import execute_statements

STORED_ROWS = 50  # rows of each output kept for comparisons and prompts
CheckStatus = Literal["passed", "failed", "could_not_run"]
_MARK = {"passed": "✓", "failed": "✗", "could_not_run": "?"}


class QueryOutput(BaseModel):
    """One output: the SQL's own (its last statement, ``query`` empty) or a check's read query after it."""

    query: str = ""
    ok: bool
    error: str | None = None
    columns: list[str] = Field(default_factory=list)
    types: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)  # the first STORED_ROWS rows, plain JSON values
    row_count: int = 0
    capped: bool = False  # the fetch cap cut the result: row_count is a lower bound
    status: str = ""
    digest: str = ""  # canonical multiset of every fetched row
    sequence_digest: str = ""  # the same, in order

    @classmethod
    def of(cls, res: QueryResult | DbError, query: str = "") -> QueryOutput:
        if not res.ok:
            assert isinstance(res, DbError)
            return cls(query=query, ok=False, error=res.describe())
        assert isinstance(res, QueryResult)
        rows = [[plain(v) for v in r] for r in res.rows]
        bag, seq = digests(rows)
        return cls(
            query=query,
            ok=True,
            columns=[c.name for c in res.columns],
            types=[c.type for c in res.columns],
            rows=rows[:STORED_ROWS],
            row_count=res.row_count,
            capped=res.truncated,
            status=res.status,
            digest=bag,
            sequence_digest=seq,
        )

    @property
    def has_rows(self) -> bool:
        return self.ok and bool(self.columns)

    def describe(self, rows: int = 5) -> str:
        if not self.ok:
            return f"ERROR {self.error}"
        if not self.columns:
            return f"no result set ({self.status or 'statement done'})"
        n = f"{self.row_count}{'+' if self.capped else ''} row(s)"
        body = [" | ".join("NULL" if v is None else str(v) for v in r) for r in self.rows[:rows]]
        shown = "" if self.row_count <= len(body) else f", first {len(body)} shown"
        return "\n".join([f"{n}{shown}; columns: {', '.join(self.columns)}", *body])


class ScenarioRun(BaseModel):
    """The SQL in one scenario: its output and the read queries after it, or why it could not run."""

    scenario: str  # "sample", "probe", or the id of the check whose rows it holds
    title: str
    status: Literal["ran", "error", "could_not_run"]
    reason: str = ""
    output: QueryOutput | None = None
    reads: list[QueryOutput] = Field(default_factory=list)

    def read(self, query: str) -> QueryOutput | None:
        return next((r for r in self.reads if r.query == query), None)

    def outputs(self) -> list[QueryOutput]:
        return ([self.output] if self.output is not None else []) + list(self.reads)


class CheckResult(BaseModel):
    id: str
    kind: CheckKind
    status: CheckStatus
    detail: str = ""

    def line(self) -> str:
        word = {"passed": "passed", "failed": "FAILED", "could_not_run": "could not run"}[self.status]
        return f"{_MARK[self.status]} {self.id} {self.kind} {word}: {self.detail}"[:400]


class Verification(BaseModel):
    """Every check's result on one SQL, the scenario outputs behind them, and its plan (speed requests)."""

    sql: str | list[str]
    results: list[CheckResult] = Field(default_factory=list)
    scenarios: list[ScenarioRun] = Field(default_factory=list)
    plan: PlanReport | None = None

    def result(self, check_id: str) -> CheckResult | None:
        return next((r for r in self.results if r.id == check_id), None)

    def scenario(self, key: str) -> ScenarioRun | None:
        return next((s for s in self.scenarios if s.scenario == key), None)

    def with_status(self, status: CheckStatus) -> list[CheckResult]:
        return [r for r in self.results if r.status == status]

    def summary(self) -> str:
        if not self.results:
            return "no checks"
        words: dict[CheckStatus, str] = {"passed": "passed", "failed": "failed", "could_not_run": "could not run"}
        counts = [f"{len(self.with_status(s))} {w}" for s, w in words.items() if self.with_status(s)]
        return "checks: " + ", ".join(counts)


class ScenarioSpec(BaseModel):
    key: str
    title: str
    setup: list[TableRows] = Field(default_factory=list)
    reads: list[str] = Field(default_factory=list)


def scenarios_of(plan: CheckPlan) -> list[ScenarioSpec]:
    """The sample database, the probe rows, and each check that brings its own rows."""
    common = list(
        dict.fromkeys(
            [c.query for c in plan.checks if isinstance(c, ScenarioCheck) and not c.setup and c.query]
            + [c.count_query for c in plan.checks if isinstance(c, RowCountCheck) and c.count_query]
        )
    )
    specs = [ScenarioSpec(key="sample", title="the sample data", reads=common)]
    if plan.probe_rows:
        specs.append(
            ScenarioSpec(key="probe", title="the data with probe rows added", setup=plan.probe_rows, reads=common)
        )
    for c in plan.checks:
        if isinstance(c, ScenarioCheck) and c.setup:
            specs.append(
                ScenarioSpec(
                    key=c.id,
                    title=f"the data of {c.kind} check {c.id}",
                    setup=c.setup,
                    reads=[c.query] if c.query else [],
                )
            )
    return specs


class VerifyInput(BaseModel):
    sql: str | list[str]
    checks: CheckPlan
    reference: Verification | None = None  # the original SQL's verification, for the derived speed checks


def verify(inp: VerifyInput, ctx: ToolContext) -> Verification:
    statements = [inp.sql] if isinstance(inp.sql, str) else list(inp.sql)
    runs = [_run(spec, statements, ctx) for spec in scenarios_of(inp.checks)]
    plan = ctx.scenarios().explain(statements, ctx.active_policy()) if inp.checks.about_speed else None
    ver = Verification(sql=inp.sql, scenarios=runs, plan=plan)
    ver.results = [_evaluate(c, ver, inp.reference) for c in inp.checks.all_checks()]
    return ver


def _run(spec: ScenarioSpec, statements: list[str], ctx: ToolContext) -> ScenarioRun:
    env = ctx.scenarios()
    why = env.unavailable()
    try:
        if why and spec.key == "sample" and all(is_read(s, ctx.db.dialect) for s in statements):
            # no copy may be made: the SQL's own read-only execution (the one run_sql did) is all we look at
            results, _ = execute_statements(ctx, statements)
            after: list[QueryResult | DbError] = []
            reads_missing = why
        else:
            results, after = env.run(spec.key, spec.setup, statements, ctx.active_policy(), spec.reads)
            reads_missing = ""
    except CannotRun as e:
        return ScenarioRun(scenario=spec.key, title=spec.title, status="could_not_run", reason=str(e))
    out = QueryOutput.of(results[-1]) if results else None
    failed = not results or not results[-1].ok or len(results) < len(statements)
    error = (out.error if out else None) or "the SQL did not run to its end"
    return ScenarioRun(
        scenario=spec.key,
        title=spec.title,
        status="error" if failed else "ran",
        output=out,
        reason=error if failed else reads_missing,
        reads=[QueryOutput.of(r, q) for q, r in zip(spec.reads, after, strict=False)],
    )


# ---------------------------------------------------------------------------------------------------
# evaluating one check


def _evaluate(c: Check, ver: Verification, ref: Verification | None) -> CheckResult:
    if isinstance(c, ScenarioCheck):
        status, detail = _scenario_check(c, ver)
    elif isinstance(c, SameResultCheck):
        status, detail = _same_result(ver, ref)
    elif isinstance(c, FasterCheck):
        status, detail = _faster(ver, ref)
    else:
        status, detail = _shape_check(c, ver)
    return CheckResult(id=c.id, kind=c.kind, status=status, detail=detail)


def _shape_check(
    c: ColumnsCheck | RowCountCheck | UniqueCheck | OrderingCheck, ver: Verification
) -> tuple[CheckStatus, str]:
    """Checks of the output's shape, on the sample and probe scenarios: any failure fails, any pass passes."""
    passed, not_run = [], []
    for run in (ver.scenario("sample"), ver.scenario("probe")):
        if run is None:
            continue
        if run.status == "could_not_run":
            not_run.append(f"{run.title}: {run.reason}")
            continue
        if run.status == "error" or run.output is None:
            return "failed", f"the SQL fails on {run.title}: {run.reason}"
        if not run.output.has_rows:
            return "failed", f"the SQL returns no result set on {run.title} ({run.output.status})"
        status, detail = _shape_one(c, run)
        if status == "failed":
            return "failed", f"{run.title}: {detail}"
        if status == "could_not_run":
            not_run.append(f"{run.title}: {detail}")
        else:
            passed.append(f"{run.title}: {detail}")
    if passed:
        return "passed", "; ".join(passed)
    return "could_not_run", "; ".join(not_run) or "no scenario ran"


def _shape_one(
    c: ColumnsCheck | RowCountCheck | UniqueCheck | OrderingCheck, run: ScenarioRun
) -> tuple[CheckStatus, str]:
    out = run.output
    assert out is not None
    if isinstance(c, ColumnsCheck):
        return _columns(c, out)
    if isinstance(c, RowCountCheck):
        return _row_count(c, out, run)
    if isinstance(c, UniqueCheck):
        bad = [p for p in c.positions if p < 1 or p > len(out.columns)]
        if bad:
            return "failed", f"the output has {len(out.columns)} column(s), no column {bad[0]}"
        keys = [tuple(str(r[p - 1]) for p in c.positions) if c.positions else tuple(map(str, r)) for r in out.rows]
        dup = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
        if dup is not None:
            return "failed", f"duplicate {list(dup)}"
        if out.row_count > len(out.rows):
            return "could_not_run", f"no duplicate in the first {len(out.rows)} rows; the rest were not kept"
        return "passed", f"{out.row_count} distinct row(s)"
    if c.position > len(out.columns):
        return "failed", f"the output has {len(out.columns)} column(s), no column {c.position}"
    values = [r[c.position - 1] for r in out.rows]
    if not _is_sorted(values, c.descending):
        return "failed", f"column {c.position} ({out.columns[c.position - 1]}) is not sorted: {values[:6]}"
    return "passed", f"{len(values)} row(s) in order"


def _is_sorted(values: list[Any], descending: bool) -> bool:
    """Sorted as PostgreSQL sorts (NULLs count as largest); text in either a byte-wise or a case-blind collation."""

    def ok(keys: list[tuple]) -> bool:
        pairs = list(pairwise(keys))
        return all(_ge(a, b) for a, b in pairs) if descending else all(_ge(b, a) for a, b in pairs)

    keyed = [sort_key(v) for v in values]
    return ok(keyed) or ok([(k[0], k[2]) if k[0] == 2 else k for k in keyed])


def _ge(a: tuple, b: tuple) -> bool:
    try:
        return a >= b
    except TypeError:  # mixed kinds at the same rank: compare as text
        return str(a) >= str(b)


_TYPE_WORDS = {
    "number": ("int", "numeric", "decimal", "real", "double", "float", "serial", "money"),
    "text": ("char", "text", "name", "citext", "uuid"),
    "datetime": ("date", "time", "interval"),
    "boolean": ("bool",),
    "array": ("[]",),
    "json": ("json",),
}


def type_class(pg_type: str) -> str:
    t = pg_type.lower()
    if t.endswith("[]"):
        return "array"
    for cls in ("json", "boolean", "datetime", "number", "text"):
        if any(w in t for w in _TYPE_WORDS[cls]):
            return cls
    return "other"


def _columns(c: ColumnsCheck, out: QueryOutput) -> tuple[CheckStatus, str]:
    if len(out.columns) != len(c.columns):
        return "failed", (
            f"{len(out.columns)} column(s) ({', '.join(out.columns)}), expected {len(c.columns)} "
            f"({', '.join(x.name or x.role for x in c.columns)})"
        )
    for i, (want, got, gtype) in enumerate(zip(c.columns, out.columns, out.types or [""] * len(out.columns)), 1):
        if want.type != "any" and gtype and type_class(gtype) not in (want.type, "other"):
            return "failed", f"column {i} ({got}) is {gtype}, expected {want.type}"
    named = [x.name for x in c.columns if x.name]
    differ = [f"{g} for {w.name}" for w, g in zip(c.columns, out.columns) if w.name and w.name.lower() != g.lower()]
    note = f"; names differ: {', '.join(differ)}" if named and differ else ""
    return "passed", f"{len(out.columns)} column(s){note}"


def _row_count(c: RowCountCheck, out: QueryOutput, run: ScenarioRun) -> tuple[CheckStatus, str]:
    want = c.count
    if c.count_query:
        q = run.read(c.count_query)
        if q is None or not q.ok or not q.rows or not q.rows[0]:
            return "could_not_run", f"its count query gave no number ({q.error if q and q.error else run.reason})"
        try:
            want = int(float(q.rows[0][0]))
        except (TypeError, ValueError):
            return "could_not_run", f"its count query returned {q.rows[0][0]!r}, not a number"
    assert want is not None
    got = out.row_count
    ok = {
        "exactly": got == want and not out.capped,
        "at_most": got <= want and not out.capped,
        "at_least": got >= want,
    }[c.relation]
    text = f"{got}{'+' if out.capped else ''} row(s), expected {c.relation.replace('_', ' ')} {want}"
    return ("passed" if ok else "failed"), text


def _scenario_check(c: ScenarioCheck, ver: Verification) -> tuple[CheckStatus, str]:
    if len(c.expected.rows) > MAX_EXPECTED_ROWS:
        return "could_not_run", f"the check expects more than {MAX_EXPECTED_ROWS} rows"
    run = ver.scenario(c.id if c.setup else "sample")
    if run is None or run.status == "could_not_run":
        return "could_not_run", run.reason if run else "its scenario did not run"
    if run.status == "error":
        return "failed", f"the SQL fails on {run.title}: {run.reason}"
    out = run.read(c.query) if c.query else run.output
    if out is None:
        return "could_not_run", run.reason or "its query did not run"
    if not out.ok:
        return "could_not_run", f"the check's query failed: {out.error}"
    if not out.columns:
        return "failed", f"the SQL returns no result set ({out.status}); expected {len(c.expected.rows)} row(s)"
    width = len(c.expected.columns) or (len(c.expected.rows[0]) if c.expected.rows else 0)
    if width and width != len(out.columns):
        return "failed", (
            f"{len(out.columns)} column(s) ({', '.join(out.columns)}), the expected output has {width}"
            + (f" ({', '.join(c.expected.columns)})" if c.expected.columns else "")
        )
    if out.row_count > len(out.rows):
        if c.expected.match == "exact" and out.row_count != len(c.expected.rows):
            return "failed", f"{out.row_count} row(s), expected {len(c.expected.rows)}"
        return "could_not_run", f"the output has {out.row_count} rows; only {len(out.rows)} were kept"
    ok, missing, extra = rows_match(
        c.expected.rows, out.rows, ordered=c.expected.ordered, exact=c.expected.match == "exact"
    )
    if ok:
        return "passed", f"reproduces the {len(c.expected.rows)} expected row(s)" + (
            " in order" if c.expected.ordered else ""
        )
    parts = [f"got {out.row_count} row(s), expected {len(c.expected.rows)}"]
    if missing:
        parts.append(f"missing {_rows_text(missing)}")
    if extra:
        parts.append(f"unexpected {_rows_text(extra)}")
    if not missing and not extra:
        parts.append("the rows are there but not in the expected order")
    return "failed", "; ".join(parts)


def _rows_text(rows: list[list[Any]], n: int = 4) -> str:
    shown = "; ".join("(" + ", ".join("NULL" if v is None else str(v) for v in r) + ")" for r in rows[:n])
    return shown + (f" and {len(rows) - n} more" if len(rows) > n else "")


def _same_result(ver: Verification, ref: Verification | None) -> tuple[CheckStatus, str]:
    if ref is None:
        return "could_not_run", "no original to compare with"
    compared, not_run = [], []
    for run in ver.scenarios:
        if run.scenario not in ("sample", "probe"):
            continue
        theirs = ref.scenario(run.scenario)
        if run.status == "could_not_run" or theirs is None or theirs.status != "ran":
            not_run.append(run.title)
            continue
        if run.status == "error":
            return "failed", f"the SQL fails on {run.title}; the original runs there"
        for mine in run.outputs():
            other = next((o for o in theirs.outputs() if o.query == mine.query), None)
            if other is not None and other.ok and mine.digest != other.digest:
                what = "its output" if not mine.query else f"the read query {mine.query[:80]!r}"
                return "failed", (
                    f"{run.title}: {what} differs from the original's ({mine.row_count} vs {other.row_count} row(s))"
                )
        compared.append(run.title)
    if compared:
        return "passed", "same results as the original on " + " and ".join(compared)
    return "could_not_run", "the original gave no result to compare with on " + (", ".join(not_run) or "any data")


def _faster(ver: Verification, ref: Verification | None) -> tuple[CheckStatus, str]:
    if ref is None or ref.plan is None:
        return "could_not_run", "no plan of the original to compare with"
    mine, theirs = ver.plan, ref.plan
    if mine is None or not mine.ok:
        return "could_not_run", f"no plan of this SQL: {mine.error if mine else 'not explained'}"
    if not theirs.ok:
        return "could_not_run", f"no plan of the original: {theirs.error}"
    a, b = mine.total_cost, theirs.total_cost
    if a < b:
        return "passed", f"estimated cost {a:.2f} < the original's {b:.2f}"
    return "failed", f"estimated cost {a:.2f}, not below the original's {b:.2f}"


def check_lines(plan: CheckPlan, original: Verification | None) -> list[str]:
    """The checks as the tree's reader sees them, with the original SQL's result on each."""
    lines = ["checks written from the request before any candidate:"]
    for c in plan.all_checks():
        r = original.result(c.id) if original else None
        lines.append(f"  {describe(c)}" + (f"  [original: {r.status.replace('_', ' ')}]" if r else ""))
    if len(lines) == 1:
        lines.append("  (none)")
    return lines
