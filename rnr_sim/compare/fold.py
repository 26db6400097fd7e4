"""Two runs of the same games, folded part by part into paired moments (``fold``).

The paired analysis (``compare.paired``) needs, for every metric, sums and second
moments of per-unit counts of both runs; this module reads the two runs and keeps only
those, in memory that does not grow with the games:

- **Unit and strata.** The unit is a table's deal: every seat order of one deal of one
  table (``(table_id, deal)``). Units are independent (each game's streams come from
  (seed, table, deal, seat order)); the tables are strata, as in the report's intervals
  (``analytics.stats.ratio_by_deal``): a deck doing better against one opponent than
  another is design, not noise.
- **Blocks.** Counts are grouped in *blocks* of a few features that the metrics of one
  subject read together (a deck: its seats, wins and wins by path in both runs; a card:
  seen, played and held with their wins; ...). Blocks of one shape form a ``Family``.
- **Moments.** Per block: the feature sums ``S`` and the within-table sums of squares and
  cross-products ``W = Σ_h c_h (Q_h - S_h S_hᵀ / D_h)`` (``Q_h`` the raw cross-products of
  table h's units, ``D_h`` its units, ``c_h = D_h / (D_h - 1)``; a table of one unit is
  left uncentred, ``c_h = 1``). Any linearised metric's variance is a quadratic form in
  ``W`` (``paired.Estimate``).
- **Discordant units.** Per block and metric, the number of units whose counts differ
  between the runs, and the counts of the first ``FEW_DEALS`` of them: the score interval
  of a change that moved few units needs nothing more.

Parts are read one pair at a time (``read_part``, the only reader of seat and game
rows), checked to hold the same games, and cut into slices of whole units; a unit cut
between two parts waits for the next part. A run dir lists its games table by table
(``game_id = (table × deals + deal) × players + seat order``), so a table's moments are
complete when the next table starts and are folded into ``W`` then. What stays in
memory is the families' moments (about 30 KB a card, deck or path, whatever the number
of games) and one part of each run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations, permutations
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim.analytics.card_kernels import deal_count_vectors
from rnr_sim.analytics.cards import card_masks
from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.analytics.parts import read_part
from rnr_sim.errors import InputError

#: Below this many units that differ between the runs, intervals are score intervals.
FEW_DEALS = 40
#: The subjects of the seat metrics: all games, and split by the P2 right's use.
SEAT_SUBJECTS = ("all games", "P2 right used", "P2 right declined")

GAME_COLUMNS = ["game_id", "table_id", "deal", "first_seat", "winner_seat", "path"]
SEAT_COLUMNS = ["game_id", "seat", "deck", "won", "p2_right", "opening_mask", "drawn_mask",
                "played_mask"]


# ---------------------------------------------------------------------------- reading


def read_manifest(run_dir: Path) -> tuple[dict[str, Any], dict[str, list[Path]]]:
    """A run dir's manifest and its checked parts (a missing, extra or broken part: one
    line, exit 2)."""
    from rnr_sim.analytics.run import check_parts
    from rnr_sim.runs.manifests import read_manifest as read

    manifest = read(run_dir)
    return manifest, check_parts(run_dir, manifest)


def read_decks(run_dir: Path) -> pl.DataFrame:
    try:
        return pl.read_parquet(run_dir / "decks.parquet")
    except OSError as e:
        raise InputError(f"{run_dir}: cannot read decks.parquet ({e})") from None


def part_pairs(vdir: Path, parts_b: dict[str, list[Path]], parts_v: dict[str, list[Path]],
               where: str) -> Iterator[tuple[pl.DataFrame, ...]]:
    """(games_b, seats_b, games_v, seats_v) part by part: the variant's part of the same
    name when both runs were cut alike (``compare`` cuts them alike), else the variant's
    games in the baseline part's game_id range."""
    same_cut = [p.name for p in parts_b["games"]] == [p.name for p in parts_v["games"]]
    seen_v = 0
    for gb_path, sb_path in zip(parts_b["games"], parts_b["seats"], strict=True):
        games_b = read_part(gb_path, GAME_COLUMNS)
        seats_b = read_part(sb_path, SEAT_COLUMNS)
        if same_cut:
            games_v = read_part(vdir / "games" / gb_path.name, GAME_COLUMNS)
            seats_v = read_part(vdir / "seats" / sb_path.name, SEAT_COLUMNS)
        else:
            lo, hi = games_b["game_id"].min(), games_b["game_id"].max()
            inside = pl.col("game_id").is_between(lo, hi) if lo is not None else pl.lit(False)
            games_v = pl.scan_parquet(parts_v["games"]).select(GAME_COLUMNS).filter(
                inside).collect().sort("game_id")
            seats_v = pl.scan_parquet(parts_v["seats"]).select(SEAT_COLUMNS).filter(
                inside).collect().sort("game_id", "seat")
        seen_v += games_v.height
        yield games_b, seats_b, games_v, seats_v
        del games_b, seats_b, games_v, seats_v  # one pair of parts alive at a time
    if not same_cut:
        total_v = sum(pl.scan_parquet(p).select(pl.len()).collect().item()
                      for p in parts_v["games"])
        if total_v != seen_v:
            raise InputError(f"{where}: the two runs did not play the same games ('game_id' "
                             "differs): a paired comparison needs the same tables, deals, "
                             "seat orders and seed")


