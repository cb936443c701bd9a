"""``actsagent birdcritic``: run a system on BIRD-CRITIC, or validate the scorer."""

from __future__ import annotations

from pathlib import Path

import typer

from actsagent.cli._common import print_summary

bc = typer.Typer(no_args_is_help=True, help="BIRD-CRITIC repair benchmark on the sample databases.")

SetOption = typer.Option("flash", "--set", help="task set: flash | pg530 | open-pg")


@bc.command("run")
def run_cmd(
    task_set: str = SetOption,
    system: str = typer.Option(..., "--system", help="issue_sql | baseline:<model> | acts:tree | acts:linear | "
                                                     "acts:regenerate | single_shot (optionally @model)"),
    out: Path = typer.Option(..., "--out", help="output folder (results.jsonl, summary.json/.md, plots)"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="first N tasks only"),
    ids: list[str] | None = typer.Option(None, "--ids", help="only these instance ids (repeat or comma-separate)"),
    workers: int = typer.Option(2, "--workers", min=1, max=16),
    scorer_variant: str = typer.Option("official", "--scorer-variant",
                                       help="official | checks (diagnostic: reproduces the checks/ reference run)"),
    json_out: bool = typer.Option(False, "--json", help="print the summary as JSON"),
) -> None:
    """Run (or resume) a system; finished tasks in OUT/results.jsonl are skipped."""
    from actsagent.errors import UserError

    if scorer_variant not in ("official", "checks"):
        raise UserError("--scorer-variant must be official or checks")
    from actsagent.birdcritic.runner import run_benchmark
    from actsagent.birdcritic.systems import make_system

    sys_obj = make_system(system, task_set)
    report = run_benchmark(task_set, sys_obj, out, workers=workers, limit=limit, ids=_split(ids),
                           scorer_variant=scorer_variant)
    print_summary(report.summary, json_out=json_out, footer=f"report: {out}")


@bc.command("validate")
def validate_cmd(
    out: Path = typer.Option(Path("evals/out/birdcritic_validation"), "--out"),
    sets: list[str] = typer.Option(["flash", "pg530"], "--set", help="task sets to validate on"),
    workers: int = typer.Option(2, "--workers", min=1, max=16),
    limit: int | None = typer.Option(None, "--limit", min=1),
    baselines: bool = typer.Option(True, "--baselines/--no-baselines", help="also score the six official baselines"),
) -> None:
    """Scorer validation: gold sol_sql vs checks/, then the official baselines; writes the table."""
    from actsagent.birdcritic.validate import validate

    report = validate(out, sets=sets, workers=workers, limit=limit, baselines=baselines)
    print_summary(report.summary, json_out=False, footer=f"report: {out}")


def _split(ids: list[str] | None) -> list[str] | None:
    if not ids:
        return None
    return [i.strip() for chunk in ids for i in chunk.split(",") if i.strip()]


def register(app: typer.Typer) -> None:
    app.add_typer(bc, name="birdcritic")
