"""Size caps for what the copilot keeps and sends: one query may return 50 MB and a database error may
quote a 100 MB literal, but a stored turn, an SSE event and a result preview stay small.

Cutting is done in one pass with a character budget, so a huge value is never copied whole.
"""

from __future__ import annotations

from typing import Any, overload

from pydantic import TypeAdapter, ValidationError

from actsagent.graphs.tree import PlanTree
from actsagent.tools import ToolOutputs
from actsagent.tools._results import ToolOutput

MAX_BODY_BYTES = 1024 * 1024  # default request-body limit of `actsagent serve`
MAX_PREVIEW_ROWS = 500  # rows a result preview keeps
MAX_PREVIEW_BYTES = 256 * 1024  # JSON bytes of a result preview's rows
MAX_CELL_CHARS = 2_000  # characters of one value in a preview (longer text or JSON is cut)
MAX_TEXT_CHARS = 100_000  # one string in an event's data (the longest SQL a request may send)
MAX_MESSAGE_CHARS = 20_000  # an event's message (the longest question a request may send)
MAX_EVENT_CHARS = 1_000_000  # all strings of one event's data together
MAX_ITEMS = 1_000  # entries of one list or dict in an event's data
MAX_DEPTH = 12
MAX_NODE_CHARS = 200_000  # all strings of one plan node's input, or of its output
_OUTPUTS: TypeAdapter[Any] = TypeAdapter(ToolOutputs)


@overload
def cut(text: str, limit: int) -> str: ...
@overload
def cut(text: None, limit: int) -> None: ...
def cut(text: str | None, limit: int) -> str | None:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters cut]"


def bounded(
    value: Any,
    *,
    max_text: int = MAX_TEXT_CHARS,
    budget: int = MAX_EVENT_CHARS,
    max_items: int = MAX_ITEMS,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """A JSON-safe copy of ``value`` whose strings together hold at most about ``budget`` characters.

    Strings past ``max_text`` are cut, lists and dicts past ``max_items`` end with a note of how many
    entries were left out, and once the budget is spent the rest is replaced by such notes.
    """
    left = budget

    def text(s: str, limit: int) -> str:
        nonlocal left
        keep = max(0, min(limit, left))
        left -= min(len(s), keep) + 1
        return s if len(s) <= keep else cut(s, keep)

    def walk(v: Any, depth: int) -> Any:
        nonlocal left
        if v is None or isinstance(v, (bool, int, float)):
            left -= 8
            return v
        if isinstance(v, str):
            return text(v, max_text)
        if not isinstance(v, (dict, list, tuple)):
            return text(str(v), max_text)
        if depth >= max_depth:
            return "… [nested too deep; cut]"
        is_dict = isinstance(v, dict)
        pairs = iter(v.items()) if isinstance(v, dict) else enumerate(v)
        keys: list[str] = []
        vals: list[Any] = []
        for i, (k, x) in enumerate(pairs):
            if i >= max_items or left <= 0:
                keys.append("…")
                vals.append(f"… [{len(v) - i:,} more entries cut]")
                break
            keys.append(text(str(k), 200) if is_dict else "")
            vals.append(walk(x, depth + 1))
        return dict(zip(keys, vals, strict=True)) if is_dict else vals

    return walk(value, 0)


def bounded_tree(tree: PlanTree | None) -> PlanTree | None:
    """The agent's plan tree with each node's texts, inputs and outputs cut (the agent's budgets bound how many
    nodes there are)."""
    if tree is None:
        return None
    nodes = {
        k: n.model_copy(
            update={
                "description": cut(n.description, 1_000),
                "hypothesis": cut(n.hypothesis, 1_000),
                "summary": cut(n.summary, 4_000),
                "error": cut(n.error, 4_000),
                "input": bounded(n.input, budget=MAX_NODE_CHARS),
                "resolved_input": bounded(n.resolved_input, budget=MAX_NODE_CHARS),
                "output": bounded_output(n.output),
            }
        )
        for k, n in tree.nodes.items()
    }
    return tree.model_copy(update={"nodes": nodes})


def bounded_output(out: ToolOutput | None) -> ToolOutput | None:
    """A node's typed output with its strings cut (``bounded`` with lists left whole: an output's lists are
    already bounded by the tools, rows by ``max_rows``); None if what is left no longer validates."""
    if out is None:
        return None
    cut_dump = bounded(out.model_dump(mode="json"), budget=MAX_NODE_CHARS, max_items=10**9)
    try:
        return _OUTPUTS.validate_python(cut_dump)
    except ValidationError:
        return None
