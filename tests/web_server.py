"""The copilot on a real uvicorn server in a thread, on a free loopback port (browser and HTTP tests)."""

from __future__ import annotations

import socket
import threading

import uvicorn


class LiveServer:
    """``with LiveServer(app) as url:`` serves ``app`` at ``url`` (``http://127.0.0.1:PORT/``) until the block ends.

    The socket listens before uvicorn starts, so a request sent at once waits in the backlog instead of
    being refused: no polling for the server to come up.
    """

    def __init__(self, app) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.port}/"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()
