"""The yardstick check (rnr_sim/yardstick.py, issue 40 item 3): a verdict played again on a
subsample of its own deals with the search pilot in every seat, paired by deal.

The arithmetic is fixed by hand (``holds``, ``make_check``), the card figure is the report's
own adjusted IWD (``iwd_by_deal`` against ``cards.adjusted_iwd`` on a real run), a deck
with a planted card far stronger than its siblings keeps its verdict with the yardstick
(the run, the report a designer reads), the words of a verdict that flips are said first
(a made-up check: no honest flip is cheap to build), the discovery dir keeps its contract
with the check in it, and the games are the same on 1 and 2 threads."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rnr_sim import yardstick as ys
from rnr_sim.analytics.stats import Z95, paired_gain
from rnr_sim.cli import main

HERE = Path(__file__).resolve().parent
TOY = HERE / "fixtures" / "discover" / "toy.toml"
TOY_FIELD = HERE / "fixtures" / "discover" / "field.txt"


# ---------------------------------------------------------------------------- arithmetic
@pytest.mark.parametrize(("claim", "lo", "hi", "answer"), [
    ("above", 0.51, 0.60, ys.YES), ("above", 0.40, 0.49, ys.NO),
    ("above", 0.45, 0.55, ys.UNSETTLED), ("below", 0.40, 0.49, ys.YES),
    ("below", 0.51, 0.60, ys.NO), ("below", 0.45, 0.55, ys.UNSETTLED),
    ("above", math.nan, 0.6, ys.UNSETTLED)])
def test_holds_reads_the_yardsticks_interval_against_the_fair_value(claim, lo, hi, answer):
    assert ys.holds(claim, 0.5, lo, hi) == answer


def test_the_yardsticks_figure_is_the_verdict_moved_by_the_paired_change():
    """value = verdict + (yardstick - heuristic on the subsample); its standard error the
    verdict's and the change's added in quadrature."""
    c = ys.make_check("deck", "A", "win rate against the field", 0.5, verdict=0.60,
                      verdict_se=0.01, heuristic=0.55, yardstick=0.45, change_se=0.03,
                      deals=40, games=80)
    se = math.hypot(0.01, 0.03)
    assert c.claim == "above" and c.change == pytest.approx(-0.10)
    assert c.value == pytest.approx(0.50)
    assert (c.value_lo, c.value_hi) == pytest.approx((0.50 - Z95 * se, 0.50 + Z95 * se))
    assert c.holds == ys.UNSETTLED
    flip = ys.make_check("deck", "A", "win rate", 0.5, 0.60, 0.01, 0.60, 0.30, 0.03, 40, 80)
    assert flip.value == pytest.approx(0.30) and flip.holds == ys.NO
    # a share's interval stays within [0, 1]
    top = ys.make_check("elite", "E", "share", 0.5, 0.98, 0.01, 0.9, 0.99, 0.05, 10, 20)
    assert top.value_hi == 1.0 and top.holds == ys.YES


def test_paired_check_pairs_the_deals_and_weighs_the_strata():
    rng = np.random.default_rng(5)
    h = rng.integers(0, 3, size=(3, 20)) / 2.0
    y = np.clip(h + rng.integers(-1, 2, size=h.shape) / 2.0, 0, 1)
    w = np.array([0.5, 0.3, 0.2])
    c = ys.paired_check("elite", "E", "share", 0.5, 0.7, 0.02, h, y, w, games=120)
    gain, se = paired_gain(y - h, w)
    assert c.change == pytest.approx(float(gain))
    assert c.change_hi - c.change == pytest.approx(Z95 * float(se))
    assert c.heuristic == pytest.approx(float(h.mean(axis=1) @ w))
    assert c.deals == 60 and c.games == 120


def test_a_verdict_that_flips_is_said_first_in_plain_words():
    """No honest flip is cheap to build (a deck strong only against weak pilots), so the
    'no' branch is checked on made-up figures, through the words a designer reads."""
    holding = ys.make_check("deck", "Bison Stampede", "win rate against the field", 0.5,
                            0.566, 0.004, 0.57, 0.58, 0.02, 400, 800)
    open_ = ys.make_check("card", "Harriet Tubman", "adjusted IWD", 0.0, 0.11, 0.003, 0.10,
                          0.05, 0.05, 60, 120)
    flips = ys.make_check("deck", "Scroll Assembly", "win rate against the field", 0.5,
                          0.589, 0.003, 0.60, 0.40, 0.02, 400, 800)
    lines = ys.check_lines([holding, open_, flips])
    assert lines[0].startswith("Scroll Assembly: FLIPS with a stronger pilot in every seat. "
                               "Its win rate against the field is above a fair 50% with the "
                               "heuristic pilots (58.9% [58.3, 59.5]) but below it with the "
                               "search pilot in every seat (38.9% [34.9, 42.9]; ")
    assert "on the same 400 deals, 800 search games" in lines[0]
    assert lines[1].startswith("Bison Stampede: win rate against the field above a fair 50% "
                               "(56.6% [55.8, 57.4]). Holds with a stronger pilot in every "
                               "seat: yes.")
    assert "Holds with a stronger pilot in every seat: not settled on 60 deals." in lines[2]
    assert "+11.0 pp" in lines[2]
    first = ys.summary_sentence([holding, open_, flips])
    assert first.startswith("With a stronger pilot in every seat the verdict on Scroll "
                            "Assembly flips")
    assert ys.summary_sentence([holding]) == ("With a stronger pilot in every seat every "
                                              "verdict checked holds.")
    from rnr_sim.report.yardstick import banner_html

    assert "Scroll Assembly flips" in banner_html([holding, flips])
    assert banner_html([holding, open_]) == ""


# ---------------------------------------------------------------------------- a planted card
PLANTED = """base = "{base}"

