"""Proposals that learn: what a copy of each card has done to the decks it was tried in,
and block swaps drawn from that estimate.

Every child the search plays is paired with its parent on the same deals, so each child
is one observation: the swap it made (``delta``, copies per card, child minus parent) and
the paired change in share it caused (``gain`` with its standard error). ``SwapModel`` fits
a share per copy of each card to those observations by ridge regression (a linear
surrogate of the deck's share, weighted by each gain's precision), on two levels:

- one over every deck, shrunk toward 0 (prior ``PRIOR_SD`` per copy): what a card does
  in general;
- one for each kind of deck (the parent's cell row: its main path, or its Branch with
  ``--cells branch``), shrunk toward the first (``KIND_SD``): what it does in that kind.

``propose`` asks for a posterior draw of a kind's estimates (Thompson sampling: a card
never tried keeps its prior's spread, so it is tried in turn, and a card tried often is
judged by what it did) and makes the swap that draw values most within one Order, among a
random half of its cards: every copy of a card of the deck (at most a full set,
``swaps.FULL_SET``) out, as many copies of another card in, within Art. V
(``Laws.legal``). A swap across Orders moves a deck's count of Pillars,
Rights or Attacks by a block at a time. The estimates are reported beside the archive
(``estimates``, ``learned.parquet``).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from rnr_sim import enums
from rnr_sim.power.swaps import FULL_SET

#: Prior spread of a card's share per copy, over every deck: a full set of a strong card
#: moves a deck by a few points (a plainly useless Attack's set, 3.6 points).
PRIOR_SD = 0.01
#: Prior spread of a kind of deck's departure from the general estimate.
KIND_SD = 0.005
#: Smallest spread of a swap's paired difference from deal to deal an observation is
#: credited with: over a few deals a swap that changed no game's outcome shows no spread at
#: all, and its gain of 0 would count as certain. A swap of a full set changes the result of
#: about one deal in ten by half a game or more (a spread of 0.15 or more).
MIN_SPREAD = 0.15
#: Pairs of the best draw tried, in order, for a legal swap.
TRIES = 40
#: The share of swaps whose card going out is of another Order than the card coming in.
ACROSS = 0.25
#: The share of an Order's cards a proposal may bring in (drawn afresh each time).
CANDIDATES = 0.5
UA_TYPE = enums.CARD_TYPES.index("ua")


class SwapModel:
    """Ridge estimates of each card's share per copy, overall and by kind of deck (module
    docstring); observations come in with ``observe``, draws go out with ``draw``."""

    def __init__(self, n_cards: int, kinds: int):
        self.n, self.kinds = n_cards, kinds
        self.xtx = np.zeros((n_cards, n_cards))  # sum of delta delta^T / se^2, every deck
        self.xty = np.zeros(n_cards)
        self.kind_xtx = np.zeros((kinds, n_cards, n_cards))
        self.kind_xty = np.zeros((kinds, n_cards))
        self.seen = np.zeros(n_cards, dtype=np.int64)  # observations naming each card
        self.observed = 0
        self._fit: dict | None = None

    def observe(self, delta: np.ndarray, kind: int, gain: float, se: float, n: int) -> None:
        """One child: its copies minus its parent's, its parent's kind, its paired gain
        with its standard error over ``n`` paired deals (field decks times deals), the
        error at least ``MIN_SPREAD / sqrt(n)``."""
        nz = np.flatnonzero(delta)
        if not len(nz) or not np.isfinite(gain):
            return
        d = delta[nz].astype(np.float64)
        w = 1.0 / max(se, MIN_SPREAD / np.sqrt(n)) ** 2
        block = np.ix_(nz, nz)
        self.xtx[block] += w * np.outer(d, d)
        self.xty[nz] += w * d * gain
        if 0 <= kind < self.kinds:
            self.kind_xtx[kind][block] += w * np.outer(d, d)
            self.kind_xty[kind, nz] += w * d * gain
        self.seen[nz] += 1
        self.observed += 1
        self._fit = None

    def _solve(self) -> dict:
        """Posterior means and Cholesky factors of the precisions, cached until the next
        observation."""
        if self._fit is not None:
            return self._fit
        eye = np.eye(self.n)
        a = self.xtx + eye / PRIOR_SD**2
        la = np.linalg.cholesky(a)
        mean = _cho_solve(la, self.xty)
        kinds = []
        for k in range(self.kinds):
            ak = self.kind_xtx[k] + eye / KIND_SD**2
            lk = np.linalg.cholesky(ak)
            # The kind's fit of what the general estimate leaves unexplained.
            resid = self.kind_xty[k] - self.kind_xtx[k] @ mean
            kinds.append((mean + _cho_solve(lk, resid), lk))
        self._fit = {"mean": mean, "chol": la, "kinds": kinds}
        return self._fit

    def estimates(self, kind: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(mean, sd) of each card's share per copy: overall, or in a kind of deck."""
        fit = self._solve()
        sd = np.sqrt(np.diag(_inverse(fit["chol"])))
        if kind is None:
            return fit["mean"], sd
        mean, lk = fit["kinds"][kind]
        return mean, np.sqrt(sd**2 + np.diag(_inverse(lk)))

    def draw(self, kind: int, rng: np.random.Generator) -> np.ndarray:
        """A posterior draw of the shares per copy in ``kind`` (the overall one for -1)."""
        fit = self._solve()
        z = rng.standard_normal(self.n)
        theta = fit["mean"] + solve_triangular(fit["chol"].T, z, lower=False)
        if 0 <= kind < self.kinds:
            mean, lk = fit["kinds"][kind]
            z2 = rng.standard_normal(self.n)
            theta = theta - fit["mean"] + mean + solve_triangular(lk.T, z2, lower=False)
        return theta


