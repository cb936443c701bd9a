"""The analyst copilot: a chat in the browser that shows the agent's plan, SQL and rows as they come."""

from actsagent.web.app import create_app

__all__ = ["create_app"]
