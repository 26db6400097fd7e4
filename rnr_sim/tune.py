"""``rnr-sim tune``: fit a deck's pilot to its field with CMA-ES, and keep the result only
if it wins on deals it was not chosen on.

The search: CMA-ES (the ``cma`` package) over the policy's weights, each candidate scored by
the tuned deck's win share (a draw counts half) against every deck of the field, both seat
orders, on the same deals for every candidate of the run (common random numbers: the search
compares pilots, not luck). The weights move in a scaled space: a weight ``w0`` of the start
policy becomes ``clip(w0 + scale * x, range)``, ``scale = max(|w0|, 1) / 2`` (whole-number
weights rounded); the 0/1 switches (``random``, ``p2_right``) stay as they are.

The check: the best candidate seen and the start policy then play a fresh set of deals (a
seed the search never used), and the gain is the paired difference of their win shares,
averaged per deal with a 95% interval over deals (the deal is the unit). The tuned policy is
kept only when that interval lies above zero; otherwise the start is returned, and the
result says so. Its coverage, measured with two fixed pilots against a 40,000-deal truth:
93.8% +/- 1.5% (1,000 checks of 200 deals), 93.0% +/- 2.2% (500 of 800): about a point
under nominal (docs/designers.md, section 10).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rnr_sim.analytics.stats import Z95
from rnr_sim.engine.policies import FLAG_WEIGHTS, POLICIES, WEIGHT_SPECS, WHOLE_WEIGHTS
from rnr_sim.errors import InputError
from rnr_sim.runs.evaluation import Evaluator, Matchups, Pool
from rnr_sim.runs.execution import open_backend

#: Weights the search moves: every one but the 0/1 switches.
TUNED = tuple(k for k in WEIGHT_SPECS if k not in FLAG_WEIGHTS)
DEFAULT_BUDGET = 400_000
MAX_BUDGET = 10**10  # as discover's and balance's --budget
SEARCH_SEED_OFFSET = 0
HOLDOUT_SEED_OFFSET = 1_000_003


@dataclass
class TuneResult:
    """What ``tune`` found: the policy to use (``weights``), whether it is the tuned one or
    the start (``kept``), the held-out paired gain with its interval, and the costs."""

    deck: str
    start_name: str
    weights: np.ndarray
    start_weights: np.ndarray
    kept: bool
    gain: float
    gain_lo: float
    gain_hi: float
    holdout_deals: int
    start_share: float
    tuned_share: float
    random_share: float  # the random pilot, same held-out deals
    skill: float  # start - random, paired per deal, with its interval
    skill_lo: float
    skill_hi: float
    search_share: float
    games_search: int
    games_holdout: int
    generations: int
    seconds: float
    seed: int
    moved: dict[str, tuple[float, float]] = field(default_factory=dict)
    start_base: str = "balanced"  # the built-in the start policy builds on

    def to_json(self) -> dict[str, Any]:
        return {
            "deck": self.deck, "start": self.start_name, "kept": self.kept,
            "holdout": {"gain": self.gain, "gain_lo": self.gain_lo, "gain_hi": self.gain_hi,
                        "deals": self.holdout_deals, "start_share": self.start_share,
                        "tuned_share": self.tuned_share, "random_share": self.random_share,
                        "skill": self.skill, "skill_lo": self.skill_lo,
                        "skill_hi": self.skill_hi},
            "search_best_share": self.search_share,
            "games": {"search": self.games_search, "holdout": self.games_holdout,
                      "total": self.games_search + self.games_holdout},
            "generations": self.generations, "seconds": round(self.seconds, 1),
            "seed": self.seed,
            "moved": {k: {"from": a, "to": b} for k, (a, b) in self.moved.items()},
            "weights": {k: float(self.weights[WEIGHT_SPECS[k][0]]) for k in WEIGHT_SPECS},
        }


def _decode(x: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The weight vector of search point ``x`` (one coordinate per ``TUNED`` weight)."""
    w = start.copy()
    for xi, key in zip(x, TUNED, strict=True):
        i, lo, hi, _ = WEIGHT_SPECS[key]
        w0 = start[i]
        v = w0 + max(abs(w0), 1.0) / 2.0 * float(xi)
        if key in WHOLE_WEIGHTS:
            v = round(v)
        w[i] = min(max(v, lo), hi)
    i_min, i_max = WEIGHT_SPECS["mulligan_min"][0], WEIGHT_SPECS["mulligan_max"][0]
    if w[i_min] > w[i_max]:
        w[i_min] = w[i_max]
    return w


