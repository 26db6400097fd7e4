"""``rnr-sim check coverage --power``: the coverage count against a measured truth (on
simulated intervals, with a tolerance from their number), the fixed arms it picks, and the
command end to end at a tiny size (the coverage measured at real sizes is in
docs/statistics.md)."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from fake_engine import REAL_ENGINE, REPO
from typer.testing import CliRunner

from rnr_sim.analytics.stats import Z95, paired_gain
from rnr_sim.checks import power_coverage as coverage
from rnr_sim.power import swaps
from rnr_sim.power.race import Arm

needs_engine = pytest.mark.skipif(not REAL_ENGINE, reason="needs the real engine's play")
SAMPLE = sorted((REPO / "decks").glob("*.txt"))


def simulated(subjects: int, seeds: int, se: float, truth_se: float, rng) -> pl.DataFrame:
    """Calibrated intervals ``value ± z se`` around a true gain, each subject's truth
    measured once with standard error ``truth_se``."""
    true = rng.normal(0, 0.05, subjects)
    truth = true + rng.normal(0, truth_se, subjects)
    value = true[:, None] + rng.normal(0, se, (subjects, seeds))
    return pl.DataFrame({
        "family": coverage.CUT, "subject": np.repeat([f"s{i}" for i in range(subjects)], seeds),
        "seed": np.tile(np.arange(seeds), subjects), "value": value.ravel(), "se": se,
        "truth": np.repeat(truth, seeds), "truth_se": truth_se,
    })


def test_calibrated_intervals_hold_a_noisy_truth_95_percent_once_widened():
    # the truth measured with the seeds' own standard error: unwidened, |g - truth| has
    # sqrt(2) se and a ±1.96 se interval holds it P(|Z| < 1.96 / sqrt 2) = 83.4% of the
    # time; widened to 1.96 sqrt(se² + truth_se²), 95%. A subject's intervals share its
    # truth's error, so the tolerance counts subjects, not intervals: 3 standard errors
    # of a share over 2,000 subjects
    rng = np.random.default_rng(7)
    n = 2000
    frame = simulated(n, 10, se=0.01, truth_se=0.01, rng=rng)
    t = {r["family"]: r for r in coverage.truth_coverage(frame).iter_rows(named=True)}
    got = t[coverage.CUT]
    assert abs(got["coverage"] - 0.95) < 3 * math.sqrt(0.95 * 0.05 / n)
    assert got["coverage_lo"] <= got["coverage"] <= got["coverage_hi"]
    assert got["spread"] == pytest.approx(1.0, abs=3 * math.sqrt(2 / (9 * n)))
    # the pooled family counts the same intervals
    assert (t[coverage.EVERY]["intervals"], t[coverage.EVERY]["covered"]) == (
        got["intervals"], got["covered"])
    unwidened = coverage.truth_coverage(frame.with_columns(pl.lit(0.0).alias("truth_se")))
    p = math.erf(Z95 / 2)  # P(|Z| < 1.96 / sqrt 2)
    assert abs(unwidened["coverage"][0] - p) < 3 * math.sqrt(p * (1 - p) / n)


def test_a_subject_that_never_moves_and_equals_its_truth_is_not_counted():
    rows = [("f", s, k, v, 1e-6, t, 1e-6) for s, v, t in (("still", 0.0, 0.0),
                                                           ("missed", 0.0, 0.01))
            for k in range(3)]
    frame = pl.DataFrame(rows, schema=coverage.INTERVAL_COLUMNS, orient="row")
    t = coverage.truth_coverage(frame).filter(pl.col("family") == "f").row(0, named=True)
    # the swap that changes no game holds trivially; zero in every seed against a truth
    # that is not zero is a miss in every seed
    assert (t["subjects"], t["intervals"], t["covered"]) == (1, 3, 0)


def test_the_mean_over_hosts_averages_per_deal_differences_before_the_gain():
    rng = np.random.default_rng(1)
    w = np.array([0.5, 0.5])
    arms = [Arm(0, np.zeros(1), diff=[rng.normal(size=(2, 30))]) for _ in range(3)]
    probes = [coverage.Probe("one", "a", [1]), coverage.Probe("mean", "m", [0, 1, 2])]
    one, mean = coverage.gains(arms, probes, w)
    assert one == pytest.approx(arms[1].gain(w))
    g, se = paired_gain(np.mean([a.differences() for a in arms], axis=0), w)
    assert mean == pytest.approx((g, se))


def test_the_fixed_arms_are_legal_swaps_of_each_kind():
    from rnr_sim.discover.genome import Laws
    from rnr_sim.runs import planning

    plan = planning.plan_run(planning.RunOptions(decks=SAMPLE, games=1))
    laws = Laws.of(plan.catalog, plan.profile)
    hosts = [swaps.Host(d.name, np.asarray(d.card_ids, dtype=np.int32), 0) for d in plan.decks]
    arms, probes = coverage.pick(laws, hosts, np.random.default_rng(3))
    again, _ = coverage.pick(laws, hosts, np.random.default_rng(3))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(arms, again, strict=True))
    kinds = {f: [p for p in probes if p.family == f] for f in coverage.FAMILIES}
    assert [len(kinds[f]) for f in (coverage.ONE_COPY, coverage.CUT, coverage.MEAN)] == [
        coverage.ONE_COPY_ARMS, coverage.CUT_ARMS, coverage.MEAN_CARDS]
    for p in probes:
        for i in p.arms:
            h, slots = arms[i]
            assert laws.legal(np.bincount(slots, minlength=laws.n_cards))
            changed = np.flatnonzero(slots != hosts[h].slots)
            if p.family == coverage.ONE_COPY:
                assert len(changed) == 1
            elif p.family == coverage.CUT:
                gone = set(hosts[h].slots[changed].tolist())
                assert len(gone) == 1 and not np.isin(slots, list(gone)).any()
            else:  # a full set came in
                card = int(slots[changed[0]])
                assert (slots == card).sum() == swaps.levels(laws, card)[-1]
    # a mean over hosts averages full-set arms of one card, each in its own host
    full = {q.arms[0] for q in kinds[coverage.FULL_SET]}
    for p in kinds[coverage.MEAN]:
        assert len(p.arms) >= 2 and set(p.arms) <= full
        assert len({arms[i][0] for i in p.arms}) == len(p.arms)
        assert p.subject.split(",")[0] in {q.subject.split(": ")[1]
                                            for q in kinds[coverage.FULL_SET]}


@pytest.fixture
def cli():
    from rnr_sim.cli import app

    def invoke(*args):
        return CliRunner().invoke(app, [str(a) for a in args], prog_name="rnr-sim")

    return invoke


@needs_engine
def test_check_coverage_power_plays_the_seeds_and_counts_every_family(cli, engine):
    res = cli("check", "coverage", "--power", "--seeds", "3", "--games", "2", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["seeds"] == [20251129, 20251130, 20251131] and out["games"] == 2
    assert out["reference_deals"] == coverage.REFERENCE_FACTOR * 2
    assert out["reference_seed"] == 20251129 + coverage.REFERENCE_SEED_OFFSET
    hosts = {s["subject"].split(":")[0] for s in out["subjects"]
             if s["family"] != coverage.MEAN}
    # every arm and each host it came from, on the reference's deals and each seed's, 9
    # field decks, both seat orders
    assert out["total_games"] == (out["arms"] + len(hosts)) * (40 + 3 * 2) * 9 * 2
    fams = {f["family"]: f for f in out["families"]}
    assert set(fams) <= {*coverage.FAMILIES, coverage.EVERY}
    assert fams[coverage.EVERY]["intervals"] == sum(
        f["intervals"] for name, f in fams.items() if name != coverage.EVERY)
    for f in out["families"]:
        assert 0 <= f["covered"] <= f["intervals"] <= 3 * f["subjects"]
        assert f["coverage_lo"] <= f["coverage"] <= f["coverage_hi"]
    assert all(s["seeds"] == 3 for s in out["subjects"])


@needs_engine
def test_check_coverage_power_text_table(cli, engine):
    res = cli("check", "coverage", "--power", "--seeds", "3", "--games", "2")
    assert res.exit_code == 0, res.output
    assert "power's paired 95% intervals" in res.stdout
    assert coverage.EVERY in res.stdout and "Subjects" in res.stdout


@pytest.mark.parametrize("args, words", [(("--mirrors",), "--mirrors"),
                                         (("--compare",), "--compare"),
                                         (("--players", "3"), "--players"),
                                         (("--games", "1"), "--games")])
def test_check_coverage_power_refuses_what_it_does_not_read(cli, args, words):
    res = cli("check", "coverage", "--power", *args)
    assert res.exit_code == 2
    assert words in res.output and len(res.output.strip().splitlines()) == 1
