"""judge: does the SQL, with its result, answer the intent? (Reflect-SQL's semantic and entailment checks)

The LLM scores four semantic dimensions (column choice, granularity and aggregation, joins,
logic) and whether the result entails the intent, each 1-10 with a reason. The pass decision is
computed here, not by the model: the SQL must execute, the weighted semantic score and the
entailment score must reach their thresholds. Without a model only execution can be checked,
and the verdict says so (``method="execution_only"``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from actsagent.tools._context import ToolContext
from actsagent.tools._sqltext import statements_text
from actsagent.tools.run_sql import RunSqlOutput

# Reflect-SQL's weights (joins and granularity matter most); thresholds on the 1-10 scale.
WEIGHTS = {"columns": 0.1, "granularity": 0.3, "joins": 0.4, "logic": 0.2}


class Score(BaseModel):
    score: int = Field(ge=1, le=10)
    reason: str = ""


class JudgeScores(BaseModel):
    columns: Score
    granularity: Score
    joins: Score
    logic: Score
    entailment: Score
    issues: list[str] = Field(default_factory=list, description="concrete problems, if any")


class JudgeInput(BaseModel):
    intent: str
    sql: str | list[str]
    execution: RunSqlOutput
    semantic_threshold: float = Field(default=6.0, ge=1, le=10)
    entailment_threshold: float = Field(default=6.0, ge=1, le=10)


class Verdict(BaseModel):
    passed: bool
    method: Literal["llm", "execution_only"]
    semantic_score: float | None = None
    entailment_score: float | None = None
    scores: JudgeScores | None = None
    reasons: list[str] = Field(default_factory=list)

    def summary(self) -> str:
        head = "PASS" if self.passed else "FAIL"
        if self.method == "llm" and self.semantic_score is not None:
            head += f" (semantic {self.semantic_score:.1f}, entailment {self.entailment_score:.0f})"
        elif self.method == "execution_only":
            head += " (execution only, no LLM judge)"
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
        return Verdict(passed=False, method="llm" if ctx.model else "execution_only",
                       reasons=[f"does not execute: {err.describe() if err else 'error'}"])
    if ctx.model is None:
        empty = ex.last.empty
        return Verdict(passed=not empty, method="execution_only",
                       reasons=["executes but returns no rows"] if empty else ["executes; semantics not verified"])
    sql = statements_text(inp.sql)
    resp = ctx.complete("judge", role="judge", response_model=JudgeScores, intent=inp.intent, sql=sql,
                        result=ex.summary(), **ctx.schema_vars(sql=inp.sql, intent=inp.intent), tables=tables_read(inp.sql, ctx),
                        few_rows=FEW_ROWS)
    s: JudgeScores = resp.parsed
    semantic = sum(getattr(s, k).score * w for k, w in WEIGHTS.items())
    reasons = [f"{k}: {getattr(s, k).reason}" for k in (*WEIGHTS, "entailment")
               if getattr(s, k).score < inp.semantic_threshold and getattr(s, k).reason]
    reasons += s.issues
    passed = semantic >= inp.semantic_threshold and s.entailment.score >= inp.entailment_threshold
    return Verdict(passed=passed, method="llm", semantic_score=round(semantic, 2),
                   entailment_score=float(s.entailment.score), scores=s, reasons=reasons)
