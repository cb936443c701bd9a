"""`actsagent serve --host`: which addresses count as this machine only (the rest need a token), IPv6
in URLs, and a real server on the IPv6 loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import actsagent
from actsagent.cli import app
from actsagent.cli.web_cmds import bind_address
from actsagent.errors import UserError

runner = CliRunner()


@pytest.mark.parametrize(
    "host,expected",
    [
        ("127.0.0.1", ("127.0.0.1", "127.0.0.1", True)),
        ("127.8.9.10", ("127.8.9.10", "127.8.9.10", True)),
        ("localhost", ("localhost", "localhost", True)),
        ("LocalHost", ("LocalHost", "LocalHost", True)),
        ("::1", ("::1", "[::1]", True)),
        ("[::1]", ("::1", "[::1]", True)),
        (" ::ffff:127.0.0.1 ", ("::ffff:127.0.0.1", "[::ffff:127.0.0.1]", True)),
        ("0.0.0.0", ("0.0.0.0", "0.0.0.0", False)),
        ("::", ("::", "[::]", False)),
        ("[::]", ("::", "[::]", False)),
        ("192.168.1.5", ("192.168.1.5", "192.168.1.5", False)),
        ("fe80::1%eth0", ("fe80::1%eth0", "[fe80::1%eth0]", False)),
        ("copilot.example", ("copilot.example", "copilot.example", False)),
        ("127.1", ("127.1", "127.1", False)),  # not an address Python reads: a name, so a token is needed
    ],
)
def test_only_localhost_and_loopback_addresses_are_local(host, expected):
    assert bind_address(host) == expected


@pytest.mark.parametrize("host", ["", "   ", "[]", "a b", "[/bold]", "user@host", "localhost:8765", "http://x"])
def test_a_host_that_is_no_address_is_refused_without_echoing_it(host):
    with pytest.raises(UserError) as e:
        bind_address(host)
    assert str(e.value).startswith("--host ")
    assert not host.strip() or host.strip() not in str(e.value)  # the message is printed as rich markup


@pytest.mark.parametrize(
    "host,shown", [("0.0.0.0", "0.0.0.0"), ("::", "[::]"), ("[::]", "[::]"), ("copilot.example", "copilot.example")]
)
def test_a_reachable_host_needs_a_token(host, shown, tmp_path):
    res = runner.invoke(app, ["serve", "--host", host, "--db", str(tmp_path / "x.sqlite")])
    assert res.exit_code != 0
    assert str(res.exception) == (
        f"refusing to serve on {shown} without an access token: pass --token (or set "
        "ACTSAGENT_TOKEN) or --tokens, or bind to 127.0.0.1"
    )


def test_serve_on_the_ipv6_loopback(sqlite_db, tmp_path):
    with socket.socket(socket.AF_INET6) as s:
        s.bind(("::1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "ACTSAGENT_LOG_LEVEL": "info",
        "COLUMNS": "400",
        "PYTHONPATH": str(Path(actsagent.__file__).parents[1]),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from actsagent.cli import main; main()",
            "serve",
            "--host",
            "::1",
            "--port",
            str(port),
            "--db",
            str(sqlite_db.path),
            "--store",
            str(tmp_path / "c.sqlite"),
            "--no-llm",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first = proc.stdout.readline()
        assert first.startswith("actsagent copilot on ") and first.endswith(f" at http://[::1]:{port}/\n"), first
        log = []
        for line in proc.stderr:  # uvicorn says when it listens
            log.append(line)
            if "Uvicorn running on" in line:
                break
        assert log and "Uvicorn running on" in log[-1], "".join(log)
        with httpx.Client(base_url=f"http://[::1]:{port}") as c:
            status = c.get("/api/status")
            assert status.status_code == 200 and status.json()["dialect"] == "sqlite"
            assert c.get("/api/status", headers={"Host": f"[::1]:{port}"}).status_code == 200
            assert c.get("/api/status", headers={"Host": "evil.example"}).status_code == 400  # DNS rebinding
    finally:
        proc.terminate()
        proc.wait(10)
