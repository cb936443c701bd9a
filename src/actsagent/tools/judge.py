"""judge: does the SQL, with its result, answer the intent? (Reflect-SQL's semantic and entailment checks)

The LLM first lists what the request asks, one requirement at a time, and says for each whether
the SQL and its result meet it (yes / no / unclear); then it scores four semantic dimensions
(column choice, granularity and aggregation, joins, logic) and whether the result entails the
intent, each 1-10 with a reason; last it gives an overall verdict: correct, wrong, or unsure. It
sees the faulty SQL the user reported, the concrete results of the checks written from the request
before any candidate existed (``verify``), and for requests about speed the plans of the original
and the candidate. The pass decision is computed here, not by the model: the SQL must execute, no
check may have failed (a failed check refutes without asking the model, ``method="checks"``), no
requirement may be unmet, the verdict must be "correct" (a judge that cannot tell does not
approve: a scored preview on a few sample rows agrees with nearly anything), and the weighted
semantic score and the entailment score must reach their thresholds. Without a model only
execution can be checked, and the verdict says so (``method="execution_only"``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from actsagent.tools._context import ToolContext
from actsagent.tools._scenarios import PlanReport
from actsagent.tools._sqltext import statements_text
from actsagent.tools.run_sql import RunSqlOutput
from actsagent.tools.verify import CheckResult, Verification

# Reflect-SQL's weights (joins and granularity matter most); thresholds on the 1-10 scale.
WEIGHTS = {"columns": 0.1, "granularity": 0.3, "joins": 0.4, "logic": 0.2}


class Score(BaseModel):
    score: int = Field(ge=1, le=10)
    reason: str = ""


class Requirement(BaseModel):
    requirement: str = Field(description="one thing the request asks for, in the request's own terms")
    met: Literal["yes", "no", "unclear"]
    why: str = Field(default="", description="the clause, column or row that shows it")


class JudgeScores(BaseModel):
    requirements: list[Requirement] = Field(default_factory=list, description="what the request asks, one by one")
    columns: Score
    granularity: Score
    joins: Score
    logic: Score
    entailment: Score
    issues: list[str] = Field(default_factory=list, description="concrete problems, if any")
    verdict: Literal["correct", "wrong", "unsure"] = Field(
        description="correct: every requirement is met; wrong: one is not; unsure: the evidence cannot tell"
    )


class JudgeInput(BaseModel):
    intent: str
    sql: str | list[str]
    original_sql: str | list[str] | None = None  # the SQL the user reported as faulty
    execution: RunSqlOutput
    verification: Verification | None = None  # the checks' results on this SQL
    original_plan: PlanReport | None = None  # speed requests: the original's EXPLAIN, beside the candidate's
    context: list[str] = Field(default_factory=list)  # other evidence lines (e.g. a candidate with the same results)
    # checks every candidate so far failed, each written independently: the check may misread the request, so its
    # failure is evidence for the judge to weigh, not a refutation by itself
    doubted: list[str] = Field(default_factory=list)
    semantic_threshold: float = Field(default=6.0, ge=1, le=10)
    entailment_threshold: float = Field(default=6.0, ge=1, le=10)


Method = Literal["llm", "execution_only", "checks", "comparison"]


class Verdict(BaseModel):
    """A candidate's verdict. ``passed``: approved (by the judge, or chosen in a comparison); ``confirmed``:
    approved with evidence beyond any model's reading (a check with data the request fixes that the original
    fails, or a faster plan for a speed request): the agent calls only these verified. ``corroborated``:
    approved, and an independently written candidate the judge also approved returned the same results on every
    scenario. Agreement is weaker: two texts from one model often share a misreading (on one measured draw of
    BIRD-CRITIC flash, 14 of 20 agreeing approvals were right, against 27 of 31 confirmed by a check)."""

    passed: bool
    method: Method
    semantic_score: float | None = None
    entailment_score: float | None = None
    scores: JudgeScores | None = None
    reasons: list[str] = Field(default_factory=list)
    checks: list[CheckResult] = Field(default_factory=list)
    confirmed: bool = False
    corroborated: bool = False
    evidence: list[str] = Field(default_factory=list)

    def summary(self) -> str:
        head = "PASS" if self.passed else "FAIL"
        if self.method == "llm" and self.semantic_score is not None:
            head += f" (semantic {self.semantic_score:.1f}, entailment {self.entailment_score:.0f})"
        elif self.method == "execution_only":
            head += " (execution only, no LLM judge)"
        elif self.method in ("checks", "comparison"):
            head += f" ({self.method})"
        if self.passed and self.method != "execution_only":
            word = "confirmed" if self.confirmed else "corroborated, unconfirmed" if self.corroborated else None
            head += f"; {word}: " + "; ".join(self.evidence) if word else "; unconfirmed"
        if self.checks:
            counts = {s: sum(c.status == s for c in self.checks) for s in ("passed", "failed", "could_not_run")}
            head += (
                f"; checks {counts['passed']} passed, {counts['failed']} failed, "
                f"{counts['could_not_run']} could not run"
            )
        return head + ("; " + "; ".join(self.reasons) if self.reasons else "")


FEW_ROWS = 3  # a table this small (BIRD-CRITIC samples hold 0-3 rows) often gives a correct query no rows


class TableRows(BaseModel):
    name: str
    rows: int | None  # the schema's row estimate (exact count for small tables); None when unknown


def tables_read(sql: str | list[str], ctx: ToolContext) -> list[TableRows]:
    """The database tables the SQL names (CTE names excluded), with their row counts from the schema.

    An empty result over (nearly) empty tables says nothing against the SQL; the judge must know.
    """
    import sqlglot
    from sqlglot import exp

    names: list[str] = []
    for stmt in [sql] if isinstance(sql, str) else sql:
        try:
            trees = sqlglot.parse(stmt, read=ctx.db.dialect)
        except sqlglot.errors.SqlglotError:
            continue
        for tree in trees:
            if tree is None:
                continue
            ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
            names += [t.name for t in tree.find_all(exp.Table) if t.name and t.name.lower() not in ctes]
    info = ctx.db.schema()
    out: list[TableRows] = []
    for name in dict.fromkeys(names):
        t = info.table(name)
        if t is not None and all(o.name != t.name for o in out):
            out.append(TableRows(name=t.name, rows=t.row_estimate))
    return out


def judge(inp: JudgeInput, ctx: ToolContext) -> Verdict:
    ex = inp.execution
    if not ex.ok:
        err = ex.error
        return Verdict(
            passed=False,
            method="llm" if ctx.model else "execution_only",
            reasons=[f"does not execute: {err.describe() if err else 'error'}"],
        )
    if ctx.model is None:
        empty = ex.last.empty
        return Verdict(
            passed=not empty,
            method="execution_only",
            reasons=["executes but returns no rows"] if empty else ["executes; semantics not verified"],
        )
    checks = inp.verification.results if inp.verification else []
    failed = [c for c in checks if c.status == "failed" and c.id not in inp.doubted]
    if failed:  # concrete evidence against it: no model call
        return Verdict(passed=False, method="checks", checks=checks, reasons=[c.line() for c in failed])
    sql = statements_text(inp.sql)
    plans = None
    if inp.verification is not None and inp.verification.plan is not None and inp.original_plan is not None:
        plans = {"original": inp.original_plan.describe(), "candidate": inp.verification.plan.describe()}
    resp = ctx.complete(
        "judge",
        role="judge",
        response_model=JudgeScores,
        intent=inp.intent,
        sql=sql,
        original_sql=statements_text(inp.original_sql) if inp.original_sql else "",
        result=ex.summary(),
        **ctx.schema_vars(sql=inp.sql, intent=inp.intent),
        tables=tables_read(inp.sql, ctx),
        few_rows=FEW_ROWS,
        checks=[
            c.line() + (" (doubted: every candidate so far fails it)" if c.id in inp.doubted else "") for c in checks
        ],
        doubted=any(c.id in inp.doubted and c.status == "failed" for c in checks),
        plans=plans,
        context=inp.context,
    )
    s: JudgeScores = resp.parsed
    semantic = sum(getattr(s, k).score * w for k, w in WEIGHTS.items())
    reasons = [
        f"{k}: {getattr(s, k).reason}"
        for k in (*WEIGHTS, "entailment")
        if getattr(s, k).score < inp.semantic_threshold and getattr(s, k).reason
    ]
    unmet = [r for r in s.requirements if r.met == "no"]
    reasons += [f"unmet: {r.requirement}" + (f" ({r.why})" if r.why else "") for r in unmet]
    reasons += s.issues
    if s.verdict != "correct":
        reasons.append(f"the judge's verdict: {s.verdict}")
    passed = (
        semantic >= inp.semantic_threshold
        and s.entailment.score >= inp.entailment_threshold
        and s.verdict == "correct"
        and not unmet
    )
    return Verdict(
        passed=passed,
        method="llm",
        semantic_score=round(semantic, 2),
        entailment_score=float(s.entailment.score),
        scores=s,
        reasons=reasons,
        checks=checks,
    )
