"""A ChatModel over any LangChain ``BaseChatModel`` (ChatOpenAI, ChatAnthropic, ChatOllama, a fake).

Only ``_request`` is LangChain's: the response cache, retries with backoff, structured-output
parsing with its repair round and usage accounting are the shared ``ChatModel.complete`` path,
so a LangChain model behaves exactly like the OpenAI client inside the agent. One model can
serve every role, or a mapping ``{"planner": ..., "tools": ..., "judge": ...}`` one each.

Structured output is described in the prompt by default (every chat model can follow that);
``LLMConfig(structured_output="json_schema")`` binds ``response_format`` instead, for models
whose provider takes it (ChatOpenAI and compatibles).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from actsagent.errors import UserError
from actsagent.llm.base import ChatModel, RawReply, Request, StructuredMode
from actsagent.llm.config import ROLES, LLMConfig, RoleModels
from actsagent.llm.errors import ProviderError, to_provider_error
from actsagent.llm.usage import UsageLedger

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


class LangChainChatModel(ChatModel):
    """``models``: one BaseChatModel for every role, or a mapping role -> BaseChatModel (missing roles
    take the ``tools`` model). ``config`` defaults to no cache and each role named after its model."""

    def __init__(
        self,
        models: BaseChatModel | Mapping[str, BaseChatModel],
        *,
        config: LLMConfig | None = None,
        ledger: UsageLedger | None = None,
    ):
        self.models = _per_role(models)
        super().__init__(config or langchain_config(self.models), ledger=ledger)

    def structured_mode(self, model: str) -> StructuredMode:
        return "json_schema" if self.config.structured_output == "json_schema" else "prompt"

    def _request(self, request: Request) -> RawReply:
        """Temperature and the other sampling settings are the chat model's own; ``max_tokens`` is passed on."""
        chat = self.models[request.role]
        kwargs: dict[str, Any] = {}
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        try:
            reply = chat.invoke(to_langchain_messages(request.messages), **kwargs)
        except Exception as e:
            pe = to_provider_error(e) or _status_error(e)
            if pe is None:
                raise
            raise pe from e
        usage = getattr(reply, "usage_metadata", None) or {}
        meta = getattr(reply, "response_metadata", None) or {}
        model = str(meta.get("model_name") or meta.get("model") or request.model)
        return RawReply(
            text=_text(reply.content),
            model=model,
            prompt_tokens=usage.get("input_tokens"),
            completion_tokens=usage.get("output_tokens"),
        )


def as_chat_model(model: Any) -> Any:
    """Wrap a LangChain chat model (or a role mapping of them) as a ChatModel; anything else is returned as is."""
    if _is_langchain(model) or isinstance(model, Mapping):  # a mapping is checked role by role
        return LangChainChatModel(model)
    return model


def langchain_config(models: Mapping[str, BaseChatModel], **overrides: Any) -> LLMConfig:
    """Settings for wrapped models: each role named after its model (the cache key and the ledger use it);
    no price is known, so costs read 0 with ``price_known=False``."""
    names = RoleModels(**{role: model_name(m) for role, m in models.items()})
    return LLMConfig(**{"models": names, "prices": {}, **overrides})


def model_name(chat: BaseChatModel) -> str:
    for attr in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(chat, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(chat).__name__


def to_langchain_messages(messages: list[dict]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kinds = {"system": SystemMessage, "developer": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return [kinds.get(m["role"], HumanMessage)(content=m["content"]) for m in messages]


def _per_role(models: Any) -> dict[str, Any]:
    if _is_langchain(models):
        return {role: models for role in ROLES}
    if not isinstance(models, Mapping) or not all(_is_langchain(m) for m in models.values()):
        raise UserError("expected a LangChain BaseChatModel or a mapping role -> BaseChatModel")
    unknown = set(models) - set(ROLES)
    if unknown:
        raise UserError(f"unknown LLM role(s) {sorted(unknown)}; expected {', '.join(ROLES)}")
    fallback = models.get("tools") or next(iter(models.values()), None)
    if fallback is None:
        raise UserError("the role mapping of LangChain models is empty")
    return {role: models.get(role, fallback) for role in ROLES}


def _is_langchain(obj: Any) -> bool:
    # An instance of BaseChatModel means its module is loaded: when it is not, nothing is one, and the check
    # does not import it (with langsmith, about a second at the start of a command that may never use it).
    chat_models = sys.modules.get("langchain_core.language_models.chat_models")
    return chat_models is not None and isinstance(obj, chat_models.BaseChatModel)


def _text(content: Any) -> str:
    """A message's text: providers return a string or a list of content blocks."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def _status_error(e: BaseException) -> ProviderError | None:
    """Provider SDKs other than openai (anthropic, google, ...) carry an HTTP status on the exception."""
    status = getattr(e, "status_code", None)
    if not isinstance(status, int):
        return None
    return ProviderError(f"HTTP {status}: {e}", status=status, retryable=status in (408, 409, 429) or status >= 500)
