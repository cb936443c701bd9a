"""The agent's graphs: the tree-structured debugging graph (ACTS-SQL Algorithm 1) and its variants."""

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
