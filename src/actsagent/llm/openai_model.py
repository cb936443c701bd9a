"""ChatModel over the ``openai`` SDK, for any OpenAI-compatible endpoint.

The SDK's own retries are switched off: the shared retry loop in ``base`` decides. When an
endpoint refuses ``response_format`` (HTTP 400 naming it), the model remembers that for the
model name and describes the schema in the prompt instead.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from actsagent.llm.base import ChatModel, RawReply, Request, StructuredMode, StructuredModeUnsupported
from actsagent.llm.config import LLMConfig
from actsagent.llm.errors import ModelRequestsBlocked, ProviderError, to_provider_error
from actsagent.llm.usage import UsageLedger

if TYPE_CHECKING:
    import openai

_FORMAT_WORDS = ("response_format", "json_schema", "json schema", "structured output")


ALLOW_MODEL_REQUESTS = True  # False: every real request is refused (the test suite sets it)


@contextmanager
def allow_model_requests(allow: bool = True) -> Iterator[None]:
    """Temporarily set ALLOW_MODEL_REQUESTS (tests that talk to a local fake endpoint)."""
    global ALLOW_MODEL_REQUESTS
    before = ALLOW_MODEL_REQUESTS
    ALLOW_MODEL_REQUESTS = allow
    try:
        yield
    finally:
        ALLOW_MODEL_REQUESTS = before


class OpenAIChatModel(ChatModel):
    def __init__(self, config: LLMConfig | None = None, *, ledger: UsageLedger | None = None):
        super().__init__(config or LLMConfig.from_env(), ledger=ledger)
        self._client: openai.OpenAI | None = None
        self._client_lock = threading.Lock()
        self._no_json_schema: set[str] = set()

    @property
    def client(self) -> openai.OpenAI:
        """The SDK client, created on first use (importing openai costs time)."""
        with self._client_lock:
            if self._client is None:
                import openai

                key = self.config.api_key.get_secret_value() if self.config.api_key else "none"
                self._client = openai.OpenAI(
                    api_key=key, base_url=self.config.base_url, timeout=self.config.timeout_s, max_retries=0
                )
            return self._client

    def structured_mode(self, model: str) -> StructuredMode:
        if self.config.structured_output == "auto" and model in self._no_json_schema:
            return "prompt"
        return super().structured_mode(model)

    def _request(self, request: Request) -> RawReply:
        if not ALLOW_MODEL_REQUESTS:
            raise ModelRequestsBlocked(
                f"a request to model {request.model!r} was blocked: actsagent.llm.openai_model.ALLOW_MODEL_REQUESTS "
                "is False "
                "(the test suite sets it). Use ScriptedChatModel, a replay cache, or lift the flag in a test that "
                "talks to a local fake server."
            )
        kwargs: dict = {"model": request.model, "messages": request.messages}
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        try:
            resp = self.client.chat.completions.create(**kwargs)
        except json.JSONDecodeError as e:  # the SDK lets a garbled body through as is
            raise ProviderError(f"the endpoint sent a response that is not JSON: {e}", retryable=True) from e
        except Exception as e:
            pe = to_provider_error(e)
            if pe is None:
                raise
            if (
                request.response_format is not None
                and pe.status in (400, 422)
                and any(w in str(pe).lower() for w in _FORMAT_WORDS)
            ):
                self._no_json_schema.add(request.model)
                raise StructuredModeUnsupported(str(pe)) from e
            raise pe from e
        if isinstance(resp, str) or not getattr(resp, "choices", None):
            raise ProviderError(f"the endpoint returned no choices: {str(resp)[:200]}", retryable=True)
        msg = resp.choices[0].message
        text = msg.content
        if text is None and getattr(msg, "refusal", None):
            raise ProviderError(f"the model refused: {msg.refusal}", status=None, retryable=False)
        usage = getattr(resp, "usage", None)
        return RawReply(
            text=text or "",
            model=getattr(resp, "model", None) or request.model,
            prompt_tokens=getattr(usage, "prompt_tokens", None) if usage else None,
            completion_tokens=getattr(usage, "completion_tokens", None) if usage else None,
        )
