"""The plan tree as the page draws it, kept up to date from the agent's events.

The agent's own tree is the truth when an event carries it (the planner's "plan" event has the
flat planner view, the run's "final" event the whole ``PlanTree``); between those, node start/end
and candidate events move single nodes, so the page sees the tree grow, the branch taken, and
the branches abandoned (refuted by the judge, or skipped) with their reason.
"""

from __future__ import annotations

from typing import Any

from actsagent.web.models import NodeStatus, PlanNode, PlanTree

_STATUS_WORDS: dict[str, NodeStatus] = {
    "pending": "pending", "planned": "pending",
    "running": "running", "started": "running",
    "done": "done", "ok": "done", "success": "done", "passed": "done", "executed": "done",
    "failed": "failed", "error": "failed",
    "refuted": "abandoned", "abandoned": "abandoned", "skipped": "abandoned", "pruned": "abandoned",
    "rolled_back": "abandoned",
    "accepted": "chosen", "chosen": "chosen", "selected": "chosen",
}


def _status(raw: Any, default: NodeStatus) -> NodeStatus:
    if isinstance(raw, bool):
        return "done" if raw else "failed"
    if isinstance(raw, str):
        return _STATUS_WORDS.get(raw.strip().lower(), default)
    return default


def _text(v: Any) -> str | None:
    if isinstance(v, str) and v.strip():
        return v.strip()
    if isinstance(v, dict):
        for key in ("message", "reason", "summary"):
            if isinstance(v.get(key), str) and v[key].strip():
                return v[key].strip()
        reasons = v.get("reasons")
        if isinstance(reasons, list) and reasons:
            return "; ".join(str(r) for r in reasons[:3])
    return None


def _detail(d: dict[str, Any]) -> str | None:
    for key in ("error", "reason", "summary", "result", "verdict"):
        t = _text(d.get(key))
        if t:
            return t[:600]
    return None


class TreeBuilder:
    """Folds agent events into a ``PlanTree`` the page can draw at any moment."""

    def __init__(self) -> None:
        self.tree = PlanTree()

    def snapshot(self) -> PlanTree:
        return self.tree.model_copy(deep=True)

    def changes(self) -> PlanTree | None:
        """The tree if it changed since the last call, else None (events then carry no copy)."""
        dump = self.tree.model_dump_json()
        if dump == getattr(self, "_last", None):
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

    def load(self, raw: Any) -> None:
        """Merge a whole tree: a ``PlanTree`` dump ({nodes: {id: node}, root, cursor}), the planner's
        flat list of nodes (each with parent and children ids), or one nested node."""
        if hasattr(raw, "model_dump"):
            raw = raw.model_dump(mode="json")
        items: list[dict[str, Any]] = []
        if isinstance(raw, list):
            items = [n for n in raw if isinstance(n, dict)]
        elif isinstance(raw, dict):
            nodes = raw.get("nodes")
            if isinstance(nodes, dict):
                items = [dict(v, id=v.get("id", k)) for k, v in nodes.items() if isinstance(v, dict)]
            elif isinstance(nodes, list):
                items = [n for n in nodes if isinstance(n, dict)]
            elif raw.get("id") is not None:
                self._merge_nested(raw, None)
            if raw.get("cursor") is not None:
                self.tree.cursor = str(raw["cursor"])
        if items:  # a whole tree is the truth: nodes it no longer has were dropped (e.g. re-planned)
            keep = {str(n["id"]) for n in items if n.get("id") is not None}
            running = {k for k, v in self.tree.nodes.items() if v.status == "running"}
            self.tree = PlanTree(cursor=self.tree.cursor)
            for n in items:
                if n.get("id") is not None:
                    node = self._merge(n)
                    if node.id in running and node.status == "pending":
                        node.status = "running"
            if self.tree.cursor not in keep:
                self.tree.cursor = None
        for n in items:
            if n.get("id") is None:
                continue
            if n.get("parent") is not None:
                self._link(str(n["parent"]), str(n["id"]))
            for c in n.get("children") or []:
                cid = c.get("id") if isinstance(c, dict) else c
                if cid is not None:
                    self._link(str(n["id"]), str(cid))

    def _merge(self, d: dict[str, Any]) -> PlanNode:
        node = self._node(str(d["id"]))
        label = d.get("description") or d.get("label")
        if isinstance(label, str) and label.strip():
            node.label = label.strip()
        if d.get("tool"):
            node.tool = str(d["tool"])
        if d.get("status") is not None:
            new = _status(d["status"], node.status)
            if not (new == "pending" and node.status == "running"):  # a node_start is newer than the plan
                node.status = new
        verdict = d.get("verdict")
        if d.get("status") == "refuted" and isinstance(verdict, dict):  # why the judge refuted it
            reasons = verdict.get("reasons") or []
            detail = "; ".join(str(r) for r in reasons[:3]) or _text(verdict.get("summary"))
        else:
            detail = _detail(d)
        if detail:
            node.detail = detail[:600]
        elif d.get("status") == "skipped":
            node.detail = "you chose another reading"
        out = d.get("output")
        sql = out.get("sql") if isinstance(out, dict) else None
        if isinstance(sql, str) and sql.strip():
            node.sql = sql
        return node

    def _merge_nested(self, d: dict[str, Any], parent: str | None) -> None:
        node = self._merge(d)
        if parent is not None:
            self._link(parent, node.id)
        for c in d.get("children") or []:
            if isinstance(c, dict) and c.get("id") is not None:
                self._merge_nested(c, node.id)

    def apply(self, etype: str, node_id: str | None, message: str, data: dict[str, Any]) -> None:
        data = data if isinstance(data, dict) else {}
        for holder in (data, data.get("data"), data.get("run")):
            if isinstance(holder, dict) and holder.get("tree") is not None:
                self.load(holder["tree"])
                break
        if node_id is None:
            return
        node = self._node(str(node_id))
        if etype == "node_start":
            node.status = "running"
            self.tree.cursor = node.id
            if data.get("tool"):
                node.tool = str(data["tool"])
            if node.label == node.id and message:
                node.label = message.split(": ", 1)[-1]
        elif etype == "node_end":
            had_verdict = node.status == "abandoned" and node.detail  # the candidate event said why
            node.status = _status(data.get("status"), "done")
            if not (had_verdict and node.status == "abandoned"):
                node.detail = _detail(data) or node.detail
        elif etype == "candidate":
            if isinstance(data.get("sql"), str):
                node.sql = data["sql"]
            ok = data.get("passed", data.get("ok"))
            if ok is False:
                node.status = "abandoned"  # refuted by the judge: the graph rolls back from here
                node.detail = message or node.detail
            elif ok is True:
                node.status = "chosen"
                node.detail = message or node.detail
