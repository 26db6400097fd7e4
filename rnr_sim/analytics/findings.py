"""The verdict: which findings lead the report, by one rule over every kind of metric.

A candidate is a measured value with its standard error (from per-deal sums: the deal is
the unit) and the value it would have if the game were balanced (``fair``). Kinds:

- ``deck``: each deck's win rate against the field; fair = 1 / players.
- ``path``: each victory path's share of all wins; fair = the **deck-pool expectation**,
  the share it would take if every deck won its fair share with its own path mix
  (``paths.path_expectation``). The flat 1/4 of Art. III is a reference line only: it
  tests which paths the decks aim at, not whether a path wins more than it should.
- ``card``: each card's ``iwd_adjusted`` (IWD within each deck at equal game length,
  ``cards.adjusted_iwd``); fair = 0. A card leads only if the Cards section flags it
  (its interval also clear of the no-effect band, ``cards.flag_beyond_band``): the
  verdict never names a card that section reads as no effect.
- ``seat``: the first seat's win rate, over all games and over mirror matches;
  fair = 1 / players.
- ``branch``: each main branch's win rate, for branches with two or more decks that
  played (with one, it is that deck's finding again); fair = 1 / players.

The rule (``VERDICT_RULE``, the same for every kind):

1. **Enough games.** A candidate is judged only if it rests on at least ``MIN_GAMES``
   games and ``MIN_DEALS`` deals (where known) and its 95% interval is at most
   ``± MAX_HALF_WIDTH`` wide; otherwise it is "too few games to judge", never a claim.
2. **One test.** Each judged candidate's effect ``value - fair`` is divided by its
   standard error; the two-sided normal p-values of all judged candidates of all kinds
   together go through one Benjamini-Hochberg correction at 5%.
3. **One scale.** Survivors are scored by how far their 95% interval stays from the fair
   value, in percentage points (the smallest effect the data are sure of). The best of
   each kind competes; the top three lead the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import polars as pl

from rnr_sim.analytics.stats import Z95, benjamini_hochberg, two_sided_p

#: The minimum sample of a finding: games, deals, and the widest 95% half-interval.
MIN_GAMES = 200
MIN_DEALS = 100
MAX_HALF_WIDTH = 0.05
#: False-discovery rate of the one Benjamini-Hochberg correction over all candidates.
FDR = 0.05
KIND_ORDER = ("deck", "path", "card", "seat", "branch")

VERDICT_RULE = (
    "How these were chosen, one rule for every kind: each deck's win rate, each victory "
    "path's share of the wins (against what the deck pool alone would give it), each "
    "card's adjusted IWD, the first seat's win rate (all games, mirrors) and each branch's "
    "win rate is a candidate. A candidate is judged only if it rests on at least "
    f"{MIN_GAMES} games from {MIN_DEALS} deals and its 95% interval is no wider than "
    f"±{100 * MAX_HALF_WIDTH:g} points; otherwise it is too few games to judge. Its distance "
    "from the fair value, over its standard error (the deal as the unit), gives a p-value; "
    "all candidates' p-values go through one Benjamini-Hochberg correction at 5%. Those that "
    "survive are scored by how far their 95% interval stays from the fair value, in "
    "percentage points; the best of each kind competes and the top three lead. A card "
    "leads only if the Cards section flags it (its interval also clear of the no-effect "
    "band measured on the plainest cards)."
)


@dataclass(frozen=True)
class Finding:
    """One candidate finding: ``value`` with 95% interval [``lo``, ``hi``] over ``n`` games.

    ``se`` is the standard error of ``value - fair`` (from the interval when not given);
    ``deals`` the deals behind it (None if unknown); ``significant`` is set by
    ``judge`` (Benjamini-Hochberg over every candidate).
    """

    kind: str
    subject: str
    value: float
    lo: float
    hi: float
    fair: float
    n: int
    detail: dict[str, Any] = field(default_factory=dict)
    se: float | None = None
    deals: int | None = None
    significant: bool = False

    @property
    def stderr(self) -> float:
        if self.se is not None and math.isfinite(self.se) and self.se > 0:
            return self.se
        return max((self.hi - self.lo) / (2 * Z95), 0.0)

    @property
    def half_width(self) -> float:
        return (self.hi - self.lo) / 2

    @property
    def p(self) -> float:
        """Two-sided normal p-value of ``(value - fair) / stderr``."""
        se = self.stderr
        if se <= 0:
            return 1.0 if self.value == self.fair else 0.0
        return two_sided_p((self.value - self.fair) / se)

    @property
    def judgeable(self) -> bool:
        """Enough games to judge: ``MIN_GAMES`` games, ``MIN_DEALS`` deals (if known) and
        a 95% interval no wider than ``± MAX_HALF_WIDTH``."""
        return (self.n >= MIN_GAMES and (self.deals is None or self.deals >= MIN_DEALS)
                and self.half_width <= MAX_HALF_WIDTH)

    @property
    def score(self) -> float:
        """Percentage points from ``fair`` to the interval's nearest end (0 if covered)."""
        return 100.0 * max(0.0, self.lo - self.fair, self.fair - self.hi)

    @property
    def direction(self) -> str:
        return "above" if self.value > self.fair else "below"


def _ok(*xs: Any) -> bool:
    return all(x is not None and not (isinstance(x, float) and math.isnan(x)) for x in xs)


def _int(x: Any) -> int | None:
    return None if x is None else int(x)


