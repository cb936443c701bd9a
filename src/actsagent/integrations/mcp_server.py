"""actsagent as an MCP server (the official ``mcp`` SDK): guarded SQL for any MCP client.

Tools: ``list_schema``, ``run_sql`` (strict read-only guard; rows or the typed error as structured
content), ``inspect_columns``, ``refine_sql`` (SafeQL, no LLM), ``repair_sql`` (the plan-tree agent;
LLM-free fallback without a model) and, with a model, ``ask``. Agent runs report progress as the
tree grows; a run that needs a clarification returns ``status="paused"`` with the question and
options, and the client calls the same tool again with ``thread_id`` and ``answer``.
Resources: ``actsagent://schema`` and ``actsagent://tables/{table}/sample``.

``serve_http`` binds 127.0.0.1 unless told otherwise; the CLI refuses a non-local bind without a
token, and ``TokenGate`` checks it on every HTTP request.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from actsagent import __version__
from actsagent.db import Database, DbError, QueryResult
from actsagent.errors import ActsagentError
from actsagent.graphs.models import AgentEvent, AgentRun, Clarification
from actsagent.integrations.workspace import Workspace
from actsagent.schema.model import SchemaInfo
from actsagent.tools import (
    InspectColumnsInput,
    InspectColumnsOutput,
    RunSqlInput,
    RunSqlOutput,
    SafeqlRefineInput,
    SafeqlRefineOutput,
    ToolInputError,
)
from actsagent.tools._sqltext import statements_text

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
_PROGRESS_EVENTS = {"plan", "node_start", "node_end", "candidate", "clarify"}
_INSTRUCTIONS = (
    "Read-only access to one database through actsagent's SQL guard. Read the schema first "
    "(list_schema or the actsagent://schema resource); run_sql returns rows or a typed error; "
    "refine_sql and repair_sql fix failing queries. A paused repair_sql/ask result asks a question: "
    "call the same tool again with its thread_id and your answer."
)


class AlternativeReading(BaseModel):
    """Another reading left standing beside an unverified answer: it runs cleanly and returns other rows."""

    node: str
    sql: str
    written_as: str  # the plan node's description: how it was written, or the reading it follows


class AgentReport(BaseModel):
    """A finished or paused agent run, compact: what a client shows or acts on."""

    status: str  # solved, best_effort, failed or paused
    final_sql: str | None = None
    result: QueryResult | DbError | None = Field(default=None, discriminator="ok")
    verdict: str | None = None
    clarification: Clarification | None = None
    thread_id: str | None = None
    next_step: str | None = None
    plan_tree: str = ""
    notes: list[str] = Field(default_factory=list)
    alternatives: list[AlternativeReading] = Field(default_factory=list)
    llm_calls: int = 0
    tokens: int = 0

    @classmethod
    def of(cls, run: AgentRun, tool: str) -> AgentReport:
        step = None
        if run.status == "paused" and run.pending_clarification is not None:
            step = (
                f"call {tool} again with thread_id={run.thread_id!r} and answer= one option's number or your own words"
            )
        verdict = run.verdict.summary() if run.verdict else None
        return cls(
            status=run.status,
            final_sql=run.final_sql,
            result=run.result,
            verdict=verdict,
            clarification=run.pending_clarification,
            thread_id=run.thread_id,
            next_step=step,
            plan_tree=run.tree.render_text(),
            notes=run.notes,
            alternatives=_alternatives(run),
            llm_calls=run.usage.llm_calls,
            tokens=run.usage.prompt_tokens + run.usage.completion_tokens,
        )

    def text(self) -> str:
        if self.status == "paused" and self.clarification is not None:
            opts = "\n".join(f"  {i}. {o}" for i, o in enumerate(self.clarification.options, 1))
            return f"question: {self.clarification.question}\n{opts}\n{self.next_step}"
        lines = [f"status: {self.status}"]
        if self.final_sql:
            lines.append(f"final SQL: {self.final_sql}")
        if isinstance(self.result, DbError):
            lines.append("ERROR " + self.result.describe())
        elif self.result is not None:
            lines.append(f"{self.result.row_count} row(s); columns: {', '.join(c.name for c in self.result.columns)}")
        return "\n".join(lines + [f"note: {n}" for n in self.notes])


def _alternatives(run: AgentRun) -> list[AlternativeReading]:
    out = []
    for nid in run.alternatives:
        node = run.tree.nodes.get(nid)
        sql = node.output.produced_sql() if node is not None and node.output is not None else None
        if node is not None and sql:
            out.append(
                AlternativeReading(
                    node=nid,
                    sql=sql if isinstance(sql, str) else statements_text(sql),
                    written_as=node.hypothesis or node.description,
                )
            )
    return out


def build_server(db: Database, *, model: Any = None, max_rows: int = 50, max_nodes: int = 24) -> MCPServer:
    """The MCP server over ``db``; ``model`` (a ChatModel or LangChain chat model) enables ``ask`` and the
    agent's LLM steps, None keeps the agent on its LLM-free path."""
    from actsagent.llm.langchain_model import as_chat_model

    model = as_chat_model(model)
    ws = Workspace(db=db, model=model, max_rows=max_rows)
    server = MCPServer("actsagent", instructions=_INSTRUCTIONS, version=__version__, log_level="WARNING")

    @server.tool(annotations=READ_ONLY)
    def list_schema(tables: list[str] | None = None) -> SchemaInfo:
        """Tables, columns with types, keys and sample values of the database (only ``tables`` when given)."""
        return _tool_call(lambda: ws.schema(tables).model_copy(update={"reserved_words": []}))

    @server.tool(annotations=READ_ONLY)
    def run_sql(sql: str, max_rows: int = 50) -> Annotated[CallToolResult, RunSqlOutput]:
        """Run one read-only SQL query through the guard: rows, or the typed error (guard refusal or database
        error) as structured content."""
        out = _tool_call(lambda: ws.call("run_sql", RunSqlInput(sql=sql, max_rows=max_rows)))
        return _structured(out, out.summary(), error=not out.ok)

    @server.tool(annotations=READ_ONLY)
    def inspect_columns(table: str, columns: list[str] | None = None) -> InspectColumnsOutput:
        """Profile table.column values: samples, frequent values, null share, min/max and value formats."""
        return _tool_call(lambda: ws.call("inspect_columns", InspectColumnsInput(table=table, columns=columns or [])))

    @server.tool(annotations=READ_ONLY)
    def refine_sql(sql: str) -> SafeqlRefineOutput:
        """Repair a failing or empty query without an LLM (SafeQL: small edits to names, joins and literal values
        until it runs); every candidate passes the guard first."""
        return _tool_call(lambda: ws.call("safeql_refine", SafeqlRefineInput(sql=sql)))

    async def run_or_resume(
        ctx: Context | None,
        tool: str,
        start: Callable[[Callable[[AgentEvent], None]], AgentRun],
        thread_id: str | None,
        answer: str | None,
    ) -> CallToolResult:
        """A new agent run (``start``), or, with an ``answer``, the paused run ``thread_id`` continued."""
        from actsagent import agent

        if answer is not None:
            tid = _need(thread_id)
            return await _agent_call(
                ctx, tool, lambda ev: agent.resume(tid, answer, ws.db, model=ws.model, on_event=ev)
            )
        return await _agent_call(ctx, tool, start)

    @server.tool(annotations=READ_ONLY)
    async def repair_sql(
        intent: str = "",
        sql: str | None = None,
        thread_id: str | None = None,
        answer: str | None = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, AgentReport]:
        """Correct ``sql`` so it does what ``intent`` says, with the plan-tree agent (progress is reported as the
        tree grows). A ``paused`` result asks a question: call again with its ``thread_id`` and ``answer`` (the
        intent and SQL are then not needed)."""
        from actsagent import agent

        def start(ev: Callable[[AgentEvent], None]) -> AgentRun:
            budget = _budget(max_nodes)
            return agent.repair(
                intent, sql, ws.db, model=ws.model, interactive=True, thread_id=thread_id, on_event=ev, budget=budget
            )

        return await run_or_resume(ctx, "repair_sql", start, thread_id, answer)

    if model is not None:

        @server.tool(annotations=READ_ONLY)
        async def ask(
            question: str = "", thread_id: str | None = None, answer: str | None = None, ctx: Context | None = None
        ) -> Annotated[CallToolResult, AgentReport]:
            """Write SQL for a question about the data and check it with the plan-tree agent. A ``paused``
            result asks a question: call again with its ``thread_id`` and ``answer``."""
            from actsagent import agent

            def start(ev: Callable[[AgentEvent], None]) -> AgentRun:
                budget = _budget(max_nodes)
                return agent.ask(
                    question, ws.db, model=ws.model, interactive=True, thread_id=thread_id, on_event=ev, budget=budget
                )

            return await run_or_resume(ctx, "ask", start, thread_id, answer)

    @server.resource(
        "actsagent://schema",
        name="schema",
        mime_type="text/plain",
        description="The database schema as the agent's prompts show it",
    )
    def schema_resource() -> str:
        return ws.render_schema()

    @server.resource(
        "actsagent://tables/{table}/sample",
        name="table_sample",
        mime_type="application/json",
        description="The first rows of a table, read through the guard",
    )
    def table_sample(table: str) -> str:
        try:
            res = ws.sample(table)
        except ToolInputError as e:
            raise ResourceError(str(e)) from e
        return res.model_dump_json()

    return server