def check_same_games(games_b: pl.DataFrame, games_v: pl.DataFrame, deck_b: np.ndarray,
                     deck_v: np.ndarray, where: str) -> None:
    for c in ("game_id", "table_id", "deal", "first_seat"):
        if not games_b[c].equals(games_v[c]):
            raise InputError(f"{where}: the two runs did not play the same games ('{c}' "
                             "differs): a paired comparison needs the same tables, deals, "
                             "seat orders and seed")
    if not np.array_equal(deck_b, deck_v):
        raise InputError(f"{where}: the two runs seat different decks in the same games")


def check_same_decks(decks_b: pl.DataFrame, decks_v: pl.DataFrame, where: str,
                     may_differ: frozenset[str] = frozenset()) -> set[str]:
    """Refuse runs whose deck lists differ, but for the decks in ``may_differ`` (the deck
    ``compare --deck-b`` replaced); returns those of them that do differ."""
    keys = ["deck", "slot", "card"]
    kept = ~pl.col("deck").is_in(list(may_differ))
    if not decks_b.filter(kept).sort(keys).equals(decks_v.filter(kept).sort(keys)):
        raise InputError(f"{where}: the two runs' deck lists differ")
    return {d for d in may_differ
            if not decks_b.filter(pl.col("deck") == d).sort(keys).equals(
                decks_v.filter(pl.col("deck") == d).sort(keys))}


# ---------------------------------------------------------------------------- moments


