"""generate_sql (hybrid): a candidate fix, then run. Two strategies write materially different candidates.

``minimal_edit`` (the default): the LLM sees the intent, the original SQL, the branch hypothesis and
the evidence from the root to this node, and is told to change as little as possible. ``rewrite``:
a direct rewrite from the request alone (the single-shot prompt, plus the branch's reading), with
no path evidence, so it does not inherit the faulty structure; measured on BIRD-CRITIC, that is
where single-shot beat the tree. Without a model (or when the plan already holds a concrete draft),
the candidate is the draft or the newest executable SQL found on the path (a SafeQL refinement or
a clause repair): no invention, only what evidence gave.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from actsagent.tools._context import ToolContext
from actsagent.tools._results import ExecSummary, ToolOutput
from actsagent.tools._schema_context import sql_list
from actsagent.tools._sqltext import is_statement_list, statements_text
from actsagent.tools.run_sql import RunSqlInput, RunSqlOutput, run_sql

Strategy = Literal["minimal_edit", "rewrite"]


class GenerateSqlInput(BaseModel):
    intent: str
    original_sql: str | list[str] | None = None
    hypothesis: str = ""
    evidence: list[str] = Field(default_factory=list)
    draft_sql: str | list[str] | None = None  # a concrete candidate proposed by the planner or found on the path
    use_llm: bool = True
    feedback: str = ""  # why earlier candidates were refuted
    strategy: Strategy = "minimal_edit"


class GeneratedSQL(BaseModel):
    sql: str | list[str] = Field(
        description="a single statement as a string; for a statement list, an array "
        "holding every statement in execution order (no trailing ';')"
    )
    rationale: str = ""


class GenerateSqlOutput(ToolOutput):
    tool: Literal["generate_sql"] = "generate_sql"
    sql: str | list[str]
    source: Literal["llm", "draft", "original"]
    rationale: str = ""
    execution: RunSqlOutput
    strategy: Strategy = "minimal_edit"

    @property
    def statements(self) -> list[str]:
        return [self.sql] if isinstance(self.sql, str) else list(self.sql)

    def produced_sql(self) -> str | list[str]:
        return self.sql

    def executed(self) -> list[ExecSummary]:
        return self.execution.statements

    def summary(self) -> str:
        sql = statements_text(self.sql)
        how = self.source if self.strategy == "minimal_edit" else "direct rewrite"
        return f"candidate ({how}): {sql}\n  -> {self.execution.summary()}"


def generate_sql(inp: GenerateSqlInput, ctx: ToolContext) -> GenerateSqlOutput:
    source: Literal["llm", "draft", "original"]
    if inp.use_llm and ctx.model is not None and inp.strategy == "rewrite":
        direct = write_directly(ctx, inp.intent, inp.original_sql, inp.hypothesis)
        sql, source, why = _clean(direct.sql), "llm", direct.rationale
    elif inp.use_llm and ctx.model is not None:
        resp = ctx.complete(
            "generate_sql",
            role="tools",
            response_model=GeneratedSQL,
            intent=inp.intent,
            original_sql=statements_text(inp.original_sql),
            hypothesis=inp.hypothesis,
            evidence=inp.evidence,
            draft_sql=statements_text(inp.draft_sql),
            feedback=inp.feedback,
            **ctx.schema_vars(
                sql=sql_list(inp.original_sql, inp.draft_sql),
                intent="\n".join([inp.intent, inp.hypothesis, *inp.evidence]),
            ),
            statement_list=is_statement_list(inp.original_sql),
            sandbox=not ctx.active_policy().read_only,
        )
        gen: GeneratedSQL = resp.parsed
        sql, source, why = _clean(gen.sql), "llm", gen.rationale
    elif inp.draft_sql:
        sql, source, why = _clean(inp.draft_sql), "draft", "candidate taken from the evidence on the path"
    elif inp.original_sql:
        sql, source, why = _clean(inp.original_sql), "original", "no better candidate: the original SQL"
    else:
        from actsagent.tools._context import ToolInputError

        raise ToolInputError("generate_sql needs a model, a draft or an original SQL")
    execution = run_sql(RunSqlInput(sql=sql), ctx)
    return GenerateSqlOutput(
        sql=sql,
        source=source,
        rationale=why,
        execution=execution,
        strategy=inp.strategy if source == "llm" else "minimal_edit",
    )


def write_directly(
    ctx: ToolContext, intent: str, original_sql: str | list[str] | None, hypothesis: str = ""
) -> GeneratedSQL:
    """One call with the single-shot prompt (the request, the SQL, the schema; a reading if given): the
    single-shot baseline and the tree's direct-rewrite sibling are the same request."""
    resp = ctx.complete(
        "single_shot",
        role="tools",
        response_model=GeneratedSQL,
        intent=intent,
        original_sql=statements_text(original_sql),
        hypothesis=hypothesis,
        **ctx.schema_vars(sql=original_sql, intent=intent),
        statement_list=is_statement_list(original_sql),
    )
    return resp.parsed


def _clean(sql: str | list[str]) -> str | list[str]:
    """Strip code fences and trailing semicolons models add; keep statement lists as lists."""

    def one(s: str) -> str:
        s = s.strip()
        if s.startswith("```"):
            s = s.split("\n", 1)[1] if "\n" in s else s.strip("`")
            s = s.rsplit("```", 1)[0]
        return s.strip().rstrip(";").strip()

    if isinstance(sql, list):
        stmts = [one(s) for s in sql if s.strip()]
        return stmts[0] if len(stmts) == 1 else stmts
    return one(sql)
