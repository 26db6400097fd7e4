"""The report's words: verdict statements and the one-paragraph lead of each section.

Everything here returns plain text (the HTML writer escapes it).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from rnr_sim.analytics import findings as fnd
from rnr_sim.analytics import stats as _stats
from rnr_sim.analytics.cards import plain_card_baseline
from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.analytics.findings import Finding
from rnr_sim.analytics.length import MINUTES_PER_TURN, RULEBOOK_MINUTES
from rnr_sim.analytics.metrics import Metrics
from rnr_sim.display import (
    branch_label,
    count,
    interval,
    missing,
    path_label,
    pct,
    pp,
)
from rnr_sim.report import tables

SEAT_SCOPES = {
    ("all", "any"): "all games",
    ("mirror", "any"): "mirror matches",
    ("all", "used"): "games where the second seat used its P2 Pillar right",
    ("all", "declined"): "games where the second seat did not use its P2 Pillar right (no Pillar in its opening hand, or its pilot declined)",
}


def _rate(v: Any, lo: Any, hi: Any) -> str:
    return f"{pct(v)} {interval(lo, hi)}".strip()


def finding_title(f: Finding) -> str:
    up = f.value > f.fair
    if f.kind == "deck":
        return f"{'Dominant' if up else 'Weak'} deck: {f.subject}"
    if f.kind == "path":
        return (f"{'Over' if up else 'Under'}-performing victory path: "
                f"{path_label(f.subject)}")
    if f.kind == "card":
        return f"{'Over' if up else 'Under'}-performing card: {f.subject}"
    if f.kind == "seat":
        return "Seat imbalance: " + ("the first seat is ahead" if up else "the second seat is ahead")
    if f.kind == "branch":
        return f"{'Strong' if up else 'Weak'} branch: {branch_label(f.subject)}"
    return f.subject


def _freq(x: float) -> str:
    """A share of resamples: "37%", "under 1%", "over 99%"."""
    if 0 < x < 0.005:
        return "under 1%"
    if 0.995 < x < 1:
        return "over 99%"
    return pct(x, 0)


def nash_words(share: Any, lo: Any, hi: Any, support: Any) -> str:
    """What the Nash metagame does with a deck, in words its bootstrap interval allows.

    "never plays it" only when no resample puts the deck in the mix; otherwise the share
    with its interval and how often the deck is in the support."""
    if missing(share):
        return ""
    if missing(support) or missing(lo) or missing(hi):
        return f"The Nash metagame plays it {pct(share)} of the time (no interval)."
    if support == 0:
        return "The Nash metagame leaves it out in every resample of the deals."
    return (f"The Nash metagame plays it {pct(share)} of the time {interval(lo, hi)}; it is "
            f"in the mix in {_freq(support)} of resamples of the deals.")


def finding_text(f: Finding) -> str:
    """One sentence (or two) with the number, its 95% interval and its sample."""
    r = _rate(f.value, f.lo, f.hi)
    gap = abs(f.value - f.fair) * 100
    if f.kind == "deck":
        s = (f"{f.subject} wins {r} of its games against the field (n={count(f.n)}), "
             f"{gap:.1f} points {f.direction} a fair {pct(f.fair, 0)}.")
        d = f.detail
        words = nash_words(d.get("nash_share"), d.get("nash_lo"), d.get("nash_hi"),
                           d.get("nash_support"))
        return f"{s} {words}".strip()
    if f.kind == "path":
        d = f.detail
        return (f"{path_label(f.subject)} victories are {pct(f.value)} of all {count(f.n)} "
                f"wins; if every deck won its fair share with its own mix of paths, they "
                f"would be {pct(f.fair)} {interval(d.get('expected_lo'), d.get('expected_hi'))}. "
                f"The decks that win by {path_label(f.subject)} win "
                f"{'more' if f.value > f.fair else 'less'} than that: "
                f"{pp(d.get('gap'))} {interval(d.get('gap_lo'), d.get('gap_hi'), signed=True)}. "
                f"(The flat {pct(d.get('flat', 0.25), 0)} of Art. III's \"no path is "
                f"superior\" is a reference line, not the test.)")
    if f.kind == "card":
        d = f.detail
        return (f"Inside the decks that hold {f.subject}, comparing games of the same length "
                f"and turn order, those in which the card was seen were won "
                f"{pp(f.value)} {interval(f.lo, f.hi, signed=True)} more often than those in "
                f"which it was not (adjusted IWD, {count(f.deals)} deals, "
                f"{count(f.n)} games). Raw IWD, pooled over decks and game lengths: "
                f"{pp(d.get('iwd'))}.")
    if f.kind == "seat":
        scope = SEAT_SCOPES.get((f.detail["scope"], f.detail["p2"]), "these games")
        return (f"The first seat wins {r} of {scope} (n={count(f.n)}); {pct(f.fair, 0)} would "
                f"mean the seat order does not matter.")
    if f.kind == "branch":
        return (f"Decks whose main branch is {branch_label(f.subject)} ({f.detail['decks']}) "
                f"win {r} of their games against other branches (n={count(f.n)}), against a "
                f"fair {pct(f.fair, 0)}.")
    return r


def _games_and_deals(m: Metrics) -> tuple[int, int, int]:
    """(games, deals, tables) of the run: deals are (table, deal) units."""
    return m.shape.games, m.shape.deals, m.shape.tables


def verdict_banners(m: Metrics) -> list[str]:
    """Plain sentences to show above the verdict (none when there is nothing to say).

    "Too few games to judge" when no candidate has the minimum sample of the verdict's
    rule (``findings.MIN_GAMES`` games, ``MIN_DEALS`` deals, an interval no wider than
    ``± MAX_HALF_WIDTH``), or when no deck has it."""
    out = []
    cands = m.candidates
    games, deals, tables = _games_and_deals(m)
    judged = [c for c in cands if c.judgeable]
    decks_judged = [c for c in judged if c.kind == "deck"]
    per_table = deals / tables if tables else 0
    if not judged or not decks_judged:
        out.append(
            f"Too few games to judge: {count(games)} games ({count(deals)} deals, "
            f"{per_table:,.0f} per table). A finding needs at least {fnd.MIN_GAMES} games "
            f"from {fnd.MIN_DEALS} deals and a 95% interval no wider than "
            f"±{100 * fnd.MAX_HALF_WIDTH:g} points; "
            + ("nothing in this run has that" if not judged else "no deck has that")
            + ", so the figures below are shown as measured, not as findings. Play more "
            "deals (rnr-sim run ... --games N) for a verdict.")
    vs = m.run.manifest.get("vs") if m.run is not None else None
    if isinstance(vs, str):  # first: it says what every figure below is
        out.insert(
            0, f"One deck against the field (rnr-sim run --vs): {vs} met every other deck; "
            f"each other deck met {vs} alone, so its win rate is its matchup against {vs}, "
            f"not a result against the field, and of the decks only {vs} is judged (the "
            f"victory paths and the cards are read on these games, every one of them with "
            f"{vs} at the table). Most matchups were not played, so there is no Nash "
            "metagame and no branch verdict: run the decks without --vs for those.")
    if m.players > 2:
        out.append(
            f"{m.players} players: a fair share is {pct(m.fair, 0)} of the games, not 50%, "
            f"and every comparison below is against {pct(m.fair, 0)}. The Nash metagame is "
            "left out: it is defined for two-player matchups.")
    return out


def verdict_empty(m: Metrics) -> str:
    games, _, _ = _games_and_deals(m)
    few = len(fnd.too_few(m.candidates))
    if m.candidates and few == len(m.candidates):
        return (f"No verdict: every candidate (deck, path, card, seat, branch) of this run "
                f"({count(games)} games) has too few games to judge, so nothing is claimed. "
                f"A larger run narrows the intervals.")
    s = (f"No finding clears the verdict's rule in this run ({count(games)} games): no deck, "
         f"path, card, seat or branch is measurably away from fair after the correction for "
         f"multiple tests.")
    if few:
        s += f" {few} candidates had too few games to judge."
    return s + " A larger run narrows the intervals."


#: How many of the strongest decks the verdict describes, and of their matchups.
STRONGEST_DECKS = 3
STRONGEST_BEATS = 3
STRONGEST_LOSSES = 2
STRONGEST_TITLE = "The strongest decks, and why they win"


def _deck_paths(r: dict) -> str:
    """"99.6% of its wins by Petition" (every path with a fifth of the deck's wins or
    more, largest first)."""
    shares = sorted(((r.get(f"share_{p}") or 0.0, p) for p in WIN_PATHS), reverse=True)
    big = [(s, p) for s, p in shares if s >= 0.2] or shares[:1]
    words = [f"{pct(s)} of its wins by {path_label(p)}" if i == 0 else
             f"{pct(s)} by {path_label(p)}" for i, (s, p) in enumerate(big)]
    return ", ".join(words)


def _matchups(rows: list[dict]) -> str:
    names = [f"{r['col']} {_rate(r['win_rate'], r['win_rate_lo'], r['win_rate_hi'])}"
             for r in rows]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def strongest_decks(m: Metrics) -> list[str]:
    """The verdict's word on the strongest decks: the decks the verdict's rule finds above
    a fair share against the field (judged, significant after the one Benjamini-Hochberg
    correction, ``findings.judge``), best first, at most ``STRONGEST_DECKS``, and for each
    why it wins: the victory paths of its wins and the matchups whose interval is clear of
    fair (``matchups.matchup_edges``), the ones it wins and the ones it loses: a sentence
    per deck. None when no deck could be judged (the banner says so)."""
    from rnr_sim.analytics.matchups import matchup_edges

    decks = [c for c in m.candidates if c.kind == "deck" and c.judgeable]
    if not decks:
        return []
    strong = sorted((c for c in decks if c.significant and c.value > c.fair),
                    key=lambda c: (-c.score, -c.value, c.subject))
    if not strong:
        vs = m.run.manifest.get("vs") if m.run is not None else None
        who = f"{vs} does not win" if isinstance(vs, str) else "No deck wins"  # run --vs
        return [f"{who} measurably more than a fair {pct(m.fair, 0)} of its games against "
                "this field."]
    edges = matchup_edges(m.matchups, m.fair)
    info = {r["deck"]: r for r in m.decks.iter_rows(named=True)}
    nash = {r["deck"]: r for r in m.nash.iter_rows(named=True)} if m.players <= 2 else {}
    out = []
    for c in strong[:STRONGEST_DECKS]:
        mine = edges.filter(pl.col("row") == c.subject)
        beats = mine.filter(pl.col("edge") == "beats").head(STRONGEST_BEATS).to_dicts()
        loses = mine.filter(pl.col("edge") == "loses to").head(STRONGEST_LOSSES).to_dicts()
        s = (f"{c.subject} wins {_rate(c.value, c.lo, c.hi)} of its games against the field, "
             f"{_deck_paths(info.get(c.subject, {}))}; ")
        s += (f"it beats {_matchups(beats)}" if beats else
              "no matchup of it is clear of a fair share on its own")
        s += (f", and loses to {_matchups(loses)}" if loses else
              (", and it loses no matchup measurably" if beats else ""))
        share = (nash.get(c.subject) or {}).get("share")
        if (nash.get(c.subject) or {}).get("in_support") and not missing(share):
            s += f"; the Nash metagame plays it {pct(share)} of the time"
        out.append(s + ".")
    if len(strong) > STRONGEST_DECKS:
        rest = strong[STRONGEST_DECKS:]
        out.append(f"Also clearly above {pct(m.fair, 0)}: "
                   + ", ".join(f"{c.subject} {pct(c.value)}" for c in rest) + ".")
    return out


def scoring_rule() -> str:
    """The verdict's rule, stated once (``findings.VERDICT_RULE``)."""
    return fnd.VERDICT_RULE


