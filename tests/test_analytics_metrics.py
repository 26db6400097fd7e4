"""Each metric on the hand-made tiny run (tests/analytics_fixtures.py), checked by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from analytics_fixtures import TINY, RandomSpec, random_run, tiny_run

from rnr_sim.analytics import compute_metrics, load_run, seat_games
from rnr_sim.analytics import findings as fnd
from rnr_sim.analytics import matchups as mu
from rnr_sim.analytics.branches import main_branches
from rnr_sim.analytics.cards import card_counts, card_masks, card_metrics
from rnr_sim.analytics.decks import deck_summary, with_units
from rnr_sim.analytics.length import length_summary
from rnr_sim.analytics.lp import lp_bands
from rnr_sim.analytics.paths import overall_path_counts, path_counts, path_shares
from rnr_sim.analytics.seats import game_flags, seat_advantage
from rnr_sim.analytics.stats import two_sided_p, wilson
from rnr_sim.errors import InputError


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return tiny_run(tmp_path_factory.mktemp("runs") / "tiny")


@pytest.fixture(scope="module")
def m(tiny):
    return compute_metrics(load_run(tiny))


def row(df: pl.DataFrame, **where) -> dict:
    out = df.filter(*[pl.col(k) == v for k, v in where.items()])
    assert out.height == 1, (where, out)
    return out.row(0, named=True)


# ---------------------------------------------------------------- load_run
def test_load_run_is_lazy(tiny):
    run = load_run(tiny)
    assert isinstance(run.games, pl.LazyFrame) and isinstance(run.seats, pl.LazyFrame)
    assert run.manifest["seed"] == 7 and run.lp_curves is None


@pytest.mark.parametrize("breakage", ["missing", "file", "no_manifest", "bad_manifest",
                                      "no_games", "no_cards", "missing_column"])
def test_load_run_bad_input_is_one_line(tiny, tmp_path, breakage):
    import shutil

    target = tmp_path / "run"
    if breakage == "missing":
        target = tmp_path / "nope"
    elif breakage == "file":
        target.write_text("x")
    else:
        shutil.copytree(tiny, target)
        if breakage == "no_manifest":
            (target / "manifest.json").unlink()
        elif breakage == "bad_manifest":
            (target / "manifest.json").write_text("{not json")
        elif breakage == "no_games":
            shutil.rmtree(target / "games")
        elif breakage == "no_cards":
            (target / "cards.parquet").unlink()
        elif breakage == "missing_column":
            part = target / "seats" / "part-00000.parquet"
            pl.read_parquet(part).drop("opening_mask").write_parquet(part)
    with pytest.raises(InputError) as e:
        load_run(target)
    assert "\n" not in str(e.value) and str(target.name) in str(e.value)
    if breakage == "missing_column":
        assert "opening_mask" in str(e.value)


def test_a_part_the_manifest_does_not_record_is_an_error(tiny, tmp_path):
    """A chunk written but not recorded complete is an extra part: the report refuses the
    run dir (naming the part) rather than silently read or skip it."""
    import shutil

    target = shutil.copytree(tiny, tmp_path / "run")
    for table in ("games", "seats"):
        shutil.copy(target / table / "part-00000.parquet", target / table / "part-00001.parquet")
    with pytest.raises(InputError) as e:
        load_run(target)
    assert "part-00001.parquet" in str(e.value) and "\n" not in str(e.value)


def test_a_duplicate_part_marked_complete_must_match_games_done(tiny, tmp_path):
    """Recording the copied part as complete without updating games_done: the parts hold
    twice the games the manifest says, an error naming games_done."""
    import shutil

    target = shutil.copytree(tiny, tmp_path / "run")
    for table in ("games", "seats"):
        shutil.copy(target / table / "part-00000.parquet", target / table / "part-00001.parquet")
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["chunks"]["complete"] = [0, 1]
    (target / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError) as e:
        load_run(target)
    assert "games_done" in str(e.value) and "\n" not in str(e.value)
    assert f"{2 * TINY['games']:,}" in str(e.value)


# ---------------------------------------------------------------- decks
# Alpha against the field: table 0 only (table 1 is the mirror), per deal (y wins of n):
# 2/2, 1/2, 1/2, 1/2 -> R = 5/8; z = y - R n = .75, -.25, -.25, -.25 (mean 0),
# var = 4/3 * 0.75 / 8² = 1/64, against R(1-R)/8 = 15/512: deff = 8/15, n_eff = 15.
ALPHA_FIELD_DEFF = 8 / 15


def test_deck_summary_against_the_field_by_deal(m):
    a = row(m.decks, deck="Alpha")
    assert (a["games"], a["wins"], a["draws"]) == (8, 5, 1)  # the mirror table left out
    assert (a["mirror_games"], a["mirror_wins"]) == (4, 2)
    assert a["win_rate"] == pytest.approx(5 / 8)
    assert a["win_rate_deff"] == pytest.approx(ALPHA_FIELD_DEFF)
    n_eff = 8 / ALPHA_FIELD_DEFF
    assert (a["win_rate_lo"], a["win_rate_hi"]) == pytest.approx(wilson(5 / 8 * n_eff, n_eff))
    assert a["win_rate_deals"] == 4
    assert {p: a[f"wins_{p}"] for p in TINY["alpha_paths"]} == {
        "life": 3, "attack": 1, "petition": 0, "deck_out": 1}
    assert a["share_life"] == pytest.approx(3 / 5)
    # turns of games 0-7: 18 20 24 30 36 40 50 200
    assert (a["turns_q1"], a["turns_median"], a["turns_q3"]) == (23.0, 33.0, 42.5)
    assert a["main_branch"] == "bison"
    b = row(m.decks, deck="Beta")
    assert (b["games"], b["wins"], b["share_petition"]) == (8, 2, 1.0)
    g = row(m.decks, deck="Gamma")  # listed, never played
    assert g["games"] == 0 and g["win_rate"] is None and g["share_life"] is None
    assert m.deck_order == ["Alpha", "Beta", "Gamma"]


def test_deck_summary_is_a_lazy_pipeline(tiny):
    run = load_run(tiny)
    out = deck_summary(with_units(seat_games(run.games, run.seats), run.games), run.decks)
    assert isinstance(out, pl.LazyFrame)
    assert out.collect().height == 3


# ---------------------------------------------------------------- matchups and Nash
def test_matchup_matrix(m):
    ab = row(m.matchups, row="Alpha", col="Beta")
    assert (ab["games"], ab["wins"], ab["draws"]) == (8, 5, 1)
    assert ab["win_rate_first"] == 0.75 and ab["win_rate_second"] == 0.5
    assert ab["win_rate"] == pytest.approx(TINY["ab_win_rate"])
    n_eff = 8 / ALPHA_FIELD_DEFF  # the same deals as Alpha's games against the field
    assert (ab["win_rate_lo"], ab["win_rate_hi"]) == pytest.approx(wilson(5 / 8 * n_eff, n_eff))
    assert row(m.matchups, row="Beta", col="Alpha")["win_rate"] == pytest.approx(0.25)
    aa = row(m.matchups, row="Alpha", col="Alpha")
    assert aa["mirror"] and aa["games"] == 2 and aa["win_rate"] is None
    ga = row(m.matchups, row="Gamma", col="Alpha")
    assert ga["games"] == 0 and ga["win_rate"] is None
    assert m.matchups.height == 9


def test_seat_balance_weights_seat_orders_equally():
    # the row deck played 3 games first (won 3) and 1 second (won 0): balanced 0.5
    pc = pl.LazyFrame({"row": ["A"], "col": ["B"], "games": [4], "n": [4], "wins": [3],
                       "draws": [0], "n_first": [3], "wins_first": [3]})
    r = mu.matchup_matrix(pc, ["A", "B"]).filter(pl.col("row") == "A", pl.col("col") == "B")
    assert r.collect()["win_rate"].item() == 0.5


@pytest.mark.parametrize("spec", [None, RandomSpec(deals=15, mirrors=False, seed=3)])
def test_pair_counts_by_table_equal_game_by_game(tiny, tmp_path, spec):
    path = tiny if spec is None else random_run(tmp_path / "r", spec)
    run = load_run(path)
    sg = seat_games(run.games, run.seats)
    counts = mu.key_counts_by_table(sg, "deck")
    comp = mu.table_composition(counts, mu.table_games(run.games)).collect()
    assert mu.fixed_tables(comp)
    by_table = mu.pair_counts_by_table(counts, comp.lazy()).collect().sort("row", "col")
    by_game = mu.pair_counts_by_game(sg, "deck").collect().sort("row", "col")
    assert by_table.select(by_game.columns).equals(by_game)


def test_fixed_tables_detects_mixed_tables():
    comp = pl.DataFrame({"table_id": [0, 0], "row": ["A", "B"], "rows": [3, 1],
                         "table_games": [2, 2], "n_players": [2, 2], "n_players_min": [2, 2],
                         "seats": [1.5, 0.5]})
    assert not mu.fixed_tables(comp)


def test_nash(m):
    alpha, beta, gamma = (row(m.nash, deck=d) for d in ("Alpha", "Beta", "Gamma"))
    assert alpha["share"] == 1.0 and alpha["in_support"]
    assert beta["share"] == 0.0 and beta["expected_win_rate"] == pytest.approx(0.3125)
    assert gamma["share"] is None and gamma["opponents"] == 0
    payoff, played = mu.payoff_matrix(m.matchups, ["Alpha", "Beta", "Gamma"])
    assert payoff[0, 1] == pytest.approx((0.625 - 0.25) / 2) and payoff[1, 0] == -payoff[0, 1]
    assert not played[2].any()


def test_nash_of_rock_paper_scissors_decks():
    wr = {("R", "S"): 0.7, ("S", "P"): 0.7, ("P", "R"): 0.7}
    rows = []
    for a in "RPS":
        for b in "RPS":
            w = 0.5 if a == b else wr.get((a, b), 1 - wr.get((b, a), 0.5))
            rows.append({"row": a, "col": b, "win_rate": None if a == b else w})
    nash = mu.metagame_nash(pl.DataFrame(rows), ["R", "P", "S"])
    assert nash["share"].to_list() == pytest.approx([1 / 3] * 3)
    assert nash["expected_win_rate"].to_list() == pytest.approx([0.5] * 3)


# ---------------------------------------------------------------- paths
def test_overall_paths(m):
    r = m.paths_overall.row(0, named=True)
    assert (r["games"], r["wins"], r["draws"]) == (10, 9, 1)
    assert {p: r[f"wins_{p}"] for p in TINY["overall_paths"]} == TINY["overall_paths"]
    assert r["share_life"] == pytest.approx(5 / 9)
    assert r["max_gap"] == pytest.approx(5 / 9 - 1 / 4)
    assert r["chi2"] == pytest.approx(10.75 / 2.25)
    x = 10.75 / 2.25
    exact = math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2)
    assert r["chi2_p"] == pytest.approx(exact, rel=1e-9)
    assert r["draw_rate"] == pytest.approx(0.1)


def test_paths_by_deck_policy_branch(m):
    a = row(m.paths_by_deck, group="Alpha")
    assert (a["wins"], a["wins_life"], a["wins_attack"], a["wins_deck_out"]) == (7, 5, 1, 1)
    assert a["draws"] == 1 and a["draw_rate"] == pytest.approx(1 / 12)
    assert row(m.paths_by_policy, group="default")["wins"] == 9
    assert row(m.paths_by_branch, group="scroll")["wins_petition"] == 2


def test_path_counts_of_an_empty_group_are_null_not_nan(tiny):
    run = load_run(tiny)
    sg = seat_games(run.games, run.seats).filter(pl.col("deck") == "Beta").with_columns(
        pl.lit(False).alias("won"))
    r = path_shares(path_counts(sg, "deck")).collect().row(0, named=True)
    assert r["wins"] == 0 and r["share_life"] is None and r["chi2"] is None
    assert r["chi2_p"] is None and r["max_gap"] is None
    total = path_shares(overall_path_counts(run.games)).collect()
    assert total.height == 1


# ---------------------------------------------------------------- seats
def test_seat_advantage(m):
    s = {(r["scope"], r["p2"]): r for r in m.seats.iter_rows(named=True)}
    assert (s["all", "any"]["first_wins"], s["all", "any"]["games"]) == (6, 10)
    assert s["all", "any"]["draws"] == 1 and s["all", "any"]["other_wins"] == 3
    assert (s["mirror", "any"]["first_wins"], s["mirror", "any"]["games"]) == (2, 2)
    assert (s["all", "used"]["first_wins"], s["all", "used"]["games"]) == TINY["p2_used"]
    assert (s["all", "declined"]["first_wins"], s["all", "declined"]["games"]) == (
        TINY["p2_declined"])
    r = s["all", "any"]
    # first-seat wins per deal: table 0: 1, 2, 0, 1 of 2; table 1: 2 of 2. R = .6;
    # z = y - 1.2: table 0 -.2 .8 -1.2 -.2, centred on its mean -.2: SS = 2, x 4/3;
    # table 1 (one deal, not centred) .64. var = (8/3 + .64) / 100; srs = .24 / 10.
    deff = (8 / 3 + 0.64) / 100 / 0.024
    assert r["first_win_rate_deff"] == pytest.approx(deff)
    n_eff = 10 / deff
    assert (r["first_win_rate_lo"], r["first_win_rate_hi"]) == pytest.approx(
        wilson(0.6 * n_eff, n_eff))
    assert r["fair"] == 0.5


def test_seat_flags_by_table_equal_game_by_game(tiny, m):
    run = load_run(tiny)
    general = seat_advantage(game_flags(run.games, run.seats)).collect()
    assert general.equals(m.seats)


# ---------------------------------------------------------------- branches
def test_main_branches(m):
    assert dict(m.branches.select("deck", "main_branch").iter_rows()) == {
        "Alpha": "bison", "Beta": "scroll", "Gamma": "eagle"}


def test_main_branch_ties_go_to_the_earlier_branch():
    decks = pl.LazyFrame({"deck": ["T"] * 4, "slot": [0, 1, 2, 3],
                          "card": ["s", "s", "b", "b"]})
    cards = pl.LazyFrame({"name": ["s", "b"], "type": ["pillar"] * 2,
                          "branch": ["scroll", "bison"]})
    assert main_branches(decks, cards).collect()["main_branch"].item() == "bison"


def test_branch_summary_and_matrix(m):
    b = row(m.branch_summary, branch="bison")  # the Alpha mirror is a same-branch game
    assert (b["games"], b["wins"], b["deck_names"]) == (8, 5, "Alpha")
    assert b["same_branch_games"] == 4
    assert row(m.branch_summary, branch="eagle")["win_rate"] is None
    bs = row(m.branch_matchups, row="bison", col="scroll")
    assert bs["win_rate"] == pytest.approx(0.625) and bs["games"] == 8


# ---------------------------------------------------------------- cards
def test_card_masks_combine_copies(tiny):
    masks = card_masks(load_run(tiny).decks)
    assert row(masks, deck="Alpha", card="Bison Pillar")["mask"] == 0b0011
    assert row(masks, deck="Alpha", card="Bison Pillar")["copies"] == 2
    assert row(masks, deck="Gamma", card="Tea & <Crates>")["mask"] == 0b0100


def test_card_metrics_by_hand(m):
    v = row(m.cards, card="Minuteman Volley")
    want = TINY["volley"]
    assert v["held"] == want["held"] and v["decks"] == 2  # Alpha and (never played) Gamma
    for k in ("oh", "gd", "gih", "gns", "played"):
        assert (v[f"{k}_wins"], v[k]) == want[k], k
    assert v["gih_wr"] == pytest.approx(0.6) and v["gns_wr"] == pytest.approx(4 / 7)
    assert v["iwd"] == pytest.approx(0.6 - 4 / 7)
    assert v["play_rate"] == pytest.approx(3 / 12)
    # iwd_p: the per-deal test (tests/test_card_adjusted.py checks it against a naive twin)
    assert v["iwd_p"] == pytest.approx(two_sided_p(v["iwd"] / v["iwd_se"]))
    assert (v["oh_wr_lo"], v["oh_wr_hi"]) == pytest.approx(wilson(3, 3))
    bp = row(m.cards, card="Bison Pillar")  # slot 0 opening + slot 1 drawn = OH, not GD
    for k in ("oh", "gd", "gih", "gns"):
        assert (bp[f"{k}_wins"], bp[k]) == TINY["bison_pillar"][k], k
    tea = row(m.cards, card="Tea & <Crates>")  # held, never seen
    assert tea["gih"] == 0 and tea["gih_wr"] is None and tea["iwd"] is None
    assert tea["iwd_p"] is None and tea["flag"] == "" and tea["gns"] == 12
    eagle = row(m.cards, card="Eagle Pillar")  # only in a deck that never played
    assert eagle["held"] == 0 and eagle["play_rate"] is None
    assert row(m.cards, card="Scroll Pillar")["gns_wr"] is None  # seen in every game
    assert row(m.cards_by_deck, deck="Alpha", card="Minuteman Volley")["held"] == 12


def _counts(cards: dict[str, tuple[int, int, int, int]]) -> pl.DataFrame:
    """Card counts from (gih wins, gih, gns wins, gns) per card."""
    rows = []
    for card, (gw, g, nw, n) in cards.items():
        rows.append({"deck": "D", "card": card, "copies": 1, "held": g + n, "held_wins": gw + nw,
                     "oh": g, "oh_wins": gw, "gih": g, "gih_wins": gw, "played": g,
                     "played_wins": gw, "gd": 0, "gd_wins": 0, "gns": n, "gns_wins": nw})
    return pl.DataFrame(rows)


def test_benjamini_hochberg_flags():
    counts = _counts({
        "strong": (700, 1000, 400, 1000),   # p ≈ 0: over
        "weak": (400, 1000, 700, 1000),     # p ≈ 0: under
        "borderline": (60, 100, 45, 100),   # raw p = 0.034, above its BH threshold 3/6·0.05
        "null1": (50, 100, 50, 100),
        "null2": (50, 100, 50, 100),
        "null3": (50, 100, 50, 100),
        "unseen": (0, 0, 50, 100),          # no GIH games: not tested
    })
    out = card_metrics(counts)
    flags = dict(out.select("card", "flag").iter_rows())
    assert flags == {"strong": "over", "weak": "under", "borderline": "", "null1": "",
                     "null2": "", "null3": "", "unseen": ""}
    p = row(out, card="borderline")["iwd_p"]
    assert 0.025 < p < 0.05
    assert row(out, card="unseen")["iwd_p"] is None
    # with fewer tests the same p-value survives: rank 3 of 3 has threshold 0.05
    small = card_metrics(_counts({k: v for k, v in {
        "strong": (700, 1000, 400, 1000), "weak": (400, 1000, 700, 1000),
        "borderline": (60, 100, 45, 100)}.items()}))
    assert row(small, card="borderline")["flag"] == "over"


def test_card_counts_match_a_naive_loop(tmp_path):
    run = load_run(random_run(tmp_path / "r", RandomSpec(deals=10, seed=9)))
    masks = card_masks(run.decks)
    fast = card_counts(run.seats, masks)
    seats = run.seats.collect()
    decks = run.decks.collect()
    for deck, card in [("Alpha", "Tea & <Crates>"), ("Beta", "Eagle Pillar"),
                       ("Gamma", "Bell Tower")]:
        slots = decks.filter(pl.col("deck") == deck, pl.col("card") == card)["slot"].to_list()
        want = dict.fromkeys(("held", "held_wins", "oh", "oh_wins", "gih", "gih_wins",
                              "played", "played_wins"), 0)
        for r in seats.filter(pl.col("deck") == deck).iter_rows(named=True):
            oh = any(r["opening_mask"] >> s & 1 for s in slots)
            gih = any((r["opening_mask"] | r["drawn_mask"]) >> s & 1 for s in slots)
            played = any(r["played_mask"] >> s & 1 for s in slots)
            for key, hit in (("held", True), ("oh", oh), ("gih", gih), ("played", played)):
                want[key] += hit
                want[f"{key}_wins"] += hit and r["won"]
        got = row(fast, deck=deck, card=card)
        assert {k: got[k] for k in want} == want, (deck, card)


# ---------------------------------------------------------------- game length and LP
def test_game_length(m):
    r = row(m.length, path="all")
    assert r["games"] == 10 and r["turns_median"] == 28.0
    assert (r["shorter"], r["in_window"], r["longer"]) == (0, 6, 4)
    assert r["in_window_rate"] == pytest.approx(0.6)
    assert row(m.length, path="life")["turns_median"] == 22.0
    assert row(m.length, path="draw")["turns_max"] == 200.0


def test_game_length_of_no_games_is_empty_not_nan():
    empty = pl.LazyFrame(schema={"path": pl.String, "turns": pl.Int32})
    r = length_summary(empty).collect().row(0, named=True)
    assert r["games"] == 0 and r["in_window_rate"] is None


def test_lp_bands():
    lp = pl.LazyFrame({
        "game_id": [1, 1, 1, 1, 2, 2],
        "table_id": [0] * 6,
        "turn": [1, 1, 2, 2, 1, 1],
        "seat": [0, 1, 0, 1, 0, 1],
        "deck": ["B", "A", "B", "A", "B", "A"],
        "lp": [90, 100, 80, 95, 70, 60],
    })
    out = lp_bands(lp).collect()
    r = row(out, matchup="A vs B", deck="B", turn=1)
    assert r["games"] == 2 and r["lp_median"] == 80.0
    assert r["lp_p10"] == pytest.approx(72.0) and r["lp_p90"] == pytest.approx(88.0)


# ---------------------------------------------------------------- the verdict's scoring rule
def test_finding_score_is_distance_to_nearest_end():
    f = fnd.Finding("deck", "A", 0.58, 0.55, 0.61, 0.5, 1000)
    assert f.score == pytest.approx(5.0)
    assert fnd.Finding("deck", "B", 0.42, 0.38, 0.46, 0.5, 1000).score == pytest.approx(4.0)
    assert fnd.Finding("deck", "C", 0.55, 0.45, 0.65, 0.5, 10).score == 0.0


def test_top_findings_one_per_kind_best_first():
    cands = [
        fnd.Finding("deck", "A", 0.60, 0.58, 0.62, 0.5, 1000),  # 8
        fnd.Finding("deck", "B", 0.70, 0.52, 0.88, 0.5, 10),   # 2
        fnd.Finding("path", "life", 0.40, 0.39, 0.41, 0.25, 900),  # 14
        fnd.Finding("card", "X", 0.05, 0.01, 0.09, 0.0, 500),  # 1
        fnd.Finding("seat", "all/any", 0.53, 0.52, 0.54, 0.5, 9000),  # 2
        fnd.Finding("branch", "bison", 0.51, 0.49, 0.53, 0.5, 400),  # 0: covered
    ]
    top = fnd.top_findings(cands)
    assert [(f.kind, f.subject) for f in top] == [("path", "life"), ("deck", "A"),
                                                  ("seat", "all/any")]
    assert fnd.top_findings([cands[-1]]) == []


def test_findings_of_the_tiny_run(m):
    kinds = {f.kind for f in m.findings}
    assert len(m.findings) <= 3 and len(kinds) == len(m.findings)
    assert all(f.score > 0 for f in m.findings)
    assert np.all(np.diff([f.score for f in m.findings]) <= 0)


# ---------------------------------------------------------------- three players
def test_three_player_run(tmp_path):
    from analytics_fixtures import multiplayer_run

    run = load_run(multiplayer_run(tmp_path / "mp"))
    m = compute_metrics(run)
    assert m.players == 3 and m.fair == pytest.approx(1 / 3)
    assert m.seats["fair"].to_list() == pytest.approx([1 / 3] * 6)
    mirror = row(m.seats, scope="mirror", p2="any")
    assert mirror["games"] == 18  # the Gamma table: 6 deals x 3 rotations
    sg = seat_games(run.games, run.seats)
    counts = mu.key_counts_by_table(sg, "deck")
    comp = mu.table_composition(counts, mu.table_games(run.games)).collect()
    assert mu.fixed_tables(comp)
    by_table = mu.pair_counts_by_table(counts, comp.lazy()).collect().sort("row", "col")
    by_game = mu.pair_counts_by_game(sg, "deck").collect().sort("row", "col")
    assert by_table.select(by_game.columns).equals(by_game)
    # Beta holds two seats at table 0, so it met itself there: 18 games
    assert row(m.matchups, row="Beta", col="Beta")["games"] == 18
    general = seat_advantage(game_flags(run.games, run.seats)).collect()
    assert general.equals(m.seats)


def test_branch_findings_need_two_played_decks():
    decks = pl.DataFrame({"deck": ["A", "B", "C"], "games": [10, 0, 10],
                          "main_branch": ["bison", "bison", "scroll"]})
    branches = pl.DataFrame({"branch": ["bison", "scroll"], "deck_names": ["A, B", "C"],
                             "games": [10, 10], "win_rate": [0.9, 0.8],
                             "win_rate_lo": [0.6, 0.5], "win_rate_hi": [0.98, 0.95]})
    assert fnd.branch_candidates(branches, decks, 0.5) == []
    decks = decks.with_columns(pl.Series("games", [10, 5, 10]))
    assert [f.subject for f in fnd.branch_candidates(branches, decks, 0.5)] == ["bison"]
