"""The search for changes that bring the metagame within the targets.

A candidate is a set of at most ``max_changes`` integer changes to the numbers in scope
and the rules switches in scope (``targets.Knob``; a switch's value is its compiled value
in the engine's rules array). It is scored by playing the metagame's decks against each
other with the changed catalog and rules (a new ``Pool.cards`` and ``Pool.rules``, the
same decks, pilots and deals: common random numbers, so every candidate and the unchanged
catalog meet the same shuffles), and judged against the targets (``metrics.judge``).
Three objectives, all minimised: the distance to the targets, the number of cards changed
(a switch counted as one), and the size of the changes.

- **Screen.** Every number moved one ``step`` down and one up, every switch to each of
  its other values, each raced (below): the first generation, and the knobs the mutation
  reaches for most.
- **NSGA-II** (pymoo): a population of the best candidates; offspring by crossover (each
  parent's changes dealt between two children) and mutation (a value nudged by one or by
  a step, a knob swapped, a change added or dropped), ranked by non-domination and
  crowding over the three objectives. Until the next generation could overrun the budget,
  or generations stop bringing new candidates (a small scope played out).
- **Racing.** A batch of candidates plays ``stages`` deals a pair, stage by stage (one
  evaluator call a candidate a stage); after each of the first two, a candidate stops if
  it is clearly worse (its distance minus the baseline's, paired on the same deals, 1.96
  standard errors above) than no change or than the best fully measured candidate with no
  more cards changed, and of the rest only the nearest ``KEEP`` (``SCREEN_KEEP`` in the
  screen) go on: successive halving on common deals.
- **The suggestions**: for each number of cards changed, the fully measured candidate
  nearest the targets, kept when it comes nearer than every one with fewer cards; its
  changes ordered by what each adds (the distance without it, on the same deals).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rnr_sim.analytics.stats import Z95
from rnr_sim.balance.metrics import Figures, Games, Judged, judge, variance
from rnr_sim.balance.targets import (
    Changes,
    Knob,
    Targets,
    cards_changed,
    changes_cards,
    changes_rules,
    patched_cards,
    patched_rules,
    size,
)
from rnr_sim.evaluation import Evaluator, Matchups, Pool

SEARCH_SEED_OFFSET = 0
POP_SIZE = 16
TOP_KNOBS = 24  # the screen's best knobs, which mutation reaches for half the time
SCREEN_SHARE = 0.5  # of the search budget, at most, for the screen
SCREEN_KEEP = 0.125  # the screen's racing: an eighth of its candidates go on
STALE_GENERATIONS = 20  # generations in a row with no new candidate: the search stops
KEEP = 0.25  # racing: the share of a batch's candidates that go on to the next stage


def stage_deals(budget: int, games_per_deal: int) -> tuple[int, int, int]:
    """Deals a pair of the three racing stages: about 600, 2,400 and 9,600 games a
    candidate below 4 million games of search, twice that from there (at least 2, 4, 8
    deals)."""
    scale = 1 if budget < 4_000_000 else 2
    return tuple(max(m, math.ceil(scale * g / games_per_deal))
                 for m, g in ((2, 600), (4, 2400), (8, 9600)))  # type: ignore[return-value]


@dataclass
class Metagame:
    """The decks the targets are about: ``names``, their files, their weights (the mix),
    and the engine's arrays (``pool``: the catalog as loaded). Every deck (``subjects``)
    plays every deck of ``field`` (the decks with weight, or all when the equilibrium's
    support is a target), deck j's games on table j."""

    names: list[str]
    paths: list
    weights: np.ndarray
    pool: Pool
    pilots: np.ndarray
    subjects: np.ndarray
    field: np.ndarray
    source: str
    mirrors: bool = False  # a discovery's mix: a deck meets itself too

    def mirror_games(self, ev: Evaluator, cards: np.ndarray, seed: int, deals: int,
                     table0: int, rules: np.ndarray | None = None) -> Games | None:
        """Each weighted deck against itself on deals ``0..deals-1``, deck i's on table
        ``table0 + i`` (the games ``compare``'s round robin does not play), with ``rules``
        (None: the metagame's)."""
        pool = Pool(cards, self.pool.rules if rules is None else rules, self.pool.deck_cards, self.pool.deck_size,
                    self.pool.policies, self.pool.search)
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

    def matchups(self, first_deal: int, deals: int) -> Matchups:
        return Matchups(self.subjects, self.pilots[self.subjects], self.field,
                        self.pilots[self.field], self.field.astype(np.int64), first_deal,
                        deals)

    def games_per_deal(self) -> int:
        return len(self.subjects) * len(self.field) * 2


