"""The public Python API of the ACTS agent: repair a faulty SQL, or answer a question, with a plan tree.

    from actsagent.agent import repair
    run = repair("total paid per customer", "SELECT name, SUM(total) FROM orders", db)
    run.status, run.final_sql, run.result, run.verdict
    print(run.tree.render_text())

``model=None`` takes the configured model (``get_chat_model()``; a string names a model on the
configured endpoint); with none configured the LLM-free fallback runs and ``run.notes`` says what
an LLM would add. ``policy=None`` is the
strict guard policy; pass ``Policy.sandbox()`` only for a disposable database copy. Runs are
checkpointed under ``thread_id``: calling ``repair`` again with the thread id of an interrupted
run continues it, and ``resume`` answers a paused (interactive) run's clarification question.

Each of ``repair``, ``ask`` and ``resume`` is its ``*_events`` generator run to the end: the generator yields the
typed events (``AgentEvent``) as the run goes, from LangGraph's ``custom`` stream of the graph that runs
(``graphs.runtime.graph_events``), and returns the run; ``stream`` and ``stream_resume`` hand it to the caller.
"""

from __future__ import annotations

import functools
import inspect
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from typing import Any, ParamSpec, TypeVar

from langgraph.types import Command

from actsagent.db import Database, DbError, QueryResult
from actsagent.errors import LLMUnavailable, UserError
from actsagent.graphs.checkpoint import get_checkpointer
from actsagent.graphs.models import AgentEvent, AgentRun, Budget, Clarification, Mode, RunStatus, agent_event, mode_of
from actsagent.graphs.runtime import Runtime, call_events, graph_events
from actsagent.graphs.state import Final, TreeState, initial_state
from actsagent.graphs.tree_graph import build_tree_graph
from actsagent.graphs.variants import run_draft, run_regenerate, run_single_shot
from actsagent.llm.tracing import events_outputs, run_inputs, traced
from actsagent.tools import SchemaSource, ToolContext
from actsagent.tools.run_sql import execute_statements

__all__ = [
    "AgentEvent",
    "AgentRun",
    "Budget",
    "ask",
    "ask_events",
    "repair",
    "repair_events",
    "resume",
    "resume_events",
    "stream",
    "stream_resume",
]

P = ParamSpec("P")
T = TypeVar("T")

_NO_LLM_NOTE = (
    "no LLM configured: ran the LLM-free fallback (run, SafeQL refinement, clause localisation); "
    "an LLM would add ambiguity detection, repair from clause evidence and judging"
)


@traced("actsagent.repair", inputs=run_inputs, outputs=events_outputs)
def repair_events(
    intent: str,
    sql: str | list[str] | None,
    db: Database,
    *,
    mode: Mode = "tree",
    model: Any = None,
    policy: Any = None,
    budget: Budget | None = None,
    interactive: bool = False,
    thread_id: str | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    checkpointer: Any = None,
    verify_copies: bool | None = None,
    schema_source: SchemaSource | str = SchemaSource.AUTO,
    kb_budget: int | None = None,
    knowledge_base: Any = None,
    first_draft: bool = False,
) -> Generator[AgentEvent, None, AgentRun]:
    """Correct ``sql`` so it does what ``intent`` asks; yields the run's events as its nodes run (the last is
    ``final``, ``on_event`` sees each first) and returns the typed run with its plan tree (``repair``: only that).

    ``verify_copies``: may the checks run in disposable copies of ``db`` (``CREATE DATABASE ... TEMPLATE``,
    which ends the database's other sessions)? None: only under the sandbox policy, where ``db`` is itself
    a disposable copy. Checks that need a copy are reported as could-not-run without one.

    ``schema_source``: where the prompts' schema context comes from (``tools.SchemaSource``): ``auto``
    takes the database's knowledge base when the schema is too large to show whole, ``kb`` always;
    ``kb_budget`` caps its context in characters (default ``kb.DEFAULT_BUDGET``); ``knowledge_base`` (a
    ``kb.Retriever``, e.g. one built with a data dictionary at its own path) replaces the database's own.
    ``first_draft``: ``sql`` is a first draft written for the intent (``ask``), not SQL reported faulty: the
    judge sees it as written first, and the tree revises it only when the judge does not approve it.
    """
    if not intent or not intent.strip():
        raise UserError("the intent (issue text or question) is empty")
    mode = mode_of(mode)
    rt, notes = _runtime(
        db, model, policy, budget, interactive, verify_copies, schema_source, kb_budget, knowledge_base
    )
    try:
        run = yield from _tapped(
            _repair(rt, notes, intent, sql, db, mode, thread_id, checkpointer, first_draft), on_event
        )
    finally:
        rt.ctx.close_scenarios()
    return (yield from _finished(run, on_event))


