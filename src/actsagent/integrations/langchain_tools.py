"""actsagent's tools as LangChain ``BaseTool``s: a guarded replacement for an unguarded SQL toolkit.

    from actsagent.integrations.langchain_tools import ActsagentToolkit
    tools = ActsagentToolkit(db=open_database(url)).get_tools()
    agent = create_react_agent(chat_model, tools)

Each tool takes the agent's own pydantic input model as ``args_schema`` and runs the agent's
tool under the strict read-only guard: a statement the guard forbids comes back as a typed
``guard_rejected`` error, never reaching the database. The content is the text a model reads;
the artifact (``ToolMessage.artifact``) is the typed output (``RunSqlOutput``, ...).
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.tools import BaseTool, BaseToolkit, ToolException
from pydantic import ConfigDict, Field

from actsagent.db import Database
from actsagent.integrations.workspace import SchemaRequest, Workspace
from actsagent.tools import TOOLS, ToolInputError

_GUARD_NOTE = " Read-only: every statement passes actsagent's SQL guard; forbidden ones return a typed error."
# name -> (the agent's tool, description)
EXPOSED: dict[str, tuple[str, str]] = {
    "sql_query": (
        "run_sql",
        "Run a read-only SQL query (or a list of them) and see rows or the typed error." + _GUARD_NOTE,
    ),
    "inspect_columns": (
        "inspect_columns",
        "Profile table.column values: samples, most frequent values, null share, "
        "min/max and value formats, so predicates match the stored data." + _GUARD_NOTE,
    ),
    "refine_sql": (
        "safeql_refine",
        "Repair a failing or empty query without an LLM: a search over small edits "
        "(unknown names, joins, literal values) until it runs." + _GUARD_NOTE,
    ),
}


class ActsagentTool(BaseTool):
    """One of the agent's tools (``tool``: a key of ``actsagent.tools.TOOLS``) over a workspace."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    workspace: Workspace = Field(exclude=True)
    tool: str
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: bool = True
    handle_validation_error: bool = True

    def _run(self, *args: Any, run_manager: Any = None, **kwargs: Any) -> tuple[str, Any]:
        spec = TOOLS[self.tool]
        try:
            out = self.workspace.call(self.tool, spec.input_model(**kwargs))
        except ToolInputError as e:  # a name that does not exist: the calling model's mistake, shown to it
            raise ToolException(str(e)) from e
        return (out.summary() if hasattr(out, "summary") else ""), out  # every tool output has one


class SchemaTool(BaseTool):
    """The schema listing (tables, columns, keys, sample values) a model needs before writing SQL."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "list_schema"
    description: str = (
        "List the database schema: tables, columns with types, keys and sample values. "
        "Pass table names to list only those."
    )
    args_schema: type = SchemaRequest
    workspace: Workspace = Field(exclude=True)
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: bool = True
    handle_validation_error: bool = True

    def _run(self, tables: list[str] | None = None, run_manager: Any = None) -> tuple[str, Any]:
        try:
            info = self.workspace.schema(tables)
        except ToolInputError as e:
            raise ToolException(str(e)) from e
        return info.render(), info


class ActsagentToolkit(BaseToolkit):
    """The schema listing, guarded SQL, column inspection and SafeQL refinement over one database."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    db: Database
    max_rows: int = Field(default=50, gt=0, le=1000)

    def get_tools(self) -> list[BaseTool]:
        return actsagent_tools(self.db, max_rows=self.max_rows)


def actsagent_tools(db: Database, *, max_rows: int = 50) -> list[BaseTool]:
    ws = Workspace(db=db, max_rows=max_rows)
    return [
        SchemaTool(workspace=ws),
        *(
            ActsagentTool(name=name, description=desc, args_schema=TOOLS[tool].input_model, tool=tool, workspace=ws)
            for name, (tool, desc) in EXPOSED.items()
        ),
    ]
