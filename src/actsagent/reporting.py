"""One report format for every benchmark and batch job: JSON plus markdown, and a resumable log.

Batch jobs append one JSON line per finished item (flushed and fsynced), so a crash loses
at most the item in flight and a rerun skips what is already recorded.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

T = TypeVar("T")
R = TypeVar("R")


class ReportTable(BaseModel):
    title: str
    columns: list[str]
    rows: list[list[Any]]


class Report(BaseModel):
    name: str
    created_at: str = Field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    machine: dict[str, Any] = Field(
        default_factory=lambda: {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        }
    )
    config: dict[str, Any] = Field(default_factory=dict)
    summary: dict[str, Any] = Field(default_factory=dict)
    tables: list[ReportTable] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    plots: list[str] = Field(default_factory=list)

    def to_markdown(self) -> str:
        out = [
            f"# {self.name}",
            "",
            f"_generated {self.created_at} on {self.machine.get('platform')}, {self.machine.get('cpus')} CPUs_",
            "",
        ]
        if self.config:
            out += ["## Configuration", ""] + [f"- `{k}`: {v}" for k, v in self.config.items()] + [""]
        if self.summary:
            out += ["## Summary", "", "| metric | value |", "| --- | --- |"]
            out += [f"| {k} | {_fmt(v)} |" for k, v in self.summary.items()] + [""]
        for t in self.tables:
            out += [f"## {t.title}", "", "| " + " | ".join(t.columns) + " |", "|" + " --- |" * len(t.columns)]
            out += ["| " + " | ".join(_fmt(v) for v in r) + " |" for r in t.rows] + [""]
        for p in self.plots:
            out += [f"![{Path(p).stem}]({Path(p).name})", ""]
        if self.notes:
            out += ["## Notes", ""] + [f"- {n}" for n in self.notes] + [""]
        return "\n".join(out)

    def write(self, out_dir: str | Path, stem: str | None = None) -> tuple[Path, Path]:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        stem = stem or self.name.lower().replace(" ", "_")
        jp, mp = out / f"{stem}.json", out / f"{stem}.md"
        jp.write_text(self.model_dump_json(indent=2))
        mp.write_text(self.to_markdown())
        return jp, mp


def write_with_data(report: Report, data: BaseModel, out_dir: str | Path, stem: str) -> Report:
    """``<stem>.json`` / ``<stem>.md`` (the report for people) and ``<stem>_data.json`` (the typed figures behind
    it, for scripts and later pooling)."""
    out = Path(out_dir)
    report.write(out, stem=stem)
    (out / f"{stem}_data.json").write_text(data.model_dump_json(indent=2))
    return report


def save_figure(fig: Any, path: Path) -> Path:
    """Lay out, write (creating the folder) and close a matplotlib figure: an open figure per report leaks."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) < 100 else f"{v:.1f}"
    return str(v).replace("|", "\\|").replace("\n", " ")


class ResultLog:
    """Append-only JSONL keyed by ``key``; safe to kill at any moment, resumable."""

    def __init__(self, path: str | Path, key: str = "id") -> None:
        self.path = Path(path)
        self.key = key
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        with self.path.open("rb") as f:
            for line in f:
                if not line.endswith(b"\n"):
                    break  # a line cut by a crash: the item is redone
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return out

    def done(self) -> set[str]:
        return {str(r[self.key]) for r in self.records() if self.key in r}

    def _repair_tail(self) -> None:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with self.path.open("rb+") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) == b"\n":
                return
            data = self.path.read_bytes()
            f.seek(0)
            f.truncate(data.rfind(b"\n") + 1)

    def append(self, record: dict[str, Any], *, sync: bool = True) -> None:
        """One line, in the file at once (a killed process keeps it); ``sync=False`` leaves flushing it to disk to a
        later ``sync()`` (a writer that syncs once per batch instead of paying a disk flush per record)."""
        self._repair_tail()
        line = json.dumps(record, default=str, ensure_ascii=False) + "\n"
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            if sync:
                os.fsync(f.fileno())

    def sync(self) -> None:
        """Flush the lines appended so far to disk."""
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def pending(self, items: Iterable[Any], key_of) -> list[Any]:
        done = self.done()
        return [it for it in items if str(key_of(it)) not in done]

    @property
    def parts_dir(self) -> Path:
        """Where parallel writers (one per worker process) put their own logs until ``merge_parts``."""
        return self.path.with_name(self.path.name + ".parts")

    def part(self, name: str) -> ResultLog:
        """A partition log with one writer only (``name`` unique per process): no two writers share a file."""
        return ResultLog(self.parts_dir / f"{name}.jsonl", key=self.key)

    def merge_parts(self) -> int:
        """Append the partitions' records whose key is not here yet (once each), then drop the partitions.

        A worker killed mid-item leaves a cut last line (ignored: redone); an item done twice (a batch retried
        after its worker died) is kept once. Killed mid-merge, the next merge finds the same records and adds
        only what is still missing. Returns the number of records added."""
        parts = sorted(self.parts_dir.glob("*.jsonl")) if self.parts_dir.is_dir() else []
        if not parts:
            return 0
        seen = self.done()
        new = []
        for part in parts:
            for rec in ResultLog(part, key=self.key).records():
                k = str(rec.get(self.key))
                if self.key in rec and k not in seen:
                    seen.add(k)
                    new.append(rec)
        self._repair_tail()
        with self.path.open("a", encoding="utf-8") as f:
            f.writelines(json.dumps(r, default=str, ensure_ascii=False) + "\n" for r in new)
            f.flush()
            os.fsync(f.fileno())
        for part in parts:
            part.unlink()
        if not any(self.parts_dir.iterdir()):
            self.parts_dir.rmdir()
        return len(new)


def batch_progress(*, disable: bool = False, console: Console | None = None, eta: bool = True) -> Progress:
    """The progress bar every batch job shows: its label, the bar, done of total, the current item's
    ``info`` field, elapsed time and (with ``eta``) the time left."""
    columns: list[ProgressColumn] = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
    ]
    if eta:
        columns.append(TimeRemainingColumn())
    return Progress(*columns, console=console, disable=disable)


def run_in_pool(fn: Callable[[T], R], items: Iterable[T], *, workers: int, name: str) -> Iterator[R]:
    """``fn`` over ``items`` on ``workers`` threads, results in the order they finish.

    At most ``workers`` items are submitted at a time, so a batch that stops (an exception here or in the
    caller) leaves the rest unstarted, and each result can be logged before the next one is awaited."""
    workers = max(1, workers)
    queue = list(items)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name) as pool:
        running: set[Future[R]] = set()
        try:
            while queue or running:
                while queue and len(running) < workers:
                    running.add(pool.submit(fn, queue.pop(0)))
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    yield fut.result()
        finally:
            for fut in running:
                fut.cancel()
