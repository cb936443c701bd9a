"""Where runs are persisted: a SQLite checkpointer (langgraph-checkpoint-sqlite) in ACTSAGENT_HOME, or
PostgreSQL (langgraph-checkpoint-postgres) for copilot replicas that share one store.

Every super-step of a run is saved under its thread id, so an interrupted run (a crash, a
provider outage, a pause for clarification) continues from its last completed node. The state's typed
values are revived as the classes they were saved as, and only those (``state_types``).
"""

from __future__ import annotations

import sqlite3
import threading
from enum import Enum
from pathlib import Path
from typing import Any, get_args

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import BaseModel

from actsagent.config import home_dir
from actsagent.db.admin import advisory_lock
from actsagent.graphs.state import TreeState

_lock = threading.Lock()
_savers: dict[str, SqliteSaver] = {}


def checkpoint_path() -> Path:
    return home_dir() / "agent_runs.sqlite"


def get_checkpointer(path: str | Path | None = None) -> SqliteSaver:
    """One saver per file per process (SqliteSaver serialises its own access)."""
    p = str(path or checkpoint_path())
    with _lock:
        if p not in _savers:
            conn = sqlite3.connect(p, check_same_thread=False)
            saver = SqliteSaver(conn, serde=state_serializer())
            saver.setup()  # (sets WAL)
            # WAL: a crash of the process loses no committed checkpoint without an fsync per super-step (about 5 ms
            # each on a disk); a power cut may lose the last few, and the run then resumes from an earlier node
            conn.execute("PRAGMA synchronous=NORMAL")
            _savers[p] = saver
        return _savers[p]


def postgres_checkpointer(url: str, schema: str) -> Any:
    """A PostgresSaver (langgraph-checkpoint-postgres) over a pool of connections to ``url`` whose tables live in
    ``schema`` (which must exist): every replica of the copilot sees every run's checkpoints. Its tables are made
    under an advisory lock, so replicas starting at once do not race. Close it with ``saver.conn.close()``."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import DictRow, dict_row
    from psycopg_pool import ConnectionPool

    pool: ConnectionPool[psycopg.Connection[DictRow]] = ConnectionPool(
        url,
        connection_class=psycopg.Connection[DictRow],
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "options": f"-c search_path={schema}",
        },
        min_size=1,
        max_size=8,
        name="actsagent-checkpoints",
        open=True,
    )
    saver = PostgresSaver(pool)
    try:
        # a session lock, outside any transaction: the migrations' CREATE INDEX CONCURRENTLY waits for open ones
        with advisory_lock(url, f"actsagent checkpoints {schema}"):
            saver.setup()
    except BaseException:
        pool.close()
        raise
    return saver


def state_serializer() -> JsonPlusSerializer:
    """LangGraph's serializer, reviving the tree state's own models and enums (any other class stays plain
    data, which the state's models validate)."""
    return JsonPlusSerializer(allowed_msgpack_modules=[(t.__module__, t.__name__) for t in state_types()])


def state_types(tp: Any = TreeState, found: set[type] | None = None) -> set[type]:
    """Every pydantic model and enum a value of ``tp`` can hold, ``tp`` included."""
    found = set() if found is None else found
    if isinstance(tp, type) and issubclass(tp, (BaseModel, Enum)):
        if tp not in found:
            found.add(tp)
            for f in tp.model_fields.values() if issubclass(tp, BaseModel) else ():
                state_types(f.annotation, found)
        return found
    for arg in get_args(tp):
        state_types(arg, found)
    return found
