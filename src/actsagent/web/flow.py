"""One turn of the copilot, transport-free: the web server and the terminal chat both drive it.

A turn yields ``Step``s: the agent's events (with the plan tree as it stands), then the final
SQL, the rows, a short answer in words and a chart when one fits, then ``done`` with the turn's
status. Failures of the database, the guard or the LLM become ``error`` steps with a plain
message; no exception leaves a turn.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Generator, Iterator, Sequence
from typing import Any

from pydantic import BaseModel, Field

from actsagent.db.admin import redact
from actsagent.db.base import Database
from actsagent.db.results import DbError, ErrorClass, QueryResult
from actsagent.demo import open_target
from actsagent.errors import ActsagentError, DatabaseUnavailable, LLMUnavailable
from actsagent.graphs.models import AgentEvent, NodeEvent, PlanEvent
from actsagent.graphs.tree import PlanTree
from actsagent.web.agent_bridge import AgentBridge, FinalView, final_view
from actsagent.web.answer import Answerer
from actsagent.web.limits import cut
from actsagent.web.models import ResultView, StepType, Turn, TurnStatus
from actsagent.web.results import chart_for, view_of

log = logging.getLogger("actsagent.web")

NO_LLM_NOTE = (
    "No LLM is configured: the agent runs its LLM-free path (run the SQL, SafeQL refinement on "
    "errors and empty results, clause localisation). It can repair and run SQL you paste, but it "
    "cannot write SQL from a question. Set OPENAI_API_KEY (and OPENAI_BASE_URL) to enable that."
)


class Step(BaseModel):
    type: StepType
    node_id: str | None = None
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    tree: PlanTree | None = None


class DatabaseHandle:
    """Opens the database on first use and again after it was down, so a restart of the
    database does not need a restart of the copilot."""

    def __init__(self, target: Database | str | None) -> None:
        self._target = target
        self._db: Database | None = target if isinstance(target, Database) else None
        self._lock = threading.Lock()

    def get(self) -> Database:
        with self._lock:
            if self._db is None:
                self._db = open_target(self._target if isinstance(self._target, str) else None)
            return self._db

    @property
    def label(self) -> str:
        if self._db is not None:
            return f"{self._db.name} ({self._db.dialect})"
        if isinstance(self._target, str):
            return redact(self._target)
        return "actsagent demo (postgres)"

    def close(self) -> None:
        with self._lock:
            if self._db is not None and not isinstance(self._target, Database):
                self._db.close()
                self._db = None


def describe_db_error(err: DbError) -> str:
    """One message an analyst can act on, for a database or guard refusal."""
    if err.error_class == ErrorClass.GUARD_REJECTED:
        return f"The SQL safety guard refused this statement: {err.message}"
    where = f" (at character {err.position})" if err.position else ""
    text = f"The database rejected the SQL ({err.error_class.value}{where}): {err.message}"
    if err.hint:
        text += ("" if text.endswith(".") else ".") + f" Hint: {err.hint}"
    return text


def _guarded(db: Database, sql: str) -> QueryResult | DbError:
    from actsagent.guard import Policy, run_guarded

    return run_guarded(db, sql, policy=Policy.strict())


_REPAIRABLE_RULES = frozenset({"parse"})  # a syntax error is the analyst's to have fixed, not a safety verdict


def _safety_refusal(db: Database, sql: str) -> DbError | None:
    """The strict guard's refusal of ``sql`` unless it is only about syntax (which the agent may repair)."""
    from actsagent.guard import Policy, check_sql, rejection_error

    checked = check_sql(sql, db.dialect, Policy.strict())
    if checked.ok or checked.rule in _REPAIRABLE_RULES:
        return None
    return rejection_error(checked)