def method_notes(m: Metrics) -> list[str]:
    """The method paragraphs for the adjusted card metric, the path expectation and the
    Nash bootstrap, in a designer's words."""
    return [card_method_note(m), path_method_note(), nash_method_note(m)]


def interval_method_note(m: Metrics) -> str:
    """How every interval is computed (the deal as the unit): ``stats.METHOD_NOTE``,
    without its title sentence; "" if the analytics has none."""
    note = getattr(_stats, "METHOD_NOTE", None)
    if callable(note):
        note = note(m)
    note = str(note or "").strip().replace("`", "")  # plain text on the page
    title = "How the intervals are computed."
    return note[len(title):].strip() if note.startswith(title) else note


def method_sections(m: Metrics) -> list[tuple[str, str]]:
    """The report's one method section, "How to read these numbers": (title, paragraph)
    pairs, each said once. The intervals (the deal as the unit), the adjusted card metric, the paths' deck-pool expectation, and the Nash mix (two players
    only: with more, the Matchups section says why there is none)."""
    out = []
    iv = interval_method_note(m)
    if iv:
        out.append(("Intervals: the deal is the unit", iv))
    out.append(("Cards: the adjusted IWD", card_method_note(m)))
    out.append(("Victory paths: against the deck-pool expectation", path_method_note()))
    if m.players <= 2:
        out.append(("The Nash metagame", nash_method_note(m)))
    return out


