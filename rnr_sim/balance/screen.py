"""Attribution and screening: which numbers to try first, and which single changes can
close the gap to the targets (docs/design.md, "Balance screening").

- **Offenders** (``offenders``): the decks a missed target is about, each with a weight:
  a deck over ``deck_share_max`` by its excess; for a victory path outside its band, each
  deck by its share of the wins by that path; for a missed ``min_support``, the
  equilibrium's decks by their weight in it. ``first_seat`` names no deck.
- **Worth** (``attribute``): each card of an offending deck cut (``power.swaps.cut``: its
  copies given to the deck's other cards of the same Order) and the deck played against
  the metagame on common deals, paired with the deck as it is (``power.measure.worth``):
  the deck's loss is what it leans on the card. A card's **lean** is the offenders' losses,
  weighted. Knobs are screened in that order: the numbers of a card whose IWD is over
  ``iwd_max``, rules switches and the numbers of cards the
  offenders lean on first (the first wave), the rest after (the second wave, screened only
  when the first meets no target set: the cards of the decks that do best against the
  offenders, their counters, first). When the screen's games cannot give every single its
  next range, those not measured yet come first, then the nearest the targets by their
  estimate so far; among suggestions that meet the targets with as many cards, the first
  wave's come first (``search._pick``).
- **Screening** (``sequential``): each single change (a number moved to the ends of its
  range, a switch to each other value: what the knob can do at most) is measured on
  growing deal ranges, paired with the unchanged cards (``paired.Player``). It goes on while
  its 95% interval still allows it to close its share of the gap, the distance to the
  targets over ``max_changes``; it stops as soon as it cannot. When no candidate's estimate
  closes that much (a gap no change in scope can close), the bar is the best estimate
  instead: racing for the most that can be closed. So a candidate gets as many
  deals as the gap needs: a change whose effect is ten times the gap stops being in doubt
  after a few deals, a 2-point gap takes hundreds.
- **Bisection** (``crossing``): for a number whose end value meets the targets, the
  smallest move that still meets them safely (``metrics.safe``), by bisection on the
  integers between its value and that end.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rnr_sim.balance.metrics import Figures, Games
from rnr_sim.balance.paired import Player, Scored
from rnr_sim.balance.targets import Changes, Knob, Targets
from rnr_sim.runs.schema import WIN_PATHS

#: The first deal range of the screen, deals a pair; each next range doubles the deals.
FIRST_DEALS = 8
#: The most numbers bisected toward the value that crosses the targets.
BISECT_KNOBS = 4
#: The screen's most promising singles measured on every baseline deal, at most.
CONFIRM = 4
#: ... and when none may close its share of the gap, the closest this many.
CLOSEST = 4
WORTH_SEED_OFFSET = 7_000_003


def offenders(fig: Figures, games: Games, t: Targets) -> dict[int, float]:
    """deck index -> its weight among the decks the missed targets are about."""
    w: dict[int, float] = {}

    def add(i: int, x: float) -> None:
        if x > 0:
            w[int(i)] = w.get(int(i), 0.0) + float(x)

    if t.deck_share_max is not None:
        for i, f in enumerate(fig.deck):
            add(i, f.value - t.deck_share_max)
    code = {p: k for k, p in enumerate(WIN_PATHS)}
    from rnr_sim import enums

    for p, (lo, hi) in t.path_share.items():
        v = fig.path[code[p]].value
        if lo <= v <= hi:
            continue
        # each deck's wins by path p (both seats), by the pairs' weights
        c = enums.PATHS.index(p)
        a, b = games.pairs[:, 0], games.pairs[:, 1]
        by_p = games.path == c
        wins = np.zeros(len(fig.deck))
        pw = fig.weights[a] * fig.weights[b]
        np.add.at(wins, a, pw * ((games.winner == 0) & by_p).sum(axis=(1, 2)))
        np.add.at(wins, b, pw * ((games.winner == 1) & by_p).sum(axis=(1, 2)))
        if wins.sum() > 0:
            gap = v - hi if v > hi else lo - v
            for i, x in enumerate(wins / wins.sum()):
                add(i, gap * x)
    if t.min_support is not None and fig.support < t.min_support:
        for i, m in enumerate(fig.mix):
            add(i, m * 0.01 * (t.min_support - fig.support))
    return w


def attribute(player: Player, plan, weights: dict[int, float], deals: int, seed: int,
              key: str) -> tuple[dict[int, float], int] | None:
    """card id -> its lean (module docstring), from the offenders' cuts on ``deals`` deals
    a field deck; and the games played. None once Ctrl-C stopped a call."""
    from rnr_sim.discover.genome import Laws
    from rnr_sim.discover.search import Field
    from rnr_sim.power import measure, swaps
    from rnr_sim.power.race import Bench

    meta = player.meta
    if not weights or deals < 2:
        return {}, 0
    pool = meta.pool
    ids = [np.asarray(pool.deck_cards[i, : pool.deck_size[i]], dtype=np.int32)
           for i in range(meta.n)]
    fw = np.asarray(meta.weights, dtype=np.float64)[meta.field]
    if fw.sum() <= 0:
        fw = np.ones(len(meta.field))
    fld = Field([ids[j] for j in meta.field], meta.pilots[meta.field], fw)
    laws = Laws.of(plan.catalog, plan.profile)
    hosts = [swaps.Host(meta.names[i], ids[i], int(meta.pilots[i])) for i in sorted(weights)]
    bench = Bench(player.ev, pool, fld, [h.slots for h in hosts], [h.pilot for h in hosts],
                  seed + WORTH_SEED_OFFSET)
    counts = sum(np.bincount(c, minlength=laws.n_cards) for c in ids)
    rows = measure.worth(bench, laws, hosts, list(range(len(hosts))), deals, counts, key)
    if rows is None:
        return None
    lean: dict[int, float] = {}
    for h, i in enumerate(sorted(weights)):
        for card, loss in measure.worth_of(rows, h).items():
            lean[card] = lean.get(card, 0.0) + weights[i] * max(loss, 0.0)
    return lean, bench.games


def attribution_cost(meta, weights: dict[int, float], deals: int) -> int:
    """The games ``attribute`` plays: each offender and each of its cut cards against the
    field on ``deals`` deals."""
    pool = meta.pool
    arms = sum(1 + len(set(pool.deck_cards[i, : pool.deck_size[i]].tolist()))
               for i in weights)
    return arms * deals * 2 * len(meta.field)


def waves(knobs: list[Knob], lean: dict[int, float], player: Player, fig: Figures,
          weights: dict[int, float], over: list[int] = ()) -> tuple[list[int], list[int]]:
    """The knobs of the first wave (the numbers of the cards ``over`` iwd_max, then
    switches, then the numbers of the cards the offenders lean on, by lean) and of the
    second (the rest: first the cards of the decks that do best against the offenders,
    their counters, then by the games they touch)."""
    own = [k for c in over for k, kn in enumerate(knobs) if not kn.rule and kn.card_id == c]
    first = own + [k for k, kn in enumerate(knobs) if kn.rule]
    leaned = [k for k, kn in enumerate(knobs) if not kn.rule and lean.get(kn.card_id, 0) > 0
              and k not in set(own)]
    leaned.sort(key=lambda k: (-lean[knobs[k].card_id], k))
    rest = [k for k in range(len(knobs)) if k not in set(first) | set(leaned)]
    # a deck's share against the offenders, weighted as they are
    total = sum(weights.values()) or 1.0
    counter = np.array([sum(w * fig.share[j, i] for i, w in weights.items()) / total
                        for j in range(len(fig.share))])

    def best_holder(k: int) -> float:
        h = [int(j) for j in player.holders[k] if int(j) not in weights]
        return max((counter[j] for j in h), default=0.0)

    rest.sort(key=lambda k: (-best_holder(k), -len(player.holders[k]), k))
    return first + leaned, rest


def singles(knobs: list[Knob], ks: list[int]) -> list[Changes]:
    """Each knob at the ends of its range (a switch: each other value)."""
    out: list[Changes] = []
    for k in ks:
        kn = knobs[k]
        values = kn.choices() if kn.rule else [v for v in (kn.lo, kn.hi) if v != kn.base]
        out += [((k, v),) for v in values]
    return out


def sequential(player: Player, cands: list[Changes], need: float, budget: int, tag: str,
               note: Callable[[str], None] = lambda m: None) -> list[Scored] | None:
    """Screen ``cands`` (module docstring): each goes on while it may close ``need`` of the
    distance, on deal ranges doubling from ``FIRST_DEALS`` to the baseline's, as far as
    ``budget`` games allow (the most promising first when they do not all fit). None once
    Ctrl-C stopped a call."""
    top = player.base_deals
    alive = list(dict.fromkeys(cands))
    end, stage = min(FIRST_DEALS, top), 0
    while alive:
        costs = [player.cost(c, end - (player.scored[c].deals if c in player.scored else 0))
                 for c in alive]
        room = budget - player.games
        if sum(costs) > room:
            # those not measured yet first (in attribution order), then the nearest the
            # targets by their estimate so far (their intervals all still allow it)
            keep, spent = [], 0
            order = sorted(range(len(alive)), key=lambda i: (
                (0, 0.0, i) if alive[i] not in player.scored
                else (1, player.scored[alive[i]].delta, i)))
            for i in order:
                if spent + costs[i] <= room:
                    keep.append(alive[i])
                    spent += costs[i]
            alive = [c for c in alive if c in set(keep)]
            if not alive:
                break
        for n, c in enumerate(alive):
            if player.extend(c, end, f"{tag}-s{stage}-{n:04d}") is None:
                return None
        # When none may close its share of the gap, the race is for the most it can close:
        # a candidate goes on while it may close as much as the best estimate so far.
        best = max(-player.scored[c].delta for c in alive)
        bar = min(need, best)
        alive = [c for c in alive if player.scored[c].closes >= bar]
        note(f"screen: {len(alive)} changes still in play at {end} deals a pair")
        if end >= top:
            break
        end, stage = min(2 * end, top), stage + 1
    return [player.scored[c] for c in dict.fromkeys(cands) if c in player.scored]


def confirm(player: Player, scored: list[Scored], need: float, budget: int, tag: str
            ) -> list[Scored] | None:
    """The singles still in play that close the most, ``CONFIRM`` at most, measured on every
    baseline deal (a suggestion is only ever one measured in full)."""
    top = player.base_deals
    scored = [player.scored[s.changes] for s in scored]
    useful = [s for s in scored if s.closes >= need]
    # None may close its share: the closest few still measured in full, so that the answer
    # "infeasible" names how near the scope came.
    open_ = [s for s in (useful or sorted(scored, key=lambda s: s.delta)[:CLOSEST])
             if not s.full]
    open_.sort(key=lambda s: (s.delta, s.size, s.changes))
    out = []
    for n, s in enumerate(open_[:CONFIRM]):
        if player.games + player.cost(s.changes, top - s.deals) > budget:
            break
        sc = player.extend(s.changes, top, f"{tag}-{n:02d}")
        if sc is None:
            return None
        out.append(sc)
    return out


def crossing(player: Player, knobs: list[Knob], found: list[Scored], budget: int, tag: str
             ) -> list[Scored] | None:
    """For the numbers whose end value meets the targets safely on every baseline deal,
    the smallest move that still does (module docstring); the values tried are scored."""
    top = player.base_deals
    found = [player.scored[s.changes] for s in found]  # as measured now
    ends = [s for s in found if s.full and s.safe and len(s.changes) == 1
            and not knobs[s.changes[0][0]].rule]
    ends.sort(key=lambda s: (s.distance, s.size, s.changes))
    out: list[Scored] = []
    for s in ends[:BISECT_KNOBS]:
        k, far = s.changes[0]
        base = knobs[k].base
        good, lo = far, base  # lo: a value known (or taken) not to meet them
        step = 1 if far > base else -1
        while abs(good - lo) > 1:
            mid = lo + step * (abs(good - lo) // 2)
            c = ((k, mid),)
            if player.games + player.cost(c, top) > budget:
                break
            sc = player.extend(c, top, f"{tag}-{k}-{mid}")
            if sc is None:
                return None
            if sc.safe:
                good = mid
            else:
                lo = mid
        out.append(player.scored[((k, good),)])
    return out
