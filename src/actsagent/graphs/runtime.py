"""What a graph run holds outside its checkpointed state (database, model, policy, meter), and how its events
reach the caller: through LangGraph's ``custom`` stream mode.

Checkpointed state is typed data (``graphs.state.TreeState``: the tree, candidates, counters); live
objects are passed here and rebuilt on resume. A step emits typed events (``graphs.models.AgentEvent``) with
LangGraph's stream writer; ``graph_events`` runs a graph and yields them as they are written, so a graph run
needs no event sink of its own and every consumer reads the same stream.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.func import entrypoint

from actsagent.graphs.models import AgentEvent, Budget, EventType, agent_event
from actsagent.tools import ToolContext


@dataclass
class Runtime:
    ctx: ToolContext
    budget: Budget = field(default_factory=Budget)
    interactive: bool = False

    @property
    def model(self) -> Any:
        return self.ctx.model

    def emit(self, type_: EventType, message: str = "", node_id: str | None = None, **fields: Any) -> None:
        """Write the typed event of kind ``type_`` to the running graph's stream (a field that kind lacks raises).

        Only inside a graph's step: outside one LangGraph has no stream to write to and raises."""
        get_stream_writer()(agent_event(type_, message, node_id, **fields))


def graph_events(graph: Any, input: Any, config: dict | None = None) -> Generator[AgentEvent, None, Any]:
    """Run ``graph`` on ``input``, yielding the events its steps emit while they run; returns its last state values.

    LangGraph runs each step in its executor and hands what the step wrote to the stream as it comes
    (``stream_mode="custom"``); an exception in a step is raised here after the events before it."""
    values = None
    for mode, chunk in graph.stream(input, config, stream_mode=["custom", "values"]):
        if mode == "custom":
            yield chunk
        else:
            values = chunk
    return values


def call_events(run: Callable[[], Any]) -> Generator[AgentEvent, None, Any]:
    """``run()`` as a one-task LangGraph graph (the functional API's ``entrypoint``), so a run that is no
    ``StateGraph`` (the comparison variants) streams its events like one; returns what ``run`` returned."""
    return graph_events(entrypoint()(lambda _: run()), True)