def _repair(
    rt: Runtime,
    notes: list[str],
    intent: str,
    sql: str | list[str] | None,
    db: Database,
    mode: Mode,
    thread_id: str | None,
    checkpointer: Any,
    first_draft: bool = False,
) -> Generator[AgentEvent, None, AgentRun]:
    sql = _normalise_sql(sql, db.dialect if not rt.ctx.active_policy().read_only else None)
    tid = thread_id or uuid.uuid4().hex
    t0 = time.perf_counter()
    llm0 = rt.ctx.meter.total.llm_ms
    try:
        if rt.model is None or mode in ("tree", "linear", "escalate"):
            if rt.model is None and mode in ("regenerate", "single_shot"):
                notes.append(f"mode {mode!r} needs an LLM: ran the tree's LLM-free fallback instead")
            tree_mode: Mode = mode if mode in ("linear", "escalate") else "tree"
            state, paused = yield from _run_tree(rt, intent, sql, tree_mode, tid, checkpointer, first_draft)
        elif mode == "regenerate":
            state, paused = (yield from call_events(lambda: run_regenerate(rt, intent, sql))), None
        else:
            state, paused = (yield from call_events(lambda: run_single_shot(rt, intent, sql))), None
    except LLMUnavailable as e:
        yield agent_event("error", f"LLM provider failed: {e}")
        state = _last_state(rt, tid, checkpointer) or initial_state(intent, sql, mode)
        state.final = Final(status="failed", node=state.best.node if state.best else None, reason="provider")
        notes.append(
            f"LLM provider failed: {e}; completed steps are checkpointed, rerun with thread_id={tid!r} to continue"
        )
        paused = None
    return _to_run(rt, state, tid, notes, paused, t0, llm0)


@traced("actsagent.ask", inputs=run_inputs, outputs=events_outputs)
def ask_events(
    question: str,
    db: Database,
    *,
    model: Any = None,
    policy: Any = None,
    budget: Budget | None = None,
    interactive: bool = False,
    thread_id: str | None = None,
    mode: Mode = "tree",
    on_event: Callable[[AgentEvent], None] | None = None,
    checkpointer: Any = None,
    verify_copies: bool | None = None,
    schema_source: SchemaSource | str = SchemaSource.AUTO,
    kb_budget: int | None = None,
    knowledge_base: Any = None,
) -> Generator[AgentEvent, None, AgentRun]:
    """Write SQL for ``question``, then debug it with the same tree (text-to-SQL); events and run as ``repair_events``."""
    if not question or not question.strip():
        raise UserError("the question is empty")
    rt, notes = _runtime(
        db, model, policy, budget, interactive, verify_copies, schema_source, kb_budget, knowledge_base
    )
    if rt.model is None:
        run = AgentRun(
            status="failed",
            mode=mode,
            intent=question,
            notes=[
                "no LLM configured: `ask` needs a model to write the first SQL; "
                "use `repair` with your own SQL for the LLM-free path"
            ],
        )
        return (yield from _finished(run, on_event))
    draft = yield from _tapped(_draft(rt, question), on_event)
    draft_usage = rt.ctx.meter.total.model_copy()
    if mode_of(mode) == "single_shot":  # one generation: the draft is the answer
        t0, llm0 = time.perf_counter(), rt.ctx.meter.total.llm_ms
        tid = thread_id or uuid.uuid4().hex
        state = yield from _tapped(call_events(lambda: run_draft(rt, question, draft)), on_event)
        run = _to_run(rt, state, tid, notes, None, t0, llm0)
        run.usage = draft_usage
        run.notes.insert(0, "single-shot: the SQL written once from the question, run as written")
        return (yield from _finished(run, on_event))
    inner = repair_events(
        question,
        draft,
        db,
        mode=mode,
        model=rt.model,
        policy=policy,
        budget=budget,
        interactive=interactive,
        thread_id=thread_id,
        checkpointer=checkpointer,
        verify_copies=verify_copies,
        schema_source=rt.ctx.schema_source,
        kb_budget=kb_budget,
        knowledge_base=knowledge_base,
        first_draft=True,
    )
    run = yield from _tapped(inner, on_event, final=False)  # final: below, with the draft's usage and note
    run.usage.add(draft_usage)
    run.notes.insert(0, f"drafted from the question: {draft}" if draft else "no first draft")
    return (yield from _finished(run, on_event))


