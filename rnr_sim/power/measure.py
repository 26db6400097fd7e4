"""The measurements of card power and of the deck doctor, on a ``race.Bench``.

- ``worth``: what each card of a deck is worth to it: the deck's paired loss when the
  card's copies are cut (``swaps.cut``), every card on the same deals.
- ``power``: every card of the pool swapped into every host where it is legal, at one copy
  and a full set (``swaps.swap_in``), raced (``race.race``): after each stage an arm stops
  when it is clearly below the best arm of its card, and every arm of a card stops once its
  best arm's interval has settled the card's flag (its gain over the typical card of its
  Order in that host and copies, ``references``, lies below minus the margin, above the
  margin, or between them); of the rest, those nearest a flag's boundary in standard
  errors go on, as many as the stage's games allow. Each card's best arm is then played again on deals of a
  seed the race never used: the gain reported (the race's own best is biased upward by
  selection, the winner's curse).
- ``doctor``: one deck's cuts, then swaps (a card of the pool in, copies of one of the
  deck's two least valuable cards of its Order out: one copy, or all of them), raced
  toward the best; the best swap of each of the best cards coming in (``TOP_ADDS`` cards,
  one swap each) re-measured on fresh deals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnr_sim import enums
from rnr_sim.analytics.stats import Z95, benjamini_hochberg, normal_sf, paired_gain
from rnr_sim.power import swaps
from rnr_sim.power.race import Arm, Bench, clearly_below, race

#: The false discovery rate of the flags (Benjamini-Hochberg over both directions).
FLAG_FDR = 0.05
#: Fewest deals a field deck any arm plays in a race's first stage.
MIN_FIRST_DEALS = 4
#: The race's stages: deals a field deck at the end of each (first, x4, x16).
GROWTH, STAGES = 4, 3
#: What the stages after the first may keep, by their nominal share (successive halving).
KEEP = 0.25
#: The deck doctor's swaps re-measured on fresh deals, at most.
TOP_ADDS = 10
#: The deck doctor: cards of each Order whose copies a swap may take out.
OUTS_PER_ORDER = 2


def stage_ends(first: int) -> list[int]:
    """The deals a field deck at the end of each of the race's stages."""
    return [first * GROWTH ** s for s in range(STAGES)]


def race_cost_factor(stages: int = STAGES, growth: int = GROWTH, keep: float = KEEP) -> float:
    """Deals of a race per arm, in units of its first stage, if each stage keeps ``keep``
    of the last: 1 + keep (growth - 1) + keep^2 (growth^2 - growth) + ..."""
    total, alive, last = 0.0, 1.0, 0
    for s in range(stages):
        end = growth ** s
        total += alive * (end - last)
        alive *= keep
        last = end
    return total


@dataclass
class Measured:
    """An arm's measure: paired gain and its standard error, with its deals."""

    gain: float
    se: float
    deals: int
    games: int

    @property
    def lo(self) -> float:
        return self.gain - Z95 * self.se

    @property
    def hi(self) -> float:
        return self.gain + Z95 * self.se


def references(keys: list, g: np.ndarray, se: np.ndarray) -> dict:
    """For each key (host, copies, Order), the median gain of the arms with that key: the
    typical card of the Order swapped into that host at that many copies, which a card's
    own gain is judged against. Its standard error is taken as the median arm's: the
    cards' true gains are fixed and spread, so the median of their estimates moves with
    the noise of the arms near the middle rank (an order statistic moves at most as far
    as the estimates do), not with that noise over the square root of the arms, which
    holds only when every arm has the same true gain."""
    out = {}
    for key in dict.fromkeys(keys):
        idx = [j for j, k in enumerate(keys) if k == key]
        out[key] = Measured(float(np.median(g[idx])), float(np.median(se[idx])), 0, 0)
    return out


def _measured(arm: Arm, w: np.ndarray) -> Measured:
    g, se = arm.gain(w)
    return Measured(g, se, arm.deals, arm.games)


# ------------------------------------------------------------------------------ worth


