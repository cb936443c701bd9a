"""Task loading: public fields only. The answer fields never enter a ``PublicTask``.

``ScoringKeys`` live in ``actsagent.birdcritic.scorer``; nothing in this module reads them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from actsagent import config
from actsagent.errors import UserError

TaskSet = Literal["flash", "pg530", "open-pg"]

TASK_FILES: dict[str, str] = {
    "flash": "tasks/flash_exp_200.jsonl",
    "pg530": "tasks/postgresql_530.jsonl",
    "open-pg": "tasks/open_600.jsonl",
}
BASELINE_FILES: dict[str, str] = {"flash": "flash.jsonl", "pg530": "pg530.jsonl"}

# The only fields a system under test may see (what a user filing the issue would have).
PUBLIC_FIELDS = (
    "instance_id",
    "db_id",
    "query",
    "issue_sql",
    "preprocess_sql",
    "clean_up_sql",
    "category",
    "efficiency",
)


class PublicTask(BaseModel):
    """One BIRD-CRITIC issue as a user would file it: no gold SQL, no test cases."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instance_id: str
    db_id: str
    query: str
    issue_sql: list[str]
    preprocess_sql: list[str] = []
    clean_up_sql: list[str] = []
    category: str
    efficiency: bool = False
    dialect: Literal["postgres"] = "postgres"


def data_dir() -> Path:
    """The BIRD-CRITIC folder (``tasks/``, ``databases/``, ...): ``$ACTSAGENT_BIRDCRITIC_DIR``, else
    ``$ACTSAGENT_DATA_DIR/birdcritic`` (``config.data_dir``)."""
    found = config.data_dir("birdcritic", "ACTSAGENT_BIRDCRITIC_DIR", holds="tasks")
    if found is None:
        raise UserError(
            "BIRD-CRITIC data not found: set ACTSAGENT_BIRDCRITIC_DIR to the folder holding tasks/ "
            "(or ACTSAGENT_DATA_DIR to the folder holding birdcritic/)"
        )
    return found


def task_file(task_set: str, root: Path | None = None) -> Path:
    if task_set not in TASK_FILES:
        raise UserError(f"unknown task set {task_set!r}: choose one of {', '.join(TASK_FILES)}")
    path = (root or data_dir()) / TASK_FILES[task_set]
    if not path.is_file():
        raise UserError(f"task file not found: {path}")
    return path


def iter_rows(path: Path):
    """Raw JSON rows of a task file, PostgreSQL tasks only (open-600 mixes dialects)."""
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise UserError(f"{path}:{n}: not JSON ({e})") from e
            if str(row.get("dialect", "PostgreSQL")).lower().startswith("postgres"):
                yield row


def _public(row: dict) -> PublicTask:
    fields = {k: row[k] for k in PUBLIC_FIELDS if k in row and row[k] is not None}
    fields["instance_id"] = str(row["instance_id"])
    for k in ("issue_sql", "preprocess_sql", "clean_up_sql"):
        v = fields.get(k)
        if isinstance(v, str):
            fields[k] = [v] if v.strip() else []
    fields["efficiency"] = bool(row.get("efficiency", False))
    return PublicTask(**fields)


def native_ids(task_set: str, root: Path | None = None) -> dict[str, int | str]:
    """The task file's own ids (ints in flash, strings such as ``PostgreSQL_0`` elsewhere) by their text.

    ``PublicTask.instance_id`` is always text; results are written with the file's type so they join
    with other tools' outputs on the same file.
    """
    return {str(r["instance_id"]): r["instance_id"] for r in iter_rows(task_file(task_set, root))}


def load_tasks(
    task_set: str, *, root: Path | None = None, ids: list[str] | None = None, limit: int | None = None
) -> list[PublicTask]:
    """Public tasks of a set, in file order; ``ids`` selects, ``limit`` truncates."""
    tasks = [_public(r) for r in iter_rows(task_file(task_set, root))]
    if ids:
        wanted = [str(i) for i in ids]
        by_id = {t.instance_id: t for t in tasks}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise UserError(f"no such task in {task_set}: {', '.join(missing[:10])}")
        tasks = [by_id[i] for i in wanted]
    if limit is not None:
        tasks = tasks[:limit]
    return tasks
