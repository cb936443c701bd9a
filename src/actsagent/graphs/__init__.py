"""The agent's graphs: the tree-structured debugging graph (ACTS-SQL Algorithm 1) and its variants.

The names below are loaded on first use: importing a submodule (``actsagent.graphs.tree``) does not start
LangGraph, which the command line and the copilot's models need only when a graph runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from actsagent.graphs.models import AgentEvent, AgentRun, Budget, Clarification, PlannerReply, RunUsage
    from actsagent.graphs.state import TreeState, initial_state
    from actsagent.graphs.tree import NodeSpec, PlanNode, PlanTree
    from actsagent.graphs.tree_graph import build_tree_graph, fallback_plan

__all__ = [
    "AgentEvent",
    "AgentRun",
    "Budget",
    "Clarification",
    "NodeSpec",
    "PlanNode",
    "PlanTree",
    "PlannerReply",
    "RunUsage",
    "TreeState",
    "build_tree_graph",
    "fallback_plan",
    "initial_state",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from actsagent.graphs import models, state, tree, tree_graph

    for module in (models, state, tree, tree_graph):
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(name)
