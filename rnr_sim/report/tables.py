"""Display tables: the metric frames as rows of text, shared by the HTML and Markdown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import polars as pl

from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.analytics.metrics import Metrics
from rnr_sim.report.format import (
    EMPTY,
    branch_label,
    count,
    diff_text,
    interval,
    num,
    p_text,
    path_label,
    pct,
    rate_text,
)


@dataclass
class Table:
    """Column headers, rows of text, and which rows to highlight (flagged, off-default)."""

    columns: list[str]
    rows: list[list[str]]
    highlight: list[bool] = field(default_factory=list)
    caption: str = ""

    def __post_init__(self) -> None:
        if not self.highlight:
            self.highlight = [False] * len(self.rows)


def _share(r: dict, p: str) -> str:
    """A path's share of the group's wins with its interval; n is the group's wins."""
    if not r["wins"]:
        return f"{EMPTY}  (n=0)"
    return f"{pct(r[f'share_{p}'])} {interval(r[f'share_{p}_lo'], r[f'share_{p}_hi'])}"


def _iqr(r: dict) -> str:
    if r["turns_median"] is None:
        return f"{EMPTY}  (n=0)"
    return f"{num(r['turns_median'])} ({num(r['turns_q1'])}–{num(r['turns_q3'])})"


def decks_table(m: Metrics) -> Table:
    share = dict(m.nash.select("deck", "share").iter_rows())
    rows = []
    for r in m.decks.iter_rows(named=True):
        rows.append([
            r["deck"], branch_label(r["main_branch"]), count(r["games"]),
            rate_text(r["win_rate"], r["win_rate_lo"], r["win_rate_hi"], r["games"]),
            pct(share.get(r["deck"])),
            *[_share(r, p) for p in WIN_PATHS],
            _iqr(r),
        ])
    return Table(
        ["Deck", "Main branch", "Games", "Win rate [95% CI]", "Nash share",
         *[f"{path_label(p)} wins" for p in WIN_PATHS], "Turns: median (IQR)"],
        rows,
    )


def matrix_table(matrix: pl.DataFrame, keys: list[str],
                 label: Callable[[str], str] = lambda k: k) -> Table:
    cells = {(r["row"], r["col"]): r for r in matrix.iter_rows(named=True)}
    rows = []
    for a in keys:
        row = [label(a)]
        for b in keys:
            r = cells.get((a, b))
            if r is None:
                row.append(f"{EMPTY}  (n=0)")
            elif r["mirror"]:
                row.append(f"mirror (n={count(r['games'])})")
            else:
                row.append(rate_text(r["win_rate"], r["win_rate_lo"], r["win_rate_hi"], r["n"]))
        rows.append(row)
    return Table(["row vs column", *[label(k) for k in keys]], rows)


def nash_table(m: Metrics) -> Table:
    rows, hl = [], []
    for r in m.nash.iter_rows(named=True):
        if r["share"] is None:
            rows.append([r["deck"], f"{EMPTY}  (n=0)", f"{EMPTY}  (met no other deck)", "0"])
        else:
            rows.append([r["deck"], pct(r["share"]), pct(r["expected_win_rate"]),
                         count(r["opponents"])])
        hl.append(bool(r["in_support"]))
    return Table(["Deck", "Share of the Nash mix", "Win rate against the mix", "Decks met"],
                 rows, hl)


def paths_table(frame: pl.DataFrame, group_label: str,
                label: Callable[[str], str] = lambda k: k) -> Table:
    rows, hl = [], []
    for r in frame.iter_rows(named=True):
        rows.append([
            "All games" if r["group"] == "all" and group_label == "Games" else label(r["group"]),
            count(r["wins"]),
            *[_share(r, p) for p in WIN_PATHS],
            pct(r["draw_rate"]) if r["games"] else f"{EMPTY}  (n=0)",
            EMPTY if r["max_gap"] is None else f"{100 * r['max_gap']:.1f} pp",
            EMPTY if r["chi2"] is None else f"{r['chi2']:,.1f} ({p_text(r['chi2_p'])})",
        ])
        hl.append(r["chi2_p"] is not None and r["chi2_p"] < 0.05)
    return Table(
        [group_label, "Wins", *[path_label(p) for p in WIN_PATHS], "Draws (of games)",
         "Largest gap from 25%", "χ² vs equal paths (df 3)"],
        rows, hl,
    )


