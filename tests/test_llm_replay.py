"""Replay of exchanges recorded through the llm-relay (tests/fixtures/llm/relay_demo/).

The recordings were made with ``cache_mode="read_write"`` against the relay, a person answering;
here they replay with model requests forbidden, so the test proves the record/replay contract:
same request -> same answer, no network; changed request -> a clear ReplayMiss.
To re-record: ``python tests/test_llm_replay.py record`` with OPENAI_BASE_URL pointing at a relay.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

FIXTURES = Path(__file__).parent / "fixtures" / "llm" / "relay_demo"

SCHEMA_TEXT = (
    "customers(id integer primary key, name text, country text, created_at date)\n"
    "orders(id integer primary key, customer_id integer -> customers.id, status text, "
    "total numeric(10,2), ordered_at date)"
)
QUESTION = "Which column tells when an order was placed, and which table is it in?"
STRUCTURED = [
    {"role": "system", "content": "You map a question to the database column that answers it.\n" + SCHEMA_TEXT},
    {"role": "user", "content": QUESTION},
]
PLAIN = [
    {"role": "user", "content": "In one sentence: why does `SELECT name, SUM(total) FROM orders` fail on PostgreSQL?"}
]


class ColumnChoice(BaseModel):
    table: str
    column: str
    reason: str


def _config(mode: str):
    from actsagent.llm import LLMConfig, RoleModels

    # model names are part of the cache key: pin them so a developer's ACTSAGENT_MODEL cannot cause a miss
    return LLMConfig.from_env(models=RoleModels(), cache_mode=mode, cache_dir=FIXTURES, timeout_s=900, max_retries=0)


def test_recorded_exchanges_replay_without_requests():
    import actsagent.llm as llm
    from actsagent.llm import openai_model

    assert openai_model.ALLOW_MODEL_REQUESTS is False
    model = llm.get_chat_model(_config("replay_only"))
    choice = model.complete(STRUCTURED, role="tools", response_model=ColumnChoice)
    assert choice.cached and choice.attempts == 0
    assert (choice.parsed.table, choice.parsed.column) == ("orders", "ordered_at")
    plain = model.complete(PLAIN, role="judge")
    assert plain.cached and "GROUP BY" in plain.text
    assert model.ledger.totals().cached_calls == 2


def test_recordings_are_readable_and_complete():
    files = sorted(FIXTURES.glob("*.json"))
    assert len(files) == 2
    for f in files:
        doc = json.loads(f.read_text())
        assert doc["key"] == f.stem and doc["request"]["messages"] and doc["response"]["text"]


def test_changed_prompt_misses_clearly():
    from actsagent.llm import ReplayMiss, get_chat_model

    model = get_chat_model(_config("replay_only"))
    changed = [STRUCTURED[0], {"role": "user", "content": QUESTION + " "}]
    with pytest.raises(ReplayMiss, match="no recorded LLM response"):
        model.complete(changed, role="tools", response_model=ColumnChoice)


def _record() -> None:  # pragma: no cover - run by hand against a relay
    from actsagent.llm import get_chat_model

    model = get_chat_model(_config("read_write"))
    print(model.complete(STRUCTURED, role="tools", response_model=ColumnChoice))
    print(model.complete(PLAIN, role="judge"))


if __name__ == "__main__" and sys.argv[1:] == ["record"]:
    _record()
