"""Victory paths: how wins split between life, attack, petition and deck-out (Art. III).

Art. III: "No path is superior to another." If that held in play, each path would take a
quarter of the wins; ``path_shares`` measures the distance from that. But a flat 25% tests
the deck pool as much as the paths: if most decks aim at Attack, Attack takes most wins
even when no deck wins more than its share. ``path_expectation`` measures a path against
the deck-pool expectation (every deck winning its fair share with its own path mix), and
``main_path_win_rates`` gives the win rates of decks grouped by the path they win by.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from rnr_sim.analytics.decks import WIN_PATHS, path_share_columns
from rnr_sim.analytics.stats import Z95, chi2_sf, rate, ratio_by_deal, two_sided_p
from rnr_sim.analytics.units import grow, table_se_from_sums

PATH_COUNT_COLUMNS = ("games", "wins", "draws", *[f"wins_{p}" for p in WIN_PATHS])


def overall_path_counts(games: pl.LazyFrame) -> pl.LazyFrame:
    """One row, group ``all``: ``games``, ``wins`` (decided games), ``draws``, ``wins_<path>``.

    Counted over games (each decided game has one winner, so one win).
    """
    return games.select(
        pl.lit("all").alias("group"),
        pl.len().cast(pl.Int64).alias("games"),
        (pl.col("winner_seat") >= 0).sum().cast(pl.Int64).alias("wins"),
        (pl.col("winner_seat") == -1).sum().cast(pl.Int64).alias("draws"),
        *[
            ((pl.col("winner_seat") >= 0) & (pl.col("path") == p)).sum().cast(pl.Int64).alias(
                f"wins_{p}"
            )
            for p in WIN_PATHS
        ],
    )


def path_counts(seat_games: pl.LazyFrame, by: str) -> pl.LazyFrame:
    """One row per value of ``by`` (deck, policy, branch...), as column ``group``.

    Over that group's seat rows: ``games``, ``wins`` (won), ``draws`` (drawn games),
    ``wins_<path>`` (won by that path).
    """
    return (
        seat_games.group_by(pl.col(by).alias("group"))
        .agg(
            pl.len().alias("games"),
            pl.col("won").sum().alias("wins"),
            pl.col("draw").sum().alias("draws"),
            *[(pl.col("won") & (pl.col("path") == p)).sum().alias(f"wins_{p}") for p in WIN_PATHS],
        )
        .with_columns([pl.col(c).cast(pl.Int64) for c in PATH_COUNT_COLUMNS])
        .sort("group")
    )


def path_shares(counts: pl.LazyFrame) -> pl.LazyFrame:
    """Add each path's share of the wins, draws' share of games, and the distance from uniform.

    ``share_<path> = wins_<path> / wins`` with its 95% Wilson interval
    (``share_<path>_lo``/``_hi``); ``draw_rate = draws / games``;
    ``max_gap = max_path |share_<path> - 1/4|`` (the largest departure, in share of wins,
    from "no path is superior"); ``chi2`` = Pearson's chi-square of the four win counts
    against equal expected counts (df = 3) and ``chi2_p`` its p-value. Nulls where wins = 0.
    """
    out = counts.with_columns(*path_share_columns(), rate("draws", "games").alias("draw_rate"))
    gap = pl.max_horizontal([(pl.col(f"share_{p}") - 0.25).abs() for p in WIN_PATHS])
    out = out.with_columns(pl.when(pl.col("wins") > 0).then(gap).otherwise(None).alias("max_gap"))

    expected = pl.col("wins").cast(pl.Float64) / len(WIN_PATHS)
    chi2 = pl.sum_horizontal(
        [(pl.col(f"wins_{p}") - expected) ** 2 / expected for p in WIN_PATHS]
    )
    out = out.with_columns(pl.when(pl.col("wins") > 0).then(chi2).otherwise(None).alias("chi2"))
    df = len(WIN_PATHS) - 1
    return out.with_columns(
        pl.col("chi2")
        .map_elements(lambda x: chi2_sf(x, df), return_dtype=pl.Float64)
        .alias("chi2_p")
    )


# ---------------------------------------------------------------- the deck-pool expectation
def _with_deal(seat_games: pl.LazyFrame, games: pl.LazyFrame) -> pl.LazyFrame:
    if "deal" in seat_games.collect_schema().names():
        return seat_games
    return seat_games.join(games.select("game_id", "deal"), on="game_id", how="left")


def _unit_matrix(df: pl.DataFrame, cols: list[str], decks: list[str], n_units: int) -> np.ndarray:
    """float64[n_units, len(decks), len(cols)]: per-deal sums of ``cols`` for each deck."""
    out = np.zeros((n_units, len(decks), len(cols)))
    d = df["deck"].cast(pl.Enum(decks)).to_physical().cast(pl.Int64).to_numpy()
    flat = df["unit"].to_numpy() * len(decks) + d
    for j, c in enumerate(cols):
        out[:, :, j] = np.bincount(flat, weights=df[c].cast(pl.Float64).to_numpy(),
                                   minlength=n_units * len(decks)).reshape(n_units, len(decks))
    return out


def path_expectation(deal_counts: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Each path's share of the wins against what the deck pool alone would give it.

    "A path is dominant" means: decks win by it more than their own play style explains.
    With ``n_d`` the games of deck d and ``mix_dp = wins_dp / wins_d`` the share of d's
    wins taken by path p, the **deck-pool expectation** is the share p would take if
    every deck won its fair share (1/P of its games, whatever P) with its own path mix:

        ``expected = Σ_d (n_d / P) · mix_dp / Σ_d (n_d / P) = Σ_d n_d · mix_dp / Σ_d n_d``

    (decks weighted by their seats). Per path: ``wins``, ``share`` (observed:
    ``wins_p / wins``), ``expected``, ``gap = share - expected`` (positive: the decks that
    win by p win more than their fair share) and ``flat = 1/4`` (Art. III's "no path is
    superior", a reference line only). Intervals (``_lo``/``_hi``, 95%: estimate ± 1.96 se)
    and ``gap_se``, ``gap_p`` (two-sided normal) come from per-deal linearisations (delta
    method), the deal being the independent unit and tables the strata
    (``units.table_se``). Nulls where there are no wins. ``decks`` counts the
    decks that won by p at least once.
    """
    df = deal_counts.lazy().collect() if isinstance(deal_counts, pl.LazyFrame) else deal_counts
    decks = df["deck"].unique().sort().to_list()
    n_units = int(df["unit"].max()) + 1 if df.height else 0
    cube = _unit_matrix(df, list(EXPECTATION_COLUMNS), decks, n_units) if df.height else \
        np.zeros((0, 0, len(EXPECTATION_COLUMNS)))
    tables = np.zeros(n_units, dtype=np.int64)
    if df.height:
        tables[df["unit"].to_numpy()] = df["table_id"].to_numpy()
    acc = PathExpectation()
    acc.add(np.ascontiguousarray(cube.transpose(2, 0, 1)), tables)
    return acc.frame(np.arange(len(decks)))


