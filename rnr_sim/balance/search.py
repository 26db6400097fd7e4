"""The search for changes that bring the metagame within the targets (docs/design.md,
"Balance screening").

A candidate is a set of at most ``max_changes`` integer changes to the numbers in scope
and the rules switches in scope (``targets.Knob``; a switch's value is its compiled value
in the engine's rules array). It is measured by playing the metagame's decks against each
other with the changed catalog and rules on the baseline's deals (``paired.Player``: the
pairs it touches played, the others the baseline's games; common random numbers, so every
candidate and the unchanged catalog meet the same shuffles), and judged against the
targets (``metrics.judge``). Three objectives, all minimised: the distance to the targets,
the number of cards changed (a switch counted as one), and the size of the changes.

1. **Baseline**: the unchanged catalog, every pair, on up to ``BASELINE_DEALS`` deals.
2. **Attribution** (``screen.offenders``, ``screen.attribute``): the decks the missed
   targets are about, and the cards they lean on (each cut, on common deals).
3. **Screen** (``screen.sequential``): every single change at the ends of its knob's range,
   the first wave (switches and the offenders' cards) first; each measured on doubling
   deal ranges while its interval still allows it to close its share of the gap.
4. **Crossing** (``screen.crossing``): for a number whose end meets the targets, the
   smallest move that still meets them with room, by bisection.
5. **NSGA-II** (pymoo), when no single change meets the targets: a population seeded with
   the changes that close the most; offspring by crossover (each parent's changes dealt
   between two children) and mutation (a value nudged by one or by a step, a knob swapped
   for one the screen kept, a change added or dropped), each child screened as the singles
   were, but against the most the best candidate with fewer cards closes.
6. **The suggestions**: the fully measured candidates on the Pareto front of (safe,
   distance, cards changed, size); those that meet every target with room first, by
   fewest cards, then those that change only what the offenders lean on, then smallest
   changes; one per set of cards changed; their changes ordered
   by what each adds (the distance without it, on the same deals).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rnr_sim.balance import screen as scr
from rnr_sim.balance.metrics import Figures, Judged
from rnr_sim.balance.paired import Player, Scored
from rnr_sim.balance.targets import Changes, Knob, Targets
from rnr_sim.runs.evaluation import Evaluator, Matchups, Pool

POP_SIZE = 16
STALE_GENERATIONS = 20  # generations in a row with no new candidate: the search stops
BASELINE_DEALS = 1000  # deals a pair, at most, of the baseline (and of a full measure)
BASELINE_SHARE = 0.15  # of the search budget, at most, for the baseline
ATTRIBUTION_SHARE = 0.1  # ... for the offenders' cuts
SCREEN_SHARE = 0.5  # ... of what is left then, for the screen's first wave


@dataclass
class Metagame:
    """The decks the targets are about: ``names``, their files, their weights (the mix),
    and the engine's arrays (``pool``: the catalog as loaded). Every deck (``subjects``)
    plays every deck of ``field`` (the decks with weight, or all when the equilibrium's
    support is a target), deck j's games on table j. ``mirrors``: a discovery's mix, which
    meets itself, and is ``adaptive`` (``metrics``): its figures weighted by the equilibrium
    of the games measured."""

    names: list[str]
    paths: list
    weights: np.ndarray
    pool: Pool
    pilots: np.ndarray
    subjects: np.ndarray
    field: np.ndarray
    source: str
    mirrors: bool = False  # a discovery's mix: a deck meets itself too

    @property
    def adaptive(self) -> bool:
        return self.mirrors

    def mirror_games(self, ev: Evaluator, cards: np.ndarray, seed: int, deals: int,
                     table0: int, rules: np.ndarray | None = None):
        """Each weighted deck against itself on deals ``0..deals-1``, deck i's on table
        ``table0 + i`` (the games ``compare``'s round robin does not play), with ``rules``
        (None: the metagame's)."""
        from rnr_sim.balance.metrics import Games

        pool = Pool(cards, self.pool.rules if rules is None else rules, self.pool.deck_cards,
                    self.pool.deck_size, self.pool.policies, self.pool.search)
        parts = []
        for i in self.field:
            m = Matchups([i], self.pilots[[i]], [i], self.pilots[[i]], [table0 + int(i)], 0,
                         deals)
            out = ev.play(pool, m, seed)
            if out is None:
                return None
            parts.append(Games.of_outcome(out, np.array([i]), np.array([i]), mirrors=True))
        return Games.union(parts)

    @property
    def n(self) -> int:
        return len(self.names)

    def games_per_deal(self) -> int:
        return len(self.subjects) * len(self.field) * 2


@dataclass
class Search:
    """What the search did and found."""

    baseline: Figures
    baseline_judged: Judged
    baseline_deals: int
    scored: dict[Changes, Scored]
    suggestions: list[Scored]
    order: dict[Changes, list[float]]  # each suggestion's changes: what each adds
    generations: int
    candidates: int
    screened: int
    knobs: int
    games: int
    flat_games: int  # what every candidate would have played on the whole matrix
    stopped: bool = False
    history: list[dict] = field(default_factory=list)
    attribution: dict = field(default_factory=dict)
    phases: dict = field(default_factory=dict)  # games by phase


# ---------------------------------------------------------------------------- genomes


class Genome:
    """A candidate as pymoo's integer vector: ``max_changes`` slots of (knob index, move);
    knob index ``len(knobs)`` is an empty slot. ``decode`` gives the canonical changes
    (values clipped to each knob's range, a knob once, sorted)."""

    def __init__(self, knobs: list[Knob], max_changes: int):
        self.knobs, self.k = knobs, max_changes
        self.none = len(knobs)
        self.reach = max(max(kn.hi - kn.base, kn.base - kn.lo) for kn in knobs)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        xl = np.tile([0, -self.reach], self.k)
        xu = np.tile([self.none, self.reach], self.k)
        return xl, xu

    def decode(self, x: np.ndarray) -> Changes:
        seen: dict[int, int] = {}
        for slot in range(self.k):
            kn, move = int(round(x[2 * slot])), int(round(x[2 * slot + 1]))
            if kn < 0 or kn >= self.none or kn in seen:
                continue
            knob = self.knobs[kn]
            value = min(max(knob.base + move, knob.lo), knob.hi)
            if value != knob.base:
                seen[kn] = value
        return tuple(sorted(seen.items()))

    def encode(self, changes: Changes) -> np.ndarray:
        x = np.tile([self.none, 0], self.k).astype(np.int64)
        for slot, (kn, value) in enumerate(changes[: self.k]):
            x[2 * slot], x[2 * slot + 1] = kn, value - self.knobs[kn].base
        return x


def _operators(genome: Genome, favoured: np.ndarray):
    """pymoo's crossover and mutation for ``Genome`` vectors (module docstring)."""
    from pymoo.core.crossover import Crossover
    from pymoo.core.mutation import Mutation

    knobs = genome.knobs

    def pick_knob(rng) -> int:
        if len(favoured) and rng.random() < 0.5:
            return int(favoured[rng.integers(len(favoured))])
        return int(rng.integers(len(knobs)))

    def moved(kn: int, rng) -> int:
        knob = knobs[kn]
        sign = -1 if rng.random() < 0.5 else 1
        value = knob.base + sign * knob.step
        if not knob.lo <= value <= knob.hi:
            value = knob.base - sign * knob.step
        return min(max(value, knob.lo), knob.hi)

    class Deal(Crossover):
        """Each change of either parent goes to one of two children (a knob both parents
        change: one parent's value, at random)."""

        def __init__(self):
            super().__init__(2, 2)

        def _do(self, problem, X, *args, random_state=None, **kwargs):
            rng = random_state
            _, n_mat, n_var = X.shape
            out = np.zeros((2, n_mat, n_var), dtype=X.dtype)
            for m in range(n_mat):
                a, b = dict(genome.decode(X[0, m])), dict(genome.decode(X[1, m]))
                union = {kn: (a[kn] if kn not in b or (kn in a and rng.random() < 0.5)
                              else b[kn]) for kn in sorted(set(a) | set(b))}
                kids: list[list[tuple[int, int]]] = [[], []]
                for item in union.items():
                    kids[int(rng.random() < 0.5)].append(item)
                for c in range(2):
                    kid = kids[c]
                    if not kid and union:
                        items = list(union.items())
                        kid = [items[int(rng.integers(len(items)))]]
                    while len(kid) > genome.k:
                        kid.pop(int(rng.integers(len(kid))))
                    out[c, m] = genome.encode(tuple(sorted(kid)))
            return out

    class Move(Mutation):
        """One edit of the candidate: nudge a value by one, move it by a step or anywhere
        in range, swap its knob, add a change or drop one."""

        def _do(self, problem, X, *args, random_state=None, **kwargs):
            rng = random_state
            out = X.copy()
            for i in range(len(X)):
                ch = dict(genome.decode(X[i]))
                op = rng.random()
                if not ch or (op < 0.2 and len(ch) < genome.k):
                    kn = pick_knob(rng)
                    ch[kn] = moved(kn, rng)
                elif op < 0.3 and len(ch) > 1:
                    ch.pop(sorted(ch)[int(rng.integers(len(ch)))])
                else:
                    kn = sorted(ch)[int(rng.integers(len(ch)))]
                    knob = knobs[kn]
                    if op < 0.4:  # swap the knob
                        ch.pop(kn)
                        new = pick_knob(rng)
                        ch[new] = moved(new, rng)
                    elif op < 0.75:  # nudge by one
                        ch[kn] = min(max(ch[kn] + (1 if rng.random() < 0.5 else -1),
                                         knob.lo), knob.hi)
                    elif op < 0.9:  # a step
                        ch[kn] = min(max(ch[kn] + (knob.step if rng.random() < 0.5
                                                   else -knob.step), knob.lo), knob.hi)
                    else:  # anywhere in range
                        ch[kn] = int(rng.integers(knob.lo, knob.hi + 1))
                out[i] = genome.encode(tuple(sorted(ch.items())))
            return out

    return Deal(), Move()


# ---------------------------------------------------------------------------- the search


def run(ev: Evaluator, meta: Metagame, plan, knobs: list[Knob], targets: Targets,
        max_changes: int, budget: int, seed: int, suggestions: int, bar=None,
        log: Callable[[str], None] = lambda m: None, fixed: Changes = ()) -> Search | None:
    """The search within ``budget`` games (module docstring); None once Ctrl-C stopped it.
    When the baseline meets every target, no candidate is played. ``fixed``: changes the
    baseline and every candidate carry (``paired.Player``)."""
    per_deal = meta.games_per_deal()
    top = max(4 * scr.FIRST_DEALS, min(BASELINE_DEALS, int(BASELINE_SHARE * budget) // per_deal))
    p = Player(ev, meta, plan.catalog, knobs, targets, seed, fixed)
    base = p.baseline(top)
    if base is None:
        return None
    fig0, j0 = base
    if targets.iwd_max is not None:
        _say_watched(p, fig0, plan.catalog, knobs, targets.iwd_max, top, log)
    result = Search(fig0, j0, top, p.scored, [], {}, 0, 0, 0, len(knobs), p.games, 0)
    result.phases["baseline"] = p.games
    if not j0.missed:
        return result
    gap = j0.distance
    need = gap / max_changes  # what a single change must close, at least, to be of use

    # Attribution: the offenders' cards by what each deck loses without them.
    weights = scr.offenders(fig0, p.base, targets)
    unit = scr.attribution_cost(meta, weights, 1)
    deals_w = int(ATTRIBUTION_SHARE * budget) // max(1, unit)
    deals_w = min(deals_w, top)
    got = scr.attribute(p, plan, weights, deals_w, seed, "worth") if deals_w >= 2 else ({}, 0)
    if got is None:
        return _stopped(result, p)
    lean, worth_games = got
    p.games += worth_games
    result.phases["attribution"] = worth_games
    # a card over iwd_max is an offender itself: its numbers lead the first wave
    over = [c for c, f in fig0.iwd.items() if targets.iwd_max is not None
            and f.value > targets.iwd_max]
    first, second = scr.waves(knobs, lean, p, fig0, weights, over)
    result.attribution = {
        "offenders": {meta.names[i]: round(w, 6) for i, w in sorted(weights.items())},
        "iwd_over": {plan.catalog.cards[c].name: round(fig0.iwd[c].value, 4) for c in over},
        "deals": deals_w if lean else 0,
        "lean": [{"card": plan.catalog.cards[c].name, "lean": round(v, 6)}
                 for c, v in sorted(lean.items(), key=lambda kv: -kv[1])[:20]],
        "first_wave": len(first), "second_wave": len(second)}
    log(f"attribution: {len(weights)} offending deck(s); {len(first)} knobs in the first "
        f"wave, {len(second)} after")

    # The screen, wave by wave: the singles, the most promising measured in full, then
    # the crossing values. The second wave only when the first met no target set, with
    # what is left of the screen's games or half of what is left, the more.
    screen_budget = p.games + int(SCREEN_SHARE * (budget - p.games))
    scored: list[Scored] = []
    for w, ks in enumerate((first, second)):
        if not ks:
            continue
        cap = screen_budget
        if w == 1:
            if _met(p):
                break  # the first wave met the targets: the rest is not needed
            cap = max(screen_budget, p.games + int(0.5 * (budget - p.games)))
        cands = scr.singles(knobs, ks)
        result.screened += len(cands)
        log(f"screen, wave {w + 1}: {len(cands)} single changes; each goes on while it may "
            f"close {100 * need:.2f} pp of the {100 * gap:.2f} pp to the targets")
        got_w = scr.sequential(p, cands, need, cap, f"screen{w + 1}", note=_note(bar))
        if got_w is None:
            return _stopped(result, p)
        scored += got_w
        if scr.confirm(p, got_w, need, budget, f"confirm{w + 1}") is None:
            return _stopped(result, p)
        if scr.crossing(p, knobs, scored, budget, f"cross{w + 1}") is None:
            return _stopped(result, p)
    result.phases["screen"] = p.games - sum(result.phases.values())
    if bar is not None:
        _postfix(bar, p, 0)

    # Combinations, when no single change meets the targets with room.
    if max_changes > 1 and not _met(p):
        gen = _combine(p, knobs, max_changes, budget, seed, need, result, bar)
        if gen is None:
            return _stopped(result, p)
        result.generations = gen
    result.phases["combinations"] = p.games - sum(result.phases.values())

    picks = _pick(p.scored, suggestions, set(first))
    for s in picks:
        if len(s.changes) < 2:
            result.order[s.changes] = [s.distance - j0.distance]
            continue
        adds = []
        for i in range(len(s.changes)):
            without = s.changes[:i] + s.changes[i + 1:]
            j = p.extend(without, top, f"order-{i}-{len(result.order):03d}")
            if j is None:
                return _stopped(result, p)
            adds.append(j.distance - s.distance)
        result.order[s.changes] = adds
    result.phases["order"] = p.games - sum(result.phases.values())
    result.suggestions = picks
    result.candidates = len(p.scored)
    result.games = p.games
    result.flat_games = p.flat
    return result


def _combine(p: Player, knobs: list[Knob], max_changes: int, budget: int, seed: int,
             need: float, result: Search, bar) -> int | None:
    """NSGA-II over combinations (module docstring, 5); the generations run, or None once
    Ctrl-C stopped a call."""
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.duplicate import HashDuplicateElimination
    from pymoo.core.problem import Problem

    ranked = sorted((s for s in p.scored.values() if s.changes),
                    key=lambda s: (not s.full, -s.closes if not s.full else s.distance,
                                   s.size, s.changes))
    kept = [s for s in ranked if s.closes >= need]
    favoured = np.array(list(dict.fromkeys(k for s in (kept or ranked) for k, _ in s.changes)),
                        dtype=np.int64)
    genome = Genome(knobs, max_changes)
    xl, xu = genome.bounds()
    problem = Problem(n_var=len(xl), n_obj=3, xl=xl, xu=xu, vtype=int)
    seeds = (kept + [s for s in ranked if s not in kept])[:POP_SIZE]
    if not seeds:
        return 0
    x0 = np.stack([genome.encode(s.changes) for s in seeds])
    crossover, mutation = _operators(genome, favoured)

    def key_of(x):
        return x if isinstance(x, tuple) else genome.decode(x.X)

    algo = NSGA2(pop_size=len(x0), sampling=x0, crossover=crossover, mutation=mutation,
                 eliminate_duplicates=HashDuplicateElimination(func=key_of),
                 seed=seed % (2**32))
    algo.setup(problem, termination=("n_gen", 10**9))
    gen = stale = 0
    j0 = result.baseline_judged
    while True:
        per = np.mean([p.per_deal(s.changes) for s in seeds]) if seeds else 0
        if p.games + POP_SIZE * per * scr.FIRST_DEALS * 3 > budget:
            break
        pop = algo.ask()
        if pop is None or len(pop) == 0:
            break
        cands = [genome.decode(x) for x in pop.get("X")]
        stale = stale + 1 if all(c in p.scored for c in cands if c) else 0
        if stale > STALE_GENERATIONS:
            break
        # a child goes on while it may close more than the best with fewer cards
        fresh = [c for c in dict.fromkeys(cands) if c and c not in p.scored]
        best_fewer = max([need] + [-s.delta for s in p.scored.values() if s.full])
        if fresh and scr.sequential(p, fresh, best_fewer, budget, f"g{gen:04d}") is None:
            return None
        by = p.scored
        f = np.array([[by[c].distance, by[c].n_cards, by[c].size] if c and c in by else
                      [j0.distance, 0, 0.0] for c in cands])
        pop.set("F", f)
        algo.tell(infills=pop)
        gen += 1
        best = min((s for s in p.scored.values() if s.full), default=None,
                   key=lambda s: s.distance)
        result.history.append({"generation": gen, "games": p.games,
                               "candidates": len(p.scored),
                               "best_distance": None if best is None else best.distance})
        if bar is not None:
            _postfix(bar, p, gen)
    return gen


def _met(p: Player) -> bool:
    """A candidate measured in full meets every target with room."""
    return any(s.full and s.safe and s.distance <= 0 for s in p.scored.values())


def _note(bar) -> Callable[[str], None]:
    return (lambda m: None) if bar is None else bar.set_postfix


def _stopped(result: Search, p: Player) -> Search:
    result.stopped = True
    result.games = p.games
    return result


def _postfix(bar, p: Player, gen: int) -> None:
    best = min((s.distance for s in p.scored.values() if s.full), default=math.nan)
    bar.set_postfix(f"generation {gen}, {len(p.scored)} candidates, nearest "
                    f"{100 * best:.1f} pp from the targets")


def _say_watched(p: Player, fig0: Figures, catalog, knobs: list[Knob], bound: float,
                 deals: int, log: Callable[[str], None]) -> None:
    """The cards the search watches for ``iwd_max`` (``iwd.watch``), in points; the highest
    card when none is near the bound; and a watched card over it whose numbers are not in
    the scope (the search can lower its IWD only through other cards)."""
    from rnr_sim.balance.iwd import pp

    near = ", ".join(f"{catalog.cards[c].name} {pp(f)}" for c, f in fig0.iwd.items())
    if not near:
        near = "no card near it" + (f" (the highest: {p.iwd_top[0]} {pp(p.iwd_top[1])})"
                                    if p.iwd_top is not None else "")
    log(f"iwd_max {100 * bound:+.1f} pp: {near}; the adjusted IWD on the baseline's "
        f"{deals:,} deals a pair, watched through the search")
    in_scope = {kn.card_id for kn in knobs if not kn.rule}
    out = [catalog.cards[c].name for c, f in fig0.iwd.items()
           if f.value > bound and c not in in_scope]
    if out:
        log(f"iwd_max: over it and outside [scope]: {', '.join(out)} (name them in [scope] "
            "cards for the search to change their numbers)")


def _pick(scored: dict[Changes, Scored], n: int, leaned: set[int] = frozenset()
          ) -> list[Scored]:
    """The suggestions, best first (module docstring, 6); among those that meet the targets
    with as many cards, one that changes only the first wave's numbers (what the offenders
    lean on: a fix of what is broken) before one that changes others."""
    # A change that leaves the distance where it was (a card no game draws, say: the very
    # same games) is no suggestion, however near the targets the unchanged cards are.
    full = sorted((s for s in scored.values() if s.full and s.changes and s.delta < 0),
                  key=lambda s: (s.distance, s.n_cards, s.size, s.changes))
    front = [s for s in full if not any(_dominates(o, s) for o in full)]
    front.sort(key=lambda s: (not s.safe, s.distance > 0,
                              s.n_cards if s.distance <= 0 else 0,
                              s.distance <= 0 and any(k not in leaned for k, _ in s.changes),
                              s.distance, s.size, s.changes))
    kept: list[Scored] = []
    sets: set[frozenset[int]] = set()
    for s in front:
        cards = frozenset(k for k, _ in s.changes)
        if cards not in sets:
            sets.add(cards)
            kept.append(s)
    return kept[:n]


def _dominates(a: Scored, b: Scored) -> bool:
    x = (not a.safe, a.distance, a.n_cards, a.size)
    y = (not b.safe, b.distance, b.n_cards, b.size)
    return all(u <= v for u, v in zip(x, y, strict=True)) and x != y
