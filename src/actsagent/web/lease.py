"""A replica's heartbeat: while it beats, its running turns are its own; when it stops, another ends them.

A thread beats in the store every quarter of the lease and sweeps: any running turn whose replica has
been silent for the lease (killed mid-turn, or gone) is marked interrupted, by whichever replica sees it first.
"""

from __future__ import annotations

import logging
import threading

from actsagent.web.store import ConversationStore

log = logging.getLogger("actsagent.web")


class Heartbeat:
    def __init__(self, store: ConversationStore) -> None:
        self.store = store
        self.interval = max(0.2, store.lease_s / 4)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="copilot-heartbeat")

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval) and not self.store.closed:
            try:
                self.store.beat()
                self.store.mark_interrupted()
            except Exception as e:  # the store is down for a moment: beat again next time
                if not self.store.closed:
                    log.warning("copilot heartbeat failed: %s", e)

    def stop(self) -> None:
        self._stop.set()
