"""``rnr-sim balance``: card changes that bring a metagame within a designer's targets,
found by search and verified on fresh deals (docs/design.md, "Balance targets" and
"Balance dir"; docs/search.md, "Balance suggestions").

The budget (every game the command plays) is spent in three phases, in this order:

1. **search** (``search.py``, ``SEARCH_SHARE``): the unchanged catalog on the metagame's
   deals, then candidates, raced, until the next generation could overrun its share;
2. **verification** (``verify.py``, what is left but the re-discovery's share): every
   suggestion's patch and rules profile through ``compare`` on the deals of a seed the
   search never used;
3. **re-discovery** (``REDISCOVER_SHARE``): ``discover`` with each patched catalog and
   rules profile, best suggestion first, as long as its share affords ``discover``'s
   minimum budget;
4. **adaptation** (``ADAPT_SHARE``, ``adapt.py``): from the first verified suggestion, the
   deck its re-discovery found joins the metagame; if it breaks a target, more changes
   are searched on top of the patch, verified, and the metagame searched again (a
   double-oracle loop), until a round holds or the share is spent.

The metagame is the ``--field`` decks, equally weighted, or the decks of a discovery dir's
metagame matrix (its best elites and its field) weighted by its equilibrium mix.
"""

from __future__ import annotations

import json
import shlex
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rnr_sim.errors import InputError
from rnr_sim.files import make_dir
from rnr_sim.runs.planning import SearchOptions

DEFAULT_BUDGET = 2_000_000
MIN_BUDGET = 20_000
MAX_BUDGET = 10**10
SEARCH_SHARE = 0.55
REDISCOVER_SHARE = 0.15
ADAPT_SHARE = 0.15
#: Of each re-discovery's games, the share kept to replay its strongest deck with the
#: unchanged cards (``verify.patch_effect``).
PATCH_EFFECT_SHARE = 0.05


def budget_ledger(games: int, rediscover: bool = True):
    """The budget after the flagged run, in the order ``balance`` spends it: search
    (``SEARCH_SHARE``), verification (what is left but the later shares), re-discovery and
    adaptation (theirs; none without re-discovery)."""
    from rnr_sim.runs.budget import Ledger

    later = (REDISCOVER_SHARE, ADAPT_SHARE) if rediscover else (0.0, 0.0)
    return Ledger(games, {"search": SEARCH_SHARE, "verify": 0.0, "rediscover": later[0],
                          "adapt": later[1]}, rest=("verify",))
DEFAULT_SUGGESTIONS = 3
MIN_VERIFY_DEALS = 20
FLAG_RUN_DEALS = 400  # deals a table of the run whose report flags the scope's cards
CHECKPOINT = ".balance"
MANIFEST = "manifest.json"


@dataclass(kw_only=True)
class BalanceOptions(SearchOptions):
    """What ``rnr-sim balance`` was asked for; ``None`` means the default."""

    targets: str | Path
    field: Sequence[str | Path] = ()
    discovery: str | Path | None = None
    cards: Any = None
    budget: int = DEFAULT_BUDGET
    suggestions: int = DEFAULT_SUGGESTIONS
    rediscover: bool = True
    power: str | Path | None = None  # a power dir whose flags are the "flagged" cards
    yardstick: int = 0  # deals the first suggestion is checked on with the search pilot


@dataclass
class Balance:
    """What a balance run found and where it wrote it."""

    out: Path
    status: str  # "suggestions", "no change needed", "infeasible within scope", ...
    manifest: dict[str, Any]
    suggestions: Any = None  # polars DataFrame, suggestions.parquet
    figures: Any = None  # polars DataFrame, figures.parquet
    stopped: bool = False
    messages: list[str] = field(default_factory=list)


