"""A weighted field (issue 41, item 6): every deck's expected win rate against the field a
player expects to meet, best response first (analytics/field.py, ``run --field-weights``)."""

from __future__ import annotations

import polars as pl
import pytest

from rnr_sim.analytics.field import against_field, deck_names, parse_field_weights
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