def _draft(rt: Runtime, question: str) -> Generator[AgentEvent, None, str | list[str] | None]:
    """``ask``'s first SQL, written from the question alone: the whole listing, or the knowledge base's context."""
    from actsagent.llm import StructuredOutputError
    from actsagent.tools.generate_sql import GeneratedSQL, _clean

    try:
        resp = rt.ctx.complete(
            "ask_generate",
            role="tools",
            response_model=GeneratedSQL,
            question=question,
            **rt.ctx.schema_vars(intent=question, prune=False),
        )
    except StructuredOutputError as e:
        yield agent_event("note", f"the model gave no usable first SQL ({e}); the plan starts from the question alone")
        return None
    draft = _clean(resp.parsed.sql)
    yield agent_event("note", f"first SQL written from the question: {draft}")
    return draft


@traced("actsagent.resume", inputs=run_inputs, outputs=events_outputs)
def resume_events(
    thread_id: str,
    answer: str,
    db: Database,
    *,
    model: Any = None,
    policy: Any = None,
    budget: Budget | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    checkpointer: Any = None,
    verify_copies: bool | None = None,
    schema_source: SchemaSource | str = SchemaSource.AUTO,
    kb_budget: int | None = None,
    knowledge_base: Any = None,
) -> Generator[AgentEvent, None, AgentRun]:
    """Continue a run paused for clarification with the user's ``answer`` (an option number or words); events and
    run as ``repair_events``."""
    rt, notes = _runtime(db, model, policy, budget, True, verify_copies, schema_source, kb_budget, knowledge_base)
    try:
        run = yield from _tapped(_resume(rt, notes, thread_id, answer, checkpointer), on_event)
    finally:
        rt.ctx.close_scenarios()
    return (yield from _finished(run, on_event))


def _resume(
    rt: Runtime, notes: list[str], thread_id: str, answer: str, checkpointer: Any
) -> Generator[AgentEvent, None, AgentRun]:
    saver = checkpointer or get_checkpointer()
    graph = build_tree_graph(rt, saver)
    config = {"configurable": {"thread_id": thread_id}}
    snap = graph.get_state(config)
    if not snap.values:
        raise UserError(f"no agent run with thread id {thread_id!r}")
    if "clarify" not in (snap.next or ()):
        raise UserError(f"run {thread_id!r} is not waiting for an answer")
    t0, llm0 = time.perf_counter(), rt.ctx.meter.total.llm_ms
    try:
        yield from graph_events(graph, Command(resume=answer), config)
        state, paused = _final_or_paused(graph, config)
    except LLMUnavailable as e:
        state = TreeState(**graph.get_state(config).values)
        state.final = Final(status="failed", node=None, reason="provider")
        notes.append(f"LLM provider failed: {e}; rerun resume to continue")
        paused = None
    return _to_run(rt, state, thread_id, notes, paused, t0, llm0)