[set]
name = "Planted Crier"
version = "1"

# Town Crier (a Bison Rights card of the toy set, 1 IP, 8 LP damage) deals 60: two copies
# end a game, so the deck holding four wins far more than its fair share.
[errata."Town Crier"]
effects = ["lp 60"]
"""


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> dict[str, Path]:
    """Two toy decks, one with 4 of the planted Town Crier, the other the same list with
    Handbills in their place; 400 deals, both seat orders, then 16 deals played again with
    the yardstick; and the run's report. (Its tests ask for ``search_trace_compiled`` too,
    which runs them last, after the session's warm-up compile of the search kernel.)"""
    import conftest

    if conftest._WARM_UP is not None:
        conftest._WARM_UP.wait()
    base = tmp_path_factory.mktemp("planted")
    errata = base / "errata.toml"
    errata.write_text(PLANTED.format(base=TOY.as_posix()), encoding="utf-8")
    text = TOY_FIELD.read_text(encoding="utf-8")
    crier, plain = base / "crier.txt", base / "plain.txt"
    crier.write_text(text.replace("Name: Toy Field", "Name: Planted Crier"), encoding="utf-8")
    plain.write_text(text.replace("Name: Toy Field", "Name: Plain Field")
                     .replace("4 Town Crier\n", "").replace("4 Handbill", "8 Handbill"),
                     encoding="utf-8")
    run = base / "run"
    assert main(["run", str(crier), str(plain), "--cards", str(errata), "--games", "400",
                 "--yardstick", "16", "--out", str(run), "-q"]) == 0
    assert main(["report", str(run), "--out", str(base / "report")]) == 0
    return {"run": run, "report": base / "report", "base": base}


def test_a_deck_with_a_planted_card_holds_with_the_yardstick(planted, search_trace_compiled):
    """The planted deck's win rate is far above 50% with the heuristic pilots; a stronger
    pilot in every seat cannot take it back to 50% in 16 deals' worth of change: the
    check says 'yes' for it and for its opponent (below 50%), with the figures the
    paired arithmetic gives."""
    checks = pl.read_csv(planted["report"] / "yardstick.csv")
    decks = {r["subject"]: r for r in checks.filter(pl.col("kind") == "deck")
             .iter_rows(named=True)}
    assert set(decks) == {"Planted Crier", "Plain Field"}
    strong, weak = decks["Planted Crier"], decks["Plain Field"]
    assert strong["claim"] == "above" and strong["verdict"] > 0.65
    assert strong["holds"] == "yes" and strong["value_lo"] > 0.5
    assert weak["claim"] == "below" and weak["holds"] == "yes" and weak["value_hi"] < 0.5
    for r in (strong, weak):
        assert r["value"] == pytest.approx(r["verdict"] + r["yardstick"] - r["heuristic"])
        assert r["deals"] == 16 and r["games"] == 32
    # the two decks share every game: their changes are opposite
    assert strong["change"] == pytest.approx(-weak["change"])