def _metagame_inputs(options: BalanceOptions) -> tuple[list[Path], np.ndarray | None, Any, str]:
    """The metagame's deck files, their mix (None: equal), the catalog and a description."""
    if options.discovery is None:
        paths = [Path(p) for p in options.field]
        if not paths:
            raise InputError("no metagame: give --field DECK... (e.g. --field decks/*.txt) or "
                             "--discovery DIR")
        return paths, None, options.cards, f"field of {len(paths)} decks"
    import polars as pl

    from rnr_sim.runs.searchdirs import verify_discovery_dir

    d = Path(options.discovery)
    incomplete = (f"--discovery {d}: not a complete discovery dir (manifest.json and "
                  "matchups.parquet from rnr-sim discover)")
    try:
        manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(f"{incomplete}: {e}") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != "discovery":
        raise InputError(f"--discovery {d}: {d / 'manifest.json'} is not a discovery's "
                         "manifest; give a dir written by rnr-sim discover")
    verify_discovery_dir(d, manifest)  # by content: matchups.parquet, the elites' lists
    try:
        matrix = pl.read_parquet(d / "matchups.parquet")
    except (OSError, ValueError) as e:
        raise InputError(f"{incomplete}: {e}") from None
    if options.field:
        raise InputError(f"--discovery {d} brings its own field ({len(manifest['field'])} "
                         "decks); drop --field")
    labels = list(dict.fromkeys(matrix["deck"].to_list()))
    mix = dict(zip(matrix["deck"].to_list(), matrix["mix"].to_list(), strict=True))
    field_paths = {f["name"]: Path(f["path"]) for f in manifest["field"]}
    paths = []
    for label in labels:
        if label.startswith("elite "):
            paths.append(d / "elites" / f"{int(label.split()[1]):02d}.txt")
        elif label in field_paths:
            paths.append(field_paths[label])
        else:
            raise InputError(f"--discovery {d}: matchups.parquet names deck {label!r}, which "
                             "is neither an elite nor a field deck of its manifest")
    cards = options.cards
    if not cards:
        cards = [Path(s["path"]) for s in manifest["catalog"]["sources"] if s.get("path")]
    if options.rules is None:  # the rules the discovery's metagame was found under
        options.rules = (manifest.get("rules") or {}).get("source")
    weights = np.array([mix[lb] for lb in labels], dtype=np.float64)
    return paths, weights, cards, f"discovery {d} ({len(paths)} decks, equilibrium mix)"


def _scope_ids(tf, plan, options: BalanceOptions, paths, out: Path, progress: bool, log
               ) -> tuple[list[int], dict[str, Any]]:
    """The scope's cards (catalog ids) and how they were chosen."""
    from rnr_sim.balance.targets import resolve_cards

    if tf.scope.no_cards:  # cards = [] beside switches: the switches only
        return [], {"how": "none: switches only"}
    if tf.scope.cards:
        return resolve_cards(tf, plan.catalog), {"how": "listed"}
    if not tf.scope.flagged:
        ids = sorted({int(c) for d in plan.decks for c in d.card_ids})
        return ids, {"how": "every card the metagame plays"}
    if options.power is not None:
        return _power_flags(Path(options.power), tf, plan)
    # "flagged": the cards the report flags, from a run of the metagame's decks.
    from rnr_sim.analytics.metrics import compute_metrics
    from rnr_sim.analytics.run import load_run
    from rnr_sim.runs import planning, runner

    run_dir = out / "flagged-run"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    runner.start_run(planning.RunOptions(decks=paths, games=FLAG_RUN_DEALS, seed=options.seed,
                                       cards=options.cards, rules=options.rules,
                                       threads=options.threads, out=run_dir),
                     progress=progress, log=log)
    cards = compute_metrics(load_run(run_dir)).cards
    flagged = cards.filter(cards["flag"] != "")["card"].to_list()
    if not flagged:
        raise InputError(f"{tf.where}: [scope] cards = \"flagged\": the report flags no card "
                         f"of the metagame ({FLAG_RUN_DEALS} deals a pair, {run_dir}); name "
                         "the cards to change instead")
    ids = sorted(plan.catalog.by_name[c] for c in flagged)
    games = len(plan.tables) * FLAG_RUN_DEALS * 2
    return ids, {"how": "flagged by the report", "run": str(run_dir), "games": games,
                 "cards": flagged}


def _power_flags(d: Path, tf, plan) -> tuple[list[int], dict[str, Any]]:
    """``cards = "flagged"`` read from a power dir (``rnr-sim power``): the cards it flags
    too strong or too weak, on the same catalog."""
    import polars as pl

    from rnr_sim.runs.searchdirs import verify_power_dir

    try:
        manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(f"--power {d}: not a complete power dir ({e}); give a dir written "
                         "by rnr-sim power") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != "power" \
            or manifest.get("mode") != "pool":
        raise InputError(f"--power {d}: not a power dir of a card pool (rnr-sim power "
                         "without --deck)")
    verify_power_dir(d, manifest)
    if (manifest.get("catalog") or {}).get("sha256") != plan.catalog.sha256:
        raise InputError(f"--power {d}: measured another catalog "
                         f"({(manifest.get('catalog') or {}).get('name')}) than this run's "
                         f"({plan.catalog.name}); give --cards as the power run had them")
    table = pl.read_parquet(d / "power.parquet")
    flagged = table.filter(pl.col("flag") != "")["card"].to_list()
    if not flagged:
        raise InputError(f"{tf.where}: [scope] cards = \"flagged\": the power dir {d} flags "
                         "no card; name the cards to change instead")
    ids = sorted(plan.catalog.by_name[c] for c in flagged)
    return ids, {"how": "flagged by a power dir", "power": str(d),
                 "power_id": (manifest.get("identity") or {}).get("id"), "cards": flagged}