def http_app(server: MCPServer, *, host: str = "127.0.0.1", token: str | None = None) -> Any:
    """The streamable-HTTP ASGI app at ``/mcp``: DNS-rebinding protection on a loopback host (the SDK's),
    and ``token``, when set, required on every request."""
    app = server.streamable_http_app(host=host)
    if token:
        app.add_middleware(TokenGate, token=token)
    return app


class TokenGate:
    """ASGI middleware: HTTP requests need ``Authorization: Bearer <token>`` or ``X-Actsagent-Token``."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            from starlette.responses import JSONResponse

            response = JSONResponse(
                {"error": "this MCP server needs its access token (Authorization: Bearer ...)"},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope: dict) -> bool:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        given = headers.get("x-actsagent-token", "")
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        return secrets.compare_digest(given.encode(), self.token)


# ---------------------------------------------------------------------------------------------------


def _tool_call(fn: Callable[[], Any]) -> Any:
    """A bad argument or an unknown name is the caller's mistake: a tool error it can read, not a crash."""
    try:
        return fn()
    except ToolInputError as e:
        raise ToolError(str(e)) from e
    except ValidationError as e:
        raise ToolError(
            "; ".join(f"{'.'.join(map(str, x['loc'])) or 'input'}: {x['msg']}" for x in e.errors(include_url=False))
        ) from e


