"""Paired analysis of two runs on the same deals (common random numbers).

Two runs of ``rnr-sim compare`` play the same tables, deals, seat orders and seeds; game g
of the baseline and game g of the variant (same ``game_id``) start from the same
shuffles, so they differ only by the change. Every metric is therefore estimated on
*pairs*:

- **Unit.** The independent unit is the *deal* k: every table's game(s) of deal k, in
  every seat order. Deals are independent draws (each game's streams come from
  (seed, table, deal, seat order)), and every deal covers every table, so per-deal sums
  are i.i.d. and the run's design (which tables, which seat orders) is the same in each.
- **Metric.** Every metric is a ratio of sums, ``R = Σ_k a_k / Σ_k b_k`` (a deck's wins
  over its games; a path's wins over all wins; a card's wins when seen over the games it
  was seen...), or a difference of two (IWD).
- **Per-unit difference.** Each run's ratio is linearised per deal (the delta method):
  ``z_k = (a_k - R b_k) / mean(b)``, so that ``R`` has variance ``var(z) / n``. The
  change is ``D = R_variant - R_baseline`` and its per-deal difference is
  ``d_k = z_k(variant) - z_k(baseline)``; where the denominator is fixed by the design
  (a deck's games), ``d_k`` is just the difference of the deal's win rates.
- **Interval.** ``se(D) = sd(d) / sqrt(n)`` from the sample variance of ``d``, and the
  95% interval is ``D ± 1.96 se``; the p-value is the two-sided normal one of ``D / se``.
  That normal interval needs many deals that differ: where fewer than ``FEW_DEALS``
  deals differ between the runs (a change that rarely touches the metric), it is replaced
  by a score interval on the discordant deals (``score_interval``: Tango's score interval
  for a paired difference, the inversion of McNemar's test), which keeps its coverage down
  to no differing deal at all. Changes are flagged significant by Benjamini-Hochberg at 5%
  over every change tested.
- **Paths against the deck pool.** A path's share of all wins is also set against the
  deck-pool expectation (the share it would take if every deck won its fair share with
  its own mix of paths, ``analytics.paths.path_expectation``): ``expected_<path>`` and
  ``gap_<path>`` (share - expected) are weighted sums of per-deck ratios
  (``Combination``), linearised and paired over deals in the same way.
- **Patched and moved.** A card the patch edits is *patched*; every other card's figures
  can move too (its deck meets the patched card, its games get longer...): those rows are
  *moved*, listed apart and never read as a change to that card.
- **Variance reduction.** Had the two runs used independent seeds, the difference would
  have variance ``(var(z_variant) + var(z_baseline)) / n``; the ratio of that to the
  paired variance is the variance-reduction factor, and an unpaired comparison would
  need that many times the games for the same interval width.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations, permutations
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim.analytics.cards import card_masks
from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.analytics.stats import Z95, benjamini_hochberg, two_sided_p, wilson
from rnr_sim.errors import InputError

#: Kinds of change, in the order the terminal and the report rank them.
KINDS = ("deck", "path", "seat", "matchup", "card")
#: Card metrics compared, with their labels.
CARD_METRICS = ("gih_wr", "played_wr", "play_rate", "iwd")
METRIC_LABELS = {
    "win_rate": "win rate",
    "first_win_rate": "first-seat win rate",
    "draw_rate": "draw rate",
    "gih_wr": "GIH WR",
    "played_wr": "played WR",
    "play_rate": "play rate",
    "iwd": "IWD",
    **{f"share_{p}": f"{p.replace('_', '-')} share of wins" for p in WIN_PATHS},
    **{f"expected_{p}": f"{p.replace('_', '-')} share expected from the deck pool"
       for p in WIN_PATHS},
    **{f"gap_{p}": f"{p.replace('_', '-')} share minus expected" for p in WIN_PATHS},
}
SEAT_SUBJECTS = ("all games", "P2 right used", "P2 right declined")

CHANGE_SCHEMA: dict[str, pl.DataType] = {
    "kind": pl.String,
    "subject": pl.String,
    "metric": pl.String,
    "baseline": pl.Float64,
    "variant": pl.Float64,
    "change": pl.Float64,
    "lo": pl.Float64,
    "hi": pl.Float64,
    "se": pl.Float64,
    "se_unpaired": pl.Float64,
    "lo_unpaired": pl.Float64,
    "hi_unpaired": pl.Float64,
    "vrf": pl.Float64,
    "p": pl.Float64,
    "significant": pl.Boolean,
    "n_baseline": pl.Int64,
    "n_variant": pl.Int64,
    "deals_differ": pl.Int64,
    "interval": pl.String,
    "role": pl.String,
}
#: Below this many deals that differ between the runs, intervals are score intervals.
FEW_DEALS = 40
#: A ratio whose numerator (or its complement) counts fewer events than this in either run
#: gets Newcombe's paired interval instead of the normal one (``newcombe_paired``).
FEW_EVENTS = 10


@dataclass
class Paired:
    """The paired comparison of two runs: every change and the design it was measured on."""

    baseline_dir: Path
    variant_dir: Path
    deals: int  # per table: the independent units
    games: int  # per run
    players: int
    decks: list[str]
    changes: pl.DataFrame  # CHANGE_SCHEMA, ranked (kind, then |change|)
    tests: int  # changes with a p-value (the Benjamini-Hochberg family)
    q: float = 0.05
    z: float = Z95
    extra: dict[str, Any] = field(default_factory=dict)
    #: card -> the fields the patch changed ("added", "removed" for whole cards)
    patched: dict[str, list[str]] = field(default_factory=dict)
    #: rules switch -> (baseline, variant)
    rules_changed: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    def what_moved(self) -> str:
        """The change in a few words, for "moved by ...": the patched cards' fields and
        the rules switches."""
        parts = [f"{card} ({', '.join(f)})" for card, f in sorted(self.patched.items())]
        parts += [f"rules switch {k}" for k in sorted(self.rules_changed)]
        return "; ".join(parts) if parts else "the change"

    def of(self, kind: str, metric: str | None = None) -> pl.DataFrame:
        out = self.changes.filter(pl.col("kind") == kind)
        return out if metric is None else out.filter(pl.col("metric") == metric)

    @property
    def significant(self) -> pl.DataFrame:
        return self.changes.filter(pl.col("significant"))

    def variance_reduction(self) -> dict[str, Any]:
        """The variance-reduction factor over the decks' win rates: median, range, and the
        games per run an unpaired comparison would need for the same interval width."""
        v = self.of("deck", "win_rate")["vrf"].drop_nulls().drop_nans().to_numpy()
        if len(v) == 0:
            return {"median": None, "min": None, "max": None, "unpaired_games": None,
                    "note": "the runs do not differ on any deck's games: no variance to reduce"}
        med = float(np.median(v))
        return {"median": med, "min": float(v.min()), "max": float(v.max()),
                "unpaired_games": int(math.ceil(med * self.games)), "note": ""}


# ---------------------------------------------------------------------------- loading
#
# The analysis streams: it reads the two runs one part at a time (``read_part``, the only
# reader of seat and game rows), checks that the parts hold the same games, and folds
# each pair of parts into per-deal sums (``DealSums.add``). The unit is the deal across
# every table, and a part holds whole tables (every deal of them), so a deal's sums are
# complete only at the last part: what stays in memory is the per-deal sums (small
# unsigned counts: about 1,450 bytes a deal for the nine sample decks and their 135 cards,
# some 20 bytes a game), never the seat rows of more than one part of each run. The sums
# are exactly those the whole tables gave, so every figure is the same to the bit.
#
# Why not O(1): the intervals need each deal's sums over every table (their squares and
# cross-products over deals), and a part holds every deal of its tables, so no deal is
# complete before the last part. Sufficient statistics (sums of squares) could only be
# formed deal-major, and they would change the last bits of the figures.

GAME_COLUMNS = ["game_id", "table_id", "deal", "first_seat", "winner_seat", "path"]
SEAT_COLUMNS = ["game_id", "seat", "deck", "won", "p2_right", "opening_mask", "drawn_mask",
                "played_mask"]


def read_part(path: Path, columns: list[str]) -> pl.DataFrame:
    """One part of a run's ``games`` or ``seats`` table (the analysis reads no more than
    one part of each run at a time), in game order."""
    try:
        frame = pl.read_parquet(path, columns=columns)
    except Exception as e:  # a part check_parts passed, broken since: one line
        raise InputError(f"{path}: unreadable parquet part "
                         f"({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
    return frame.sort(["game_id", "seat"] if "seat" in columns else "game_id")


def _manifest(run_dir: Path) -> tuple[dict[str, Any], dict[str, list[Path]]]:
    from rnr_sim.analytics.run import check_parts
    from rnr_sim.runner import read_manifest

    manifest = read_manifest(run_dir)
    parts = check_parts(run_dir, manifest)  # a missing, extra or broken part: one line, exit 2
    return manifest, parts


def _decks_table(run_dir: Path) -> pl.DataFrame:
    try:
        return pl.read_parquet(run_dir / "decks.parquet")
    except OSError as e:
        raise InputError(f"{run_dir}: cannot read decks.parquet ({e})") from None


def _part_pairs(bdir: Path, vdir: Path, parts_b: dict[str, list[Path]],
                parts_v: dict[str, list[Path]], where: str):
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
    if not same_cut:
        total_v = sum(pl.scan_parquet(p).select(pl.len()).collect().item()
                      for p in parts_v["games"])
        if total_v != seen_v:
            raise InputError(f"{where}: the two runs did not play the same games ('game_id' "
                             "differs): a paired comparison needs the same tables, deals, "
                             "seat orders and seed")


def _check_same_games(games_b: pl.DataFrame, games_v: pl.DataFrame, deck_b: np.ndarray,
                      deck_v: np.ndarray, where: str) -> None:
    for c in ("game_id", "table_id", "deal", "first_seat"):
        if games_b.height != games_v.height or not games_b[c].equals(games_v[c]):
            raise InputError(f"{where}: the two runs did not play the same games ('{c}' "
                             "differs): a paired comparison needs the same tables, deals, "
                             "seat orders and seed")
    if not np.array_equal(deck_b, deck_v):
        raise InputError(f"{where}: the two runs seat different decks in the same games")


def _check_same_decks(decks_b: pl.DataFrame, decks_v: pl.DataFrame, where: str) -> None:
    keys = ["deck", "slot", "card"]
    if not decks_b.sort(keys).equals(decks_v.sort(keys)):
        raise InputError(f"{where}: the two runs' deck lists differ")


class DealSums:
    """Per-deal sums of both runs, folded in one pair of parts at a time (``add``).

    Every metric of ``_estimates`` is a ratio of per-deal sums of counts (``Estimate``);
    these are those counts, indexed ``[..., deal]`` by the deal number:

    - ``held[deck]`` seats of the deck, ``wins[r, deck]`` its wins (r: 0 baseline,
      1 variant); ``path_wins[r, path, deck]`` its wins by each path;
    - ``games`` games, ``decided[r]`` games won by a seat, ``share[r, path]`` games won by
      the path;
    - ``seat_n[r, subject]`` games of each ``SEAT_SUBJECTS`` subject, ``seat_w[r,
      subject]`` those the first seat won;
    - ``meet[i, j]`` seats of deck i in games where deck j sits too, ``meet_w[r, i, j]``
      those deck i won;
    - per card: ``gih``, ``gih_wins``, ``played``, ``played_wins`` ``[r, card]`` (over the
      decks that hold it; held and held wins come from the decks' ``held``/``wins``).

    No count of a deal exceeds its seats (tables x players x seat orders), so they are
    kept in the smallest unsigned type that holds that (``count_dtype``: uint8 for up to
    255 seats a deal), exactly; ``games`` is int64 and checks the bound. A part's counts
    are tallied densely (per key and deal of the part: fast, a work space of the order of
    the sums themselves) while that takes at most ``DENSE`` cells, else sparsely
    (``np.unique`` over the part's rows), so the work space of a part stays bounded
    however many deals the runs hold.
    """

    DENSE = 1 << 24
    #: Games folded at a time (a part is cut into slices of this many games).
    SLICE = 8192

    def __init__(self, decks: list[str], decks_table: pl.DataFrame, players: int,
                 deals_hint: int = 0, seats_per_deal: int | None = None):
        self.decks = decks
        self.index = {d: i for i, d in enumerate(decks)}
        self.players = players
        self.dtype = count_dtype(seats_per_deal)
        masks = card_masks(decks_table)
        self.cards = sorted(set(masks["card"].to_list()))
        card_index = {c: k for k, c in enumerate(self.cards)}
        #: per deck in ``decks`` order: (deck index, card indices, slot masks)
        self.deck_cards: list[tuple[int, np.ndarray, np.ndarray]] = []
        for (deck,), cards in masks.partition_by("deck", as_dict=True,
                                                 maintain_order=True).items():
            if deck in self.index:
                self.deck_cards.append((
                    self.index[deck],
                    np.array([card_index[c] for c in cards["card"].to_list()], dtype=np.int64),
                    cards["mask"].to_numpy().astype(np.uint64)))
        nd, npth, nc = len(decks), len(WIN_PATHS), len(self.cards)
        self.shapes = {
            "held": (nd,), "wins": (2, nd), "path_wins": (2, npth, nd), "games": (1,),
            "decided": (2,), "share": (2, npth), "seat_n": (2, len(SEAT_SUBJECTS)),
            "seat_w": (2, len(SEAT_SUBJECTS)), "meet": (nd, nd), "meet_w": (2, nd, nd),
            "gih": (2, nc), "gih_wins": (2, nc), "played": (2, nc), "played_wins": (2, nc),
        }
        self.cap = 0
        self.sums: dict[str, np.ndarray] = {}
        self.present = np.zeros(0, dtype=bool)
        self.n_games = 0
        self._grow(max(1, deals_hint))

    def _grow(self, need: int) -> None:
        if need <= self.cap:
            return
        cap = max(need, 2 * self.cap)
        for k, shape in self.shapes.items():
            new = np.zeros((*shape, cap), dtype=np.int64 if k == "games" else self.dtype)
            if self.cap:
                new[..., :self.cap] = self.sums[k]
            self.sums[k] = new
        present = np.zeros(cap, dtype=bool)
        present[:self.cap] = self.present
        self.present, self.cap = present, cap

    def _tally(self, name: str, lead: tuple, key: np.ndarray, n_keys: int,
               mask: np.ndarray | None, seat: bool, rows: np.ndarray | None = None) -> None:
        """Add, per (key, deal), the rows (seat rows when ``seat``, else games) where
        ``mask`` to ``sums[name][lead][rows[key] if rows else key, deal]``."""
        local, deal = (self._seat_local, self._seat_deal) if seat else (self._local, self._deal)
        if mask is not None:
            key, local, deal = key[mask], local[mask], deal[mask]
        if not len(key):
            return
        target = self.sums[name][lead] if lead else self.sums[name]
        target = target.reshape(-1, self.cap)
        nl = len(self._deals)
        if n_keys * nl <= self.DENSE:
            c = np.bincount(key * nl + local, minlength=n_keys * nl).reshape(n_keys, nl)
            d = self._deals
            cols = slice(d[0], d[-1] + 1) if d[-1] - d[0] + 1 == nl else d  # a deal range
            if rows is None:
                target[:, cols] += c.astype(target.dtype)
            elif isinstance(cols, slice):
                target[rows, cols] += c.astype(target.dtype)
            else:
                target[np.ix_(rows, cols)] += c.astype(target.dtype)
        else:
            idx = (rows[key] if rows is not None else key) * self.cap + deal
            u, c = np.unique(idx, return_counts=True)
            target.reshape(-1)[u] += c.astype(target.dtype)

    def add(self, games_b: pl.DataFrame, seats_b: pl.DataFrame, games_v: pl.DataFrame,
            seats_v: pl.DataFrame, where: str = "") -> None:
        """Fold one pair of parts (the same games in both runs) into the sums, ``SLICE``
        games at a time (the work space of a slice is all the numpy work space)."""
        g, p = games_b.height, self.players
        for run, seats in ((games_b, seats_b), (games_v, seats_v)):
            if seats.height != run.height * p:
                raise InputError(f"{where}: {seats.height} seat rows for {run.height} games "
                                 f"of {p} players")
        deck_b, deck_v = self._deck_index(seats_b, where), self._deck_index(seats_v, where)
        _check_same_games(games_b, games_v, deck_b, deck_v, where)
        if g == 0:
            return
        self.n_games += g
        deal = games_b["deal"].to_numpy().astype(np.int64)
        self._grow(int(deal.max()) + 1)
        path_code = {c: i for i, c in enumerate(WIN_PATHS)}
        per_game = {"deal": deal, "first": games_b["first_seat"].to_numpy()}
        per_seat = {"deck": deck_b}
        for r, (games, seats) in enumerate(((games_b, seats_b), (games_v, seats_v))):
            per_game[f"winner{r}"] = games["winner_seat"].to_numpy()
            per_game[f"code{r}"] = games["path"].replace_strict(
                path_code, default=-1, return_dtype=pl.Int64).to_numpy()
            per_seat[f"won{r}"] = seats["won"].to_numpy().astype(bool)
            per_seat[f"p2{r}"] = seats["p2_right"].to_numpy().astype(bool)
            per_seat[f"seen{r}"] = (seats["opening_mask"].to_numpy().astype(np.uint64)
                                    | seats["drawn_mask"].to_numpy().astype(np.uint64))
            per_seat[f"played{r}"] = seats["played_mask"].to_numpy().astype(np.uint64)
        for g0 in range(0, g, self.SLICE):
            g1 = min(g, g0 + self.SLICE)
            self._add_slice({k: v[g0:g1] for k, v in per_game.items()},
                            {k: v[g0 * p:g1 * p] for k, v in per_seat.items()})

    def _add_slice(self, game: dict[str, np.ndarray], seat: dict[str, np.ndarray]) -> None:
        p, nd = self.players, len(self.decks)
        deal = game["deal"]
        g = len(deal)
        self._deals, self._local = np.unique(deal, return_inverse=True)
        self._deal = deal
        self.present[self._deals] = True
        self._seat_local, self._seat_deal = np.repeat(self._local, p), np.repeat(deal, p)
        flat_deck = seat["deck"]
        tally = self._tally

        zeros_g = np.zeros(g, dtype=np.int64)
        tally("held", (), flat_deck, nd, None, seat=True)
        tally("games", (), zeros_g, 1, None, seat=False)
        present = np.zeros((g, nd), dtype=bool)
        np.put_along_axis(present, flat_deck.reshape(g, p), True, axis=1)
        meets = present[np.arange(g * p) // p]  # [seat, deck j]: deck j sits at the table
        meet_rows = [np.arange(nd) * nd + j for j in range(nd)]  # (i, j) of meet's [i, j]
        for j in range(nd):
            tally("meet", (), flat_deck, nd, meets[:, j], seat=True, rows=meet_rows[j])
        first = game["first"]
        for r in (0, 1):
            won = seat[f"won{r}"]
            tally("wins", (r,), flat_deck, nd, won, seat=True)
            winner, code = game[f"winner{r}"], game[f"code{r}"]
            decided = winner >= 0
            tally("decided", (r,), zeros_g, 1, decided, seat=False)
            tally("share", (r,), np.clip(code, 0, None), len(WIN_PATHS),
                  decided & (code >= 0), seat=False)
            code_seat = np.repeat(code, p)
            tally("path_wins", (r,), np.clip(code_seat, 0, None) * nd + flat_deck,
                  len(WIN_PATHS) * nd, won & (code_seat >= 0), seat=True)
            first_won = winner == first
            used = seat[f"p2{r}"].reshape(g, p).any(axis=1)
            for k, m in enumerate((np.ones(g, dtype=bool), used, ~used)):
                tally("seat_n", (r, k), zeros_g, 1, m, seat=False)
                tally("seat_w", (r, k), zeros_g, 1, first_won & m, seat=False)
            for j in range(nd):
                tally("meet_w", (r,), flat_deck, nd, meets[:, j] & won, seat=True,
                      rows=meet_rows[j])
            self._add_cards(r, flat_deck, won, seat[f"seen{r}"], seat[f"played{r}"])

    def _add_cards(self, r: int, flat_deck: np.ndarray, won: np.ndarray, seen: np.ndarray,
                   played: np.ndarray) -> None:
        all_local, all_deal = self._seat_local, self._seat_deal
        for deck, cards, masks in self.deck_cards:
            rows = flat_deck == deck
            if not rows.any():
                continue
            u, dl, w = all_local[rows], all_deal[rows], won[rows]
            for name, bits in (("gih", seen[rows]), ("played", played[rows])):
                i, k = np.nonzero((bits[:, None] & masks[None, :]) != 0)  # [seat, card]
                for suffix, sel in (("", None), ("_wins", w[i])):
                    self._seat_local, self._seat_deal = u[i], dl[i]
                    self._tally(name + suffix, (r,), k, len(cards), sel, seat=True,
                                rows=cards)
        self._seat_local, self._seat_deal = all_local, all_deal

    def _deck_index(self, seats: pl.DataFrame, where: str) -> np.ndarray:
        """The seats' decks as indices into ``decks`` (int64, game-major)."""
        names = seats["deck"]
        unknown = names.filter(~names.is_in(list(self.index))).unique().sort()
        if len(unknown):
            raise InputError(f"{where}: deck '{unknown[0]}' is not in the other run")
        return names.replace_strict(self.index, return_dtype=pl.Int64).to_numpy()

    def check_bound(self, where: str) -> None:
        """Every count of a deal is at most its seats: more games in a deal than the
        manifest's tables allow would have overflowed the counts."""
        most = int(self.sums["games"].max(initial=0)) * self.players
        if most > np.iinfo(self.dtype).max:
            raise InputError(f"{where}: a deal holds {most} seats, more than the runs' "
                             "tables allow: the run dirs are not what their manifests say")

    def per_deal(self, name: str, at: tuple = ()) -> np.ndarray:
        """``name[at]``'s sums over the deals played (in deal order), as float64."""
        a = self.sums[name][at] if at else self.sums[name]
        return a[..., np.flatnonzero(self.present)].astype(np.float64)


def count_dtype(seats_per_deal: int | None) -> type:
    """The smallest unsigned integer type that holds ``seats_per_deal`` (uint32 when it is
    not known)."""
    if seats_per_deal is None:
        return np.uint32
    for t in (np.uint8, np.uint16, np.uint32):
        if seats_per_deal <= np.iinfo(t).max:
            return t
    return np.uint64


def _fold(bdir: Path, vdir: Path) -> tuple[DealSums, list[str], dict[str, Any], dict[str, Any]]:
    """Both runs read part by part into ``DealSums``, checked to be the same games."""
    where = f"{bdir} vs {vdir}"
    mb, parts_b = _manifest(bdir)
    mv, parts_v = _manifest(vdir)
    decks_b, decks_v = _decks_table(bdir), _decks_table(vdir)
    _check_same_decks(decks_b, decks_v, where)
    decks = [d["name"] for d in mb["decks"]]
    players = int(mb["players"])
    tables = len(mb.get("tables") or []) or 1
    seats = tables * players * players if mb.get("tables") else None
    acc = DealSums(decks, decks_b, players, seats_per_deal=seats,
                   deals_hint=int(mb.get("games_done") or 0) // (tables * players))
    for pair in _part_pairs(bdir, vdir, parts_b, parts_v, where):
        acc.add(*pair, where=where)
    acc.check_bound(where)
    return acc, decks, mb, mv


# ---------------------------------------------------------------------------- estimators


def linearize(a: np.ndarray, b: np.ndarray) -> tuple[float, np.ndarray | None]:
    """``R = Σa / Σb`` and its per-unit linearisation ``z = (a - R b) / mean(b)``
    (``var(R) ≈ var(z) / n``); ``(nan, None)`` when ``Σb = 0``."""
    total_b = float(b.sum())
    if total_b <= 0:
        return math.nan, None
    r = float(a.sum()) / total_b
    return r, (a - r * b) / (total_b / len(b))


@dataclass
class Estimate:
    """One metric in both runs: per-unit (numerator, denominator) sums, or the difference
    of two such ratios (``minus``)."""

    kind: str
    subject: str
    metric: str
    a_b: np.ndarray
    b_b: np.ndarray
    a_v: np.ndarray
    b_v: np.ndarray
    minus: Estimate | None = None

    def parts(self, a: np.ndarray, b: np.ndarray, other: tuple[np.ndarray, np.ndarray] | None):
        r, z = linearize(a, b)
        if other is not None:
            r2, z2 = linearize(*other)
            if z is None or z2 is None:
                return math.nan, None
            return r - r2, z - z2
        return r, z

    def deals_differ(self) -> int:
        """Deals whose sums differ between the two runs (the discordant deals)."""
        diff = (self.a_b != self.a_v) | (self.b_b != self.b_v)
        if self.minus is not None:
            m = self.minus
            diff |= (m.a_b != m.a_v) | (m.b_b != m.b_v)
        return int(diff.sum())

    def few_events(self) -> bool:
        """A plain ratio (not a difference) whose numerator, or what it leaves of the
        denominator, counts fewer than ``FEW_EVENTS`` in either run: a path a deck almost
        never wins by. Its normal interval is far too narrow there (of zero width when the
        numerator is 0 in both runs)."""
        if self.minus is not None or type(self) is not Estimate:
            return False
        counts = (self.a_b.sum(), self.a_v.sum(), self.b_b.sum() - self.a_b.sum(),
                  self.b_v.sum() - self.a_v.sum())
        return min(counts) < FEW_EVENTS

    def value(self, variant: bool) -> tuple[float, np.ndarray | None]:
        """The metric in one run and its per-deal linearisation (``nan, None`` if it has
        no value there)."""
        m = self.minus
        if variant:
            return self.parts(self.a_v, self.b_v, None if m is None else (m.a_v, m.b_v))
        return self.parts(self.a_b, self.b_b, None if m is None else (m.a_b, m.b_b))

    def discordant(self) -> np.ndarray:
        """The change split over the deals, zero on every deal that did not change
        (``discordant_parts``)."""
        u = discordant_parts(self.a_b, self.b_b, self.a_v, self.b_v)
        m = self.minus
        if m is not None:
            u = u - discordant_parts(m.a_b, m.b_b, m.a_v, m.b_v)
        return u

    def row(self, z_crit: float) -> dict[str, Any]:
        rb, zb = self.value(False)
        rv, zv = self.value(True)
        n = len(self.a_b)
        row: dict[str, Any] = dict.fromkeys(CHANGE_SCHEMA)
        row.update(kind=self.kind, subject=self.subject, metric=self.metric,
                   baseline=None if math.isnan(rb) else rb,
                   variant=None if math.isnan(rv) else rv, significant=False,
                   n_baseline=int(self.b_b.sum()), n_variant=int(self.b_v.sum()), role="")
        if zb is None or zv is None or n < 2:
            return row
        change = rv - rb
        d = zv - zb
        var_p = float(np.var(d, ddof=1)) / n
        var_u = (float(np.var(zv, ddof=1)) + float(np.var(zb, ddof=1))) / n
        se, se_u = math.sqrt(max(var_p, 0.0)), math.sqrt(max(var_u, 0.0))
        differ = self.deals_differ()
        if differ < FEW_DEALS:
            one_game = 1.0 / float(self.b_b.mean())
            lo, hi, p = score_interval(self.discordant(), one_game, z_crit)
            method = "score"
        elif self.few_events():
            lo, hi = newcombe_paired(rb, rv, zb, zv, self.b_b.sum(), self.b_v.sum(), z_crit)
            p = two_sided_p(change / se) if se > 0 else (1.0 if abs(change) < 1e-12 else 0.0)
            method = "newcombe"
        else:
            lo, hi = change - z_crit * se, change + z_crit * se
            if se > 0:
                p = two_sided_p(change / se)
            else:
                p = 1.0 if abs(change) < 1e-12 else 0.0
            method = "normal"
        row.update(change=change, lo=lo, hi=hi, se=se,
                   se_unpaired=se_u, lo_unpaired=change - z_crit * se_u,
                   hi_unpaired=change + z_crit * se_u,
                   vrf=var_u / var_p if var_p > 0 else None, p=p, deals_differ=differ,
                   interval=method)
        return row


@dataclass
class Combination(Estimate):
    """A weighted sum of ratios, ``Σ_t c_t · Σa_t / Σb_t``, in both runs: the deck-pool
    expectation of a path's share (``Σ_d w_d · mix_dp``) and the gap between a path's
    share and it. ``terms`` holds ``(c_t, a_b, b_b, a_v, b_v)``; a term whose denominator
    is zero in a run (a deck that never won) counts 0 there, as in
    ``analytics.paths.path_expectation``. The linearisation is ``Σ_t c_t z_t`` and the
    discordant parts ``Σ_t c_t u_t``. ``a_b``/``b_b``/``a_v``/``b_v`` hold the path's own
    share (wins by the path over all wins): its sample sizes are the row's ``n`` and one
    win of a deal the score interval's unit."""

    terms: list[tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=list)

    def value(self, variant: bool) -> tuple[float, np.ndarray | None]:
        total, z = 0.0, np.zeros(len(self.a_b))
        for c, a_b, b_b, a_v, b_v in self.terms:
            r, zt = linearize(a_v, b_v) if variant else linearize(a_b, b_b)
            if zt is None:
                continue
            total += c * r
            z = z + c * zt
        return total, z

    def deals_differ(self) -> int:
        diff = np.zeros(len(self.a_b), dtype=bool)
        for _, a_b, b_b, a_v, b_v in self.terms:
            diff |= (a_b != a_v) | (b_b != b_v)
        return int(diff.sum())

    def discordant(self) -> np.ndarray:
        u = np.zeros(len(self.a_b))
        for c, a_b, b_b, a_v, b_v in self.terms:
            if b_b.sum() > 0 and b_v.sum() > 0:
                u = u + c * discordant_parts(a_b, b_b, a_v, b_v)
        return u


def newcombe_paired(rb: float, rv: float, zb: np.ndarray, zv: np.ndarray, nb: float,
                    nv: float, z: float = Z95) -> tuple[float, float]:
    """Newcombe's interval for a paired difference of proportions (Newcombe 1998, method
    10), ``rv - rb``: each run's Wilson interval, on its effective sample size (the count
    of games its per-deal variance is worth, ``r(1 - r) / se²``; the plain count where
    that variance is 0), joined with the correlation of the runs' per-deal terms. Never of
    zero width, and the normal paired interval again when counts are large."""
    n = len(zb)

    def bounds(r: float, zz: np.ndarray, total: float) -> tuple[float, float]:
        var = float(np.var(zz, ddof=1)) / n if n > 1 else 0.0
        n_eff = r * (1 - r) / var if var > 0 and 0 < r < 1 else total
        return wilson(r * n_eff, n_eff, z)

    lb, ub = bounds(rb, zb, nb)
    lv, uv = bounds(rv, zv, nv)
    sb, sv = float(np.std(zb)), float(np.std(zv))
    phi = float(np.mean((zb - zb.mean()) * (zv - zv.mean())) / (sb * sv)) if sb > 0 and sv > 0 \
        else 0.0
    d = rv - rb
    lo = d - math.sqrt(max((rv - lv) ** 2 - 2 * phi * (rv - lv) * (ub - rb) + (ub - rb) ** 2, 0.0))
    hi = d + math.sqrt(max((uv - rv) ** 2 - 2 * phi * (uv - rv) * (rb - lb) + (rb - lb) ** 2, 0.0))
    return lo, hi


def discordant_parts(a_b: np.ndarray, b_b: np.ndarray, a_v: np.ndarray,
                     b_v: np.ndarray) -> np.ndarray:
    """The change of ``R = Σa / Σb`` split over the deals, zero on every deal that did not
    change: ``u_k = ((a_v - a_b) - R_b (b_v - b_b)) / mean(b_v)``, whose mean is exactly
    ``R_v - R_b`` (because ``Σ (a_b - R_b b_b) = 0``)."""
    r_b = float(a_b.sum()) / float(b_b.sum())
    return ((a_v - a_b) - r_b * (b_v - b_b)) / float(b_v.mean())


def _tango_stat(b: float, c: float, n: float, delta: float) -> float:
    """Tango's score statistic for a paired difference ``delta = p+ - p-`` of a trinomial
    (``b`` units up, ``c`` down, the rest unchanged, of ``n``): ``(b - c - n delta) /
    sqrt(n (2 q + delta (1 - delta)))``, ``q`` the constrained MLE of ``p-`` (Tango 1998)."""
    w = -(b + c) + (2.0 * n - b + c) * delta
    q = (-w + math.sqrt(max(w * w + 8.0 * n * c * delta * (1.0 - delta), 0.0))) / (4.0 * n)
    q = min(max(q, 0.0), 1.0)
    var = n * (2.0 * q + delta * (1.0 - delta))
    num = b - c - n * delta
    if var <= 1e-300:
        return math.copysign(math.inf, num) if num else 0.0
    return num / math.sqrt(var)


def score_interval(u: np.ndarray, unit: float, z: float = Z95) -> tuple[float, float, float]:
    """A 95% interval and p-value for ``mean(u)`` that holds its coverage when few of the
    ``u`` (per-deal differences, variant - baseline) are not zero.

    Each deal is scaled by ``s = Σu² / Σ|u|`` (so that the trinomial below has the
    deals' own second moment: ``(b + c) s² = Σu²``; ``unit`` -- one game -- when no deal
    differs) to a trinomial: ``b = Σ max(u, 0) / s`` deals up, ``c = Σ max(-u, 0) / s``
    down, of ``n`` (``b + c`` is at most the number of differing deals). The interval is ``s`` times Tango's score interval for ``p+ - p-``
    (the Δ whose score statistic is within ±z; found by bisection), and the p-value is
    McNemar's, ``(b - c) / sqrt(b + c)``. With no differing deal it is ``±s z²/(n + z²)``
    around 0 (the Wilson bound at zero), not the empty interval [0, 0].
    """
    n = float(len(u))
    mass = float(np.abs(u).sum())
    s = float((u * u).sum()) / mass if mass > 1e-15 else unit
    b = float(np.clip(u, 0, None).sum()) / s
    c = float(np.clip(-u, 0, None).sum()) / s
    est = (b - c) / n

    def solve(target: float, lo: float, hi: float) -> float:
        # _tango_stat falls as delta rises; find where it crosses ``target``
        for _ in range(80):
            mid = (lo + hi) / 2.0
            if _tango_stat(b, c, n, mid) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2.0

    lo = solve(z, -1.0, est)
    hi = solve(-z, est, 1.0)
    p = 1.0 if b + c <= 0 else two_sided_p((b - c) / math.sqrt(b + c))
    return s * lo, s * hi, p


# ---------------------------------------------------------------------------- the metrics


def _estimates(acc: DealSums) -> Iterator[Estimate]:
    """Every change, in report order, from the per-deal sums; one at a time, so that only
    the estimate under way holds float copies of its sums."""
    decks, players = acc.decks, acc.players
    n_decks = len(decks)
    held = acc.per_deal("held")
    wins = acc.per_deal("wins")  # [run, deck, deal]
    wins_b, wins_v = wins[0], wins[1]

    # decks: win rate
    for i, name in enumerate(decks):
        if held[i].sum() > 0:
            yield Estimate("deck", name, "win_rate", wins_b[i], held[i], wins_v[i], held[i])

    # paths: overall share of the wins, and the draw rate; then each deck's shares
    share, decided = acc.per_deal("share"), acc.per_deal("decided")
    all_games = acc.per_deal("games")[0]
    for k, p in enumerate(WIN_PATHS):
        yield Estimate("path", "all games", f"share_{p}", share[0, k], decided[0],
                       share[1, k], decided[1])
    yield Estimate("path", "all games", "draw_rate", all_games - decided[0], all_games,
                   all_games - decided[1], all_games)
    for k, p in enumerate(WIN_PATHS):  # one path's [deck, deal] sums at a time
        pb, pv = acc.per_deal("path_wins", (0, k)), acc.per_deal("path_wins", (1, k))
        for i, name in enumerate(decks):
            if held[i].sum() > 0:
                yield Estimate("path", name, f"share_{p}", pb[i], wins_b[i], pv[i], wins_v[i])
    del pb, pv
    for k, p in enumerate(WIN_PATHS):
        yield from _path_expectations(
            p, (acc.per_deal("path_wins", (0, k)), acc.per_deal("path_wins", (1, k))),
            wins_b, wins_v, held, (share[0, k], decided[0], share[1, k], decided[1]))
    del share

    # seats: the first seat's win rate, overall and by the P2 right
    seat_n, seat_w = acc.per_deal("seat_n"), acc.per_deal("seat_w")
    for k, subject in enumerate(SEAT_SUBJECTS):
        yield Estimate("seat", subject, "first_win_rate", seat_w[0, k], seat_n[0, k],
                       seat_w[1, k], seat_n[1, k])

    # matchups: row deck's win rate in the games it met column deck
    pairs = combinations(range(n_decks), 2) if players == 2 else permutations(range(n_decks), 2)
    for i, j in pairs:
        meet = acc.per_deal("meet", (i, j))
        if not meet.any():
            continue
        yield Estimate("matchup", f"{decks[i]} vs {decks[j]}", "win_rate",
                       acc.per_deal("meet_w", (0, i, j)), meet,
                       acc.per_deal("meet_w", (1, i, j)), meet)

    yield from _card_estimates(acc, held, wins)


def _path_expectations(p: str, by_deck: tuple[np.ndarray, np.ndarray], wins_b: np.ndarray,
                       wins_v: np.ndarray, held: np.ndarray,
                       share: tuple[np.ndarray, ...]) -> Iterator[Estimate]:
    """For path ``p``, over all games: ``expected_<path>``, the share of the wins the path
    would take if every deck won its fair share with its own mix of paths (the deck-pool
    expectation, ``analytics.paths.path_expectation``: ``Σ_d w_d · wins_dp / wins_d``,
    ``w_d`` the deck's share of the seats, fixed by the design), and ``gap_<path>`` =
    share − expected (positive: the decks that win by the path win more than their
    share). Both paired over deals like every other change. ``by_deck``: the decks' wins
    by the path per deal (baseline, variant); ``share``: the path's (wins by it, all wins)
    per deal, baseline then variant."""
    weight = held.sum(axis=1) / held.sum()  # [deck]: the same seats in both runs
    pb, pv = by_deck
    decks = [(float(weight[i]), pb[i], wins_b[i], pv[i], wins_v[i])
             for i in range(len(weight)) if weight[i] > 0]
    yield Combination("path", "all games", f"expected_{p}", *share, terms=decks)
    yield Combination("path", "all games", f"gap_{p}", *share,
                      terms=[(1.0, *share), *[(-w, *t) for w, *t in decks]])


def _card_estimates(acc: DealSums, held: np.ndarray, wins: np.ndarray) -> Iterator[Estimate]:
    """GIH WR, played WR, play rate and IWD per card, over the decks that hold it (and
    have seats in the runs)."""
    holders: dict[int, list[int]] = {}
    for deck, cards, _ in acc.deck_cards:
        if held[deck].sum() > 0:
            for k in cards.tolist():
                holders.setdefault(k, []).append(deck)
    gih, gih_wins = acc.sums["gih"], acc.sums["gih_wins"]
    played, played_wins = acc.sums["played"], acc.sums["played_wins"]
    cols = np.flatnonzero(acc.present)
    for k in sorted(holders, key=lambda k: acc.cards[k]):
        card = acc.cards[k]
        own = holders[k]

        def runs(a: np.ndarray, k: int = k) -> list[np.ndarray]:
            return [a[r, k, cols].astype(np.float64) for r in (0, 1)]

        s = {"gih": runs(gih), "gih_wins": runs(gih_wins), "played": runs(played),
             "played_wins": runs(played_wins),
             "held": [held[own].sum(axis=0)] * 2,
             "held_wins": [wins[r][own].sum(axis=0) for r in (0, 1)]}

        def est(metric: str, a: str, d: str, card: str = card, s=s) -> Estimate:
            return Estimate("card", card, metric, s[a][0], s[d][0], s[a][1], s[d][1])

        gns = {c: [s[f"held{w}"][r] - s[f"gih{w}"][r] for r in (0, 1)]
               for c, w in (("gns", ""), ("gns_wins", "_wins"))}
        gns_est = Estimate("card", card, "gns_wr", gns["gns_wins"][0], gns["gns"][0],
                           gns["gns_wins"][1], gns["gns"][1])
        iwd = est("iwd", "gih_wins", "gih")
        iwd.minus = gns_est
        yield est("gih_wr", "gih_wins", "gih")
        yield est("played_wr", "played_wins", "played")
        yield est("play_rate", "played", "held")
        yield iwd


# ---------------------------------------------------------------------------- entry point


def rank_changes(changes: pl.DataFrame) -> pl.DataFrame:
    """Kinds in ``KINDS`` order (the patched cards before the cards they moved), then the
    largest |change| first (no change last), ties by subject and metric."""
    order = {k: i for i, k in enumerate(KINDS)}
    return changes.with_columns(
        pl.col("kind").replace_strict(order, default=len(KINDS)).alias("_kind"),
        (pl.col("role") == "moved").alias("_moved"),
        pl.col("change").abs().fill_null(-1.0).alias("_size"),
    ).sort(["_kind", "_moved", "_size", "subject", "metric"],
           descending=[False, False, True, False, False]).drop("_kind", "_moved", "_size")


def patched_cards(baseline_dir: Path, variant_dir: Path) -> dict[str, list[str]]:
    """The cards whose catalog rows differ between the runs (cards.parquet), with the
    fields that differ; a card in one catalog only is "added" or "removed"."""
    try:
        cb = pl.read_parquet(baseline_dir / "cards.parquet")
        cv = pl.read_parquet(variant_dir / "cards.parquet")
    except Exception as e:  # unreadable catalogs: report nothing as patched
        raise InputError(f"{baseline_dir} vs {variant_dir}: cannot read cards.parquet "
                         f"({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
    fields = [c for c in cb.columns if c in cv.columns and c not in ("id", "name")]
    rows_b = {r["name"]: r for r in cb.iter_rows(named=True)}
    rows_v = {r["name"]: r for r in cv.iter_rows(named=True)}
    out: dict[str, list[str]] = {}
    for name in sorted(set(rows_b) | set(rows_v)):
        if name not in rows_v:
            out[name] = ["removed"]
        elif name not in rows_b:
            out[name] = ["added"]
        else:
            diff = [f for f in fields if rows_b[name][f] != rows_v[name][f]]
            if diff:
                out[name] = diff
    return out


def compare_runs(baseline_dir: str | Path, variant_dir: str | Path, q: float = 0.05,
                 z: float = Z95) -> Paired:
    """The paired comparison of two run dirs that played the same games.

    Raises ``InputError`` if they did not (different tables, deals, seat orders, decks).
    """
    bdir, vdir = Path(baseline_dir), Path(variant_dir)
    acc, decks, mb, mv = _fold(bdir, vdir)
    if mb.get("seed") != mv.get("seed"):
        raise InputError(f"{bdir} vs {vdir}: the runs used different seeds "
                         f"({mb.get('seed')} and {mv.get('seed')}): their deals differ")
    players = int(mb["players"])
    patched = patched_cards(bdir, vdir)
    sw_b = (mb.get("rules") or {}).get("switches") or {}
    sw_v = (mv.get("rules") or {}).get("switches") or {}
    rules_changed = {k: (sw_b.get(k), sw_v.get(k)) for k in sorted(set(sw_b) | set(sw_v))
                     if sw_b.get(k) != sw_v.get(k)}
    rows = [e.row(z) for e in _estimates(acc)]
    for r in rows:
        if r["kind"] == "card":
            r["role"] = "patched" if r["subject"] in patched else "moved"
    # a metric with no games in either run (a UA is never seen) is not a change
    rows = [r for r in rows if r["baseline"] is not None or r["variant"] is not None]
    changes = pl.DataFrame(rows, schema=CHANGE_SCHEMA, orient="row")
    p = changes["p"].to_numpy().astype(np.float64)
    p = np.where(np.isnan(p), np.nan, p)
    flags = benjamini_hochberg(p, q)
    changes = changes.with_columns(pl.Series("significant", flags.tolist(), dtype=pl.Boolean))
    deals = int(acc.present.sum())
    return Paired(baseline_dir=bdir, variant_dir=vdir, deals=deals, games=acc.n_games,
                  players=players, decks=decks, changes=rank_changes(changes),
                  tests=int(np.isfinite(p).sum()), q=q, z=z, patched=patched,
                  rules_changed=rules_changed)
