"""Swapped decks played against a field on common deals, paired with the decks they came
from, and raced: the games go where the answer is still open.

- An ``Arm`` is one swapped deck: its host (the deck it came from) and its slots.
- ``Bench.play`` plays arms against the field on deals ``first .. first + deals - 1`` through
  the evaluation service, and each arm's host on the same deals (once per host and deal
  range: a cache), so every arm's *paired difference* per deal is at hand: the arm's share
  of the deal minus its host's (both seat orders; a deal is one field deck's deal, the
  field decks as strata: ``stats.paired_gain``).
- ``race`` plays arms stage by stage on growing deal ranges, asking the caller after each
  stage which arms go on: successive halving on common deals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rnr_sim.analytics.stats import Z95, paired_gain
from rnr_sim.discover.search import Field
from rnr_sim.runs.evaluation import Evaluator, Pool

#: Games one evaluator call plays at most (arms are split into calls of this size or less,
#: so memory stays flat whatever the pool).
MAX_CALL_GAMES = 400_000


@dataclass
class Arm:
    """One swapped deck, and what the games of it measured so far (``diff``: per stage,
    float64[field, deals] of paired differences)."""

    host: int
    slots: np.ndarray
    diff: list[np.ndarray] = field(default_factory=list)
    games: int = 0

    @property
    def deals(self) -> int:
        return sum(d.shape[1] for d in self.diff)

    def differences(self) -> np.ndarray:
        return np.concatenate(self.diff, axis=1)

    def gain(self, weights: np.ndarray) -> tuple[float, float]:
        """(gain, se): the paired change in the host's share against the field."""
        g, se = paired_gain(self.differences(), weights)
        return float(g), float(se)


class Bench:
    """Plays arms and their hosts (``hosts``: slot arrays with pilot rows) against ``fld`` on
    ``pool``'s catalog and rules under ``seed``; every call keyed for the checkpoint store."""

    def __init__(self, ev: Evaluator, pool: Pool, fld: Field, host_slots: Sequence[np.ndarray],
                 host_pilots: Sequence[int], seed: int):
        self.ev, self.pool, self.fld, self.seed = ev, pool, fld, seed
        self.host_slots = list(host_slots)
        self.host_pilots = np.asarray(host_pilots, dtype=np.int32)
        self._host: dict[tuple[int, int, int], np.ndarray] = {}
        self.games = 0

    @property
    def games_per_deal(self) -> int:
        return 2 * len(self.fld)

    def cost(self, arms: int, deals: int) -> int:
        """Games ``arms`` swapped decks play on ``deals`` deals a field deck."""
        return arms * deals * self.games_per_deal

    def play(self, arms: Sequence[Arm], first: int, deals: int, key: str) -> bool:
        """Each arm (and its host, unless played on these deals already) on deals
        ``first .. first + deals - 1``; its paired differences appended. False once Ctrl-C
        stopped a call (a resume replays the stored ones)."""
        per = max(1, MAX_CALL_GAMES // (deals * self.games_per_deal))
        for b, a in enumerate(range(0, len(arms), per)):
            group = list(arms[a:a + per])
            hosts = sorted({arm.host for arm in group
                            if (arm.host, first, deals) not in self._host})
            decks = [self.host_slots[h] for h in hosts] + [arm.slots for arm in group]
            pilots = np.concatenate([self.host_pilots[hosts],
                                     self.host_pilots[[arm.host for arm in group]]])
            n_field = len(self.fld)
            pool = self.pool.with_decks(list(self.fld.card_ids) + decks)
            games = self.fld.matchups(n_field + np.arange(len(decks)), pilots, first, deals)
            out = self.ev.play(pool, games, self.seed, key=f"{key}-b{b:04d}")
            if out is None:
                return False
            per_deal = out.per_deal()  # [subject, field, deal]
            for i, h in enumerate(hosts):
                self._host[(h, first, deals)] = per_deal[i]
            for i, arm in enumerate(group):
                arm.diff.append(per_deal[len(hosts) + i] - self._host[(arm.host, first, deals)])
                arm.games += deals * self.games_per_deal
            self.games += games.games
        return True


def race(bench: Bench, arms: Sequence[Arm], ends: Sequence[int], key: str,
         go_on: Callable[[np.ndarray, int], np.ndarray]) -> bool:
    """Play ``arms`` stage by stage: stage s on deals ``ends[s-1] .. ends[s] - 1`` (the first
    from 0), then ``go_on(alive, s)`` (indices into ``arms``) says which play the next
    stage. False once Ctrl-C stopped a call."""
    alive = np.arange(len(arms))
    start = 0
    for s, end in enumerate(ends):
        if not len(alive):
            return True
        if not bench.play([arms[i] for i in alive], start, end - start, f"{key}-s{s}"):
            return False
        start = end
        if s + 1 < len(ends):
            alive = np.asarray(go_on(alive, s), dtype=np.int64)
    return True


def clearly_below(g: np.ndarray, se: np.ndarray, best_g: float, best_se: float) -> np.ndarray:
    """Arms whose 95% interval lies below that of the best arm of their group."""
    return g + Z95 * se < best_g - Z95 * best_se
