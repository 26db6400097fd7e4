"""``rnr-sim power``: what every card of a pool is worth, measured by putting it into decks
and taking cards out on the same deals; and, with ``--deck``, the deck doctor: which cards
of one deck to cut and what to put in (docs/design.md, "Card power"; docs/designers.md).

The budget (every game the command plays) is spent in three phases, in this order:

1. **worth** (``WORTH_SHARE``; the doctor's ``DOCTOR_CUT_SHARE``): every distinct card of
   each host cut (``swaps.cut``) on the same deals: what it is worth to its deck, which
   orders the host's cards from least to most valuable;
2. **race** (what is left but the fresh share): the swaps (``measure.power`` or
   ``measure.doctor``) raced on the deals of ``--seed``;
3. **fresh deals** (``FRESH_SHARE``): each card's best swap (the doctor: the best swaps)
   played again on deals of ``--seed`` + ``FRESH_SEED_OFFSET``, a seed the race never used:
   the figures reported.

The hosts are the field decks (``--field``, default the sample decks), and with
``--discovery`` its field and its best elites; with ``--deck`` the deck alone. Every host
plays with its own pilot (its ``Policy:`` header), against the field decks with theirs.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rnr_sim.errors import InputError
from rnr_sim.runs.planning import SearchOptions

DEFAULT_BUDGET = 20_000_000
MIN_BUDGET = 20_000
MAX_BUDGET = 10**10
DEFAULT_MARGIN = 0.02  # "too strong": a swap lifts its best host by more than 2 points
WORTH_SHARE = 0.10
DOCTOR_CUT_SHARE = 0.30
FRESH_SHARE = 0.20


def budget_ledger(budget: int, doctor: bool = False):
    """``power``'s budget in the order it spends it (the module docstring): the cards'
    worth (``WORTH_SHARE``, the doctor's ``DOCTOR_CUT_SHARE``), the race (what is left but
    the fresh deals') and the fresh deals (``FRESH_SHARE``)."""
    from rnr_sim.runs.budget import Ledger

    return Ledger(budget, {"worth": DOCTOR_CUT_SHARE if doctor else WORTH_SHARE, "race": 0.0,
                           "fresh": FRESH_SHARE}, rest=("race",))
FRESH_SEED_OFFSET = 6_000_029
CHECKPOINT = ".power"
MANIFEST = "manifest.json"


@dataclass
class PowerOptions(SearchOptions):
    """What ``rnr-sim power`` was asked for; ``None`` means the default."""

    field: Sequence[str | Path] = ()  # default: the sample decks
    discovery: str | Path | None = None
    deck: str | Path | None = None  # the deck doctor's deck
    cards: Any = None  # default: the Original Set (a discovery's own catalog)
    only_set: str | None = None  # measure this set's cards only
    only_cards: Sequence[str] = ()  # measure these cards only
    budget: int = DEFAULT_BUDGET
    margin: float = DEFAULT_MARGIN


@dataclass
class PowerResult:
    """What a power run measured and where it wrote it."""

    out: Path
    manifest: dict[str, Any]
    tables: dict[str, Any] = field(default_factory=dict)  # polars DataFrames by name
    stopped: bool = False
    messages: list[str] = field(default_factory=list)


@dataclass
class Inputs:
    """The decks of a power run: the field's paths, the hosts' paths beyond the field, and
    where they came from."""

    field: list[Path]
    extra_hosts: list[Path]
    cards: Any
    rules: Any
    doctor: bool
    source: str


def _inputs(options: PowerOptions) -> Inputs:
    from rnr_sim.decks import catalog_paths
    from rnr_sim.discover import ORIGINAL_SET
    from rnr_sim.runs import planning

    if options.discovery is not None:
        if options.deck is not None:
            raise InputError("--deck and --discovery: the deck doctor measures one deck "
                             "against --field; drop one of them")
        if options.field:
            raise InputError(f"--discovery {options.discovery} brings its own field; drop "
                             "--field")
        return _discovery_inputs(Path(options.discovery), options)
    fld = [Path(p) for p in options.field] or planning.sample_decks()
    hosts = [Path(options.deck)] if options.deck is not None else []
    # --cards, else the catalogs the decks' Cards: headers name, else the Original Set
    cards = catalog_paths(options.cards, [*hosts, *fld]) or [ORIGINAL_SET]
    if options.deck is not None:
        return Inputs(fld, [Path(options.deck)], cards, options.rules, True,
                      f"deck {options.deck} against {len(fld)} field decks")
    return Inputs(fld, [], cards, options.rules, False, f"field of {len(fld)} decks")


def _discovery_inputs(d: Path, options: PowerOptions) -> Inputs:
    """A discovery dir's field (the field) and its best elites (hosts beside the field),
    its catalog unless ``--cards``, its rules unless ``--rules``."""
    import json

    import polars as pl

    from rnr_sim.runs.searchdirs import verify_discovery_dir

    try:
        manifest = json.loads((d / MANIFEST).read_text(encoding="utf-8"))
        archive = pl.read_parquet(d / "matchups.parquet")
    except (OSError, ValueError) as e:
        raise InputError(f"--discovery {d}: not a complete discovery dir ({e}); give a dir "
                         "written by rnr-sim discover") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != "discovery":
        raise InputError(f"--discovery {d}: {d / MANIFEST} is not a discovery's manifest; "
                         "give a dir written by rnr-sim discover")
    verify_discovery_dir(d, manifest)
    fld = [Path(f["path"]) for f in manifest["field"]]
    elites = [d / "elites" / f"{int(lb.split()[1]):02d}.txt"
              for lb in dict.fromkeys(archive["deck"].to_list()) if lb.startswith("elite ")]
    cards = options.cards or [Path(s["path"]) for s in manifest["catalog"]["sources"]
                              if s.get("path")]
    rules = options.rules if options.rules is not None else \
        (manifest.get("rules") or {}).get("source")
    return Inputs(fld, elites, cards, rules, False,
                  f"discovery {d} ({len(fld)} field decks, {len(elites)} elites)")


def _measured_cards(catalog, options: PowerOptions) -> tuple[list[int], str]:
    """The catalog ids to measure, and how they were chosen."""
    if options.only_set is None and not options.only_cards:
        return list(range(len(catalog.cards))), "every card of the catalog"
    ids: list[int] = []
    how = []
    if options.only_set is not None:
        if options.only_set not in catalog.sets:
            raise InputError(f"--set {options.only_set}: no such set in the catalog; its "
                             f"sets: {', '.join(catalog.sets)}")
        files = {str(src.path) for src, (name, _) in zip(catalog.sources,
                                                          catalog.source_sets, strict=False)
                 if name == options.only_set and src.path is not None}
        ids += [i for i in range(len(catalog.cards))
                if catalog.set_of(i) == options.only_set  # its new cards, and its errata
                or any(e.rpartition(":")[0] in files for e in catalog.cards[i].errata)]
        how.append(f"the cards of set {options.only_set}")
    for name in options.only_cards:
        i = catalog.lookup(name)
        if i is None:
            near = catalog.closest(name)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise InputError(f"--card {name!r}: not in the catalog{hint}")
        ids.append(i)
    if options.only_cards:
        how.append(f"{len(options.only_cards)} named cards")
    ids = sorted(set(ids))
    if not ids:
        raise InputError(f"--set {options.only_set}: the set has no card of its own and no "
                         "errata; name the cards to measure with --card")
    how = " and ".join(how)
    return ids, how


def power(options: PowerOptions, progress: bool = True,
          log: Callable[[str], None] | None = None) -> PowerResult:
    """A power run (module docstring) into ``options.out``; ``InputError`` for bad input.
    Ctrl-C stops after the games under way (``PowerResult.stopped``; ``--resume`` carries
    on from ``out/.power/``)."""
    from rnr_sim.discover.genome import Laws
    from rnr_sim.runs import outdir, planning
    from rnr_sim.runs.arguments import check_count
    from rnr_sim.runs.execution import log_to_stderr, open_backend

    log = log or log_to_stderr
    budget = check_count(options.budget, "--budget", MIN_BUDGET, MAX_BUDGET)
    check_count(options.seed, "--seed", 0, planning.SEED_LIMIT - 1 - FRESH_SEED_OFFSET)
    if not 0 < options.margin < 1:
        raise InputError(f"--margin {options.margin}: a share of games between 0 and 1 "
                         "(0.02: two points)")
    out = Path(options.out) if options.out is not None else outdir.default_out("power-")
    outdir.check_dir(out, options.resume, "power", CHECKPOINT, "power", "power run",
                     given=options.out is not None)
    inputs = _inputs(options)

    def planned(decks: list[Path]):  # mirrors: a one-deck field is a field too
        return planning.plan_run(planning.RunOptions(
            decks=decks, games=1, seed=options.seed, cards=inputs.cards, rules=inputs.rules,
            threads=options.threads, mirrors=True))

    # The doctor's deck is planned apart: it may share a name with a field deck (a player's
    # copy of a sample deck, or the sample deck itself).
    plan = planned(inputs.field + ([] if inputs.doctor else inputs.extra_hosts))
    deck_plan = planned(inputs.extra_hosts) if inputs.doctor else None
    laws = Laws.of(plan.catalog, plan.profile)
    ids, how = _measured_cards(plan.catalog, options)
    driver = planning.engine_driver()
    for p in (plan, deck_plan):  # the engine's arrays (pilot rows by the driver's index)
        if p is not None:
            p.compile(driver)
    setup = _Setup(options, inputs, plan, deck_plan, laws, ids, how, budget)
    setup.check_budget()
    where = open_backend(options.backend, options.address, options.threads)
    from rnr_sim.power import output
    from rnr_sim.runs.dirlock import DirLock
    from rnr_sim.runs.evaluation import BatchStore

    fingerprint = output.fingerprint(setup)
    store = BatchStore(out / CHECKPOINT)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--out {out}: cannot create the power dir ({e.strerror})") from None
    with outdir.resume_on_full_disk("power", out), DirLock(out, "power dir"):
        store.open(fingerprint, options.resume)
        return _power(out, setup, where, driver, store, progress, log)


class _Setup:
    """The run's decks, hosts, field and budget, resolved."""

    def __init__(self, options: PowerOptions, inputs: Inputs, plan, deck_plan, laws,
                 ids: list[int], how: str, budget: int):
        from rnr_sim.power import measure, swaps

        self.options, self.inputs, self.plan, self.laws = options, inputs, plan, laws
        self.deck_plan = deck_plan
        self.ids, self.how, self.budget = ids, how, budget
        n_field = len(inputs.field)
        self.n_field = n_field
        decks = plan.decks
        pilots = plan.deck_policy.astype(np.int64)
        self.policies = plan.policy_table
        hosts = list(zip(decks, pilots, strict=True))
        if deck_plan is not None:  # its pilot rows after the field's
            hosts = [(deck_plan.decks[0], len(plan.policy_table) + deck_plan.deck_policy[0])]
            self.policies = np.vstack([plan.policy_table, deck_plan.policy_table])
        self.hosts = [swaps.Host(d.name, np.asarray(d.card_ids, dtype=np.int32), int(p))
                      for d, p in hosts]
        self.field_ids = [np.asarray(d.card_ids, dtype=np.int32) for d in decks[:n_field]]
        self.field_pilots = pilots[:n_field].astype(np.int32)
        self.field_counts = sum(np.bincount(c, minlength=laws.n_cards) for c in self.field_ids)
        self.games_per_deal = 2 * n_field
        n_cards = sum(len(set(h.slots.tolist())) for h in self.hosts)
        self.worth_arms = n_cards
        self.ledger = budget_ledger(budget, inputs.doctor)
        self.worth_deals = self.ledger.allowance("worth") // ((n_cards + len(self.hosts))
                                                             * self.games_per_deal)
        # The race's arms, counted with the hosts' cards in catalog order (the worth phase
        # orders them; the count of legal swaps barely moves with the order).
        if inputs.doctor:
            fake = [measure.Worth(0, c, 0, None, measure.Measured(-i, 1, 0, 0))
                    for i, c in enumerate(dict.fromkeys(int(x) for x in self.hosts[0].slots))]
            arms, _ = measure.doctor_swaps(laws, self.hosts[0], ids, fake)
            self.n_fresh = measure.TOP_ADDS
        else:
            arms, _, _ = measure.power_arms(laws, self.hosts, ids, [])
            self.n_fresh = len(ids)
        self.race_arms = max(1, len(arms))
        self.fresh_deals = self.ledger.allowance("fresh") // ((self.n_fresh + len(self.hosts))
                                                             * self.games_per_deal)
        # the race is held to what leaves the fresh deals whole
        self.ledger.hold("fresh", self.fresh_deals * (self.n_fresh + len(self.hosts))
                         * self.games_per_deal)

    def first_deals(self, spent: int) -> int:
        """The race's first stage (deals a field deck) once ``spent`` games are played."""
        from rnr_sim.power import measure

        left = self.race_budget(spent)
        per = self.games_per_deal * (self.race_arms * measure.race_cost_factor()
                                     + len(self.hosts) * measure.GROWTH ** (measure.STAGES - 1))
        return int(left // per)

    def race_budget(self, spent: int) -> int:
        """The race's games once ``spent`` games are played: the rest but the fresh deals'."""
        return self.ledger.total - spent - self.ledger.later("race")

    def check_budget(self) -> None:
        """Refuse a budget that cannot give every arm of each phase ``MIN_FIRST_DEALS``
        deals a field deck, naming the budget that can (each phase's deals grow in
        proportion to the budget)."""
        from rnr_sim.power import measure

        m = measure.MIN_FIRST_DEALS
        worth_games = self.worth_deals * (self.worth_arms + len(self.hosts)) \
            * self.games_per_deal
        fewest = min(self.worth_deals, self.fresh_deals, self.first_deals(worth_games))
        if fewest >= m:
            return
        need = int(self.budget * m / max(fewest, 0.5)) + 1 if fewest > 0 else None
        if need is None:  # the shares alone: scale from the race's arms
            need = int(m * self.games_per_deal * (self.race_arms + self.worth_arms
                                                  + self.n_fresh + 3 * len(self.hosts))
                       * 5)
        raise InputError(
            f"--budget {self.budget:,}: {len(self.ids)} cards in {len(self.hosts)} "
            f"host{'s' if len(self.hosts) > 1 else ''} ({self.race_arms:,} swaps) need about "
            f"{need:,} games to give each swap {m} deals a field deck; raise --budget or "
            "measure fewer cards (--set, --card)")


def _power(out: Path, setup: _Setup, where, driver, store, progress: bool, log) -> PowerResult:
    """The phases, the dir locked and its checkpoint store open."""
    from rnr_sim.discover.search import Field
    from rnr_sim.power import measure, output
    from rnr_sim.power.race import Bench
    from rnr_sim.runs.evaluation import Evaluator, Pool
    from rnr_sim.runs.execution import Progress

    options, plan, laws = setup.options, setup.plan, setup.laws
    t0 = time.perf_counter()
    fld = Field(setup.field_ids, setup.field_pilots)
    slots = [h.slots for h in setup.hosts]
    pilots = [h.pilot for h in setup.hosts]
    bar = Progress("power", total=setup.budget, show=progress, log=log)
    phases: dict[str, int] = {}
    with where, bar, Evaluator(driver, backend=None if options.backend == "local" else where,
                               threads=options.threads, progress=bar, store=store) as ev:
        pool = Pool.of_plan(plan, policies=setup.policies)
        bench = Bench(ev, pool, fld, slots, pilots, options.seed)
        fresh = Bench(ev, pool, fld, slots, pilots, options.seed + FRESH_SEED_OFFSET)
        bar.set_postfix("worth of the hosts' cards")
        worths = measure.worth(bench, laws, setup.hosts, list(range(len(setup.hosts))),
                               setup.worth_deals, setup.field_counts, "worth")
        if worths is None:
            return _stopped(out, ev, log)
        phases["worth"] = bench.games
        first = setup.first_deals(bench.games)
        race_budget = setup.race_budget(bench.games)
        note = bar.set_postfix
        if setup.inputs.doctor:
            found = measure.doctor(bench, fresh, laws, setup.hosts[0], setup.ids, worths,
                                   first, race_budget, setup.fresh_deals, "doctor", note)
        else:
            found = measure.power(bench, fresh, laws, setup.hosts, setup.ids, worths, first,
                                  race_budget, setup.fresh_deals, options.margin, "power",
                                  note)
        if found is None:
            return _stopped(out, ev, log)
        phases["race"] = bench.games - phases["worth"]
        phases["fresh"] = fresh.games
    seconds = time.perf_counter() - t0
    result = output.write(out, setup, worths, found, first, phases, seconds)
    store.remove()
    return result


def _stopped(out: Path, ev, log) -> PowerResult:
    done = ev.games_played + ev.games_stored
    msg = (f"stopped: {done:,} games kept in {out / CHECKPOINT}; continue with "
           f"`rnr-sim power --resume --out {shlex.quote(str(out))}` and the same options")
    return PowerResult(out=out, manifest={}, stopped=True, messages=[msg])
