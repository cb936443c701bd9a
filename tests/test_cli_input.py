"""Bad command-line input: every numeric option of every command is bounds-checked before the command runs, and
whatever goes wrong ends as one line on stderr with a non-zero exit, never a traceback."""

from __future__ import annotations

import pytest
import typer
import typer.main

from actsagent.cli import app
from actsagent.cli._common import CheckedGroup, run_app
from actsagent.errors import UserError


def _run(capsys, args: list[str]) -> tuple[int, str, str]:
    code = run_app(app, args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "args,option",
    [
        (["sql", "SELECT 1", "--timeout", "0"], "--timeout"),
        (["sql", "SELECT 1", "--timeout", "-1"], "--timeout"),
        (["sql", "SELECT 1", "--timeout", "nan"], "--timeout"),
        (["sql", "SELECT 1", "--timeout", "inf"], "--timeout"),
        (["sql", "SELECT 1", "--timeout", "1e12"], "--timeout"),
        (["sql", "SELECT 1", "--max-rows", "0"], "--max-rows"),
        (["sql", "SELECT 1", "--max-rows", "-5"], "--max-rows"),
        (["sql", "SELECT 1", "--max-rows", "99999999999"], "--max-rows"),
        (["sql", "SELECT 1", "--max-rows", "many"], "--max-rows"),
        (["check", "SELECT 1", "--max-rows", "0"], "--max-rows"),
        (["refine", "SELECT 1", "--time-limit", "nan"], "--time-limit"),
        (["refine", "SELECT 1", "--alpha", "1.5"], "--alpha"),
        (["refine", "SELECT 1", "--alpha", "-inf"], "--alpha"),
        (["refine", "SELECT 1", "--k", "0"], "--k"),
        (["repair", "-i", "x", "-s", "SELECT 1", "--max-nodes", "-1"], "--max-nodes"),
        (["ask", "how many?", "--max-nodes", "0"], "--max-nodes"),
        (["clean", "in.jsonl", "--out", "o.jsonl", "--workers", "0"], "--workers"),
        (["db", "provision-role", "r", "--timeout", "inf"], "--timeout"),
        (["db", "provision-role", "r", "--connection-limit", "-1"], "--connection-limit"),
        (["birdcritic", "run", "--system", "issue_sql", "--out", "o", "--limit", "0"], "--limit"),
        (["serve", "--port", "70000"], "--port"),
    ],
)
def test_bad_numbers_are_one_line_and_exit_2(capsys, args, option):
    code, out, err = _run(capsys, args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"error: Invalid value for '{option}'"), err
    assert "Traceback" not in err and out == ""


def test_every_option_of_every_command_is_checked():
    root = typer.main.get_command(app)

    def walk(cmd, path):
        for p in cmd.params:
            yield path, p
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            yield from walk(sub, f"{path} {name}")

    params = list(walk(root, "actsagent"))
    assert len(params) > 40
    assert [(path, p.name) for path, p in params if not getattr(p.callback, "numbers_checked", False)] == []


def test_good_numbers_still_run(capsys, sqlite_db):
    code, out, err = _run(
        capsys,
        [
            "sql",
            "SELECT name FROM customers ORDER BY id",
            "--db",
            str(sqlite_db.path),
            "--timeout",
            "0.5",
            "--max-rows",
            "2",
            "--json",
        ],
    )
    assert code == 0, err
    assert '"Ada"' in out and '"truncated": true' in out


def test_library_errors_and_bugs_are_one_line(capsys, monkeypatch):
    demo = typer.Typer(cls=CheckedGroup)

    @demo.command()
    def user() -> None:
        raise UserError("no such thing:\n  look elsewhere")

    @demo.command()
    def bug() -> None:
        raise KeyError("boom")

    @demo.command()
    def model() -> None:
        from actsagent.config import Limits

        Limits(statement_timeout_s=-1)

    for name, code, message in (
        ("user", 1, "error: no such thing: look elsewhere"),
        ("bug", 1, "error: unexpected KeyError: 'boom' (a bug: set ACTSAGENT_DEBUG=1"),
        ("model", 2, "error: invalid value: statement_timeout_s: Input should be greater than 0"),
    ):
        assert run_app(demo, [name]) == code
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(message), err
    monkeypatch.setenv("ACTSAGENT_DEBUG", "1")
    with pytest.raises(KeyError):
        run_app(demo, ["bug"])


def test_usage_errors_name_the_help(capsys):
    code, _, err = _run(capsys, ["sql"])
    assert code == 2 and err == "error: Missing argument 'sql'. (see actsagent sql --help)\n"
    code, _, err = _run(capsys, ["no-such-command"])
    assert code == 2 and err.startswith("error: No such command 'no-such-command'.")


def test_a_binary_sql_file_is_one_line(capsys, tmp_path):
    sql_file = tmp_path / "query.sql"
    sql_file.write_bytes(b"SELECT \xff\xfe FROM t")
    code, _, err = _run(capsys, ["repair", "-i", "fix it", "--sql-file", str(sql_file)])
    assert code == 1 and err == f"error: {sql_file}: not UTF-8 text (byte 0xff at offset 7)\n"
