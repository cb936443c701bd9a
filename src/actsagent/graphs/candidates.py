"""The run's candidates as typed records, and how evidence decides between them.

Every generate_sql leaf yields one ``CandidateRecord``: its SQL, how it was written (minimal edit,
direct rewrite, under which reading), the checks' results on it and its verdict. A candidate is

* ``refuted``: it does not execute, a check failed, or the judge/comparison found it wrong;
* ``unconfirmed``: approved by the judge's reading, but nothing beyond that reading supports it;
* ``verified``: approved, and confirmed by evidence: a check with data the request fixes (its
  example, the state after DDL/DML, speed) that the original SQL fails and this candidate passes.
  An edge case the check writer made up does not confirm: it encodes the writer's own reading.
  A comparison's winner is approved; the candidates it beat are not.

An unconfirmed candidate may be *corroborated*: the judge approved it and an independently written
candidate it also approved returned the same results on every scenario. That ends the search (two
readings agree), but it is not verification: both texts may share one misreading.

The best candidate wins: verified before unconfirmed before refuted, then fewer failed checks,
more checks passed; among verified or corroborated ones the shorter SQL (doing no more than asked:
candidates that agree on every scenario differ only there), otherwise the higher judge score.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from actsagent.tools import Verdict
from actsagent.tools._sqltext import statements_text
from actsagent.tools.checks import CONFIRMING_KINDS
from actsagent.tools.compare import agree
from actsagent.tools.verify import Verification

CandidateStatus = Literal["refuted", "unconfirmed", "verified"]


class CandidateRecord(BaseModel):
    node: str
    order: int = 0
    sql: str | list[str]
    strategy: Literal["minimal_edit", "rewrite"] = "minimal_edit"
    source: str = "llm"
    hypothesis: str = ""
    executes: bool = False
    empty: bool = False
    verification: Verification | None = None
    verdict: Verdict
    status: CandidateStatus = "refuted"

    @property
    def origin(self) -> str:
        how = (
            "direct rewrite from the request"
            if self.strategy == "rewrite"
            else "minimal edit of the original"
            if self.source == "llm"
            else f"taken from the path ({self.source})"
        )
        return how + (f", reading: {self.hypothesis}" if self.hypothesis else "")

    @property
    def sound(self) -> bool:
        """It executes, returns rows and fails no check: nothing but a reading of it speaks against it."""
        return self.executes and not self.empty and not self.failed_checks

    @property
    def failed_checks(self) -> int:
        return len(self.verification.with_status("failed")) if self.verification else 0

    @property
    def passed_checks(self) -> int:
        return len(self.verification.with_status("passed")) if self.verification else 0

    def rank(self) -> tuple:
        """Verified and corroborated candidates rank together (either ends the search); candidates that agree
        differ only in how they are written, so there the shorter one (doing no more than asked) wins. Otherwise
        the judge's score counts first."""
        top = self.status == "verified" or (self.status == "unconfirmed" and self.verdict.corroborated)
        order = 2 if top else 1 if self.status == "unconfirmed" else 0
        score, short = self.verdict.semantic_score or 0.0, -len(statements_text(self.sql))
        tail = (short, score) if top else (score, short)
        return (order, self.executes, not self.empty, -self.failed_checks, self.passed_checks, *tail, -self.order)


class Candidates(BaseModel):
    """The candidates of one run (checkpointed in the graph state)."""

    items: list[CandidateRecord] = Field(default_factory=list)

    def get(self, node: str) -> CandidateRecord | None:
        return next((c for c in self.items if c.node == node), None)

    def put(self, rec: CandidateRecord) -> None:
        self.items = [c for c in self.items if c.node != rec.node] + [rec]

    def best(self) -> CandidateRecord | None:
        return max(self.items, key=CandidateRecord.rank, default=None)

    def verified(self) -> list[CandidateRecord]:
        return [c for c in self.items if c.status == "verified"]

    def approved(self, *, exclude: str) -> list[CandidateRecord]:
        """Earlier candidates the judge approved (rivals a new candidate must agree with or beat)."""
        return [c for c in self.items if c.node != exclude and c.status != "refuted" and c.verification is not None]


def plain_rewrite(cands: Candidates) -> CandidateRecord | None:
    """The direct rewrite from the request under no particular reading (the single-shot request), when it executes
    with rows and fails no check: what stands when the judge approved no candidate. The judge's scores of candidates
    it refuted are no basis to prefer one: replaying BIRD-CRITIC flash development draws 6 to 9 from their recorded
    exchanges, returning this rewrite instead of the best-scored refuted candidate changed 5 answers of the 221 tasks
    that replay fully, 3 from failing to passing and none the other way."""
    return next(
        (c for c in cands.items if c.strategy == "rewrite" and not c.hypothesis and c.sound),
        None,
    )


