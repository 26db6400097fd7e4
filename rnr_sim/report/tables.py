"""Display tables: the metric frames as rows of text, shared by the HTML and Markdown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import polars as pl

from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.analytics.metrics import Metrics
from rnr_sim.display import (
    EMPTY,
    branch_label,
    count,
    interval,
    missing,
    num,
    p_text,
    path_label,
    pct,
    pp,
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
    """One row per deck; the Nash share only with two players (no Nash mix at more)."""
    nash = m.players <= 2
    share = dict(m.nash.select("deck", "share").iter_rows())
    rows = []
    for r in m.decks.iter_rows(named=True):
        rows.append([
            r["deck"], branch_label(r["main_branch"]), count(r["games"]),
            rate_text(r["win_rate"], r["win_rate_lo"], r["win_rate_hi"], r["games"]),
            *([pct(share.get(r["deck"]))] if nash else []),
            *[_share(r, p) for p in WIN_PATHS],
            _iqr(r),
        ])
    return Table(
        ["Deck", "Main branch", "Games", "Win rate [95% CI]",
         *(["Nash share"] if nash else []),
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
                row.append(f"mirror (n={count(r['games'])})" if r["games"] else EMPTY)
            else:
                row.append(rate_text(r["win_rate"], r["win_rate_lo"], r["win_rate_hi"], r["n"]))
        rows.append(row)
    return Table(["row vs column", *[label(k) for k in keys]], rows)


def _support_text(freq) -> str:
    """How often a deck is in the mix over the bootstrap's resamples, in words."""
    if missing(freq):
        return EMPTY
    if freq == 0:
        return "in no resample"
    if freq == 1:
        return "in every resample"
    share = ("under 1%" if freq < 0.005 else "over 99%" if freq > 0.995 else pct(freq, 0))
    return f"in the support in {share} of resamples"


def nash_table(m: Metrics) -> Table:
    """The Nash mix, two players only (``m.players > 2``: no rows; the page says why):
    each deck's share with its bootstrap interval, how often it is in the support over
    the resamples, its win rate against the mix and the decks it met."""
    head = ["Deck", "Share of the Nash mix [95% CI]", "In the mix", "Win rate against the mix",
            "Decks met"]
    from rnr_sim.report.text import vs_deck

    if m.players > 2 or vs_deck(m) is not None:  # no metagame to solve (text.nash_method_note)
        return Table(head, [])
    rows, hl = [], []
    for r in m.nash.iter_rows(named=True):
        if r["share"] is None:
            rows.append([r["deck"], f"{EMPTY}  (met no other deck)", EMPTY, EMPTY,
                         count(r["opponents"])])
        else:
            share = f"{pct(r['share'])} {interval(r.get('share_lo'), r.get('share_hi'))}"
            rows.append([r["deck"], share.strip(), _support_text(r.get("support_freq")),
                         pct(r["expected_win_rate"]), count(r["opponents"])])
        hl.append(bool(r["in_support"]))
    return Table(head, rows, hl)


def paths_table(frame: pl.DataFrame, group_label: str,
                label: Callable[[str], str] = lambda k: k) -> Table:
    """Each group's wins split by path. The last two columns set the split against Art.
    III's flat 25% as a reference line only (they mostly show which paths the decks aim
    at), so no row is highlighted on them: a path is judged against the deck-pool
    expectation (``paths_expected_table``)."""
    rows = []
    for r in frame.iter_rows(named=True):
        rows.append([
            "All games" if r["group"] == "all" and group_label == "Games" else label(r["group"]),
            count(r["wins"]),
            *[_share(r, p) for p in WIN_PATHS],
            pct(r["draw_rate"]) if r["games"] else f"{EMPTY}  (n=0)",
            EMPTY if r["max_gap"] is None else f"{100 * r['max_gap']:.1f} pp",
            EMPTY if r["chi2"] is None else f"{r['chi2']:,.1f} ({p_text(r['chi2_p'])})",
        ])
    return Table(
        [group_label, "Wins", *[path_label(p) for p in WIN_PATHS], "Draws (of games)",
         "Art. III reference (flat 25%): largest gap",
         "Art. III reference (flat 25%): χ² (df 3)"],
        rows,
    )


