"""What a graph run holds outside its checkpointed state: database, model, policy, event sink, meter.

Checkpointed state is typed data (``graphs.state.TreeState``: the tree, candidates, counters); live
objects are passed here and rebuilt on resume.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from actsagent.graphs.models import AGENT_EVENT, AgentEvent, Budget, EventType
from actsagent.tools import ToolContext


@dataclass
class Runtime:
    ctx: ToolContext
    budget: Budget = field(default_factory=Budget)
    interactive: bool = False
    on_event: Callable[[AgentEvent], None] | None = None

    @property
    def model(self) -> Any:
        return self.ctx.model

    def emit(self, type_: EventType, message: str = "", node_id: str | None = None, **fields: Any) -> None:
        """Send the typed event of kind ``type_`` (``graphs.models.AgentEvent``); a field that kind lacks raises."""
        if self.on_event is not None:
            self.on_event(
                AGENT_EVENT.validate_python({"type": type_, "node_id": node_id, "message": message, **fields})
            )