def _sound_others(cands: Candidates, chosen: CandidateRecord) -> list[CandidateRecord]:
    """The other candidates that execute with rows, fail no check and have results to compare with the choice's."""
    return [c for c in cands.items if c.node != chosen.node and c.sound and c.verification is not None]


def outvoting(cands: Candidates, chosen: CandidateRecord) -> list[CandidateRecord]:
    """Candidates that outvote an unconfirmed choice standing alone, best first; empty when none do.

    They are two or more candidates, written independently, that execute with rows, fail no check and return the
    same results on every scenario, while the choice (approved on the judge's reading alone, neither confirmed nor
    corroborated) agrees with none of them. The judge's approval of one lone text is then weaker than the agreement
    of two that it doubted: replaying BIRD-CRITIC flash development draws 6, 7 and 8 from their recorded exchanges,
    the rule changed the answer on 5 of the 162 tasks that replay fully, 2 from failing to passing and none the
    other way. Among the agreeing ones the shorter SQL comes first (they differ only in how they are written)."""
    mine = chosen.verification
    if chosen.status == "verified" or chosen.verdict.corroborated or mine is None:
        return []
    sound = _sound_others(cands, chosen)
    if any(agree(mine, c.verification) for c in sound):  # type: ignore[arg-type]
        return []
    groups = [[d for d in sound if d is c or agree(c.verification, d.verification)] for c in sound]  # type: ignore[arg-type]
    best = max(groups, key=lambda g: (len(g), max(CandidateRecord.rank(d) for d in g)), default=[])
    if len(best) < 2:
        return []
    return sorted(best, key=lambda c: (len(statements_text(c.sql)), c.order))


def alternatives(cands: Candidates, chosen: CandidateRecord, *, limit: int = 3) -> list[CandidateRecord]:
    """Other readings still standing beside an answer no check confirmed, best first, one per distinct result.

    They execute with rows, fail no check, return results of their own (the chosen SQL's differ on some scenario)
    and no judgement found them wrong: not the judge's own word, not a side-by-side comparison. Where readings
    split and no evidence settles it, the user is the one who knows: the run names them rather than hiding them
    behind one choice. On BIRD-CRITIC flash a quarter of the tasks are failed by every answer of every system
    (SQL that runs, on a reading other than the author's); replayed on draws 6 to 10, runs that named other
    readings passed 55% of the time against 70% for those that named none, and on 3 of 279 tasks a named reading
    passes where the answer fails."""
    mine = chosen.verification
    if chosen.status == "verified" or mine is None:
        return []
    out: list[CandidateRecord] = []
    for c in sorted(_sound_others(cands, chosen), key=CandidateRecord.rank, reverse=True):
        theirs = c.verification
        if (c.verdict.method == "comparison" and not c.verdict.passed) or (
            c.verdict.scores is not None and c.verdict.scores.verdict == "wrong"
        ):
            continue
        if agree(mine, theirs) or any(agree(o.verification, theirs) for o in out):  # type: ignore[arg-type]
            continue
        out.append(c)
    return out[:limit]


def confirming_checks(ver: Verification, original: Verification | None) -> list[str]:
    """Checks with data the request fixes (its example, the state it asks for, speed) that this SQL passes and the
    original SQL fails (or cannot run on at all): a pass the original would also get does not show the fix is
    right, and an edge case the check writer made up shows only that the SQL follows the writer's reading."""
    out = []
    for r in ver.with_status("passed"):
        if r.kind not in CONFIRMING_KINDS:
            continue
        if r.kind == "faster":
            out.append(f"{r.id} {r.detail}")
            continue
        theirs = original.result(r.id) if original is not None else None
        if theirs is None or theirs.status == "failed":
            out.append(f"{r.id} {r.kind} passes (the original {'fails it' if theirs else 'did not run'})")
    return out


def doubted_checks(cands: Candidates, ver: Verification | None) -> list[str]:
    """Checks this SQL fails that every earlier candidate failed too. Checks are written by the model before any
    candidate: when independently written candidates all fail one, the check may be what is wrong, so it stops
    refuting on its own and the judge weighs it (a check some candidate passes keeps refuting)."""
    earlier = [c.verification for c in cands.items if c.verification is not None]
    if ver is None or not earlier:
        return []
    return [r.id for r in ver.with_status("failed") if all(_fails(e, r.id) for e in earlier)]


def _fails(ver: Verification, check_id: str) -> bool:
    r = ver.result(check_id)
    return r is not None and r.status == "failed"