@dataclass
class Worth:
    """Each card of a host: its copies, the slots of its cut (None: no legal cut), the
    measure of the cut (the loss is ``-gain``)."""

    host: int
    card: int
    copies: int
    cut: np.ndarray | None
    measured: Measured | None = None


def worth(bench: Bench, laws, hosts: list[swaps.Host], host_ids: list[int], deals: int,
          field_counts: np.ndarray, key: str) -> list[Worth] | None:
    """Every distinct card of each host in ``host_ids`` cut, played on deals 0..deals-1."""
    rows: list[Worth] = []
    arms: list[Arm] = []
    for h in host_ids:
        host = hosts[h]
        for card in dict.fromkeys(int(c) for c in host.slots):
            slots = swaps.cut(laws, host, card, field_counts)
            rows.append(Worth(h, card, int((host.slots == card).sum()), slots))
            if slots is not None:
                arms.append(Arm(h, slots))
    if not bench.play(arms, 0, deals, key):
        return None
    it = iter(arms)
    w = bench.fld.weights
    for r in rows:
        if r.cut is not None:
            r.measured = _measured(next(it), w)
    return rows


def worth_of(rows: list[Worth], host: int) -> dict[int, float]:
    """card id -> the host's loss when it is cut (cards without a legal cut: absent)."""
    return {r.card: -r.measured.gain for r in rows if r.host == host and r.measured}


# ------------------------------------------------------------------------------ power


@dataclass
class CardPower:
    """What the race and the fresh deals measured of one card."""

    card: int
    arms: list[tuple[int, int]]  # (host, copies) of each legal arm
    search: Measured | None = None  # the best arm in the race
    best: tuple[int, int] | None = None  # its (host, copies)
    fresh: Measured | None = None  # the best arm on fresh deals
    mean: Measured | None = None  # the mean over hosts at the card's full level
    games: int = 0
    ref: Measured | None = None  # the median card of its Order in its best host and copies
    flag: str = ""
    p_strong: float = float("nan")
    p_weak: float = float("nan")


def power_arms(laws, hosts: list[swaps.Host], cards: list[int],
               worths: list[Worth]) -> tuple[list[Arm], list[int], list[int]]:
    """Every legal (card, host, copies) arm: the arms, each arm's card and copies."""
    arms, arm_card, arm_copies = [], [], []
    worth_by = {h: worth_of(worths, h) for h in range(len(hosts))}
    for card in cards:
        for h, host in enumerate(hosts):
            for k in swaps.levels(laws, card):
                slots = swaps.swap_in(laws, host, card, k, worth_by[h])
                if slots is not None:
                    arms.append(Arm(h, slots))
                    arm_card.append(card)
                    arm_copies.append(k)
    return arms, arm_card, arm_copies