class Flow:
    """The copilot's turns over one database, one agent bridge and one way of wording answers."""

    def __init__(self, db: DatabaseHandle, bridge: AgentBridge, answerer: Answerer | None = None) -> None:
        self.db = db
        self.bridge = bridge
        self.answerer = answerer or Answerer(None)

    # public turns ------------------------------------------------------------------------------
    def ask(self, question: str, *, thread_id: str, previous: Sequence[Turn] = ()) -> Iterator[Step]:
        yield Step(
            type="start",
            message=question,
            data={"kind": "ask", "question": question, "llm": self.bridge.has_llm, "context": [t.id for t in previous]},
        )
        intent = intent_text(question=question, sql=None, previous=list(previous))
        yield from self._agent(question, lambda db: self.bridge.ask(intent, db, thread_id=thread_id))

    def repair(
        self, sql: str, *, thread_id: str, question: str | None = None, previous: Sequence[Turn] = ()
    ) -> Iterator[Step]:
        """The agent repairs what the database rejects or answers wrongly; SQL the strict guard refuses for
        safety (anything but its syntax) is refused as it stands, not rewritten into something that passes."""
        yield Step(
            type="start",
            message=question or "Repair this SQL",
            data={"kind": "repair", "question": question or "", "sql": sql, "llm": self.bridge.has_llm},
        )
        try:
            refusal = _safety_refusal(self.db.get(), sql)
        except ActsagentError as e:
            yield from self._fail(e)
            return
        if refusal is not None:
            yield Step(type="error", message=describe_db_error(refusal), data=_err_data(refusal))
            yield Step(type="done", data={"status": "failed"})
            return
        intent = intent_text(question=question, sql=sql, previous=list(previous))
        yield from self._agent(question or "", lambda db: self.bridge.repair(intent, sql, db, thread_id=thread_id))

    def resume(self, answer: str, *, thread_id: str, question: str = "") -> Iterator[Step]:
        yield Step(type="reply", message=answer, data={"answer": answer})
        yield from self._agent(question, lambda db: self.bridge.resume(thread_id, answer, db))

    def run_sql(self, sql: str, *, question: str = "") -> Iterator[Step]:
        """The analyst's own SQL, run as written but through the strict guard."""
        yield Step(type="start", message="Run SQL", data={"kind": "run", "sql": sql, "llm": self.bridge.has_llm})
        try:
            db = self.db.get()
            res = _guarded(db, sql)
        except ActsagentError as e:
            yield from self._fail(e)
            return
        except Exception as e:  # a bug in actsagent: log it, show a message, keep the server up
            log.exception("run_sql failed")
            yield from self._fail(e)
            return
        if isinstance(res, DbError):  # show the SQL the error's position refers to
            yield Step(type="final", data={"final_sql": res.sql or sql, "submitted_sql": sql, "ran": False})
            yield Step(type="error", message=describe_db_error(res), data=_err_data(res))
            yield Step(type="done", data={"status": "failed"})
            return
        yield Step(
            type="final",
            message="Ran through the strict guard.",
            data={"final_sql": res.sql, "submitted_sql": sql, "ran": True, "verdict": "ran as written (guarded)"},
        )
        yield from self._show(question, res.sql, view_of(res))
        yield Step(type="done", data={"status": "done", "final_sql": res.sql})

    # internals ----------------------------------------------------------------------------------
    def _agent(self, question: str, start: Any) -> Iterator[Step]:
        status: TurnStatus = "failed"
        final_sql: str | None = None
        got_final = asked = False
        try:
            db = self.db.get()
            for ev in start(db):
                if ev.type != "final":
                    asked = asked or ev.type == "clarify"  # the run goes on to its pause; the final event confirms it
                    yield agent_step(ev)
                    continue
                got_final = True
                fv = final_view(ev.run)
                if fv.status == "paused":
                    if not asked and fv.pending:
                        yield Step(
                            type="clarify",
                            node_id=fv.pending.node_id,
                            message=fv.pending.question,
                            data={"question": fv.pending.question, "options": fv.pending.options},
                            tree=ev.run.tree,
                        )
                    status = "awaiting_clarification"
                    continue
                final_sql = fv.final_sql
                yield Step(type="final", node_id=ev.node_id, message=ev.message, data=_final_data(fv), tree=ev.run.tree)
                ok = yield from self._final(question, fv, db)
                status = "done" if ok else "failed"
            if not got_final:
                yield Step(type="error", message="The agent stopped without an answer.")
        except ActsagentError as e:
            status = "failed"
            yield from self._fail(e, done=False)
        except Exception as e:
            status = "failed"
            log.exception("agent run failed")
            yield from self._fail(e, done=False)
        yield Step(type="done", data={"status": status, "final_sql": final_sql})

    def _final(self, question: str, fv: FinalView, db: Database) -> Generator[Step, None, bool]:
        """Rows and words for the run's final SQL; returns whether the turn has an answer."""
        if not fv.final_sql:
            why = "; ".join(fv.notes) if fv.notes else ""
            yield Step(
                type="error",
                message="The agent found no SQL that answers this." + (f" ({why})" if why else ""),
                data={"kind": "agent"},
            )
            return False
        view = fv.result
        if view is None:  # the run kept no rows: run the final SQL ourselves, guarded
            res = _guarded(db, fv.final_sql)
            if isinstance(res, DbError):
                yield Step(type="error", message=describe_db_error(res), data=_err_data(res))
                return False
            view = view_of(res)
        yield from self._show(question, fv.final_sql, view)
        return True

    def _show(self, question: str, sql: str, view: ResultView) -> Iterator[Step]:
        chart = chart_for(view)
        yield Step(type="result", data={"sql": sql, "result": view.model_dump(mode="json")})
        ans = self.answerer.answer(question, sql, view, chart)
        yield Step(type="answer", message=ans.text, data=ans.model_dump(mode="json"))

    def _fail(self, e: BaseException, *, done: bool = True) -> Iterator[Step]:
        if isinstance(e, DatabaseUnavailable):
            msg, kind = f"The database is unavailable: {e}", "database"
        elif isinstance(e, LLMUnavailable):
            msg, kind = f"The language model failed: {e}", "llm"
        elif isinstance(e, ActsagentError):
            msg, kind = str(e), "user"
        else:
            msg, kind = failure_text(e), "internal"
        yield Step(type="error", message=msg, data={"kind": kind})
        if done:
            yield Step(type="done", data={"status": "failed"})


