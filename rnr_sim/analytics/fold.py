"""The report's analysis of a run, folded part by part (``RunFold``), in memory that does
not grow with the games.

Every metric of the report (``compute_metrics``) is a function of a few kinds of sums:

- **counts** per subject (a deck's games and wins, a path's wins, the games of each
  length...), added up part by part;
- **per-deal moments** per (subject, table): the deals ``d``, the sums ``Σy``, ``Σn``
  and ``Σy²``, ``Σn²``, ``Σyn`` of the subject's per-deal numerator and denominator,
  which is all ``stats.ratio_from_moments`` needs for a ratio's interval with the deal
  as the unit; they add up over disjoint sets of deals, so each part's complete deals are
  folded in as they come (``analytics.parts`` hands on a deal cut between two parts with
  the next part);
- **deal outcomes** per matchup: how many deals ended in each pattern of wins (a few per
  matchup), which is what the Nash bootstrap resamples (``nash.deal_patterns``);
- the card sums of ``card_sums.CardFold``.

Two metrics need figures of the whole run before they can read a deal: the adjusted IWD
(its strata are bands of the whole run's game lengths, and its linearisation holds the
estimate) and the win rates by main path (a deck's main path is the path of most of its
wins). So the run is read twice: pass 1 (``add``) for everything else, then pass 2
(``add_second``, fewer columns) for those two. (The deck-pool path expectation's
linearisation holds the decks' path mixes too, but it is linear in each deal's counts,
so pass 1 keeps their per-table moments, ``paths.PathExpectation``.) What stays in
memory is per subject, per (subject, table) and per (deck, card, table) sums, and up to
three parts (the one folded, the next read ahead, and one whose card sums a second thread
adds): a few megabytes of sums however many games the run has (``state_size`` counts
them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from rnr_sim.analytics import matchups as mu
from rnr_sim.analytics.card_kernels import fold_seat_rows, two_player_deals
from rnr_sim.analytics.card_sums import CardFold
from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.analytics.paths import PathExpectation
from rnr_sim.analytics.seats import SCOPES
from rnr_sim.analytics.stats import deal_moments, deal_sums
from rnr_sim.analytics.units import grow

N_PATHS = len(WIN_PATHS)
#: The seat-row groupings of the victory-path tables (``paths.path_counts``).
PATH_GROUPS = ("deck", "policy", "branch")
#: The keys of the head-to-head tables (``matchups``).
PAIR_KEYS = ("deck", "branch")
#: What pass 2 reads (with tables of changing composition, everything: ``parts``).
SECOND_GAME_COLUMNS = ("game_id", "table_id", "deal", "n_players", "first_seat", "turns")
SECOND_SEAT_COLUMNS = ("game_id", "seat", "deck", "won", "opening_mask", "drawn_mask",
                       "played_mask")
MOMENT_SCHEMA = {"table_id": pl.Int32, "d": pl.Float64, "sy": pl.Float64, "sn": pl.Float64,
                 "syy": pl.Float64, "snn": pl.Float64, "syn": pl.Float64}


class Codes:
    """Names (decks, policies, paths, table ids...) as dense codes, in the order met."""

    def __init__(self, names: Sequence = ()) -> None:
        self.names: list = []
        self.index: dict = {}
        for n in names:
            self.add(n)

    def add(self, name) -> int:
        if name not in self.index:
            self.index[name] = len(self.names)
            self.names.append(name)
        return self.index[name]

    def __len__(self) -> int:
        return len(self.names)

    def of_series(self, s: pl.Series) -> np.ndarray:
        """The codes of a string column's values (a null is a name of its own)."""
        for v in s.unique().sort(nulls_last=True).to_list():
            self.add(v)
        named = [k for k in self.names if k is not None]
        phys = s.cast(pl.Enum(named)).to_physical()
        if len(named) == len(self.names):  # the codes of an Enum are its names' order
            return phys.to_numpy().astype(np.int64)
        code = np.array([self.index[k] for k in named], dtype=np.int64)
        out = np.full(len(s), self.index.get(None, -1), dtype=np.int64)
        ok = phys.is_not_null().to_numpy()
        out[ok] = code[phys.filter(pl.Series(ok)).to_numpy()]
        return out

    def of_ints(self, a: np.ndarray) -> np.ndarray:
        """The codes of integer values."""
        vals, inv = np.unique(a, return_inverse=True)
        return np.array([self.add(int(v)) for v in vals.tolist()], dtype=np.int64)[inv.ravel()]


