"""A deterministic chat model for tests: answers come from a script, not from a provider.

It subclasses ChatModel and only replaces ``_request``, so its answers go through the same
retry, cache, parsing, repair and accounting path as a real model: a malformed scripted answer
triggers the real repair round, a scripted ``ProviderError.rate_limited()`` the real backoff.

A script is one of:

- a list of answers consumed in order (shared by all roles);
- a mapping ``role -> list of answers`` (each role consumes its own list);
- a callable ``(messages, role, response_model) -> answer`` that answers from the history
  (pydantic-ai's FunctionModel / smolagents' fake models); it may also raise.

An answer is a ``str`` (sent verbatim, so it may be malformed on purpose), a ``dict``/``list``
(sent as JSON), a pydantic model (sent as its JSON), a ``ScriptedReply`` (text plus explicit token
counts), or an exception instance, which is raised as the provider's failure (``ProviderError``
and the openai SDK's errors are retried like real ones; anything else propagates as a bug).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from actsagent.llm.base import ChatModel, RawReply, Request
from actsagent.llm.config import LLMConfig, ModelPrice, RoleModels
from actsagent.llm.errors import ScriptExhausted
from actsagent.llm.usage import UsageLedger

SCRIPTED_MODEL = "scripted"


class ScriptedReply(BaseModel, frozen=True):
    """A scripted answer with the token counts a real endpoint would report."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


ScriptItem = str | dict | list | BaseModel | BaseException | ScriptedReply
ScriptFn = Callable[[list[dict], str, "type[BaseModel] | None"], ScriptItem]


class ScriptedCall(BaseModel, frozen=True):
    """One request the scripted model received (every attempt, including failed ones)."""

    messages: list[dict]
    role: str
    model: str
    purpose: str
    response_model: str | None = None
    temperature: float | None = None

    @property
    def last_user(self) -> str:
        return next((m["content"] for m in reversed(self.messages) if m["role"] == "user"), "")


def scripted_config(**overrides: Any) -> LLMConfig:
    """Defaults for tests: no cache, retries without waiting, a zero-priced model named "scripted"."""
    values: dict[str, Any] = {
        "models": RoleModels(planner=SCRIPTED_MODEL, tools=SCRIPTED_MODEL, judge=SCRIPTED_MODEL),
        "cache_mode": "off",
        "retry_initial_s": 0.0,
        "retry_max_s": 0.0,
        "retry_jitter_s": 0.0,
        "max_retries": 2,
        "prices": {SCRIPTED_MODEL: ModelPrice(input=0.0, output=0.0)},
    }
    values.update(overrides)
    return LLMConfig(**values)


class ScriptedChatModel(ChatModel):
    """See the module docstring. ``calls`` lists every request received, in order."""

    def __init__(
        self,
        script: Sequence[ScriptItem] | Mapping[str, Sequence[ScriptItem]] | ScriptFn,
        *,
        config: LLMConfig | None = None,
        ledger: UsageLedger | None = None,
    ):
        super().__init__(config or scripted_config(), ledger=ledger)
        self._lock = threading.Lock()
        self._fn: ScriptFn | None = None
        self._queues: dict[str | None, list[ScriptItem]] = {}
        if callable(script) and not isinstance(script, (Sequence, Mapping)):
            self._fn = script
        elif isinstance(script, Mapping):
            self._queues = {role: list(items) for role, items in script.items()}
        elif isinstance(script, Sequence) and not isinstance(script, (str, bytes)):
            self._queues = {None: list(script)}
        else:
            raise TypeError("script must be a list of answers, a mapping role -> list, or a callable")
        self.calls: list[ScriptedCall] = []

    @property
    def remaining(self) -> int:
        """Answers not consumed yet (0 for a callable script)."""
        with self._lock:
            return sum(len(q) for q in self._queues.values())

    def _request(self, request: Request) -> RawReply:
        call = ScriptedCall(
            messages=request.messages,
            role=request.role,
            model=request.model,
            purpose=request.purpose,
            temperature=request.temperature,
            response_model=request.response_model.__name__ if request.response_model else None,
        )
        with self._lock:
            self.calls.append(call)
            if self._fn is None:
                queue = self._queues.get(None if None in self._queues else request.role)
                if not queue:
                    raise ScriptExhausted(
                        f"scripted model has no answer left for call #{len(self.calls)} "
                        f"(role {request.role!r}, {request.purpose}); last user message: {call.last_user[:300]!r}"
                    )
                item = queue.pop(0)
        if self._fn is not None:
            item = self._fn(request.messages, request.role, request.response_model)
        if isinstance(item, BaseException):
            raise item
        return _to_reply(item, request)


def _to_reply(item: Any, request: Request) -> RawReply:
    if isinstance(item, ScriptedReply):
        text, pt, ct = item.text, item.prompt_tokens, item.completion_tokens
    elif isinstance(item, str):
        text, pt, ct = item, None, None
    elif isinstance(item, BaseModel):
        text, pt, ct = item.model_dump_json(), None, None
    elif isinstance(item, (dict, list)):
        text, pt, ct = json.dumps(item, ensure_ascii=False), None, None
    else:
        raise TypeError(
            f"a script answer must be str, dict, list, BaseModel, ScriptedReply or an exception, "
            f"got {type(item).__name__}"
        )
    # Deterministic counts (characters / 4) so budgets and accounting are testable.
    if pt is None:
        pt = sum(len(m["content"]) for m in request.messages) // 4
    if ct is None:
        ct = len(text) // 4
    return RawReply(text=text, model=request.model, prompt_tokens=pt, completion_tokens=ct)


class FailingChatModel(ScriptedChatModel):
    """Every request fails with ``error`` (a provider that is down, rate-limited or rejecting the key).

    Retryable errors go through the real backoff loop before ``ProviderFailed`` is raised, so a
    graph test sees exactly what an outage looks like.
    """

    def __init__(
        self, error: BaseException | None = None, *, config: LLMConfig | None = None, ledger: UsageLedger | None = None
    ):
        from actsagent.llm.errors import ProviderError

        self.error = error if error is not None else ProviderError.server_error("scripted outage", status=503)

        def fail(messages, role, response_model):
            raise self.error

        super().__init__(fail, config=config, ledger=ledger)