#: The per-(deal, deck) counts the deck-pool expectation reads, in ``_unit_matrix`` order.
EXPECTATION_COLUMNS = ("games", "wins", *[f"wins_{p}" for p in WIN_PATHS])


class PathExpectation:
    """``path_expectation`` from sums that a run read part by part adds up (``add``, each
    deal once): per deck its totals, and per table the deals ``d`` and, for each path,
    the first and second moments of the per-deal vectors of the decks' wins by the path
    ``a`` and their wins ``w``. Each linearisation of the module's estimates is linear in
    (``a``, ``w``) with coefficients of the totals (the path's share, each deck's mix and
    weight), so its per-table sums, and ``units.table_se``, are quadratic forms in those
    moments (``frame``)."""

    def __init__(self) -> None:
        self.tables: dict[int, int] = {}
        self.tot = np.zeros((len(EXPECTATION_COLUMNS), 0))  # [column, deck]
        self.d = np.zeros(0)
        n = len(WIN_PATHS)
        self.sa, self.sw = np.zeros((n, 0, 0)), np.zeros((0, 0))  # [path,] table, deck
        self.maa, self.maw = np.zeros((n, 0, 0, 0)), np.zeros((n, 0, 0, 0))
        self.mww = np.zeros((0, 0, 0))  # [table, deck, deck]

    def add(self, counts: np.ndarray, tables: np.ndarray) -> None:
        """Deals, each once, table by table: ``counts`` [EXPECTATION_COLUMNS, deal, deck]
        of per-deal counts (decks in a fixed order; more may come later), ``tables``
        [deal] their table ids."""
        if not len(tables):
            return
        for t in np.unique(tables).tolist():
            self.tables.setdefault(int(t), len(self.tables))
        code = np.array([self.tables[int(t)] for t in tables.tolist()], dtype=np.int64)
        n_t, n_d, n_p = len(self.tables), counts.shape[2], len(WIN_PATHS)
        self.tot = grow(self.tot, (self.tot.shape[0], n_d))
        for j in range(counts.shape[0]):  # over the deals: a row sum per column
            self.tot[j, :n_d] += counts[j].sum(axis=0)
        self.d = grow(self.d, (n_t,))
        self.sa, self.sw = grow(self.sa, (n_p, n_t, n_d)), grow(self.sw, (n_t, n_d))
        self.maa = grow(self.maa, (n_p, n_t, n_d, n_d))
        self.maw = grow(self.maw, (n_p, n_t, n_d, n_d))
        self.mww = grow(self.mww, (n_t, n_d, n_d))
        w = counts[1]
        cuts = np.flatnonzero(np.r_[True, code[1:] != code[:-1], True])
        for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
            t, ws = int(code[lo]), w[lo:hi]
            self.d[t] += hi - lo
            self.sw[t, :n_d] += ws.sum(axis=0)
            self.mww[t, :n_d, :n_d] += ws.T @ ws
            for j in range(n_p):
                a = counts[2 + j, lo:hi]
                self.sa[j, t, :n_d] += a.sum(axis=0)
                self.maa[j, t, :n_d, :n_d] += a.T @ a
                self.maw[j, t, :n_d, :n_d] += a.T @ ws

    def add_moments(self, table_ids: np.ndarray, m: dict[str, np.ndarray]) -> None:
        """Sums ``add`` would add, already summed over some deals (``m``: ``d`` [table],
        ``tot`` [column, deck], ``sa``, ``sw``, ``maa``, ``maw``, ``mww`` as the
        attributes, on the tables ``table_ids``): the report fold's compiled pass."""
        for t in table_ids.tolist():
            self.tables.setdefault(int(t), len(self.tables))
        code = np.array([self.tables[int(t)] for t in table_ids.tolist()], dtype=np.int64)
        n_t, n_d, n_p = len(self.tables), m["tot"].shape[1], len(WIN_PATHS)
        self.tot = grow(self.tot, (self.tot.shape[0], n_d))
        self.tot[:, :n_d] += m["tot"]
        self.d = grow(self.d, (n_t,))
        self.sa, self.sw = grow(self.sa, (n_p, n_t, n_d)), grow(self.sw, (n_t, n_d))
        self.maa = grow(self.maa, (n_p, n_t, n_d, n_d))
        self.maw = grow(self.maw, (n_p, n_t, n_d, n_d))
        self.mww = grow(self.mww, (n_t, n_d, n_d))
        self.d[code] += m["d"]
        self.sw[code, :n_d] += m["sw"]
        self.mww[code, :n_d, :n_d] += m["mww"]
        self.sa[:, code, :n_d] += m["sa"]
        self.maa[:, code, :n_d, :n_d] += m["maa"]
        self.maw[:, code, :n_d, :n_d] += m["maw"]

    def frame(self, decks: np.ndarray) -> pl.DataFrame:
        """The ``path_expectation`` table over ``decks`` (indices into the deck axis of
        ``add``: the decks that played, in the order of their names)."""
        n_d = self.tot.shape[1]
        decks = np.asarray(decks, dtype=np.int64)
        tot = self.tot[:, decks] if n_d else np.zeros((len(EXPECTATION_COLUMNS), 0))
        games_d, wins_d, a_tot = tot[0], tot[1], tot[2:].T  # a_tot [deck, path]
        total_games, total_wins = float(games_d.sum()), float(wins_d.sum())
        order = [self.tables[t] for t in sorted(self.tables)]
        d = self.d[order] if len(order) else np.zeros(0)
        ok = total_wins > 0 and d.sum() >= 2
        ix = np.ix_(order, decks)
        rows = []
        for j, p in enumerate(WIN_PATHS):
            row: dict = {"path": p, "wins": int(a_tot[:, j].sum()) if len(decks) else 0,
                         "flat": 1.0 / len(WIN_PATHS)}
            if not ok:
                rows.append(row)
                continue
            won = wins_d > 0
            mix = np.where(won, a_tot[:, j] / np.where(won, wins_d, 1.0), 0.0)
            weight = games_d / total_games  # the design fixes each deck's games
            coef = np.where(won, weight / np.where(won, wins_d, 1.0), 0.0)
            share = row["wins"] / total_wins
            expected = float((weight * mix).sum())
            # per deal: z_share = (Σ a - share Σ w) / W, z_exp = Σ coef (a - mix w)
            c_share = (np.full(len(decks), 1.0 / total_wins),
                       np.full(len(decks), -share / total_wins))
            c_exp = (coef, -coef * mix)
            c_gap = (c_share[0] - c_exp[0], c_share[1] - c_exp[1])
            sa, sw = self.sa[j][ix], self.sw[ix]
            maa = self.maa[j][np.ix_(order, decks, decks)]
            maw = self.maw[j][np.ix_(order, decks, decks)]
            mww = self.mww[np.ix_(order, decks, decks)]

            se_s, se_e, se_g = (_quadratic_se(d, sa, sw, maa, maw, mww, c)
                                for c in (c_share, c_exp, c_gap))
            gap = share - expected
            row.update(
                share=share, share_lo=share - Z95 * se_s, share_hi=share + Z95 * se_s,
                expected=expected, expected_lo=expected - Z95 * se_e,
                expected_hi=expected + Z95 * se_e, gap=gap, gap_lo=gap - Z95 * se_g,
                gap_hi=gap + Z95 * se_g, gap_se=se_g,
                gap_p=two_sided_p(gap / se_g) if se_g > 0 else (1.0 if gap == 0 else 0.0),
                decks=int((a_tot[:, j] > 0).sum()),
            )
            rows.append(row)
        schema = {"path": pl.String, "wins": pl.Int64, "share": pl.Float64,
                  "share_lo": pl.Float64, "share_hi": pl.Float64, "expected": pl.Float64,
                  "expected_lo": pl.Float64, "expected_hi": pl.Float64, "gap": pl.Float64,
                  "gap_lo": pl.Float64, "gap_hi": pl.Float64, "gap_se": pl.Float64,
                  "gap_p": pl.Float64, "flat": pl.Float64, "decks": pl.Int64}
        return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema)


