"""The LLM layer: chat models for any OpenAI-compatible endpoint, structured outputs, retries,
a record/replay response cache, usage accounting, and a scripted model for tests.

    from actsagent.llm import get_chat_model
    model = get_chat_model()            # None when no LLM is configured: take the LLM-free path
    resp = model.complete(messages, role="planner", response_model=Plan)
    resp.parsed, resp.usage, resp.cached

``openai_model.ALLOW_MODEL_REQUESTS``: set to False (tests/conftest.py does) and ``OpenAIChatModel``
refuses to send anything; replayed cache entries and scripted models keep working.
"""

from __future__ import annotations

from actsagent.llm.base import ChatModel, RawReply, Request
from actsagent.llm.cache import ResponseCache, cache_key
from actsagent.llm.config import DEFAULT_MODEL, DEFAULT_PRICES, LLMConfig, ModelPrice, RoleModels, llm_available
from actsagent.llm.errors import (
    ModelRequestsBlocked,
    ProviderError,
    ProviderFailed,
    ReplayMiss,
    ScriptExhausted,
    StructuredOutputError,
)
from actsagent.llm.langchain_model import LangChainChatModel
from actsagent.llm.openai_model import OpenAIChatModel, allow_model_requests
from actsagent.llm.scripted import FailingChatModel, ScriptedCall, ScriptedChatModel, ScriptedReply, scripted_config
from actsagent.llm.structured import OutputInvalid, parse_structured
from actsagent.llm.usage import CallRecord, LLMResponse, RunUsage, Usage, UsageLedger, UsageTotals, current_labels


def get_chat_model(config: LLMConfig | None = None, *, ledger: UsageLedger | None = None) -> ChatModel | None:
    """The configured model, or None when no LLM is available (without an explicit ``config``).

    An explicit ``config`` always yields a model: that is how replay runs work without credentials
    (``LLMConfig(cache_mode="replay_only", cache_dir=...)``).
    """
    if config is None:
        if not llm_available():
            return None
        config = LLMConfig.from_env()
    return OpenAIChatModel(config, ledger=ledger)


__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_PRICES",
    "CallRecord",
    "ChatModel",
    "FailingChatModel",
    "LLMConfig",
    "LLMResponse",
    "LangChainChatModel",
    "ModelPrice",
    "ModelRequestsBlocked",
    "OpenAIChatModel",
    "OutputInvalid",
    "ProviderError",
    "ProviderFailed",
    "RawReply",
    "ReplayMiss",
    "Request",
    "ResponseCache",
    "RoleModels",
    "RunUsage",
    "ScriptExhausted",
    "ScriptedCall",
    "ScriptedChatModel",
    "ScriptedReply",
    "StructuredOutputError",
    "Usage",
    "UsageLedger",
    "UsageTotals",
    "allow_model_requests",
    "cache_key",
    "current_labels",
    "get_chat_model",
    "llm_available",
    "parse_structured",
    "scripted_config",
]
