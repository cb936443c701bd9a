"""The plan tree as the page draws it, kept up to date from the agent's events.

The agent's own tree is the truth when an event carries it (the planner's "plan" event, the run's
"final" event; ``agent_bridge`` turns both into page nodes); between those, node start/end and
candidate events move single nodes, so the page sees the tree grow, the branch taken, and the
branches abandoned (refuted by the judge, or skipped) with their reason.
"""

from __future__ import annotations

from actsagent.web.agent_bridge import PAGE_STATUS, BridgeEvent
from actsagent.web.models import PlanNode, PlanTree


class TreeBuilder:
    """Folds agent events into a ``PlanTree`` the page can draw at any moment."""

    def __init__(self) -> None:
        self.tree = PlanTree()
        self._last: str | None = None

    def snapshot(self) -> PlanTree:
        return self.tree.model_copy(deep=True)

    def changes(self) -> PlanTree | None:
        """The tree if it changed since the last call, else None (events then carry no copy)."""
        dump = self.tree.model_dump_json()
        if dump == self._last:
            return None
        self._last = dump
        return self.snapshot()

    def _node(self, nid: str) -> PlanNode:
        node = self.tree.nodes.get(nid)
        if node is None:
            node = PlanNode(id=nid, label=nid)
            self.tree.nodes[nid] = node
            self.tree.roots.append(nid)
        return node

    def _link(self, parent: str, child: str) -> None:
        if parent == child:
            return
        p, c = self._node(parent), self._node(child)
        c.parent = parent
        if child in self.tree.roots:
            self.tree.roots.remove(child)
        if child not in p.children:
            p.children.append(child)

    def load(self, nodes: list[PlanNode], cursor: str | None = None) -> None:
        """Take the agent's whole tree: nodes it no longer has were dropped (e.g. re-planned); a node already
        started stays running until its end event, which is newer than any plan."""
        running = {k for k, v in self.tree.nodes.items() if v.status == "running"}
        cursor = cursor if cursor is not None else self.tree.cursor
        self.tree = PlanTree(cursor=cursor if cursor in {n.id for n in nodes} else None)
        for n in nodes:
            node = self._node(n.id)
            node.label, node.tool, node.detail, node.sql = n.label, n.tool, n.detail, n.sql
            node.status = "running" if n.id in running and n.status == "pending" else n.status
        for n in nodes:
            if n.parent is not None:
                self._link(n.parent, n.id)
            for c in n.children:
                self._link(n.id, c)

    def apply(self, ev: BridgeEvent) -> None:
        if ev.tree is not None:
            self.load(ev.tree, ev.cursor)
        if ev.node_id is None:
            return
        node, data = self._node(ev.node_id), ev.data
        if ev.type == "node_start":
            node.status = "running"
            self.tree.cursor = node.id
            node.tool = data.get("tool") or node.tool
            if node.label == node.id and ev.message:
                node.label = ev.message.split(": ", 1)[-1]
        elif ev.type == "node_end":
            had_verdict = node.status == "abandoned" and node.detail  # the candidate event said why
            node.status = PAGE_STATUS[data["status"]]
            summary = str(data.get("summary") or "").strip()
            if summary and not (had_verdict and node.status == "abandoned"):
                node.detail = summary[:600]
        elif ev.type == "candidate":
            if isinstance(data.get("sql"), str):
                node.sql = data["sql"]
            if data["passed"] is not None:  # None: neither chosen nor refuted (yet)
                node.status = "chosen" if data["passed"] else "abandoned"  # refuted: the graph rolls back from here
                node.detail = ev.message or node.detail
