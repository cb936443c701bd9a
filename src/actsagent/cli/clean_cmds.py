"""``actsagent clean``: keep, repair or reject (question, SQL, database) pairs for training."""

from __future__ import annotations

from pathlib import Path

import typer

from actsagent.cli._common import AddressOption, EngineOption, print_summary


def clean_cmd(
    input_path: Path = typer.Argument(..., metavar="INPUT", help=".jsonl or .csv with question, sql, db per row"),
    out: Path = typer.Option(..., "--out", help="output .jsonl (one verdict per pair; rerun to resume)"),
    workers: int = typer.Option(2, "--workers", min=1, max=1024, help="threads (local) or Ray actors"),
    engine: str = EngineOption,
    address: str | None = AddressOption,
    db: str | None = typer.Option(None, "--db", help="database for rows without a db column"),
    llm: bool | None = typer.Option(
        None, "--llm/--no-llm", help="use the agent's repair and judge (default: when an LLM is configured)"
    ),
    mode: str = typer.Option("tree", "--mode", help="agent mode with --llm: tree | linear (the modes with a judge)"),
    json_out: bool = typer.Option(False, "--json", help="print the summary as JSON"),
) -> None:
    """Write a verdict (kept / repaired / rejected, with reason and evidence) for every pair."""
    from actsagent.batch_engine import parse_engine
    from actsagent.clean import clean_file
    from actsagent.graphs.models import mode_of
    from actsagent.llm.config import llm_available

    agent_mode = mode_of(mode, ("tree", "linear"))  # the modes with a judge, which cleaning needs
    batch = parse_engine(engine, workers=workers, address=address)
    use_llm = llm_available() if llm is None else llm
    if use_llm and not llm_available():
        from actsagent.errors import LLMUnavailable

        raise LLMUnavailable("--llm needs a configured model (OPENAI_API_KEY / OPENAI_BASE_URL)")
    report = clean_file(input_path, out, use_llm=use_llm, mode=agent_mode, default_db=db, engine=batch)
    print_summary(
        report.summary, json_out=json_out, footer=f"verdicts: {out}  summary: {out.parent / (out.stem + '_summary.md')}"
    )


def register(app: typer.Typer) -> None:
    app.command("clean")(clean_cmd)
