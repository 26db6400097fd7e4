"""``rnr-sim discover``: MAP-Elites over the Article V-legal decks of a card pool.

The archive (pyribs' ``GridArchive``) has one cell per (main path, speed): the victory
path that gives a deck most of its wins, and the mean turn of those wins (the game's turns,
all seats counted, in bins of ``SPEED_STEP``). Its elite is the strongest deck found of
that kind: "the strongest Petition deck", "the fastest Life deck".

One generation: ``DeckEmitter`` asks for a batch of children of the archive's elites (the
field's decks, mutated, seed the empty archive); each child is played against the field by
the evaluation service on common deals (every child, every generation, meets the same
deals), and raced:

1. stage 1: every built-in pilot (but ``random``) plays the child on the first
   ``stages[0]`` deals of each field deck; the best of them is the child's pilot
   (measurement, not a rule of thumb);
2. stages 2 and 3: the child with its pilot on fresh deals, ``stages[1]`` then
   ``stages[2]`` more a field deck. After each stage a child whose 95% upper bound is
   below the share of its cell's elite stops: it would not enter the archive.

A child's objective is its share over the deals it played (the field weighted by
``field_weights``: equal, or a metagame mix), its measures come from its wins. The
search's scores are biased upward by selection (the winner's curse), so ``heldout``
re-measures every elite, and the field's own decks beside them, on deals of a seed the
search never used.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rnr_sim import enums
from rnr_sim.analytics.stats import Z95
from rnr_sim.engine.policies import POLICY_NAMES
from rnr_sim.evaluation import Evaluator, Matchups, Outcome, Pool

#: The pilots a child is tried with at stage 1: every built-in but the random one.
PILOTS = tuple(p for p in POLICY_NAMES if p != "random")
#: The victory paths that name a cell's row (``enums.PATHS`` without "draw").
CELL_PATHS = tuple(p for p in enums.PATHS if p != "draw")
#: Speed: the mean turn of a deck's wins, in bins of SPEED_STEP turns from SPEED_MIN (the
#: sample decks' wins fall between turns 10 and 29 in 90% of games; outside, the edge bins).
SPEED_MIN, SPEED_STEP, SPEED_BINS = 8.0, 3.0, 8
SEARCH_SEED_OFFSET = 0
HOLDOUT_SEED_OFFSET = 1_000_003  # the held-out deals: a seed the search never plays
MATRIX_SEED_OFFSET = 2_000_003


@dataclass(frozen=True)
class Cells:
    """The archive's two measures (``--cells``): what a deck's cell says about it.

    - ``path-speed`` (default): the victory path that gives the deck most of its wins
      (rows ``CELL_PATHS``) and the mean turn of its wins (columns: ``SPEED_BINS`` bins
      of ``SPEED_STEP`` turns from ``SPEED_MIN``); measured from the deck's games.
    - ``branch``: the deck's main Branch (most cards, UAs included; rows
      ``enums.BRANCHES``) and the share of its cards in that Branch (columns: bins of
      0.125 from 0.25, one Branch in four, to 1); read off the list itself, so a swap
      between two cards of one Branch never moves a deck to another cell.
    """

    name: str
    rows: tuple[str, ...]
    col_lo: float
    col_step: float
    cols: int
    col_unit: str

    @property
    def dims(self) -> list[int]:
        return [len(self.rows), self.cols]

    @property
    def ranges(self) -> list[tuple[float, float]]:
        return [(-0.5, len(self.rows) - 0.5),
                (self.col_lo, self.col_lo + self.col_step * self.cols)]

    def col_edges(self) -> np.ndarray:
        return self.col_lo + self.col_step * np.arange(self.cols + 1)

    def label(self, row: int, col: int) -> str:
        lo = self.col_lo + self.col_step * col
        hi = lo + self.col_step
        if self.name == "branch":
            return f"{self.rows[row].replace('_', ' ')}, {100 * lo:.0f}-{100 * hi:.0f}% of cards"
        return f"{self.rows[row].replace('_', '-')}, wins at turn {lo:.0f}-{hi:.0f}"

    def measures(self, counts: np.ndarray, scored: list[Scored], laws) -> np.ndarray:
        """float64[k, 2] of each deck (``counts[k]``) with its race's ``scored[k]``."""
        if self.name == "branch":
            by = np.stack([np.bincount(laws.branch_of, weights=c,
                                       minlength=len(enums.BRANCHES)) for c in counts])
            main = np.argmax(by, axis=1)
            return np.stack([main, by[np.arange(len(by)), main] / by.sum(axis=1)], axis=1)
        return np.stack([s.measures for s in scored])