def _run_to_end(events: Callable[P, Generator[AgentEvent, None, AgentRun]], name: str) -> Callable[P, AgentRun]:
    """The plain call of an event generator: runs it to its end and returns the run (``on_event`` sees each event)."""

    @functools.wraps(events)
    def call(*args: P.args, **kwargs: P.kwargs) -> AgentRun:
        gen = events(*args, **kwargs)
        while True:
            try:
                next(gen)
            except StopIteration as done:
                return done.value

    call.__name__ = call.__qualname__ = name
    call.__signature__ = inspect.signature(events).replace(return_annotation=AgentRun)  # type: ignore[attr-defined]
    return call


repair = _run_to_end(repair_events, "repair")
ask = _run_to_end(ask_events, "ask")
resume = _run_to_end(resume_events, "resume")


def stream(intent: str, sql: str | list[str] | None, db: Database, **kwargs: Any) -> Iterator[AgentEvent]:
    """Run ``repair`` (or ``ask`` when ``sql`` is None and ``ask=True``) and yield events as nodes run.

    The last event is ``final`` with the whole run in ``run``; an exception in the run is
    raised here after the events that preceded it.
    """
    if kwargs.pop("ask", False):
        return ask_events(intent, db, **kwargs)
    return repair_events(intent, sql, db, **kwargs)


def stream_resume(thread_id: str, answer: str, db: Database, **kwargs: Any) -> Iterator[AgentEvent]:
    """``resume`` a paused run, yielding its events like ``stream`` does."""
    return resume_events(thread_id, answer, db, **kwargs)


def _tapped(
    events: Generator[AgentEvent, None, T],
    on_event: Callable[[AgentEvent], None] | None,
    *,
    final: bool = True,
) -> Generator[AgentEvent, None, T]:
    """``events``, each shown to ``on_event`` before it is yielded; returns what ``events`` returns.

    ``final=False`` drops the ``final`` event: a nested run's (the outer run sends its own)."""
    while True:
        try:
            ev = next(events)
        except StopIteration as done:
            return done.value
        if ev.type == "final" and not final:
            continue
        if on_event is not None:
            on_event(ev)
        yield ev


def _finished(run: AgentRun, on_event: Callable[[AgentEvent], None] | None) -> Generator[AgentEvent, None, AgentRun]:
    """The run's last event, ``final`` with the whole run in it; returns the run."""
    ev = agent_event("final", run.status, run.final_node, run=run)
    if on_event is not None:
        on_event(ev)
    yield ev
    return run


# ---------------------------------------------------------------------------------------------------


def _normalise_sql(sql: str | list[str] | None, split_dialect: str | None = None) -> str | list[str] | None:
    """Strip blanks; under a write-permitting policy, a script string becomes its statement list."""
    if sql is None:
        return None
    if isinstance(sql, str) and split_dialect:
        from actsagent.guard import split_statements

        parts = split_statements(sql, split_dialect)
        sql = parts if len(parts) > 1 else sql
    if isinstance(sql, list):
        stmts = [s.strip() for s in sql if s and s.strip()]
        if not stmts:
            return None
        return stmts[0] if len(stmts) == 1 else stmts
    return sql.strip() or None


def _runtime(
    db: Database,
    model: Any,
    policy: Any,
    budget: Budget | None,
    interactive: bool,
    verify_copies: bool | None = None,
    schema_source: SchemaSource | str = SchemaSource.AUTO,
    kb_budget: int | None = None,
    knowledge_base: Any = None,
) -> tuple[Runtime, list[str]]:
    notes: list[str] = []
    if isinstance(model, str):  # a model name: the configured endpoint, that model for every role
        from actsagent.llm import LLMConfig, RoleModels, get_chat_model

        model = get_chat_model(LLMConfig.from_env(models=RoleModels(planner=model, tools=model, judge=model)))
    elif model is not None:  # a ChatModel, or a LangChain chat model (or role mapping of them) to wrap
        from actsagent.llm.langchain_model import as_chat_model

        model = as_chat_model(model)
    else:
        from actsagent.llm import get_chat_model

        model = get_chat_model()
        if model is None:
            notes.append(_NO_LLM_NOTE)
    try:
        source = SchemaSource(schema_source)
    except ValueError:
        raise UserError(f"unknown schema source {schema_source!r}: use auto, listing or kb") from None
    ctx = ToolContext(
        db=db,
        policy=policy,
        model=model,
        verify_copies=verify_copies,
        schema_source=source,
        kb_budget=kb_budget,
        kb=knowledge_base,
    )
    ctx.knowledge_base()  # decided before the run: a missing or damaged knowledge base fails here, not mid-run
    return Runtime(ctx=ctx, budget=budget or Budget(), interactive=interactive), notes


