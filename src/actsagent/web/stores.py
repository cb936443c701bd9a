"""Which conversation store backs the copilot: the one place that knows both implementations (each of them
imports the shared ``web.store``, so the choice cannot live there)."""

from __future__ import annotations

from pathlib import Path

from actsagent.web.store import DEFAULT_LEASE_S, ConversationStore, StoreTarget, parse_store
from actsagent.web.store_pg import PostgresStore
from actsagent.web.store_sqlite import SqliteStore


def open_store(value: str | Path | StoreTarget | None, *, lease_s: float = DEFAULT_LEASE_S) -> ConversationStore:
    """The store ``value`` names, ready (tables made); a store that cannot be opened is one ``UserError``."""
    target = parse_store(value)
    if target.kind == "postgresql":
        return PostgresStore(target, lease_s=lease_s)
    return SqliteStore(target.path, lease_s=lease_s)