def paths_expected_table(m: Metrics) -> Table:
    """Each path's observed share of the wins against the deck-pool expectation (the
    share it would take if every deck won its fair share with its own path mix), and the
    gap with its interval; highlighted where the gap's interval is clear of 0."""
    head = ["Path", "Wins", "Observed share [95% CI]", "Deck-pool expectation [95% CI]",
            "Gap: observed − expected [95% CI]", "Decks winning by it"]
    exp = m.paths_expected
    if exp is None:
        return Table(head, [])
    rows, hl = [], []
    for r in exp.iter_rows(named=True):
        if missing(r["share"]):
            rows.append([path_label(r["path"]), count(r["wins"]), f"{EMPTY}  (n=0)", EMPTY,
                         EMPTY, EMPTY])
            hl.append(False)
            continue
        rows.append([
            path_label(r["path"]), count(r["wins"]),
            f"{pct(r['share'])} {interval(r['share_lo'], r['share_hi'])}".strip(),
            f"{pct(r['expected'])} {interval(r['expected_lo'], r['expected_hi'])}".strip(),
            f"{pp(r['gap'])} {interval(r['gap_lo'], r['gap_hi'], signed=True)}".strip(),
            count(r["decks"]),
        ])
        lo, hi = r["gap_lo"], r["gap_hi"]
        hl.append(not missing(lo) and not missing(hi) and (lo > 0 or hi < 0))
    return Table(head, rows, hl)


def main_path_table(m: Metrics) -> Table:
    """Decks grouped by their main path (the path of most of their wins): their win rate
    against decks of other main paths, with the fair share; highlighted where the
    interval is clear of it."""
    head = ["Main path", "Decks", "Games", "Win rate vs other main paths [95% CI]", "Fair"]
    mp = m.paths_by_main_path
    if mp is None:
        return Table(head, [])
    rows, hl = [], []
    for r in mp.iter_rows(named=True):
        rows.append([path_label(r["main_path"]), r["decks"] or EMPTY, count(r["games"]),
                     rate_text(r["win_rate"], r["win_rate_lo"], r["win_rate_hi"], r["games"]),
                     pct(r["fair"] if not missing(r["fair"]) else m.fair, 0)])
        lo, hi = r["win_rate_lo"], r["win_rate_hi"]
        fair = r["fair"] if not missing(r["fair"]) else m.fair
        hl.append(not missing(lo) and not missing(hi) and (lo > fair or hi < fair))
    return Table(head, rows, hl)


