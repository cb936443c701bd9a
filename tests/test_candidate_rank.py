"""How the run's best candidate is chosen when no candidate was accepted (a budget or the tree ran out)."""

from __future__ import annotations

from actsagent.graphs.candidates import CandidateRecord, Candidates
from actsagent.tools import Verdict


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
