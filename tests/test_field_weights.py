"""A weighted field (issue 41, item 6): every deck's expected win rate against the field a
player expects to meet, best response first (analytics/field.py, ``run``/``report``/
``compare``/``skill --field-weights``: one parser, one option)."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from rnr_sim.analytics.field import (
    against_field,
    best_response,
    deck_names,
    parse_field_weights,
)
from rnr_sim.cli import main
from rnr_sim.errors import InputError


def test_the_expected_win_rate_is_the_weighted_matchups_and_a_copy_wins_half():
    rates = pl.DataFrame({"deck": ["A", "A", "B", "B"], "opp": ["B", "C", "A", "C"],
                          "rate": [0.6, 0.2, 0.4, 0.7], "var": [0.0004, 0.0001, 0.0004, 0.0009]})
    table = against_field(rates, ["A", "B", "C"], {"A": 0.25, "B": 0.75})
    got = {r["deck"]: r for r in table.iter_rows(named=True)}
    assert got["A"]["expected"] == pytest.approx(0.25 * 0.5 + 0.75 * 0.6)
    assert got["B"]["expected"] == pytest.approx(0.25 * 0.4 + 0.75 * 0.5)
    half = 1.959964 * (0.25 ** 2 * 0.0004) ** 0.5
    assert got["B"]["hi"] - got["B"]["expected"] == pytest.approx(half, rel=1e-4)
    assert got["C"]["expected"] is None and got["C"]["missing"] == "A, B"  # never met
    assert table["deck"].to_list()[0] == "A"  # the best response first


def test_field_weights_read_names_or_stems_and_refuse_in_one_line():
    assert parse_field_weights("bison stampede=30, Scroll_Assembly=10",
                               ["Bison Stampede", "Scroll Assembly"]) == \
        {"Bison Stampede": 0.75, "Scroll Assembly": 0.25}
    for spec, message in (("Bison Stampde=3", "did you mean 'Bison Stampede'?"),
                          ("Bison Stampede", "is not NAME=WEIGHT"),
                          ("Bison Stampede=-1", "a weight is a positive number"), ("", "no deck")):
        with pytest.raises(InputError, match=message):
            parse_field_weights(spec, ["Bison Stampede"])


def test_run_field_weights_prints_the_best_response(engine, decks, tmp_path, capsys):
    names = deck_names(decks)
    out = tmp_path / "run"
    assert main(["run", *map(str, decks), "--games", "6", "--out", str(out), "--field-weights",
                 f"{names[0]}=3, {names[1]}=1"]) == 0
    text = capsys.readouterr().out
    assert f"Against your field (75% {names[0]}, 25% {names[1]}): each deck's expected win " \
        "rate" in text
    assert "\nBest response: " in text
    bad = tmp_path / "never"
    assert main(["run", *map(str, decks), "--out", str(bad), "--field-weights", "Nobody=1"]) == 2
    assert "--field-weights: no deck 'Nobody' in the run" in capsys.readouterr().err
    assert not bad.exists()  # refused before any game


def test_report_field_weights_answers_for_a_run_dir(engine, decks, tmp_path, capsys):
    names = deck_names(decks)
    out = tmp_path / "run"
    assert main(["run", *map(str, decks), "--games", "4", "--out", str(out), "-q"]) == 0
    assert main(["report", str(out), "--out", str(tmp_path / "rep"), "--field-weights",
                 "Nobody=1"]) == 2
    assert not (tmp_path / "rep").exists()
    capsys.readouterr()
    assert main(["report", str(out), "--out", str(tmp_path / "rep"), "--field-weights",
                 f"{names[2]}=1"]) == 0
    assert f"Against your field (100% {names[2]})" in capsys.readouterr().out
    page = (tmp_path / "rep" / "summary.md").read_text()  # the page answers it too
    assert "## Against your field" in page and f"Your field: 100% {names[2]}." in page
    assert '<section id="field"><h2>Against your field</h2>' in \
        (tmp_path / "rep" / "index.html").read_text()
    assert pl.read_csv(tmp_path / "rep" / "field.csv").height == len(decks)
    # A run given --field-weights: its report answers for that field unasked (the run's
    # command line, which the manifest records, names it).
    import json
    import shlex

    manifest = json.loads((out / "manifest.json").read_text())
    manifest["command"] = shlex.join(["rnr-sim", "run", *map(str, decks), "--field-weights",
                                      f"{names[1]}=1"])
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert main(["report", str(out), "--out", str(tmp_path / "rep2")]) == 0
    said = capsys.readouterr()
    assert f"Against your field (100% {names[1]})" in said.out
    assert f"The field of the run's command: --field-weights '{names[1]}=1'" in said.err


def test_the_best_response_names_the_decks_it_is_not_told_apart_from():
    table = pl.DataFrame({"deck": ["A", "B", "C"], "expected": [0.56, 0.55, 0.40],
                          "lo": [0.54, 0.53, 0.38], "hi": [0.58, 0.57, 0.42],
                          "missing": ["", "", ""]})
    line = best_response(table)
    assert line.startswith("Best response: A (56.0%); not told apart from it at this number "
                           "of deals: B (")
    assert "C" not in line.split("deals:")[1]  # clear of it
    assert best_response(table.filter(pl.col("deck") != "B")) == "Best response: A (56.0%)."


def test_a_vs_run_says_what_its_rows_are_and_judges_only_that_deck(engine, decks, tmp_path,
                                                                   capsys):
    """Issue 41, item 2: a ``run --vs`` table labels its rows; its report judges only the
    --vs deck, solves no Nash mix from a matrix of one row, and says why first."""
    from rnr_sim.analytics import compute_metrics, load_run
    from rnr_sim.report.text import nash_method_note, verdict_banners

    names = deck_names(decks)
    out = tmp_path / "vs"
    assert main(["run", *map(str, decks), "--vs", str(decks[0]), "--games", "6", "--out",
                 str(out)]) == 0
    text = capsys.readouterr().out
    assert (f"One deck against the field (--vs): the {names[0]} row is its result against the "
            f"{len(decks) - 1} other decks; every other row is that deck's result against "
            f"{names[0]} alone.") in text
    m = compute_metrics(load_run(out))
    assert m.nash["share"].null_count() == m.nash.height
    assert {c.subject for c in m.candidates if c.kind == "deck"} <= {names[0]}
    assert not [c for c in m.candidates if c.kind == "branch"]
    assert verdict_banners(m)[0].startswith(f"One deck against the field (rnr-sim run --vs): "
                                            f"{names[0]} met every other deck")
    assert nash_method_note(m).startswith("No Nash mix for a run of one deck against the field")
    from rnr_sim.report.tables import nash_table
    from rnr_sim.report.text import decks_lead, matchups_lead
    assert decks_lead(m).startswith(f"A run of one deck against the field (--vs {names[0]}): ")
    assert "sit measurably away" not in decks_lead(m)  # no verdict on the other decks' rows
    assert "No two decks met" not in matchups_lead(m) and not nash_table(m).rows
    from rnr_sim.report.build import _nash_html
    assert _nash_html(m) == ""  # no empty Nash table drawn either


def _deal_frames(outcomes: dict[tuple[str, str], list[tuple[int, int]]]
                 ) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """A two-player run's (games, seats) from {(deck, opp): [(deal, deck won), ...]}: one
    table per pair, one game per listed deal (the first deck in seat 0)."""
    games, seats, gid = [], [], 0
    for t, ((a, b), rows) in enumerate(outcomes.items()):
        for deal, won in rows:
            games.append({"game_id": gid, "table_id": t, "deal": deal})
            seats += [{"game_id": gid, "seat": 0, "deck": a, "won": bool(won)},
                      {"game_id": gid, "seat": 1, "deck": b, "won": not won}]
            gid += 1
    return pl.LazyFrame(games), pl.LazyFrame(seats)


def test_compare_field_weights_pair_the_change_deal_by_deal():
    """The change of the expected win rate is the weighted change of each matchup, and its
    variance is that of the per-deal differences: a deal that flips in the variant moves
    the rate by 1/N; the same run twice changes nothing, with no spread."""
    from rnr_sim.analytics.field import paired_against_field, paired_pair_rates

    base = {("A", "B"): [(d, d % 2) for d in range(8)],
            ("A", "C"): [(d, int(d < 6)) for d in range(8)]}
    flipped = {("A", "B"): [(d, 1 if d == 0 else d % 2) for d in range(8)],
               ("A", "C"): base[("A", "C")]}
    same = paired_pair_rates(_deal_frames(base), _deal_frames(base))
    assert (same["rate_a"] == same["rate_b"]).all() and (same["var"] == 0).all()
    pairs = paired_pair_rates(_deal_frames(base), _deal_frames(flipped))
    ab = pairs.filter((pl.col("deck") == "A") & (pl.col("opp") == "B")).row(0, named=True)
    assert ab["rate_a"] - ab["rate_b"] == pytest.approx(1 / 8)
    # z_d: +1/8 on the flipped deal, 0 elsewhere; centred over the table's 8 deals
    z = [1 / 8] + [0.0] * 7
    mean = sum(z) / 8
    assert ab["var"] == pytest.approx(8 / 7 * sum((x - mean) ** 2 for x in z))
    table = paired_against_field(pairs, ["A", "B", "C"], {"B": 0.5, "C": 0.5})
    a = table.filter(pl.col("deck") == "A").row(0, named=True)
    assert a["change"] == pytest.approx(0.5 / 8)
    assert a["change_hi"] - a["change"] == pytest.approx(1.959964 * (0.25 * ab["var"]) ** 0.5,
                                                         rel=1e-5)
    assert table.filter(pl.col("deck") == "B")["missing"][0] == "C"  # B never met C


def test_compare_and_skill_field_weights_answer_and_refuse_before_playing(engine, decks,
                                                                          tmp_path, capsys):
    names = deck_names(decks)
    patch = tmp_path / "p.toml"
    patch.write_text('[cards."Minuteman Volley"]\ncost = 3\n', encoding="utf-8")
    field = f"{names[0]}=1, {names[1]}=3"
    assert main(["compare", *map(str, decks), "--patch", str(patch), "--games", "6",
                 "--no-report", "--out", str(tmp_path / "cmp"), "--field-weights",
                 field]) == 0
    text = capsys.readouterr().out
    assert (f"Against your field (75% {names[1]}, 25% {names[0]}): each deck's expected win "
            "rate before -> after, and the change paired on the same deals") in text
    assert re.search(r"\nBest response: .+ \(\d+\.\d%\) before, .+ \(\d+\.\d%\) after\.", text)
    for cmd in (["compare", *map(str, decks), "--patch", str(patch), "--out",
                 str(tmp_path / "c2")],
                ["skill", *map(str, decks), "--out", str(tmp_path / "s2")]):
        assert main([*cmd, "--field-weights", "Nobody=1"]) == 2
        err = capsys.readouterr().err
        assert "--field-weights: no deck 'Nobody' in the run" in err and "\n" not in err.strip()
        assert not Path(cmd[-1]).exists()  # refused before any game
    assert main(["skill", *map(str, decks[:3]), "--games", "4", "--field-weights",
                 f"{names[1]}=1"]) == 0
    text = capsys.readouterr().out
    assert f"Against your field (100% {names[1]}): each deck's win share with each" in text


def test_skill_against_a_field_weighs_each_opponent():
    """``skill.win_shares`` against a field: one opponent weighted alone gives that
    matchup's share; every opponent weighted alike gives the unweighted table."""
    from rnr_sim import skill

    rows = []
    for opp, wins in (("B", [1, 1, 0, 1]), ("C", [0, 0, 1, 0])):
        for pilot in ("default", "random"):
            for deal, w in enumerate(wins):
                rows.append({"deck": "A", "pilot": pilot, "policy": "p", "opponent": opp,
                             "table_id": 0 if opp == "B" else 1, "deal": deal,
                             "score": float(w if pilot == "default" else 0)})
    games = pl.DataFrame(rows)
    plain = skill.win_shares(games)
    alike = skill.win_shares(games, {"B": 1.0, "C": 1.0})
    assert plain["win_share"].to_list() == pytest.approx(alike["win_share"].to_list())
    only_b = skill.win_shares(games, {"B": 1.0}).filter(pl.col("pilot") == "default")
    assert only_b["win_share"][0] == pytest.approx(0.75)
    mixed = skill.skill_table(games, weights={"B": 0.25, "C": 0.75})
    d = mixed.filter(pl.col("pilot") == "random").row(0, named=True)
    assert d["vs_default"] == pytest.approx(-(0.25 * 0.75 + 0.75 * 0.25))