SCOPE_LABELS = {
    ("all", "any"): "All games",
    ("all", "used"): "Second seat used its P2 Pillar right",
    ("all", "declined"): "Second seat did not use the right (no Pillar in hand, or declined)",
    ("mirror", "any"): "Mirror matches (same deck both seats)",
    ("mirror", "used"): "Mirrors, P2 right used",
    ("mirror", "declined"): "Mirrors, P2 right not used",
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


@dataclass
class Column:
    """A column of the card table: its key, header, whether it shows by default, and
    whether it sorts as a number."""

    key: str
    header: str
    default: bool
    numeric: bool
    title: str = ""


@dataclass
class CardTable:
    """Every card, each cell as (text, sort key): what the page's sortable, filterable
    table and the Markdown/CSV views are made from. ``search`` is each row's filter text
    (card, type, branch, the decks that hold it), lower case."""

    columns: list[Column]
    rows: list[list[tuple[str, float | str | None]]]
    search: list[str]
    highlight: list[bool]

    def table(self, limit: int | None = None, every_column: bool = False) -> Table:
        keep = [i for i, c in enumerate(self.columns) if every_column or c.default]
        rows = self.rows[:limit] if limit is not None else self.rows
        return Table([self.columns[i].header for i in keep],
                     [[r[i][0] for i in keep] for r in rows],
                     self.highlight[: len(rows)])


FLAG_TEXT = {"over": "over-performs", "under": "under-performs"}


def _ci(lo, hi, signed: bool = False) -> str:
    return interval(lo, hi, 1, signed=signed)


def _rate_cell(r: dict, key: str, n_key: str) -> tuple[str, float | None]:
    """"54.2% [50.1, 58.3]"; "—  (n=0)" when there are no games to rate."""
    v = r.get(key)
    if missing(v) or not r.get(n_key):
        return f"{EMPTY}  (n={count(r.get(n_key) or 0)})", None
    return f"{pct(v)} {_ci(r.get(f'{key}_lo'), r.get(f'{key}_hi'))}".strip(), float(v)


def _pp_cell(r: dict, key: str, n: str) -> tuple[str, float | None]:
    """"-25.2 pp [-26.4, -24.1]"; "—  (n=…)" when the difference has no value."""
    v = r.get(key)
    if missing(v):
        return f"{EMPTY}  ({n})", None
    return f"{pp(v)} {_ci(r.get(f'{key}_lo'), r.get(f'{key}_hi'), signed=True)}".strip(), float(v)


def card_metric_key(cards: pl.DataFrame) -> str:
    """The card metric that ranks and flags cards: ``iwd_adjusted`` when the table has it."""
    return "iwd_adjusted" if "iwd_adjusted" in cards.columns else "iwd"


def card_order(cards: pl.DataFrame) -> pl.DataFrame:
    """Flagged cards first, then by the headline metric (largest first; none last), ties
    by card name: the same order on every run of the report."""
    key = card_metric_key(cards)
    return cards.with_columns(
        (pl.col("flag") == "").alias("_unflagged"),
        pl.col(key).is_null().alias("_none"),
    ).sort(["_unflagged", "_none", key, "card"], descending=[False, False, True, False]
           ).drop("_unflagged", "_none")


def drawn_cards(cards: pl.DataFrame) -> pl.DataFrame:
    """The cards a deck draws: every row but the Unconstitutional Acts, which start in play
    in every game and are never drawn (Art. IV §3.2), so they have no games "not
    seen" to compare with and every drawn-card rate of theirs is empty."""
    return cards.filter(pl.col("type") != "ua") if "type" in cards.columns else cards


def undrawn_uas(cards: pl.DataFrame) -> list[str]:
    """The Unconstitutional Acts ``drawn_cards`` leaves out, by name."""
    if "type" not in cards.columns:
        return []
    return sorted(cards.filter(pl.col("type") == "ua")["card"].to_list())


def flag_header(band: float) -> str:
    """The flag column's header: the rule, with the run's no-effect band (a rate
    difference, shown in points) when it has one."""
    return f"Flag (BH 5%, beyond ±{100 * band:.2f} pp)" if band > 0 else "Flag (BH 5%)"


def card_table(cards: pl.DataFrame, by_deck: pl.DataFrame | None = None,
               band: float = 0.0) -> CardTable:
    """The card table (17lands-style) of the cards a deck draws (``drawn_cards``: the UAs
    left out): a short default column set (card, decks, games, GIH WR, IWD adjusted, raw
    IWD, play rate, flag) and the rest behind a toggle. ``band``: the no-effect band the
    flags are clear of (``cards.no_effect_band``), named in the flag column's header."""
    cards = drawn_cards(cards)
    adjusted = "iwd_adjusted" in cards.columns
    holders: dict[str, list[str]] = {}
    if by_deck is not None and by_deck.height:
        for deck, card in by_deck.select("deck", "card").iter_rows():
            holders.setdefault(card, []).append(deck)
    cols = [
        Column("card", "Card", True, False),
        Column("decks", "Decks", True, True, "decks in the run that hold the card"),
        Column("held", "Games", True, True, "games a deck holding the card played"),
        Column("gih_wr", "GIH WR [95% CI]", True, True,
               "win rate in the games the card was seen (opening hand or drawn)"),
    ]
    if adjusted:
        cols.append(Column("iwd_adjusted", "IWD adjusted, pp [95% CI]", True, True,
                           "IWD compared within each deck and game length, then combined"))
    cols += [
        Column("iwd", "IWD raw, pp [95% CI]", True, True,
               "GIH WR minus GNS WR, pooled over decks: confounded by deck and game length"),
        Column("play_rate", "Play rate [95% CI]", True, True,
               "games played / games the deck held it"),
        Column("flag", flag_header(band), True, False,
               "significant after Benjamini-Hochberg at 5%"
               + (" on the adjusted IWD" if adjusted else "")
               + (f", its interval clear of ±{100 * band:.2f} pp" if band > 0 else "")),
        Column("type", "Type", False, False),
        Column("branch", "Branch", False, False),
        *([Column("set", "Set", False, False, "the catalog layer that defines the card")]
          if "set" in cards.columns else []),
        Column("holders", "Held by", False, False),
        Column("oh_wr", "OH WR", False, True, "win rate when in the opening hand"),
        Column("gd_wr", "GD WR", False, True, "win rate when drawn later"),
        Column("gns_wr", "GNS WR", False, True, "win rate when never seen"),
        Column("played_wr", "Played WR", False, True, "win rate when played"),
        Column("gih", "GIH games", False, True),
        Column("gns", "GNS games", False, True),
    ]
    rows, search, hl = [], [], []
    for r in card_order(cards).iter_rows(named=True):
        decks = sorted(holders.get(r["card"], []))
        ns = f"n={count(r['gih'] or 0)} vs {count(r['gns'] or 0)}"
        cell = {
            "card": (r["card"], r["card"].lower()),
            "decks": (count(r.get("decks")), r.get("decks")),
            "held": (count(r["held"]), r["held"]),
            "gih_wr": _rate_cell(r, "gih_wr", "gih"),
            "iwd_adjusted": _pp_cell(r, "iwd_adjusted", ns) if adjusted else ("", None),
            "iwd": _pp_cell(r, "iwd", ns),
            "play_rate": _rate_cell(r, "play_rate", "held"),
            "flag": (FLAG_TEXT.get(r["flag"], ""), r["flag"]),
            "type": (str(r.get("type") or EMPTY), str(r.get("type") or "")),
            "branch": (branch_label(r.get("branch")), str(r.get("branch") or "")),
            "set": (str(r.get("set") or EMPTY), str(r.get("set") or "")),
            "holders": (", ".join(decks) or EMPTY, ", ".join(decks)),
            "oh_wr": _rate_cell(r, "oh_wr", "oh"),
            "gd_wr": _rate_cell(r, "gd_wr", "gd"),
            "gns_wr": _rate_cell(r, "gns_wr", "gns"),
            "played_wr": _rate_cell(r, "played_wr", "played"),
            "gih": (count(r["gih"]), r["gih"]),
            "gns": (count(r["gns"]), r["gns"]),
        }
        rows.append([cell[c.key] for c in cols])
        search.append(" ".join([r["card"], str(r.get("type") or ""),
                                branch_label(r.get("branch")), str(r.get("set") or ""),
                                *decks]).lower())
        hl.append(r["flag"] != "")
    return CardTable(cols, rows, search, hl)


def cards_table(cards: pl.DataFrame, limit: int | None = None,
                by_deck: pl.DataFrame | None = None, band: float = 0.0) -> Table:
    """The card table's default columns: flagged cards first, then by the headline metric;
    ``limit`` rows at most."""
    return card_table(cards, by_deck, band).table(limit)


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


def skill_table(skill: pl.DataFrame) -> Table:
    """The skill table (``rnr_sim.skill``): one row per deck, each pilot's win share and
    paired difference from the default pilot; highlighted: a deck whose gap (best pilot
    minus default) is above 0 with an interval clear of 0 for that best pilot."""
    from rnr_sim.skill import REFERENCE, display_rows

    header, rows = display_rows(skill)
    best = skill.filter(pl.col("pilot") == pl.col("best_pilot"))
    clear = {r["deck"]: r["best_pilot"] != REFERENCE and r["vs_default_lo"] is not None
             and r["vs_default_lo"] > 0 for r in best.iter_rows(named=True)}
    return Table(header, rows, [clear.get(r[0], False) for r in rows])
