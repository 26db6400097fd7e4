"""``rnr-sim discover``: the decks players will find, searched among every legal deck of a
card pool, re-measured on fresh deals, and the metagame they make (docs/design.md,
"Discovery dir"; docs/search.md, "Finding the decks players will find").

The budget (every game the command plays) is spent in four phases, in this order:

1. **search** (``search.py``): MAP-Elites generations until the next could overrun
   ``SEARCH_SHARE`` of the budget; with ``--meta``, the search runs in rounds, each against
   the equilibrium mix of the round before (``meta.py``);
2. **tuning**: the pilots of the best elites fitted by ``tune`` (``meta.TUNE_SHARE``), a
   tuned pilot kept only when it wins more on tune's own held-out deals;
3. **held-out**: every elite and every field deck against the field on deals of a seed the
   search never used (what is left of the budget but the matrix's share);
4. **metagame**: the best elites and the field's decks against each other (``MATRIX_SHARE``),
   the matchup matrix, its Nash equilibrium and the paths of the metagame;
5. with ``--yardstick DEALS``, outside the budget: the best elites' held-out shares
   checked with the search pilot in every seat on the first DEALS held-out deals of each
   field deck (``rnr_sim.yardstick.check_elites``).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rnr_sim.errors import InputError
from rnr_sim.runs.planning import SearchOptions

ORIGINAL_SET = Path(__file__).resolve().parent.parent / "data" / "original.toml"
DEFAULT_BUDGET = 2_000_000
MIN_BUDGET = 50_000
MAX_BUDGET = 10**10
SEARCH_SHARE = 0.75
MATRIX_SHARE = 0.08


def budget_ledger(budget: int):
    """``discover``'s budget in the order it spends it (the module docstring): the search
    (``SEARCH_SHARE``), tuning (``meta.TUNE_SHARE``), the held-out re-measure (what is left
    but the matrix's share) and the metagame's matrix (what is left then)."""
    from rnr_sim.discover.meta import TUNE_SHARE
    from rnr_sim.runs.budget import Ledger

    return Ledger(budget, {"search": SEARCH_SHARE, "tune": TUNE_SHARE, "heldout": 0.0,
                           "metagame": MATRIX_SHARE}, rest=("heldout", "metagame"))
BATCH = 64  # children a generation
CHECKPOINT = ".discover"
MANIFEST = "manifest.json"


@dataclass
class DiscoverOptions(SearchOptions):
    """What ``rnr-sim discover`` was asked for; ``None`` means the default."""

    field: Sequence[str | Path] = ()  # default: the sample decks
    cards: Any = None  # default: the Original Set
    budget: int = DEFAULT_BUDGET
    meta: bool = False
    batch: int = BATCH
    cells: str = "path-speed"  # the archive's measures: search.CELLS
    yardstick: int = 0  # deals a field deck the best elites replay with the yardstick


@dataclass
class Discovery:
    """What a discovery found and where it wrote it."""

    out: Path
    manifest: dict[str, Any]
    archive: Any  # polars DataFrame, archive.parquet
    field: Any  # the field decks' held-out shares
    stopped: bool = False
    messages: list[str] = field(default_factory=list)


def discover(options: DiscoverOptions, progress: bool = True,
             log: Callable[[str], None] | None = None) -> Discovery:
    """Run a discovery (module docstring) into ``options.out``; ``InputError`` for bad
    input. Ctrl-C stops after the games under way: ``Discovery.stopped``, and
    ``--resume`` carries on from the checkpoint in ``out/.discover/``."""
    from rnr_sim.discover import output
    from rnr_sim.discover.genome import Laws
    from rnr_sim.runs import outdir, planning
    from rnr_sim.runs.arguments import check_count
    from rnr_sim.runs.dirlock import DirLock
    from rnr_sim.runs.evaluation import BatchStore
    from rnr_sim.runs.execution import log_to_stderr, open_backend

    log = log or log_to_stderr
    budget = check_count(options.budget, "--budget", MIN_BUDGET, MAX_BUDGET)
    batch = check_count(options.batch, "--batch", 4, 4096)
    if options.yardstick:
        check_count(options.yardstick, "--yardstick", 2)
    from rnr_sim.discover.search import CELLS

    if options.cells not in CELLS:
        raise InputError(f"--cells {options.cells}: unknown; choose one of {', '.join(CELLS)}")
    cells = CELLS[options.cells]
    out = Path(options.out) if options.out is not None else outdir.default_out("discover-")
    outdir.check_dir(out, options.resume, "discover", CHECKPOINT, "discovery", "discovery",
                     given=options.out is not None)
    field_paths = [Path(p) for p in options.field] or planning.sample_decks()
    from rnr_sim.decks import catalog_paths

    cards = catalog_paths(options.cards, field_paths) or [ORIGINAL_SET]
    cards = [cards] if isinstance(cards, str | Path) else list(cards)
    plan = planning.plan_run(planning.RunOptions(
        decks=field_paths, games=1, seed=options.seed, cards=cards, rules=options.rules,
        threads=options.threads, mirrors=True))
    laws = Laws.of(plan.catalog, plan.profile)
    where = open_backend(options.backend, options.address, options.threads)
    driver = planning.engine_driver()
    plan.compile(driver)
    fingerprint = output.fingerprint(plan, budget, batch, options.meta, cells.name,
                                     list(cards), options.yardstick)
    store = BatchStore(out / CHECKPOINT)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--out {out}: cannot create the discovery dir ({e.strerror})") \
            from None
    # One writer at a time: a second discover (or --resume) on this dir is told who holds it.
    with outdir.resume_on_full_disk("discover", out), DirLock(out, "discovery dir"):
        store.open(fingerprint, options.resume)
        return _discover(out, options, plan, laws, cells, budget, batch, where, driver, store,
                         fingerprint, progress, log)


def _discover(out, options, plan, laws, cells, budget, batch, where, driver, store,
              fingerprint, progress, log) -> Discovery:
    """``discover``'s phases, the dir locked and its checkpoint store open."""
    from rnr_sim.discover import meta, output
    from rnr_sim.runs.evaluation import Evaluator, Pool
    from rnr_sim.runs.execution import Progress

    t0 = time.perf_counter()
    bar = Progress("discover", total=budget, show=progress, log=log)
    with where, bar, Evaluator(driver, backend=None if options.backend == "local" else where,
                               threads=options.threads, progress=bar, store=store) as ev:
        pool = Pool.of_plan(plan)
        ledger = budget_ledger(budget)
        found = meta.rounds(ev, pool, plan, laws, cells, ledger.allowance("search"), batch,
                            options.seed, options.meta, bar)
        if found is None:
            return _stopped(out, ev, budget, log)
        ledger.spend("search", found.search_games)
        tuned = meta.tune_elites(ev, plan, laws, found, ledger.allowance("tune"), options.seed,
                                 driver)
        if tuned is None:
            return _stopped(out, ev, budget, log)
        ledger.spend("tune", tuned.games)
        heldout = meta.heldout(ev, pool, plan, laws, found, tuned, ledger.allowance("heldout"),
                               options.seed)
        if heldout is None:
            return _stopped(out, ev, budget, log)
        ledger.spend("heldout", heldout.games)
        bar.set_postfix(f"{len(found.share)} elites, best held-out "
                        f"{100 * heldout.share.max():.1f}%")
        matrix = meta.metagame(ev, pool, plan, found, tuned, heldout,
                               ledger.allowance("metagame"),
                               options.seed)
        if matrix is None:
            return _stopped(out, ev, budget, log)
        checked = None
        if options.yardstick:
            bar.close()  # the check counts its own games, outside the budget
            ybar = Progress("yardstick", show=progress, log=log)

            def evaluator() -> Evaluator:
                return Evaluator(driver, backend=None if options.backend == "local" else where,
                                 threads=options.threads, progress=ybar, stop=ev.stop,
                                 store=store)

            with ybar:
                checked = meta.yardstick(evaluator, pool, laws, cells, found, tuned, heldout,
                                         options.yardstick, options.seed, ybar)
            if checked is None:
                return _stopped(out, ev, budget, log)
    seconds = time.perf_counter() - t0
    result = output.write(out, plan, laws, cells, found, tuned, heldout, matrix, fingerprint,
                          games=ev.games_played + ev.games_stored, seconds=seconds,
                          command=options.command, checked=checked)
    store.remove()
    return result


def _stopped(out: Path, ev, budget: int, log) -> Discovery:
    done = ev.games_played + ev.games_stored
    msg = (f"stopped: {done:,} of about {budget:,} games kept in {out / CHECKPOINT}; "
           f"continue with `rnr-sim discover --resume --out {shlex.quote(str(out))}` and the "
           "same options")
    return Discovery(out=out, manifest={}, archive=None, field=None, stopped=True,
                     messages=[msg])
