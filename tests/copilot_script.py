"""A scripted model for the copilot's tests: it answers each request by what is asked
(first draft, checks, planner decision, ambiguity report, candidate SQL, judge scores, answer words),
so one script drives a whole tree run of the real agent on a real database."""

from __future__ import annotations

import re
from typing import Any

from actsagent.llm import ScriptedChatModel

ORDERS_BY_STATUS = "SELECT status, count(*) AS orders FROM orders GROUP BY status ORDER BY orders DESC"
PAID_BY_MONTH = (
    "SELECT date_trunc('month', paid_at)::date AS month, sum(amt) AS paid FROM payments GROUP BY 1 ORDER BY 1"
)
REVENUE_ALL = (
    "SELECT p.category, sum(i.qty * i.unit_price) AS revenue FROM order_items i "
    "JOIN product_catalog p USING (prod_id) GROUP BY p.category ORDER BY revenue DESC"
)
REVENUE_PAID = (
    "SELECT p.category, sum(i.qty * i.unit_price) AS revenue FROM order_items i "
    "JOIN product_catalog p USING (prod_id) JOIN orders o USING (order_id) "
    "WHERE o.status = 'PAID' GROUP BY p.category ORDER BY revenue DESC"
)

_PLAN = {
    "reason": "run the draft, then settle the final SQL",
    "plan": {
        "id": "a",
        "tool": "run_sql",
        "description": "run the first draft",
        "children": [{"id": "b", "tool": "generate_sql", "description": "write the final SQL"}],
    },
    "cursor": "a",
}
_PLAN_AMBIGUOUS = {
    "reason": "'revenue' can be read two ways",
    "plan": {
        "id": "a",
        "tool": "detect_ambiguities",
        "description": "find ambiguous phrases",
        "children": [{"id": "b", "tool": "generate_sql", "description": "write the SQL under this reading"}],
    },
    "cursor": "a",
}
_AMBIGUITY = {
    "ambiguities": [
        {
            "phrase": "revenue",
            "settle_with_data": False,
            "question": "Which orders should count as revenue?",
            "interpretations": [
                {"description": "all orders, whatever their status", "sql_hint": "no filter on orders.status"},
                {"description": "only PAID orders", "sql_hint": "orders.status = 'PAID'"},
            ],
        }
    ]
}
_PASS = {
    **{k: {"score": 9, "reason": "fits"} for k in ("columns", "granularity", "joins", "logic", "entailment")},
    "verdict": "correct",
}


def _ask(messages: list[dict]) -> str:
    return "\n".join(m["content"] for m in messages)


def copilot_model(
    sql_for: dict[str, str] | None = None, *, answer: str | None = None, fail_with: BaseException | None = None
) -> ScriptedChatModel:
    """``sql_for`` maps a word of the question to the SQL to write; questions about revenue ask
    the analyst which orders count (all, or only paid ones) before writing it."""
    sql_for = sql_for or {"status": ORDERS_BY_STATUS, "month": PAID_BY_MONTH}

    def pick(text: str) -> str:
        question = text.split("Earlier in this conversation")[0].lower()
        for word, sql in sql_for.items():
            if word in question:
                return sql
        return ORDERS_BY_STATUS

    def fn(messages: list[dict], role: str, response_model: type | None) -> Any:
        if fail_with is not None:
            raise fail_with
        text = _ask(messages)
        name = response_model.__name__ if response_model else None
        revenue = "revenue" in text.split("Schema:")[0].split("Earlier in this conversation")[0].lower()
        if name == "PlannerReply":
            phase = re.search(r"Phase: (\w+)", text)
            phase = phase.group(1) if phase else "initial"
            if phase == "initial":
                return _PLAN_AMBIGUOUS if revenue else _PLAN
            if phase == "select":
                ids = re.findall(r"\bn\d+\b", text)
                return {"reason": "take the first branch", "cursor": ids[-1] if ids else None}
            return {"reason": "nothing else to try", "stop": True}
        if name == "AmbiguityReport":
            return _AMBIGUITY if revenue else {"ambiguities": []}
        if name == "CheckPlan":
            return {"checks": []}
        if name == "GeneratedSQL":
            if revenue:
                # the minimal edit's reading, or the direct rewrite's
                hyp = re.search(r"(?:Branch hypothesis \(assume this reading\)|Read the request this way): (.*)", text)
                paid = bool(hyp and "PAID" in hyp.group(1))
                return {"sql": REVENUE_PAID if paid else REVENUE_ALL, "rationale": "per the reading chosen"}
            return {"sql": pick(text), "rationale": "grouped as asked"}
        if name == "JudgeScores":
            return _PASS
        return answer or "Scripted answer in words."

    return ScriptedChatModel(fn)
