"""The phases of a discovery after the field is loaded: the search rounds, the held-out
re-measure and the metagame matrix (``rnr_sim.discover``'s docstring gives the order).

``--meta`` (``rounds``): round 1 searches against the field; each later round against the
equilibrium mix of the matchup matrix of the round before (its best elites and the field's
decks), its archive seeded with the elites of the round before. The rounds stop when the
mix, taken by kind of deck (an elite's cell, a field deck's name), moves less than
``MIX_STILL`` in total variation distance from one round to the next, or after
``MAX_ROUNDS``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rnr_sim.analytics.stats import Z95, nash_equilibrium, paired_gain
from rnr_sim.discover.proposals import SwapModel
from rnr_sim.discover.search import (
    CELL_PATHS,
    HOLDOUT_SEED_OFFSET,
    MATRIX_SEED_OFFSET,
    PILOTS,
    SEARCH_SEED_OFFSET,
    Cells,
    Field,
    Racing,
    Scored,
    _score,
    race,
    stage_deals,
)
from rnr_sim.engine.policies import POLICY_NAMES
from rnr_sim.runs.evaluation import Evaluator, Matchups, Outcome, Pool

MAX_ROUNDS = 3
MIN_GENERATIONS = 8
TOP = 8  # elites (by held-out share, or search share in a --meta round) in a matrix
MIX_STILL = 0.1  # total variation distance under which the metagame mix has settled


@dataclass
class Found:
    """The archive's elites after the search (one row each, by cell) and its history."""

    counts: np.ndarray  # int64[E, n_cards]
    cell: np.ndarray  # int[E, 2]: (path index, speed bin)
    measures: np.ndarray  # float64[E, 2]
    share: np.ndarray  # the search's objective
    pilot: np.ndarray  # index in PILOTS
    games: np.ndarray  # games the search played of the elite
    path_share: np.ndarray  # float64[E, 4]
    win_turn: np.ndarray
    generations: int
    children: int
    racing: Racing
    search_games: int
    history: list[dict] = field(default_factory=list)  # per generation, for the report
    rounds: list[dict] = field(default_factory=list)  # per --meta round: the field's mix
    field_weights: np.ndarray | None = None  # the last round's field mix (None: equal)
    field_counts: list[np.ndarray] = field(default_factory=list)
    field_pilots: np.ndarray | None = None
    field_names: list[str] = field(default_factory=list)
    slots: np.ndarray | None = None  # int32[E, deck size]: each elite's slot order
    model: SwapModel | None = None  # what the search learned of each card (proposals.py)


def _archive(laws, cells: Cells, seed: int, n_field: int, deals: int):
    """The archive: an elite's copies per card, its share, its cell, and beside them its
    pilot, games, paths, slot order and per-deal shares (float32[field, deals]: the
    shares its children are paired with)."""
    from ribs.archives import GridArchive

    return GridArchive(
        solution_dim=laws.n_cards, dims=cells.dims, ranges=cells.ranges, seed=seed,
        extra_fields={
            "pilot": ((), np.int32), "games": ((), np.int64),
            "path_share": ((len(CELL_PATHS),), np.float64), "win_turn": ((), np.float64),
            "slots": ((laws.size,), np.int32), "deals": ((n_field, deals), np.float32)})


