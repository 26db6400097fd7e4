"""``rnr-sim compare`` (issue 6): baseline and variant on the same deals, paired intervals,
sequential stopping, the two run dirs, the report and the CLI.

Runs on the real engine when it is importable (the tests that need real play skip on the
fake one). Four sample decks, one of which (Four Branches Convention) holds Minuteman
Volley: 6 tables x 2 seat orders = 12 games per deal, a few thousand games per run.
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from fake_engine import REAL_ENGINE, REPO

from rnr_sim import cli
from rnr_sim.compare import CompareOptions, compare_runs, run_compare
from rnr_sim.compare.paired import FEW_DEALS, Combination, Estimate, score_interval
from rnr_sim.compare.runs import chow_robbins_need, deck_half_widths
from rnr_sim.errors import InputError
from rnr_sim.runs import manifests, planning, runner

DECKS = [REPO / "decks" / f"{n}.txt" for n in (
    "four_branches_convention", "abolitionist_front", "eagle_blockade", "scroll_assembly")]
HOLDER = "Four Branches Convention"  # the only one of DECKS with Minuteman Volley
#: Decks that win by Life and Attack: where UAs drain matters to the victory paths.
DRAIN_DECKS = [REPO / "decks" / f"{n}.txt" for n in (
    "bison_stampede", "post_road_raiders", "bison_bell_uprising", "liberty_bell_vanguard")]
STRONG = '[cards."Minuteman Volley"]\ndamage = 20\ncost = 1\n'
DRAIN = 'ua_drain_target = "opponent"\n'

pytestmark = pytest.mark.skipif(not all(d.exists() for d in DECKS + DRAIN_DECKS),
                                reason="the sample decks are not written yet")
needs_engine = pytest.mark.skipif(not REAL_ENGINE, reason="needs the real engine's play")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs")
    out = {}
    for name, text in (("empty.toml", "# no change\n"), ("strong.toml", STRONG),
                       ("drain.toml", DRAIN)):
        (d / name).write_text(text, encoding="utf-8")
        out[name.split(".")[0]] = d / name
    return out


def compare(out, **kw):
    kw.setdefault("decks", DECKS)
    result = run_compare(CompareOptions(out=out, **kw), progress=False, log=lambda m: None)
    return result, compare_runs(result.baseline_dir, result.variant_dir)


@pytest.fixture(scope="module")
def empty(module_engine, files, tmp_path_factory):
    return compare(tmp_path_factory.mktemp("empty") / "cmp", patch=files["empty"], games=100)


@pytest.fixture(scope="module")
def strong(module_engine, files, tmp_path_factory):
    return compare(tmp_path_factory.mktemp("strong") / "cmp", patch=files["strong"], games=200)


def tables_of(run_dir):
    return (manifests.scan_table(run_dir, "games").collect(),
            manifests.scan_table(run_dir, "seats").collect())


# ---------------------------------------------------------------------------- the estimator


def test_paired_interval_from_per_unit_differences():
    rng = np.random.default_rng(1)
    n, m = 400, 6
    base = rng.binomial(m, 0.5, n).astype(float)
    var = np.clip(base + rng.integers(-1, 2, n), 0, m).astype(float)
    assert (var != base).sum() >= FEW_DEALS  # many deals differ: the normal interval
    denom = np.full(n, float(m))
    row = Estimate.from_units("deck", "X", "win_rate", base, denom, var, denom).row(
        1.959963984540054)
    d = (var - base) / m
    assert row["change"] == pytest.approx(d.mean())
    assert row["se"] == pytest.approx(d.std(ddof=1) / math.sqrt(n))
    assert row["lo"] == pytest.approx(d.mean() - 1.959963984540054 * row["se"])
    unpaired = math.sqrt((np.var(base / m, ddof=1) + np.var(var / m, ddof=1)) / n)
    assert row["se_unpaired"] == pytest.approx(unpaired)
    assert row["vrf"] == pytest.approx(unpaired ** 2 / row["se"] ** 2)
    assert row["interval"] == "normal" and row["deals_differ"] == (var != base).sum()
    same = Estimate.from_units("deck", "X", "win_rate", base, denom, base, denom).row(1.96)
    assert same["change"] == 0 and same["se"] == 0 and same["p"] == 1.0
    assert same["deals_differ"] == 0 and same["interval"] == "score"


def test_no_differing_deal_gives_a_score_width_not_an_empty_interval():
    # nothing moved in n deals: the change is 0, but a change that moves one deal in a
    # few hundred is as likely; the interval is the Wilson bound at zero, one game wide
    n, g, z = 500, 4.0, 1.959963984540054
    base = np.random.default_rng(2).binomial(4, 0.5, n).astype(float)
    denom = np.full(n, g)
    row = Estimate.from_units("deck", "X", "win_rate", base, denom, base, denom).row(z)
    bound = z * z / (n + z * z) / g
    assert row["change"] == 0 and row["p"] == 1.0
    assert row["lo"] == pytest.approx(-bound, rel=1e-6)
    assert row["hi"] == pytest.approx(bound, rel=1e-6)


def test_score_interval_inverts_mcnemar():
    u = np.zeros(300)
    u[:7], u[7:9] = 1.0, -1.0  # 7 deals up, 2 down
    lo, hi, p = score_interval(u, 1.0)
    assert lo < 5 / 300 < hi and lo > -0.01
    from rnr_sim.analytics.stats import two_sided_p

    assert p == pytest.approx(two_sided_p(5 / 3))  # (b - c) / sqrt(b + c)
    # the ends are where Tango's statistic crosses -/+1.96 (checked by the definition)
    from rnr_sim.compare.paired import _tango_stat

    assert _tango_stat(7, 2, 300, lo) == pytest.approx(1.959963984540054, abs=1e-6)
    assert _tango_stat(7, 2, 300, hi) == pytest.approx(-1.959963984540054, abs=1e-6)


@pytest.mark.parametrize("p_differ", [0.002, 0.01])
def test_few_differing_deals_keep_their_coverage(p_differ):
    """Deals differ with probability p_differ (a game flips, up 3 times in 4): over many
    replicates the intervals cover the true change about 95% of the time, where the
    normal approximation covers far less (the issue measured 60-77%)."""
    rng = np.random.default_rng(11)
    n, g, reps = 500, 4, 1500
    truth = p_differ * (0.75 - 0.25) / g
    covered = normal = 0
    for _ in range(reps):
        base = rng.binomial(g, 0.5, n).astype(float)
        flip = np.where(rng.random(n) < p_differ, np.where(rng.random(n) < 0.75, 1.0, -1.0),
                        0.0)
        denom = np.full(n, float(g))
        row = Estimate.from_units("deck", "X", "win_rate", base, denom, base + flip, denom).row(
            1.959963984540054)
        covered += row["lo"] <= truth <= row["hi"]
        d = flip / g
        se = d.std(ddof=1) / math.sqrt(n)
        normal += d.mean() - 1.96 * se <= truth <= d.mean() + 1.96 * se
    # 1,500 replicates: a coverage's standard error is about 0.6 points
    tol = 3 * math.sqrt(0.95 * 0.05 / reps)
    assert covered / reps >= 0.95 - tol  # (with one differing deal it is conservative)
    if p_differ == 0.002:  # about one differing deal per replicate
        assert normal / reps < 0.80


def test_a_ratio_with_few_differing_deals_keeps_its_coverage():
    """A card-like ratio (wins over the games it was seen, a count that varies by deal and
    that the change can move): the score interval on the discordant parts covers the true
    change about 95% of the time."""
    from rnr_sim.compare.paired import discordant_parts

    rng = np.random.default_rng(7)

    def play(n: int, p_differ: float):
        seen = rng.binomial(4, 0.3, n).astype(float)
        wins = rng.binomial(seen.astype(int), 0.5).astype(float)
        differ = rng.random(n) < p_differ
        half = rng.random(n) < 0.5
        wins_v, seen_v = wins.copy(), seen.copy()
        flip = differ & half & (wins < seen)  # a seen game now won
        wins_v[flip] += 1
        more = differ & ~half  # the card now seen in one more game, won 7 times in 10
        seen_v[more] += 1
        wins_v[more] += rng.random(int(more.sum())) < 0.7
        return wins, seen, wins_v, seen_v

    a, b, av, bv = play(2_000_000, 0.05)
    truth = av.sum() / bv.sum() - a.sum() / b.sum()
    u = discordant_parts(a, b, av, bv)
    assert u.mean() == pytest.approx(truth) and (u[(a == av) & (b == bv)] == 0).all()
    reps, covered = 1500, 0
    for _ in range(reps):
        row = Estimate.from_units("card", "X", "gih_wr", *play(500, 0.05)).row(1.959963984540054)
        assert row["interval"] == "score"  # about 25 differing deals of 500
        covered += row["lo"] <= truth <= row["hi"]
    tol = 3 * math.sqrt(0.95 * 0.05 / reps)
    assert 0.95 - tol <= covered / reps <= 0.95 + tol


def test_chow_robbins_need_solves_the_rule():
    for s2 in (0.0, 0.01, 0.2):
        for scale in (1.0, 0.02):
            n = chow_robbins_need(s2, 0.01, scale=scale)
            assert n == pytest.approx((1.959963984540054 / 0.01) ** 2 * (s2 + scale / n))
    # two decks at one table (positions 0 and 1), 4 deals, one seat order a deal
    from rnr_sim.compare.runs import WinMoments

    wins_b = np.array([[1, 0], [0, 0], [1, 1], [1, 0]], dtype=float)  # [deal, position]
    wins_v = np.array([[1, 0], [1, 0], [1, 1], [1, 0]], dtype=float)
    m = WinMoments.zeros(1, 2)
    m.add_deals(np.zeros(2, dtype=np.int64), wins_b[:2], wins_v[:2])  # in two looks
    m.add_deals(np.zeros(2, dtype=np.int64), wins_b[2:], wins_v[2:])
    s2, half, scale = deck_half_widths(m, np.array([[0, 1]]), np.array([2.0, 2.0]), 4)
    assert s2[1] == 0 and half[1] == 0
    assert half[0] == pytest.approx(1.959963984540054 * np.std([0, 0.5, 0, 0], ddof=1) / 2)
    assert scale[0] == pytest.approx(np.var([0.5, 0, 0.5, 0.5], ddof=1))


def test_the_stopping_rule_reads_the_same_in_any_unit():
    # the same metric in points (x100) and as a rate: the fixed term scales with it
    s2, v, h = 0.004, 0.03, 0.01
    rate = chow_robbins_need(s2, h, scale=v)
    points = chow_robbins_need(s2 * 100**2, h * 100, scale=v * 100**2)
    assert points == pytest.approx(rate)
    # with the old unscaled term (1/n) the rule asked for more deals than the target needs
    target = (1.959963984540054 / h) ** 2 * s2
    assert chow_robbins_need(s2, h, scale=1.0) > 1.3 * target
    assert chow_robbins_need(s2, h, scale=v) < 1.05 * target


# ---------------------------------------------------------------------------- the runs


def test_an_empty_patch_changes_nothing_at_all(empty):
    result, paired = empty
    assert paired.games == 100 * 6 * 2 and paired.deals == 100
    c = paired.changes
    assert c.height > 50
    assert set(c["kind"]) == {"deck", "path", "seat", "matchup", "card"}
    tested = c.filter(pl.col("change").is_not_null())
    assert (tested["change"] == 0).all()
    assert (tested["deals_differ"] == 0).all() and (tested["interval"] == "score").all()
    # no unit (a table's deal) differs: each interval is the score bound at zero,
    # symmetric and narrow
    assert np.allclose(tested["lo"].to_numpy(), -tested["hi"].to_numpy(), atol=1e-12)
    assert (tested["hi"] > 0).all()
    z2 = 1.959963984540054 ** 2
    units = 6 * 100
    one_game = units / tested["n_baseline"].to_numpy()  # a game's weight in the ratio
    assert np.allclose(tested["hi"].to_numpy(), z2 / (units + z2) * one_game, rtol=1e-6)
    assert not c["significant"].any()
    assert paired.patched == {}
    assert paired.variance_reduction()["median"] is None
    gb, sb = tables_of(result.baseline_dir)
    gv, sv = tables_of(result.variant_dir)
    assert gb.equals(gv) and sb.equals(sv)


def test_the_runs_are_plain_runs_naming_each_other(empty, module_engine, tmp_path):
    result, _ = empty
    plain = runner.start_run(planning.RunOptions(decks=DECKS, games=100, out=tmp_path / "run"),
                             progress=False, log=lambda m: None)
    gp, sp = tables_of(plain.run_dir)
    gb, sb = tables_of(result.baseline_dir)
    assert gp.equals(gb) and sp.equals(sb)
    mb = manifests.read_manifest(result.baseline_dir)
    mv = manifests.read_manifest(result.variant_dir)
    assert mb["compare"]["role"] == "baseline" and mv["compare"]["role"] == "variant"
    assert mb["compare"]["other"] == str(result.variant_dir.resolve())
    assert mv["compare"]["other"] == str(result.baseline_dir.resolve())
    assert mv["compare"]["patch"].endswith("empty.toml") and mv["compare"]["rules_b"] is None
    for m in (mb, mv):
        assert m["status"] == "complete" and m["games_done"] == m["games_total"] == 1200
        assert m["games_requested"] == 100 and m["seed"] == planning.DEFAULT_SEED
    assert mv["catalog"]["path"].endswith("variant-catalog.toml")
    # a finished comparison's runs are complete runs: resume has nothing to do
    again = runner.resume_run(result.variant_dir, progress=False, log=lambda m: None)
    assert again.complete


@needs_engine
def test_a_stronger_attack_raises_its_decks_win_rate(strong):
    _, paired = strong
    holder = paired.of("deck", "win_rate").filter(pl.col("subject") == HOLDER).row(0, named=True)
    assert holder["change"] > 0.05 and holder["lo"] > 0 and holder["significant"]
    card = paired.of("card").filter(pl.col("subject") == "Minuteman Volley")
    assert card.filter(pl.col("metric") == "played_wr")["change"].item() > 0
    # the terminal ranks deck win rates first, by the size of the change
    sig = paired.significant
    assert sig["kind"][0] == "deck"
    decks = sig.filter(pl.col("kind") == "deck")["change"].abs().to_list()
    assert decks == sorted(decks, reverse=True)


@needs_engine
def test_the_patched_card_comes_first_and_the_others_are_labelled_moved(strong):
    result, paired = strong
    assert paired.patched == {"Minuteman Volley": ["cost", "damage"]} or \
        set(paired.patched["Minuteman Volley"]) >= {"cost", "damage"}
    cards = paired.of("card")
    roles = dict(zip(cards["subject"], cards["role"], strict=False))
    assert roles["Minuteman Volley"] == "patched"
    assert {r for c, r in roles.items() if c != "Minuteman Volley"} == {"moved"}
    # ranked: the patched card's rows before every moved card's
    kinds = cards["role"].to_list()
    assert kinds == sorted(kinds, key=lambda r: r != "patched")
    assert (paired.changes.filter(pl.col("kind") != "card")["role"] == "").all()
    from rnr_sim.compare import format_compare

    text = format_compare(result, paired)
    assert "Unpatched cards:" in text and "Minuteman Volley (" in text
    sig = text[text.index("Significant changes"):text.index("Deck win rates:")]
    moved = cards.filter(pl.col("significant") & (pl.col("role") == "moved"))["subject"]
    for card in moved.unique().to_list():
        assert f"card  {card}" not in sig  # moved cards are not listed as changes


def test_a_one_term_combination_is_the_plain_ratio():
    """``Combination`` with one term of weight 1 is the ratio itself: same change,
    interval and p-value (normal and score branches), so the deck-pool expectation and
    the gap are paired exactly as every other metric."""
    rng = np.random.default_rng(3)
    for p_differ in (1.0, 0.05):
        denom = rng.integers(2, 6, 400).astype(float)
        base = rng.binomial(denom.astype(int), 0.4).astype(float)
        var = np.where(rng.random(400) < p_differ,
                       rng.binomial(denom.astype(int), 0.45), base).astype(float)
        plain = Estimate.from_units("path", "all games", "share_life", base, denom, var,
                                    denom)
        comb = Combination("path", "all games", "expected_life", plain.mom, plain.ratio,
                           terms=[(1.0, plain.ratio)]).row(1.96)
        plain = plain.row(1.96)
        for k in ("baseline", "variant", "change", "lo", "hi", "p", "deals_differ"):
            assert comb[k] == pytest.approx(plain[k], rel=1e-12, abs=1e-15), (p_differ, k)
        assert comb["interval"] == plain["interval"]


@needs_engine
def test_path_changes_are_judged_against_the_deck_pool_expectation(strong):
    """Each run's expected share and gap in ``compare`` are the report's
    (``paths.path_expectation``) on that run, and the gap's change is the share's change
    minus the expectation's."""
    from rnr_sim.analytics import compute_metrics, load_run

    result, paired = strong
    rows = {r["metric"]: r for r in paired.changes.filter(
        (pl.col("kind") == "path") & (pl.col("subject") == "all games")).iter_rows(named=True)}
    for run_dir, side in ((result.baseline_dir, "baseline"), (result.variant_dir, "variant")):
        exp = compute_metrics(load_run(run_dir)).paths_expected
        for e in exp.iter_rows(named=True):
            assert rows[f"expected_{e['path']}"][side] == pytest.approx(e["expected"], abs=1e-12)
            assert rows[f"gap_{e['path']}"][side] == pytest.approx(e["gap"], abs=1e-12)
    for p in ("life", "attack", "petition", "deck_out"):
        share, expected, gap = rows[f"share_{p}"], rows[f"expected_{p}"], rows[f"gap_{p}"]
        assert gap["change"] == pytest.approx(share["change"] - expected["change"], abs=1e-12)
        assert gap["lo"] < gap["change"] < gap["hi"]
        assert expected["lo"] < expected["change"] < expected["hi"]