def _quadratic_se(d: np.ndarray, sa: np.ndarray, sw: np.ndarray, maa: np.ndarray,
                  maw: np.ndarray, mww: np.ndarray, c: tuple[np.ndarray, np.ndarray]) -> float:
    """``units.table_se`` of the per-deal linearisation ``z = ca·a + cw·w`` from the
    per-table moments of ``a`` and ``w`` (``PathExpectation``)."""
    ca, cw = c
    s = sa @ ca + sw @ cw
    ss = (np.einsum("tij,i,j->t", maa, ca, ca) + 2.0 * np.einsum("tij,i,j->t", maw, ca, cw)
          + np.einsum("tij,i,j->t", mww, cw, cw))
    return table_se_from_sums(d, s, ss)


def main_paths(deck_summary: pl.DataFrame) -> pl.DataFrame:
    """Each deck's ``main_path``: the path that takes the largest share of its wins (ties
    to the earlier path of Art. III's order); null for a deck that never won."""
    counts = deck_summary.select("deck", *[f"wins_{p}" for p in WIN_PATHS])
    out = []
    for r in counts.iter_rows(named=True):
        best = max(WIN_PATHS, key=lambda p: (r[f"wins_{p}"] or 0, -WIN_PATHS.index(p)))
        out.append((r["deck"], best if (r[f"wins_{best}"] or 0) > 0 else None))
    return pl.DataFrame(out, schema={"deck": pl.String, "main_path": pl.String}, orient="row")


