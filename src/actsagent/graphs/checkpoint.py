"""Where runs are persisted: a SQLite checkpointer (langgraph-checkpoint-sqlite) in ACTSAGENT_HOME.

Every super-step of a run is saved under its thread id, so an interrupted run (a crash, a
provider outage, a pause for clarification) continues from its last completed node.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from actsagent.config import home_dir

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
            saver = SqliteSaver(conn)
            saver.setup()
            _savers[p] = saver
        return _savers[p]
