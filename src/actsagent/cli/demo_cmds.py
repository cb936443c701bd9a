"""`actsagent demo`: the main job on the embedded demo shop, end to end, in one command."""

from __future__ import annotations

import json
from importlib import resources

import typer
from rich.markup import escape
from rich.rule import Rule

from actsagent.cli._common import DbOption, JsonOption, console, print_json


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo(
    db: str = DbOption,
    question: str = typer.Option(
        "How many orders were paid in each country we ship to?",
        "--question",
        "-q",
        help="a question to answer after the repairs (needs an LLM)",
    ),
    json_out: bool = JsonOption,
) -> None:
    """Repair broken queries on the demo shop database and answer a question, showing plan, SQL and rows."""
    from actsagent import agent
    from actsagent.cli.agent_cmds import _print_event, _print_run
    from actsagent.demo import open_target
    from actsagent.llm import llm_available

    cases = json.loads(resources.files("actsagent.demo").joinpath("cases.json").read_text())
    database = open_target(db)
    on_event = None if json_out else _print_event
    if not json_out:
        console.print(f"[bold]actsagent demo[/] on {escape(repr(database))}")
        if not llm_available():
            console.print(
                "[yellow]No LLM configured[/] (set OPENAI_API_KEY / OPENAI_BASE_URL): the agent runs its "
                "LLM-free path — guarded execution, SafeQL refinement, clause localisation."
            )
    runs = []
    try:
        for case in cases:
            if not json_out:
                console.print(Rule(f"[bold]repair[/]: {escape(case['intent'])}"))
                console.print(f"[dim]faulty SQL:[/] {escape(case['sql'])}", highlight=False)
            run = agent.repair(case["intent"], case["sql"], database, on_event=on_event)
            runs.append({"intent": case["intent"], "sql": case["sql"], "run": run.model_dump(mode="json")})
            if not json_out:
                _print_run(run)
        if llm_available():
            if not json_out:
                console.print(Rule(f"[bold]ask[/]: {escape(question)}"))
            run = agent.ask(question, database, on_event=on_event)
            runs.append({"question": question, "run": run.model_dump(mode="json")})
            if not json_out:
                _print_run(run)
        elif not json_out:
            console.print(Rule("[bold]ask[/]"))
            console.print(
                f"Answering a question ({escape(question)!r}) needs an LLM to write the first SQL; "
                "configure one and run `actsagent ask`."
            )
    finally:
        database.close()
    if json_out:
        print_json({"runs": runs})
    else:
        solved = sum(1 for r in runs if r["run"]["status"] in ("solved", "best_effort"))
        console.print(Rule())
        console.print(
            f"{solved} of {len(runs)} runs ended with SQL that executes. "
            "`solved` needs the judge (an LLM); without one the best executing candidate is "
            "reported as `best_effort`."
        )
