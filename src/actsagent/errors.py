"""Exceptions that say who must act (the pydantic-ai convention).

Failures of generated SQL are *data* (``DbError``, ``GuardRejection``) and never raised;
these exceptions are for the person running actsagent or for bugs.
"""


class ActsagentError(Exception):
    """Base class: the CLI turns these into a clear message and a non-zero exit."""


class UserError(ActsagentError):
    """The caller asked for something impossible: bad URL, missing file, bad option."""


class DatabaseUnavailable(ActsagentError):
    """The database could not be reached or opened at all (not an error of one query)."""


class LLMUnavailable(ActsagentError):
    """No model is configured, or the provider failed after retries."""