def power(bench: Bench, fresh: Bench, laws, hosts: list[swaps.Host], cards: list[int],
          worths: list[Worth], first: int, race_budget: int, confirm_deals: int,
          margin: float, key: str, progress=None) -> list[CardPower] | None:
    """Each card's power (module docstring); None once Ctrl-C stopped a call."""
    arms, arm_card, arm_copies = power_arms(laws, hosts, cards, worths)
    arm_card_a = np.array(arm_card, dtype=np.int64)
    w = bench.fld.weights
    ends = stage_ends(first)
    spent0 = bench.games
    result = {c: CardPower(c, []) for c in cards}
    for arm, c, k in zip(arms, arm_card, arm_copies, strict=True):
        result[c].arms.append((arm.host, k))

    arm_order = laws.type_of[arm_card_a]
    arm_key = [(a.host, k, int(t)) for a, k, t in zip(arms, arm_copies, arm_order, strict=True)]
    ref: dict[tuple[int, int, int], Measured] = {}

    def go_on(alive: np.ndarray, s: int) -> np.ndarray:
        g = np.empty(len(alive))
        se = np.empty(len(alive))
        for j, i in enumerate(alive):
            g[j], se[j] = arms[i].gain(w)
        if s == 0:  # every arm has played the first stage: the references
            ref.update(references(arm_key, g, se))
        r0 = np.array([ref[arm_key[i]].gain for i in alive])
        keep = np.ones(len(alive), dtype=bool)
        open_cards = 0
        for c in np.unique(arm_card_a[alive]):
            idx = np.flatnonzero(arm_card_a[alive] == c)
            b = idx[np.argmax(g[idx])]
            keep[idx] &= ~clearly_below(g[idx], se[idx], g[b], se[b])
            lo, hi = g[b] - r0[b] - Z95 * se[b], g[b] - r0[b] + Z95 * se[b]
            if hi < -margin or lo > margin or (lo > -margin and hi < margin):
                keep[idx] = False  # the card's flag is settled
            else:
                open_cards += 1
        nearest = np.minimum(np.abs(g - r0 - margin), np.abs(g - r0 + margin)) / se
        cand = alive[keep][np.argsort(nearest[keep], kind="stable")]
        step = ends[s + 1] - ends[s]
        left = race_budget - (bench.games - spent0)
        afford = max(0, left // max(1, bench.cost(1, step)) - len(hosts))
        if progress is not None:
            best = int(np.argmax(g))
            progress(f"stage {s + 1}: {len(np.unique(arm_card_a[alive])) - open_cards} of "
                     f"{len(cards)} cards settled; best so far "
                     f"{laws.catalog.cards[int(arm_card_a[alive[best]])].name} "
                     f"{100 * g[best]:+.1f} pp")
        return cand[:afford]

    if not race(bench, arms, ends, f"{key}-race", go_on):
        return None
    # Each card's best arm in the race; the mean over hosts on the first stage's deals.
    best_arms: list[Arm] = []
    for c in cards:
        r = result[c]
        mine = np.flatnonzero(arm_card_a == c)
        if not len(mine):
            continue
        scores = [arms[i].gain(w)[0] for i in mine]
        bi = int(mine[int(np.argmax(scores))])
        r.search = _measured(arms[bi], w)
        r.best = (arms[bi].host, arm_copies[bi])
        r.games = sum(arms[i].games for i in mine)
        full = min(swaps.FULL_SET, max(arm_copies[i] for i in mine))
        at_full = [i for i in mine if arm_copies[i] == full]
        first_stage = np.mean([arms[i].diff[0] for i in at_full], axis=0)
        g, se = paired_gain(first_stage, w)
        r.mean = Measured(float(g), float(se), first, 0)
        best_arms.append(Arm(arms[bi].host, arms[bi].slots))
    if not fresh.play(best_arms, 0, confirm_deals, f"{key}-fresh"):
        return None
    it = iter(best_arms)
    for c in cards:
        r = result[c]
        if r.search is None:
            continue
        arm = next(it)
        r.fresh = _measured(arm, w)
        r.games += arm.games
        if ref:
            r.ref = ref[(r.best[0], r.best[1], int(laws.type_of[c]))]
    flag(list(result.values()), margin)
    return [result[c] for c in cards]


def edge(r: CardPower) -> tuple[float, float]:
    """(edge, se): a card's fresh gain over its reference (``references``); the reference
    is measured on the race's deals, independent of the fresh ones, so the variances add."""
    ref = r.ref if r.ref is not None else Measured(0.0, 0.0, 0, 0)
    return r.fresh.gain - ref.gain, float(np.hypot(r.fresh.se, ref.se))


def flag(rows: list[CardPower], margin: float, fdr: float = FLAG_FDR) -> None:
    """``too strong``: the card's edge over the typical card of its Order in its best host
    (``edge``) above ``margin``; ``too weak``: below ``-margin`` (even where it serves best,
    it does worse than a typical card of its Order by more than the margin). One-sided
    tests, Benjamini-Hochberg at ``fdr`` over both directions of every measured card."""
    measured = [r for r in rows if r.fresh is not None]
    for r in measured:
        e, se = edge(r)
        r.p_strong = normal_sf((e - margin) / se)
        r.p_weak = normal_sf((-margin - e) / se)
    p = np.array([r.p_strong for r in measured] + [r.p_weak for r in measured])
    reject = benjamini_hochberg(p, fdr)
    n = len(measured)
    for i, r in enumerate(measured):
        r.flag = "too strong" if reject[i] else ("too weak" if reject[n + i] else "")


# ------------------------------------------------------------------------------ doctor


@dataclass
class Swap:
    """A deck doctor's swap: ``copies`` of ``out`` leave, as many of ``card`` come in."""

    card: int
    out: int
    copies: int
    search: Measured | None = None
    fresh: Measured | None = None


def doctor_swaps(laws, host: swaps.Host, cards: list[int], worths: list[Worth]
                 ) -> tuple[list[Arm], list[Swap]]:
    """Every legal swap of a card of ``cards`` for one or all copies of one of the deck's
    ``OUTS_PER_ORDER`` least valuable cards of its Order."""
    value = worth_of(worths, 0)
    counts = host.counts(laws.n_cards)
    outs: dict[int, list[int]] = {}
    for t in range(len(enums.CARD_TYPES)):
        held = [c for c in np.flatnonzero((laws.type_of == t) & (counts > 0)) if c in value]
        outs[t] = sorted(held, key=lambda c: (value[c], c))[:OUTS_PER_ORDER]
    arms, found = [], []
    for card in cards:
        for out in outs.get(int(laws.type_of[card]), []):
            if out == card:
                continue
            room = int(laws.cap[card] - counts[card])
            for k in sorted({1, min(int(counts[out]), room)}):
                if k < 1:
                    continue
                slots = swaps.exchange(laws, host, out, card, k)
                if slots is not None:
                    arms.append(Arm(0, slots))
                    found.append(Swap(card, int(out), k))
    return arms, found


def doctor(bench: Bench, fresh: Bench, laws, host: swaps.Host, cards: list[int],
           worths: list[Worth], first: int, race_budget: int, confirm_deals: int, key: str,
           progress=None) -> list[Swap] | None:
    """The best swaps for the deck, one per card coming in, best first, each re-measured on
    fresh deals."""
    arms, found = doctor_swaps(laws, host, cards, worths)
    w = bench.fld.weights
    ends = stage_ends(first)
    spent0 = bench.games

    def go_on(alive: np.ndarray, s: int) -> np.ndarray:
        gs = np.array([arms[i].gain(w) for i in alive])
        g, se = gs[:, 0], gs[:, 1]
        b = int(np.argmax(g))
        keep = ~clearly_below(g, se, g[b], se[b])
        cand = alive[keep][np.argsort(-g[keep], kind="stable")]
        step = ends[s + 1] - ends[s]
        left = race_budget - (bench.games - spent0)
        afford = max(TOP_ADDS, int(KEEP * len(alive)))
        afford = min(afford, max(0, left // max(1, bench.cost(1, step)) - 1))
        if progress is not None:
            sw = found[alive[b]]
            progress(f"stage {s + 1}: best swap so far {sw.copies} "
                     f"{laws.catalog.cards[sw.out].name} -> "
                     f"{laws.catalog.cards[sw.card].name} {100 * g[b]:+.1f} pp")
        return cand[:afford]

    if not race(bench, arms, ends, f"{key}-race", go_on):
        return None
    for arm, sw in zip(arms, found, strict=True):
        sw.search = _measured(arm, w)
    best_of: dict[int, int] = {}  # each card coming in: its best swap in the race
    for i in sorted(range(len(found)), key=lambda i: (-found[i].search.gain, i)):
        best_of.setdefault(found[i].card, i)
    top = list(best_of.values())[:TOP_ADDS]
    again = [Arm(0, arms[i].slots) for i in top]
    if not fresh.play(again, 0, confirm_deals, f"{key}-fresh"):
        return None
    chosen = []
    for i, arm in zip(top, again, strict=True):
        found[i].fresh = _measured(arm, w)
        chosen.append(found[i])
    return sorted(chosen, key=lambda sw: -sw.fresh.gain)
