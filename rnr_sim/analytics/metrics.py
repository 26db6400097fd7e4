"""Every metric of a run, computed once: what the report (and a notebook) reads.

The run is read part by part (``fold.RunFold``: two passes over its parts, memory that
does not grow with the games); each table below is the metric module's definition
applied to the folded sums.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from rnr_sim.analytics import findings as fnd
from rnr_sim.analytics import matchups as mu
from rnr_sim.analytics.branches import branch_members, branch_table, deck_cards, main_branches
from rnr_sim.analytics.cards import card_masks, card_metrics, flag_beyond_band, no_effect_band
from rnr_sim.analytics.decks import (
    deck_names,
    deck_table,
    path_shares_from_moments,
    with_path_intervals,
)
from rnr_sim.analytics.fold import (
    N_PATHS,
    PAIR_KEYS,
    PATH_GROUPS,
    SECOND_GAME_COLUMNS,
    SECOND_SEAT_COLUMNS,
    RunFold,
)
from rnr_sim.analytics.length import hist_quantile, length_from_histogram
from rnr_sim.analytics.lp import lp_bands
from rnr_sim.analytics.paths import PATH_COUNT_COLUMNS, main_path_table, main_paths, path_shares
from rnr_sim.analytics.run import Run
from rnr_sim.analytics.seats import SCOPES, seat_interval_frame, seat_table
from rnr_sim.analytics.stats import ratio_from_moments
from rnr_sim.runs.schema import WIN_PATHS


@dataclass(frozen=True)
class RunShape:
    """How many games, deals and tables the run has (what the banners and the reproduce
    command say), counted as the run is read."""

    games: int
    deals: int  # (table, deal) units
    tables: int
    games_per_table: dict[int, int]
    deals_per_table: dict[int, int]


@dataclass
class Metrics:
    """The run's metric tables (small polars DataFrames) and the verdict's findings."""

    run: Run
    players: int
    decks: pl.DataFrame  # deck_summary + main_branch
    deck_order: list[str]  # decks by win rate, best first
    matchups: pl.DataFrame  # matchup_matrix over decks, long form
    nash: pl.DataFrame
    paths_overall: pl.DataFrame
    paths_by_deck: pl.DataFrame
    paths_by_policy: pl.DataFrame
    paths_by_branch: pl.DataFrame
    seats: pl.DataFrame
    branches: pl.DataFrame  # main_branches: deck -> main branch
    branch_summary: pl.DataFrame
    branch_order: list[str]
    branch_matchups: pl.DataFrame
    cards: pl.DataFrame | None  # card_metrics per card, with catalog type/branch/rarity
    cards_by_deck: pl.DataFrame | None
    length: pl.DataFrame
    length_hist: pl.DataFrame
    lp: pl.DataFrame | None
    candidates: list[fnd.Finding]  # every candidate, judged (fnd.judge)
    findings: list[fnd.Finding]
    # paths against the deck-pool expectation (paths.path_expectation) and decks grouped
    # by their main path (paths.main_path_win_rates); deck -> main path
    paths_expected: pl.DataFrame | None = None
    paths_by_main_path: pl.DataFrame | None = None
    deck_main_paths: pl.DataFrame | None = None
    shape: RunShape | None = None
    # the adjusted IWD's no-effect band (cards.no_effect_band): a card is flagged only
    # beyond it; 0.0 when the run has no plain card to measure it on
    card_band: float = 0.0

    @property
    def fair(self) -> float:
        return 1.0 / self.players


def _players(run: Run, fold: RunFold) -> int:
    p = run.manifest.get("players")
    if isinstance(p, int) and p >= 2:
        return p
    if not fold.players:
        return 2
    return max(fold.players, key=lambda k: (fold.players[k], -k))


def _field_agg(fold: RunFold) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Per deck with games against the field: counts and turn quartiles
    (``decks.deck_summary``'s ``agg``); per deck with mirror games: those."""
    nd = len(fold.decks)
    field = fold.count("deck_field", (nd, 3 + N_PATHS))
    turns = fold.count("deck_field_turns", (nd, 1))
    mirror = fold.count("deck_mirror", (nd, 2))
    counts = list(PATH_COUNT_COLUMNS)
    rows, mirrors = [], []
    for i, name in enumerate(fold.decks.names):
        if field[i, 0] > 0:
            vals = np.flatnonzero(turns[i] > 0)
            cnt = turns[i, vals]
            rows.append({"deck": name, **{c: int(v) for c, v in zip(counts, field[i],
                                                                   strict=True)},
                         "turns_median": hist_quantile(vals, cnt, 0.5),
                         "turns_q1": hist_quantile(vals, cnt, 0.25),
                         "turns_q3": hist_quantile(vals, cnt, 0.75)})
        if mirror[i, 0] > 0:
            mirrors.append({"deck": name, "mirror_games": int(mirror[i, 0]),
                            "mirror_wins": int(mirror[i, 1])})
    schema = {"deck": pl.String, **dict.fromkeys(counts, pl.Int64),
              **dict.fromkeys(("turns_median", "turns_q1", "turns_q3"), pl.Float64)}
    return (pl.LazyFrame(rows, schema=schema),
            pl.LazyFrame(mirrors, schema={"deck": pl.String, "mirror_games": pl.Int64,
                                          "mirror_wins": pl.Int64}))


