"""Candidates played against the metagame on common deals, paired with the unchanged cards,
and measured deal range by deal range (docs/design.md, "Balance screening").

- The **baseline** (the unchanged catalog and rules) plays every pair of the metagame's
  decks on deals ``0 .. B - 1``, once.
- A **candidate** plays only the pairs its changes can touch: a card's numbers matter only
  in the games of the decks that hold the card, so every other pair's games are the
  baseline's own (the same decks, pilots, catalog entries and deals: the same games; a test
  holds it). A rules switch touches every pair. So a change to a card one deck plays costs
  about ``2/n`` of the whole matrix of ``n`` decks.
- A candidate's games grow deal range by deal range (``extend``), and after each its
  **paired change** of the distance to the targets is at hand: the candidate's distance
  minus the baseline's on the same deals, its standard error from the per-unit
  linearisations' difference (``metrics.variance``, pairs as strata, the deal the unit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rnr_sim.analytics.stats import Z95
from rnr_sim.balance.metrics import Figures, Games, Judged, judge, safe, variance
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
from rnr_sim.runs.evaluation import Evaluator, Matchups, Pool

SEARCH_SEED_OFFSET = 0
#: A change found on the search's deals must meet every target by this many standard
#: errors to be called safe (one-sided 95%: it should still meet them on fresh deals).
SAFE_Z = 1.645
#: A change that moved no outcome in N of the games it touches is not taken as a certain
#: 0: the rule of three (no event in N trials: its rate is below 3/N at 95%) floors the
#: standard error of its paired change at ``3 / (Z95 N)``.
RULE_OF_THREE = 3.0


@dataclass
class Scored:
    """What the measure of one candidate says so far."""

    changes: Changes
    distance: float
    delta: float  # distance minus the baseline's, on the same deals
    delta_se: float
    deals: int  # deals a pair measured (from 0)
    stage: int  # deal ranges played
    missed: list[str]
    n_cards: int
    size: float
    safe: bool  # every target met with room (``metrics.safe``)
    full: bool = False  # measured on every deal of the baseline

    @property
    def closes(self) -> float:
        """How much of the distance it closes at most, at 95% (``-delta`` at its best)."""
        return -(self.delta - Z95 * self.delta_se)


class Player:
    """Plays candidates (their catalogs and rules) against the metagame through the
    evaluator, on the pairs they touch, and judges them; counts the games; remembers every
    candidate it measured (``scored``)."""

    def __init__(self, ev: Evaluator, meta, catalog, knobs: list[Knob], targets: Targets,
                 seed: int, fixed: Changes = ()):
        self.ev, self.meta, self.catalog, self.knobs = ev, meta, catalog, knobs
        #: changes every game carries, the baseline's too (a round of ``adapt``: the patch
        #: so far); a candidate's own change to one of their knobs replaces it
        self.fixed = fixed
        self.targets, self.seed = targets, seed + SEARCH_SEED_OFFSET
        #: the cards whose IWD is a figure (an ``iwd_max`` target: ``iwd.watch``, chosen
        #: on the baseline): card id -> its slot masks in each deck
        self.watch: dict[int, np.ndarray] = {}
        self.iwd_top = None  # the card with the highest IWD on the baseline: (name, Figure)
        self.scored: dict[Changes, Scored] = {}
        self.games = 0
        self.flat = 0  # what every candidate would have played on the whole matrix
        self.base: Games | None = None
        self._parts: dict[Changes, Games] = {}
        self._per_deal: dict[Changes, int] = {}
        self._base_at: dict[int, tuple[Figures, Judged]] = {}
        pool = meta.pool
        held = [set(pool.deck_cards[i, : pool.deck_size[i]].tolist()) for i in range(meta.n)]
        #: the decks each knob touches (a switch: every deck)
        self.holders = [np.arange(meta.n) if k.rule else
                        np.array([i for i in range(meta.n) if k.card_id in held[i]],
                                 dtype=np.int64) for k in knobs]

    # ----------------------------------------------------------------- what is played

    def touched(self, changes: Changes) -> np.ndarray:
        """The decks whose games ``changes`` can change."""
        if not changes:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate([self.holders[k] for k, _ in changes]))

    def per_deal(self, changes: Changes) -> int:
        """The games ``changes`` plays a deal (both seat orders)."""
        if changes in self._per_deal:
            return self._per_deal[changes]
        meta = self.meta
        t = set(self.touched(changes).tolist())
        subj = [int(s) for s in meta.subjects]
        fld = [int(f) for f in meta.field]
        pairs = sum(1 for a in subj for b in fld if (a in t or b in t)
                    and (meta.mirrors or a != b))
        self._per_deal[changes] = 2 * pairs
        return 2 * pairs

    def cost(self, changes: Changes, deals: int) -> int:
        return self.per_deal(changes) * deals

    def merged(self, changes: Changes) -> Changes:
        """``changes`` over the fixed ones."""
        return tuple(sorted({**dict(self.fixed), **dict(changes)}.items()))

    def _pool(self, changes: Changes) -> Pool:
        changes = self.merged(changes)
        base = self.meta.pool
        cards = patched_cards(self.catalog, base.cards, self.knobs, changes) \
            if changes_cards(self.knobs, changes) else base.cards
        rules = patched_rules(base.rules, self.knobs, changes) \
            if changes_rules(self.knobs, changes) else base.rules
        return Pool(cards, rules, base.deck_cards, base.deck_size, base.policies, base.search)

    def _grid(self, pool: Pool, subjects: np.ndarray, field: np.ndarray, first: int,
              deals: int, key: str) -> Games | None:
        meta = self.meta
        m = Matchups(subjects, meta.pilots[subjects], field, meta.pilots[field],
                     field.astype(np.int64), first, deals)
        out = self.ev.play(pool, m, self.seed, key=key)
        if out is None:
            return None
        self.games += m.games
        return Games.of_outcome(out, subjects, field, meta.mirrors)

    def baseline(self, deals: int) -> tuple[Figures, Judged] | None:
        """The unchanged cards on deals ``0 .. deals - 1``, every pair."""
        g = self._grid(self._pool(()), self.meta.subjects, self.meta.field, 0, deals,
                       "baseline")
        if g is None:
            return None
        self.base = g
        if self.targets.iwd_max is not None and g.seen is not None:
            from rnr_sim.balance.iwd import watch

            pool = self.meta.pool
            self.watch, self.iwd_top = watch(g, pool.deck_cards, pool.deck_size,
                                             self.targets.iwd_max,
                                             [c.name for c in self.catalog.cards])
        self._row = {(int(a), int(b)): r for r, (a, b) in enumerate(g.pairs)}
        return self.base_at(deals)

    def base_at(self, deals: int) -> tuple[Figures, Judged]:
        if deals not in self._base_at:
            self._base_at[deals] = self.judge(self.base.head(deals))
        return self._base_at[deals]

    @property
    def base_deals(self) -> int:
        return self.base.deals

    def _play(self, changes: Changes, first: int, deals: int, key: str) -> Games | None:
        """``changes`` on deals ``first .. first + deals - 1``: the pairs it touches played,
        the others the baseline's games."""
        meta = self.meta
        t = self.touched(changes)
        pool = self._pool(changes)
        grids = [(t[np.isin(t, meta.subjects)], meta.field)]
        rest = meta.subjects[~np.isin(meta.subjects, t)]
        fld_t = meta.field[np.isin(meta.field, t)]
        if len(rest) and len(fld_t):
            grids.append((rest, fld_t))
        g = self.base.copy_deals(first, deals)
        for n, (subj, fld) in enumerate(grids):
            if not len(subj) or not len(fld):
                continue
            part = self._grid(pool, subj, fld, first, deals, f"{key}-{n}")
            if part is None:
                return None
            rows = np.array([self._row[(int(a), int(b))] for a, b in part.pairs],
                            dtype=np.int64)
            g.put(rows, part)
        return g

    # ----------------------------------------------------------------- what it measures

    def judge(self, games: Games) -> tuple[Figures, Judged]:
        fig = Figures.of(games, self.meta.weights, self.meta.n, self.meta.adaptive,
                         self.watch)
        return fig, judge(fig, self.targets)

    def extend(self, changes: Changes, deals: int, key: str) -> Scored | None:
        """``changes`` measured on deals ``0 .. deals - 1`` (those it played already are
        kept); None once Ctrl-C stopped a call."""
        have = self._parts.get(changes)
        first = 0 if have is None else have.deals
        if deals > first:
            g = self._play(changes, first, deals - first, key)
            if g is None:
                return None
            self.flat += (deals - first) * self.meta.games_per_deal()
            have = g if have is None else Games.join([have, g])
            self._parts[changes] = have
        return self._score(changes, have)

    def _score(self, changes: Changes, games: Games) -> Scored:
        d = games.deals
        fig, j = self.judge(games)
        _, jb = self.base_at(d)
        touched = max(1, self.per_deal(changes) * d)
        se = max(math.sqrt(variance(j.z - jb.z)), RULE_OF_THREE / (Z95 * touched))
        old = self.scored.get(changes)
        sc = Scored(changes, j.distance, j.distance - jb.distance, se, d,
                    (old.stage if old else 0) + 1, j.missed, cards_changed(self.knobs, changes),
                    size(self.knobs, changes), safe(fig, self.targets, SAFE_Z),
                    full=d >= self.base_deals)
        self.scored[changes] = sc
        return sc
