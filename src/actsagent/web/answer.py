"""A short answer in words: the LLM's when one is configured, else a rule-based summary of the rows.

Either way the page shows the SQL and the rows beside it, so a person can check the words.
"""

from __future__ import annotations

import logging
from typing import Any

from actsagent.errors import ActsagentError
from actsagent.web.models import Answer, ChartSpec, ResultView
from actsagent.web.results import summarize

log = logging.getLogger("actsagent.web")


class Answerer:
    def __init__(self, model: Any = None, *, max_rows: int = 20) -> None:
        self.model = model
        self.max_rows = max_rows

    def answer(self, question: str, sql: str, view: ResultView, chart: ChartSpec | None) -> Answer:
        rule = summarize(view, chart)
        if self.model is None or not question.strip():
            return Answer(text=rule, chart=chart, by="rule")
        from actsagent.prompts import render

        messages = render(
            "answer",
            question=question,
            sql=sql,
            columns=view.columns,
            rows=[["NULL" if v is None else v for v in r] for r in view.rows[: self.max_rows]],
            row_count=view.row_count,
            truncated=view.more_rows,
        )
        try:
            reply = self.model.complete(messages, role="tools")
        except ActsagentError as e:  # the rows are there; words from the rule instead of failing the turn
            log.warning("answer wording failed: %s", e)
            return Answer(text=rule, chart=chart, by="rule")
        text = (getattr(reply, "text", None) or "").strip()
        return Answer(text=text or rule, chart=chart, by="llm" if text else "rule")
