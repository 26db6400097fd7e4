"""The discrete emitter of the deck search, on pyribs' ``EmitterBase``.

pyribs' own emitters move real vectors (Gaussian steps, CMA-ES); a deck is a multiset of
cards, so this one asks for children made by the genome's operators (``genome.Laws.child``)
of elites sampled from the archive: a crossover of two elites three times in ten, then one
to four mutations, then the repair to legality. An empty archive is seeded with the
``seeds`` (the field's decks) and mutants of them, and a few random decks of the pool.
"""

from __future__ import annotations

import numpy as np
from ribs.emitters import EmitterBase

from rnr_sim.discover.genome import Laws

CROSSOVER = 0.3  # the share of children crossed from two elites


class DeckEmitter(EmitterBase):
    """Asks for ``batch_size`` legal decks (copies per card id, as float rows of the
    archive's solutions); the archive itself decides which enter (``tell`` has nothing to
    adapt)."""

    def __init__(self, archive, laws: Laws, seeds: list[np.ndarray], batch_size: int,
                 seed: int):
        super().__init__(archive, solution_dim=laws.n_cards, bounds=None,
                         lower_bounds=None, upper_bounds=None)
        self.laws = laws
        self.seeds = [laws.repair(np.asarray(s, dtype=np.int64), np.random.default_rng(seed))
                      for s in seeds]
        self.batch_size = batch_size
        self.rng = np.random.default_rng(seed)

    def ask(self) -> np.ndarray:
        laws, rng = self.laws, self.rng
        if self.archive.empty:
            kids = list(self.seeds)
            while len(kids) < self.batch_size:
                if rng.random() < 0.75 and self.seeds:
                    kids.append(laws.child(self.seeds[rng.integers(len(self.seeds))], None,
                                           rng))
                else:
                    kids.append(laws.random_deck(rng))
            kids = kids[: self.batch_size]
        else:
            parents = self.archive.sample_elites(self.batch_size)["solution"]
            others = self.archive.sample_elites(self.batch_size)["solution"]
            kids = []
            for a, b in zip(parents, others, strict=True):
                mate = b if rng.random() < CROSSOVER else None
                kids.append(laws.child(np.rint(a).astype(np.int64),
                                       None if mate is None else np.rint(mate).astype(np.int64),
                                       rng))
        for k in kids:
            laws.check(k)  # no illegal deck is ever played
        return np.stack(kids).astype(np.float64)

    def tell(self, solution, objective, measures, add_info, **fields) -> None:
        """Nothing to adapt: the archive keeps what the children earned."""
