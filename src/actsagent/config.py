"""Settings read from the environment, with the defaults the issues fix."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
from pydantic import BaseModel, Field


def home_dir() -> Path:
    """Where actsagent keeps its embedded database, caches and conversation store."""
    root = os.environ.get("ACTSAGENT_HOME")
    path = Path(root) if root else Path(platformdirs.user_data_dir("actsagent"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_model_path() -> str | None:
    """The offline embedding model: ACTSAGENT_EMBED_MODEL_PATH, else the workplace copy if present."""
    env = os.environ.get("ACTSAGENT_EMBED_MODEL_PATH")
    if env:
        return env
    # the offline copy beside a checkout (../shared/models), found from the working directory or the source tree
    for base in (Path.cwd().parent, Path(__file__).resolve().parents[3]):
        cand = base / "shared" / "models" / "all-MiniLM-L6-v2-onnx-int8"
        if (cand / "model.onnx").exists():
            return str(cand.resolve())
    return None


class Limits(BaseModel, frozen=True):
    """Bounds every execution obeys, so one hostile query cannot take the machine.

    The server enforces the statement timeout, ``work_mem`` and ``temp_file_limit`` (per transaction
    on a superuser connection; through the role's defaults on the read-only role, which may not SET
    it); the client enforces the row and byte caps in an incremental fetch and the same deadline
    (a result that is slow to transfer is cut too). On the embedded server a watchdog also cancels a
    query whose backend holds more than ``max_server_memory_mb`` of private memory (work_mem does not
    bound an aggregate such as string_agg). ``connect_timeout_s`` makes an unreachable server fail fast.
    """

    statement_timeout_s: float = Field(default=5.0, gt=0)
    max_rows: int = Field(default=1000, gt=0)
    max_result_bytes: int = Field(default=32 * 1024 * 1024, gt=0)
    work_mem_mb: int = Field(default=16, ge=1, le=2048)
    temp_file_limit_mb: int = Field(default=256, ge=1)
    max_server_memory_mb: int = Field(default=256, ge=16)
    connect_timeout_s: float = Field(default=3.0, gt=0)
