"""Verification, not prediction: each suggestion checked by ``rnr-sim compare`` on fresh
deals, and the metagame searched again after it.

- **The paired check**: ``compare`` (``run_compare``, then ``compare_runs``) plays the
  metagame's decks with and without the suggestion's patch file and rules profile
  (``--patch``, ``--rules-b``), as they are, on the deals of
  a seed the search never used; its run dirs and ``compare.json`` stay in
  ``verify/NN/``. The targets' figures before and after, with their intervals and the
  paired change, are read from those run dirs' games (``metrics``: the metagame's mix
  weights the decks; with equal weights their point values are ``compare``'s own, their
  intervals the plain normal ones over deals, without compare's small-sample forms; with a
  discovery's mix, each deck's mirror matches are played beside them, on the same seed). ``iwd_max``
  is judged on the report's adjusted IWD of every card of the variant run
  (``compare.patched.largest_iwd``).
- **The metagame after**: ``rnr-sim discover`` with the patched catalog (the variant
  catalog ``compare`` wrote) and the suggestion's rules profile, and the metagame's decks as its field, which also seed its
  archive (a warm start): the strongest deck it finds, held out against the metagame's
  decks weighted equally (discover knows no mix), against the ``deck_share_max`` target;
  then ``patch_effect`` replays that list with and without the change, weighted by the mix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim.balance.metrics import Figure, Figures, Games, judge, paired
from rnr_sim.balance.targets import Targets
from rnr_sim.runs.schema import WIN_PATHS

VERIFY_SEED_OFFSET = 3_000_017
REDISCOVER_SEED_OFFSET = 4_000_037
PATCH_EFFECT_SEED_OFFSET = 5_000_011


@dataclass
class Row:
    """One figure a target is about, before and after, on the verification's deals."""

    target: str
    subject: str
    before: float
    before_lo: float
    before_hi: float
    after: float
    after_lo: float
    after_hi: float
    change: float
    change_lo: float
    change_hi: float
    band_lo: float | None
    band_hi: float | None

    @property
    def met_after(self) -> bool:
        return _inside(self.after, self.band_lo, self.band_hi)

    @property
    def met_before(self) -> bool:
        return _inside(self.before, self.band_lo, self.band_hi)


def _inside(x: float, lo: float | None, hi: float | None) -> bool:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return True
    return (lo is None or x >= lo - 1e-12) and (hi is None or x <= hi + 1e-12)


@dataclass
class Verified:
    """A suggestion's verification: every target's figures (``rows``), the targets met and
    missed after it, the distance, the deals, and the metagame after (``after``)."""

    rank: int
    deals: int
    games: int
    rows: list[Row]
    met: list[str]
    missed: list[str]
    distance: float
    distance_before: float
    support: tuple[int, int]
    compare_dir: Path
    command: str
    patch: Path | None = None  # the suggestion's card patch (None: it changes no card)
    rules_b: Path | None = None  # its rules profile (None: it changes no switch)
    after: dict[str, Any] | None = None
    excluded: list[str] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return not self.missed


def figure_rows(fb: Figures, fv: Figures, names: list[str], t: Targets) -> list[Row]:
    """The rows of every target set, deck by deck and path by path."""
    rows: list[Row] = []

    def add(target: str, subject: str, b: Figure, v: Figure, lo, hi) -> None:
        blo, bhi = b.interval()
        vlo, vhi = v.interval()
        ch, clo, chi = paired(b, v)
        rows.append(Row(target, subject, b.value, blo, bhi, v.value, vlo, vhi, ch, clo, chi,
                        lo, hi))

    if t.deck_share_max is not None:
        for i, name in enumerate(names):
            add("deck_share_max", name, fb.deck[i], fv.deck[i], None, t.deck_share_max)
    for k, p in enumerate(WIN_PATHS):
        if p in t.path_share:
            add("path_share", p, fb.path[k], fv.path[k], *t.path_share[p])
    if t.first_seat is not None:
        add("first_seat", "first seat", fb.first, fv.first, *t.first_seat)
    return rows


def read_games(run_dir: Path, tables: np.ndarray) -> Games:
    frame = pl.read_parquet(run_dir / "games" / "*.parquet",
                            columns=["game_id", "winner_seat", "path"])
    return Games.of_run(frame, tables)