class Moments:
    """Per (key, table) the raw moments of per-deal sums ``y_r`` (r < ``ys``) and ``n``
    over the deals in which the key has a row (``stats.deal_moments``)."""

    def __init__(self, ys: int = 1) -> None:
        self.ys = ys
        self.x = np.zeros((3 + 3 * ys, 0, 0))  # [stat, key, table]: d, Σn, Σn², Σy, Σy², Σyn

    def add(self, cells: Cells, ys: Sequence[np.ndarray], n: np.ndarray) -> None:
        """The deals of ``cells``: per cell its numerators ``ys`` and denominator ``n``."""
        stats = [np.ones(len(n)), n, n * n, *ys, *[y * y for y in ys], *[y * n for y in ys]]
        nk, nt = cells.n_keys, cells.n_tables
        self.x = grow(self.x, (self.x.shape[0], nk, nt))
        for i, s in enumerate(stats):  # each table's deals summed
            self.x[i][:nk, :nt] += np.bincount(cells.table_key, weights=s,
                                               minlength=nt * nk).reshape(nt, nk).T

    def frame(self, keys: dict[str, pl.Series], tables: np.ndarray, r: int = 0
              ) -> pl.LazyFrame:
        """The moments of ``y_r`` as ``stats.deal_moments`` gives them: ``keys`` (column
        -> its value per key code), ``table_id`` (``tables``: the id per table code),
        ``d``, ``sy``, ``sn``, ``syy``, ``snn``, ``syn``, for each (key, table) with a deal."""
        k_idx, t_idx = np.nonzero(self.x[0] > 0)
        x = self.x[:, k_idx, t_idx]
        cols = {name: values.gather(k_idx) if len(k_idx) else values.clear()
                for name, values in keys.items()}
        j = 3 + r
        cols |= {"table_id": pl.Series(tables[t_idx], dtype=pl.Int32),
                 "d": x[0], "sy": x[j], "sn": x[1], "syy": x[j + self.ys], "snn": x[2],
                 "syn": x[j + 2 * self.ys]}
        return pl.DataFrame(cols, schema={**{k: v.dtype for k, v in keys.items()},
                                          **MOMENT_SCHEMA}).lazy()