SCOPE_LABELS = {
    ("all", "any"): "All games",
    ("all", "used"): "Second seat used its P2 Pillar right",
    ("all", "declined"): "Second seat declined the right",
    ("mirror", "any"): "Mirror matches (same deck both seats)",
    ("mirror", "used"): "Mirrors, P2 right used",
    ("mirror", "declined"): "Mirrors, P2 right declined",
}


def seats_table(m: Metrics) -> Table:
    multi = m.seats["n_players"].n_unique() > 1
    rows, hl = [], []
    for r in m.seats.iter_rows(named=True):
        label = SCOPE_LABELS[(r["scope"], r["p2"])]
        if multi:
            label += f" ({r['n_players']} players)"
        rows.append([label, count(r["games"]),
                     rate_text(r["first_win_rate"], r["first_win_rate_lo"],
                               r["first_win_rate_hi"], r["games"]),
                     pct(r["fair"]), count(r["draws"])])
        lo, hi = r["first_win_rate_lo"], r["first_win_rate_hi"]
        hl.append(lo is not None and (lo > r["fair"] or hi < r["fair"]))
    return Table(["Games", "Count", "First seat wins [95% CI]", "Fair", "Draws"], rows, hl)


def branches_table(m: Metrics) -> Table:
    rows = []
    for r in m.branch_summary.iter_rows(named=True):
        rows.append([branch_label(r["branch"]), r["deck_names"] or EMPTY, count(r["games"]),
                     rate_text(r["win_rate"], r["win_rate_lo"], r["win_rate_hi"], r["games"])])
    return Table(["Main branch", "Decks", "Games", "Win rate [95% CI]"], rows)


def cards_table(cards: pl.DataFrame, limit: int | None = None) -> Table:
    """Flagged cards first (by IWD), then the rest by IWD; ``limit`` rows at most."""
    flagged = cards.filter(pl.col("flag") != "")
    rest = cards.filter(pl.col("flag") == "")
    df = pl.concat([flagged, rest])
    if limit is not None:
        df = df.head(limit)
    rows, hl = [], []
    for r in df.iter_rows(named=True):
        rows.append([
            r["card"], str(r.get("type") or EMPTY), branch_label(r.get("branch")),
            count(r["held"]),
            rate_text(r["oh_wr"], r["oh_wr_lo"], r["oh_wr_hi"], r["oh"]),
            rate_text(r["gd_wr"], r["gd_wr_lo"], r["gd_wr_hi"], r["gd"]),
            rate_text(r["gih_wr"], r["gih_wr_lo"], r["gih_wr_hi"], r["gih"]),
            rate_text(r["gns_wr"], r["gns_wr_lo"], r["gns_wr_hi"], r["gns"]),
            diff_text(r["iwd"], r["iwd_lo"], r["iwd_hi"], r["gih"], r["gns"]),
            rate_text(r["played_wr"], r["played_wr_lo"], r["played_wr_hi"], r["played"]),
            rate_text(r["play_rate"], r["play_rate_lo"], r["play_rate_hi"], r["held"]),
            {"over": "over-performs", "under": "under-performs"}.get(r["flag"], ""),
        ])
        hl.append(r["flag"] != "")
    return Table(["Card", "Type", "Branch", "Games held", "OH WR", "GD WR", "GIH WR", "GNS WR",
                  "IWD [95% CI] (GIH vs GNS games)", "Played WR", "Play rate", "Flag (BH 5%)"], rows, hl)


def length_table(m: Metrics) -> Table:
    rows = []
    for r in m.length.iter_rows(named=True):
        if r["games"] == 0:
            rows.append([path_label(r["path"]) if r["path"] != "all" else "All games", "0",
                         f"{EMPTY}  (n=0)", EMPTY, EMPTY, f"{EMPTY}  (n=0)"])
            continue
        rows.append([
            "All games" if r["path"] == "all" else path_label(r["path"]),
            count(r["games"]),
            f"{num(r['turns_median'])} ({num(r['turns_q1'])}–{num(r['turns_q3'])})",
            f"{num(r['turns_p10'])}–{num(r['turns_p90'])}",
            f"{num(r['turns_min'])}–{num(r['turns_max'])}",
            rate_text(r["in_window_rate"], r["in_window_rate_lo"], r["in_window_rate_hi"],
                      r["games"]),
        ])
    return Table(["Ended by", "Games", "Turns: median (IQR)", "10–90%", "Range",
                  "Within 15–35 min"], rows)