def check(rank: int, patch: Path | None, rules_b: Path | None, meta, targets: Targets, cards,
          rules, deals: int, seed: int, out: Path, options, progress: bool, log) -> Verified:
    """Run ``compare`` for one suggestion (module docstring) into ``out``: its card patch
    as ``--patch``, its rules profile as ``--rules-b`` (either or both), with the threads
    and backend of ``options`` (``BalanceOptions``)."""
    threads = options.threads
    from rnr_sim.compare import CompareOptions, compare_runs, run_compare, summary_json
    from rnr_sim.compare.runs import write_summary

    command = _compare_command(meta.paths, patch, rules_b, cards, rules,
                               seed + VERIFY_SEED_OFFSET, deals)
    options = CompareOptions(decks=list(meta.paths), patch=patch, rules_b=rules_b, games=deals,
                             seed=seed + VERIFY_SEED_OFFSET, cards=cards, rules=rules,
                             threads=threads, backend=options.backend,
                             address=options.address, out=out, command=command)
    result = run_compare(options, progress=progress, log=log)
    if result.interrupted:  # Ctrl-C during compare: stop balance too (--resume verifies again)
        raise KeyboardInterrupt
    pair = compare_runs(result.baseline_dir, result.variant_dir)
    write_summary(result, summary_json(result, pair, None))
    excluded = [f"{e.deck}: {e.reason}" for e in result.excluded]
    if excluded:  # a deck the patch makes illegal: the metagame is not the one searched
        raise RuntimeError(f"suggestion {rank:02d}: compare left out {excluded}")
    tables = _tables(meta.n)
    gb = read_games(result.baseline_dir, tables)
    gv = read_games(result.variant_dir, tables)
    games = result.games * 2
    if meta.mirrors:  # a mix meets itself: the mirror matches compare does not play
        from rnr_sim.cards import load_catalog
        from rnr_sim.rules import load_profile
        from rnr_sim.runs import planning
        from rnr_sim.runs.evaluation import Evaluator

        variant = meta.pool.cards if patch is None else np.ascontiguousarray(
            load_catalog(out / "variant-catalog.toml").compile(), dtype=np.int32)
        variant_rules = None if rules_b is None else load_profile(rules_b).compile()
        with Evaluator(planning.engine_driver(), threads=threads) as ev:
            mb = meta.mirror_games(ev, meta.pool.cards, seed + VERIFY_SEED_OFFSET, deals,
                                   len(tables))
            mv = meta.mirror_games(ev, variant, seed + VERIFY_SEED_OFFSET, deals,
                                   len(tables), variant_rules)
            if mb is None or mv is None:
                raise KeyboardInterrupt
            games += ev.games_played
        gb, gv = Games.union([gb, mb]), Games.union([gv, mv])
    # A discovery's metagame is judged at each matrix's own equilibrium (metrics): the
    # patched cards' matrix of every deck, not the unchanged mix's mirror.
    fb = Figures.of(gb, meta.weights, meta.n, meta.adaptive)
    fv = Figures.of(gv, meta.weights, meta.n, meta.adaptive)
    rows = figure_rows(fb, fv, meta.names, targets)
    jb, jv = judge(fb, targets), judge(fv, targets)
    missed = list(jv.missed)
    distance, distance_before = jv.distance, jb.distance
    if targets.iwd_max is not None:
        from rnr_sim.compare.patched import largest_iwd

        top_b = largest_iwd(result.baseline_dir, targets.iwd_max)
        top_v = largest_iwd(result.variant_dir, targets.iwd_max)
        if top_b is not None and top_v is not None:
            rows.append(Row("iwd_max", f"{top_b[1]} -> {top_v[1]}", top_b[0], top_b[2],
                            top_b[3], top_v[0], top_v[2], top_v[3], top_v[0] - top_b[0],
                            math.nan, math.nan, None, targets.iwd_max))
            distance, distance_before = distance + top_v[4], distance_before + top_b[4]
            if top_v[0] > targets.iwd_max:
                missed.append("iwd_max")
    met = [n for n in targets.names() if n not in missed]
    return Verified(rank, deals, games, rows, met, missed, distance,
                    distance_before, (fb.support, fv.support), out, command, patch, rules_b,
                    excluded=excluded)


def _tables(n: int) -> np.ndarray:
    from rnr_sim.runs.planning import make_tables

    return make_tables(n, 2)


