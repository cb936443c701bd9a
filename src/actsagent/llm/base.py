"""The ChatModel base class: one ``complete`` path shared by the real and the scripted model.

Subclasses implement only ``_request`` (send messages, return text and token counts). Everything
that matters for behaviour lives here, so a scripted model exercises exactly what production
runs: the response cache, retries with backoff, structured-output parsing, the single repair
round, and usage accounting.
"""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from typing import Any, Literal

import tenacity
from pydantic import BaseModel, ConfigDict

from actsagent.llm.cache import CachedReply, ResponseCache, cache_key
from actsagent.llm.config import LLMConfig
from actsagent.llm.errors import ProviderError, ProviderFailed, StructuredOutputError, to_provider_error
from actsagent.llm.structured import OutputInvalid, parse_structured
from actsagent.llm.tracing import llm_inputs, llm_outputs, traced
from actsagent.llm.usage import LLMResponse, Usage, UsageLedger, record_call

StructuredMode = Literal["json_schema", "prompt"]
_MESSAGE_ROLES = {"system", "user", "assistant", "tool", "developer"}


class RawReply(BaseModel, frozen=True):
    """What a backend returns for one request. Token counts None: the endpoint did not say."""

    text: str
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Request(BaseModel, frozen=True):
    """One request as a backend sees it (after schema instructions were added, if any)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    messages: list[dict]
    model: str
    role: str
    purpose: str  # "answer" or "repair"
    temperature: float | None = None
    max_tokens: int | None = None
    response_format: dict | None = None  # set in json_schema mode
    response_model: type[BaseModel] | None = None


class StructuredModeUnsupported(Exception):
    """Raised by ``_request`` when the endpoint rejects ``response_format``; the base retries in prompt mode."""


class _Exchange(BaseModel):
    text: str
    model: str
    usage: Usage
    latency_ms: float
    cached: bool
    attempts: int


class ChatModel(ABC):
    """Send chat messages to a model; optionally parse the answer into a pydantic model.

    ``complete`` raises ``StructuredOutputError`` (the model's fault: store it, move on),
    ``LLMUnavailable``/``ProviderFailed`` (the provider's), ``ReplayMiss`` (a missing recording).
    """

    def __init__(self, config: LLMConfig | None = None, *, ledger: UsageLedger | None = None):
        self.config = config or LLMConfig()
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.cache = ResponseCache(self.config.cache_dir, self.config.cache_mode)

    # ---- to implement -------------------------------------------------------------------------
    @abstractmethod
    def _request(self, request: Request) -> RawReply:
        """Send one request. Raise ProviderError (or SDK errors) on failure, StructuredModeUnsupported
        when ``request.response_format`` is refused."""

    def structured_mode(self, model: str) -> StructuredMode:
        """json_schema: send the schema as ``response_format``; prompt: describe it in the messages."""
        return "prompt" if self.config.structured_output == "prompt" else "json_schema"

    # ---- the shared path ----------------------------------------------------------------------
    @traced("chat_model", run_type="llm", inputs=llm_inputs, outputs=llm_outputs)
    def complete(
        self,
        messages: list[dict],
        *,
        role: str = "tools",
        response_model: type[BaseModel] | None = None,
        temperature: float | None = None,
    ) -> LLMResponse:
        """One answer from the model serving ``role``; with ``response_model``, ``parsed`` holds the instance."""
        messages = _checked(messages)
        model = self.config.model_for(role)
        temp = self.config.temperature if temperature is None else temperature
        t0 = time.perf_counter()
        first = self._exchange(
            messages, role=role, model=model, temperature=temp, response_model=response_model, purpose="answer"
        )
        exchanges = [first]
        parsed = None
        text = first.text
        repaired = False
        if response_model is not None:
            try:
                parsed = parse_structured(first.text, response_model)
            except OutputInvalid as bad:
                from actsagent.prompts import render

                fix = render(
                    "llm_json_repair",
                    errors=bad.errors,
                    schema=_schema(response_model),
                    schema_name=response_model.__name__,
                )
                repair_msgs = [*messages, {"role": "assistant", "content": first.text}, *_user_part(fix)]
                second = self._exchange(
                    repair_msgs,
                    role=role,
                    model=model,
                    temperature=temp,
                    response_model=response_model,
                    purpose="repair",
                )
                exchanges.append(second)
                text = second.text
                try:
                    parsed = parse_structured(second.text, response_model)
                    repaired = True
                except OutputInvalid as still:
                    raise StructuredOutputError(
                        f"{model} ({role}) returned output that does not validate as {response_model.__name__} "
                        f"after one repair round: {'; '.join(still.errors)[:500]}",
                        raw_text=second.text,
                        errors=still.errors,
                        schema_name=response_model.__name__,
                        first_text=first.text,
                        model=model,
                        role=role,
                        usage=_total(exchanges),
                    ) from None
        return LLMResponse(
            text=text,
            parsed=parsed,
            model=exchanges[-1].model,
            role=role,
            usage=_total(exchanges),
            latency_ms=(time.perf_counter() - t0) * 1000,
            cached=all(e.cached for e in exchanges),
            attempts=sum(e.attempts for e in exchanges),
            repaired=repaired,
        )

    def _exchange(
        self,
        messages: list[dict],
        *,
        role: str,
        model: str,
        temperature: float | None,
        response_model: type[BaseModel] | None,
        purpose: str,
    ) -> _Exchange:
        t0 = time.perf_counter()
        schema = _schema(response_model) if response_model else None
        params = {"temperature": temperature, "max_tokens": self.config.max_tokens}
        key = cache_key(model=model, messages=messages, params=params, schema=schema)
        hit = self.cache.get(key, describe=f"{purpose} of role {role!r} with model {model!r}")
        attempts = 0
        if hit is None:
            reply, attempts = self._send(
                messages,
                model=model,
                role=role,
                purpose=purpose,
                temperature=temperature,
                response_model=response_model,
            )
            hit = _as_cached(reply, messages)
            self.cache.put(
                key,
                hit,
                request={
                    "model": model,
                    "role": role,
                    "purpose": purpose,
                    "endpoint": self.config.base_url,
                    "messages": messages,
                    "params": params,
                    "schema_name": response_model.__name__ if response_model else None,
                },
            )
            cached = False
        else:
            cached = True
        usage = self._usage(hit)
        latency = (time.perf_counter() - t0) * 1000
        record_call(
            self.ledger,
            role=role,
            model=hit.model,
            purpose=purpose,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost_usd=usage.cost_usd,
            price_known=usage.price_known,
            latency_ms=latency,
            cached=cached,
            attempts=attempts,
        )
        return _Exchange(
            text=hit.text, model=hit.model, usage=usage, latency_ms=latency, cached=cached, attempts=attempts
        )

    def _send(
        self,
        messages: list[dict],
        *,
        model: str,
        role: str,
        purpose: str,
        temperature: float | None,
        response_model: type[BaseModel] | None,
    ) -> tuple[RawReply, int]:
        """Send with retries; returns the reply and the number of attempts."""
        attempts = 0
        mode = self.structured_mode(model) if response_model else None
        while True:
            if response_model is not None and mode == "prompt":
                sent, fmt = _with_schema_instructions(messages, response_model), None
            elif response_model is not None:
                sent, fmt = messages, _response_format(response_model)
            else:
                sent, fmt = messages, None
            try:
                req = Request(
                    messages=sent,
                    model=model,
                    role=role,
                    purpose=purpose,
                    temperature=temperature,
                    max_tokens=self.config.max_tokens,
                    response_format=fmt,
                    response_model=response_model,
                )
                reply, n = self._send_retrying(req)
                return reply, attempts + n
            except StructuredModeUnsupported as e:
                if fmt is None:
                    raise
                attempts += getattr(e, "attempts", 1)
                mode = "prompt"
            except _Failed as f:
                attempts += f.attempts
                err = f.error
                raise ProviderFailed(
                    f"LLM provider failed for model {model!r} after {attempts} attempt(s)"
                    f"{' (retries exhausted)' if err.retryable else ' (not retryable)'}: {err}",
                    status=err.status,
                    attempts=attempts,
                    retryable=err.retryable,
                ) from err

    def _send_retrying(self, req: Request) -> tuple[RawReply, int]:
        cfg = self.config
        base_wait = tenacity.wait_exponential(
            multiplier=cfg.retry_initial_s, max=cfg.retry_max_s
        ) + tenacity.wait_random(0, cfg.retry_jitter_s)

        def wait(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            after = getattr(exc, "retry_after_s", None) or 0.0
            return max(base_wait(state), min(after, cfg.retry_max_s))

        attempts = 0
        try:
            for attempt in tenacity.Retrying(
                stop=tenacity.stop_after_attempt(cfg.max_retries + 1),
                wait=wait,
                retry=tenacity.retry_if_exception(lambda e: isinstance(e, ProviderError) and e.retryable),
                reraise=True,
            ):
                with attempt:
                    attempts += 1
                    try:
                        return self._request(req), attempts
                    except (StructuredModeUnsupported, ProviderError):
                        raise
                    except Exception as e:
                        pe = to_provider_error(e)
                        if pe is None:
                            raise  # a bug, not the provider: propagate unchanged
                        raise pe from e
        except ProviderError as e:
            raise _Failed(e, attempts) from e
        except StructuredModeUnsupported as e:
            e.attempts = attempts  # type: ignore[attr-defined]
            raise
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _usage(self, reply: CachedReply) -> Usage:
        price = self.config.price_for(reply.model)
        cost = 0.0
        if price is not None:
            cost = (reply.prompt_tokens * price.input + reply.completion_tokens * price.output) / 1_000_000
        return Usage(
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            cost_usd=cost,
            price_known=price is not None,
            estimated=reply.estimated,
        )


class _Failed(Exception):
    def __init__(self, error: ProviderError, attempts: int):
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts


def _checked(messages: list[dict]) -> list[dict]:
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role': ..., 'content': ...} dicts")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in _MESSAGE_ROLES or not isinstance(m.get("content"), str):
            raise ValueError(
                f"message {i} must be {{'role': one of {sorted(_MESSAGE_ROLES)}, 'content': str}}, got {m!r:.200}"
            )
        out.append(dict(m))
    return out


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


def _response_format(model: type[BaseModel]) -> dict[str, Any]:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", model.__name__)[:64] or "answer"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": _schema(model), "strict": False}}


def _user_part(rendered: list[dict]) -> list[dict]:
    return [m for m in rendered if m["role"] == "user"] or rendered


def _with_schema_instructions(messages: list[dict], model: type[BaseModel]) -> list[dict]:
    """Describe the schema in the conversation, for endpoints without ``response_format``."""
    from actsagent.prompts import render

    note = "\n\n".join(
        m["content"] for m in render("llm_json_instructions", schema=_schema(model), schema_name=model.__name__)
    )
    out = [dict(m) for m in messages]
    if out[-1]["role"] == "user":
        out[-1]["content"] = out[-1]["content"] + "\n\n" + note
    else:
        out.append({"role": "user", "content": note})
    return out


def _as_cached(reply: RawReply, messages: list[dict]) -> CachedReply:
    if reply.prompt_tokens is None or reply.completion_tokens is None:
        chars = sum(len(m["content"]) for m in messages)
        return CachedReply(
            text=reply.text,
            model=reply.model,
            prompt_tokens=chars // 4,
            completion_tokens=len(reply.text) // 4,
            estimated=True,
        )
    return CachedReply(
        text=reply.text, model=reply.model, prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens
    )


def _total(exchanges: list[_Exchange]) -> Usage:
    total = Usage()
    for e in exchanges:
        total = total + e.usage
    return total
