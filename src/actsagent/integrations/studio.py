"""The repair graph for LangGraph Studio and ``langgraph dev`` (``langgraph.json`` points at ``make_graph``).

The served graph is the agent's own plan-tree graph as a subgraph behind one ``prepare`` step that
turns Studio's input (``intent``, ``original_sql``) into the run's initial state. It is compiled
without a checkpointer: the LangGraph server attaches its own, which the subgraph shares, so the
clarification ``interrupt`` pauses a thread and Studio's resume continues it. Runs are interactive.

The database is ``configurable.db`` of the run (a URL, SQLite file or embedded name), else
``DATABASE_URL``, else the embedded demo; the model is the configured one (``OPENAI_*`` /
``ACTSAGENT_MODEL``), else the agent's LLM-free path.
"""

from __future__ import annotations

import threading
from typing import Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict  # pydantic (Studio's input form) needs it on Python < 3.12

from actsagent.db import Database
from actsagent.errors import UserError
from actsagent.graphs.models import Budget, Mode
from actsagent.graphs.runtime import Runtime
from actsagent.graphs.state import TreeState, initial_state
from actsagent.graphs.tree_graph import build_tree_graph
from actsagent.tools import ToolContext


class RepairInput(TypedDict, total=False):
    """What a Studio user types: the intent and the faulty SQL (empty: write it from the intent)."""

    intent: str
    original_sql: str | None
    mode: str  # "tree" (default) or "linear"


def build_graph(
    db: Database, model: Any = None, *, interactive: bool = True, budget: Budget | None = None, checkpointer: Any = None
) -> Any:
    """The servable repair graph over ``db``; ``model`` as ``repair`` takes it (None: the configured one)."""
    from actsagent.llm import get_chat_model
    from actsagent.llm.langchain_model import as_chat_model

    model = as_chat_model(model) if model is not None else get_chat_model()
    rt = Runtime(ctx=ToolContext(db=db, model=model), budget=budget or Budget(), interactive=interactive)
    g = StateGraph(TreeState, input_schema=RepairInput)
    g.add_node("prepare", _prepare)
    g.add_node("repair", build_tree_graph(rt))  # no checkpointer of its own: it shares the parent's
    g.add_edge(START, "prepare")
    g.add_edge("prepare", "repair")
    g.add_edge("repair", END)
    return g.compile(checkpointer=checkpointer, name="actsagent-repair")


def make_graph(config: dict | None = None) -> Any:
    """The factory ``langgraph.json`` names: one graph per run, over the run's database."""
    target = ((config or {}).get("configurable") or {}).get("db")
    return build_graph(_database(target))


def _prepare(state: RepairInput) -> TreeState:
    """A new input starts a new run (a resumed or continued run re-enters the subgraph, not this step)."""
    intent = (state.get("intent") or "").strip()
    if not intent:
        raise UserError("the input needs an intent: what the SQL should do")
    sql = (state.get("original_sql") or "").strip() or None
    asked = state.get("mode") or "tree"
    if asked not in ("tree", "linear"):
        raise UserError(f"mode must be tree or linear, not {asked!r}")
    mode: Mode = "linear" if asked == "linear" else "tree"
    return initial_state(intent, sql, mode)


_open: dict[str | None, Database] = {}
_lock = threading.Lock()


def _database(target: str | None) -> Database:
    """One open database per target for the server's life (each has its own connection pool)."""
    from actsagent.demo import open_target

    with _lock:
        if target not in _open:
            _open[target] = open_target(target)
        return _open[target]