@dataclass
class Scored:
    """What the race measured of one candidate."""

    changes: Changes
    distance: float
    delta: float  # distance minus the baseline's, on the same deals
    delta_se: float
    deals: int
    stage: int  # stages played (3: all)
    missed: list[str]
    n_cards: int
    size: float

    @property
    def full(self) -> bool:
        return self.stage == 3


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
    flat_games: int  # what every candidate at every stage would have played
    stopped: bool = False
    history: list[dict] = field(default_factory=list)


class _Player:
    """Plays candidates (their catalogs) against the metagame through the evaluator and
    judges them; counts the games; remembers every candidate it scored."""

    def __init__(self, ev: Evaluator, meta: Metagame, catalog, knobs: list[Knob],
                 targets: Targets, stages: tuple[int, int, int], seed: int):
        self.ev, self.meta, self.catalog, self.knobs = ev, meta, catalog, knobs
        self.targets, self.stages, self.seed = targets, stages, seed
        self.scored: dict[Changes, Scored] = {}
        self.games = 0
        self.flat = 0
        self.base_games: Games | None = None
        self.base_by_depth: dict[int, tuple[Figures, Judged]] = {}

    def play(self, changes: Changes, first: int, deals: int, key: str) -> Games | None:
        base = self.meta.pool
        cards = patched_cards(self.catalog, base.cards, self.knobs, changes) \
            if changes_cards(self.knobs, changes) else base.cards
        rules = patched_rules(base.rules, self.knobs, changes) \
            if changes_rules(self.knobs, changes) else base.rules
        pool = Pool(cards, rules, self.meta.pool.deck_cards,
                    self.meta.pool.deck_size, self.meta.pool.policies, self.meta.pool.search)
        games = self.meta.matchups(first, deals)
        out = self.ev.play(pool, games, self.seed + SEARCH_SEED_OFFSET, key=key)
        if out is None:
            return None
        self.games += games.games
        return Games.of_outcome(out, self.meta.subjects, self.meta.field, self.meta.mirrors)

    def judge(self, games: Games) -> tuple[Figures, Judged]:
        fig = Figures.of(games, self.meta.weights, self.meta.n)
        return fig, judge(fig, self.targets)

    def baseline(self, deals: int) -> tuple[Figures, Judged] | None:
        g = self.play((), 0, deals, "baseline")
        if g is None:
            return None
        self.base_games = g
        return self.judge(g)

    def base_at(self, deals: int) -> tuple[Figures, Judged]:
        if deals not in self.base_by_depth:
            self.base_by_depth[deals] = self.judge(self.base_games.head(deals))
        return self.base_by_depth[deals]

    def race(self, cands: list[Changes], bar: Callable[[int], float], tag: str,
             keep: float) -> list[Scored] | None:
        """A batch of candidates through the stages (module docstring), stage by stage;
        None once Ctrl-C stopped it. A candidate scored before is not played again."""
        fresh = list(dict.fromkeys(c for c in cands if c not in self.scored))
        parts: dict[Changes, list[Games]] = {c: [] for c in fresh}
        alive = fresh
        first = 0
        self.flat += len(fresh) * sum(self.stages) * self.meta.games_per_deal()
        for s, deals in enumerate(self.stages):
            now = []
            for k, c in enumerate(alive):
                g = self.play(c, first, deals, f"{tag}-{k:03d}-s{s + 1}")
                if g is None:
                    return None
                parts[c].append(g)
            first += deals
            _, jb = self.base_at(first)
            for c in alive:
                fig, j = self.judge(Games.join(parts[c]))
                delta = j.distance - jb.distance
                se = math.sqrt(variance(j.z - jb.z))
                sc = Scored(c, j.distance, delta, se, first, s + 1, j.missed,
                            cards_changed(self.knobs, c), size(self.knobs, c))
                self.scored[c] = sc
                now.append(sc)
            if s == 2:
                break
            # Clearly worse than no change, or than the best known with no more cards: stop.
            go = [sc for sc in now if sc.delta - Z95 * sc.delta_se <= bar(sc.n_cards)]
            go.sort(key=lambda sc: (sc.distance, sc.size, sc.changes))
            alive = [sc.changes for sc in go[: max(1, math.ceil(keep * len(go)))]]
            if not alive:
                break
        return [self.scored[c] for c in cands]

    def cost(self, n: int, keep: float) -> int:
        """The most games a batch of ``n`` new candidates plays (``keep`` per stage)."""
        total, alive = 0, n
        for deals in self.stages:
            total += alive * deals * self.meta.games_per_deal()
            alive = max(1, math.ceil(keep * alive)) if alive else 0
        return total

    def measure(self, changes: Changes, key: str) -> Judged | None:
        """A candidate on every stage's deals at once (no racing)."""
        if changes in self.scored and self.scored[changes].full:
            s = self.scored[changes]
            return Judged(s.distance, np.zeros(0), s.missed)
        g = self.play(changes, 0, sum(self.stages), key)
        if g is None:
            return None
        return self.judge(g)[1]


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