@needs_engine
def test_the_paired_interval_is_narrower_than_the_unpaired(strong):
    _, paired = strong
    decks = paired.of("deck", "win_rate")
    for r in decks.iter_rows(named=True):
        assert r["hi"] - r["lo"] < r["hi_unpaired"] - r["lo_unpaired"], r["subject"]
        assert r["vrf"] > 1
    vr = paired.variance_reduction()
    assert vr["median"] > 1 and vr["unpaired_games"] > paired.games


@needs_engine
def test_a_rules_variant_changes_the_path_shares(module_engine, files, tmp_path):
    result, paired = compare(tmp_path / "cmp", decks=DRAIN_DECKS, rules_b=files["drain"],
                             games=150)
    assert result.rules_changes == {"ua_drain_target": ("controller", "opponent")}
    mv = manifests.read_manifest(result.variant_dir)
    assert mv["rules_changed"] == {"ua_drain_target": "opponent"}
    assert mv["compare"]["rules_b"] == str(files["drain"].resolve())
    paths = paired.of("path")
    assert paths.filter(pl.col("significant")).height > 0
    life = paths.filter((pl.col("subject") == "all games") & (pl.col("metric") == "share_life"))
    assert life["hi"].item() < 0  # UAs that drain the opponent leave fewer Life victories