@dataclass
class Field:
    """The games of the tuned deck (deck 0 of the plan) against a field (decks
    1..n_field), both seat orders, ``deals`` deals a table (table ids 0..n_field-1: they
    and the deal fix a game's shuffles), for any set of candidate pilots of the tuned
    deck: every candidate plays the same games, so a game's result depends only on its
    pilots (common random numbers)."""

    plan: Any  # planning.RunPlan holding the tuned deck and the field decks
    n_field: int
    rows_fixed: np.ndarray  # the field decks' policy rows (the plan's policy table)

    def matchups(self, n_candidates: int, deals: int) -> Matchups:
        """Every game of ``n_candidates`` candidates (the evaluation service's order:
        candidate, then field deck, deal, seat order). Candidate k's policy is row k of the
        table; the field's rows follow."""
        opp = np.arange(1, self.n_field + 1, dtype=np.int64)
        return Matchups(subject_deck=np.zeros(n_candidates), subject_policy=np.arange(n_candidates),
                        field_deck=opp, field_policy=n_candidates + self.plan.deck_policy[opp],
                        field_table=np.arange(self.n_field), first_deal=0, deals=deals)

    def play(self, driver, candidates: list[np.ndarray], deals: int, seed: int,
             threads: int | None, backend=None, evaluator: Evaluator | None = None,
             key: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(share float64[k], per-deal shares float64[k, n_field * deals]) of each
        candidate: the tuned deck's win share, a draw counting half. Played by the
        evaluation service, here or on ``backend`` (e.g. Ray), with the same results;
        ``evaluator``: a caller's open evaluator (its bar, Ctrl-C and backend) instead of
        one of this call's own; ``key``: the call's checkpoint key in that evaluator's
        store (a resumed caller reads it back). Ctrl-C: ``KeyboardInterrupt``."""
        games = self.matchups(len(candidates), deals)
        pool = Pool.of_plan(self.plan, np.vstack([np.stack(candidates), self.rows_fixed]))
        if evaluator is not None:
            outcome = evaluator.play(pool, games, seed, key=key)
        else:
            with Evaluator(driver, backend=backend, threads=threads) as ev:
                outcome = ev.play(pool, games, seed)
        if outcome is None:
            raise KeyboardInterrupt
        per_deal = outcome.per_deal().reshape(len(candidates), self.n_field * deals)
        return per_deal.mean(axis=1), per_deal


def tune(deck: str | Path, field_decks: Sequence[str | Path], budget: int = DEFAULT_BUDGET,
         seed: int = 1, cards: str | Path | Sequence[str | Path] | None = None,
         rules: str | Path | None = None,
         policy: str | None = None, threads: int | None = None,
         holdout_deals: int | None = None, log: Callable[[str], None] = lambda m: None,
         progress: Callable[[int], None] | None = None, backend: str = "local",
         address: str | None = None) -> TuneResult:
    """Tune ``deck``'s pilot against ``field_decks`` within ``budget`` games of search (the
    held-out check plays ``holdout_deals`` more deals per table, both seat orders, for the
    start and the tuned pilot). ``backend`` / ``address``: where the games are played
    (``--backend ray``: each batch of candidates cut into chunks, played as Ray tasks;
    the same result). Raises ``InputError`` for bad input."""
    from rnr_sim.pilots import load_policy, resolve_policies
    from rnr_sim.runs import planning

    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1000:
        raise InputError(f"--budget must be a whole number of games, at least 1000, not "
                         f"{budget!r}")
    from rnr_sim.runs.arguments import check_count

    check_count(budget, "--budget", 1000, MAX_BUDGET)  # the bound discover and balance set
    if holdout_deals is not None:
        check_count(holdout_deals, "--holdout", 1, MAX_BUDGET)
    if not field_decks:
        raise InputError("tune needs a field: give --field DECK at least once")
    paths = [Path(deck), *[Path(p) for p in field_decks]]
    if len({p.resolve() for p in paths}) != len(paths):
        raise InputError("the tuned deck and the field must be distinct deck lists")
    options = planning.RunOptions(decks=paths, games=1, seed=seed, cards=cards, rules=rules,
                                threads=threads)
    plan = planning.plan_run(options)
    where = open_backend(backend, address, threads)
    if policy is not None:  # the start policy of the tuned deck only
        plan.policies[0] = resolve_policies([plan.decks[0]], policy)[0]
    driver = planning.engine_driver()
    plan.compile(driver)
    start_ref = plan.policies[0]
    start_pilot = load_policy(start_ref)
    start = start_pilot.weights.copy()
    n_field = len(paths) - 1
    fixed = np.ascontiguousarray(plan.policy_table)
    fld = Field(plan=plan, n_field=n_field, rows_fixed=fixed)
    remote = None if backend == "local" else where
    # One evaluator for the whole search: its Ctrl-C guard lasts from the first generation to
    # the check, so a Ctrl-C between two calls is not lost with the call's own guard.
    with where, Evaluator(driver, backend=remote, threads=where.threads) as ev:
        return fit(fld, plan, start, start_pilot, driver, n_field, budget, seed,
                   where.threads, holdout_deals, log, progress, remote, evaluator=ev)


def fit(fld: Field, plan, start: np.ndarray, start_pilot, driver, n_field: int,
        budget: int, seed: int, threads: int | None, holdout_deals: int | None,
        log: Callable[[str], None], progress: Callable[[int], None] | None,
        backend, evaluator: Evaluator | None = None, key: str | None = None) -> TuneResult:
    """The CMA-ES search and the held-out check of ``tune`` for the subject of ``fld``
    (``plan.decks[0]``), starting from ``start`` (``start_pilot`` 's weights); ``evaluator``:
    play through the caller's (``discover`` tunes its elites so), each call checkpointed
    under ``key`` + ``-gNNN`` / ``-holdout`` when ``key`` is given."""
    import cma

    dim = len(TUNED)
    popsize = 4 + int(3 * math.log(dim))
    # Deals per table for one candidate: enough games per evaluation to see a few pp.
    deals = max(8, min(200, budget // (popsize * n_field * 2 * 12)))
    per_gen = popsize * n_field * deals * 2
    generations = max(1, budget // per_gen)
    # The check plays about a quarter of the budget again: two pilots, every field deck.
    holdout = holdout_deals if holdout_deals is not None else \
        max(200, budget // (4 * 2 * n_field * 2))
    es = cma.CMAEvolutionStrategy(np.zeros(dim), 0.5, {
        "seed": seed % (2**31 - 1) + 1, "popsize": popsize, "verbose": -9,
        "bounds": [-6.0, 6.0], "maxiter": generations, "tolfun": 0, "tolx": 0,
        "tolfunhist": 0, "tolstagnation": 10**9})
    t0 = time.perf_counter()
    best_share, best_w = -1.0, start
    games_search = 0
    search_seed = seed + SEARCH_SEED_OFFSET
    for g in range(generations):
        xs = es.ask()
        cands = [_decode(np.asarray(x), start) for x in xs]
        shares, _ = fld.play(driver, cands, deals, search_seed, threads, backend, evaluator,
                             key=None if key is None else f"{key}-g{g:03d}")
        games_search += per_gen
        if evaluator is not None and evaluator.stopped:  # Ctrl-C: stop after these games
            raise KeyboardInterrupt
        es.tell(xs, [-float(s) for s in shares])  # cma minimises
        k = int(np.argmax(shares))
        if shares[k] > best_share:
            best_share, best_w = float(shares[k]), cands[k]
        log(f"generation {g + 1}/{generations}: best {100 * shares.max():.1f}%, "
            f"mean {100 * shares.mean():.1f}%")
        if progress is not None:
            progress(per_gen)
    # The held-out check, on deals of a seed the search never saw.
    # The random pilot plays the same deals: how much of the deck's result is its pilot's
    # skill (restricted play, Jaffe 2012).
    shares, per_deal = fld.play(driver, [start, best_w, POLICIES["random"]], holdout,
                                seed + HOLDOUT_SEED_OFFSET, threads, backend, evaluator,
                                key=None if key is None else f"{key}-holdout")
    if progress is not None:
        progress(3 * n_field * holdout * 2)
    gain, lo, hi = paired_gain(per_deal[1], per_deal[0])
    skill, skill_lo, skill_hi = paired_gain(per_deal[0], per_deal[2])
    kept = lo > 0
    weights = best_w if kept else start
    moved = {}
    for key, (i, *_rest) in WEIGHT_SPECS.items():
        if not math.isclose(best_w[i], start[i], rel_tol=1e-9, abs_tol=1e-12):
            moved[key] = (float(start[i]), float(best_w[i]))
    return TuneResult(
        deck=plan.decks[0].name, start_name=start_pilot.name, start_base=start_pilot.base,
        weights=weights,
        start_weights=start, kept=kept, gain=gain, gain_lo=lo, gain_hi=hi,
        holdout_deals=per_deal.shape[1], start_share=float(shares[0]),
        tuned_share=float(shares[1]), random_share=float(shares[2]), skill=skill,
        skill_lo=skill_lo, skill_hi=skill_hi, search_share=best_share,
        games_search=games_search, games_holdout=3 * n_field * holdout * 2,
        generations=generations,
        seconds=time.perf_counter() - t0, seed=seed, moved=moved)


def paired_gain(new: np.ndarray, old: np.ndarray) -> tuple[float, float, float]:
    """Mean of ``new - old`` over deals (per-deal win shares on the same deals) with its
    95% normal interval, the deal as the unit."""
    diff = new - old
    gain = float(diff.mean())
    se = float(diff.std(ddof=1) / math.sqrt(len(diff))) if len(diff) > 1 else float("inf")
    return gain, gain - Z95 * se, gain + Z95 * se


def policy_toml(result: TuneResult, base: str) -> str:
    """The tuned policy as a policy file: ``base`` (a built-in) and every weight that
    differs from it, with the measurement in comments."""
    from rnr_sim.patches import toml_string

    ref = POLICIES[base]
    gain = (f"held-out gain {100 * result.gain:+.1f} pp [{100 * result.gain_lo:+.1f}, "
            f"{100 * result.gain_hi:+.1f}] over {result.holdout_deals} deals; "
            f"{result.games_search + result.games_holdout:,} games")
    what = (f"Tuned by rnr-sim tune for {result.deck} (seed {result.seed}): {gain}."
            if result.kept else
            f"rnr-sim tune for {result.deck} (seed {result.seed}) kept the start policy "
            f"{result.start_name!r}: the best candidate's {gain}, not above 0.")
    lines = [
        f"# {what}",
        "[policy]",
        f"name = {toml_string(result.deck + (' (tuned)' if result.kept else f' ({result.start_name})'))}",
        f"base = {toml_string(base)}",
        "",
        "[weights]",
    ]
    for key, (i, *_r) in WEIGHT_SPECS.items():
        if result.weights[i] != ref[i]:
            value = result.weights[i]
            text = f"{int(value)}" if key in WHOLE_WEIGHTS else repr(float(value))
            name = key if key.replace("_", "").isalnum() else toml_string(key)
            lines.append(f"{name} = {text}")
    return "\n".join(lines) + "\n"
