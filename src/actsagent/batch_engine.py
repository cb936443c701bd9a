"""Where a batch job's items run: threads in this process (``local``) or actors on a Ray cluster (``ray``).

Both engines take a factory for the per-process worker (a ``Cleaner``, a BIRD-CRITIC ``TaskRunner``), so each
process keeps its own database pools and embedding model, and both yield one record per item as it finishes.
The local engine appends each record to the job's ``ResultLog``. Ray actors write their own partition of it
(``<log>.parts/<actor>-<pid>.jsonl``, one writer per file, so a cluster writes in parallel); the driver merges
the partitions into the log at the end, and before each run, so a rerun after a killed driver or worker skips
every item already recorded and keeps each item once. On a cluster of several machines the log must be on
storage every node shares. Each record is written as it finishes (a killed process keeps it) and flushed to disk
once per batch of records, not one disk flush per record.
"""

from __future__ import annotations

import math
import os
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from actsagent.errors import ActsagentError, UserError
from actsagent.reporting import ResultLog, run_in_pool

EngineName = Literal["local", "ray"]
RAY_MISSING = "--engine ray needs Ray, which is not installed: pip install 'actsagent[ray]'"
MAX_THREADS = 32  # the local engine's limit
RETRIES = 3  # restarts of a dead actor, and retries of the batch it held, before the run stops


class BatchWorker(Protocol):
    """What an engine runs: one JSON-ready record per item; ``close`` frees its databases."""

    def record(self, item: Any) -> dict[str, Any]: ...

    def close(self) -> None: ...


class Engine(BaseModel):
    """How to run a batch: ``workers`` threads (local) or actors of one CPU each (Ray)."""

    name: EngineName = "local"
    workers: int = Field(default=2, ge=1)
    address: str | None = None  # Ray: a cluster's address ("auto", "ray://host:10001"); None starts a local one
    batch: int = Field(default=8, ge=1)  # items per disk flush; Ray: at most this many per actor call


def parse_engine(name: str, *, workers: int, address: str | None = None) -> Engine:
    """The engine a command line asks for; one line when it is unknown, Ray is missing, or --address is misplaced."""
    if name not in ("local", "ray"):
        raise UserError(f"--engine must be local or ray, not {name!r}")
    if name == "ray":
        _ray()
    elif address:
        raise UserError("--address is the Ray cluster's address: use it with --engine ray")
    elif workers > MAX_THREADS:
        raise UserError(f"--workers above {MAX_THREADS} needs --engine ray (the local engine runs threads)")
    return Engine(name="ray" if name == "ray" else "local", workers=workers, address=address)


def run_batch(
    make_worker: Callable[[], BatchWorker], items: Sequence[Any], log: ResultLog, *, engine: Engine, name: str
) -> Iterator[dict[str, Any]]:
    """Every item's record, as it finishes, recorded in ``log`` (Ray: in partitions merged into it at the end)."""
    if engine.name == "ray":
        yield from _run_ray(make_worker, items, log, engine=engine, name=name)
        return
    worker = make_worker()
    unsynced = 0
    try:
        for rec in run_in_pool(worker.record, items, workers=engine.workers, name=name):
            log.append(rec, sync=False)  # in the file at once: a killed run keeps it
            unsynced += 1
            if unsynced == engine.batch:  # on disk once per batch, not a disk flush per item
                log.sync()
                unsynced = 0
            yield rec
    finally:
        worker.close()
        if unsynced:
            log.sync()


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError(RAY_MISSING) from None
    return ray


class _PartitionWriter:
    """A Ray actor: its own worker (databases, embedding model) and its own partition file."""

    def __init__(self, make_worker: Callable[[], BatchWorker], log_path: str, key: str, name: str) -> None:
        self.worker = make_worker()
        # a restarted actor is a new process: a new file, never one a dead process may have cut mid-line
        self.part = ResultLog(log_path, key=key).part(f"{name}-{os.getpid()}")

    def run(self, items: list[Any]) -> list[dict[str, Any]]:
        out = []
        for item in items:
            rec = self.worker.record(item)
            self.part.append(rec, sync=False)  # written at once: a killed worker keeps every finished item
            out.append(rec)
        if out:
            self.part.sync()  # on disk once per batch, before the driver counts it done
        return out


def _batches(items: Sequence[Any], engine: Engine) -> deque[list[Any]]:
    """The actor calls: ``engine.batch`` items each, fewer when the job is small, so that every actor gets work and
    none is left running a long batch alone at the end (5 tasks on 2 actors: 2, 2 and 1, not all 5 on one)."""
    size = max(1, min(engine.batch, math.ceil(len(items) / (2 * engine.workers))))
    return deque(list(items[i : i + size]) for i in range(0, len(items), size))


def _run_ray(
    make_worker: Callable[[], BatchWorker], items: Sequence[Any], log: ResultLog, *, engine: Engine, name: str
) -> Iterator[dict[str, Any]]:
    batches = _batches(items, engine)
    if not batches:  # nothing left to do (a rerun of a finished job): no cluster to start or join
        log.merge_parts()
        return
    ray = _ray()
    started = not ray.is_initialized()
    if started:
        try:
            ray.init(address=engine.address, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise UserError(f"cannot reach the Ray cluster at {engine.address or 'a new local one'}: {e}") from None
    actor_cls = ray.remote(num_cpus=1, max_restarts=RETRIES, max_task_retries=RETRIES)(_PartitionWriter)
    run = uuid.uuid4().hex[:8]
    n_actors = min(engine.workers, len(batches))  # no actor (a process, its databases and model) without work
    actors = [actor_cls.remote(make_worker, str(log.path), log.key, f"{name}-{run}-{i}") for i in range(n_actors)]
    running: dict[Any, Any] = {}  # call -> actor

    def give(actor: Any) -> None:
        if batches:
            running[actor.run.remote(batches.popleft())] = actor

    try:
        for actor in actors * 2:  # two calls per actor: its next batch waits while one runs
            give(actor)
        while running:
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                give(running.pop(ref))
                try:
                    recs = ray.get(ref)
                except ray.exceptions.RayTaskError as e:  # the worker raised (no LLM, database gone): one line
                    raise (e.cause if isinstance(e.cause, ActsagentError) else e) from None
                except ray.exceptions.RayActorError as e:
                    raise UserError(
                        f"a Ray worker died {RETRIES + 1} times on one batch ({type(e).__name__}); "
                        "rerun to resume: finished items are kept"
                    ) from None
                yield from recs
    finally:
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()
        log.merge_parts()