@needs_engine
def test_precision_adds_deals_until_every_deck_is_narrow(module_engine, files, tmp_path):
    result, paired = compare(tmp_path / "cmp", patch=files["strong"], games=3000,
                             precision=0.04, min_deals=40)
    looks = [lk.deals for lk in result.looks]
    assert looks[0] == 40 and looks == sorted(set(looks)) and len(looks) >= 2
    assert result.stopping["met"] and result.stopping["reason"] == "target met"
    assert "Chow-Robbins" in result.stopping["rule"]
    assert result.deals == looks[-1] == paired.deals
    half = (paired.of("deck", "win_rate")["hi"] - paired.of("deck", "win_rate")["lo"]) / 2
    assert (half <= 0.04 + 1e-12).all()
    # appending looks is the same as playing those deals in one go
    fixed, _ = compare(tmp_path / "fixed", patch=files["strong"], games=result.deals)
    for a, b in ((result.baseline_dir, fixed.baseline_dir),
                 (result.variant_dir, fixed.variant_dir)):
        ga, sa = tables_of(a)
        gb, sb = tables_of(b)
        assert ga.equals(gb) and sa.equals(sb)


def test_precision_stops_at_the_cap(module_engine, files, tmp_path):
    result, paired = compare(tmp_path / "cmp", patch=files["strong"], games=60,
                             precision=0.001, min_deals=30)
    assert result.deals == paired.deals == 60
    assert not result.stopping["met"] and result.stopping["reason"] == "the --games cap"