def _cho_solve(low: np.ndarray, b: np.ndarray) -> np.ndarray:
    y = solve_triangular(low, b, lower=True)
    return solve_triangular(low.T, y, lower=False)


def _inverse(low: np.ndarray) -> np.ndarray:
    inv_low = solve_triangular(low, np.eye(len(low)), lower=True)
    return inv_low.T @ inv_low


def propose(laws, counts: np.ndarray, theta: np.ndarray, rng: np.random.Generator
            ) -> np.ndarray | None:
    """The block swap ``theta`` (shares per copy) values most, within one Order and among
    a random half of its cards (module docstring):

    - the Order of the card coming in is drawn half the time in proportion to the deck's
      copies of each Order (a deck of 20 Pillars asks about Pillars more often), half the
      time uniformly among the Orders (a deck of few Attacks still tries them); the card going
      out is of the same Order, or ``ACROSS`` of the time of another, which moves the
      deck's count of Pillars, Rights or Attacks by a block;
    - the cards that may come in are a random half of the Order's (``CANDIDATES``), so the
      single best card does not take every proposal of its Order: the second best gets its
      turn in a deck without it, as a player tries more than one idea;
    - all copies of a card of the deck (at most ``FULL_SET``) go out, as many of the other
      card come in as take it to a full set at most (its copy limit, if lower): the model is
      linear in copies, and once the best card of an Order is in at a full set the next
      best is the better question (a Pillar or Rights card still goes past four by the
      explored children's moves, R4); a UA only for a UA (Art. IV §3); within Art. V
      (``Laws.legal``).

    None when no swap is legal."""
    c = np.asarray(counts, dtype=np.int64)
    held = np.flatnonzero(c > 0)
    ua = laws.of_type("ua")
    types = laws.type_of
    by_order = np.bincount(types, weights=c, minlength=len(enums.CARD_TYPES))
    p = 0.5 * by_order / by_order.sum() + 0.5 / len(by_order)
    t_in = int(rng.choice(len(by_order), p=p))
    out_ok = types[held] == t_in
    if t_in != UA_TYPE and rng.random() < ACROSS:
        out_ok = (types[held] != t_in) & ~ua[held]
    in_ok = (types == t_in) & (rng.random(len(types)) < CANDIDATES)
    block = np.minimum(c[held], FULL_SET)[:, None]
    room = np.maximum(np.minimum(laws.cap, FULL_SET) - c, 0)[None, :]
    k = np.minimum(block, room)
    gain = k * (theta[None, :] - theta[held][:, None])
    ok = (k > 0) & out_ok[:, None] & in_ok[None, :]
    ok[np.arange(len(held)), held] = False
    gain = np.where(ok, gain, -np.inf)
    order = np.argsort(-gain, axis=None, kind="stable")[:TRIES]
    for flat in order:
        if not np.isfinite(gain.flat[flat]):
            break
        i, y = np.unravel_index(flat, gain.shape)
        x, n = held[i], int(k[i, y])
        child = c.copy()
        child[x] -= n
        child[y] += n
        if laws.legal(child):
            return child
    return None