def _compare_command(paths, patch: Path | None, rules_b: Path | None, cards, rules,
                     seed: int, deals: int) -> str:
    import shlex

    parts = ["rnr-sim", "compare", *[str(p) for p in paths]]
    for flag, f in (("--patch", patch), ("--rules-b", rules_b)):
        if f is not None:
            parts += [flag, str(f)]
    parts += ["--seed", str(seed), "--games", str(deals)]
    for c in cards or []:
        parts += ["--cards", str(c)]
    if rules is not None:
        parts += ["--rules", str(rules)]
    return shlex.join(parts)


def rediscover(cards: list[Path], meta, targets: Targets, rules, budget: int, seed: int,
               out: Path, options, progress: bool, log) -> dict[str, Any]:
    """The strongest deck a warm-started discovery finds with the catalog ``cards`` (a
    patched one, or the unchanged cards for reference; the threads and backend of
    ``options``, ``BalanceOptions``)."""
    from rnr_sim.discover import DiscoverOptions, discover

    found = discover(DiscoverOptions(field=list(meta.paths), cards=list(cards),
                                     budget=budget, seed=seed + REDISCOVER_SEED_OFFSET,
                                     rules=rules, threads=options.threads,
                                     backend=options.backend, address=options.address,
                                     out=out),
                     progress=progress, log=log)
    if found.stopped:
        raise KeyboardInterrupt
    top = found.archive.sort("share_heldout", descending=True).row(0, named=True)
    share = float(top["share_heldout"])
    limit = targets.deck_share_max
    return {"dir": str(out), "budget": budget, "games": found.manifest["games"]["total"],
            "deck": str(out / top["deck_file"]), "cell": top["cell"], "pilot": top["pilot"],
            "deals": int(found.manifest["heldout"]["deals_per_field_deck"]),
            "share": share, "share_lo": float(top["share_heldout_lo"]),
            "share_hi": float(top["share_heldout_hi"]),
            "breaks": None if limit is None else bool(share > limit),
            "best_field_deck": found.manifest["heldout"]["best_field_deck"]}


def patch_effect(deck: Path, patched: list[Path], unchanged: list[Path], meta, rules,
                 base_rules, deals: int, seed: int, options) -> dict[str, Any] | None:
    """The same deck list, with its pilot, against the metagame's decks with the patched
    cards and ``rules`` (the suggestion's) and with the unchanged ones and ``base_rules``
    (the run's), on the same deals (seed + ``PATCH_EFFECT_SEED_OFFSET``):
    is the strongest deck found after a patch strong because of the patch? Each share's 95%
    interval and the paired change, by deal, the metagame's decks as strata weighted by its
    mix (``discover.meta.shares_of`` / ``edges_of``). None when the list is not legal with
    the unchanged cards."""
    from rnr_sim.discover.meta import edges_of, shares_of
    from rnr_sim.errors import InputError
    from rnr_sim.runs import planning
    from rnr_sim.runs.evaluation import Evaluator, Matchups, Pool

    outcomes, games = [], 0
    for cards, profile in ((patched, rules), (unchanged, base_rules)):
        try:
            plan = planning.plan_run(planning.RunOptions(
                decks=[deck, *meta.paths], games=1, seed=seed, cards=list(cards), rules=profile,
                threads=options.threads, mirrors=True))
        except InputError:
            return None
        driver = planning.engine_driver()
        plan.compile(driver)
        n = len(meta.paths)
        pol = plan.deck_policy.astype(np.int32)
        games_of = Matchups([0], [pol[0]], np.arange(1, n + 1), pol[1:], np.arange(1, n + 1),
                            first_deal=0, deals=deals)
        with Evaluator(driver, threads=options.threads) as ev:
            out = ev.play(Pool.of_plan(plan), games_of, seed + PATCH_EFFECT_SEED_OFFSET)
            if out is None:
                raise KeyboardInterrupt
        outcomes.append(out)
        games += games_of.games
    # An adaptive metagame's stored mix is not the one a patch leaves: the decks equally,
    # as the re-discovery's held-out share weighs them.
    w = np.full(n, 1.0 / n) if meta.adaptive else np.asarray(meta.weights, dtype=np.float64)
    (sp, lp, hp, dp), (su, lu, hu, du) = (shares_of(o, w) for o in outcomes)
    edge, lo, hi = edges_of(dp, du[0], w)
    return {"share_patched": float(sp[0]), "patched_lo": float(lp[0]),
            "patched_hi": float(hp[0]), "share_unchanged": float(su[0]),
            "unchanged_lo": float(lu[0]), "unchanged_hi": float(hu[0]),
            "change": float(edge[0]), "change_lo": float(lo[0]), "change_hi": float(hi[0]),
            "deals": deals, "games": games}