def test_decks_the_change_breaks_are_left_out_of_both(module_engine, tmp_path):
    patch = tmp_path / "rare.toml"
    patch.write_text('[cards."Minuteman Volley"]\nrarity = "rare"\n', encoding="utf-8")
    result, paired = compare(tmp_path / "cmp", patch=patch, games=10)
    assert [e.deck for e in result.excluded] == [HOLDER]
    assert "Rare" in result.excluded[0].reason
    assert HOLDER not in paired.decks and len(paired.decks) == 3
    for d in (result.baseline_dir, result.variant_dir):
        assert HOLDER not in [x["name"] for x in manifests.read_manifest(d)["decks"]]

    gone = tmp_path / "remove.toml"
    gone.write_text('remove = ["Minuteman Volley"]\n', encoding="utf-8")
    result, _ = compare(tmp_path / "cmp2", patch=gone, games=10)
    assert [e.deck for e in result.excluded] == [HOLDER]
    assert "Minuteman Volley" in result.excluded[0].reason


def test_too_few_decks_left_is_an_error(module_engine, tmp_path):
    patch = tmp_path / "rare.toml"
    patch.write_text('[cards."Minuteman Volley"]\nrarity = "rare"\n', encoding="utf-8")
    with pytest.raises(InputError, match="fewer than the 2"):
        run_compare(CompareOptions(decks=DECKS[:2], patch=patch, games=10,
                                   out=tmp_path / "cmp"), progress=False, log=lambda m: None)