def main_path_win_rates(
    seat_games: pl.LazyFrame, games: pl.LazyFrame, mains: pl.DataFrame
) -> pl.DataFrame:
    """Win rates of the decks grouped by their main path (``main_paths``).

    Per main path: ``decks`` (names, comma-separated), ``games`` and ``wins`` over the
    group's seat rows in games where some opponent's deck has another main path (games
    inside the group are left out: there the group wins exactly its share by
    construction), ``win_rate = wins / games`` with its 95% interval, the deal as the unit
    (``stats.ratio_by_deal``), ``win_rate_deals`` and ``fair = 1 / n_players``.
    """
    sg = _with_deal(seat_games, games).join(mains.lazy(), on="deck", how="left")
    mixed = sg.group_by("game_id").agg(pl.col("main_path").n_unique().alias("groups"))
    rows = (
        sg.join(mixed, on="game_id", how="inner")
        .filter((pl.col("groups") > 1) & pl.col("main_path").is_not_null())
        .collect()
    )
    rates = ratio_by_deal(rows, "won", pl.lit(1), by=["main_path"], name="win_rate").collect()
    players = rows.group_by("main_path").agg(pl.col("n_players").max().alias("players"),
                                             pl.len().alias("games"),
                                             pl.col("won").sum().alias("wins"))
    return main_path_table(rates, players, mains)


