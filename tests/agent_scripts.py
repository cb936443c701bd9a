"""Scripted-model helpers for the agent tests: callables that answer from the message history.

Each helper reads which request it got from ``response_model`` (CheckPlan, PlannerReply, AmbiguityReport,
GeneratedSQL, JudgeScores, ComparisonReply, RepairedSQL) and the rendered prompt text, like a fake model would.
"""

from __future__ import annotations

import json
import re
from typing import Any


def user_text(messages: list[dict]) -> str:
    return "\n".join(m["content"] for m in messages if m["role"] == "user")


def judged_sql(messages: list[dict]) -> str:
    """The SQL a judge prompt judges (the request and the user's faulty SQL are shown beside it)."""
    text = user_text(messages)
    return text.split("SQL to judge:", 1)[-1].split("\nResult:", 1)[0]


def phase_of(messages: list[dict]) -> str:
    m = re.search(r"Phase: (\w+)", user_text(messages))
    return m.group(1) if m else ""


def options_of(messages: list[dict]) -> list[str]:
    m = re.search(r'set "cursor" to one of (\[.*?\])', user_text(messages))
    return json.loads(m.group(1)) if m else []


def failed_of(messages: list[dict]) -> str | None:
    m = re.search(r"Node (n\d+) failed or its candidate was refuted", user_text(messages))
    return m.group(1) if m else None


def scores(n: int, reason: str = "", entail: int | None = None) -> dict[str, Any]:
    s = {"score": n, "reason": reason}
    e = entail if entail is not None else n
    return {
        "columns": s,
        "granularity": s,
        "joins": s,
        "logic": s,
        "entailment": {"score": e, "reason": reason},
        "issues": [],
        "verdict": "correct" if min(n, e) >= 6 else "wrong",
    }


NO_CHECKS: dict[str, Any] = {"checks": []}  # a check writer that finds nothing checkable in the request


def is_rewrite(messages: list[dict]) -> bool:
    """The direct-rewrite sibling's request (the single-shot prompt), not the minimal edit's."""
    return "SQL with an issue:" in user_text(messages)


def plan_nodes(messages: list[dict]) -> list[dict[str, Any]]:
    """The plan tree the planner prompt shows (flat nodes with id, status, hypothesis, ...)."""
    m = re.search(r"Current plan \(executed nodes carry their result; cursor: [^)]*\):\n(\[.*\])", user_text(messages))
    return json.loads(m.group(1)) if m else []