def test_runs_of_different_deals_do_not_pair(empty, module_engine, tmp_path):
    result, _ = empty
    other = runner.start_run(planning.RunOptions(decks=DECKS, games=50, out=tmp_path / "run"),
                             progress=False, log=lambda m: None)
    with pytest.raises(InputError, match="same games"):
        compare_runs(result.baseline_dir, other.run_dir)


# ---------------------------------------------------------------------------- the CLI


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = cli.main(["compare", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("text, needle", [
    ('[cards."Minutman Volley"]\ndamage = 8\n', "no card 'Minutman Volley'"),
    ('[cards."Minuteman Volley"]\ndamge = 8\n', "unknown field 'damge'"),
    ('[cards."Minuteman Volley"]\ndamage = -3\n', "catalog law"),
    ('[cards."Minuteman Volley"\ndamage = 8\n', "broken TOML"),
])
def test_bad_patches_exit_2_with_one_line(capsys, tmp_path, text, needle):
    patch = tmp_path / "bad.toml"
    patch.write_text(text, encoding="utf-8")
    code, out, err = run_cli(capsys, *DECKS, "--patch", patch, "--out", tmp_path / "cmp")
    assert code == 2
    assert err.strip().count("\n") == 0 and needle in err and str(patch) in err
    assert "Traceback" not in err + out
    assert not (tmp_path / "cmp").exists()


def test_nothing_to_compare_exits_2(capsys, tmp_path):
    code, _, err = run_cli(capsys, *DECKS, "--out", tmp_path / "cmp")
    assert code == 2 and "--patch" in err and "--rules-b" in err
    code, _, err = run_cli(capsys, *DECKS, "--rules-b", tmp_path / "nope.toml")
    assert code == 2 and "no such rules file" in err
    code, _, err = run_cli(capsys, *DECKS, "--rules-b", tmp_path / "nope.toml", "--precision",
                           "2")
    assert code == 2 and "--precision" in err


def test_cli_json_report_and_summary(module_engine, capsys, files, tmp_path):
    out, report = tmp_path / "cmp", tmp_path / "report"
    targets = tmp_path / "t.toml"
    targets.write_text("[targets]\ndeck_share_max = 0.55\niwd_max = 0.05\n", encoding="utf-8")
    code, stdout, _ = run_cli(capsys, *DECKS, "--patch", files["strong"], "--games", 20,
                              "--out", out, "--report", report, "--json", "--targets", targets)
    assert code == 0
    summary = json.loads(stdout)
    assert summary["games_per_run"] == 20 * 6 * 2 and summary["deals"] == 20
    assert summary["patch_changes"] == ["Minuteman Volley: damage 3 -> 20",
                                        "Minuteman Volley: cost 2 -> 1"]
    assert {c["kind"] for c in summary["changes"]} == {"deck", "path", "seat", "matchup",
                                                       "card"}
    assert json.loads((out / "compare.json").read_text())["deals"] == 20
    html = (report / "index.html").read_text(encoding="utf-8")
    assert html.count("<img") == 3 and "data:image/png;base64," in html
    assert "http://" not in html and "https://" not in html
    assert "Minuteman Volley" in html and (report / "changes.csv").exists()
    assert html.index("<h3>Patched cards</h3>") < html.index("<h3>Other cards, moved by")
    assert "moved by the change to Minuteman Volley (" in html
    # the page answers "does it still over-perform?" on the report's own scale too
    assert "Minuteman Volley: adjusted IWD (the report&#x27;s flag" in html
    # ... and whether it helped balance, and the targets, as the terminal says them
    assert "Balance: the decks&#x27; win rates spread " in html
    assert f"Targets ({targets}): the baseline misses " in html and "iwd_max " in html
    code, stdout, _ = run_cli(capsys, *DECKS, "--patch", files["strong"], "--games", 20,
                              "--out", tmp_path / "cmp2", "--no-report")
    assert code == 0
    assert "Significant changes" in stdout and "Deck win rates:" in stdout
    assert "variance reduction" in stdout


def test_a_broken_run_dir_does_not_pair(empty, tmp_path):
    import shutil

    result, _ = empty
    broken = shutil.copytree(result.variant_dir, tmp_path / "variant")
    part = sorted((broken / "seats").glob("*.parquet"))[0]
    part.unlink()
    with pytest.raises(InputError, match=part.name):
        compare_runs(result.baseline_dir, broken)


def test_what_changed_keeps_a_patch_name_on_one_line():
    """A patch name (or path, or switch value) with a newline or control character is
    shown as an escaped TOML string: it cannot break the line or fake another one."""
    from types import SimpleNamespace

    from rnr_sim.compare.text import what_changed
    from rnr_sim.patches import toml_string

    name = 'Volley +2\nChange: rules x.toml: "fake"\x1b[2J'
    result = SimpleNamespace(
        patch_path="volley.toml", patch_name=name, patch_lines=["Minuteman Volley: damage 3 -> 5"],
        rules_b_path="b.toml", rules_changes={"ua_drain_target": ("controller", 'opp"\n')})
    lines = what_changed(result)
    assert len(lines) == 2 and all("\n" not in x and "\x1b" not in x for x in lines)
    assert lines[0] == f"patch volley.toml ({toml_string(name)}): Minuteman Volley: damage 3 -> 5"
    assert lines[1] == 'rules b.toml: ua_drain_target: "controller" -> "opp\\"\\n"'
    plain = SimpleNamespace(patch_path="volley.toml", patch_name="Volley +2", patch_lines=[],
                            rules_b_path=None, rules_changes={})
    assert what_changed(plain) == ["patch volley.toml (Volley +2): (an empty patch: no card "
                                   "changes)"]


def test_compare_does_not_import_the_report_or_the_cli():
    """``rnr_sim.compare`` stands on its own: the report imports it, not the other way
    round, and it writes TOML with ``rnr_sim.patches``, not the CLI's helpers."""
    import subprocess
    import sys

    code = ("import sys, rnr_sim.compare, rnr_sim.compare.text; "
            "print(sorted(m for m in sys.modules if m.startswith(('rnr_sim.report', "
            "'rnr_sim.commands', 'rnr_sim.cli'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_newcombe_interval_for_a_path_never_taken_is_not_zero_width():
    """A ratio whose numerator is 0 in both runs (a path a deck never won by) changes by 0
    in every deal; its interval still has width (Newcombe's paired interval on the runs'
    Wilson intervals), and with large counts it is the normal paired interval again."""
    import numpy as np

    from rnr_sim.compare.paired import newcombe_paired

    lo, hi = newcombe_paired(0.0, 0.0, 0.0, 0.0, 0.0, 150.0, 150.0)
    assert lo < 0 < hi and hi - lo > 0.01
    rng = np.random.default_rng(3)
    zb = rng.normal(0, 0.5, 4000)
    zv = zb + rng.normal(0, 0.2, 4000)
    n = len(zb)
    var_b, var_v = np.var(zb, ddof=1) / n, np.var(zv, ddof=1) / n
    cov = np.cov(zb, zv, ddof=1)[0, 1] / n
    lo, hi = newcombe_paired(0.40, 0.42, var_b, var_v, cov, 8000.0, 8000.0)
    se = float(np.std(zv - zb, ddof=1)) / np.sqrt(4000)
    assert (lo, hi) == pytest.approx((0.02 - 1.96 * se, 0.02 + 1.96 * se), abs=0.004)


@needs_engine
def test_the_patched_cards_own_figures_and_the_balance_line_come_first(strong):
    """Issue 41, item 3: the patched card's every figure (significant or not) and its
    adjusted IWD in both runs (the report's flag, like for like) come before the table of
    significant changes, with a line saying whether the decks sit closer together; a
    change under 0.1 pp shows its digits, an exact zero says so."""
    from rnr_sim.compare import format_compare
    from rnr_sim.compare.text import change_text, summary_json

    result, paired = strong
    text = format_compare(result, paired)
    head = text[:text.index("Significant changes")]
    assert "The patched card, Minuteman Volley (" in head
    block = head[head.index("The patched card"):]
    for label in ("GIH WR", "IWD", "played WR", "play rate"):
        assert f"\n{label} " in block
    assert "adjusted IWD (the report's flag: inside each deck, at equal game length): before " \
        in block
    assert "\nBalance: the decks' win rates spread " in head
    verdicts = ("closer together after the change", "further apart after the change",
                "no clear change in how far apart")
    assert sum(v in head for v in verdicts) == 1
    from rnr_sim.compare.text import spread_verdict
    assert spread_verdict(-0.01, 0.004).startswith("the decks sit closer")
    assert spread_verdict(0.01, 0.004).startswith("the decks sit further")
    assert spread_verdict(-0.003, 0.004).startswith("no clear change")  # within the noise
    summary = summary_json(result, paired)
    assert set(summary["patched_adjusted_iwd"]["Minuteman Volley"]) == {"baseline", "variant"}
    assert change_text({"change": 0.0, "lo": 0.0, "hi": 0.0}) == "0 pp (no change)"
    assert change_text({"change": 3.1e-5, "lo": 2e-5, "hi": 4.2e-5}) == \
        "+0.0031 pp [+0.0020, +0.0042]"


@needs_engine
def test_deck_b_plays_a_second_version_of_its_deck_on_the_same_deals(
        module_engine, tmp_path, capsys):
    """Issue 41, item 6: ``compare decks... --deck-b mine-v2.txt``: the variant plays the
    second version in the place of the deck it is a version of (here another name, so the
    deck sharing the most cards, not the first given), on the same deals; the user reads
    which deck, what differs and the paired change of that deck's win rate."""
    from rnr_sim.cli import main

    v2 = tmp_path / "v2.txt"
    text = DECKS[1].read_text().replace("Name: Abolitionist Front", "Name: Abolitionist v2")
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line[:2] in ("2 ", "3 ", "4 "))
    n, name = lines[first].split(" ", 1)
    lines[first] = f"{int(n) - 1} {name}"
    lines = [line for line in lines if not line.startswith("Policy:")] + [f"1 {name}"]
    v2.write_text("\n".join(lines) + "\n")  # the same cards: one copy moved to the end
    assert DECKS[0] != DECKS[1]
    code = main(["compare", *map(str, DECKS), "--deck-b", str(v2), "--games",
                 "30", "--out", str(tmp_path / "cmp"), "--no-report", "--players", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert (f"Change: deck {v2} in place of {DECKS[1]} ('Abolitionist Front'; 60 of its 60 "
            "cards shared; the same deals): the same cards") in out
    assert "\nDeck B: Abolitionist Front wins " in out and f"as --deck-b {v2}, on the same " \
        "deals: " in out


def test_deck_b_is_matched_by_name_and_refused_when_it_is_no_version_of_any(tmp_path):
    """``--deck-b`` replaces the deck of its own name; with another name, the deck sharing
    the most cards; sharing less than half with every deck, it is refused in one line."""
    from rnr_sim.cards import load_catalog
    from rnr_sim.compare.runs import _version_of
    from rnr_sim.decks import catalog_paths

    catalog = load_catalog(catalog_paths(None, DECKS))
    same = tmp_path / "same.txt"
    same.write_text(DECKS[2].read_text())
    assert _version_of(same, DECKS, catalog, catalog)[0] == DECKS[2]
    other = tmp_path / "other.txt"  # a quarter of four decks each, a name of its own
    parts = [[ln for ln in d.read_text().splitlines() if ln[:1].isdigit()] for d in DECKS[:4]]
    other.write_text("Name: Mixed\n" + "\n".join(
        ln for k, lines in enumerate(parts)
        for ln in lines[k * len(lines) // 4:(k + 1) * len(lines) // 4]) + "\n")
    with pytest.raises(InputError, match="shares less than half"):
        _version_of(other, DECKS, catalog, catalog)


def test_a_patch_no_deck_holds_is_said_before_any_game():
    """Issue 41 (a new user's friction): a patch to a card no deck of the comparison holds
    cannot change a game; compare says so before it plays."""
    from types import SimpleNamespace

    from rnr_sim.cards import load_catalog
    from rnr_sim.compare.runs import _warn_unheld
    from rnr_sim.decks import catalog_paths

    catalog = load_catalog(catalog_paths(None, DECKS[:2]))
    said: list[str] = []
    unheld = SimpleNamespace(changed=(("Whaleboat Raid", "damage", 2, 3),), removed=())
    _warn_unheld(unheld, DECKS[:2], catalog, said.append)
    assert said and said[0].startswith("Note: no deck here holds Whaleboat Raid")
    held = next(iter(load_deck_names(DECKS[0], catalog)))
    said.clear()
    _warn_unheld(SimpleNamespace(changed=((held, "cost", 1, 2),), removed=()), DECKS[:2],
                 catalog, said.append)
    assert not said


def load_deck_names(path, catalog) -> set[str]:
    from rnr_sim.decks import load_deck

    return set(load_deck(path, catalog).slots)


def test_a_change_too_small_to_matter_ranks_after_the_large_ones():
    """A new user's friction (issue 41): a significant 0.005 pp path share ranked above a
    -7 pp matchup; changes under 0.1 pp now come last, whatever their kind."""
    from rnr_sim.compare.paired import CHANGE_SCHEMA, rank_changes

    def row(kind, subject, change):
        r = dict.fromkeys(CHANGE_SCHEMA)
        r.update(kind=kind, subject=subject, metric="m", change=change, role="")
        return r

    changes = pl.DataFrame([row("path", "A", 0.00005), row("matchup", "A vs B", -0.07),
                            row("deck", "A", 0.02)], schema=CHANGE_SCHEMA)
    assert rank_changes(changes)["subject"].to_list() == ["A", "A vs B", "A"]
    assert rank_changes(changes)["kind"].to_list() == ["deck", "matchup", "path"]


def test_compare_targets_say_what_each_run_meets():
    """A new user's friction (issue 41, item 3): ``compare --targets T.toml`` says which of a
    designer's targets the baseline and the variant meet, on the comparison's figures."""
    from rnr_sim.balance.targets import Targets
    from rnr_sim.compare.paired import CHANGE_SCHEMA
    from rnr_sim.compare.text import targets_lines

    def row(kind, subject, metric, before, after):
        r = dict.fromkeys(CHANGE_SCHEMA)
        r.update(kind=kind, subject=subject, metric=metric, baseline=before, variant=after)
        return r

    changes = pl.DataFrame([row("deck", "A", "win_rate", 0.58, 0.54),
                            row("deck", "B", "win_rate", 0.42, 0.46),
                            row("path", "all games", "share_life", 0.35, 0.28),
                            row("path", "all games", "share_attack", 0.10, 0.12)],
                           schema=CHANGE_SCHEMA)

    class Fake:
        def of(self, kind, metric=None):
            out = changes.filter(pl.col("kind") == kind)
            return out if metric is None else out.filter(pl.col("metric") == metric)

    t = Targets(deck_share_max=0.55, path_share={"life": (0.2, 0.3), "attack": (0.2, 0.3)},
                iwd_max=0.05)
    text = "\n".join(targets_lines(Fake(), t, "t.toml"))
    assert text.startswith("Targets (t.toml): the baseline misses 3 of 4, the variant 1 ")
    assert "NO" in text.split("attack")[1].splitlines()[0]  # still below its band after
    assert "iwd_max" not in text  # no card figures given: not a row
    # with each run's largest adjusted IWD (compare.patched.largest_iwd), iwd_max is a row,
    # in points
    largest = ((0.081, "Stamp Act", 0.07, 0.09, 0.031), (0.042, "Patrick Henry", 0.03, 0.05, 0))
    text = "\n".join(targets_lines(Fake(), t, "t.toml", largest))
    assert text.startswith("Targets (t.toml): the baseline misses 4 of 5, the variant 1 ")
    line = next(x for x in text.splitlines() if x.lstrip().startswith("iwd_max"))
    assert "largest: Stamp Act -> Patrick Henry" in line and "+8.1 pp" in line
    assert line.rstrip().endswith("yes")


def test_a_patch_that_changes_nothing_is_said_before_any_game(tmp_path, monkeypatch):
    """A new user's friction: a patch whose every field keeps its value played two identical
    runs without a word; compare now says so before it plays."""
    from rnr_sim.compare import runs

    patch = tmp_path / "same.toml"
    patch.write_text('[cards."Minuteman Volley"]\ndamage = 3\n', encoding="utf-8")
    said: list[str] = []

    class Stop(Exception):
        pass

    def stop(*a, **k):  # stop at the first thing after the notes: no game is played
        raise Stop

    monkeypatch.setattr(runs.outdir, "claim_out", stop)
    with pytest.raises(Stop):
        run_compare(CompareOptions(decks=DECKS[:3], patch=patch, games=10,
                                   out=tmp_path / "c"), progress=False, log=said.append)
    assert said and said[0].startswith(f"Note: {patch} changes nothing (every field it sets "
                                       "keeps its value: Minuteman Volley: damage 3 -> 3)")
