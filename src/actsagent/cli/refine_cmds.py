"""`actsagent refine`: SafeQL search-based refinement of one failing SELECT, without an LLM."""

from __future__ import annotations

import typer

from actsagent.cli._common import DbOption, JsonOption, console, err_console, print_json, rows_table
from actsagent.errors import UserError


def register(app: typer.Typer) -> None:
    app.command("refine")(refine_cmd)


def refine_cmd(
    sql: str = typer.Argument(..., help="the SELECT to refine"),
    db: str = DbOption,
    k: int = typer.Option(3, help="candidates kept per operator and target (top-K)"),
    alpha: float = typer.Option(0.35, help="weight of tree edit distance against embedding distance"),
    time_limit: float = typer.Option(5.0, help="search time limit in seconds"),
    json_out: bool = JsonOption,
) -> None:
    """Find the nearest query that executes (and returns rows), and print the edit path and the rows."""
    from actsagent.demo import open_target
    from actsagent.safeql import RefineOptions, refine

    if not sql.strip():
        raise UserError("give a SELECT to refine")
    try:
        opts = RefineOptions(k=k, alpha=alpha, time_limit_s=time_limit)
    except ValueError as e:
        raise UserError(f"bad option: {e}") from e
    res = refine(open_target(db), sql, options=opts)
    if json_out:
        print_json(res)
    else:
        colour = {"already_ok": "green", "refined": "yellow", "gave_up": "red"}[res.status]
        console.print(f"[bold {colour}]{res.status}[/]: {res.why}")
        if res.error_message:
            console.print(f"[dim]original problem ({res.error_class}): {res.error_message}[/]")
        for i, edit in enumerate(res.edits, 1):
            console.print(
                f"  {i}. [cyan]{edit.operator}[/] {edit.before!r} -> {edit.after!r} "
                f"[dim](token distance {edit.embed_distance:.3f})[/]: {edit.reason}",
                markup=True,
            )
        if res.refined_sql:
            console.print("[bold]refined SQL:[/]")
            console.print(res.refined_sql, markup=False, highlight=False, soft_wrap=True)
        if res.status != "gave_up":
            console.print(rows_table(res.columns, res.rows_preview))
        console.print(
            f"[dim]{res.candidates_explored} candidates executed, {res.candidates_generated} generated, "
            f"{res.pruned_by_type} cut by type, {res.pruned_by_topk} by top-K; "
            f"{res.elapsed_ms:.0f} ms (index {res.catalog_ms:.0f} ms)[/]"
        )
    if res.status == "gave_up":
        if not json_out:
            err_console.print("no executable refinement found")
        raise typer.Exit(1)