def card_method_note(m: Metrics) -> str:
    return (
        "Raw IWD compares games in which a deck "
        "saw a card with games in which it did not. Those two groups differ in more than the "
        "card: a deck sees more of its cards in long games, so a card of a deck that wins "
        "fast looks bad, and a card held by a strong deck looks good when decks are pooled. "
        "The adjusted IWD (the card column that counts: it ranks and flags the cards) "
        "compares like with like: inside one deck, between games of the "
        "same length (turns, banded where games are few) and the same turn order, then "
        "averages these differences with Mantel-Haenszel weights (more weight where both "
        "groups are large) over all of them, every deck holding the card included. What it "
        "can say: whether, all else about the game's length and the deck equal, drawing the "
        "card goes with winning more. What it cannot say: game length is itself a result of "
        "play, so a card whose whole effect is to end games sooner (or later) has that part "
        "held fixed and can look weaker than it is; and it measures having the card against "
        "having another card of the same deck in its place, not against an empty slot. "
        "How far from 0 it strays on cards that do nothing is measured on every run: the "
        "baseline in the Cards section.")


def card_baseline_text(m: Metrics) -> str:
    """The measured residual bias of the adjusted IWD on the plainest cards, and the flag
    rule it sets (``cards.flag_beyond_band``: the same band, ``m.card_band``)."""
    b = plain_card_baseline(m.cards_by_deck, m.run.cards)
    if b.height == 0 or not b["pairs"][0]:
        return ("This run holds no plain common Pillar to measure the method's residual bias "
                "on, so a flag is the Benjamini-Hochberg test alone: no no-effect band.")
    r = b.row(0, named=True)
    band = f"±{100 * m.card_band:.2f} points"
    return (
        f"Baseline, measured in this run: the plainest cards (common Pillars with no effect, "
        f"Scroll Pillars aside since they count towards Petition Victory) do next to "
        f"nothing, so their adjusted IWD should sit near 0. Over their {r['pairs']} "
        f"(deck, card) pairs it averages {pp(r['adj_mean'], 2)} (from {pp(r['adj_min'])} "
        f"to {pp(r['adj_max'])}; {pct(r['adj_cover'], 0)} of their intervals hold 0), where "
        f"the raw IWD averages {pp(r['raw_mean'])} (from {pp(r['raw_min'])} to "
        f"{pp(r['raw_max'])}). Beyond what their own intervals explain, they spread by "
        f"{pp(r['adj_tau'], 2).lstrip('+')} from deck to deck: that spread and their average "
        f"are the method's own bias. So {band} (the average's size plus 1.96 times that "
        f"spread) is the no-effect band: 95% of cards that do nothing sit inside it. The flag "
        f"rule: a card over- or under-performs when its adjusted IWD differs from 0 after "
        f"Benjamini-Hochberg at 5% and its whole 95% interval lies beyond {band}; an "
        f"interval that reaches into the band reads as no effect.")


