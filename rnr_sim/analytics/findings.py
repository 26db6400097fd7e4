"""The verdict: which findings lead the report, by one scoring rule over the metrics.

Scoring rule: a candidate is a measured rate with a 95% interval and the value it would
have if the game were balanced (``fair``). Its score is the distance, in percentage
points, from ``fair`` to the nearest end of the interval -- 0 when the interval covers
``fair``, so only findings the data are sure of can score, and a large, precise effect
beats a large, noisy one. Candidates by kind:

- ``deck``: each deck's win rate; fair = 1 / players.
- ``path``: each victory path's share of all wins; fair = 1/4 (Art. III: "No path is
  superior to another").
- ``card``: each card's IWD (GIH WR - GNS WR), only cards flagged after
  Benjamini-Hochberg; fair = 0.
- ``seat``: the first seat's win rate, over all games and over mirror matches;
  fair = 1 / players.
- ``branch``: each main branch's win rate, for branches with two or more decks that
  played (with one, it is that deck's finding again); fair = 1 / players.

The best candidate of each kind competes; the top three by score lead the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from rnr_sim.analytics.decks import WIN_PATHS


@dataclass(frozen=True)
class Finding:
    """One candidate finding: ``value`` with 95% interval [``lo``, ``hi``] over ``n``."""

    kind: str
    subject: str
    value: float
    lo: float
    hi: float
    fair: float
    n: int
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def score(self) -> float:
        """Percentage points from ``fair`` to the interval's nearest end (0 if covered)."""
        return 100.0 * max(0.0, self.lo - self.fair, self.fair - self.hi)

    @property
    def direction(self) -> str:
        return "above" if self.value > self.fair else "below"


def _ok(*xs: Any) -> bool:
    return all(x is not None for x in xs)


def deck_candidates(decks: pl.DataFrame, nash: pl.DataFrame, fair: float) -> list[Finding]:
    share = dict(nash.select("deck", "share").iter_rows())
    out = []
    for r in decks.iter_rows(named=True):
        if r["games"] > 0 and _ok(r["win_rate"], r["win_rate_lo"], r["win_rate_hi"]):
            out.append(Finding("deck", r["deck"], r["win_rate"], r["win_rate_lo"],
                               r["win_rate_hi"], fair, r["games"],
                               {"nash_share": share.get(r["deck"])}))
    return out


def path_candidates(overall: pl.DataFrame) -> list[Finding]:
    out = []
    for r in overall.iter_rows(named=True):
        for p in WIN_PATHS:
            if r["wins"] > 0 and _ok(r[f"share_{p}"]):
                out.append(Finding("path", p, r[f"share_{p}"], r[f"share_{p}_lo"],
                                   r[f"share_{p}_hi"], 0.25, r["wins"],
                                   {"wins": r[f"wins_{p}"], "chi2_p": r["chi2_p"]}))
    return out


def card_candidates(cards: pl.DataFrame) -> list[Finding]:
    out = []
    for r in cards.filter(pl.col("flag") != "").iter_rows(named=True):
        if _ok(r["iwd"], r["iwd_lo"], r["iwd_hi"]):
            out.append(Finding("card", r["card"], r["iwd"], r["iwd_lo"], r["iwd_hi"], 0.0,
                               r["gih"], {"gih_wr": r["gih_wr"], "gns_wr": r["gns_wr"],
                                          "gns": r["gns"], "p": r["iwd_p"], "flag": r["flag"]}))
    return out


def seat_candidates(seats: pl.DataFrame) -> list[Finding]:
    out = []
    # the P2 split is left out: the second seat chooses to use the right, so a gap there
    # is an association, not an imbalance of the seats
    wanted = {("all", "any"), ("mirror", "any")}
    for r in seats.iter_rows(named=True):
        if (r["scope"], r["p2"]) in wanted and r["games"] > 0 and _ok(r["first_win_rate"]):
            out.append(Finding("seat", f"{r['scope']}/{r['p2']}", r["first_win_rate"],
                               r["first_win_rate_lo"], r["first_win_rate_hi"], r["fair"],
                               r["games"], {"scope": r["scope"], "p2": r["p2"],
                                            "players": r["n_players"]}))
    return out


def branch_candidates(branches: pl.DataFrame, decks: pl.DataFrame, fair: float) -> list[Finding]:
    played = decks.filter(pl.col("games") > 0).group_by("main_branch").agg(pl.len())
    n_played = dict(played.iter_rows())
    out = []
    for r in branches.iter_rows(named=True):
        if n_played.get(r["branch"], 0) >= 2 and _ok(r["win_rate"]):
            out.append(Finding("branch", r["branch"], r["win_rate"], r["win_rate_lo"],
                               r["win_rate_hi"], fair, r["games"], {"decks": r["deck_names"]}))
    return out


def top_findings(candidates: list[Finding], k: int = 3) -> list[Finding]:
    """The best-scoring candidate of each kind, then the ``k`` best of those with score > 0.

    Ties go to the larger sample, then to the kind order deck, path, card, seat, branch.
    """
    order = {kind: i for i, kind in enumerate(("deck", "path", "card", "seat", "branch"))}
    best: dict[str, Finding] = {}
    for c in candidates:
        cur = best.get(c.kind)
        if cur is None or (c.score, c.n) > (cur.score, cur.n):
            best[c.kind] = c
    ranked = sorted(
        (f for f in best.values() if f.score > 0),
        key=lambda f: (-f.score, -f.n, order.get(f.kind, 99)),
    )
    return ranked[:k]
