"""LLM settings: endpoint, model per role, retry/cache behaviour and prices, read from the environment.

Environment variables (all optional):

- ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``: any OpenAI-compatible endpoint.
- ``ACTSAGENT_MODEL``: default model for every role; ``ACTSAGENT_MODEL_PLANNER``,
  ``ACTSAGENT_MODEL_TOOLS``, ``ACTSAGENT_MODEL_JUDGE`` override one role.
- ``ACTSAGENT_LLM_TEMPERATURE``, ``ACTSAGENT_LLM_TIMEOUT`` (seconds), ``ACTSAGENT_LLM_MAX_RETRIES``.
- ``ACTSAGENT_LLM_CACHE``: ``off`` (default), ``read_write`` or ``replay_only``;
  ``ACTSAGENT_LLM_CACHE_DIR`` (default ``home_dir()/llm_cache``).
- ``ACTSAGENT_LLM_PRICES``: JSON (inline or a file path) ``{"model": {"input": 0.15, "output": 0.6}}``
  in $ per 1M tokens, merged over the built-in table.
- ``ACTSAGENT_NO_LLM=1``: behave as if no model were configured.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr

from actsagent.config import home_dir
from actsagent.errors import UserError

Role = Literal["planner", "tools", "judge"]
ROLES: tuple[str, ...] = ("planner", "tools", "judge")
CacheMode = Literal["off", "read_write", "replay_only"]
DEFAULT_MODEL = "gpt-4o-mini"
_SNAPSHOT = re.compile(r"\d{4}-\d{2}-\d{2}|\d{4}|latest|preview(-\d{4}-\d{2}-\d{2})?")


class ModelPrice(BaseModel, frozen=True):
    """Dollars per one million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


# List prices (USD / 1M tokens) at the time of writing; override with ACTSAGENT_LLM_PRICES.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "gpt-4o-mini": ModelPrice(input=0.15, output=0.60),
    "gpt-4o": ModelPrice(input=2.50, output=10.00),
    "gpt-4.1": ModelPrice(input=2.00, output=8.00),
    "gpt-4.1-mini": ModelPrice(input=0.40, output=1.60),
    "gpt-4.1-nano": ModelPrice(input=0.10, output=0.40),
    "o3-mini": ModelPrice(input=1.10, output=4.40),
    "o4-mini": ModelPrice(input=1.10, output=4.40),
}


class RoleModels(BaseModel, frozen=True):
    """Which model serves which role of the agent."""

    planner: str = DEFAULT_MODEL
    tools: str = DEFAULT_MODEL
    judge: str = DEFAULT_MODEL


class LLMConfig(BaseModel, frozen=True):
    """Everything the LLM layer needs; build with ``LLMConfig.from_env()`` or explicitly (tests)."""

    base_url: str | None = None
    api_key: SecretStr | None = None
    models: RoleModels = RoleModels()
    temperature: float | None = Field(default=0.0, ge=0, le=2)  # None: do not send (some models reject it)
    max_tokens: int | None = Field(default=None, gt=0)
    timeout_s: float = Field(default=60.0, gt=0, validation_alias=AliasChoices("timeout_s", "timeout"))
    max_retries: int = Field(default=4, ge=0)  # retries after the first attempt
    retry_initial_s: float = Field(default=1.0, ge=0)  # exponential backoff: initial, cap and jitter
    retry_max_s: float = Field(default=30.0, ge=0)
    retry_jitter_s: float = Field(default=1.0, ge=0)
    cache_dir: Path = Field(default_factory=lambda: home_dir() / "llm_cache")
    cache_mode: CacheMode = "off"
    structured_output: Literal["auto", "json_schema", "prompt"] = "auto"  # auto: try json_schema, fall back
    prices: dict[str, ModelPrice] = Field(default_factory=lambda: dict(DEFAULT_PRICES))

    def model_for(self, role: str) -> str:
        if role not in ROLES:
            raise UserError(f"unknown LLM role {role!r}; expected one of {', '.join(ROLES)}")
        return getattr(self.models, role)

    def price_for(self, model: str) -> ModelPrice | None:
        """Exact name, else the known name of which ``model`` is a dated snapshot ("gpt-4o-2024-11-20")."""
        if model in self.prices:
            return self.prices[model]
        for name, price in self.prices.items():
            if model.startswith(name + "-") and _SNAPSHOT.fullmatch(model[len(name) + 1 :]):
                return price
        return None

    @classmethod
    def from_env(cls, **overrides) -> LLMConfig:
        """Read the variables listed in the module docstring; keyword arguments win."""
        env = os.environ
        default = env.get("ACTSAGENT_MODEL") or DEFAULT_MODEL
        models = RoleModels(**{r: env.get(f"ACTSAGENT_MODEL_{r.upper()}") or default for r in ROLES})
        values: dict = {
            "base_url": env.get("OPENAI_BASE_URL") or None,
            "api_key": env.get("OPENAI_API_KEY") or None,
            "models": models,
        }
        for field, var, conv in (
            ("temperature", "ACTSAGENT_LLM_TEMPERATURE", float),
            ("timeout_s", "ACTSAGENT_LLM_TIMEOUT", float),
            ("max_retries", "ACTSAGENT_LLM_MAX_RETRIES", int),
            ("cache_mode", "ACTSAGENT_LLM_CACHE", str),
            ("cache_dir", "ACTSAGENT_LLM_CACHE_DIR", Path),
        ):
            raw = env.get(var)
            if raw:
                try:
                    values[field] = conv(raw)
                except ValueError as e:
                    raise UserError(f"{var}={raw!r} is not valid: {e}") from e
        if env.get("ACTSAGENT_LLM_PRICES"):
            values["prices"] = {**DEFAULT_PRICES, **_read_prices(env["ACTSAGENT_LLM_PRICES"])}
        values.update(overrides)
        try:
            return cls(**values)
        except ValueError as e:
            raise UserError(f"invalid LLM settings: {e}") from e


def _read_prices(raw: str) -> dict[str, ModelPrice]:
    text = Path(raw).read_text() if not raw.lstrip().startswith("{") else raw
    try:
        data = json.loads(text)
        return {name: ModelPrice(**p) for name, p in data.items()}
    except (ValueError, TypeError, AttributeError) as e:
        raise UserError(f"ACTSAGENT_LLM_PRICES must map model -> {{'input': $, 'output': $}} per 1M tokens: {e}") from e


def llm_available() -> bool:
    """Whether an endpoint is configured (and not switched off with ACTSAGENT_NO_LLM=1)."""
    if os.environ.get("ACTSAGENT_NO_LLM", "").strip() not in ("", "0", "false", "no"):
        return False
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))
