"""`actsagent repair` and `actsagent ask`: the ACTS agent from the terminal, streaming each node as it runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from actsagent.cli._common import DbOption, JsonOption, console, err_console, print_json, rows_table
from actsagent.errors import UserError

if TYPE_CHECKING:
    from actsagent.graphs.models import AgentEvent


def register(app: typer.Typer) -> None:
    app.command("repair")(repair_cmd)
    app.command("ask")(ask_cmd)


def repair_cmd(
    intent: str = typer.Option(..., "--intent", "-i", help="what the SQL should do (the issue text)"),
    sql: str = typer.Option(None, "--sql", "-s", help="the faulty SQL"),
    sql_file: Path = typer.Option(None, "--sql-file", help="read the faulty SQL from a file"),
    db: str = DbOption,
    mode: str = typer.Option("tree", "--mode", "-m", help="tree | escalate | linear | regenerate | single_shot"),
    sandbox: bool = typer.Option(
        False, "--sandbox", help="allow DDL/DML (runs in a disposable copy of the database; PostgreSQL only)"
    ),
    interactive: bool = typer.Option(False, "--interactive", help="ask me when the intent is ambiguous"),
    max_nodes: int = typer.Option(24, "--max-nodes", help="node budget of the plan tree"),
    thread: str = typer.Option(None, "--thread", help="thread id: continue an interrupted run"),
    json_out: bool = JsonOption,
) -> None:
    """Repair a faulty SQL so it does what the intent says; prints the plan tree with its evidence."""
    from actsagent.graphs.models import mode_of

    mode_of(mode)
    if sql_file is not None:
        if sql:
            raise UserError("give --sql or --sql-file, not both")
        if not sql_file.is_file():
            raise UserError(f"no such file: {sql_file}")
        try:
            sql = sql_file.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as e:
            raise UserError(f"{sql_file}: not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start})") from e
    if not sql or not sql.strip():
        raise UserError("no SQL given: pass --sql or --sql-file (or use `actsagent ask` to start from a question)")
    _run(
        lambda **kw: _agent().repair(intent, sql, **kw),
        db,
        mode=mode,
        sandbox=sandbox,
        interactive=interactive,
        max_nodes=max_nodes,
        thread=thread,
        json_out=json_out,
    )


def ask_cmd(
    question: str = typer.Argument(..., help="a question about the data"),
    db: str = DbOption,
    interactive: bool = typer.Option(False, "--interactive", help="ask me when the question is ambiguous"),
    max_nodes: int = typer.Option(24, "--max-nodes", help="node budget of the plan tree"),
    use_kb: bool = typer.Option(
        None,
        "--kb/--no-kb",
        help="schema context from the knowledge base (built on first use) / always the schema listing; "
        "default: the knowledge base when one exists and the schema is too large to show whole",
    ),
    json_out: bool = JsonOption,
) -> None:
    """Write SQL for a question, then debug it with the same plan tree."""
    _run(
        lambda **kw: _agent().ask(question, **kw),
        db,
        mode="tree",
        sandbox=False,
        interactive=interactive,
        max_nodes=max_nodes,
        thread=None,
        json_out=json_out,
        schema_source="auto" if use_kb is None else "kb" if use_kb else "listing",
    )


def _agent():
    from actsagent import agent

    return agent


def _run(
    call,
    db_target: str | None,
    *,
    mode: str,
    sandbox: bool,
    interactive: bool,
    max_nodes: int,
    thread: str | None,
    json_out: bool,
    schema_source: str = "auto",
) -> None:
    from actsagent.demo import open_target
    from actsagent.graphs.models import Budget
    from actsagent.guard import Policy

    database = open_target(db_target, writable=sandbox)
    budget = Budget(max_nodes=max_nodes)
    on_event = None if json_out else _print_event
    kwargs: dict[str, Any] = {
        "budget": budget,
        "interactive": interactive and not json_out,
        "on_event": on_event,
        "schema_source": schema_source,
    }
    if mode != "tree":
        kwargs["mode"] = mode
    if thread:
        kwargs["thread_id"] = thread
    try:
        if sandbox:
            from actsagent.db.postgres import PostgresDatabase
            from actsagent.db.sandbox import sandbox as make_sandbox

            if not isinstance(database, PostgresDatabase):
                raise UserError("--sandbox needs PostgreSQL (it works in a disposable copy)")

            with make_sandbox(database) as box:
                run = call(db=box, policy=Policy.sandbox(), **kwargs)
        else:
            run = call(db=database, **kwargs)
            while run.status == "paused" and run.pending_clarification is not None:
                q = run.pending_clarification
                console.print(f"\n[bold yellow]?[/] {escape(q.question)}")
                for i, o in enumerate(q.options, 1):
                    console.print(f"  {i}. {escape(o)}")
                answer = typer.prompt("your answer (a number or your own words)")
                run = _agent().resume(
                    run.thread_id, answer, database, budget=budget, on_event=on_event, schema_source=schema_source
                )
    finally:
        database.close()
    if json_out:
        print_json(run)
    else:
        _print_run(run)
    if run.status == "failed":
        raise typer.Exit(1)


def _print_event(ev: AgentEvent) -> None:
    if ev.type == "node_start":
        console.print(f"[cyan]▶ {ev.node_id}[/] {escape(ev.message)}")
    elif ev.type == "node_end" and ev.node is not None:
        node = ev.node
        colour = {"done": "green", "accepted": "bold green", "refuted": "yellow", "failed": "red"}.get(
            node.status, "white"
        )
        stats = f"{node.ms:.0f} ms"
        if node.llm_calls:
            stats += f", {node.llm_calls} LLM call(s), {node.prompt_tokens + node.completion_tokens} tok"
        console.print(f"  [{colour}]{escape(ev.message)}[/] [dim]({stats})[/]")
        for line in (node.error or node.summary).splitlines()[:3]:
            console.print(f"    [dim]{escape(line[:150])}[/]")
    elif ev.type == "candidate":
        console.print(f"  [magenta]judge[/] {escape(ev.message[:200])}")
    elif ev.type == "plan":
        console.print("[bold]plan[/]")
        console.print(escape(ev.text), highlight=False)
    elif ev.type in ("note", "error"):
        console.print(f"[dim]{escape(ev.message[:200])}[/]")


def _print_run(run) -> None:
    colour = {"solved": "bold green", "best_effort": "yellow", "failed": "bold red", "paused": "yellow"}[run.status]
    console.print(
        f"\n[{colour}]{run.status}[/] ({run.mode}); {run.usage.llm_calls} LLM call(s), "
        f"{run.usage.prompt_tokens + run.usage.completion_tokens} tokens, "
        f"framework {run.framework_ms:.0f} ms"
    )
    if run.final_sql:
        console.print("[bold]final SQL[/]")
        console.print(escape(run.final_sql), highlight=False, soft_wrap=True)
    res = run.result
    if res is not None and res.ok:
        console.print(rows_table([c.name for c in res.columns], res.rows, max_rows=20))
    elif res is not None:
        err_console.print(f"[red]{res.error_class.value}[/] {escape(res.message)}")
    if run.verdict:
        console.print(f"[bold]verdict[/] {escape(run.verdict.summary())}")
    console.print("[bold]plan tree[/]")
    console.print(escape(run.tree.render_text()), highlight=False, soft_wrap=True)
    for n in run.notes:
        console.print(f"[dim]note: {escape(n)}[/]")
