"""compare: candidates side by side on the rows where their results differ (listwise judgement).

Judging one candidate alone from a preview says little on sample data of a few rows per table: a
wrong query often returns something plausible. Two candidates written differently (a minimal edit
and a direct rewrite, two readings) that give different rows on the same data are a concrete
question: which rows does the request want? ``differences`` finds those rows scenario by scenario
(``agree`` says there are none), and ``compare_candidates`` asks the judge model to decide, with
each candidate's check results beside it. Agreement between independently written candidates is
evidence the judge weighs, never a verdict by itself: two candidates from one model often share
one misreading.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from actsagent.tools._context import ToolContext, ToolInputError
from actsagent.tools._sqltext import statements_text
from actsagent.tools._values import row_key
from actsagent.tools.checks import CheckPlan, describe
from actsagent.tools.verify import QueryOutput, ScenarioRun, Verification

DIFF_ROWS = 6  # differing rows shown per side


class OutputDiff(BaseModel):
    """Where two candidates' outputs differ in one scenario (their own output or a check's read query)."""

    scenario: str
    title: str
    query: str = ""
    a: str  # one-line description of each side: row count and columns, or the error
    b: str
    only_a: list[list[Any]] = Field(default_factory=list)
    only_b: list[list[Any]] = Field(default_factory=list)
    note: str = ""

    def describe(self, la: str, lb: str) -> str:
        what = f"after the read query {self.query!r}" if self.query else "their outputs"
        lines = [f"On {self.title}, {what} differ: {la} {self.a}; {lb} {self.b}."]
        if self.only_a:
            lines.append(f"  rows only {la} returns: " + "; ".join(_row(r) for r in self.only_a[:DIFF_ROWS]))
        if self.only_b:
            lines.append(f"  rows only {lb} returns: " + "; ".join(_row(r) for r in self.only_b[:DIFF_ROWS]))
        if self.note:
            lines.append(f"  {self.note}")
        return "\n".join(lines)


def _row(r: list[Any]) -> str:
    return "(" + ", ".join("NULL" if v is None else str(v) for v in r) + ")"


def _side(o: QueryOutput) -> str:
    if not o.ok:
        return f"fails ({o.error})"[:300]
    if not o.columns:
        return f"returns no result set ({o.status})"
    return f"returns {o.row_count}{'+' if o.capped else ''} row(s) with columns ({', '.join(o.columns)})"


def _diff(run: ScenarioRun, a: QueryOutput, b: QueryOutput) -> OutputDiff | None:
    same_shape = a.ok and b.ok and len(a.columns) == len(b.columns)
    if same_shape and a.digest == b.digest:
        if a.sequence_digest == b.sequence_digest:
            return None
        return OutputDiff(
            scenario=run.scenario,
            title=run.title,
            query=a.query,
            a=_side(a),
            b=_side(b),
            note="the same rows in a different order",
        )
    if not a.ok and not b.ok and a.error == b.error:
        return None
    d = OutputDiff(scenario=run.scenario, title=run.title, query=a.query, a=_side(a), b=_side(b))
    if a.ok and b.ok and a.columns and b.columns:
        ca, cb = Counter(row_key(r) for r in a.rows), Counter(row_key(r) for r in b.rows)
        only_a, only_b = ca - cb, cb - ca
        d.only_a = [r for r in a.rows if _take(only_a, row_key(r))]
        d.only_b = [r for r in b.rows if _take(only_b, row_key(r))]
        if not d.only_a and not d.only_b:
            d.note = (
                f"the first {min(len(a.rows), len(b.rows))} rows kept are the same; the outputs differ "
                "beyond them or in column types"
            )
    return d


def _take(c: Counter, k: str) -> bool:
    if c[k] > 0:
        c[k] -= 1
        return True
    return False


def differences(a: Verification, b: Verification) -> list[OutputDiff]:
    """Scenario by scenario, where the two candidates' outputs differ (scenarios both ran in only)."""
    out: list[OutputDiff] = []
    for ra in a.scenarios:
        rb = b.scenario(ra.scenario)
        if rb is None or "could_not_run" in (ra.status, rb.status):
            continue
        for oa in ra.outputs():
            ob = next((o for o in rb.outputs() if o.query == oa.query), None)
            if ob is not None:
                d = _diff(ra, oa, ob)
                if d is not None:
                    out.append(d)
    return out