CELLS = {
    "path-speed": Cells("path-speed", CELL_PATHS, SPEED_MIN, SPEED_STEP, SPEED_BINS, "turn"),
    "branch": Cells("branch", enums.BRANCHES, 0.25, 0.125, 6, "share"),
}


def stage_deals(budget: int) -> tuple[int, int, int]:
    """Deals per field deck of the three racing stages: 4, 16, 64 below 2 million games of
    search, 8, 32, 128 from there on (a larger budget affords a finer final estimate)."""
    return (4, 16, 64) if budget < 2_000_000 else (8, 32, 128)


@dataclass
class Scored:
    """What the race measured of one child."""

    pilot: int  # index in PILOTS
    share: float
    se: float
    games: int
    deals: int  # per field deck
    path_share: np.ndarray  # float64[4]: its wins by CELL_PATHS
    win_turn: float  # mean turns of its wins (nan: none)
    stopped_at: int  # the stage it stopped after (3: ran them all)

    @property
    def measures(self) -> np.ndarray:
        path = int(np.argmax(self.path_share)) if self.path_share.sum() > 0 else 0
        turn = self.win_turn if math.isfinite(self.win_turn) else SPEED_MIN + SPEED_STEP * SPEED_BINS
        return np.array([path, turn], dtype=np.float64)


@dataclass
class Racing:
    """The games a generation played against what a flat schedule would have played (each
    child's every pilot for stage 1, its pilot for every stage): the racing saving."""

    played: int = 0
    flat: int = 0
    stopped: list[int] = field(default_factory=lambda: [0, 0, 0])

    @property
    def saved(self) -> float:
        return 1.0 - self.played / self.flat if self.flat else 0.0


class Field:
    """The field the decks are measured against: engine decks ``0..n-1`` of every pool, each
    with its pilot row, table ``j`` for field deck ``j`` (so each deal's shuffles are shared
    by every candidate), and the weight of each in the objective (equal by default)."""

    def __init__(self, card_ids: list[np.ndarray], policy_rows: np.ndarray,
                 weights: np.ndarray | None = None):
        self.card_ids = card_ids
        self.policy_rows = np.asarray(policy_rows, dtype=np.int32)
        n = len(card_ids)
        self.weights = (np.full(n, 1.0 / n) if weights is None
                        else np.asarray(weights, dtype=np.float64) / np.sum(weights))

    def __len__(self) -> int:
        return len(self.card_ids)

    def matchups(self, subject_deck, subject_policy, first_deal: int, deals: int) -> Matchups:
        n = len(self)
        return Matchups(subject_deck, subject_policy, np.arange(n), self.policy_rows,
                        np.arange(n, dtype=np.int64), first_deal, deals)