def test_the_report_says_it_in_the_verdict(planted, search_trace_compiled):
    md = (planted["report"] / "summary.md").read_text(encoding="utf-8")
    verdict = md[md.index("## Verdict"):md.index("## Decks")]
    assert "### With a stronger pilot in every seat" in verdict
    assert "- Planted Crier: win rate against the field above a fair 50% (" in verdict
    assert "Holds with a stronger pilot in every seat: yes." in verdict
    assert "deals 0-15 of every table played again with the search pilot" in verdict
    html = (planted["report"] / "index.html").read_text(encoding="utf-8")
    assert "With a stronger pilot in every seat" in html


def test_a_yardstick_file_of_another_run_is_refused(planted, tmp_path,
                                                     search_trace_compiled):
    other = Path(shutil.copytree(planted["run"], tmp_path / "other"))
    manifest = json.loads((other / "manifest.json").read_text(encoding="utf-8"))
    from rnr_sim.runs import identity

    stamp = identity.stamp({"kind": "run", "seed": 1}, file="yardstick", deals=16)
    pl.read_parquet(other / ys.FILE).write_parquet(other / ys.FILE, metadata=stamp)
    with pytest.raises(Exception, match="not this run's yardstick games"):
        ys.read_run(other, manifest)
    assert main(["report", str(other), "--out", str(tmp_path / "rep")]) == 2


def test_the_yardstick_games_are_the_same_on_one_and_two_threads(planted, tmp_path,
                                                                   search_trace_compiled):
    rows = {}
    for threads in (1, 2):
        d = Path(shutil.copytree(planted["run"], tmp_path / f"t{threads}"))
        (d / ys.FILE).unlink()
        assert main(["run", "--resume", str(d), "--yardstick", "6", "--threads",
                     str(threads), "-q"]) == 0
        rows[threads] = pl.read_parquet(d / ys.FILE)
    assert rows[1].height == 6 * 2 * 2
    assert rows[1].equals(rows[2])
    # the first 6 deals of the 16-deal check are the same games
    first = pl.read_parquet(planted["run"] / ys.FILE).filter(pl.col("deal") < 6)
    assert first.sort("game_id", "seat").equals(rows[1].sort("game_id", "seat"))