def path_method_note() -> str:
    return (
        "Art. III says no path is superior, but the share of "
        "wins a path takes depends first on which paths the decks aim at: with mostly "
        "attacking decks, Attack takes most wins even if no deck wins more than its share. "
        "So each path is measured against the deck-pool expectation: the share it would take "
        "if every deck won its fair share of its games (1/players) with its own mix of "
        "paths. A path above that expectation is one whose decks win more than they should; "
        "the flat 25% is shown as a reference line only (the tables' \"Art. III reference\" "
        "columns: with thousands of wins, a p-value there is tiny for any deck pool that "
        "aims at some paths more than others, and says nothing about the paths). Decks are "
        "also grouped by their main path (the path of most of their wins) and their win "
        "rates against decks of other main paths compared with the fair share.")


def vs_deck(m: Metrics) -> str | None:
    """The one deck a two-player ``run --vs`` judges (the other decks met it alone), else
    None."""
    vs = m.run.manifest.get("vs") if m.run is not None else None
    return vs if isinstance(vs, str) and m.players <= 2 else None


def nash_method_note(m: Metrics) -> str:
    vs = vs_deck(m)
    if vs is not None:
        return (f"No Nash mix for a run of one deck against the field (--vs {vs}): the other "
                "decks never met one another, so the win-rate matrix is one row and one "
                "column, and its equilibrium would only say which deck beat that one.")
    if m.players > 2:
        return (
            f"No Nash mix at {m.players} players: a deck's result there depends on the "
            "whole table, not on one opponent, so the win-rate matrix is not a two-player "
            "zero-sum game and its equilibrium would not describe the metagame. Each deck's "
            f"win rate against the field, against a fair {pct(m.fair, 0)}, is the measure "
            "to read.")
    reps = m.nash["replicates"].drop_nulls() if "replicates" in m.nash.columns else None
    n = int(reps.max()) if reps is not None and len(reps) else 0
    return (
        "The Nash metagame is the mix of decks no deck can beat on average, solved exactly "
        "from the win-rate matrix. The matrix is measured, so the mix is uncertain: a deck can "
        "move in and out of it on noise. Its interval comes from resampling the deals of each "
        f"matchup ({n} resamples, fixed seed): the share's 95% range over the resamples, and "
        "how often the deck is in the mix (share above 1%).")