def rounds(ev: Evaluator, pool: Pool, plan, laws, cells: Cells, search_budget: int,
           batch: int, seed: int, meta: bool, bar) -> Found | None:
    """The search (one round, or ``--meta`` rounds) on ``search_budget`` games; None once
    Ctrl-C stopped it."""
    from rnr_sim.discover.emitter import DeckEmitter

    n_rounds = MAX_ROUNDS if meta else 1
    # In --meta mode each later round needs a matrix to find the mix: a slice of its budget.
    per_round = search_budget // n_rounds
    field_counts = [laws.counts_of(d) for d in plan.decks]
    field_pilots = plan.deck_policy.astype(np.int32)
    names = list(plan.deck_names)
    fld = Field([d.card_ids for d in plan.decks], field_pilots)
    stages = stage_deals(search_budget)
    model = SwapModel(laws.n_cards, len(cells.rows))
    archive = _archive(laws, cells, seed, len(fld), sum(stages))
    seeds = [(laws.counts_of(d), d.card_ids) for d in plan.decks]
    emitter = DeckEmitter(archive, laws, seeds, batch, seed + 1, model, len(PILOTS))
    racing = Racing()
    history: list[dict] = []
    info: list[dict] = []
    gen = children = 0
    spent = 0
    per_child = len(plan.decks) * 2 * (len(PILOTS) * stages[0] + sum(stages[1:]))
    # A generation never overruns the budget, even if every child runs every stage; with a
    # small budget, smaller generations: at least MIN_GENERATIONS a round, each still large
    # enough to hold the field's decks (the first generation's seeds).
    batch = max(len(field_counts), 4, min(batch, per_round // (per_child * MIN_GENERATIONS)))
    emitter.batch_size = batch
    worst = batch * per_child
    mix_before = None
    extra = 0  # the --meta rounds' matrices
    for r in range(n_rounds):
        limit = per_round * (r + 1)
        while spent + worst <= limit:
            kids = emitter.ask()

            def cell_elite(which: np.ndarray, scored: list, kids=kids, archive=archive):
                measures = cells.measures([kids[k].counts for k in which], scored, laws)
                occupied, data = archive.retrieve(measures)
                return [data["deals"][i] if occupied[i] else None for i in range(len(which))]

            scored = race(ev, pool, fld, kids, cell_elite, stages, seed + SEARCH_SEED_OFFSET,
                          f"r{r}-g{gen:05d}", racing)
            if scored is None:
                return None
            learn(model, kids, scored, fld.weights)
            entered = offer(archive, cells, laws, kids, scored, len(stages))
            gen += 1
            children += len(kids)
            spent = racing.played + extra
            stats = archive.stats
            history.append({"round": r + 1, "generation": gen, "games": spent,
                            "elites": int(stats.num_elites),
                            "coverage": float(stats.coverage),
                            "best_share": float(stats.obj_max), "entered": entered,
                            "learned": int(sum(k.learned for k in kids))})
            bar.set_postfix(f"elites {stats.num_elites}, {100 * stats.coverage:.0f}% of cells,"
                            f" best {100 * stats.obj_max:.1f}% (search)")
        if r + 1 == n_rounds:
            break
        # The metagame of this round: its mix is the next round's field.
        found = _found(archive, gen, children, racing, history, spent)
        mat = _matrix(ev, pool, fld, found, None, None, names, field_counts, field_pilots,
                      cells=cells,
                      deals=max(8, per_round // 20 // max(1, _n_matrix(found, fld) ** 2 * 2)),
                      seed=seed + MATRIX_SEED_OFFSET + r, key=f"r{r}-matrix")
        if mat is None:
            return None
        extra += mat["games"]
        spent += mat["games"]
        keep = mat["mix"] > 0
        mix = mat["mix"][keep]
        new_ids = [mat["card_ids"][i] for i in np.flatnonzero(keep)]
        new_pilots = mat["pilot_rows"][keep]
        info.append({"round": r + 1, "field": [mat["names"][i] for i in np.flatnonzero(keep)],
                     "mix": [float(x) for x in mix]})
        # The mix by kind of deck (an elite's cell, a field deck's name): the rounds find
        # other lists, so the mix settles when the same kinds keep the same weights.
        mix_now = {mat["names"][i]: float(x) for i, x in zip(np.flatnonzero(keep), mix,
                                                             strict=True)}
        if mix_before is not None:
            keys = set(mix_now) | set(mix_before)
            moved = 0.5 * sum(abs(mix_now.get(k, 0.0) - mix_before.get(k, 0.0)) for k in keys)
            info[-1]["moved"] = moved
            if moved < MIX_STILL:
                fld = Field(new_ids, new_pilots, mix)
                break
        mix_before = mix_now
        fld = Field(new_ids, new_pilots, mix)
        # The next round's archive starts again against the new field, seeded with this
        # round's elites (best first): their shares against the old field no longer hold.
        order = np.argsort(-found.share, kind="stable")[:batch]
        archive = _archive(laws, cells, seed + r + 1, len(fld), sum(stages))
        emitter = DeckEmitter(archive, laws, [(found.counts[k], found.slots[k]) for k in order],
                              batch, seed + r + 2, model, len(PILOTS))
    found = _found(archive, gen, children, racing, history, spent)
    found.model = model
    found.rounds = info
    found.field_weights = None if not info else fld.weights
    found.field_counts = [np.bincount(ids, minlength=laws.n_cards) for ids in fld.card_ids]
    found.field_pilots = fld.policy_rows
    found.field_names = names if not info else info[-1]["field"]
    return found


def _n_matrix(found: Found, fld: Field) -> int:
    return min(len(found.share), TOP) + len(fld)



def learn(model: SwapModel, kids: list, scored: list[Scored], weights: np.ndarray) -> None:
    """Each child with a parent tells ``model`` what its swap did: its paired gain over the
    parent on the deals it played (``stats.paired_gain``)."""
    for kid, s in zip(kids, scored, strict=True):
        if kid.parent is not None:
            gain, se = paired_gain(s.per_deal - kid.parent_deals[:, : s.deals], weights)
            model.observe(kid.counts - kid.parent, kid.kind, float(gain), float(se),
                          s.per_deal.size)


def offer(archive, cells: Cells, laws, kids: list, scored: list[Scored], stages: int) -> int:
    """The children that played every stage offered to the archive (the others stopped
    clearly below their parent or their cell's elite); the number that entered. An elite
    and its rivals are measured on the same deals, so the archive's comparison of shares is
    the paired one."""
    full = [k for k, s in enumerate(scored) if s.stopped_at == stages]
    if not full:
        return 0
    sc = [scored[k] for k in full]
    status = archive.add(
        np.stack([kids[k].counts for k in full]).astype(np.float64),
        np.array([s.share for s in sc]), cells.measures([kids[k].counts for k in full], sc,
                                                        laws),
        pilot=np.array([s.pilot for s in sc], dtype=np.int32),
        games=np.array([s.games for s in sc], dtype=np.int64),
        path_share=np.stack([s.path_share for s in sc]),
        win_turn=np.array([s.win_turn for s in sc]),
        slots=np.stack([kids[k].slots for k in full]),
        deals=np.stack([s.per_deal for s in sc]).astype(np.float32))["status"]
    return int((status > 0).sum())


def _found(archive, gen, children, racing, history, spent: int) -> Found:
    data = archive.data()
    order = np.lexsort((data["index"],))
    idx = archive.int_to_grid_index(data["index"][order])
    return Found(
        counts=np.rint(data["solution"][order]).astype(np.int64), cell=np.asarray(idx),
        measures=data["measures"][order], share=data["objective"][order],
        pilot=data["pilot"][order], games=data["games"][order],
        path_share=data["path_share"][order], win_turn=data["win_turn"][order],
        generations=gen, children=children, racing=racing, search_games=spent,
        history=list(history), slots=data["slots"][order])


@dataclass
class Heldout:
    """The held-out re-measure: each elite's and each field deck's share against the
    search's (last) field with its 95% interval, and each elite's paired edge over the best
    field deck, on the same deals."""

    share: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    field_share: np.ndarray
    field_lo: np.ndarray
    field_hi: np.ndarray
    edge: np.ndarray
    edge_lo: np.ndarray
    edge_hi: np.ndarray
    best_field: int
    deals: int
    games: int


def heldout(ev: Evaluator, pool: Pool, plan, laws, found: Found, tuned: Tuned | None,
            left: int, seed: int) -> Heldout | None:
    """Every elite and the field's decks on fresh deals (``HOLDOUT_SEED_OFFSET``), as many
    as ``left`` games allow."""
    field_ids = [np.repeat(np.arange(laws.n_cards, dtype=np.int32), c) for c in found.field_counts]
    fld = Field(field_ids, found.field_pilots, found.field_weights)
    sample_ids = [d.card_ids for d in plan.decks]
    elite_ids = [np.repeat(np.arange(laws.n_cards, dtype=np.int32), c) for c in found.counts]
    n_subj = len(elite_ids) + len(sample_ids)
    deals = max(2, left // (n_subj * len(fld) * 2))
    pool, pilot_rows = elite_pilots(pool.with_decks(field_ids + elite_ids + sample_ids), found,
                                    tuned)
    n_f, n_e = len(field_ids), len(elite_ids)
    subj_deck = np.arange(n_f, n_f + n_subj)
    subj_pol = np.concatenate([pilot_rows, plan.deck_policy.astype(np.int32)])
    games = fld.matchups(subj_deck, subj_pol, 0, deals)
    out = ev.play(pool, games, seed + HOLDOUT_SEED_OFFSET, key="heldout")
    if out is None:
        return None
    share, lo, hi, per_deal = shares_of(out, fld.weights)
    best = n_e + int(np.argmax(share[n_e:]))
    edge, edge_lo, edge_hi = edges_of(per_deal[:n_e], per_deal[best], fld.weights)
    return Heldout(share[:n_e], lo[:n_e], hi[:n_e], share[n_e:], lo[n_e:], hi[n_e:],
                   edge, edge_lo, edge_hi, best - n_e, deals, games.games)


def shares_of(out: Outcome, weights: np.ndarray):
    """(share, lo, hi, per_deal) of each subject of ``out`` against its field weighted by
    ``weights``: the 95% normal interval over deals (a deal: one field deck, both seat
    orders), the field decks as strata (``search._score``). Its coverage is measured by
    ``rnr-sim check coverage --discovery DIR``."""
    scores = [_score(_sub(out, k), weights, 0, 3) for k in range(out.score.shape[0])]
    share = np.array([s.share for s in scores])
    se = np.array([s.se for s in scores])
    return share, np.clip(share - Z95 * se, 0, 1), np.clip(share + Z95 * se, 0, 1), \
        out.per_deal()


def edges_of(per_deal: np.ndarray, ref: np.ndarray, weights: np.ndarray):
    """(edge, lo, hi): each subject's paired difference from ``ref`` (per-deal shares of
    one deck on the same deals), deal by deal, the field decks as strata
    (``stats.paired_gain``)."""
    edge, se = paired_gain(per_deal - ref[None], weights)
    return edge, edge - Z95 * se, edge + Z95 * se


def elite_pilots(pool: Pool, found: Found, tuned: Tuned | None) -> tuple[Pool, np.ndarray]:
    """(pool with the tuned pilots' rows added, each elite's pilot row): its built-in, or
    its tuned weights where ``tune`` kept them."""
    rows = np.array([POLICY_NAMES.index(PILOTS[p]) for p in found.pilot], dtype=np.int32)
    kept = [(k, r) for k, r in (tuned.results.items() if tuned else ()) if r.kept]
    if not kept:
        return pool, rows
    table = np.vstack([pool.policies] + [r.weights[None, :] for _, r in kept])
    for i, (k, _) in enumerate(kept):
        rows[k] = len(pool.policies) + i
    return pool.with_policies(table, pool.search), rows


def yardstick(evaluator, pool: Pool, laws, cells: Cells, found: Found, tuned: Tuned | None,
              held: Heldout, deals: int, seed: int, bar) -> tuple[list, dict] | None:
    """The best elites' held-out shares checked with the yardstick in every seat
    (``yardstick.check_elites``) on the first ``deals`` held-out deals of each field deck
    (at most those played): (checks, the manifest's entry), None once Ctrl-C stopped it.
    The elites are named as the dir names them (``Discovered NN (cell)``, by held-out
    share)."""
    import time

    from rnr_sim import yardstick as ys
    from rnr_sim.discover.output import elite_name

    t0 = time.perf_counter()
    deals = min(deals, held.deals)
    fld = Field([np.repeat(np.arange(laws.n_cards, dtype=np.int32), c)
                 for c in found.field_counts], found.field_pilots, found.field_weights)
    order = np.argsort(-held.share, kind="stable")
    top = order[:ys.ELITES_CHECKED]
    pool, rows = elite_pilots(pool, found, tuned)
    ids = [np.repeat(np.arange(laws.n_cards, dtype=np.int32), found.counts[k]) for k in top]
    # a held-out share's error from its unclipped side (an interval near 1 is cut at 1)
    se = [max(held.share[k] - held.lo[k], held.hi[k] - held.share[k]) / Z95 for k in top]
    names = [elite_name(r + 1, cells, found.cell[k]) for r, k in enumerate(top)]
    bar.set_total(len(top) * len(fld) * deals * 2 * 2)
    checks = ys.check_elites(evaluator, pool, fld, ids, rows[top], names,
                             [(float(held.share[k]), s) for k, s in zip(top, se, strict=True)],
                             deals, seed + HOLDOUT_SEED_OFFSET)
    if checks is None:
        return None
    return checks, ys.manifest_entry(checks, deals, time.perf_counter() - t0)


def _sub(out, k):
    from rnr_sim.runs.evaluation import Outcome

    return Outcome(out.score[k], out.path[k], out.turns[k])


def metagame(ev: Evaluator, pool: Pool, plan, found: Found, tuned: Tuned | None,
             held: Heldout, left: int, seed: int) -> dict | None:
    """The best elites (by held-out share, at most ``TOP``) and the sample decks against
    each other, on as many deals as ``left`` games allow: the matchup matrix, its
    equilibrium and the metagame's paths."""

    top = np.argsort(-held.share, kind="stable")[:TOP]
    n = len(top) + len(plan.decks)
    deals = max(2, left // (n * n * 2))
    fld = Field([d.card_ids for d in plan.decks], plan.deck_policy.astype(np.int32))
    sub = Found(found.counts[top], found.cell[top], found.measures[top], held.share[top],
                found.pilot[top], found.games[top], found.path_share[top],
                found.win_turn[top], 0, 0, found.racing, 0)
    pool, rows = elite_pilots(pool, found, tuned)
    mat = _matrix(ev, pool, fld, sub, top, rows[top], list(plan.deck_names),
                  [np.bincount(d.card_ids, minlength=found.counts.shape[1]) for d in plan.decks],
                  plan.deck_policy.astype(np.int32), deals, seed + MATRIX_SEED_OFFSET + 99,
                  "matrix")
    return mat


def _matrix(ev: Evaluator, pool: Pool, fld: Field, found: Found, elite_index, elite_rows,
            names, field_counts, field_pilots, deals: int, seed: int, key: str,
            cells: Cells | None = None) -> dict | None:
    """Round robin of the best elites (``found``'s order; their held-out or search share
    ranks them) and the field's decks, mirrors included, both seat orders: ``share[i, j]``
    deck i's share against deck j with its interval, the equilibrium ``mix`` of the
    antisymmetric game ``(share - share.T) / 2``, and the paths of the mixed metagame."""
    top = np.argsort(-found.share, kind="stable")[:TOP]
    ids = ([np.repeat(np.arange(found.counts.shape[1], dtype=np.int32), found.counts[k])
            for k in top] + [np.repeat(np.arange(len(c), dtype=np.int32), c)
                             for c in field_counts])
    if elite_rows is None:
        elite_rows = [POLICY_NAMES.index(PILOTS[p]) for p in found.pilot]
    pilots = np.concatenate([np.asarray(elite_rows, dtype=np.int32)[top],
                             np.asarray(field_pilots, dtype=np.int32)])
    if elite_index is None:  # a --meta round's elites, by their cells
        labels = [cells.label(*map(int, found.cell[k])) for k in top] + list(names)
    else:
        labels = [f"elite {int(elite_index[k]) + 1:02d}" for k in top] + list(names)
    n = len(ids)
    pool = pool.with_decks(ids)
    games = Matchups(np.arange(n), pilots, np.arange(n), pilots,
                     np.arange(n, dtype=np.int64), 0, deals)
    out = ev.play(pool, games, seed, key=key)
    if out is None:
        return None
    per_deal = out.per_deal()  # [i, j, deal]
    share = per_deal.mean(axis=2)
    se = per_deal.std(axis=2, ddof=1) / math.sqrt(deals)
    payoff = (share - share.T) / 2.0
    mix = nash_equilibrium(payoff)
    won = out.score == 1.0
    weight = np.outer(mix, mix)[:, :, None, None] * won
    paths = np.array([(weight * (out.path == k)).sum() for k in range(len(CELL_PATHS))])
    return {"names": labels, "card_ids": ids, "pilot_rows": pilots, "share": share,
            "lo": np.clip(share - Z95 * se, 0, 1), "hi": np.clip(share + Z95 * se, 0, 1),
            "mix": mix, "paths": paths / max(paths.sum(), 1e-12), "deals": deals,
            "games": games.games, "elite_rows": None if elite_index is None else
            [int(elite_index[k]) for k in top]}


TUNE_TOP = 4  # the best elites (by search share) whose pilots are tuned
TUNE_SHARE = 0.1  # of the budget
MIN_TUNE = 20_000  # games an elite's tuning needs at least (else none is tuned)


@dataclass
class Tuned:
    """The tuned pilots of the best elites: ``results[k]`` (``tune.TuneResult``) for elite
    index ``k``; its weights are the elite's pilot where ``kept``."""

    results: dict[int, object]
    games: int


def tune_elites(ev: Evaluator, plan, laws, found: Found, share: int, seed: int,
                driver) -> Tuned | None:
    """``tune`` (CMA-ES, kept only on a held-out gain) for the pilots of the ``TUNE_TOP``
    best elites against the search's field, through ``ev``, on ``share`` games (the
    budget's ``TUNE_SHARE``); none when that gives an elite fewer than ``MIN_TUNE``."""
    import copy

    from rnr_sim import tune
    from rnr_sim.pilots import builtin

    top = np.argsort(-found.share, kind="stable")[:TUNE_TOP]
    each = share // max(1, len(top))
    if each < MIN_TUNE or not len(top):
        return Tuned({}, 0)
    n = len(plan.decks)
    holdout = max(20, each // 4 // (3 * n * 2))  # tune's check: 3 pilots, both seat orders
    results: dict[int, object] = {}
    before = ev.games_played + ev.games_stored
    for k in top:
        pilot = builtin(PILOTS[int(found.pilot[k])])
        sub = copy.copy(plan)
        sub.decks = [laws.deck(found.counts[k], name=f"elite {int(k)}")] + list(plan.decks)
        sub.policies = [pilot.name] + list(plan.policies)
        sub.compile(driver)
        fld = tune.Field(plan=sub, n_field=n, rows_fixed=np.ascontiguousarray(sub.policy_table))
        try:
            res = tune.fit(fld, sub, pilot.weights.copy(), pilot, driver, n,
                           max(1000, each - 3 * n * holdout * 2), seed + 7 * int(k),
                           ev.threads, holdout, lambda m: None, None, None, evaluator=ev,
                           key=f"tune-{int(k)}")
        except KeyboardInterrupt:
            return None
        results[int(k)] = res
    games = ev.games_played + ev.games_stored - before
    return Tuned(results, games)
