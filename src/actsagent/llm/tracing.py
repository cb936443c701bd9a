"""LangSmith tracing of agent runs and model calls, on only when the standard variables ask for it.

Set ``LANGSMITH_TRACING=true`` (or ``LANGCHAIN_TRACING_V2=true``) and ``LANGSMITH_API_KEY`` (optionally
``LANGSMITH_ENDPOINT``, ``LANGSMITH_PROJECT``): every ``repair``/``ask``/``resume`` run becomes a trace, each
graph node a child run (LangGraph reports those itself through LangChain's callbacks) and each
``ChatModel.complete`` an LLM run with its messages, answer and token counts. Without those variables
``traced`` is a plain call: no client is created and nothing leaves the machine.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def tracing_enabled() -> bool:
    """The LangSmith switch as LangChain reads it (environment, or an enclosing ``tracing_context``)."""
    from langsmith.utils import tracing_is_enabled

    return bool(tracing_is_enabled())


RunType = Literal["tool", "chain", "llm", "retriever", "embedding", "prompt", "parser"]  # LangSmith's run kinds


def traced(
    name: str,
    *,
    run_type: RunType = "chain",
    inputs: Callable[[dict], dict] | None = None,
    outputs: Callable[[Any], dict] | None = None,
) -> Callable[[F], F]:
    """A LangSmith run around the function when tracing is on (``langsmith.traceable``); a plain call when off.

    ``inputs`` maps the bound arguments, ``outputs`` the return value, to what the trace shows: live
    objects (databases, models, callbacks) stay out of it.
    """

    def decorate(fn: F) -> F:
        wrapped: list[Callable[..., Any]] = []

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            if not tracing_enabled():
                return fn(*args, **kwargs)
            if not wrapped:
                from langsmith import traceable

                wrapped.append(
                    traceable(name=name, run_type=run_type, process_inputs=inputs, process_outputs=outputs)(fn)
                )
            return wrapped[0](*args, **kwargs)

        return call  # type: ignore[return-value]

    return decorate


def flush() -> None:
    """Send what is queued (the client batches in a background thread); a no-op when nothing was traced."""
    from langchain_core.tracers.langchain import wait_for_all_tracers

    wait_for_all_tracers()


# ---- what runs and model calls show -------------------------------------------------------------

_RUN_ARGS = ("intent", "question", "sql", "mode", "interactive", "thread_id", "answer")


def run_inputs(args: dict) -> dict:
    return {k: args[k] for k in _RUN_ARGS if k in args}


def run_outputs(run: Any) -> dict:
    return {
        "status": getattr(run, "status", None),
        "final_sql": getattr(run, "final_sql", None),
        "thread_id": getattr(run, "thread_id", None),
        "notes": getattr(run, "notes", None),
    }


def events_outputs(outputs: Any) -> dict:
    """What a streamed run shows: its run's fields. LangSmith collects what the generator yielded and returned
    (the run, last), possibly as ``{"output": [...]}``."""
    items = outputs.get("output", outputs) if isinstance(outputs, dict) else outputs
    last = items[-1] if isinstance(items, list) and items else items
    return run_outputs(getattr(last, "run", last))


def llm_inputs(args: dict) -> dict:
    schema = args.get("response_model")
    return {
        "messages": args.get("messages"),
        "role": args.get("role", "tools"),
        "response_model": getattr(schema, "__name__", None),
    }


def llm_outputs(resp: Any) -> dict:
    usage = getattr(resp, "usage", None)
    pt, ct = getattr(usage, "prompt_tokens", 0), getattr(usage, "completion_tokens", 0)
    return {
        "text": getattr(resp, "text", None),
        "model": getattr(resp, "model", None),
        "cached": getattr(resp, "cached", None),
        "attempts": getattr(resp, "attempts", None),
        "usage_metadata": {"input_tokens": pt, "output_tokens": ct, "total_tokens": pt + ct},
    }
