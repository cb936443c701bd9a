"""Exceptions of the LLM layer, each saying who must act.

- ``StructuredOutputError``: the *model* answered with output that does not validate, even after
  one repair round. The graph stores it in state as a model failure and moves on.
- ``ProviderError``: raised by a backend for one failed request; ``retryable`` decides whether the
  retry loop tries again. Scripts may contain them to simulate provider trouble.
- ``ProviderFailed`` (an ``LLMUnavailable``): the provider failed for good (retries exhausted, or
  an error that retrying cannot fix such as 400/401/404).
- ``ReplayMiss`` (a ``UserError``): cache mode ``replay_only`` and no recorded answer.
- ``ModelRequestsBlocked`` / ``ScriptExhausted``: mistakes in a test; they propagate as bugs.
"""

from __future__ import annotations

from typing import Any

from actsagent.errors import ActsagentError, LLMUnavailable, UserError


class StructuredOutputError(ActsagentError):
    """The model's answer did not validate against the requested schema, even after one repair."""

    def __init__(
        self,
        message: str,
        *,
        raw_text: str,
        errors: list[str],
        schema_name: str,
        first_text: str | None = None,
        model: str | None = None,
        role: str | None = None,
        usage: Any = None,
    ):
        super().__init__(message)
        self.raw_text = raw_text
        self.errors = errors
        self.schema_name = schema_name
        self.first_text = first_text
        self.model = model
        self.role = role
        self.usage = usage

    def summary(self) -> dict[str, Any]:
        """JSON-ready description for graph state and reports."""
        return {
            "kind": "structured_output",
            "schema": self.schema_name,
            "model": self.model,
            "role": self.role,
            "errors": self.errors,
            "raw_text": self.raw_text[:4000],
        }


class ProviderError(Exception):
    """One request to the provider failed. ``status`` is the HTTP status, None for network trouble."""

    def __init__(
        self, message: str, *, status: int | None = None, retryable: bool = False, retry_after_s: float | None = None
    ):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after_s = retry_after_s

    @classmethod
    def rate_limited(cls, message: str = "rate limited", retry_after_s: float | None = None) -> ProviderError:
        return cls(message, status=429, retryable=True, retry_after_s=retry_after_s)

    @classmethod
    def server_error(cls, message: str = "internal server error", status: int = 500) -> ProviderError:
        return cls(message, status=status, retryable=True)

    @classmethod
    def timeout(cls, message: str = "request timed out") -> ProviderError:
        return cls(message, status=None, retryable=True)

    @classmethod
    def connection(cls, message: str = "connection failed") -> ProviderError:
        return cls(message, status=None, retryable=True)

    @classmethod
    def bad_request(cls, message: str = "bad request", status: int = 400) -> ProviderError:
        return cls(message, status=status, retryable=False)


class ProviderFailed(LLMUnavailable):
    """The provider failed for good; carries the last status and how many attempts were made."""

    def __init__(self, message: str, *, status: int | None, attempts: int, retryable: bool):
        super().__init__(message)
        self.status = status
        self.attempts = attempts
        self.retryable = retryable


class ReplayMiss(UserError):
    """``replay_only`` cache mode and no recorded response for this request."""

    def __init__(self, message: str, *, key: str, path: str):
        super().__init__(message)
        self.key = key
        self.path = path


class ModelRequestsBlocked(RuntimeError):
    """``actsagent.llm.openai_model.ALLOW_MODEL_REQUESTS`` is False (as in the test suite) and a real request was
    attempted."""


class ScriptExhausted(RuntimeError):
    """A ScriptedChatModel was asked for more answers than its script holds."""


def to_provider_error(exc: BaseException) -> ProviderError | None:
    """Map SDK and builtin network exceptions onto ProviderError; None means "not a provider failure" (a bug)."""
    if isinstance(exc, ProviderError):
        return exc
    if type(exc).__module__.split(".")[0] == "openai":
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return ProviderError.timeout(f"request timed out: {exc}")
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError.connection(f"connection failed: {exc}")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            retry_after = _retry_after(exc)
            retryable = status in (408, 409, 429) or status >= 500
            return ProviderError(
                f"HTTP {status}: {_status_message(exc)}", status=status, retryable=retryable, retry_after_s=retry_after
            )
        if isinstance(exc, openai.APIResponseValidationError):
            return ProviderError(f"malformed response from the endpoint: {exc}", status=None, retryable=True)
        return None
    if isinstance(exc, TimeoutError):
        return ProviderError.timeout(f"request timed out: {exc}")
    if isinstance(exc, ConnectionError):
        return ProviderError.connection(f"connection failed: {exc}")
    return None


def _status_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", exc))


def _retry_after(exc: Any) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, ValueError):
        return None
