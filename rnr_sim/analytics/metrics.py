"""Every metric of a run, computed once: what the report (and a notebook) reads."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from rnr_sim.analytics import findings as fnd
from rnr_sim.analytics import matchups as mu
from rnr_sim.analytics.branches import branch_summary, deck_cards, main_branches, with_branch
from rnr_sim.analytics.cards import (
    adjusted_iwd,
    card_counts,
    card_deal_intervals,
    card_masks,
    card_metrics,
    seat_units,
)
from rnr_sim.analytics.decks import (
    deck_summary,
    path_shares_by_deal,
    with_path_intervals,
    with_units,
)
from rnr_sim.analytics.length import length_histogram, length_summary
from rnr_sim.analytics.lp import lp_bands
from rnr_sim.analytics.nash import matchup_deals
from rnr_sim.analytics.paths import (
    deal_path_counts,
    main_path_win_rates,
    main_paths,
    overall_path_counts,
    path_counts,
    path_expectation,
    path_shares,
)
from rnr_sim.analytics.run import Run, seat_games
from rnr_sim.analytics.seats import game_flags, game_flags_by_table, seat_advantage


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
    cards: pl.DataFrame  # card_metrics per card, with catalog type/branch/rarity
    cards_by_deck: pl.DataFrame
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

    @property
    def fair(self) -> float:
        return 1.0 / self.players


def _players(run: Run, games: pl.LazyFrame) -> int:
    p = run.manifest.get("players")
    if isinstance(p, int) and p >= 2:
        return p
    mode = games.select(pl.col("n_players").mode().first()).collect().item()
    return int(mode) if mode else 2


def _pair_counts(
    sg: pl.LazyFrame, tables: pl.LazyFrame, key: str
) -> tuple[pl.LazyFrame, pl.DataFrame | None]:
    """Pair counts for ``key`` by table when compositions are fixed, else game by game."""
    counts = mu.key_counts_by_table(sg, key).collect()
    comp = mu.table_composition(counts.lazy(), tables).collect()
    if mu.fixed_tables(comp):
        return mu.pair_counts_by_table(counts.lazy(), comp.lazy()), comp
    return mu.pair_counts_by_game(sg, key), None


def compute_metrics(run: Run) -> Metrics:
    """Compute every metric of ``run`` (materialized first, so each table is read once)."""
    run = run.materialize()
    branches = main_branches(run.decks, run.cards).collect()
    sg = with_units(with_branch(seat_games(run.games, run.seats), branches), run.games)
    sg = sg.collect().lazy()  # with deal and mirror: the deal is the unit of every interval

    deck_df = deck_summary(sg, run.decks).collect().join(
        branches.select("deck", "main_branch"), on="deck", how="left"
    ).with_columns(pl.col("main_branch").fill_null("unknown"))
    deck_order = deck_df["deck"].to_list()
    branch_order = sorted(set(branches["main_branch"].to_list()))

    tables = mu.table_games(run.games).collect().lazy()
    deck_pairs, comp = _pair_counts(sg, tables, "deck")
    branch_pairs, _ = _pair_counts(sg, tables, "branch")
    if comp is not None:
        mirror_tables = (
            comp.filter(pl.col("seats") == pl.col("n_players"))["table_id"].to_list()
        )
        flagged = game_flags_by_table(run.games, run.seats, mirror_tables)
    else:
        flagged = game_flags(run.games, run.seats)

    have = set(run.cards.collect_schema().names())
    meta = [c for c in ("type", "branch", "rarity") if c in have]
    catalog = deck_cards(run.decks, run.cards).select("card", *meta).unique("card").collect()

    (
        matchups, branch_matchups, paths_overall, paths_deck, paths_policy, paths_branch,
        seats, branch_sum, length, length_hist,
    ) = pl.collect_all(
        [
            mu.matchup_matrix(deck_pairs, deck_order, mu.deal_intervals(sg, tables, "deck"),
                              _players(run, run.games)),
            mu.matchup_matrix(branch_pairs, branch_order,
                              mu.deal_intervals(sg, tables, "branch"), _players(run, run.games)),
            path_shares(overall_path_counts(run.games)),
            path_shares(path_counts(sg, "deck")),
            path_shares(path_counts(sg, "policy")),
            path_shares(path_counts(sg, "branch")),
            seat_advantage(flagged),
            branch_summary(sg, branches.lazy()),
            length_summary(run.games),
            length_histogram(run.games),
        ]
    )
    # path shares' intervals with the deal as the unit (decks.path_shares_by_deal)
    won = run.games.with_columns((pl.col("winner_seat") >= 0).alias("won"))
    paths_overall = with_path_intervals(paths_overall, path_shares_by_deal(won).collect())
    paths_deck, paths_policy, paths_branch = (
        with_path_intervals(t, path_shares_by_deal(sg, [by]).collect(), "group")
        for t, by in ((paths_deck, "deck"), (paths_policy, "policy"), (paths_branch, "branch"))
    )
    nash = mu.metagame_nash(matchups, deck_order, matchup_deals(sg), _players(run, run.games))
    paths_expected = path_expectation(deal_path_counts(sg, run.games))
    deck_main_paths = main_paths(deck_df)
    paths_by_main_path = main_path_win_rates(sg, run.games, deck_main_paths)
    masks = card_masks(run.decks)
    counts = card_counts(run.seats, masks)
    units = seat_units(run.games, run.seats)
    adj_card, adj_deck = adjusted_iwd(units, masks)
    int_card, int_deck = card_deal_intervals(units, masks)
    cards = card_metrics(counts, ("card",), adjusted=adj_card, intervals=int_card).join(
        catalog, on="card", how="left")
    cards_by_deck = card_metrics(counts, ("deck", "card"), adjusted=adj_deck,
                                 intervals=int_deck).join(catalog, on="card", how="left")
    lp = lp_bands(run.lp_curves).collect() if run.lp_curves is not None else None

    players = _players(run, run.games)
    fair = 1.0 / players
    candidates = (
        fnd.deck_candidates(deck_df, nash, fair)
        + fnd.path_candidates(paths_expected)
        + fnd.card_candidates(cards)
        + fnd.seat_candidates(seats)
        + fnd.branch_candidates(branch_sum, deck_df, fair)
    )
    return Metrics(
        run=run,
        players=players,
        decks=deck_df,
        deck_order=deck_order,
        matchups=matchups,
        nash=nash,
        paths_overall=paths_overall,
        paths_by_deck=paths_deck,
        paths_by_policy=paths_policy,
        paths_by_branch=paths_branch,
        seats=seats,
        branches=branches,
        branch_summary=branch_sum,
        branch_order=branch_order,
        branch_matchups=branch_matchups,
        cards=cards,
        cards_by_deck=cards_by_deck,
        length=length,
        length_hist=length_hist,
        lp=lp,
        candidates=fnd.judge(candidates),
        findings=fnd.top_findings(candidates),
        paths_expected=paths_expected,
        paths_by_main_path=paths_by_main_path,
        deck_main_paths=deck_main_paths,
    )