def _path_counts(fold: RunFold, name: str, groups: list[str]) -> pl.LazyFrame:
    """``paths.path_counts`` (or ``overall_path_counts``) from the fold's counts."""
    a = fold.count(name, (len(groups), 3 + N_PATHS))
    cols = list(PATH_COUNT_COLUMNS)
    rows = [{"group": g, **{c: int(v) for c, v in zip(cols, a[i], strict=True)}}
            for i, g in enumerate(groups) if a[i, 0] > 0]
    return pl.LazyFrame(rows, schema={"group": pl.String, **dict.fromkeys(cols, pl.Int64)}
                        ).sort("group")


def _path_moments(fold: RunFold, name: str, key: str | None) -> dict[str, pl.LazyFrame]:
    return {p: fold.moments(name, key, r=j) for j, p in enumerate(WIN_PATHS)}


def _key_counts(fold: RunFold, key: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per (table, key, seat order) the seat rows, wins and draws
    (``matchups.key_counts_by_table``, summed over deals); per table its games and
    players (``matchups.table_games``)."""
    nt, names = len(fold.tables), fold.key_series(key)
    a = fold.count(f"key_{key}", (nt, len(names), 2, 3))
    t, k, f = np.nonzero(a[..., 0] > 0)
    ids = fold.table_ids()
    counts = pl.DataFrame({
        "table_id": pl.Series(ids[t], dtype=pl.Int32), "row": names.gather(k),
        "is_first": f.astype(bool), "n": a[t, k, f, 0].astype(np.int64),
        "wins": a[t, k, f, 1].astype(np.int64), "draws": a[t, k, f, 2].astype(np.int64)})
    games = fold.count("table_games", (nt,))
    played = np.flatnonzero(games > 0)
    tables = pl.DataFrame({
        "table_id": pl.Series(ids[played], dtype=pl.Int32),
        "table_games": games[played].astype(np.int64),
        "n_players": fold.count("table_np_max", (nt,))[played].astype(np.int64),
        "n_players_min": fold.count("table_np_min", (nt,))[played].astype(np.int64)})
    return counts, tables


def _pairs(fold: RunFold, key: str, counts: pl.DataFrame, comp: pl.DataFrame | None
           ) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Pair counts and the matchups' per-deal intervals for ``key``: through the table
    compositions when fixed (``comp``), else game by game (pass 2)."""
    if comp is not None:
        moments = mu.pair_moments_by_table(fold.moments(f"pairs_{key}", key, column="row"),
                                           comp.lazy())
        return (mu.pair_counts_by_table(counts.lazy(), comp.lazy()),
                mu.intervals_from_moments(moments).collect().lazy())
    sec = fold.second
    assert sec is not None
    return (sec["pairs"][key].lazy(),
            mu.intervals_from_moments(sec["pair_moments"][key].lazy()).collect().lazy())


def _seats(fold: RunFold) -> pl.DataFrame:
    cells = fold.c.get("seat_cells", np.zeros((0, 4)))
    k = np.flatnonzero(cells[:, 0] > 0)
    cell_frame = pl.LazyFrame({
        "n_players": pl.Series(k // 4, dtype=pl.Int8), "mirror": (k // 2) % 2 == 1,
        "p2_used": k % 2 == 1, "games": cells[k, 0].astype(np.int64),
        "first_wins": cells[k, 1].astype(np.int64), "other_wins": cells[k, 2].astype(np.int64),
        "draws": cells[k, 3].astype(np.int64)})
    players = pl.LazyFrame({"n_players": pl.Series(sorted(fold.players), dtype=pl.Int8)})
    scopes = {}
    for i, scope in enumerate(SCOPES):
        width = fold.m[f"seat_{i}"].x.shape[1]
        values = pl.Series("n_players", range(width), dtype=pl.Int8)
        scopes[scope] = ratio_from_moments(fold.moments(f"seat_{i}", "n_players",
                                                        values=values),
                                           ["n_players"], "first_win_rate")
    return seat_table(cell_frame, players, seat_interval_frame(scopes)).collect()


def _branch_summary(fold: RunFold, branches: pl.DataFrame) -> pl.DataFrame:
    names = fold.branches.names
    nb = len(names)
    field = fold.count("branch_field", (nb, 3))
    same = fold.count("branch_same", (nb,))
    agg = pl.LazyFrame([{"branch": b, "games": int(field[i, 0]), "wins": int(field[i, 1]),
                         "draws": int(field[i, 2])} for i, b in enumerate(names)
                        if field[i, 0] > 0],
                       schema={"branch": pl.String, "games": pl.Int64, "wins": pl.Int64,
                               "draws": pl.Int64})
    same_frame = pl.LazyFrame([{"branch": b, "same_branch_games": int(same[i])}
                               for i, b in enumerate(names) if same[i] > 0],
                              schema={"branch": pl.String, "same_branch_games": pl.Int64})
    wr = ratio_from_moments(fold.moments("branch_field", "branch"), ["branch"], "win_rate")
    return branch_table(branch_members(branches), agg, same_frame, wr).collect()


def _length(fold: RunFold) -> tuple[pl.DataFrame, pl.DataFrame]:
    a = fold.count("length", (len(fold.paths), 1))
    p, t = np.nonzero(a > 0)
    hist = pl.DataFrame({"turns": pl.Series(t, dtype=pl.Int32),
                         "path": pl.Series(fold.paths.names, dtype=pl.String).gather(p),
                         "games": a[p, t].astype(np.int64)}).sort("turns", "path")
    return length_from_histogram(hist).collect(), hist


def _patterns(fold: RunFold) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """The matchups' deal outcomes (``nash.deal_patterns``) by deck name."""
    names = fold.decks.names
    out = {}
    for (a, b), counts in fold.patterns.items():
        keys = sorted(counts)
        out[(names[a], names[b])] = (np.array(keys, dtype=np.float64),
                                     np.array([counts[k] for k in keys], dtype=np.int64))
    return out


def _main_path_rates(fold: RunFold, mains: pl.DataFrame) -> pl.DataFrame:
    sec = fold.second
    assert sec is not None
    values = pl.Series("main_path", WIN_PATHS, dtype=pl.String)
    rates = ratio_from_moments(sec["moments"].frame({"main_path": values}, fold.table_ids()),
                               ["main_path"], "win_rate").collect()
    mc = sec["main_counts"]
    players = pl.DataFrame([{"main_path": p, "players": int(mc[j, 0]), "games": int(mc[j, 1]),
                             "wins": int(mc[j, 2])} for j, p in enumerate(WIN_PATHS)
                            if mc[j, 1] > 0],
                           schema={"main_path": pl.String, "players": pl.Int64,
                                   "games": pl.Int64, "wins": pl.Int64})
    return main_path_table(rates, players, mains)


def _shape(fold: RunFold) -> RunShape:
    nt = len(fold.tables)
    games, deals = fold.count("table_games", (nt,)), fold.count("table_deals", (nt,))
    ids = fold.table_ids().tolist()
    return RunShape(int(games.sum()), int(deals.sum()), int((games > 0).sum()),
                    {t: int(g) for t, g in zip(ids, games, strict=True) if g > 0},
                    {t: int(d) for t, d in zip(ids, deals, strict=True) if d > 0})


def compute_metrics(run: Run, progress: Callable[[int], None] | None = None,
                    while_cards: Callable[[Metrics], None] | None = None) -> Metrics:
    """Compute every metric of ``run``, reading its parts twice (``fold.RunFold``);
    ``progress`` is told the games of each part read. ``while_cards``, when given, is
    handed every table but the cards' and the win rates by main path (those None, no
    findings yet) as soon as pass 1 gives them, before pass 2 reads the run again: the
    report draws its figures meanwhile."""
    tick = progress or (lambda n: None)
    branches = main_branches(run.decks, run.cards).collect()
    fold = RunFold(branches, card_masks(run.decks))
    for games, seats in run.deal_parts():
        fold.add(games, seats)
        tick(games.height)
    fold.finish_first()
    players = _players(run, fold)
    vs_deck = run.manifest.get("vs")  # rnr-sim run --vs: one deck against the field
    vs_deck = vs_deck if isinstance(vs_deck, str) else None

    agg, mirrors = _field_agg(fold)
    wr = ratio_from_moments(fold.moments("field_wr", "deck"), ["deck"], "win_rate")
    shares = path_shares_from_moments(_path_moments(fold, "field_paths", "deck"), ["deck"])
    deck_df = deck_table(deck_names(run.decks), agg, mirrors, wr, shares).collect().join(
        branches.select("deck", "main_branch"), on="deck", how="left"
    ).with_columns(pl.col("main_branch").fill_null("unknown"))
    deck_order = deck_df["deck"].to_list()
    branch_order = sorted(set(branches["main_branch"].to_list()))

    key_counts, comps = {}, {}
    for key in PAIR_KEYS:
        counts, tables = _key_counts(fold, key)
        comp = mu.table_composition(counts.lazy(), tables.lazy()).collect()
        key_counts[key] = counts
        comps[key] = comp if mu.fixed_tables(comp) else None
    deck_main_paths = main_paths(deck_df)
    game_pairs = [k for k in PAIR_KEYS if comps[k] is None]
    fold.start_second(deck_main_paths, game_pairs)

    def pass_one_tables() -> dict:
        """The tables pass 1 gives (all of them when the tables' compositions are fixed;
        else the matchups wait for pass 2's game-by-game pairs)."""
        deck_pairs, deck_intervals = _pairs(fold, "deck", key_counts["deck"], comps["deck"])
        branch_pairs, branch_intervals = _pairs(fold, "branch", key_counts["branch"],
                                                comps["branch"])
        t = {"matchups": mu.matchup_matrix(deck_pairs, deck_order, deck_intervals,
                                           players).collect(),
             "branch_matchups": mu.matchup_matrix(branch_pairs, branch_order,
                                                  branch_intervals, players).collect()}
        paths_overall = path_shares(_path_counts(fold, "overall_paths", ["all"])).collect()
        t["paths_overall"] = with_path_intervals(paths_overall, path_shares_from_moments(
            _path_moments(fold, "all_paths", None)).collect())
        for by in PATH_GROUPS:
            table = path_shares(_path_counts(fold, f"group_{by}",
                                             fold.key_series(by).to_list())).collect()
            shares = path_shares_from_moments(_path_moments(fold, f"paths_{by}", by), [by])
            t[f"paths_by_{by}"] = with_path_intervals(table, shares.collect(), "group")
        t["seats"] = _seats(fold)
        t["branch_summary"] = _branch_summary(fold, branches)
        t["length"], t["length_hist"] = _length(fold)
        t["nash"] = mu.metagame_nash(t["matchups"], deck_order, _patterns(fold), players,
                                     solve=vs_deck is None)
        t["paths_expected"] = fold.paths_expected()
        t["lp"] = lp_bands(run.lp_curves).collect() if run.lp_curves is not None else None
        return t

    def partial(t: dict) -> Metrics:
        return Metrics(run=run, players=players, decks=deck_df, deck_order=deck_order,
                       branches=branches, branch_order=branch_order, cards=None,
                       cards_by_deck=None, candidates=[], findings=[],
                       deck_main_paths=deck_main_paths, shape=_shape(fold), **t)

    tables = None if game_pairs else pass_one_tables()
    if tables is not None and while_cards is not None:
        while_cards(partial(tables))  # the report draws while pass 2 runs
    columns = () if game_pairs else (SECOND_GAME_COLUMNS, SECOND_SEAT_COLUMNS)
    for games, seats in run.deal_parts(*columns):
        fold.add_second(games, seats)
        tick(games.height)
    fold.wait()
    if tables is None:
        tables = pass_one_tables()
        if while_cards is not None:
            while_cards(partial(tables))
    tables["paths_by_main_path"] = _main_path_rates(fold, deck_main_paths)

    have = set(run.cards.collect_schema().names())
    meta = [c for c in ("type", "branch", "rarity") if c in have]
    catalog = deck_cards(run.decks, run.cards).select("card", *meta).unique("card").collect()
    counts = fold.cards.counts()
    adj_card, adj_deck = fold.cards.adjusted()
    int_card, int_deck = fold.cards.intervals()
    cards = card_metrics(counts, ("card",), adjusted=adj_card, intervals=int_card).join(
        catalog, on="card", how="left")
    cards_by_deck = card_metrics(counts, ("deck", "card"), adjusted=adj_deck,
                                 intervals=int_deck).join(catalog, on="card", how="left")
    band = no_effect_band(cards_by_deck, run.cards)  # one flag rule for the Cards section
    cards, cards_by_deck = flag_beyond_band(cards, band), flag_beyond_band(cards_by_deck, band)
    fair = 1.0 / players
    # A --vs run: only that deck met the field; every other deck met it alone, so neither
    # their rates nor the branches' are "against the field", and they are not judged.
    judged = deck_df if vs_deck is None else deck_df.filter(pl.col("deck") == vs_deck)
    candidates = (
        fnd.deck_candidates(judged, tables["nash"], fair)
        + fnd.path_candidates(tables["paths_expected"])
        + fnd.card_candidates(cards)
        + fnd.seat_candidates(tables["seats"])
        + (fnd.branch_candidates(tables["branch_summary"], deck_df, fair)
           if vs_deck is None else [])
    )
    return replace(partial(tables), cards=cards, cards_by_deck=cards_by_deck, card_band=band,
                   candidates=fnd.judge(candidates), findings=fnd.top_findings(candidates))