def _structured(out: BaseModel, text: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=json.loads(out.model_dump_json()),
        is_error=error,
    )


def _need(thread_id: str | None) -> str:
    if not thread_id:
        raise ToolError("an answer needs the thread_id of the paused run it answers")
    return thread_id


def _budget(max_nodes: int) -> Any:
    from actsagent.graphs.models import Budget

    return Budget(max_nodes=max_nodes)


async def _agent_call(
    ctx: Context | None, tool: str, call: Callable[[Callable[[AgentEvent], None]], AgentRun]
) -> CallToolResult:
    """Run the agent in a worker thread; each plan/node event becomes a progress notification."""
    steps = 0

    def on_event(ev: AgentEvent) -> None:
        nonlocal steps
        if ctx is None or ev.type not in _PROGRESS_EVENTS:
            return
        steps += 1
        message = f"{ev.node_id + ' ' if ev.node_id else ''}{ev.message}"[:300]
        anyio.from_thread.run(ctx.report_progress, steps, None, message)

    try:
        run = await anyio.to_thread.run_sync(lambda: call(on_event))
    except ActsagentError as e:  # a run that cannot start (empty intent, no such thread, not paused): say so
        raise ToolError(str(e)) from e
    report = AgentReport.of(run, tool)
    return _structured(report, report.text(), error=run.status == "failed")
