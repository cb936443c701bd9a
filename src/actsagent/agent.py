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
"""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from langgraph.types import Command

from actsagent.db import Database, DbError, QueryResult
from actsagent.errors import LLMUnavailable, UserError
from actsagent.graphs.checkpoint import get_checkpointer
from actsagent.graphs.models import AgentEvent, AgentRun, Budget, Clarification, Mode, RunStatus, mode_of
from actsagent.graphs.runtime import Runtime
from actsagent.graphs.state import Final, TreeState, initial_state
from actsagent.graphs.tree_graph import build_tree_graph
from actsagent.graphs.variants import run_draft, run_regenerate, run_single_shot
from actsagent.llm.tracing import run_inputs, run_outputs, traced
from actsagent.tools import SchemaSource, ToolContext
from actsagent.tools.run_sql import execute_statements

__all__ = ["AgentEvent", "AgentRun", "Budget", "ask", "repair", "resume", "stream", "stream_resume"]

_NO_LLM_NOTE = (
    "no LLM configured: ran the LLM-free fallback (run, SafeQL refinement, clause localisation); "
    "an LLM would add ambiguity detection, repair from clause evidence and judging"
)


@traced("actsagent.repair", inputs=run_inputs, outputs=run_outputs)
def repair(
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
) -> AgentRun:
    """Correct ``sql`` so it does what ``intent`` asks; returns the typed run with its plan tree.

    ``verify_copies``: may the checks run in disposable copies of ``db`` (``CREATE DATABASE ... TEMPLATE``,
    which ends the database's other sessions)? None: only under the sandbox policy, where ``db`` is itself
    a disposable copy. Checks that need a copy are reported as could-not-run without one.

    ``schema_source``: where the prompts' schema context comes from (``tools.SchemaSource``): ``auto``
    takes the database's knowledge base when the schema is too large to show whole, ``kb`` always;
    ``kb_budget`` caps its context in characters (default ``kb.DEFAULT_BUDGET``); ``knowledge_base`` (a
    ``kb.Retriever``, e.g. one built with a data dictionary at its own path) replaces the database's own.
    """
    if not intent or not intent.strip():
        raise UserError("the intent (issue text or question) is empty")
    mode = mode_of(mode)
    rt, notes = _runtime(
        db, model, policy, budget, interactive, on_event, verify_copies, schema_source, kb_budget, knowledge_base
    )
    try:
        return _repair(rt, notes, intent, sql, db, mode, thread_id, checkpointer)
    finally:
        rt.ctx.close_scenarios()


def _repair(
    rt: Runtime,
    notes: list[str],
    intent: str,
    sql: str | list[str] | None,
    db: Database,
    mode: Mode,
    thread_id: str | None,
    checkpointer: Any,
) -> AgentRun:
    sql = _normalise_sql(sql, db.dialect if not rt.ctx.active_policy().read_only else None)
    tid = thread_id or uuid.uuid4().hex
    t0 = time.perf_counter()
    llm0 = rt.ctx.meter.total.llm_ms
    try:
        if rt.model is None or mode in ("tree", "linear"):
            if rt.model is None and mode in ("regenerate", "single_shot"):
                notes.append(f"mode {mode!r} needs an LLM: ran the tree's LLM-free fallback instead")
            state, paused = _run_tree(rt, intent, sql, mode if mode == "linear" else "tree", tid, checkpointer)
        elif mode == "regenerate":
            state, paused = run_regenerate(rt, intent, sql), None
        else:
            state, paused = run_single_shot(rt, intent, sql), None
    except LLMUnavailable as e:
        rt.emit("error", f"LLM provider failed: {e}")
        state = _last_state(rt, tid, checkpointer) or initial_state(intent, sql, mode)
        state.final = Final(status="failed", node=state.best.node if state.best else None, reason="provider")
        notes.append(
            f"LLM provider failed: {e}; completed steps are checkpointed, rerun with thread_id={tid!r} to continue"
        )
        paused = None
    run = _to_run(rt, state, tid, notes, paused, t0, llm0)
    rt.emit("final", run.status, run.final_node, run=run)
    return run


@traced("actsagent.ask", inputs=run_inputs, outputs=run_outputs)
def ask(
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
) -> AgentRun:
    """Write SQL for ``question``, then debug it with the same tree (text-to-SQL)."""
    from actsagent.llm import StructuredOutputError
    from actsagent.tools.generate_sql import GeneratedSQL, _clean

    if not question or not question.strip():
        raise UserError("the question is empty")
    rt, notes = _runtime(
        db, model, policy, budget, interactive, on_event, verify_copies, schema_source, kb_budget, knowledge_base
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
        rt.emit("final", run.status, run.final_node, run=run)
        return run
    draft: str | list[str] | None = None
    try:
        resp = rt.ctx.complete(
            "ask_generate",
            role="tools",
            response_model=GeneratedSQL,
            question=question,
            **rt.ctx.schema_vars(intent=question, prune=False),
        )  # the question alone: the whole listing, or the knowledge base's context for the question
        draft = _clean(resp.parsed.sql)
        rt.emit("note", f"first SQL written from the question: {draft}")
    except StructuredOutputError as e:
        rt.emit("note", f"the model gave no usable first SQL ({e}); the plan starts from the question alone")
    draft_usage = rt.ctx.meter.total.model_copy()
    if mode_of(mode) == "single_shot":  # one generation: the draft is the answer
        t0, llm0 = time.perf_counter(), rt.ctx.meter.total.llm_ms
        tid = thread_id or uuid.uuid4().hex
        run = _to_run(rt, run_draft(rt, question, draft), tid, notes, None, t0, llm0)
        run.usage = draft_usage
        run.notes.insert(0, "single-shot: the SQL written once from the question, run as written")
        rt.emit("final", run.status, run.final_node, run=run)
        return run
    inner = None if on_event is None else lambda ev: None if ev.type == "final" else on_event(ev)  # final: below
    run = repair(
        question,
        draft,
        db,
        mode=mode,
        model=rt.model,
        policy=policy,
        budget=budget,
        interactive=interactive,
        thread_id=thread_id,
        on_event=inner,
        checkpointer=checkpointer,
        verify_copies=verify_copies,
        schema_source=rt.ctx.schema_source,
        kb_budget=kb_budget,
        knowledge_base=knowledge_base,
    )
    run.usage.add(draft_usage)
    run.notes.insert(0, f"drafted from the question: {draft}" if draft else "no first draft")
    rt.emit("final", run.status, run.final_node, run=run)
    return run


@traced("actsagent.resume", inputs=run_inputs, outputs=run_outputs)
def resume(
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
) -> AgentRun:
    """Continue a run paused for clarification with the user's ``answer`` (an option number or words)."""
    rt, notes = _runtime(
        db, model, policy, budget, True, on_event, verify_copies, schema_source, kb_budget, knowledge_base
    )
    try:
        return _resume(rt, notes, thread_id, answer, checkpointer)
    finally:
        rt.ctx.close_scenarios()


def _resume(rt: Runtime, notes: list[str], thread_id: str, answer: str, checkpointer: Any) -> AgentRun:
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
        graph.invoke(Command(resume=answer), config)
        state, paused = _final_or_paused(graph, config)
    except LLMUnavailable as e:
        state = TreeState(**graph.get_state(config).values)
        state.final = Final(status="failed", node=None, reason="provider")
        notes.append(f"LLM provider failed: {e}; rerun resume to continue")
        paused = None
    run = _to_run(rt, state, thread_id, notes, paused, t0, llm0)
    rt.emit("final", run.status, run.final_node, run=run)
    return run


def stream(intent: str, sql: str | list[str] | None, db: Database, **kwargs: Any) -> Iterator[AgentEvent]:
    """Run ``repair`` (or ``ask`` when ``sql`` is None and ``ask=True``) and yield events as nodes run.

    The last event is ``final`` with the whole run in ``run``; an exception in the run is
    re-raised here after the events that preceded it.
    """
    use_ask = kwargs.pop("ask", False)
    user_cb = kwargs.pop("on_event", None)
    if use_ask:
        return _stream_call(lambda on_event: ask(intent, db, on_event=on_event, **kwargs), user_cb)
    return _stream_call(lambda on_event: repair(intent, sql, db, on_event=on_event, **kwargs), user_cb)


def stream_resume(thread_id: str, answer: str, db: Database, **kwargs: Any) -> Iterator[AgentEvent]:
    """``resume`` a paused run, yielding its events like ``stream`` does."""
    user_cb = kwargs.pop("on_event", None)
    return _stream_call(lambda on_event: resume(thread_id, answer, db, on_event=on_event, **kwargs), user_cb)


def _stream_call(
    call: Callable[[Callable[[AgentEvent], None]], AgentRun], user_cb: Callable[[AgentEvent], None] | None
) -> Iterator[AgentEvent]:
    """Run ``call(on_event)`` in a thread and yield its events as they come (the last is ``final``, the run)."""
    q: queue.Queue[AgentEvent | BaseException | None] = queue.Queue()

    def sink(ev: AgentEvent) -> None:
        if user_cb:
            user_cb(ev)
        q.put(ev)

    def work() -> None:
        try:
            call(sink)
        except BaseException as e:  # re-raised in the consumer's thread
            q.put(e)
        finally:
            q.put(None)

    thread = threading.Thread(target=work, daemon=True, name="actsagent-run")
    thread.start()
    while True:
        item = q.get()
        if item is None:
            break
        if isinstance(item, BaseException):
            raise item
        yield item
    thread.join()


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
    on_event: Callable[[AgentEvent], None] | None,
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
    return Runtime(ctx=ctx, budget=budget or Budget(), interactive=interactive, on_event=on_event), notes


def _run_tree(
    rt: Runtime, intent: str, sql: Any, mode: Mode, tid: str, checkpointer: Any
) -> tuple[TreeState, Clarification | None]:
    graph = build_tree_graph(rt, checkpointer or get_checkpointer())
    config = {"configurable": {"thread_id": tid}, "recursion_limit": 4 * rt.budget.max_nodes + 20}
    snap = graph.get_state(config)
    if snap.values and snap.next and "clarify" not in snap.next:
        rt.emit("note", f"resuming run {tid} from its last checkpoint")
        graph.invoke(None, config)  # an interrupted run: continue where it stopped
    elif snap.values and snap.next:
        raise UserError(f"run {tid!r} is waiting for a clarification: answer it with resume()")
    elif snap.values and TreeState(**snap.values).final is not None:
        rt.emit("note", f"run {tid} already finished; returning its result")
    else:
        graph.invoke(initial_state(intent, sql, mode), config)
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