def race(ev: Evaluator, pool: Pool, fld: Field, children: list[np.ndarray],
         threshold: Callable[[np.ndarray, list[Scored]], np.ndarray],
         stages: tuple[int, int, int], seed: int, key: str, racing: Racing
         ) -> list[Scored] | None:
    """Score ``children`` (copies per card) against ``fld`` with racing (module
    docstring). ``threshold(children, scored) -> float64[k]``: the share of the elite of
    each child's cell (-inf where empty), for the children of index ``children`` as
    ``scored`` so far. None once Ctrl-C stopped a call."""
    n_field, n_child, n_pilot = len(fld), len(children), len(PILOTS)
    ids = [np.repeat(np.arange(len(c), dtype=np.int32), c) for c in children]
    pool = pool.with_decks(fld.card_ids + ids)
    child_deck = n_field + np.arange(n_child)
    pilot_row = np.array([POLICY_NAMES.index(p) for p in PILOTS], dtype=np.int32)
    w = fld.weights
    # Stage 1: every pilot of every child on the first deals.
    games = fld.matchups(np.repeat(child_deck, n_pilot), np.tile(pilot_row, n_child),
                         0, stages[0])
    out = ev.play(pool, games, seed, key=f"{key}-s1")
    if out is None:
        return None
    racing.played += games.games
    racing.flat += games.games + n_child * n_field * 2 * (stages[1] + stages[2])
    share = out.share(w).reshape(n_child, n_pilot)
    best = np.argmax(share, axis=1)  # ties: the first pilot of PILOTS
    pick = np.arange(n_child) * n_pilot + best
    parts = [_slice(out, pick)]
    alive = np.arange(n_child)
    result: list[Scored | None] = [None] * n_child
    first = stages[0]
    for stage in (1, 2, 3):
        scored = [_score(_join([p[k] for p in parts]), w, int(best[c]), stage)
                  for k, c in enumerate(alive)]
        if stage == 3:
            go = np.zeros(len(alive), dtype=bool)
        else:
            bar = threshold(alive, scored)
            go = np.array([s.share + Z95 * s.se >= b for s, b in zip(scored, bar,
                                                                     strict=True)])
            racing.stopped[stage - 1] += int((~go).sum())
        for k in np.flatnonzero(~go):
            result[int(alive[k])] = scored[k]
        if not go.any():
            break
        alive = alive[go]
        parts = [[p[k] for k in np.flatnonzero(go)] for p in parts]
        games = fld.matchups(child_deck[alive], pilot_row[best[alive]], first, stages[stage])
        out = ev.play(pool, games, seed, key=f"{key}-s{stage + 1}")
        if out is None:
            return None
        racing.played += games.games
        parts.append(_slice(out, np.arange(len(alive))))
        first += stages[stage]
    return result  # type: ignore[return-value]


def _slice(out: Outcome, rows: np.ndarray) -> list[Outcome]:
    return [Outcome(out.score[r], out.path[r], out.turns[r]) for r in rows]


def _join(parts: list[Outcome]) -> Outcome:
    """One subject's games of several calls, deals concatenated (axis 1 of ``[field,
    deal, seat order]``)."""
    return Outcome(np.concatenate([p.score for p in parts], axis=1),
                   np.concatenate([p.path for p in parts], axis=1),
                   np.concatenate([p.turns for p in parts], axis=1))


def _score(o: Outcome, w: np.ndarray, pilot: int, stage: int) -> Scored:
    """A child's share of ``o`` (field weighted by ``w``) and its standard error, the deal
    (one field deck, both seat orders) as the unit, the field decks as strata."""
    per_deal = o.score.mean(axis=2)  # [field, deal]
    d = per_deal.shape[1]
    by_field = per_deal.mean(axis=1)
    share = float(by_field @ w)
    var = (per_deal.var(axis=1, ddof=1) / d) if d > 1 else np.full(len(w), 0.25)
    se = float(math.sqrt(max(float((w * w) @ var), 1e-12)))
    won = o.score == 1.0
    paths = np.bincount(o.path[won].ravel().astype(np.int64), minlength=len(enums.PATHS))
    wins = int(won.sum())
    path_share = paths[: len(CELL_PATHS)] / wins if wins else np.zeros(len(CELL_PATHS))
    win_turn = float(o.turns[won].mean()) if wins else float("nan")
    return Scored(pilot, share, se, int(o.score.size), d, path_share.astype(np.float64),
                  win_turn, stage)