def agent_step(ev: AgentEvent) -> Step:
    """One of the agent's events as a step of the turn: its own fields as data, the tree it changed apart."""
    tree = ev.tree if isinstance(ev, PlanEvent | NodeEvent) else None
    data = ev.model_dump(mode="json", exclude={"type", "node_id", "message", "tree", "run"})
    return Step(type=ev.type, node_id=ev.node_id, message=ev.message, data=data, tree=tree)


def failure_text(e: BaseException) -> str:
    """A bug in the copilot, in one line: what failed and where to look, never a traceback."""
    first = str(e).strip().splitlines()[0] if str(e).strip() else "no message"
    return (
        f"The copilot failed while working this out ({type(e).__name__}: {cut(first, 300)}); "
        "the details are in the server log."
    )


def intent_text(*, question: str | None, sql: str | None, previous: list[Turn]) -> str:
    """The analyst's words with the conversation so far (``prompts/copilot_intent.md``)."""
    from actsagent.prompts import render

    return "\n\n".join(
        m["content"] for m in render("copilot_intent", question=question or "", sql=sql, previous=previous)
    )


def _err_data(err: DbError) -> dict[str, Any]:
    return {
        "kind": "guard" if err.error_class == ErrorClass.GUARD_REJECTED else "sql",
        "error_class": err.error_class.value,
        "position": err.position,
        "code": err.code,
        "identifier": cut(err.identifier, 200),
    }  # the engine may name a whole literal here


def _final_data(fv: FinalView) -> dict[str, Any]:
    return {
        "final_sql": fv.final_sql,
        "verdict": fv.verdict,
        "verdict_ok": fv.verdict_ok,
        "best_effort": fv.best_effort,
        "notes": fv.notes[:20],
        "error": fv.error,
        "status": fv.status,
        "llm_calls": fv.llm_calls,
        "tokens": fv.tokens,
    }
