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
    """Bounds every execution obeys; the database enforces the timeout, the fetch the row cap."""

    statement_timeout_s: float = Field(default=5.0, gt=0)
    max_rows: int = Field(default=1000, gt=0)
