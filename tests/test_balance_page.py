"""The balance page (``rnr-sim report BALANCE_DIR``, issue 41): a figure of every target
before and after each suggestion; one unit convention (shares in %, differences and IWD
in points, no raw fraction); the largest-IWD row named in words; the metagame-after line
saying one thing. The balance dirs here are written by hand (a dir from before the seal:
no identity, read as it is), so the page is tested apart from the search."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import polars as pl
import pytest

from rnr_sim.balance.output import FIGURES_SCHEMA, SUGGESTIONS_SCHEMA
from rnr_sim.cli import main
from rnr_sim.report.balance import balance_text, build_balance_report

DECKS = ("Alpha", "Beta")
TARGETS = {"deck_share_max": 0.55, "path_share": {p: [0.2, 0.3] for p in
                                                  ("life", "attack", "petition", "deck_out")},
           "first_seat": None, "min_support": None, "iwd_max": 0.1}


def _fig(rank: int, target: str, subject: str, before: float, after: float | None,
         lo: float | None, hi: float | None) -> dict:
    met = lambda v: (lo is None or v >= lo) and (hi is None or v <= hi)  # noqa: E731
    row = {"rank": rank, "target": target, "subject": subject, "before": before,
           "before_lo": before - 0.02, "before_hi": before + 0.02, "after": after,
           "after_lo": None, "after_hi": None, "change": None, "change_lo": None,
           "change_hi": None, "band_lo": lo, "band_hi": hi, "met_before": met(before),
           "met_after": None}
    if after is not None:
        row.update(after_lo=after - 0.02, after_hi=after + 0.02, change=after - before,
                   change_lo=after - before - 0.01, change_hi=after - before + 0.01,
                   met_after=met(after))
    return row


def _suggestion(rank: int, breaks: bool, change: tuple[float, float, float]) -> tuple[dict,
                                                                                       dict]:
    row = {"rank": rank, "cards": ["Harriet Tubman"], "switches": [],
           "changes": [f"Harriet Tubman: cost {rank + 2} -> {rank + 3}"],
           "targets_met": [] if breaks else ["deck_share_max"],
           "targets_missed": ["deck_share_max"] if breaks else [], "verified": not breaks,
           "n_cards": 1, "size": 0.3, "distance_search": 0.01, "distance_verified": 0.02,
           "distance_before": 0.05, "file": None, "rules_file": None,
           "compare_dir": f"verify/{rank:02d}", "compare_command": "rnr-sim compare ...",
           "verify_deals": 100, "strongest_after": "elites/01.txt (life, wins at turn 20-23)",
           "strongest_after_share": 0.61 if breaks else 0.52,
           "strongest_after_lo": 0.58 if breaks else 0.49,
           "strongest_after_hi": 0.64 if breaks else 0.55, "strongest_after_breaks": breaks}
    c, lo, hi = change
    after = {"share": row["strongest_after_share"], "breaks": breaks, "without_patch": {
        "share_patched": 0.70, "patched_lo": 0.6, "patched_hi": 0.8, "share_unchanged": 0.70 - c,
        "unchanged_lo": 0.5, "unchanged_hi": 0.7, "change": c, "change_lo": lo,
        "change_hi": hi, "deals": 5, "games": 40}}
    return row, {"rank": rank, "changes": row["changes"], "after": after}


def write_dir(d: Path, status: str = "suggestions", extra: dict | None = None) -> Path:
    """A balance dir: two suggestions (01: within deck_share_max, the patch making the
    strongest deck after it clearly stronger; 02: breaking it, the unchanged cards holding
    it already), or none when ``status`` is "no change needed"."""
    d.mkdir(parents=True)
    figs = [_fig(0, "deck_share_max", n, b, None, None, 0.55) for n, b in zip(
        DECKS, (0.58, 0.42), strict=True)]
    figs += [_fig(0, "path_share", "life", 0.33, None, 0.2, 0.3)]
    sugs, mans = [], []
    if status != "no change needed":
        for rank, breaks, change in ((1, False, (0.184, 0.05, 0.31)),
                                     (2, True, (-0.12, -0.2, -0.04))):
            figs += [_fig(rank, "deck_share_max", "Alpha", 0.58, 0.54 if rank == 1 else 0.57,
                          None, 0.55),
                     _fig(rank, "deck_share_max", "Beta", 0.42, 0.46, None, 0.55),
                     _fig(rank, "path_share", "life", 0.33, 0.29, 0.2, 0.3),
                     _fig(rank, "iwd_max", "Harriet Tubman -> Harriet Tubman" if rank == 1
                          else "Harriet Tubman -> Samuel Adams", 0.112, 0.09, None, 0.1)]
            s, man = _suggestion(rank, breaks, change)
            sugs.append(s)
            mans.append(man)
    pl.DataFrame(sugs, schema=SUGGESTIONS_SCHEMA).write_parquet(d / "suggestions.parquet")
    pl.DataFrame(figs, schema=FIGURES_SCHEMA).write_parquet(d / "figures.parquet")
    pl.DataFrame({"x": [1]}).write_parquet(d / "candidates.parquet")
    manifest = {"kind": "balance", "status": status,
                "message": "Two suggestions." if sugs else "No change needed.",
                "targets": TARGETS, "metagame": {"source": "field of 2 decks"},
                "scope": {"max_changes": 3}, "scope_cards": {"how": "named"},
                "search": {"knobs": 12, "candidates": 40, "generations": 3,
                           "racing": {"saved": 0.5}},
                "suggestions": mans, "games": {"total": 1000, "search": 600, "verify": 300,
                                               "rediscover": 100},
                "seconds": {"total": 60.0}, **(extra or {})}
    (d / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("balance-page")
    return build_balance_report(write_dir(root / "bal"), root / "out").parent


def _visible(html: str) -> str:
    html = re.sub(r'src="data:[^"]+"', 'src=""', html)
    return unescape(re.sub(r"<code>.*?</code>", "", html))


def test_the_page_has_a_figure_of_every_target_before_and_after(page):
    png = (page / "plots" / "balance.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    html = (page / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<img alt="each target&#x27;s figure before and after each suggestion'
                     r'[^"]*" src="data:image/png;base64,', html)
    assert "](plots/balance.png)" in (page / "summary.md").read_text(encoding="utf-8")


def test_one_unit_convention_shares_in_percent_differences_in_points(page):
    for text in (_visible((page / "index.html").read_text(encoding="utf-8")),
                 (page / "summary.md").read_text(encoding="utf-8")):
        assert not re.search(r"(?<![\d.])[+-]?0\.\d\d", text), "a raw fraction is shown"
        assert "deck_share_max <= 55%, path_share 20%-30% (every path)" in text
        assert "iwd_max <= 10.0 pp" in text
    md = (page / "summary.md").read_text(encoding="utf-8")
    iwd = [ln for ln in md.splitlines() if ln.startswith("| iwd_max")]
    assert iwd and all("<= 10.0 pp | +11.2 pp [" in ln and "%" not in ln for ln in iwd)
    share = [ln for ln in md.splitlines() if ln.startswith("| deck_share_max | Alpha")]
    assert share[0].startswith("| deck_share_max | Alpha | <= 55% | 58.0% [56.0%, 60.0%] |")


def test_the_largest_iwd_row_names_its_card_in_words(page):
    md = (page / "summary.md").read_text(encoding="utf-8")
    assert "| iwd_max | largest: Harriet Tubman | " in md
    assert "| iwd_max | largest: Harriet Tubman before, Samuel Adams after | " in md
    assert "Harriet Tubman -> Harriet Tubman" not in md
    assert "`Harriet Tubman: cost 3 -> 4`" in md  # a change to a card's number


def test_the_metagame_after_line_says_one_thing(page):
    lines = [ln for ln in (page / "summary.md").read_text(encoding="utf-8").splitlines()
             if ln.startswith("Metagame after")]
    within, breaks = lines
    assert "52.0% [49.0%, 55.0%] held out against the metagame's decks: within " \
           "deck_share_max (<= 55%)." in within
    assert within.endswith("the patch's part: +18.4 pp [+5.0 pp, +31.0 pp] (paired): the "
                           "patch made it stronger, though not past deck_share_max.")
    assert "breaks deck_share_max (<= 55%)." in breaks
    assert breaks.endswith("the break is not the patch's doing.")
    for ln in lines:  # the held-out share is the one share of the strongest deck shown
        assert "70.0%" not in ln and "with the patch, " not in ln


def test_no_change_needed_draws_the_unchanged_catalog(tmp_path):
    out = build_balance_report(write_dir(tmp_path / "bal", "no change needed"),
                               tmp_path / "out").parent
    assert (out / "plots" / "balance.png").is_file()
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert "Unchanged catalog:" in md and "| deck_share_max | Alpha | <= 55% | 58.0%" in md


def test_fields_the_page_does_not_know_are_borne(tmp_path, capsys):
    """A balance dir with manifest fields and a target this page has never seen (the
    search grows): the page is written, the unknown target shown as the file gives it."""
    d = write_dir(tmp_path / "bal", extra={"new_phase": {"games": 5}, "history2": [1, 2]})
    m = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    m["targets"]["spread_max"] = 0.2
    (d / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    assert main(["report", str(d), "--out", str(tmp_path / "out")]) == 0
    assert "spread_max = 0.2" in (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "the patch's part: " in balance_text(d)