def _run_tree(
    rt: Runtime, intent: str, sql: Any, mode: Mode, tid: str, checkpointer: Any, first_draft: bool = False
) -> Generator[AgentEvent, None, tuple[TreeState, Clarification | None]]:
    graph = build_tree_graph(rt, checkpointer or get_checkpointer())
    config = {"configurable": {"thread_id": tid}, "recursion_limit": 4 * rt.budget.max_nodes + 20}
    snap = graph.get_state(config)
    if snap.values and snap.next and "clarify" not in snap.next:
        yield agent_event("note", f"resuming run {tid} from its last checkpoint")
        yield from graph_events(graph, None, config)  # an interrupted run: continue where it stopped
    elif snap.values and snap.next:
        raise UserError(f"run {tid!r} is waiting for a clarification: answer it with resume()")
    elif snap.values and TreeState(**snap.values).final is not None:
        yield agent_event("note", f"run {tid} already finished; returning its result")
    else:
        yield from graph_events(graph, initial_state(intent, sql, mode, first_draft=first_draft), config)
    return _final_or_paused(graph, config)


def _final_or_paused(graph: Any, config: dict) -> tuple[TreeState, Clarification | None]:
    snap = graph.get_state(config)
    state = TreeState(**snap.values)
    paused = None
    if snap.next and "clarify" in snap.next:
        paused = state.pending or Clarification(question="")
    return state, paused


def _last_state(rt: Runtime, tid: str, checkpointer: Any) -> TreeState | None:
    try:
        graph = build_tree_graph(rt, checkpointer or get_checkpointer())
        values = graph.get_state({"configurable": {"thread_id": tid}}).values
        return TreeState(**values) if values else None
    except Exception:
        return None


def _to_run(
    rt: Runtime, state: TreeState, tid: str, notes: list[str], paused: Clarification | None, t0: float, llm0: float
) -> AgentRun:
    tree = state.tree
    final = state.final
    node_id = final.node if final else None
    sql: Any = None
    verdict = None
    if node_id and node_id in tree.nodes:
        n = tree.nodes[node_id]
        sql = (n.output.produced_sql() if n.output is not None else None) or n.input.get("sql")
        verdict = n.verdict
    statements = [sql] if isinstance(sql, str) else list(sql or [])
    result: QueryResult | DbError | None = None
    t_final = time.perf_counter()
    if statements and not paused:
        results, _ = execute_statements(rt.ctx, statements)
        result = results[-1] if results else None
    final_ms = (time.perf_counter() - t_final) * 1000
    c = state.counters
    wall = (time.perf_counter() - t0) * 1000
    llm_this_call = rt.ctx.meter.total.llm_ms - llm0
    status: RunStatus = "paused" if paused else final.status if final else "failed"
    return AgentRun(
        status=status,
        mode=state.mode,
        intent=state.intent,
        original_sql=state.original_sql,
        final_sql=";\n".join(statements) if statements else None,
        final_sql_statements=statements,
        final_node=node_id,
        outvoted=final.outvoted if final else None,
        alternatives=list(final.alternatives) if final else [],
        result=result,
        verdict=verdict,
        tree=tree,
        usage=c.usage(),
        framework_ms=max(0.0, wall - llm_this_call),
        wall_ms=wall,
        timings={
            "probe_ms": c.probe_ms,
            "checks_ms": c.checks_ms,
            "final_ms": final_ms,
        },
        notes=[*notes, *state.notes],
        model_failures=[f.report() for f in state.failures],
        pending_clarification=paused,
        thread_id=tid,
        checks=state.checks,
        original_checks=state.original_check,
    )