def balance(options: BalanceOptions, progress: bool = True,
            log: Callable[[str], None] | None = None) -> Balance:
    """A balance run (module docstring) into ``options.out``; ``InputError`` for bad input.
    Ctrl-C during the search stops after the games under way (``Balance.stopped``;
    ``--resume`` carries on from ``out/.balance/``)."""
    from rnr_sim.balance.targets import knobs_of, load_targets, switch_knobs
    from rnr_sim.runs import outdir, planning
    from rnr_sim.runs.arguments import check_count
    from rnr_sim.runs.dirlock import DirLock
    from rnr_sim.runs.execution import log_to_stderr, open_backend

    log = log or log_to_stderr
    t_start = time.perf_counter()
    tf = load_targets(options.targets)
    if options.power is not None and not tf.scope.flagged:
        raise InputError(f"--power {options.power}: read only by [scope] cards = \"flagged\" "
                         f"({tf.where} names its cards); drop --power or ask for the flagged "
                         "cards")
    budget = check_count(options.budget, "--budget", MIN_BUDGET, MAX_BUDGET)
    n_suggest = check_count(options.suggestions, "--suggestions", 1, 20)
    if options.yardstick:
        check_count(options.yardstick, "--yardstick", 1, 10_000)
    check_count(options.seed, "--seed", 0, planning.SEED_LIMIT - 1 - 10**7)
    out = Path(options.out) if options.out is not None else outdir.default_out("balance-")
    outdir.check_dir(out, options.resume, "balance", CHECKPOINT, "balance", "balance run",
                     given=options.out is not None)
    paths, weights, cards, source = _metagame_inputs(options)
    options.cards = cards
    plan = planning.plan_run(planning.RunOptions(decks=paths, games=1, seed=options.seed,
                                             cards=cards, rules=options.rules,
                                             threads=options.threads))
    n = len(plan.decks)
    if n < 2:
        raise InputError("the metagame needs at least 2 decks")
    if tf.targets.min_support is not None and tf.targets.min_support > n:
        from rnr_sim.balance.targets import _Lines

        at = _Lines(tf.where, tf.text).of("min_support", table="targets")
        raise InputError(f"{at}: min_support = {tf.targets.min_support}: the metagame has "
                         f"{n} decks, so its equilibrium plays at most {n}; ask for {n} or "
                         "fewer")
    where = open_backend(options.backend, options.address, options.threads)  # Ray missing:
    # said before the dir is made
    if weights is None:
        weights = np.full(n, 1.0 / n)
    weights = weights / weights.sum()
    fresh = make_dir(out, "balance dir")
    try:
        ids, scope_how = _scope_ids(tf, plan, options, paths, out, progress, log)
        knobs = knobs_of(plan.catalog, ids, tf.scope.fields, tf.scope.max_step) + \
            switch_knobs(plan.profile, tf.scope.switches, tf.scope.max_step)
        if not knobs:
            raise InputError(f"{tf.where}: [scope]: none of the {len(ids)} cards in scope "
                             f"has a number among fields = {list(tf.scope.fields)}; widen "
                             "the fields or the cards")
    except InputError:
        if fresh and not options.resume:
            shutil.rmtree(out, ignore_errors=True)
        raise
    # One writer at a time: a second balance (or --resume) on this dir is told who holds it.
    with outdir.resume_on_full_disk("balance", out), DirLock(out, "balance dir"):
        return _balance(out, options, tf, plan, paths, weights, source, scope_how, knobs,
                        budget, n_suggest, where, log, progress, t_start)