def deck_candidates(decks: pl.DataFrame, nash: pl.DataFrame, fair: float) -> list[Finding]:
    cols = [c for c in ("share", "share_lo", "share_hi", "support_freq") if c in nash.columns]
    info = {r["deck"]: r for r in nash.select("deck", *cols).iter_rows(named=True)}
    out = []
    for r in decks.iter_rows(named=True):
        if r["games"] > 0 and _ok(r["win_rate"], r["win_rate_lo"], r["win_rate_hi"]):
            nash_row = info.get(r["deck"], {})
            out.append(Finding("deck", r["deck"], r["win_rate"], r["win_rate_lo"],
                               r["win_rate_hi"], fair, r["games"],
                               {"nash_share": nash_row.get("share"),
                                "nash_lo": nash_row.get("share_lo"),
                                "nash_hi": nash_row.get("share_hi"),
                                "nash_support": nash_row.get("support_freq")},
                               se=r.get("win_rate_se"), deals=_int(r.get("win_rate_deals"))))
    return out


def path_candidates(expected: pl.DataFrame) -> list[Finding]:
    """Each path's observed share of wins against its deck-pool expectation
    (``paths.path_expectation``); the interval is ``share ± 1.96 gap_se``; ``n`` is all
    wins (the path's own in ``detail["wins"]``)."""
    out = []
    total = int(expected["wins"].sum()) if expected.height else 0
    for r in expected.iter_rows(named=True):
        if r["wins"] > 0 and _ok(r["share"], r["expected"], r["gap_se"]):
            se = r["gap_se"]
            out.append(Finding("path", r["path"], r["share"], r["share"] - Z95 * se,
                               r["share"] + Z95 * se, r["expected"], total,
                               {"wins": r["wins"], "share_lo": r["share_lo"],
                                "share_hi": r["share_hi"], "expected_lo": r["expected_lo"],
                                "expected_hi": r["expected_hi"], "gap": r["gap"],
                                "gap_lo": r["gap_lo"], "gap_hi": r["gap_hi"],
                                "flat": r["flat"]},
                               se=se))
    return out


def card_candidates(cards: pl.DataFrame) -> list[Finding]:
    """Each card's ``iwd_adjusted`` (fair = 0); ``n`` is the games of the decks holding it."""
    out = []
    if "iwd_adjusted" not in cards.columns:
        return out
    for r in cards.iter_rows(named=True):
        if _ok(r["iwd_adjusted"], r["iwd_adjusted_lo"], r["iwd_adjusted_hi"]):
            out.append(Finding("card", r["card"], r["iwd_adjusted"], r["iwd_adjusted_lo"],
                               r["iwd_adjusted_hi"], 0.0, r["held"],
                               {"gih_wr": r["gih_wr"], "gns_wr": r["gns_wr"], "gih": r["gih"],
                                "gns": r["gns"], "iwd": r["iwd"], "turn_gap": r.get("turn_gap"),
                                "decks": r.get("decks"), "flag": r["flag"]},
                               se=r["iwd_adjusted_se"], deals=_int(r.get("adjusted_deals"))))
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
                                            "players": r["n_players"]},
                               se=r.get("first_win_rate_se"),
                               deals=_int(r.get("first_win_rate_deals"))))
    return out


def branch_candidates(branches: pl.DataFrame, decks: pl.DataFrame, fair: float) -> list[Finding]:
    played = decks.filter(pl.col("games") > 0).group_by("main_branch").agg(pl.len())
    n_played = dict(played.iter_rows())
    out = []
    for r in branches.iter_rows(named=True):
        if n_played.get(r["branch"], 0) >= 2 and _ok(r["win_rate"]):
            out.append(Finding("branch", r["branch"], r["win_rate"], r["win_rate_lo"],
                               r["win_rate_hi"], fair, r["games"], {"decks": r["deck_names"]},
                               se=r.get("win_rate_se"), deals=_int(r.get("win_rate_deals"))))
    return out


def judge(candidates: list[Finding], q: float = FDR) -> list[Finding]:
    """The candidates with ``significant`` set: judgeable ones (``Finding.judgeable``) whose
    p-value survives one Benjamini-Hochberg correction at ``q`` over all judgeable
    candidates of every kind."""
    judged = [c for c in candidates if c.judgeable]
    flags = benjamini_hochberg(np.array([c.p for c in judged], dtype=np.float64), q)
    keep = {id(c): bool(f) for c, f in zip(judged, flags, strict=True)}
    return [replace(c, significant=keep.get(id(c), False)) for c in candidates]


def too_few(candidates: list[Finding]) -> list[Finding]:
    """The candidates left out as too few games to judge."""
    return [c for c in candidates if not c.judgeable]


def top_findings(candidates: list[Finding], k: int = 3, q: float = FDR) -> list[Finding]:
    """The best-scoring significant candidate of each kind, then the ``k`` best of those.

    Significant: ``judge`` (enough games, Benjamini-Hochberg over all candidates); a card
    also flagged by the card table (``detail["flag"]``: clear of the no-effect band). Ties
    go to the larger sample, then to the kind order deck, path, card, seat, branch.
    """
    order = {kind: i for i, kind in enumerate(KIND_ORDER)}
    best: dict[str, Finding] = {}
    for c in judge(candidates, q):
        if not c.significant or c.score <= 0:
            continue
        if c.kind == "card" and c.detail.get("flag") == "":
            continue  # inside the no-effect band (cards.flag_beyond_band)
        cur = best.get(c.kind)
        if cur is None or (c.score, c.n) > (cur.score, cur.n):
            best[c.kind] = c
    ranked = sorted(best.values(), key=lambda f: (-f.score, -f.n, order.get(f.kind, 99)))
    return ranked[:k]