class Cells:
    """Rows of a part (seat or game rows) grouped by (deal, key code < ``n_keys``): per
    cell its deal (``unit``), its table and its key, and ``sums[name]``, the sum of each of
    ``weights`` over its rows (``rows``: how many)."""

    def __init__(self, part: Part, key: np.ndarray, unit: np.ndarray, n_keys: int,
                 weights: dict[str, np.ndarray]) -> None:
        flat = unit * n_keys + key
        count = np.bincount(flat, minlength=part.U * n_keys)
        present = count > 0
        cell = np.flatnonzero(present)
        of_row = (np.cumsum(present) - 1)[flat]
        self.n_keys, self.n_tables = n_keys, part.n_tables
        self.unit, self.key = cell // n_keys, cell % n_keys
        self.table_key = part.unit_tcode[cell // n_keys] * n_keys + self.key
        self.sums = {"rows": count[cell].astype(np.float64)}
        for name, w in weights.items():
            self.sums[name] = np.bincount(of_row, weights=w, minlength=len(cell))

    def totals(self, names: Sequence[str]) -> np.ndarray:
        """Per key, the sums ``names``: [key, name]."""
        return np.stack([np.bincount(self.key, weights=self.sums[x], minlength=self.n_keys)
                         for x in names], axis=1)


@dataclass
class Part:
    """One part of whole deals as arrays: games (``g_``), their deals (``unit``, dense
    within the part, and each deal's table), seat rows (``s_``), with the fold's codes."""

    games: pl.DataFrame
    seats: pl.DataFrame
    G: int
    U: int
    unit: np.ndarray
    unit_table: np.ndarray  # table_id of each deal
    tstarts: np.ndarray  # first deal of each table (deals are table by table)
    tcodes: np.ndarray  # the fold's code of each of those tables
    unit_tcode: np.ndarray  # the fold's table code of each deal
    n_tables: int
    g: dict[str, np.ndarray]
    s: dict[str, np.ndarray]


class RunFold:
    """The report's sums over a run, one part at a time (module docstring).

    ``branches``: the decks' main branches (``branches.main_branches``); ``masks``: the
    card masks (``cards.card_masks``). Pass 1: ``add`` every part, ``finish_first``;
    pass 2: ``start_second`` with the decks' main paths, ``add_second`` every part.
    """

    def __init__(self, branches: pl.DataFrame, masks: pl.DataFrame) -> None:
        self.branch_of = dict(branches.select("deck", "main_branch").iter_rows())
        self.decks = Codes(sorted(self.branch_of))
        self.branches = Codes(sorted(set(self.branch_of.values())))
        self.deck_branch = np.zeros(0, dtype=np.int64)
        self.policies = Codes()
        self.paths = Codes(WIN_PATHS)
        self.tables = Codes()
        self.cards = CardFold(masks)
        self.c: dict[str, np.ndarray] = {}  # counts, growing
        self.m: dict[str, Moments] = {
            "all_paths": Moments(N_PATHS), "field_wr": Moments(1),
            "field_paths": Moments(N_PATHS), "branch_field": Moments(1),
            **{f"paths_{by}": Moments(N_PATHS) for by in PATH_GROUPS},
            **{f"pairs_{k}": Moments(1) for k in PAIR_KEYS},
            **{f"seat_{i}": Moments(1) for i in range(len(SCOPES))},
        }
        self.patterns: dict[tuple[int, int], dict[tuple, int]] = {}
        self.players: dict[int, int] = {}  # n_players -> games
        self.expectation = PathExpectation()
        self.second: dict | None = None
        self._pool = None
        self._pending = None

    # ------------------------------------------------------------------ reading a part
    def _count(self, name: str, shape: Sequence[int], values: np.ndarray) -> None:
        a = self.c.get(name)
        a = np.zeros(shape) if a is None else grow(a, shape)
        a[tuple(slice(0, n) for n in values.shape)] += values
        self.c[name] = a

    def _merge(self, name: str, values: np.ndarray, how, fill: float) -> None:
        old = self.c.get(name)
        if old is not None and len(old) < len(values):
            old = np.r_[old, np.full(len(values) - len(old), fill)]
        self.c[name] = values if old is None else how(old, np.r_[values, np.full(
            len(old) - len(values), fill)])

    def part(self, games: pl.DataFrame, seats: pl.DataFrame, full: bool = True) -> Part:
        """Arrays and codes of one part (``analytics.parts.deal_parts``); ``full`` False:
        only what pass 2 reads (deals, decks, wins, turn orders)."""
        gid = games["game_id"].to_numpy()
        n_g = len(gid)
        table = games["table_id"].to_numpy().astype(np.int64)
        deal = games["deal"].to_numpy().astype(np.int64)
        new = np.r_[True, (table[1:] != table[:-1]) | (deal[1:] != deal[:-1])] if n_g else \
            np.zeros(0, dtype=bool)
        unit = np.cumsum(new) - 1
        starts = np.flatnonzero(new)
        unit_table = table[starts]
        tcode = self.tables.of_ints(unit_table) if len(starts) else np.zeros(0, np.int64)
        tstarts = np.flatnonzero(np.r_[True, tcode[1:] != tcode[:-1]]) if len(tcode) else \
            np.zeros(0, np.int64)
        g = {"table": table, "deal": deal,
             "n_players": games["n_players"].to_numpy().astype(np.int64),
             "first": games["first_seat"].to_numpy().astype(np.int64),
             "turns": games["turns"].to_numpy().astype(np.int64), "tcode": tcode[unit]}
        # seat rows of games in the part (seat_games: an inner join)
        sg = seats["game_id"].to_numpy()
        pos = np.searchsorted(gid, sg)
        ok = pos < n_g
        ok[ok] = gid[pos[ok]] == sg[ok]
        if not ok.all():
            seats, pos = seats.filter(pl.Series(ok)), pos[ok]
        deck = self.decks.of_series(seats["deck"])
        if len(self.deck_branch) < len(self.decks):
            self.deck_branch = np.array([self.branches.add(self.branch_of.get(d, "unknown"))
                                         for d in self.decks.names], dtype=np.int64)
        s = {"game": pos, "unit": unit[pos], "deck": deck, "branch": self.deck_branch[deck],
             "seat": seats["seat"].to_numpy().astype(np.int64),
             "won": seats["won"].to_numpy().astype(bool)}
        part = Part(games, seats, n_g, int(unit[-1]) + 1 if n_g else 0, unit, unit_table,
                    tstarts, tcode[tstarts], tcode, len(self.tables), g, s)
        if full:
            self._describe(part)
        return part

    def _describe(self, p: Part) -> None:
        """Pass 1's part: paths, policies, and per game mirror, the P2 right used, draws;
        per seat row its game's path and whether another seat plays its branch."""
        games, seats, g, s, n_g, pos = p.games, p.seats, p.g, p.s, p.G, p.s["game"]
        deck = s["deck"]
        g["winner"] = games["winner_seat"].to_numpy().astype(np.int64)
        g["path"] = self.paths.of_series(games["path"])
        s["policy"] = self.policies.of_series(seats["policy"])
        s["is_first"] = seats["is_first"].to_numpy().astype(bool)
        s["p2"] = seats["p2_right"].to_numpy().astype(bool)
        # per game: mirror (every seat one deck) and the P2 right used (Amend. VIII)
        has = np.bincount(pos, minlength=n_g) > 0
        firsts = np.flatnonzero(np.r_[True, pos[1:] != pos[:-1]]) if len(pos) else pos
        g["mirror"] = np.zeros(n_g, dtype=bool)
        g["p2_used"] = np.zeros(n_g, dtype=bool)
        if len(pos):
            g["mirror"][has] = (np.minimum.reduceat(deck, firsts)
                                == np.maximum.reduceat(deck, firsts))
            g["p2_used"][has] = np.logical_or.reduceat(s["p2"], firsts)
        s["mirror"] = g["mirror"][pos]
        s["draw"] = g["winner"][pos] == -1
        s["path"] = g["path"][pos]
        nb = max(len(self.branches), 1)
        same = np.bincount(pos * nb + s["branch"], minlength=n_g * nb)
        s["same_branch"] = same[pos * nb + s["branch"]] > 1

    def units(self, p: Part) -> pl.DataFrame:
        """The part's seat rows as ``card_sums.CardFold`` reads them (``cards.seat_units``)."""
        seats, s = p.seats, p.s
        order = np.mod(s["seat"] - p.g["first"][s["game"]], p.g["n_players"][s["game"]])
        return pl.DataFrame({
            # an Enum: the card fold splits the rows by deck (cards._deck_parts)
            "deck": seats["deck"].cast(pl.Enum([d for d in self.decks.names if d is not None])),
            "won": seats["won"],
            "seen": seats["opening_mask"] | seats["drawn_mask"],
            "opening": seats["opening_mask"], "played": seats["played_mask"],
            "turns": p.g["turns"][s["game"]], "n_players": p.g["n_players"][s["game"]],
            "order": order, "table_id": p.unit_table[s["unit"]], "unit": s["unit"]})

    # ------------------------------------------------------------------ pass 1
    def add(self, games: pl.DataFrame, seats: pl.DataFrame) -> Part:
        """Pass 1 over one part of whole deals."""
        p = self.part(games, seats)
        if p.G == 0:
            return p
        g, s = p.g, p.s
        nd, npth, nt = len(self.decks), len(self.paths), len(self.tables)
        decided = g["winner"] >= 0
        by_path = [g["path"] == self.paths.index[x] for x in WIN_PATHS]
        # run shape, players, game length
        self._count("table_games", (nt,), np.bincount(g["tcode"], minlength=nt))
        self._count("table_deals", (nt,), np.bincount(p.tcodes.repeat(np.diff(
            np.r_[p.tstarts, p.U])), minlength=nt))
        most, least = np.zeros(nt), np.full(nt, np.inf)
        first = np.flatnonzero(np.r_[True, g["tcode"][1:] != g["tcode"][:-1]])  # by table
        most[g["tcode"][first]] = np.maximum.reduceat(g["n_players"], first)
        least[g["tcode"][first]] = np.minimum.reduceat(g["n_players"], first)
        self._merge("table_np_max", most, np.maximum, 0.0)
        self._merge("table_np_min", least, np.minimum, np.inf)
        for v, n in zip(*np.unique(g["n_players"], return_counts=True), strict=True):
            self.players[int(v)] = self.players.get(int(v), 0) + int(n)
        tt = int(g["turns"].max()) + 1
        self._count("length", (npth, tt), np.bincount(
            g["path"] * tt + g["turns"], minlength=npth * tt).reshape(npth, tt))
        # all games (paths_overall)
        self._count("overall_paths", (1, 3 + N_PATHS), np.array(
            [[p.G, decided.sum(), (g["winner"] == -1).sum(),
              *[(decided & b).sum() for b in by_path]]], dtype=np.float64))
        c = Cells(p, np.zeros(p.G, dtype=np.int64), p.unit, 1,
                  {"decided": decided.astype(np.float64),
                   **{f"wins_{j}": (decided & b).astype(np.float64)
                      for j, b in enumerate(by_path)}})
        self.m["all_paths"].add(c, [c.sums[f"wins_{j}"] for j in range(N_PATHS)],
                                c.sums["decided"])
        self._add_seat_scopes(p, decided)
        if len(s["deck"]):
            self._add_seat_rows(p, nd)
            self._add_patterns(p)
            self._cards_later(self.cards.add_counts, self.units(p))
        return p

    def _add_seat_scopes(self, p: Part, decided: np.ndarray) -> None:
        g = p.g
        first_won = g["winner"] == g["first"]
        cell = g["n_players"] * 4 + g["mirror"] * 2 + g["p2_used"]
        k = int(cell.max()) + 1
        self._count("seat_cells", (k, 4), np.stack([
            np.bincount(cell, minlength=k), np.bincount(cell, weights=first_won, minlength=k),
            np.bincount(cell, weights=decided & ~first_won, minlength=k),
            np.bincount(cell, weights=g["winner"] == -1, minlength=k)], axis=1))
        n_p = int(g["n_players"].max()) + 1
        for i, (scope, p2) in enumerate(SCOPES):
            keep = np.ones(p.G, dtype=bool) if scope == "all" else g["mirror"].copy()
            if p2 == "used":
                keep &= g["p2_used"]
            elif p2 == "declined":
                keep &= ~g["p2_used"]
            c = Cells(p, g["n_players"][keep], p.unit[keep], n_p,
                      {"first_won": first_won[keep].astype(np.float64)})
            self.m[f"seat_{i}"].add(c, [c.sums["first_won"]], c.sums["rows"])

    #: The seat-row families (``card_kernels.fold_seat_rows``): (moments, key, rows: all,
    #: field = not a mirror game, other = no other seat of the game plays the branch,
    #: numerators: ``won`` or the four paths' wins, denominator: rows or ``won``).
    SEAT_FAMILIES = (("field_wr", "deck", "field", "won", "rows"),
                     ("field_paths", "deck", "field", "paths", "won"),
                     ("paths_deck", "deck", "all", "paths", "won"),
                     ("paths_policy", "policy", "all", "paths", "won"),
                     ("paths_branch", "branch", "all", "paths", "won"),
                     ("pairs_deck", "deck", "all", "won", "rows"),
                     ("pairs_branch", "branch", "all", "won", "rows"),
                     ("branch_field", "branch", "other", "won", "rows"))

    def _add_seat_rows(self, p: Part, nd: int) -> None:
        s = p.s
        won = s["won"]
        n = len(won)
        w = np.empty((6, n))  # won, the four paths' wins, draws
        w[0] = won
        for j, x in enumerate(WIN_PATHS):
            w[1 + j] = won & (s["path"] == self.paths.index[x])
        w[5] = s["draw"]
        rows = {"all": np.ones(n, dtype=bool), "field": ~s["mirror"],
                "other": ~s["same_branch"]}
        fams = self.SEAT_FAMILIES
        keys = np.stack([np.where(rows[r], s[k], -1) for _, k, r, _, _ in fams])
        yidx = np.array([[0, -1, -1, -1] if y == "won" else [1, 2, 3, 4]
                         for _, _, _, y, _ in fams], dtype=np.int64)
        nidx = np.array([-1 if d == "rows" else 0 for *_, d in fams], dtype=np.int64)
        sizes = {k: len(getattr(self, _CODES[k])) for k in ("deck", "policy", "branch")}
        n_k, n_t = max(sizes.values()), p.n_tables
        x = np.zeros((len(fams), 15, n_k, n_t))
        tot = np.zeros((len(fams), n_k, 3 + N_PATHS))
        e = {"d": np.zeros(n_t), "tot": np.zeros((2 + N_PATHS, nd)),
             "sa": np.zeros((N_PATHS, n_t, nd)), "sw": np.zeros((n_t, nd)),
             "maa": np.zeros((N_PATHS, n_t, nd, nd)), "maw": np.zeros((N_PATHS, n_t, nd, nd)),
             "mww": np.zeros((n_t, nd, nd))}
        fold_seat_rows(s["unit"], p.unit_tcode, np.ascontiguousarray(keys), w, yidx, nidx, x,
                       tot, 2, e["d"], e["tot"], e["sa"], e["sw"], e["maa"], e["maw"],
                       e["mww"])
        for f, (name, key, _, y, _) in enumerate(fams):
            k = sizes[key]
            stats = x[f][:, :k] if y == "paths" else x[f][[0, 1, 2, 3, 7, 11], :k]
            m = self.m[name]
            m.x = grow(m.x, stats.shape)
            m.x[:, :k, :n_t] += stats
        self._count("deck_field", (nd, 3 + N_PATHS), tot[0][:nd])
        for f, by in ((2, "deck"), (3, "policy"), (4, "branch")):
            self._count(f"group_{by}", (sizes[by], 3 + N_PATHS), tot[f][:sizes[by]])
        nb = sizes["branch"]
        self._count("branch_field", (nb, 3), tot[7][:nb, :3])
        self.expectation.add_moments(self.table_ids()[:n_t], e)
        deck, field, mirror = s["deck"], rows["field"], s["mirror"]
        self._count("deck_mirror", (nd, 2), np.stack(
            [np.bincount(deck[mirror], minlength=nd),
             np.bincount(deck[mirror], weights=w[0][mirror], minlength=nd)], axis=1))
        turns = p.g["turns"][s["game"]]
        tt = int(turns.max()) + 1
        self._count("deck_field_turns", (nd, tt), np.bincount(
            deck[field] * tt + turns[field], minlength=nd * tt).reshape(nd, tt))
        self._count("branch_same", (nb,), np.bincount(s["branch"][~rows["other"]],
                                                      minlength=nb))
        nt = len(self.tables)
        tcode = p.g["tcode"][s["game"]]
        first = s["is_first"].astype(np.int64)
        for key_name in PAIR_KEYS:
            key, k = s[key_name], sizes[key_name]
            flat = (tcode * k + key) * 2 + first
            size = nt * k * 2
            self._count(f"key_{key_name}", (nt, k, 2, 3), np.stack(
                [np.bincount(flat, minlength=size),
                 np.bincount(flat, weights=w[0], minlength=size),
                 np.bincount(flat, weights=w[5], minlength=size)],
                axis=1).reshape(nt, k, 2, 3))

    def _add_patterns(self, p: Part) -> None:
        """Each two-player deal's outcome per matchup (``nash.matchup_deals``): the row
        deck's wins and games moving first and second, for both decks."""
        s = p.s
        two = p.g["n_players"][s["game"]] == 2
        if not two.any():
            return
        idx = np.flatnonzero(two)
        game = s["game"][idx]
        # the two seats of each two-player game, as row and as column
        pair_start = np.flatnonzero(np.r_[True, game[1:] != game[:-1]])
        sizes = np.diff(np.r_[pair_start, len(game)])
        r0 = idx[pair_start[sizes == 2]]
        names = self.decks.names
        nd = len(names)
        rank = np.argsort(np.argsort(np.array(names, dtype=object)))  # name order of codes
        pair, units, vals = two_player_deals(r0.astype(np.int64), s["unit"], s["deck"],
                                             s["won"], s["is_first"], rank, nd)
        if not len(pair):
            return
        pat, counts = _count_rows(np.c_[pair, vals])
        # pairs in the order first met (deals in order; at one deal, by name)
        seen_pairs, at = np.unique(pair, return_index=True)
        first_unit = dict(zip(seen_pairs.tolist(), units[at].tolist(), strict=True))
        for pr in sorted(first_unit, key=lambda q: (first_unit[q], names[q // nd],
                                                    names[q % nd])):
            self.patterns.setdefault((pr // nd, pr % nd), {})
        for row_pat, n in zip(pat.tolist(), counts.tolist(), strict=True):
            pr = int(row_pat[0])
            d = self.patterns[(pr // nd, pr % nd)]
            key_ = tuple(float(x) for x in row_pat[1:])
            d[key_] = d.get(key_, 0) + int(n)

    def _cards_later(self, step, units: pl.DataFrame) -> None:
        """The card sums of a part, in a second thread while this one reads on (their
        compiled loops and matrix products release the GIL); one part at a time, in order."""
        self.wait()
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="rnr-cards")
        self._pending = self._pool.submit(step, units)

    def wait(self) -> None:
        """The card sums of the parts handed on so far are in."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def finish_first(self) -> None:
        self.wait()
        self.cards.finish_counts()

    # ------------------------------------------------------------------ pass 2
    def start_second(self, main_paths: pl.DataFrame, game_pairs: Sequence[str] = ()) -> None:
        """Pass 2 needs the decks' main paths (``paths.main_paths``) and the keys of
        ``PAIR_KEYS`` whose tables' compositions are not fixed (their matchups are then
        paired game by game)."""
        mp = dict(main_paths.iter_rows())
        self.second = {
            "main": np.array([WIN_PATHS.index(mp[d]) if mp.get(d) in WIN_PATHS else -1
                              for d in self.decks.names], dtype=np.int64),
            "moments": Moments(1), "main_counts": np.zeros((N_PATHS, 3)),
            "game_pairs": list(game_pairs), "pairs": {}, "pair_moments": {},
        }

    def paths_expected(self) -> pl.DataFrame:
        """The deck-pool expectation (``paths.path_expectation``) over the decks that
        played, in the order of their names."""
        seats = self._deck_seats()
        played = [i for i in np.argsort(np.array(self.decks.names, dtype=object), kind="stable")
                  if seats[i] > 0]
        return self.expectation.frame(np.array(played, dtype=np.int64))

    def _deck_seats(self) -> np.ndarray:
        group = self.c.get("group_deck")
        out = np.zeros(len(self.decks))
        if group is not None:
            out[:group.shape[0]] = group[:, 0]
        return out

    def add_second(self, games: pl.DataFrame, seats: pl.DataFrame) -> None:
        """Pass 2 over the same part (``start_second`` first)."""
        sec = self.second
        assert sec is not None, "start_second first"
        p = self.part(games, seats, full=bool(sec["game_pairs"]))
        s = p.s
        if p.G == 0 or not len(s["deck"]):
            return
        self._cards_later(self.cards.add_deals, self.units(p))
        won = s["won"]
        # win rates by main path, in games where another main path sits
        main = sec["main"][s["deck"]]
        npv = N_PATHS + 1
        present = np.bincount(s["game"] * npv + main + 1, minlength=p.G * npv).reshape(
            p.G, npv) > 0
        mixed = present.sum(axis=1)[s["game"]] > 1
        keep = mixed & (main >= 0)
        c = Cells(p, main[keep], s["unit"][keep], N_PATHS,
                  {"won": won[keep].astype(np.float64)})
        sec["moments"].add(c, [c.sums["won"]], c.sums["rows"])
        n_pl = p.g["n_players"][s["game"]][keep]
        mc = sec["main_counts"]
        for j in np.unique(main[keep]).tolist():
            mc[j, 0] = max(mc[j, 0], n_pl[main[keep] == j].max())
        mc[:, 1] += np.bincount(main[keep], minlength=N_PATHS)
        mc[:, 2] += np.bincount(main[keep], weights=won[keep], minlength=N_PATHS)
        if sec["game_pairs"]:
            self._add_game_pairs(p, sec["game_pairs"])

    def _add_game_pairs(self, p: Part, keys: Sequence[str]) -> None:
        """Tables of changing composition: the head-to-head counts and moments game by
        game (``matchups.pair_counts_by_game``, ``matchup_pairs``) over this part."""
        s = p.s
        sg = pl.DataFrame({
            "game_id": p.games["game_id"].to_numpy()[s["game"]],
            "table_id": pl.Series(p.unit_table[s["unit"]], dtype=pl.Int32),
            "deal": p.g["deal"][s["game"]], "seat": s["seat"],
            "deck": p.seats["deck"],
            "branch": pl.Series(np.array(self.branches.names, dtype=object)[s["branch"]],
                                dtype=pl.String),
            "won": s["won"], "draw": s["draw"], "is_first": s["is_first"],
            "n_players": p.g["n_players"][s["game"]]}).lazy()
        sec = self.second
        for key in keys:
            counts = mu.pair_counts_by_game(sg, key).collect()
            pairs = mu.matchup_pairs(sg, key).with_columns(
                pl.col("won").cast(pl.Int64).alias("wins"), pl.lit(1, pl.Int64).alias("n"))
            moments = deal_moments(deal_sums(pairs, "wins", "n", by=["row", "col"]),
                                   ["row", "col"]).collect()
            sec["pairs"][key] = add_frames(sec["pairs"].get(key), counts, ["row", "col"])
            sec["pair_moments"][key] = add_frames(sec["pair_moments"].get(key), moments,
                                                   ["row", "col", "table_id"])

    # ------------------------------------------------------------------ results
    def table_ids(self) -> np.ndarray:
        return np.array(self.tables.names, dtype=np.int64)

    def key_series(self, key: str) -> pl.Series:
        names = getattr(self, _CODES[key]).names
        return pl.Series(key, names, dtype=pl.String)

    def moments(self, name: str, key: str | None, r: int = 0, column: str | None = None,
                values: pl.Series | None = None) -> pl.LazyFrame:
        """The moments ``name`` as ``stats.deal_moments`` gives them, keyed by ``key``'s
        names (as column ``column``) or by ``values``."""
        keys = {}
        if key is not None:
            keys[column or key] = (values if values is not None
                                   else self.key_series(key)).alias(column or key)
        return self.m[name].frame(keys, self.table_ids(), r)

    def count(self, name: str, shape: Sequence[int]) -> np.ndarray:
        a = self.c.get(name)
        return np.zeros(shape) if a is None else grow(a, shape)

    def state_size(self) -> int:
        """How many numbers the fold keeps (everything but the part being read): counts,
        moments, deal patterns and the card sums; it does not grow with the games."""
        n = sum(a.size for a in self.c.values()) + sum(m.x.size for m in self.m.values())
        n += sum(len(d) * 9 for d in self.patterns.values())
        n += self.cards.state_size()
        e = self.expectation
        n += sum(a.size for a in (e.tot, e.d, e.sa, e.sw, e.maa, e.maw, e.mww))
        if self.second is not None:
            n += self.second["moments"].x.size
            n += sum(f.height * f.width for key in ("pairs", "pair_moments")
                     for f in self.second[key].values())
        return n


_CODES = {"deck": "decks", "policy": "policies", "branch": "branches"}


def _count_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a non-negative int64 matrix and how often each comes: one
    integer per row (mixed radix) when it fits in 63 bits, else ``np.unique(axis=0)``."""
    base = rows.max(axis=0) + 1 if len(rows) else np.ones(rows.shape[1], dtype=np.int64)
    if float(np.prod(base.astype(np.float64))) >= 2.0**62:
        return np.unique(rows, axis=0, return_counts=True)
    code = np.zeros(len(rows), dtype=np.int64)
    for j in range(rows.shape[1]):
        code = code * base[j] + rows[:, j]
    vals, counts = np.unique(code, return_counts=True)
    out = np.empty((len(vals), rows.shape[1]), dtype=np.int64)
    for j in range(rows.shape[1] - 1, -1, -1):
        out[:, j] = vals % base[j]
        vals = vals // base[j]
    return out, counts


def add_frames(total: pl.DataFrame | None, part: pl.DataFrame, keys: list[str]
                ) -> pl.DataFrame:
    """Sums of two frames of sums keyed by ``keys``."""
    if total is None:
        return part
    both = pl.concat([total, part], how="vertical_relaxed")
    return both.group_by(keys, maintain_order=True).agg(pl.exclude(keys).sum())
