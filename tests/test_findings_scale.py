"""One verdict scale across kinds, and the minimum sample below which nothing is claimed."""

from __future__ import annotations

import pytest
from analytics_fixtures import RandomSpec, random_run

from rnr_sim.analytics import compute_metrics, load_run
from rnr_sim.analytics import findings as fnd
from rnr_sim.report.text import finding_text, scoring_rule, verdict_banners, verdict_empty


def F(kind, value, lo, hi, fair, n, se=None, deals=None, subject="s"):
    return fnd.Finding(kind, subject, value, lo, hi, fair, n, {}, se=se, deals=deals)


def test_too_few_games_is_not_judged():
    assert not F("deck", 0.9, 0.6, 1.0, 0.5, 20).judgeable  # 20 games
    assert not F("deck", 0.6, 0.58, 0.62, 0.5, 5000, deals=50).judgeable  # 50 deals
    assert not F("card", 0.2, 0.08, 0.32, 0.0, 5000).judgeable  # ±12 points wide
    assert F("deck", 0.6, 0.58, 0.62, 0.5, 5000, deals=2500).judgeable


def test_one_benjamini_hochberg_over_every_kind():
    # five candidates with p-values 1e-9, 0.01, 0.02, 0.03, 0.2 (from value / se):
    # BH at 5% over m = 5 keeps ranks 1-4 (0.03 <= 4/5 · 0.05 = 0.04), not 0.2
    z = {1e-9: 6.109, 0.01: 2.5758, 0.02: 2.3263, 0.03: 2.1701, 0.2: 1.2816}
    kinds = ["deck", "path", "card", "seat", "branch"]
    cands = [F(k, 0.5 + zz * 0.01, 0.5 + (zz - 1.96) * 0.01, 0.5 + (zz + 1.96) * 0.01,
               0.5, 10_000, se=0.01, subject=k) for k, zz in zip(kinds, z.values(),
                                                                    strict=True)]
    for c, p in zip(cands, z, strict=True):
        assert c.p == pytest.approx(p, rel=1e-2)
    judged = {c.kind: c.significant for c in fnd.judge(cands)}
    assert judged == {"deck": True, "path": True, "card": True, "seat": True,
                      "branch": False}
    # the same p = 0.03 fails when more candidates share the correction
    more = cands + [F("card", 0.5, 0.48, 0.52, 0.5, 10_000, se=0.01, subject=f"c{i}")
                    for i in range(20)]
    assert not {c.subject: c.significant for c in fnd.judge(more)}["seat"]


def test_unjudgeable_candidates_never_lead():
    cands = [F("card", 0.25, 0.1, 0.4, 0.0, 150, subject="noisy"),
             F("deck", 0.53, 0.52, 0.54, 0.5, 10_000, subject="real")]
    top = fnd.top_findings(cands)
    assert [f.subject for f in top] == ["real"]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    # 10 deals per table: 120 games over 6 tables
    path = random_run(tmp_path_factory.mktemp("runs") / "small",
                      RandomSpec(deals=10, mirrors=False, star_edge=0.4))
    return compute_metrics(load_run(path))


def test_a_twenty_deal_run_gets_a_banner_and_no_claim(small):
    assert small.findings == []
    banners = verdict_banners(small)
    assert len(banners) == 1 and banners[0].startswith("Too few games to judge: 120 games")
    assert "p < 0.001" not in verdict_empty(small)
    assert "too few games to judge" in verdict_empty(small)
    assert "nothing is claimed" in verdict_empty(small)


def test_a_large_run_has_no_banner(tmp_path):
    m = compute_metrics(load_run(random_run(tmp_path / "big", RandomSpec(deals=400))))
    assert verdict_banners(m) == []
    assert m.findings and all(f.significant and f.judgeable for f in m.findings)
    for f in m.findings:
        assert "p < 0.001" not in finding_text(f)


def test_the_rule_is_stated():
    rule = scoring_rule()
    for words in ("Benjamini-Hochberg", f"{fnd.MIN_GAMES} games", "too few games to judge",
                  "standard error", "percentage points"):
        assert words in rule