@dataclass
class Family:
    """``nb`` blocks of ``m`` features, with their moments (see the module docstring) and,
    per block and *template* (a metric's columns of ``templates``: coefficient vectors
    whose dot product with a unit's features is not 0 exactly when the metric's counts
    differ between the runs in that unit), the units that differ (``differ``) and the
    features of the first ``FEW_DEALS`` of them (``stash[block, template]``)."""

    nb: int
    m: int
    templates: list[np.ndarray]  # each (m, k)
    S: np.ndarray = field(init=False)
    W: np.ndarray = field(init=False)
    differ: np.ndarray = field(init=False)
    stash: dict[tuple[int, int], list[np.ndarray]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        nb, m = self.nb, self.m
        self.S, self.W = np.zeros((nb, m)), np.zeros((nb, m, m))
        self._sh, self._qh = np.zeros((nb, m)), np.zeros((nb, m, m))
        self._dirty = np.zeros(nb, dtype=bool)
        self.differ = np.zeros((nb, len(self.templates)), dtype=np.int64)
        self._t_all = np.concatenate(self.templates, axis=1)  # every template's columns
        edges = np.cumsum([0] + [t.shape[1] for t in self.templates])
        self._t_group = np.zeros((edges[-1], len(self.templates)))  # [column, template]
        for e, (k0, k1) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
            self._t_group[k0:k1, e] = 1.0

    def add(self, blocks: np.ndarray, x: np.ndarray, cols: np.ndarray | None = None) -> None:
        """Units of the table under way: ``x[j, unit, :]`` the features ``cols`` (all
        when None) of block ``blocks[j]``; features not in ``cols`` are 0."""
        if not len(blocks):
            return
        x = np.ascontiguousarray(x, dtype=np.float64)  # [block, unit, feature]
        nb, u, mc = x.shape
        q = np.matmul(x.transpose(0, 2, 1), x)  # [block, feature, feature]
        if cols is None:
            self._sh[blocks] += x.sum(axis=1)
            self._qh[blocks] += q
        else:
            self._sh[np.ix_(blocks, cols)] += x.sum(axis=1)
            self._qh[np.ix_(blocks, cols, cols)] += q
        self._dirty[blocks] = True
        t_all = self._t_all if cols is None else self._t_all[cols]
        # [block, unit, template]: the unit's counts of the template's metric moved
        moved = (np.abs(x.reshape(nb * u, mc) @ t_all) @ self._t_group != 0).reshape(nb, u, -1)
        count = moved.sum(axis=1)  # [block, template]
        for j, e in zip(*np.nonzero((count > 0) & (self.differ[blocks] < FEW_DEALS)),
                        strict=True):
            b = int(blocks[j])
            keep = np.flatnonzero(moved[j, :, e])[: FEW_DEALS - self.differ[b, e]]
            rows = x[j, keep]  # a copy of the kept rows only
            if cols is not None:
                full = np.zeros((len(rows), self.m))
                full[:, cols] = rows
                rows = full
            self.stash.setdefault((b, int(e)), []).append(rows)
        self.differ[blocks] += count

    def end_table(self, units: int) -> None:
        """The table under way is complete with ``units`` units: fold its moments in."""
        b = np.flatnonzero(self._dirty)
        if not len(b):
            return
        sh, qh = self._sh[b], self._qh[b]
        if units >= 2:
            self.W[b] += units / (units - 1.0) * (qh - sh[:, :, None] * sh[:, None, :] / units)
        else:  # one unit: no spread of its own to centre on (analytics.stats)
            self.W[b] += qh
        self.S[b] += sh
        self._sh[b], self._qh[b] = 0.0, 0.0
        self._dirty[b] = False

    def stashed(self, block: int, template: int) -> np.ndarray:
        """The features of the differing units kept for ``block`` and ``template``."""
        rows = self.stash.get((block, template))
        return np.concatenate(rows) if rows else np.zeros((0, self.m))


def unit_vector(m: int, *terms: tuple[int, float] | int) -> np.ndarray:
    """An m-vector from feature indices (coefficient 1) or (index, coefficient) pairs."""
    v = np.zeros(m)
    for t in terms:
        i, c = (t, 1.0) if isinstance(t, int) else t
        v[i] += c
    return v


@dataclass(frozen=True)
class Ratio:
    """``Σ a / Σ b`` in both runs, each a coefficient vector over a block's features."""

    a_b: np.ndarray
    b_b: np.ndarray
    a_v: np.ndarray
    b_v: np.ndarray

    @classmethod
    def of(cls, m: int, a_b, b_b, a_v, b_v) -> Ratio:
        def vec(t):
            return unit_vector(m, *(t if isinstance(t, list) else [t]))
        return cls(vec(a_b), vec(b_b), vec(a_v), vec(b_v))

    def differs(self) -> np.ndarray:
        """(m, 2): a unit's counts differ between the runs iff one column's dot is not 0."""
        return np.stack([self.a_v - self.a_b, self.b_v - self.b_b], axis=1)


# Feature layouts (index of each feature in its block).
# games: games, decided (b, v), wins by path (b x 4, v x 4)
G_GAMES, G_DECIDED, G_SHARE = 0, 1, 3
# decks: seats, wins (b, v), wins by path (b x 4, v x 4)
D_HELD, D_WINS, D_PATH = 0, 1, 3
# cards: gih, gih wins, (the same for v), played, played wins (b, v), held, held wins (b, v)
C_GIH, C_PLAYED, C_HELD = 0, 4, 8
N_PATHS = len(WIN_PATHS)


def game_ratios() -> list[tuple[str, Ratio]]:
    m, n = 3 + 2 * N_PATHS, N_PATHS
    out = [(f"share_{p}", Ratio.of(m, G_SHARE + k, G_DECIDED, G_SHARE + n + k, G_DECIDED + 1))
           for k, p in enumerate(WIN_PATHS)]
    out.append(("draw_rate", Ratio.of(m, [G_GAMES, (G_DECIDED, -1.0)], G_GAMES,
                                      [G_GAMES, (G_DECIDED + 1, -1.0)], G_GAMES)))
    return out


def seat_ratios() -> list[tuple[str, Ratio]]:
    k = len(SEAT_SUBJECTS)  # n (b), w (b), n (v), w (v)
    return [(s, Ratio.of(4 * k, k + i, i, 3 * k + i, 2 * k + i))
            for i, s in enumerate(SEAT_SUBJECTS)]


def deck_ratios() -> list[tuple[str, Ratio]]:
    m, n = 3 + 2 * N_PATHS, N_PATHS
    out = [("win_rate", Ratio.of(m, D_WINS, D_HELD, D_WINS + 1, D_HELD))]
    out += [(f"share_{p}", Ratio.of(m, D_PATH + k, D_WINS, D_PATH + n + k, D_WINS + 1))
            for k, p in enumerate(WIN_PATHS)]
    return out


def card_ratios() -> dict[str, Ratio]:
    m = 11
    gih, gw, pl_, pw, held, hw = C_GIH, C_GIH + 1, C_PLAYED, C_PLAYED + 1, C_HELD, C_HELD + 1
    return {
        "gih_wr": Ratio.of(m, gw, gih, gw + 2, gih + 2),
        "played_wr": Ratio.of(m, pw, pl_, pw + 2, pl_ + 2),
        "play_rate": Ratio.of(m, pl_, held, pl_ + 2, held),
        "gns_wr": Ratio.of(m, [hw, (gw, -1.0)], [held, (gih, -1.0)],
                           [hw + 1, (gw + 2, -1.0)], [held, (gih + 2, -1.0)]),
    }


def path_ratios(n_decks: int) -> tuple[Ratio, list[Ratio]]:
    """The path's share of all wins, and each deck's share of its wins by the path, over a
    path block: (share b, decided b, share v, decided v), then per deck (wins by the path
    b, wins b, the same v)."""
    m = 4 + 4 * n_decks
    share = Ratio.of(m, 0, 1, 2, 3)
    decks = [Ratio.of(m, 4 + 4 * i, 5 + 4 * i, 6 + 4 * i, 7 + 4 * i) for i in range(n_decks)]
    return share, decks


def _templates(ratios: list[Ratio]) -> np.ndarray:
    return np.concatenate([r.differs() for r in ratios], axis=1)


# ---------------------------------------------------------------------------- the fold


class Fold:
    """Both runs folded in, one pair of parts at a time (``add``), then ``finish``.

    Families (``Family``) and their blocks:

    - ``games`` (1 block): games, games decided, wins by each path;
    - ``seats`` (1): per ``SEAT_SUBJECTS`` subject, games and first-seat wins;
    - ``decks`` (one per deck): its seats, wins, wins by each path;
    - ``paths`` (one per path): the path's wins and all wins, then every deck's wins by
      the path and wins (the deck-pool expectation reads them together);
    - ``meets`` (one per ordered pair of decks i, j): seats of i in games where j sits,
      and i's wins there;
    - ``cards`` (one per card of the decks): seats that saw it (opening hand or drawn) and
      their wins, seats that played it and their wins, seats of the decks that hold it and
      their wins.

    Each family's metrics are listed as ``Ratio`` templates in the order
    ``paired._estimates`` reads them.
    """

    #: Units folded at a time (a part is cut into slices of whole units).
    SLICE = 1024

    def __init__(self, decks: list[str], decks_table: pl.DataFrame, players: int,
                 without_cards: frozenset[str] = frozenset()):
        self.decks = decks
        self.index = {d: i for i, d in enumerate(decks)}
        self.players = players
        #: decks whose slots differ between the runs (compare --deck-b): no card figures
        self.without_cards = without_cards
        masks = card_masks(decks_table.filter(~pl.col("deck").is_in(list(without_cards))))
        self.cards = sorted(set(masks["card"].to_list()))
        card_index = {c: k for k, c in enumerate(self.cards)}
        nd, nc = len(decks), len(self.cards)
        #: per deck in ``decks`` order: (deck index, card indices, slot masks)
        self.deck_cards: list[tuple[int, np.ndarray, np.ndarray]] = []
        self.holds = np.zeros((nc, nd))  # [card, deck]: 1 where the deck holds the card
        for (deck,), cards in masks.partition_by("deck", as_dict=True,
                                                 maintain_order=True).items():
            if deck in self.index:
                ks = np.array([card_index[c] for c in cards["card"].to_list()], dtype=np.int64)
                self.deck_cards.append((self.index[deck], ks,
                                        cards["mask"].to_numpy().astype(np.uint64)))
                self.holds[ks, self.index[deck]] = 1.0
        cr = card_ratios()
        share, by_deck = path_ratios(nd)
        self.families = {
            "games": Family(1, 3 + 2 * N_PATHS, [r.differs() for _, r in game_ratios()]),
            "seats": Family(1, 4 * len(SEAT_SUBJECTS), [r.differs() for _, r in seat_ratios()]),
            "decks": Family(nd, 3 + 2 * N_PATHS, [r.differs() for _, r in deck_ratios()]),
            # expected_<path>: the decks' terms; gap_<path>: those and the path's share
            "paths": Family(N_PATHS, 4 + 4 * nd,
                            [_templates(by_deck), _templates([share, *by_deck])]),
            "meets": Family(nd * nd, 3, [Ratio.of(3, 1, 0, 2, 0).differs()]),
            "cards": Family(nc, 11, [cr["gih_wr"].differs(), cr["played_wr"].differs(),
                                     cr["play_rate"].differs(),
                                     _templates([cr["gih_wr"], cr["gns_wr"]])]),
        }
        self.units = 0
        self.games = 0
        self.deals = 0  # the highest deal number seen, plus one
        self.tables = 0  # tables (strata) completed
        self._table = -1  # the table under way
        self._table_units = 0
        self._pending: tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None = None
        self._last_unit: tuple[int, int] | None = None

    # -- reading parts

    def deck_index(self, seats: pl.DataFrame, where: str) -> np.ndarray:
        """The seats' decks as indices into ``decks`` (int64, game-major)."""
        names = seats["deck"]
        unknown = names.filter(~names.is_in(list(self.index))).unique().sort()
        if len(unknown):
            raise InputError(f"{where}: deck '{unknown[0]}' is not in the other run")
        return names.replace_strict(self.index, return_dtype=pl.Int64).to_numpy()

    def add(self, games_b: pl.DataFrame, seats_b: pl.DataFrame, games_v: pl.DataFrame,
            seats_v: pl.DataFrame, where: str = "") -> None:
        """Fold one pair of parts (the same games in both runs): every unit of the parts
        but the last, which waits for the next part (it may go on there)."""
        p = self.players
        for run, seats in ((games_b, seats_b), (games_v, seats_v)):
            if seats.height != run.height * p:
                raise InputError(f"{where}: {seats.height} seat rows for {run.height} games "
                                 f"of {p} players")
        deck_b, deck_v = self.deck_index(seats_b, where), self.deck_index(seats_v, where)
        check_same_games(games_b, games_v, deck_b, deck_v, where)
        if games_b.height == 0:
            return
        path_code = {c: i for i, c in enumerate(WIN_PATHS)}
        game = {"table": games_b["table_id"].to_numpy().astype(np.int64),
                "deal": games_b["deal"].to_numpy().astype(np.int64),
                "first": games_b["first_seat"].to_numpy()}
        seat = {"deck": deck_b}
        for r, (games, seats) in enumerate(((games_b, seats_b), (games_v, seats_v))):
            game[f"winner{r}"] = games["winner_seat"].to_numpy()
            game[f"code{r}"] = games["path"].replace_strict(
                path_code, default=-1, return_dtype=pl.Int64).to_numpy()
            seat[f"won{r}"] = seats["won"].to_numpy().astype(bool)
            seat[f"p2{r}"] = seats["p2_right"].to_numpy().astype(bool)
            seat[f"seen{r}"] = (seats["opening_mask"].to_numpy().astype(np.uint64)
                                | seats["drawn_mask"].to_numpy().astype(np.uint64))
            seat[f"played{r}"] = seats["played_mask"].to_numpy().astype(np.uint64)
        if self._pending is not None:
            pg, ps = self._pending
            game = {k: np.concatenate([pg[k], v]) for k, v in game.items()}
            seat = {k: np.concatenate([ps[k], v]) for k, v in seat.items()}
            self._pending = None
        key = game["table"] * (1 << 32) + game["deal"]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        last = int(starts[-1])
        self._pending = ({k: v[last:] for k, v in game.items()},
                         {k: v[last * p:] for k, v in seat.items()})
        self._fold_units(game, seat, starts[:-1], last, where)

    def finish(self, where: str = "") -> None:
        """Fold the last unit and complete the last table."""
        if self._pending is not None:
            game, seat = self._pending
            self._pending = None
            self._fold_units(game, seat, np.zeros(1, dtype=np.int64), len(game["deal"]), where)
        self._end_table()

    def _fold_units(self, game, seat, starts: np.ndarray, end: int, where: str) -> None:
        """Fold the units starting at ``starts`` (the last one ends at game ``end``)."""
        p = self.players
        bounds = np.r_[starts, end]
        for s0 in range(0, len(starts), self.SLICE):
            s1 = min(len(starts), s0 + self.SLICE)
            g0, g1 = int(bounds[s0]), int(bounds[s1])
            unit = np.repeat(np.arange(s1 - s0), np.diff(bounds[s0:s1 + 1]))
            self._fold_slice({k: v[g0:g1] for k, v in game.items()},
                             {k: v[g0 * p:g1 * p] for k, v in seat.items()}, unit, where)

    # -- one slice of whole units

    def _fold_slice(self, game, seat, unit: np.ndarray, where: str) -> None:
        n_units = int(unit[-1]) + 1
        first_game = np.flatnonzero(np.r_[True, unit[1:] != unit[:-1]])
        tables, deals = game["table"][first_game], game["deal"][first_game]
        key = tables * (1 << 32) + deals
        last = -1 if self._last_unit is None else self._last_unit[0] * (1 << 32) + \
            self._last_unit[1]
        back = np.flatnonzero(np.diff(np.r_[last, key]) <= 0)
        if len(back):
            k = int(back[0])
            before = (f"table {key[k - 1] >> 32}, deal {key[k - 1] & 0xFFFFFFFF}" if k
                      else f"table {self._last_unit[0]}, deal {self._last_unit[1]}")
            raise InputError(f"{where}: the games are not in game_id order (table "
                             f"{tables[k]}, deal {deals[k]} after {before}): a run dir "
                             "lists its games table by table")
        self._last_unit = (int(tables[-1]), int(deals[-1]))
        self.games += len(unit)
        self.units += n_units
        self.deals = max(self.deals, int(deals.max()) + 1)
        sums = self._unit_sums(game, seat, unit, n_units)
        cut = np.flatnonzero(np.r_[True, tables[1:] != tables[:-1], True])
        for a, b in zip(cut[:-1], cut[1:], strict=True):
            table = int(tables[a])
            if table != self._table:
                self._end_table()
                self._table = table
            self._table_units += int(b - a)
            self._fold_table(sums, int(a), int(b))

    def _end_table(self) -> None:
        if self._table_units:
            for fam in self.families.values():
                fam.end_table(self._table_units)
            self.tables += 1
        self._table_units = 0

    def _unit_sums(self, game, seat, unit: np.ndarray, n: int) -> dict[str, np.ndarray]:
        """Per unit of the slice (last axis), the counts every family reads."""
        p, nd, nc, npth = self.players, len(self.decks), len(self.cards), N_PATHS
        g = len(unit)
        seat_unit = np.repeat(unit, p)
        deck = seat["deck"]

        def count(key: np.ndarray, n_keys: int, where_: np.ndarray | None = None,
                  per_seat: bool = True) -> np.ndarray:
            u = seat_unit if per_seat else unit
            if where_ is not None:
                key, u = key[where_], u[where_]
            return np.bincount(key * n + u, minlength=n_keys * n).reshape(n_keys, n)

        s: dict[str, np.ndarray] = {}
        s["held"] = count(deck, nd)
        s["games"] = np.bincount(unit, minlength=n)[None, :]
        present = np.zeros((g, nd), dtype=bool)
        np.put_along_axis(present, deck.reshape(g, p), True, axis=1)
        meets = present[np.arange(g * p) // p]  # [seat, deck j]: deck j sits at the table
        s["meet"] = np.stack([count(deck, nd, meets[:, j]) for j in range(nd)], axis=1)
        zeros = np.zeros(g, dtype=np.int64)
        for r in (0, 1):
            won = seat[f"won{r}"]
            s[f"wins{r}"] = count(deck, nd, won)
            winner, code = game[f"winner{r}"], game[f"code{r}"]
            decided = winner >= 0
            s[f"decided{r}"] = count(zeros, 1, decided, per_seat=False)
            s[f"share{r}"] = count(np.clip(code, 0, None), npth, decided & (code >= 0),
                                   per_seat=False)
            code_seat = np.repeat(code, p)
            s[f"path_wins{r}"] = count(np.clip(code_seat, 0, None) * nd + deck, npth * nd,
                                       won & (code_seat >= 0)).reshape(npth, nd, n)
            first_won = winner == game["first"]
            used = seat[f"p2{r}"].reshape(g, p).any(axis=1)
            masks = (np.ones(g, dtype=bool), used, ~used)
            s[f"seat_n{r}"] = np.concatenate([count(zeros, 1, m, per_seat=False)
                                              for m in masks])
            s[f"seat_w{r}"] = np.concatenate([count(zeros, 1, first_won & m, per_seat=False)
                                              for m in masks])
            s[f"meet_w{r}"] = np.stack([count(deck, nd, meets[:, j] & won)
                                        for j in range(nd)], axis=1)
            for name in ("gih", "gih_wins", "played", "played_wins"):
                s[f"{name}{r}"] = np.zeros((nc, n))
            for d, cards, masks_ in self.deck_cards:
                rows = np.flatnonzero(deck == d)
                if not len(rows):
                    continue
                u = seat_unit[rows]  # sorted: the deck's seat rows of each unit are a range
                starts = np.searchsorted(u, np.arange(n)).astype(np.int64)
                ends = np.searchsorted(u, np.arange(n), side="right").astype(np.int64)
                seen = np.ascontiguousarray(seat[f"seen{r}"][rows])
                # [card, (held, held wins, opening, its wins, seen, its wins, played, its
                # wins), unit] of the deck's cards (analytics.card_kernels)
                c = deal_count_vectors(np.ascontiguousarray(won[rows]), seen, seen,
                                       np.ascontiguousarray(seat[f"played{r}"][rows]),
                                       masks_, starts, ends)
                for name, j in (("gih", 4), ("gih_wins", 5), ("played", 6), ("played_wins", 7)):
                    s[f"{name}{r}"][cards] += c[:, j]
        return s

    def _fold_table(self, s: dict[str, np.ndarray], a: int, b: int) -> None:
        """Units [a, b) of the slice, all of one table: each family's blocks there."""
        cols = slice(a, b)
        f = self.families
        nd = len(self.decks)

        held = s["held"][:, cols]
        sat = np.flatnonzero(held.sum(axis=1) > 0)  # the decks at this table
        games = np.concatenate([s["games"], s["decided0"], s["decided1"], s["share0"],
                                s["share1"]])[:, cols]
        f["games"].add(np.zeros(1, dtype=np.int64), games.T[None])
        seats = np.concatenate([s["seat_n0"], s["seat_w0"], s["seat_n1"],
                                s["seat_w1"]])[:, cols]
        f["seats"].add(np.zeros(1, dtype=np.int64), seats.T[None])

        # decks: [deck, unit, feature]
        pw0, pw1 = s["path_wins0"][:, sat, cols], s["path_wins1"][:, sat, cols]
        x = np.concatenate([held[sat][None], s["wins0"][sat, cols][None],
                            s["wins1"][sat, cols][None], pw0, pw1]).astype(np.float64)
        f["decks"].add(sat, x.transpose(1, 2, 0))

        # paths: [path, unit, (share, decided) x 2 runs, then per deck at the table]
        head = np.stack([s["share0"][:, cols], np.broadcast_to(s["decided0"][:, cols],
                                                               pw0[:, 0].shape),
                         s["share1"][:, cols], np.broadcast_to(s["decided1"][:, cols],
                                                               pw0[:, 0].shape)], axis=1)
        w0 = np.broadcast_to(s["wins0"][sat, cols], pw0.shape)
        w1 = np.broadcast_to(s["wins1"][sat, cols], pw0.shape)
        per_deck = np.stack([pw0, w0, pw1, w1], axis=2).reshape(N_PATHS, 4 * len(sat), -1)
        x = np.concatenate([head, per_deck], axis=1).astype(np.float64)  # [path, feat, unit]
        feat = np.concatenate([np.arange(4), (4 + 4 * sat[:, None] + np.arange(4)).ravel()])
        f["paths"].add(np.arange(N_PATHS), x.transpose(0, 2, 1), feat)

        # meets: every ordered pair of the table's decks (2 players: i < j)
        pairs = (combinations(sat.tolist(), 2) if self.players == 2
                 else permutations(sat.tolist(), 2))
        ij = np.array(list(pairs), dtype=np.int64).reshape(-1, 2)
        if len(ij):
            x = np.stack([s["meet"][ij[:, 0], ij[:, 1], cols],
                          s["meet_w0"][ij[:, 0], ij[:, 1], cols],
                          s["meet_w1"][ij[:, 0], ij[:, 1], cols]], axis=-1)
            f["meets"].add(ij[:, 0] * nd + ij[:, 1], x)

        # cards of the table's decks
        ks = np.flatnonzero(self.holds[:, sat].sum(axis=1) > 0)
        h = self.holds[np.ix_(ks, sat)]
        x = np.stack([s["gih0"][ks, cols], s["gih_wins0"][ks, cols],
                      s["gih1"][ks, cols], s["gih_wins1"][ks, cols],
                      s["played0"][ks, cols], s["played_wins0"][ks, cols],
                      s["played1"][ks, cols], s["played_wins1"][ks, cols],
                      h @ held[sat], h @ s["wins0"][sat, cols], h @ s["wins1"][sat, cols]],
                     axis=-1).astype(np.float64)  # [card, unit, feature]
        f["cards"].add(ks, x)


def fold(bdir: Path, vdir: Path) -> tuple[Fold, dict[str, Any], dict[str, Any]]:
    """Both runs read part by part into a ``Fold``, checked to be the same games."""
    where = f"{bdir} vs {vdir}"
    mb, parts_b = read_manifest(bdir)
    mv, parts_v = read_manifest(vdir)
    decks_b, decks_v = read_decks(bdir), read_decks(vdir)
    replaced = (mv.get("compare") or {}).get("deck_b_replaces")
    differ = check_same_decks(decks_b, decks_v, where,
                              frozenset([replaced]) if isinstance(replaced, str) else frozenset())
    acc = Fold([d["name"] for d in mb["decks"]], decks_b, int(mb["players"]),
               frozenset(differ))
    for pair in part_pairs(vdir, parts_b, parts_v, where):
        acc.add(*pair, where=where)
        del pair  # before the next pair is read
    acc.finish(where)
    return acc, mb, mv