@pytest.mark.parametrize(("args", "message"), [
    (["--yardstick", "1"], "--yardstick must be a whole number of deals a table, at least 2"),
    (["--yardstick", "4", "--players", "3"], "--yardstick plays two-player runs"),
])
def test_run_yardstick_bad_input_is_one_line(args, message, capsys, tmp_path):
    assert main(["run", str(TOY_FIELD), str(TOY_FIELD), "--cards", str(TOY),
                 "--out", str(tmp_path / "r"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------------------- the card figure
def test_the_card_figure_is_the_reports_adjusted_iwd(planted, search_trace_compiled):
    """``iwd_by_deal`` (the paired check's card figure) gives the report's adjusted IWD and
    its standard error on the same rows: the same strata, the same estimate."""
    from rnr_sim.analytics.cards import adjusted_iwd, card_masks, seat_units
    from rnr_sim.analytics.run import load_run
    from rnr_sim.analytics.units import table_se

    run = load_run(planted["run"])
    units = seat_units(run.games, run.seats)
    masks = card_masks(run.decks)
    per_card, _ = adjusted_iwd(units, masks)
    for card in ("Town Crier", "Volley A", "Rampart"):
        held = {r["deck"]: int(r["mask"]) for r in
                masks.filter(pl.col("card") == card).iter_rows(named=True)}
        est, unit, z, table = ys.iwd_by_deal(units, held)
        want = per_card.filter(pl.col("card") == card).row(0, named=True)
        assert est == pytest.approx(want["iwd_adjusted"], abs=1e-12)
        assert table_se(z, table) == pytest.approx(want["iwd_adjusted_se"], rel=1e-9)
        assert len(unit) == units["unit"].n_unique()


# ---------------------------------------------------------------------------- discover, balance
def test_discover_checks_its_best_elites_and_keeps_its_contract(tmp_path,
                                                                 search_trace_compiled):
    """``discover --yardstick``: yardstick.parquet and the manifest's entry, sealed with the
    dir (the check verifies it, an edited table is refused); a dir without the check keeps
    the identity it had before the check existed (no yardstick_deals in it)."""
    from rnr_sim.discover import DiscoverOptions, discover
    from rnr_sim.runs import searchdirs

    out = tmp_path / "d"
    discover(DiscoverOptions(field=[TOY_FIELD], cards=[TOY], budget=50_000, seed=3, out=out,
                             yardstick=2), progress=False, log=lambda m: None)
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    checks = ys.read_checks(out)
    archive = pl.read_parquet(out / "archive.parquet").sort("elite_id")
    assert [c.subject for c in checks] == [
        f"Discovered {r['elite_id']:02d} ({r['cell']})"
        for r in archive.head(ys.ELITES_CHECKED).iter_rows(named=True)]
    for c, r in zip(checks, archive.iter_rows(named=True), strict=False):
        assert c.verdict == pytest.approx(r["share_heldout"])
        assert c.deals == 2 and c.games == 4  # one field deck, 2 deals, both seat orders
    assert m["yardstick"]["deals_per_field_deck"] == 2
    assert m["yardstick"]["holds"] == {c.subject: c.holds for c in checks}
    assert m["yardstick_deals"] == 2 and "yardstick.parquet" in m["files"]
    assert searchdirs.verify_discovery_dir(out, m)
    assert searchdirs.discovery_identity(m)["yardstick_deals"] == 2
    old = {k: v for k, v in m.items() if k not in ("yardstick", "yardstick_deals")}
    assert "yardstick_deals" not in searchdirs.discovery_identity(old)
    assert main(["report", str(out), "--out", str(tmp_path / "page")]) == 0
    page = (tmp_path / "page" / "summary.md").read_text(encoding="utf-8")
    assert checks[0].subject + ": held-out share against the field" in page
    edited = pl.read_parquet(out / ys.FILE).with_columns(pl.lit("yes").alias("holds"))
    edited.write_parquet(out / ys.FILE)
    with pytest.raises(Exception, match="yardstick.parquet"):
        searchdirs.verify_discovery_dir(out, m)


def test_check_patch_finds_a_strengthened_card_with_both_pilots(tmp_path,
                                                                 search_trace_compiled):
    """balance's call: a patch that turns the toy's Town Crier into 99 LP damage (one copy
    ends a game) raises the win share of the deck holding it by far more than 12 deals'
    noise, with the heuristic pilots and with the yardstick, on the same deals: it holds;
    its opponent's falls, and holds too."""
    from rnr_sim.patches import apply_patch, parse_patch
    from rnr_sim.runs import planning
    from rnr_sim.runs.evaluation import Evaluator, Pool

    plain = tmp_path / "plain.txt"
    plain.write_text(TOY_FIELD.read_text(encoding="utf-8")
                     .replace("Name: Toy Field", "Name: Plain Field")
                     .replace("4 Town Crier\n", "").replace("4 Handbill", "8 Handbill"),
                     encoding="utf-8")
    plan = planning.plan_run(planning.RunOptions(decks=[TOY_FIELD, plain], cards=[TOY], games=2))
    driver = planning.engine_driver()
    plan.compile(driver)
    patched = apply_patch(parse_patch('[cards."Town Crier"]\neffects = ["lp 99"]\n'),
                          plan.catalog)
    after = np.ascontiguousarray(patched.catalog.compile(), dtype=np.int32)
    with Evaluator(driver, threads=2) as ev:
        checks = ys.check_patch(ev, Pool.of_plan(plan), after, plan.deck_names,
                                plan.deck_policy, deals=12, seed=5)
    by = {c.subject: c for c in checks}
    strong, weak = by["Toy Field"], by["Plain Field"]
    assert strong.claim == "above" and strong.holds == ys.YES
    assert strong.heuristic > 0.2 and strong.yardstick > 0.2
    assert weak.claim == "below" and weak.holds == ys.YES
    assert weak.heuristic < -0.2 and weak.yardstick < -0.2
    assert strong.deals == 12 and strong.games == 12 * 2 * 2
