"""The analyst copilot: a chat in the browser that shows the agent's plan, SQL and rows as they come.

``create_app`` is loaded on first use: the command line reads the store and limit settings of this package
without starting the web framework."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from actsagent.web.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name != "create_app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from actsagent.web.app import create_app

    return create_app
