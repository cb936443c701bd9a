"""``actsagent birdcritic``: run a system on BIRD-CRITIC, compare runs, or validate the scorer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from actsagent.cli._common import AddressOption, EngineOption, print_summary

if TYPE_CHECKING:
    from actsagent.birdcritic.scorer import ScorerVariant

bc = typer.Typer(no_args_is_help=True, help="BIRD-CRITIC repair benchmark on the sample databases.")

SetOption = typer.Option("flash", "--set", help="task set: flash | pg530 | open-pg")


@bc.command("run")
def run_cmd(
    task_set: str = SetOption,
    system: str = typer.Option(
        ...,
        "--system",
        help="issue_sql | baseline:<model> | acts:tree | acts:linear | "
        "acts:regenerate | single_shot (optionally @model)",
    ),
    out: Path = typer.Option(..., "--out", help="output folder (results.jsonl, summary.json/.md, plots)"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="first N tasks only"),
    ids: list[str] | None = typer.Option(None, "--ids", help="only these instance ids (repeat or comma-separate)"),
    workers: int = typer.Option(2, "--workers", min=1, max=1024, help="threads (local, up to 32) or Ray actors"),
    engine: str = EngineOption,
    address: str | None = AddressOption,
    scorer_variant: str = typer.Option(
        "official", "--scorer-variant", help="official | checks (diagnostic: reproduces the checks/ reference run)"
    ),
    json_out: bool = typer.Option(False, "--json", help="print the summary as JSON"),
) -> None:
    """Run (or resume) a system; finished tasks in OUT/results.jsonl are skipped."""
    from actsagent.errors import UserError

    if scorer_variant not in ("official", "checks"):
        raise UserError("--scorer-variant must be official or checks")
    variant: ScorerVariant = "checks" if scorer_variant == "checks" else "official"
    from actsagent.batch_engine import parse_engine
    from actsagent.birdcritic.runner import run_benchmark
    from actsagent.birdcritic.systems import make_system

    batch = parse_engine(engine, workers=workers, address=address)
    sys_obj = make_system(system, task_set)
    report = run_benchmark(task_set, sys_obj, out, limit=limit, ids=_split(ids), scorer_variant=variant, engine=batch)
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


@bc.command("compare")
def compare_cmd(
    runs: list[Path] = typer.Argument(..., help="output folders of `actsagent birdcritic run` (two or more)"),
    out: Path = typer.Option(
        Path("birdcritic_compare"),
        "--out",
        help="folder for compare.json/.md, compare_data.json and compare_by_category.png",
    ),
    json_out: bool = typer.Option(False, "--json", help="print the comparison as JSON"),
) -> None:
    """Runs side by side on their shared tasks: passed overall and per category, cost, time, tasks won and lost."""
    from rich.markup import escape

    from actsagent.birdcritic.compare import compare, write
    from actsagent.cli._common import console, err_console, print_json, rows_table

    result = compare(runs)
    report = write(result, out)
    for w in result.warnings:  # stderr, so --json output stays clean
        err_console.print(f"[yellow]warning:[/] {escape(w)}")
    if json_out:
        print_json(result)
        return
    for t in report.tables:  # folder names and ids are shown as text, never as console markup
        console.print(
            rows_table(
                [escape(c) for c in t.columns],
                [[escape(str(v)) for v in r] for r in t.rows],
                title=escape(t.title),
                max_rows=100,
            )
        )
    console.print(f"report: {escape(str(out / 'compare.md'))}")


@bc.command("headroom")
def headroom_cmd(
    runs: list[Path] = typer.Argument(..., help="output folders of `actsagent birdcritic run`, one system each"),
    out: Path = typer.Option(
        Path("birdcritic_headroom"), "--out", help="folder for headroom.json/.md, headroom_data.json and headroom.png"
    ),
    k: int = typer.Option(3, "--k", min=1, max=9, help="answers per task for the sampling figures"),
    reference: str = typer.Option("single_shot", "--reference", help="the system the headroom is measured from"),
    json_out: bool = typer.Option(False, "--json", help="print the figures as JSON"),
) -> None:
    """Pool many runs' answers per task: what voting on k answers, a perfect choice among them, or among every
    answer given could reach, against a reference system."""
    from rich.markup import escape

    from actsagent.birdcritic.headroom import headroom, write
    from actsagent.cli._common import console, err_console, print_json, rows_table

    result = headroom(runs, k=k, reference=reference)
    report = write(result, out)
    for w in result.warnings:
        err_console.print(f"[yellow]warning:[/] {escape(w)}")
    if json_out:
        print_json(result)
        return
    for key, value in report.summary.items():  # system names come from the result files: text, never markup
        console.print(escape(f"{key}: {value}"))
    t = report.tables[0]
    keep = [i for i, c in enumerate(t.columns) if c not in ("tasks", f"tasks >={k}", "always", "mixed")]  # in the .md
    console.print(
        rows_table(
            [escape(t.columns[i]) for i in keep],
            [[escape(str(r[i])) for i in keep] for r in t.rows],
            title=escape(t.title),
        )
    )
    console.print(f"report: {escape(str(out / 'headroom.md'))}")


def _split(ids: list[str] | None) -> list[str] | None:
    if not ids:
        return None
    return [i.strip() for chunk in ids for i in chunk.split(",") if i.strip()]


def register(app: typer.Typer) -> None:
    app.add_typer(bc, name="birdcritic")