# ---------------------------------------------------------------- section leads
def decks_lead(m: Metrics) -> str:
    played = m.decks.filter(pl.col("games") > 0)
    idle = m.decks.filter(pl.col("games") == 0)["deck"].to_list()
    if played.height == 0:
        return "No deck played a game in this run."
    best, worst = played.row(0, named=True), played.row(-1, named=True)
    fair = m.fair
    off = played.filter((pl.col("win_rate_lo") > fair) | (pl.col("win_rate_hi") < fair)).height
    vs = vs_deck(m)
    if vs is not None:
        mine = played.filter(pl.col("deck") == vs)
        if mine.height:
            r = mine.row(0, named=True)
            return (f"A run of one deck against the field (--vs {vs}): {vs} wins "
                    f"{_rate(r['win_rate'], r['win_rate_lo'], r['win_rate_hi'])} of its games "
                    "against the others, over both seats. Every other row is that deck's "
                    f"result against {vs} alone: the other decks never met one another.")
    s = (f"Each deck's share of its games won against the field (mirror games left out), "
         f"over both seats. {best['deck']} does best at "
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
    fair = pct(m.fair, 0)
    s = ("Each cell is the row deck's win rate against the column deck, both seat orders "
         "weighted equally, with its 95% interval and game count")
    if m.players > 2:
        return s + (f", over the {m.players}-player games where both sat at the table; a "
                    f"fair share is {fair}. " + nash_method_note(m))
    s += ". "
    if vs_deck(m) is not None:
        return s + nash_method_note(m)
    support = m.nash.filter(pl.col("in_support"))
    if support.height == 0:
        return s + "No two decks met, so there is no metagame to solve."

    def one(r: dict) -> str:
        if missing(r.get("support_freq")):
            return f"{r['deck']} {pct(r['share'])}"
        return (f"{r['deck']} {pct(r['share'])} {interval(r['share_lo'], r['share_hi'])}, in "
                f"the mix in {_freq(r['support_freq'])} of resamples")

    mix = "; ".join(one(r) for r in support.iter_rows(named=True))
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
        if "support_freq" in out.columns:
            maybe = out.filter(pl.col("support_freq") > 0).sort("support_freq", descending=True)
            if maybe.height:
                s += (" Outside the mix on these deals but inside it on some resamples: "
                      + ", ".join(f"{r['deck']} ({_freq(r['support_freq'])})"
                                  for r in maybe.iter_rows(named=True)) + ".")
    s += (" The intervals are 95% ranges over resamples of the deals: a mix this uncertain "
          "says which decks matter, not their exact proportions.")
    return s


def paths_lead(m: Metrics) -> str:
    r = m.paths_overall.row(0, named=True)
    if not r["wins"]:
        return "No game was won, so there are no victory paths to compare."
    exp = m.paths_expected
    s = ("Which paths the games are won by. A path is measured against the deck-pool "
         "expectation: the share of wins it would take if every deck won its fair share "
         f"({pct(m.fair, 0)} of its games) with its own mix of paths; more than that means "
         "the decks that win by it win more than they should. ")
    if exp is not None and exp.filter(pl.col("gap").is_not_null()).height:
        rows = exp.filter(pl.col("gap").is_not_null())
        e = rows.sort(pl.col("gap").abs(), descending=True).row(0, named=True)
        clear = rows.filter((pl.col("gap_lo") > 0) | (pl.col("gap_hi") < 0)).height
        s += (f"The largest gap: {path_label(e['path'])} takes {pct(e['share'])} of the "
              f"wins against {pct(e['expected'])} expected, {pp(e['gap'])} "
              f"{interval(e['gap_lo'], e['gap_hi'], signed=True)}; {clear} of {rows.height} "
              "paths have a gap whose interval is clear of 0. ")
    mp = m.paths_by_main_path
    if mp is not None and mp.filter(pl.col("win_rate").is_not_null()).height > 1:
        grp = mp.filter(pl.col("win_rate").is_not_null()).sort("win_rate", descending=True)
        hi, lo = grp.row(0, named=True), grp.row(-1, named=True)
        s += (f"Grouped by their main path, against decks of other main paths, "
              f"{path_label(hi['main_path'])} decks win "
              f"{_rate(hi['win_rate'], hi['win_rate_lo'], hi['win_rate_hi'])} and "
              f"{path_label(lo['main_path'])} decks "
              f"{_rate(lo['win_rate'], lo['win_rate_lo'], lo['win_rate_hi'])} (fair "
              f"{pct(m.fair, 0)}). ")
    shares = sorted(WIN_PATHS, key=lambda p: r[f"share_{p}"] or 0.0, reverse=True)
    top, low = shares[0], shares[-1]
    s += (f"For reference only, Art. III's \"no path is superior\" read as a flat 25% each: "
          f"{path_label(top)} takes {pct(r[f'share_{top}'])} and {path_label(low)} "
          f"{pct(r[f'share_{low}'])} of {count(r['wins'])} wins; that mostly tells which "
          f"paths the decks aim at. {pct(r['draw_rate'])} of games were drawn.")
    return s


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
            f"{fmt(('all', 'used'))}; when it does not (mostly: no Pillar in its opening "
            f"hand), {fmt(('all', 'declined'))}. Whether the right is used depends on the "
            f"hand and the pilot, so that split shows association, not the right's effect: "
            f"the right's effect is measured by its switch (`compare --rules-b` with "
            f"`p2_free_pillar = \"off\"`).")


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
    has_adj = "iwd_adjusted" in m.cards.columns
    col = "iwd_adjusted_p" if has_adj else "iwd_p"
    tested = m.cards.filter(pl.col(col).is_not_null()).height
    flagged = m.cards.filter(pl.col("flag") != "")
    s = ("17lands-style card ratings over the decks that hold each card. The headline is "
         "the adjusted IWD: how much more often a deck wins the games in which it sees the "
         "card than the games in which it does not, compared inside each deck at equal game "
         "length and turn order, then combined over decks; the raw 17lands figures (GIH, GNS, "
         "raw IWD) are beside it, pooled over decks and game lengths, and are not used for "
         "flags. Because game length is held fixed, the adjusted IWD cannot credit a card "
         "for making games shorter or longer, and it rates a card against the other cards "
         "of its deck, not against an empty slot. ")
    rule = ("the flag rule below" if has_adj and m.card_band > 0 else
            "Benjamini-Hochberg correction at 5%")
    if flagged.height == 0:
        s += f"No card is flagged by {rule} ({tested} cards tested)."
    else:
        key = "iwd_adjusted" if has_adj else "iwd"
        top = flagged.sort(pl.col(key).abs(), descending=True).head(6)
        names = ", ".join(f"{r['card']} ({pp(r[key])})" for r in top.iter_rows(named=True))
        more = f" and {flagged.height - 6} more" if flagged.height > 6 else ""
        s += (f"{flagged.height} of {tested} cards are flagged by {rule}, largest first: "
              f"{names}{more}.")
    if has_adj:
        s += " " + card_baseline_text(m)
    uas = tables.undrawn_uas(m.cards)
    if uas:
        s += (f" Not in the table: the {len(uas)} Unconstitutional Acts ({', '.join(uas)}). "
              "Each starts in play in every game and is never drawn (Art. IV §3.2), so there "
              "are no games without it to compare; what a UA does shows in its decks' win "
              "rates (cards.csv keeps their rows).")
    return s


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