def run(ev: Evaluator, meta: Metagame, catalog, knobs: list[Knob], targets: Targets,
        max_changes: int, budget: int, seed: int, suggestions: int, bar=None,
        log: Callable[[str], None] = lambda m: None) -> Search | None:
    """The search within ``budget`` games (module docstring); None once Ctrl-C stopped it.
    When the baseline meets every target, no candidate is played."""
    per_deal = meta.games_per_deal()
    stages = stage_deals(budget, per_deal)
    full = sum(stages)
    baseline_deals = max(full, min(1000, budget // 10 // per_deal))
    p = _Player(ev, meta, catalog, knobs, targets, stages, seed)
    base = p.baseline(baseline_deals)
    if base is None:
        return None
    fig0, j0 = base
    result = Search(fig0, j0, baseline_deals, p.scored, [], {}, 0, 0, 0, len(knobs),
                    p.games, 0)
    if not j0.missed:
        return result
    best_delta: dict[int, float] = {}  # fully measured: the lowest delta by cards changed

    def bar_of(n_cards: int) -> float:
        known = [d for m, d in best_delta.items() if m <= n_cards]
        return min([0.0, *known])

    def note(s: Scored) -> None:
        if s.full:
            best_delta[s.n_cards] = min(best_delta.get(s.n_cards, math.inf), s.delta)

    serial = [0]

    def race_all(cands: list[Changes], tag: str, keep: float) -> list[Scored] | None:
        got = p.race(cands, bar_of, f"{tag}-{serial[0]:05d}", keep)
        serial[0] += 1
        if got is not None:
            for s in got:
                note(s)
        return got

    # The screen: every knob a step down and a step up, in one race, as far as its share
    # of the budget allows (the generations need the rest).
    screen = [((k, value),) for k, kn in enumerate(knobs) for value in kn.choices()]
    room = SCREEN_SHARE * (budget - p.games)
    n_screen = len(screen)
    while n_screen > POP_SIZE and p.cost(n_screen, SCREEN_KEEP) > room:
        n_screen = int(n_screen * 0.95)
    if n_screen < len(screen):
        rng = np.random.default_rng(seed)
        keep = np.sort(rng.choice(len(screen), size=n_screen, replace=False))
        screen = [screen[i] for i in keep]
    result.screened = len(screen)
    log(f"screen: {len(screen)} single changes of {len(knobs)} numbers in scope")
    scored = race_all(screen, "screen", SCREEN_KEEP)
    if scored is None:
        return _stopped(result, p)
    if bar is not None:
        _postfix(bar, p, 0)
    ranked = sorted(scored, key=lambda s: (3 - s.stage, s.distance, s.size, s.changes))
    favoured = np.array(list(dict.fromkeys(s.changes[0][0] for s in ranked))[:TOP_KNOBS],
                        dtype=np.int64)

    # NSGA-II over the candidates, until the next generation could overrun the budget.
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.duplicate import HashDuplicateElimination
    from pymoo.core.problem import Problem

    genome = Genome(knobs, max_changes)
    xl, xu = genome.bounds()
    problem = Problem(n_var=len(xl), n_obj=3, xl=xl, xu=xu, vtype=int)
    x0 = np.stack([genome.encode(s.changes) for s in ranked[:POP_SIZE]])
    crossover, mutation = _operators(genome, favoured)

    def key_of(x):
        return x if isinstance(x, tuple) else genome.decode(x.X)

    algo = NSGA2(pop_size=len(x0), sampling=x0, crossover=crossover, mutation=mutation,
                 eliminate_duplicates=HashDuplicateElimination(func=key_of),
                 seed=seed % (2**32))
    algo.setup(problem, termination=("n_gen", 10**9))
    gen = stale = 0
    while True:
        if p.games + p.cost(POP_SIZE, KEEP) > budget:
            break
        pop = algo.ask()
        if pop is None or len(pop) == 0:
            break
        cands = [genome.decode(x) for x in pop.get("X")]
        # A small scope (one switch, say) is soon played out: stop once generations
        # bring nothing new, or the loop would never reach the budget.
        stale = stale + 1 if all(c in p.scored for c in cands if c) else 0
        if stale > STALE_GENERATIONS:
            break
        got = race_all([c for c in cands if c], f"g{gen:04d}", KEEP)
        if got is None:
            return _stopped(result, p)
        by = {s.changes: s for s in got}
        f = np.array([[by[c].distance, by[c].n_cards, by[c].size] if c else
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
    result.generations = gen

    picks = _pick(p.scored, suggestions)
    for s in picks:
        if len(s.changes) < 2:
            result.order[s.changes] = [s.distance - j0.distance]
            continue
        adds = []
        for i in range(len(s.changes)):
            without = s.changes[:i] + s.changes[i + 1:]
            j = p.measure(without, f"order-{serial[0]:05d}")
            serial[0] += 1
            if j is None:
                return _stopped(result, p)
            adds.append(j.distance - s.distance)
        result.order[s.changes] = adds
    result.suggestions = picks
    result.candidates = len(p.scored)
    result.games = p.games
    result.flat_games = p.flat
    return result


def _stopped(result: Search, p: _Player) -> Search:
    result.stopped = True
    result.games = p.games
    return result


def _postfix(bar, p: _Player, gen: int) -> None:
    best = min((s.distance for s in p.scored.values() if s.full), default=math.nan)
    bar.set_postfix(f"generation {gen}, {len(p.scored)} candidates, nearest "
                    f"{100 * best:.1f} pp from the targets")


def _pick(scored: dict[Changes, Scored], n: int) -> list[Scored]:
    """The suggestions, best first: the fully measured candidates on the Pareto front of
    (distance, cards changed, size); those that meet every target on the search's deals
    first, by fewest cards then smallest changes, then the rest by distance; one
    suggestion per set of cards changed (the best values for those cards)."""
    full = sorted((s for s in scored.values() if s.full),
                  key=lambda s: (s.distance, s.n_cards, s.size, s.changes))
    front = [s for s in full if not any(_dominates(o, s) for o in full)]
    front.sort(key=lambda s: (s.distance > 0, s.n_cards if s.distance <= 0 else 0,
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
    x = (a.distance, a.n_cards, a.size)
    y = (b.distance, b.n_cards, b.size)
    return all(u <= v for u, v in zip(x, y, strict=True)) and x != y
