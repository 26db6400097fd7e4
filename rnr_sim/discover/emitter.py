"""The deck search's emitter: the children each generation plays, with their parents.

Children of elites sampled from the archive (pyribs' ``GridArchive``), made two ways:

- **learned** (``LEARNED`` of them): the block swap a draw of the ``SwapModel`` values most
  for the parent's kind of deck (``proposals.propose``); the child keeps its parent's
  pilot, and is compared with its parent on the same deals first (``search.race``);
- **explored** (the rest): the genome's operators (``genome.Laws.child``): a crossover of
  two elites three times in ten, then one to four mutations, then the repair to legality;
  these try every pilot, as a new kind of deck may want another.

Every child's slots follow its parent's (``genome.align``), so the two meet the same
shuffles in every slot the swap left alone. An empty archive is seeded with the ``seeds``
(the field's decks, in their lists' slot order), mutants of them and a few random decks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnr_sim.discover.genome import Laws, align
from rnr_sim.discover.proposals import SwapModel, propose

CROSSOVER = 0.3  # the share of explored children crossed from two elites
LEARNED = 0.7  # the share of children (once the archive holds elites) the model proposes


@dataclass
class Child:
    """A deck to play, and what it is compared with first."""

    counts: np.ndarray  # int64[n_cards]
    slots: np.ndarray  # int32[deck size]: catalog ids in slot order
    pilots: tuple[int, ...]  # the pilots (indices in search.PILOTS) its first stage tries
    parent: np.ndarray | None = None  # the parent's counts (None: a seed or random deck)
    parent_deals: np.ndarray | None = None  # float[field, deals]: its per-deal shares
    kind: int = -1  # the parent's cell row
    learned: bool = False


class DeckEmitter:
    """Asks for ``batch_size`` legal children of ``archive``'s elites (module docstring)."""

    def __init__(self, archive, laws: Laws, seeds: list[tuple[np.ndarray, np.ndarray]],
                 batch_size: int, seed: int, model: SwapModel, n_pilots: int):
        rng = np.random.default_rng(seed)
        self.archive, self.laws, self.model = archive, laws, model
        self.seeds = []
        for counts, slots in seeds:  # (counts, slot order) of each seed deck
            fixed = laws.repair(np.asarray(counts, dtype=np.int64), rng)
            self.seeds.append((fixed, align(slots, fixed)))
        self.batch_size = batch_size
        self.rng = np.random.default_rng(seed)
        self.every_pilot = tuple(range(n_pilots))

    def ask(self) -> list[Child]:
        laws, rng = self.laws, self.rng
        if self.archive.empty:
            kids = [Child(c, s, self.every_pilot) for c, s in self.seeds]
            while len(kids) < self.batch_size:
                if rng.random() < 0.75 and self.seeds:
                    c, s = self.seeds[rng.integers(len(self.seeds))]
                    counts = laws.child(c, None, rng)
                    kids.append(Child(counts, align(s, counts), self.every_pilot))
                else:
                    counts = laws.random_deck(rng)
                    kids.append(Child(counts, align(_slots(counts), counts), self.every_pilot))
            kids = kids[: self.batch_size]
        else:
            parents = self.archive.sample_elites(self.batch_size)
            mates = self.archive.sample_elites(self.batch_size)["solution"]
            kids = [self._child(parents, k, mates[k]) for k in range(self.batch_size)]
        for k in kids:
            laws.check(k.counts)  # no illegal deck is ever played
        return kids

    def _child(self, parents: dict, k: int, mate: np.ndarray) -> Child:
        laws, rng = self.laws, self.rng
        counts = np.rint(parents["solution"][k]).astype(np.int64)
        slots = parents["slots"][k]
        kind = int(self.archive.int_to_grid_index(parents["index"][k : k + 1])[0][0])
        pilot = int(parents["pilot"][k])
        deals = parents["deals"][k]
        if rng.random() < LEARNED:
            child = propose(laws, counts, self.model.draw(kind, rng), rng)
            if child is not None:
                return Child(child, align(slots, child), (pilot,), counts, deals, kind, True)
        other = np.rint(mate).astype(np.int64) if rng.random() < CROSSOVER else None
        child = laws.child(counts, other, rng)
        return Child(child, align(slots, child), self.every_pilot, counts, deals, kind)


def _slots(counts: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(counts), dtype=np.int32), counts)