def agree(a: Verification, b: Verification) -> bool:
    """Both ran on some common scenario, without errors, and gave the same results everywhere both ran."""
    common = [s for s in a.scenarios if s.status == "ran" and (o := b.scenario(s.scenario)) and o.status == "ran"]
    return bool(common) and not differences(a, b)


# ---------------------------------------------------------------------------------------------------
# the listwise judgement


class Contender(BaseModel):
    label: str  # "A", "B", ...
    node: str
    origin: str  # how it was written: minimal edit, direct rewrite, a reading, ...
    sql: str | list[str]
    verification: Verification
    judged: str = ""  # an earlier single judgement, if any


class CompareInput(BaseModel):
    intent: str
    original_sql: str | list[str] | None = None
    original_is_draft: bool = False  # ask's own first draft, not SQL the user reported faulty
    checks: CheckPlan | None = None
    contenders: list[Contender] = Field(min_length=2)


class CandidateJudgement(BaseModel):
    label: str
    right: bool = Field(description="does this candidate do what the request asks, judged on the differing rows?")
    reason: str = ""


class ComparisonReply(BaseModel):
    verdicts: list[CandidateJudgement] = Field(default_factory=list)
    best: str | None = Field(
        default=None, description="label of the candidate that answers the request, or null when none does"
    )
    reason: str = ""


class Comparison(BaseModel):
    best: str | None  # a label, validated
    verdicts: list[CandidateJudgement]
    reason: str = ""
    differences: list[str] = Field(default_factory=list)  # the rendered differing rows the judge saw

    def verdict_of(self, label: str) -> CandidateJudgement | None:
        return next((v for v in self.verdicts if v.label == label), None)


def compare_candidates(inp: CompareInput, ctx: ToolContext) -> Comparison:
    """One judge call over all contenders; the differences between each pair are shown, not previews alone."""
    diffs: list[str] = []
    for i, x in enumerate(inp.contenders):
        for y in inp.contenders[i + 1 :]:
            for d in differences(x.verification, y.verification):
                diffs.append(d.describe(f"{x.label}", f"{y.label}"))
    labels = [c.label for c in inp.contenders]
    contenders = [
        {
            "label": c.label,
            "node": c.node,
            "origin": c.origin,
            "sql": statements_text(c.sql),
            "checks": [r.line() for r in c.verification.results],
            "judged": c.judged,
            "output": _sample_output(c.verification),
        }
        for c in inp.contenders
    ]
    probe = [
        f"{t.table} ({', '.join(t.columns)}): "
        + "; ".join(_row(r) for r in t.rows[:12])
        + (f" and {len(t.rows) - 12} more" if len(t.rows) > 12 else "")
        for t in (inp.checks.probe_rows if inp.checks else [])
    ]
    resp = ctx.complete(
        "compare_candidates",
        role="judge",
        response_model=ComparisonReply,
        intent=inp.intent,
        original_sql=statements_text(inp.original_sql),
        original_is_draft=inp.original_is_draft,
        contenders=contenders,
        differences=diffs,
        checks=[describe(c) for c in inp.checks.all_checks()] if inp.checks else [],
        probe=probe,
        **ctx.schema_vars(sql=[s for c in inp.contenders for s in _stmts(c.sql)], intent=inp.intent),
    )
    reply: ComparisonReply = resp.parsed
    if reply.best is not None and reply.best not in labels:
        raise ToolInputError(f"the comparison named candidate {reply.best!r}; the candidates were {labels}")
    verdicts = [v for v in reply.verdicts if v.label in labels]
    return Comparison(best=reply.best, verdicts=verdicts, reason=reply.reason, differences=diffs)


def _stmts(sql: str | list[str]) -> list[str]:
    return [sql] if isinstance(sql, str) else list(sql)


def _sample_output(v: Verification) -> str:
    run = v.scenario("sample")
    if run is None or run.output is None:
        return run.reason if run else "(not run)"
    return run.output.describe(rows=5)