def main_path_table(rates: pl.DataFrame, players: pl.DataFrame, mains: pl.DataFrame
                    ) -> pl.DataFrame:
    """``main_path_win_rates``' table from its parts: per main path the win rate's
    interval (``ratio_by_deal``), ``players`` (players, games, wins) and the decks'
    main paths ``mains``."""
    info = rates.join(players, on="main_path", how="left")
    names = mains.filter(pl.col("main_path").is_not_null()).group_by("main_path").agg(
        pl.col("deck").sort().str.join(", ").alias("decks"))
    by_path = {r["main_path"]: r for r in info.iter_rows(named=True)}
    out = []
    for p in WIN_PATHS:
        deck_names = names.filter(pl.col("main_path") == p)["decks"].to_list()
        r: dict = {"main_path": p, "decks": deck_names[0] if deck_names else "",
                   "games": 0, "wins": 0}
        got = by_path.get(p)
        if got is not None:
            r.update({k: got[k] for k in ("games", "wins", "win_rate", "win_rate_lo",
                                          "win_rate_hi", "win_rate_deals")})
            r["fair"] = 1.0 / int(got["players"])
        out.append(r)
    schema = {"main_path": pl.String, "decks": pl.String, "games": pl.Int64, "wins": pl.Int64,
              "win_rate": pl.Float64, "win_rate_lo": pl.Float64, "win_rate_hi": pl.Float64,
              "win_rate_deals": pl.Int64, "fair": pl.Float64}
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in out], schema=schema)
