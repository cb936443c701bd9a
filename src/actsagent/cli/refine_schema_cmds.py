"""`actsagent refine-schema`: rename obscure tables and columns through views, verified on a workload."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from actsagent.cli._common import DbOption, JsonOption, console, print_json, rows_table
from actsagent.errors import UserError


def register(app: typer.Typer) -> None:
    app.command("refine-schema")(refine_schema_cmd)


def read_workload(path: Path):
    """A JSON list of {"question", "sql"} (or a benchmark's {"question", "gold_sql"}) items."""
    from pydantic import ValidationError

    from actsagent.schema_refine import WorkloadItem

    if not path.is_file():
        raise UserError(f"workload file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UserError(f"workload {path.name}: not a JSON file ({str(e).splitlines()[0]})") from e
    if not isinstance(data, list):
        raise UserError(f"workload {path.name}: expected a JSON list of {{question, sql}} items")
    items = []
    for i, raw in enumerate(data):
        if not isinstance(raw, dict):
            raise UserError(f"workload {path.name}: item {i} is not an object")
        try:
            items.append(
                WorkloadItem.model_validate(
                    {"question": str(raw.get("question") or ""), "sql": raw.get("sql") or raw.get("gold_sql")}
                )
            )
        except ValidationError as e:
            raise UserError(f"workload {path.name}: item {i} has no SQL ({e.errors()[0]['msg']})") from e
    return items


def refine_schema_cmd(
    db: str = DbOption,
    workload: Path = typer.Option(..., "--workload", "-w", help="verified (question, SQL) pairs, JSON"),
    schema: str = typer.Option("refined", "--schema", help="schema that receives the views"),
    threshold: float = typer.Option(0.5, "--threshold", help="obscurity (0..1) from which a name is screened"),
    llm: bool = typer.Option(False, "--llm", help="ask the configured LLM for names"),
    dry_run: bool = typer.Option(False, "--dry-run", help="verify, but create no views"),
    out: Path = typer.Option(None, "--out", "-o", help="also write the refinement as JSON"),
    json_out: bool = JsonOption,
) -> None:
    """Screen obscure names, propose names, keep those the workload verifies, create views (PostgreSQL)."""
    from actsagent import kb
    from actsagent import schema_refine as sr
    from actsagent.demo import open_target
    from actsagent.schema_refine.views import require_postgres

    if not 0 < threshold <= 1:
        raise UserError("--threshold must be greater than 0 and at most 1")
    items = read_workload(workload)
    database = open_target(db)
    try:
        require_postgres(database)
        k = kb.load(database) or kb.build(database)
        cands = sr.screen(database.schema(), threshold=threshold)
        props = sr.propose_from_kb(cands, k)
        if llm:
            from actsagent.llm import get_chat_model

            model = get_chat_model()
            if model is None:
                raise UserError("--llm needs a configured LLM (OPENAI_API_KEY / OPENAI_BASE_URL)")
            props = sr.propose_with_llm(cands, k, model) + props
        ref = sr.refine(database, props, items, schema=schema, materialise=not dry_run)
    finally:
        database.close()
    if out is not None:
        out.write_text(ref.model_dump_json(indent=2), encoding="utf-8")
    if json_out:
        print_json(
            {
                "screened": len(cands),
                "proposed": len(props),
                "renamed": ref.renamed(),
                "schema": None if dry_run else ref.schema_name,
                "refinement": ref.model_dump(mode="json"),
            }
        )
        return
    console.print(
        rows_table(
            ["table", "column", "kept name", "queries", "reason"],
            [[d.table, d.column or "", d.new or "-", d.queries, d.reason[:90]] for d in ref.decisions],
            title=f"{len(cands)} obscure names screened, {len(props)} proposals",
            max_rows=200,
        )
    )
    where = "verified only (--dry-run)" if dry_run else f"views in schema {escape(ref.schema_name)}"
    console.print(f"[green]{ref.renamed()} rename(s) kept[/]; {where}; base tables untouched")
    for line in ref.skipped_workload:
        console.print(f"[yellow]workload item skipped:[/] {escape(line)}")