def _balance(out, options, tf, plan, paths, weights, source, scope_how, knobs, budget,
             n_suggest, where, log, progress, t_start) -> Balance:
    """``balance``'s phases, the dir locked: search, verification, re-discovery."""
    from rnr_sim.balance import output, search, verify
    from rnr_sim.runs import planning
    from rnr_sim.runs.evaluation import BatchStore, Evaluator, Pool
    from rnr_sim.runs.execution import Progress

    n = len(plan.decks)
    driver = planning.engine_driver()
    plan.compile(driver)
    support_matters = tf.targets.min_support is not None
    # A discovery's metagame moves with its equilibrium (metrics, "adaptive"): every deck
    # plays every deck, as when the support is a target.
    adaptive = options.discovery is not None
    fld = np.arange(n) if support_matters or adaptive else np.flatnonzero(weights > 0)
    meta = search.Metagame(plan.deck_names, paths, weights, Pool.of_plan(plan),
                           plan.deck_policy.astype(np.int32), np.arange(n), fld, source,
                           mirrors=options.discovery is not None)
    ledger = budget_ledger(budget - int(scope_how.get("games", 0)),  # the flagged run's
                           options.rediscover)
    search_budget = ledger.allowance("search")
    fingerprint = output.fingerprint(plan, tf, knobs, budget, options, weights)
    store = BatchStore(out / CHECKPOINT)
    store.open(fingerprint, options.resume)
    for stale in ("verify", "suggestions"):
        shutil.rmtree(out / stale, ignore_errors=True)
    t0 = time.perf_counter()
    bar = Progress("balance: search", total=search_budget, show=progress, log=log)
    remote = None if options.backend == "local" else where
    with where, bar, Evaluator(driver, backend=remote, threads=options.threads, progress=bar,
                               store=store, seen=tf.targets.iwd_max is not None) as ev:
        found = search.run(ev, meta, plan, knobs, tf.targets, tf.scope.max_changes,
                           search_budget, options.seed, n_suggest, bar=bar, log=bar.note)
        if found is None or found.stopped:
            return _stopped(out, ev, log)
    search_s = time.perf_counter() - t0
    if not found.baseline_judged.missed:
        return output.write(out, plan, tf, meta, knobs, found, [], {}, options, scope_how,
                            budget, seconds={"search": search_s,
                                             "total": time.perf_counter() - t_start})
    # Verification: every suggestion through compare on fresh deals.
    (out / "suggestions").mkdir(exist_ok=True)
    files = output.write_patches(out, plan.catalog, plan.profile, knobs, found, tf)
    ledger.spend("search", found.games)
    verify_games = ledger.allowance("verify")
    per_deal = 2 * len(plan.tables) * 2
    deals = max(MIN_VERIFY_DEALS, verify_games // max(1, len(files) * per_deal))
    t0 = time.perf_counter()
    checked = []
    for rank, (patch, rules_b) in enumerate(files, start=1):
        shown = ", ".join(str(f) for f in (patch, rules_b) if f is not None)
        log(f"verifying suggestion {rank:02d} ({shown}) with compare on {deals:,} fresh "
            "deals a pair")
        checked.append(verify.check(rank, patch, rules_b, meta, tf.targets, options.cards,
                                    options.rules, deals, options.seed,
                                    out / "verify" / f"{rank:02d}", options, progress, log))
    verify_s = time.perf_counter() - t0
    yard = _yardstick(checked[0], meta, options, log) if options.yardstick and checked else None
    # The metagame after: a warm-started discovery with each patched catalog and rules; its strongest
    # deck then plays the metagame with the unchanged cards too, on the same deals, so that
    # a deck the patch made strong is told from one the cards held already.
    from rnr_sim.cards import DEFAULT_CATALOG
    from rnr_sim.decks import catalog_paths  # --cards, else the decks' Cards: headers
    from rnr_sim.discover import MIN_BUDGET as DISCOVER_MIN

    t0 = time.perf_counter()
    after: dict[int, dict[str, Any]] = {}
    ledger.spend("verify", sum(v.games for v in checked))
    left = ledger.allowance("rediscover")
    per = max(DISCOVER_MIN, left // max(1, len(files)))
    for v in checked:
        if left < DISCOVER_MIN:
            break
        b = min(per, left)
        # The discovery gets all but PATCH_EFFECT_SHARE of it; the rest replays its
        # strongest deck with the unchanged cards (as many deals as fit, up to its own).
        b_found = max(DISCOVER_MIN, int(b * (1 - PATCH_EFFECT_SHARE)))
        # The suggestion's catalog and rules: compare's variant catalog when it changes
        # cards, its rules profile when it changes switches.
        unchanged = list(catalog_paths(options.cards, meta.paths) or [DEFAULT_CATALOG])
        cards_after = unchanged if v.patch is None else [v.compare_dir / "variant-catalog.toml"]
        rules_after = options.rules if v.rules_b is None else v.rules_b
        log(f"re-discovery after suggestion {v.rank:02d}: discover with its "
            f"{'catalog' if v.rules_b is None else 'rules'}, {b_found:,} games")
        found_after = verify.rediscover(cards_after, meta, tf.targets, rules_after, b_found,
                                        options.seed, v.compare_dir / "discovery", options,
                                        progress, log)
        deals = min(found_after["deals"], (b - found_after["games"]) // (4 * len(meta.paths)))
        effect = None if deals < 2 else verify.patch_effect(
            Path(found_after["deck"]), cards_after, unchanged, meta, rules_after,
            options.rules, deals, options.seed, options)
        found_after["without_patch"] = effect
        if effect is not None:
            found_after["games"] += effect["games"]
        after[v.rank] = found_after
        left -= after[v.rank]["games"]
        v.after = after[v.rank]
    rediscover_s = time.perf_counter() - t0
    # Adaptation: the first verified suggestion against the deck its re-discovery found.
    t0 = time.perf_counter()
    adaptation = None
    first = next((v for v in checked if v.verified and v.rank in after), None)
    if first is not None:
        from rnr_sim.balance import adapt

        ledger.spend("rediscover", sum(a["games"] for a in after.values()))
        b = min(ledger.allowance("adapt"), ledger.left())
        changes = found.suggestions[first.rank - 1].changes
        rounds, holds = adapt.adapt(out, options, tf, plan, meta, knobs, changes,
                                    after[first.rank], b, options.seed, log, progress)
        adaptation = {"suggestion": first.rank, "holds": holds,
                      "games": sum(r.games for r in rounds),
                      "rounds": [r.to_json() for r in rounds]}
    adapt_s = time.perf_counter() - t0
    return output.write(out, plan, tf, meta, knobs, found, checked, after, options, scope_how,
                        budget, seconds={"search": search_s, "verify": verify_s,
                                         "rediscover": rediscover_s, "adapt": adapt_s,
                                         "total": time.perf_counter() - t_start},
                        adaptation=adaptation, yardstick=yard)


#: The yardstick check's deals come from a seed of their own.
YARDSTICK_SEED_OFFSET = 9_000_011


def _yardstick(v, meta, options: BalanceOptions, log) -> dict[str, Any] | None:
    """The first suggestion's effect on every deck checked with the search pilot in every
    seat (``yardstick.check_patch``), on ``options.yardstick`` deals: does each deck's
    change hold with a stronger pilot?"""
    from rnr_sim import yardstick
    from rnr_sim.cards import load_catalog
    from rnr_sim.rules import load_profile
    from rnr_sim.runs import planning
    from rnr_sim.runs.evaluation import Evaluator

    cards_after = meta.pool.cards if v.patch is None else np.ascontiguousarray(
        load_catalog(v.compare_dir / "variant-catalog.toml").compile(), dtype=np.int32)
    rules_after = None if v.rules_b is None else load_profile(v.rules_b).compile()
    log(f"yardstick: suggestion {v.rank:02d} on {options.yardstick} deals a pair with the "
        "search pilot in every seat")
    weights = None if meta.adaptive else meta.weights
    # each deck's verdict: its change on the verification's fresh deals, where a deck
    # target was measured (the others: the heuristic change on the check's own deals)
    z = 1.959963984540054
    verdicts = {r.subject: (r.change, (r.change_hi - r.change_lo) / (2 * z))
                for r in v.rows if r.target == "deck_share_max"}
    with Evaluator(planning.engine_driver(), threads=options.threads) as ev:
        checks = yardstick.check_patch(ev, meta.pool, cards_after, meta.names, meta.pilots,
                                       options.yardstick,
                                       options.seed + YARDSTICK_SEED_OFFSET,
                                       verdicts=verdicts or None, weights=weights,
                                       rules_after=rules_after)
        games = ev.games_played
    if checks is None:
        raise KeyboardInterrupt
    return {"suggestion": v.rank, "deals": options.yardstick, "games": games,
            "summary": yardstick.summary_sentence(checks),
            "lines": yardstick.check_lines(checks),
            "checks": yardstick.frame(checks).to_dicts()}


def _stopped(out: Path, ev, log) -> Balance:
    done = ev.games_played + ev.games_stored
    msg = (f"stopped: {done:,} games of the search kept in {out / CHECKPOINT}; continue with "
           f"`rnr-sim balance --resume --out {shlex.quote(str(out))}` and the same options")
    return Balance(out=out, status="stopped", manifest={}, stopped=True, messages=[msg])
