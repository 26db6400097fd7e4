"""The report's words: verdict statements and the one-paragraph lead of each section.

Everything here returns plain text (the HTML writer escapes it).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.analytics.findings import Finding
from rnr_sim.analytics.length import MINUTES_PER_TURN, RULEBOOK_MINUTES
from rnr_sim.analytics.metrics import Metrics
from rnr_sim.report.format import (
    branch_label,
    count,
    interval,
    missing,
    p_text,
    path_label,
    pct,
    pp,
)

SEAT_SCOPES = {
    ("all", "any"): "all games",
    ("mirror", "any"): "mirror matches",
    ("all", "used"): "games where the second seat used its P2 Pillar right",
    ("all", "declined"): "games where the second seat declined its P2 Pillar right",
}


def _rate(v: Any, lo: Any, hi: Any) -> str:
    return f"{pct(v)} {interval(lo, hi)}".strip()


def finding_title(f: Finding) -> str:
    up = f.value > f.fair
    if f.kind == "deck":
        return f"{'Dominant' if up else 'Weak'} deck: {f.subject}"
    if f.kind == "path":
        return f"{'Dominant' if up else 'Neglected'} victory path: {path_label(f.subject)}"
    if f.kind == "card":
        return f"{'Over' if up else 'Under'}-performing card: {f.subject}"
    if f.kind == "seat":
        return "Seat imbalance: " + ("the first seat is ahead" if up else "the second seat is ahead")
    if f.kind == "branch":
        return f"{'Strong' if up else 'Weak'} branch: {branch_label(f.subject)}"
    return f.subject


def finding_text(f: Finding) -> str:
    """One sentence with the number, its 95% interval and its sample."""
    r = _rate(f.value, f.lo, f.hi)
    gap = abs(f.value - f.fair) * 100
    if f.kind == "deck":
        s = (f"{f.subject} wins {r} of its games (n={count(f.n)}), {gap:.1f} points "
             f"{f.direction} an even {pct(f.fair, 0)}.")
        share = f.detail.get("nash_share")
        if not missing(share) and share >= 0.5:
            s += f" The Nash metagame plays it {pct(share)} of the time."
        elif not missing(share) and share == 0 and f.value < f.fair:
            s += " The Nash metagame never plays it."
        return s
    if f.kind == "path":
        return (f"{path_label(f.subject)} victories are {r} of all {count(f.n)} wins; if no "
                f"path were superior (Art. III), each would take 25%.")
    if f.kind == "card":
        d = f.detail
        return (f"Decks that see {f.subject} win {pct(d['gih_wr'])} of those games (n={count(f.n)}) "
                f"against {pct(d['gns_wr'])} when they never see it (n={count(d['gns'])}): "
                f"IWD {pp(f.value)} {interval(f.lo, f.hi, signed=True)}, significant after "
                f"Benjamini-Hochberg at 5% ({p_text(d['p'])}).")
    if f.kind == "seat":
        scope = SEAT_SCOPES.get((f.detail["scope"], f.detail["p2"]), "these games")
        return (f"The first seat wins {r} of {scope} (n={count(f.n)}); {pct(f.fair, 0)} would "
                f"mean the seat order does not matter.")
    if f.kind == "branch":
        return (f"Decks whose main branch is {branch_label(f.subject)} ({f.detail['decks']}) "
                f"win {r} of their games (n={count(f.n)}), against an even {pct(f.fair, 0)}.")
    return r


def verdict_empty(m: Metrics) -> str:
    games = m.length.filter(pl.col("path") == "all")["games"].item()
    return (f"No finding clears its 95% interval in this run ({count(games)} games): no deck, "
            f"path, card, seat or branch is measurably away from fair. A larger run narrows "
            f"the intervals.")


def scoring_rule() -> str:
    return ("How these were chosen: every deck's win rate, every path's share of wins, every "
            "flagged card's IWD, the first seat's win rate (all games, mirrors) and every "
            "branch's win rate is "
            "scored by how far its 95% interval stays from the fair value (0 if the interval "
            "covers it); the best of each kind competes and the top three lead.")


# ---------------------------------------------------------------- section leads
def decks_lead(m: Metrics) -> str:
    played = m.decks.filter(pl.col("games") > 0)
    idle = m.decks.filter(pl.col("games") == 0)["deck"].to_list()
    if played.height == 0:
        return "No deck played a game in this run."
    best, worst = played.row(0, named=True), played.row(-1, named=True)
    fair = m.fair
    off = played.filter((pl.col("win_rate_lo") > fair) | (pl.col("win_rate_hi") < fair)).height
    s = (f"Each deck's share of its games won, over both seats. {best['deck']} does best at "
         f"{_rate(best['win_rate'], best['win_rate_lo'], best['win_rate_hi'])}")
    if played.height > 1:
        s += (f", {worst['deck']} worst at "
              f"{_rate(worst['win_rate'], worst['win_rate_lo'], worst['win_rate_hi'])}")
    s += (f". {off} of {played.height} decks sit measurably away from an even {pct(fair, 0)} "
          f"(interval clear of it).")
    if idle:
        s += f" Played no games: {', '.join(idle)}."
    return s


def matchups_lead(m: Metrics) -> str:
    s = ("Each cell is the row deck's win rate against the column deck, both seat orders "
         "weighted equally, with its 95% interval and game count. ")
    support = m.nash.filter(pl.col("in_support"))
    if support.height == 0:
        return s + "No two decks met, so there is no metagame to solve."
    mix = ", ".join(f"{r['deck']} {pct(r['share'])}" for r in support.iter_rows(named=True))
    if support.height == 1:
        s += (f"The Nash equilibrium, the metagame no deck can exploit, is {mix}: no other "
              f"deck beats it on average.")
    else:
        s += (f"The Nash equilibrium, the metagame no deck can exploit, mixes {mix}; each of "
              f"these wins 50% against the mix.")
    out = m.nash.filter(~pl.col("in_support") & pl.col("share").is_not_null())
    if out.height:
        worst = out.sort("expected_win_rate").row(0, named=True)
        s += (f" Decks outside it lose to the mix, down to {worst['deck']} at "
              f"{pct(worst['expected_win_rate'])}.")
    return s


def paths_lead(m: Metrics) -> str:
    r = m.paths_overall.row(0, named=True)
    if not r["wins"]:
        return "No game was won, so there are no victory paths to compare."
    shares = sorted(WIN_PATHS, key=lambda p: r[f"share_{p}"], reverse=True)
    top, low = shares[0], shares[-1]
    verdict = ("The split is consistent with equal paths"
               if r["chi2_p"] is None or r["chi2_p"] >= 0.05
               else "The paths are not equal")
    return (f"Art. III says no path to victory is superior: if so, each would take 25% of the "
            f"wins. {path_label(top)} takes "
            f"{_rate(r[f'share_{top}'], r[f'share_{top}_lo'], r[f'share_{top}_hi'])} and "
            f"{path_label(low)} "
            f"{_rate(r[f'share_{low}'], r[f'share_{low}_lo'], r[f'share_{low}_hi'])} of "
            f"{count(r['wins'])} wins; the largest gap from 25% is "
            f"{100 * r['max_gap']:.1f} points. {verdict} (χ² = {r['chi2']:,.1f}, df 3, "
            f"{p_text(r['chi2_p'])}). {pct(r['draw_rate'])} of games were drawn.")


def seats_lead(m: Metrics) -> str:
    rows = {(r["scope"], r["p2"]): r for r in m.seats.iter_rows(named=True)}

    def fmt(key: tuple[str, str]) -> str:
        r = rows.get(key)
        if r is None or not r["games"]:
            return "—  (n=0)"
        return f"{_rate(r['first_win_rate'], r['first_win_rate_lo'], r['first_win_rate_hi'])}"

    fair = m.fair
    mirror = rows.get(("mirror", "any"))
    mirrors = (f"and {fmt(('mirror', 'any'))} of mirror matches, where the decks are equal"
               if mirror is not None and mirror["games"] else
               "(this run has no mirror matches; a run with --mirrors adds them, to "
               "measure the seats with equal decks)")
    return (f"How often the player who moves first wins; {pct(fair, 0)} would mean the seat "
            f"order does not matter. The first seat wins {fmt(('all', 'any'))} of all games "
            f"{mirrors}. When "
            f"the second seat uses its P2 Pillar right (Amend. VIII) the first seat wins "
            f"{fmt(('all', 'used'))}; when it declines, {fmt(('all', 'declined'))}. The "
            f"second seat chooses whether to use the right, so that split shows association, "
            f"not the right's effect.")


def branches_lead(m: Metrics) -> str:
    played = m.branch_summary.filter(pl.col("games") > 0).sort("win_rate", descending=True)
    s = "Decks grouped by their main branch, the branch with the most cards in the deck. "
    if played.height == 0:
        return s + "No branch played a game."
    best = played.row(0, named=True)
    s += (f"{branch_label(best['branch'])} decks win "
          f"{_rate(best['win_rate'], best['win_rate_lo'], best['win_rate_hi'])}")
    if played.height > 1:
        worst = played.row(-1, named=True)
        s += (f", {branch_label(worst['branch'])} decks "
              f"{_rate(worst['win_rate'], worst['win_rate_lo'], worst['win_rate_hi'])}")
    s += "."
    if played.height and (played["decks"] == 1).all():
        s += " With one deck per branch, this table mirrors the deck table."
    return s


def cards_lead(m: Metrics) -> str:
    tested = m.cards.filter(pl.col("iwd_p").is_not_null()).height
    flagged = m.cards.filter(pl.col("flag") != "")
    s = ("17lands-style card ratings over the decks that hold each card. IWD (improvement "
         "when drawn) is how much more often a deck wins when it sees the card (opening hand "
         "or drawn: GIH) than when it never does (GNS). ")
    if flagged.height == 0:
        return s + (f"No card's IWD differs from zero after Benjamini-Hochberg correction at "
                    f"5% ({tested} cards tested).")
    names = ", ".join(
        f"{r['card']} ({pp(r['iwd'])})" for r in flagged.head(6).iter_rows(named=True)
    )
    more = f" and {flagged.height - 6} more" if flagged.height > 6 else ""
    return s + (f"{flagged.height} of {tested} cards differ from zero after Benjamini-Hochberg "
                f"correction at 5%: {names}{more}. Cards that are seen more in long games "
                f"drift with game length, so read IWD with the play rate beside it.")


def length_lead(m: Metrics) -> str:
    r = m.length.filter(pl.col("path") == "all").row(0, named=True)
    if not r["games"]:
        return "No games were played."
    lo, hi = RULEBOOK_MINUTES
    return (f"Turns per game, all seats' turns counted. The median game lasts "
            f"{r['turns_median']:g} turns (middle half {r['turns_q1']:g}–{r['turns_q3']:g}). "
            f"The rulebook promises {lo:g} to {hi:g} minutes; assuming {MINUTES_PER_TURN:g} "
            f"minute per turn, {_rate(r['in_window_rate'], r['in_window_rate_lo'], r['in_window_rate_hi'])} "
            f"of games fall inside that window, {pct(r['shorter'] / r['games'])} are shorter "
            f"and {pct(r['longer'] / r['games'])} longer.")


def lp_lead(m: Metrics) -> str:
    traced = m.run.lp_curves
    n = 0
    if traced is not None:
        n = traced.select(pl.col("game_id").n_unique()).collect().item()
    return (f"Liberty Points over the turns of {count(n)} traced games: each deck's median "
            f"with its 10–90% band, one panel per matchup. A band that falls steeply shows "
            f"where games are decided.")
