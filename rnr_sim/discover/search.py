"""``rnr-sim discover``: MAP-Elites over the Article V-legal decks of a card pool.

The archive (pyribs' ``GridArchive``) has one cell per (main path, speed): the victory
path that gives a deck most of its wins, and the mean turn of those wins (the game's turns,
all seats counted, in bins of ``SPEED_STEP``). Its elite is the strongest deck found of
that kind: "the strongest Petition deck", "the fastest Life deck".

One generation: ``DeckEmitter`` asks for a batch of children of the archive's elites (the
field's decks, mutated, seed the empty archive), most of them the block swaps the search
has learned to expect most of (``proposals.py``); each child is played against the field
by the evaluation service on common deals (every child, every generation, meets the same
deals, and its slots follow its parent's: ``genome.align``), and raced (``race``):

1. stage 1: the child with each pilot it tries (its parent's, for a learned swap; every
   built-in but ``random`` otherwise) on the first ``stages[0]`` deals of each field deck;
   the best of them is the child's pilot (measurement, not a rule of thumb);
2. the later stages (``stage_deals``): the child with its pilot on the next deals. After
   each stage a child whose cell holds an elite is compared, deal by deal, with its parent
   and with that elite on the deals all three played (paired: ``stats.paired_gain``), and
   stops once it lies ``GATE_Z`` standard errors below either; before the last, longest
   stage it stops whenever it is behind either. A child into an empty cell plays on.
3. The children that played every stage are offered to the archive: they and every elite
   are measured on the same deals, so the archive's comparison of shares is paired. Every
   child with a parent tells the ``SwapModel`` what its swap did (its paired gain).

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
from rnr_sim.analytics.stats import Z95, paired_gain
from rnr_sim.discover.emitter import Child
from rnr_sim.engine.policies import POLICY_NAMES
from rnr_sim.runs.evaluation import Evaluator, Matchups, Outcome, Pool

#: The pilots a child is tried with at stage 1: every built-in but the random one.
PILOTS = tuple(p for p in POLICY_NAMES if p != "random")
#: The victory paths that name a cell's row (``enums.PATHS`` without "draw").
CELL_PATHS = tuple(p for p in enums.PATHS if p != "draw")
#: Speed: the mean turn of a deck's wins, in bins of SPEED_STEP turns from SPEED_MIN (the
#: sample decks' wins fall between turns 10 and 29 in 90% of games; outside, the edge bins).
SPEED_MIN, SPEED_STEP, SPEED_BINS = 8.0, 3.0, 8
SEARCH_SEED_OFFSET = 0
#: The racing's gates: after stage s a child stops when it lies GATE_Z[s - 1] standard
#: errors below its parent or its cell's elite (paired), and before the last and longest
#: stage whenever it is behind either (it would not enter the archive: the same deals).
GATE_Z = (Z95, Z95, 1.0)
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


def stage_deals(budget: int) -> tuple[int, ...]:
    """Deals per field deck of the racing stages: 4, 4, 8, 16, 24 (56 in all) below 2
    million games of search, twice as many from there on (a larger budget affords a finer
    final estimate). Short early stages stop the children clearly below their parent
    after few deals; the last is as long as the four before it."""
    base = (4, 4, 8, 16, 24)
    return base if budget < 2_000_000 else tuple(2 * d for d in base)


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
    stopped_at: int  # the stage it stopped after (len(stages): ran them all)
    per_deal: np.ndarray  # float64[field, deals]: its share of each deal, seats averaged

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
    stopped: list[int] = field(default_factory=list)  # children stopped after each stage

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


def race(ev: Evaluator, pool: Pool, fld: Field, kids: list[Child],
         cell_elite: Callable[[np.ndarray, list[Scored]], list[np.ndarray | None]],
         stages: tuple[int, ...], seed: int, key: str, racing: Racing
         ) -> list[Scored] | None:
    """Score ``kids`` against ``fld`` with paired racing (module docstring).
    ``cell_elite(which, scored)``: the per-deal shares of the elite of each child's cell
    (None where empty), for the children of index ``which`` as ``scored`` so far. None once
    Ctrl-C stopped a call."""
    n_field, n_child = len(fld), len(kids)
    pool = pool.with_decks(fld.card_ids + [k.slots for k in kids])
    child_deck = n_field + np.arange(n_child)
    pilot_row = np.array([POLICY_NAMES.index(p) for p in PILOTS], dtype=np.int32)
    w = fld.weights
    # Stage 1: each child with each pilot it tries, on the first deals.
    pair_child = np.array([c for c, k in enumerate(kids) for _ in k.pilots], dtype=np.int64)
    pair_pilot = np.array([p for k in kids for p in k.pilots], dtype=np.int64)
    games = fld.matchups(child_deck[pair_child], pilot_row[pair_pilot], 0, stages[0])
    out = ev.play(pool, games, seed, key=f"{key}-s1")
    if out is None:
        return None
    racing.played += games.games
    racing.flat += n_child * (len(PILOTS) * stages[0] + sum(stages[1:])) * n_field * 2
    if not racing.stopped:
        racing.stopped = [0] * (len(stages) - 1)
    share = out.share(w)
    best = np.empty(n_child, dtype=np.int64)  # the row of each child's best pilot
    for c in range(n_child):
        rows = np.flatnonzero(pair_child == c)
        best[c] = rows[np.argmax(share[rows])]  # ties: the first pilot it tries
    parts = [_slice(out, best)]
    pilot = pair_pilot[best]
    alive = np.arange(n_child)
    result: list[Scored | None] = [None] * n_child
    first = stages[0]
    for stage in range(1, len(stages) + 1):
        scored = [_score(_join([p[k] for p in parts]), w, int(pilot[c]), stage)
                  for k, c in enumerate(alive)]
        if stage == len(stages):
            go = np.zeros(len(alive), dtype=bool)
        else:
            elites = cell_elite(alive, scored)
            z = GATE_Z[stage - 1] if stage < len(stages) - 1 else 0.0
            go = np.array([_goes_on(s, kids[c].parent_deals, e, w, z)
                           for s, c, e in zip(scored, alive, elites, strict=True)])
            racing.stopped[stage - 1] += int((~go).sum())
        for k in np.flatnonzero(~go):
            result[int(alive[k])] = scored[k]
        if not go.any():
            break
        alive = alive[go]
        parts = [[p[k] for k in np.flatnonzero(go)] for p in parts]
        games = fld.matchups(child_deck[alive], pilot_row[pilot[alive]], first, stages[stage])
        out = ev.play(pool, games, seed, key=f"{key}-s{stage + 1}")
        if out is None:
            return None
        racing.played += games.games
        parts.append(_slice(out, np.arange(len(alive))))
        first += stages[stage]
    return result  # type: ignore[return-value]


def _goes_on(s: Scored, parent: np.ndarray | None, elite: np.ndarray | None,
             w: np.ndarray, z: float) -> bool:
    """Whether a child plays the next stage: always into an empty cell; else unless it lies
    ``z`` standard errors or more below its cell's elite or its parent on the deals both
    played (paired: ``stats.paired_gain``)."""
    if elite is None:
        return True
    for ref in (elite, parent):
        if ref is not None:
            gain, se = paired_gain(s.per_deal - ref[:, : s.deals], w)
            if gain + z * se < 0:
                return False
    return True


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
                  win_turn, stage, per_deal)
