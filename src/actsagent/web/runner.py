"""Turns run in worker threads; their steps are stored first, then announced to listeners.

A listener (an SSE response) replays what the store holds and then waits on the turn's
channel, so a page that reloads in the middle of an answer misses nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

from actsagent.web.flow import Step, failure_text
from actsagent.web.limits import MAX_MESSAGE_CHARS, bounded, bounded_tree, cut
from actsagent.web.models import WebEvent
from actsagent.web.store import ConversationStore

log = logging.getLogger("actsagent.web")


class Channel:
    """Events of one turn as they are produced; ``open`` while a worker writes to it."""

    def __init__(self, events: list[WebEvent]) -> None:
        self.events = list(events)
        self.open = True
        self.cond = threading.Condition()

    def push(self, ev: WebEvent) -> None:
        with self.cond:
            self.events.append(ev)
            self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            self.open = False
            self.cond.notify_all()

    def wait(self, after: int, timeout: float) -> tuple[list[WebEvent], bool]:
        """Events with seq > ``after`` (waiting up to ``timeout`` for some), and whether more may come."""
        with self.cond:
            if self.open and not any(e.seq > after for e in self.events):
                self.cond.wait(timeout)
            return [e for e in self.events if e.seq > after], self.open


class TurnRunner:
    def __init__(self, store: ConversationStore, *, workers: int = 4) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="copilot-turn")
        self._channels: dict[str, Channel] = {}
        self._lock = threading.Lock()

    def channel(self, turn_id: str) -> Channel | None:
        with self._lock:
            return self._channels.get(turn_id)

    def is_running(self, turn_id: str) -> bool:
        ch = self.channel(turn_id)
        return bool(ch and ch.open)

    def start(self, turn_id: str, steps: Callable[[], Iterator[Step]], *, fresh: bool = False) -> None:
        """Run ``steps`` for ``turn_id`` in a worker. The caller has set the turn ``running`` in the store
        (``add_turn`` or ``claim_turn``), which is what keeps a conversation to one turn at a time. A resumed
        turn's channel starts with the events stored so far; a ``fresh`` one (just added) has none to read."""
        with self._lock:
            existing = self._channels.get(turn_id)
            if existing is not None and existing.open:
                raise RuntimeError(f"turn {turn_id} is already running")
            ch = Channel([] if fresh else self.store.events(turn_id))
            self._channels[turn_id] = ch
        try:
            self._pool.submit(self._work, turn_id, ch, steps)
        except RuntimeError:  # shutting down: the turn will not run, so it must not hold its conversation
            ch.close()
            self.store.end_if_running(turn_id, "interrupted")
            raise

    def _work(self, turn_id: str, ch: Channel, steps: Callable[[], Iterator[Step]]) -> None:
        try:
            for ev in record(self.store, turn_id, steps()):
                ch.push(ev)
        except Exception as e:  # Flow turns failures into steps; this is a bug in the copilot itself
            log.exception("turn %s crashed", turn_id)
            try:
                for ev in record(
                    self.store,
                    turn_id,
                    iter(
                        [
                            Step(type="error", message=failure_text(e), data={"kind": "internal"}),
                            Step(type="done", data={"status": "failed"}),
                        ]
                    ),
                ):
                    ch.push(ev)
            except Exception:
                log.exception("turn %s: could not record its failure", turn_id)
        finally:
            self.store.end_if_running(turn_id)  # never leave the conversation locked
            ch.close()
            with self._lock:  # every event is in the store now: listeners from here on read it there
                if self._channels.get(turn_id) is ch:
                    del self._channels[turn_id]

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def record(store: ConversationStore, turn_id: str, steps: Iterator[Step]) -> Iterator[WebEvent]:
    """Store each step of a turn as an event (and the turn's outcome), then hand it on; every event is cut
    to the sizes of ``limits`` first, so neither the store nor a listener ever gets a huge one. The turn's
    seq is read once and counted here: one write per event."""
    seq = store.next_seq(turn_id)
    for step in steps:
        ev = store.add_event(
            WebEvent(
                turn_id=turn_id,
                seq=seq,
                type=step.type,
                node_id=step.node_id,
                message=cut(step.message, MAX_MESSAGE_CHARS),
                data=bounded(step.data),
                tree=bounded_tree(step.tree),
            )
        )
        seq = ev.seq + 1
        if step.type == "done":  # a turn marked interrupted meanwhile (its replica seemed gone) keeps that status
            store.finish_turn(turn_id, ev.data.get("status", "failed"), ev.data.get("final_sql"))
        elif step.type == "answer":
            store.update_turn(turn_id, answer=ev.message)
        yield ev
