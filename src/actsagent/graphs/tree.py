"""The revision-plan tree (ACTS-SQL section 4.2): nodes are tool calls, edges follow-up actions.

The planner writes nodes as JSON (id, description, tool, input, children) plus a cursor; the
executor records each node's typed output (``ToolOutputs``, by tool), verdict, error, timing and tokens on it.
The tree is pydantic data so it can live in LangGraph state, be checkpointed, rendered as text and dumped as JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from actsagent.tools import ToolOutputs, Verdict

ToolName = Literal["run_sql", "inspect_columns", "detect_ambiguities", "split_and_fix", "safeql_refine", "generate_sql"]
# unconfirmed: a candidate the judge approved that no check the original fails, and no second candidate, confirmed
NodeStatus = Literal["pending", "done", "failed", "refuted", "unconfirmed", "accepted", "skipped"]
STATUS_MARK: dict[NodeStatus, str] = {
    "pending": "·",
    "done": "✓",
    "failed": "✗",
    "refuted": "↩",
    "unconfirmed": "~",
    "accepted": "★",
    "skipped": "-",
}


class NodeSpec(BaseModel):
    """What the planner writes for one node; ``children`` nest."""

    id: str | None = None
    description: str = ""
    tool: ToolName
    input: dict[str, Any] = Field(default_factory=dict)
    children: list[NodeSpec] = Field(default_factory=list)


class PlanNode(BaseModel):
    id: str
    parent: str | None = None
    description: str = ""
    tool: ToolName
    input: dict[str, Any] = Field(default_factory=dict)
    children: list[str] = Field(default_factory=list)
    hypothesis: str = ""  # set on a branch created from an ambiguity interpretation
    status: NodeStatus = "pending"
    resolved_input: dict[str, Any] | None = None  # the input the tool actually received
    output: ToolOutputs | None = None
    summary: str = ""  # the line the planner reads about this node's result
    error: str | None = None
    verdict: Verdict | None = None  # generate_sql leaves only
    started_at: float | None = None
    ms: float = 0.0
    llm_ms: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    order: int | None = None  # execution order (1-based)

    @property
    def executed(self) -> bool:
        return self.status != "pending" and self.status != "skipped"


class PlanTree(BaseModel):
    nodes: dict[str, PlanNode] = Field(default_factory=dict)
    root: str | None = None
    cursor: str | None = None
    next_id: int = 0

    # ---- building ---------------------------------------------------------------------------------
    def new_id(self) -> str:
        nid = f"n{self.next_id}"
        self.next_id += 1
        return nid

    def add_spec(
        self,
        spec: NodeSpec,
        parent: str | None,
        *,
        hypothesis: str = "",
        linear: bool = False,
        idmap: dict[str, str] | None = None,
    ) -> str:
        """Add ``spec`` and its children under ``parent``; ids are always reassigned (the planner's
        ids are only references inside its reply). ``linear`` keeps only the first child at each level."""
        nid = self.new_id()
        node = PlanNode(
            id=nid,
            parent=parent,
            description=spec.description or spec.tool,
            tool=spec.tool,
            input=dict(spec.input),
            hypothesis=hypothesis,
        )
        self.nodes[nid] = node
        if idmap is not None and spec.id:
            idmap[spec.id] = nid
        if parent is None:
            self.root = nid
        else:
            self.nodes[parent].children.append(nid)
        for child in spec.children[:1] if linear else spec.children:
            self.add_spec(child, nid, linear=linear, idmap=idmap)
        return nid

    def subtree_spec(self, nid: str) -> NodeSpec:
        """The still-pending subtree at ``nid`` as a spec (to copy planned steps under new branches)."""
        n = self.nodes[nid]
        return NodeSpec(
            description=n.description,
            tool=n.tool,
            input=dict(n.input),
            children=[self.subtree_spec(c) for c in n.children],
        )

    def detach_children(self, nid: str) -> list[NodeSpec]:
        specs = [self.subtree_spec(c) for c in self.nodes[nid].children if self.nodes[c].status == "pending"]
        for c in list(self.nodes[nid].children):
            if self.nodes[c].status == "pending":
                self._drop(c)
                self.nodes[nid].children.remove(c)
        return specs

    def _drop(self, nid: str) -> None:
        for c in self.nodes[nid].children:
            self._drop(c)
        del self.nodes[nid]

    # ---- reading ----------------------------------------------------------------------------------
    def path(self, nid: str) -> list[PlanNode]:
        out = []
        cur: str | None = nid
        while cur is not None:
            out.append(self.nodes[cur])
            cur = self.nodes[cur].parent
        return list(reversed(out))

    def pending_children(self, nid: str) -> list[PlanNode]:
        return [self.nodes[c] for c in self.nodes[nid].children if self.nodes[c].status == "pending"]

    def hypothesis_of(self, nid: str) -> str:
        return " / ".join(n.hypothesis for n in self.path(nid) if n.hypothesis)

    def executed(self) -> list[PlanNode]:
        return sorted((n for n in self.nodes.values() if n.order is not None), key=lambda n: n.order or 0)

    def walk(self) -> list[tuple[int, PlanNode]]:
        out: list[tuple[int, PlanNode]] = []

        def visit(nid: str, depth: int) -> None:
            out.append((depth, self.nodes[nid]))
            for c in self.nodes[nid].children:
                visit(c, depth + 1)

        if self.root:
            visit(self.root, 0)
        return out

    def for_planner(self) -> list[dict[str, Any]]:
        """The tree as the planner sees it: flat nodes with status and result summaries."""
        return [
            {
                "id": n.id,
                "parent": n.parent,
                "depth": d,
                "tool": n.tool,
                "description": n.description,
                "input": n.input,
                "hypothesis": n.hypothesis,
                "status": n.status,
                "result": n.summary[:1500],
                "error": n.error,
                "children": n.children,
            }
            for d, n in self.walk()
        ]

    def render_text(self) -> str:
        """An indented text tree: status, tool, description, timing, tokens, result line."""
        lines = []
        for depth, n in self.walk():
            pad = "  " * depth
            cur = " <- cursor" if n.id == self.cursor else ""
            stats = ""
            if n.executed:
                stats = f" [{n.ms:.0f} ms"
                if n.llm_calls:
                    stats += f", {n.llm_calls} LLM call(s), {n.prompt_tokens + n.completion_tokens} tok"
                stats += "]"
            hyp = f" {{hypothesis: {n.hypothesis}}}" if n.hypothesis else ""
            lines.append(f"{pad}{STATUS_MARK[n.status]} {n.id} {n.tool}: {n.description}{hyp}{stats}{cur}")
            detail = n.error or n.summary
            if detail and n.executed:
                for dl in detail.splitlines()[:4]:
                    lines.append(f"{pad}    {dl[:160]}")
            if n.verdict:
                lines.append(f"{pad}    judge: {n.verdict.summary()[:160]}")
                lines += [f"{pad}    check {c.line()}"[: 170 + len(pad)] for c in n.verdict.checks]
        return "\n".join(lines)
