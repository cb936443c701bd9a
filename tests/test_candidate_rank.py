"""How the run's best candidate is chosen when no candidate was accepted (a budget or the tree ran out)."""

from __future__ import annotations

from actsagent.graphs.candidates import CandidateRecord, Candidates, outvoting
from actsagent.tools import Verdict
from actsagent.tools.verify import CheckResult, QueryOutput, ScenarioRun, Verification


def _rec(node: str, sql: str, status: str, score: float, **verdict) -> CandidateRecord:
    return CandidateRecord(
        node=node,
        sql=sql,
        executes=True,
        status=status,
        verdict=Verdict(passed=status != "refuted", method="llm", semantic_score=score, **verdict),
    )


def test_a_corroborated_candidate_ranks_with_the_verified_and_above_a_higher_scored_unconfirmed_one():
    pair = _rec("n1", "SELECT name FROM t", "unconfirmed", 8.0, corroborated=True)
    alone = _rec("n2", "SELECT name FROM t WHERE x", "unconfirmed", 9.5)
    assert Candidates(items=[alone, pair]).best().node == "n1"
    # among the top ones the shorter SQL wins (agreeing candidates differ only in how they are written)
    verified = _rec("n3", "SELECT name FROM t ORDER BY name", "verified", 9.9, confirmed=True)
    assert Candidates(items=[verified, pair]).best().node == "n1"


def test_refuted_candidates_rank_by_score_whatever_they_were_before():
    was_corroborated = _rec("n1", "SELECT 1", "refuted", 9.0, corroborated=True)
    other = _rec("n2", "SELECT 1 + 1 AS two", "refuted", 7.0)
    assert Candidates(items=[other, was_corroborated]).best().node == "n1"


def _ran(node: str, digest: str, status: str = "refuted", *, failed: bool = False, **verdict) -> CandidateRecord:
    """A candidate whose output on the sample scenario has ``digest`` (equal digests: the same rows)."""
    out = QueryOutput(ok=True, columns=["a"], row_count=1, digest=digest, sequence_digest=digest)
    results = [CheckResult(id="c1", kind="columns", status="failed" if failed else "passed")]
    ver = Verification(
        sql="",
        results=results,
        scenarios=[ScenarioRun(scenario="sample", title="the sample", status="ran", output=out)],
    )
    rec = _rec(node, f"SELECT {digest} /* {node} */", status, 9.0 if status != "refuted" else 3.0, **verdict)
    return rec.model_copy(update={"verification": ver, "order": int(node[1:])})


def test_two_agreeing_candidates_outvote_an_unconfirmed_choice_that_agrees_with_neither():
    a, b = _ran("n0", "x"), _ran("n1", "x")
    lone = _ran("n2", "y", "unconfirmed")
    group = outvoting(Candidates(items=[a, b, lone]), lone)
    assert [c.node for c in group] == ["n0", "n1"]  # the shorter SQL first, then the earlier


def test_no_outvoting_when_the_choice_has_support_or_the_others_fail_checks_or_stand_alone():
    a, b = _ran("n0", "x"), _ran("n1", "x")
    verified = _ran("n2", "y", "verified", confirmed=True)
    assert outvoting(Candidates(items=[a, b, verified]), verified) == []
    corroborated = _ran("n2", "y", "unconfirmed", corroborated=True)
    assert outvoting(Candidates(items=[a, b, corroborated]), corroborated) == []
    lone = _ran("n2", "y", "unconfirmed")
    assert outvoting(Candidates(items=[a, _ran("n1", "x", failed=True), lone]), lone) == []  # a failed check
    assert outvoting(Candidates(items=[a, _ran("n1", "z"), lone]), lone) == []  # no two agree
    twin = _ran("n3", "y")  # the choice agrees with one of them: it is not alone
    assert outvoting(Candidates(items=[a, b, lone, twin]), lone) == []
