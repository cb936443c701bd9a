"""Schema refinement through views (EGRefine): obscure names renamed in a view layer, each rename kept
only when a workload of verified (question, SQL) pairs shows no loss; base tables are never touched.

    from actsagent import schema_refine as sr
    cands = sr.screen(db.schema())
    props = sr.propose_from_kb(cands, kb.load(db))
    ref = sr.refine(db, props, workload)              # PostgreSQL: views in schema "refined"
    sr.to_base("SELECT country FROM refined.mbr", ref, db.schema())   # back to the base tables
"""

from actsagent.schema_refine.models import Candidate, Decision, Proposal, Refinement, TableMap, WorkloadItem
from actsagent.schema_refine.refine import (
    TRIAL_SCHEMA,
    merge_proposals,
    propose_from_glossary,
    propose_from_kb,
    propose_with_llm,
    refine,
    screen,
)
from actsagent.schema_refine.views import (
    RefinedDatabase,
    create_views,
    drop_views,
    load_refinement,
    refined_info,
    to_base,
)

__all__ = [
    "TRIAL_SCHEMA",
    "Candidate",
    "Decision",
    "Proposal",
    "RefinedDatabase",
    "Refinement",
    "TableMap",
    "WorkloadItem",
    "create_views",
    "drop_views",
    "load_refinement",
    "merge_proposals",
    "propose_from_glossary",
    "propose_from_kb",
    "propose_with_llm",
    "refine",
    "refined_info",
    "screen",
    "to_base",
]