def skill_lead(skill: pl.DataFrame) -> str:
    """The Skill section's lead: what the table measures and its largest numbers."""
    from rnr_sim.skill import REFERENCE

    deals = int(skill["deals"].max())
    rnd = skill.filter(pl.col("pilot") == "random").sort("vs_default")
    lead = (f"How much of each deck's strength is its pilot (restricted play, Jaffe 2012): "
            f"each deck plays the field again with other pilots, {deals:,} deals per "
            "opponent, the same deals for every pilot of the deck, and the difference from "
            "its default pilot is paired deal by deal. ")
    if len(rnd):
        hi, lo = rnd.row(0, named=True), rnd.row(len(rnd) - 1, named=True)
        lead += (f"Playing at random costs {hi['deck']} the most "
                 f"({_pp(hi['vs_default'], hi['vs_default_lo'], hi['vs_default_hi'])}) and "
                 f"{lo['deck']} the least "
                 f"({_pp(lo['vs_default'], lo['vs_default_lo'], lo['vs_default_hi'])}): "
                 "the larger the cost, the more the deck's result is its pilot's play. ")
    gains = skill.filter((pl.col("pilot") == pl.col("best_pilot"))
                         & (pl.col("pilot") != REFERENCE) & (pl.col("vs_default_lo") > 0))
    if len(gains):
        r = gains.sort("gap", descending=True).row(0, named=True)
        lead += (f"{len(gains)} deck{'s win' if len(gains) != 1 else ' wins'} clearly more with "
                 f"another pilot than with the default; the largest gain is {r['deck']}'s "
                 f"{r['best_pilot']} pilot "
                 f"({_pp(r['vs_default'], r['vs_default_lo'], r['vs_default_hi'])}): its "
                 "default pilot undersells it, and the run's figures for it are too low.")
    else:
        lead += ("No deck wins clearly more with another pilot than with its default one, "
                 "so no deck's figures are held down by its pilot among the pilots measured.")
    return lead


def _pp(v: Any, lo: Any, hi: Any) -> str:
    return f"{pp(v)} {interval(lo, hi, signed=True)}"
