"""The coverage of card power's paired intervals, measured (``rnr-sim check coverage
--power``).

``rnr-sim power`` reports paired intervals on fixed swapped decks (``race.Arm``): a swap's
gain, a cut's worth, the mean over hosts; each is ``stats.paired_gain`` of the arm's per-deal
share minus its host's on the same deals, the 95% interval ``gain ± 1.96 se``. This module
measures how often such an interval holds the gain it estimates:

- **Subjects.** Fixed arms on the catalog of the decks (the Foundation catalog for the
  sample decks), the decks the field and the hosts, drawn once by ``pick`` with a generator
  seeded by the first seed: one-copy swaps and full-set swaps (``swaps.swap_in``, the worth
  ordering all zeros: a card takes the place of the host's first cards of its Order in
  catalog order), cuts (``swaps.cut``), and the mean over hosts of a card swapped in at its
  full set into every host where that is legal (the full-set arms of those cards). The
  cards are the field's own (a card no deck plays would mostly change nothing); the mean's
  cards are not Pillars (with the worth all zeros a Pillar's set mostly takes the place of
  Pillars of the same stats, and changes no game).
- **Truth.** Each subject's gain on ``reference`` deals a field deck (default
  ``REFERENCE_FACTOR`` times a seed's deals) of a seed no seed of the check uses (the first
  seed + ``REFERENCE_SEED_OFFSET``): its standard error is about ``1/sqrt(REFERENCE_FACTOR)``
  of one seed's. Power's figures are measured on fresh deals, so the truth is the gain on
  other deals of the same arm: the estimate of a fixed arm, not of a selected one.
- **Check.** Seed k's interval holds the truth when ``|g_k - truth| <= z sqrt(se_k² +
  se_ref²)``: the reference's own noise widens the check, as the leave-one-out families
  of ``checks.coverage`` are stretched for theirs (``sqrt(1 + 1/REFERENCE_FACTOR)``, 2.5%
  at the default). A subject's seeds share its reference's error: at the default that
  moves one subject's chance to hold by about a point at most (second order in the
  reference's 0.22 se), and the family's coverage not at all on average. A subject whose
  gain is the same in every seed and in the reference (a swap that changes no game) is
  left out: it holds trivially.
- **Coverage.** Per family, the share of intervals that hold, with its 95% interval with
  the *seed* as the unit (``stats.ratio_by_deal``: a Wilson interval on the effective count;
  a seed's intervals share its deals, so they may hold or miss together). ``spread``: the
  mean over subjects of the variance of ``g_k`` between seeds over the mean ``se_k²``, the
  variance seen over the one the intervals assume (1 when ``se`` is right).

Families: ``power one-copy swap``, ``power full-set swap``, ``power cut``, ``power mean
over hosts``, and ``power, every interval`` (all of them together).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from rnr_sim.analytics.stats import Z95, paired_gain, ratio_by_deal
from rnr_sim.power import swaps
from rnr_sim.power.race import Arm

ONE_COPY = "power one-copy swap"
FULL_SET = "power full-set swap"
CUT = "power cut"
MEAN = "power mean over hosts"
EVERY = "power, every interval"
FAMILIES = (ONE_COPY, FULL_SET, CUT, MEAN)

#: The reference's deals, in seeds' deals: its standard error is 1/sqrt(20) = 0.22 of a
#: seed's, and the check is widened by sqrt(1 + 1/20) for it.
REFERENCE_FACTOR = 20
#: The reference's seed, from the first seed: far from any seed of the check.
REFERENCE_SEED_OFFSET = 7_000_003
#: Arms of each kind: one-copy swaps, cuts; cards whose full set goes into every host.
ONE_COPY_ARMS, CUT_ARMS, MEAN_CARDS = 6, 6, 3


@dataclass
class Probe:
    """One interval the check measures: its family, a readable subject, and the arms whose
    per-deal differences it averages (one arm, or a card's arms over hosts)."""

    family: str
    subject: str
    arms: list[int]


@dataclass
class PowerCoverage:
    """What ``measure`` played and measured."""

    seeds: list[int]
    deals: int  # deals a field deck in each seed
    reference_seed: int
    reference_deals: int
    decks: list[str]
    arms: int
    total_games: int
    intervals: pl.DataFrame  # one row per (seed, subject): ``INTERVAL_COLUMNS``
    table: pl.DataFrame  # ``truth_coverage``
    seconds: float = 0.0


def pick(laws, hosts: list[swaps.Host], rng: np.random.Generator,
         one_copy: int = ONE_COPY_ARMS, cuts: int = CUT_ARMS, mean_cards: int = MEAN_CARDS
         ) -> tuple[list[tuple[int, np.ndarray]], list[Probe]]:
    """The fixed arms ((host, slots) each) and the probes over them (module docstring).
    Hosts are taken in a shuffled turn, so each kind spreads over the decks."""
    names = laws.catalog.cards
    counts = [h.counts(laws.n_cards) for h in hosts]
    played = sorted({int(c) for h in hosts for c in h.slots})
    arms: list[tuple[int, np.ndarray]] = []
    probes: list[Probe] = []
    turn = rng.permutation(len(hosts))

    def add(family: str, subject: str, h: int, slots: np.ndarray) -> None:
        probes.append(Probe(family, f"{hosts[h].name}: {subject}", [len(arms)]))
        arms.append((h, slots))

    for i in range(one_copy):
        h = int(turn[i % len(hosts)])
        legal = [(c, s) for c in played if counts[h][c] == 0
                 and (s := swaps.swap_in(laws, hosts[h], c, 1, {})) is not None]
        if legal:
            c, s = legal[int(rng.integers(len(legal)))]
            add(ONE_COPY, f"+1 {names[c].name}", h, s)
    for i in range(cuts):
        h = int(turn[(one_copy + i) % len(hosts)])
        taken = {p.subject for p in probes}
        legal = [(c, s) for c in sorted({int(x) for x in hosts[h].slots})
                 if f"{hosts[h].name}: cut {names[c].name}" not in taken
                 and (s := swaps.cut(laws, hosts[h], c)) is not None]
        if legal:
            c, s = legal[int(rng.integers(len(legal)))]
            add(CUT, f"cut {names[c].name}", h, s)
    full = {c: swaps.levels(laws, c)[-1] for c in played}
    pillar = laws.of_type("pillar")
    by_card = {c: [(h, s) for h in range(len(hosts))
                   if (s := swaps.swap_in(laws, hosts[h], c, full[c], {})) is not None]
               for c in played if full[c] > 1 and not pillar[c]}
    cands = [c for c, legal in by_card.items() if len(legal) >= 2]
    for c in map(int, rng.choice(cands, size=min(mean_cards, len(cands)), replace=False)):
        first = len(arms)
        for h, s in by_card[c]:
            add(FULL_SET, f"{full[c]} {names[c].name}", h, s)
        probes.append(Probe(MEAN, f"{full[c]} {names[c].name}, mean over "
                                  f"{len(arms) - first} hosts", list(range(first, len(arms)))))
    return arms, probes


def gains(arms: Sequence[Arm], probes: Sequence[Probe], weights: np.ndarray
          ) -> list[tuple[float, float]]:
    """(gain, se) of each probe: ``paired_gain`` of its arms' per-deal differences averaged
    over them (``measure.power``'s mean over hosts; one arm: that arm's gain)."""
    out = []
    for p in probes:
        diff = np.mean([arms[i].differences() for i in p.arms], axis=0)
        g, se = paired_gain(diff, weights)
        out.append((float(g), float(se)))
    return out


INTERVAL_COLUMNS = {"family": pl.String, "subject": pl.String, "seed": pl.Int64,
                    "value": pl.Float64, "se": pl.Float64, "truth": pl.Float64,
                    "truth_se": pl.Float64}


def truth_coverage(intervals: pl.DataFrame, z: float = Z95) -> pl.DataFrame:
    """Coverage per family of intervals ``value ± z se`` against a measured ``truth`` (its
    standard error ``truth_se``), over seeds (column ``seed``), and once more over every
    family (``EVERY``). Columns: ``family``, ``subjects``, ``intervals``, ``covered``,
    ``coverage`` with ``coverage_lo``/``_hi`` (95%, the seed as the unit), ``spread``,
    ``mean_abs_truth``, ``mean_se``, ``mean_truth_se``, ``seeds`` (module docstring)."""
    kept = intervals.filter(~_trivial().over("family", "subject"))
    checked = pl.concat([kept, kept.with_columns(pl.lit(EVERY).alias("family"))]).with_columns(
        ((pl.col("value") - pl.col("truth")).abs()
         <= z * (pl.col("se") ** 2 + pl.col("truth_se") ** 2).sqrt()).alias("covered"),
        pl.lit(0).alias("_one"))
    spread = checked.group_by("family", "subject").agg(
        (pl.col("value").var() / (pl.col("se") ** 2).mean()).alias("_spread"))
    out = checked.group_by("family").agg(
        pl.col("subject").n_unique().alias("subjects"),
        pl.len().alias("intervals"),
        pl.col("covered").sum().alias("covered"),
        pl.col("truth").abs().mean().alias("mean_abs_truth"),
        pl.col("se").mean().alias("mean_se"),
        pl.col("truth_se").mean().alias("mean_truth_se"),
        pl.col("seed").n_unique().alias("seeds"),
    ).join(spread.filter(pl.col("_spread").is_finite()).group_by("family")
           .agg(pl.col("_spread").mean().alias("spread")), on="family", how="left")
    cov = ratio_by_deal(checked, "covered", pl.lit(1), by=["family"], name="coverage",
                        stratum="_one", deal="seed").collect()
    out = out.join(cov.select("family", "coverage", "coverage_lo", "coverage_hi"),
                   on="family", how="left")
    order = {f: i for i, f in enumerate((*FAMILIES, EVERY))}
    return out.select(
        "family", "subjects", "intervals", "covered", "coverage", "coverage_lo",
        "coverage_hi", "spread", "mean_abs_truth", "mean_se", "mean_truth_se", "seeds",
    ).sort(pl.col("family").replace_strict(order, default=len(order)), "family")


def _trivial() -> pl.Expr:
    """A subject's gain is the same in every seed and in the reference: left out."""
    return (pl.col("value").max() == pl.col("value").min()) & \
        (pl.col("value").first() == pl.col("truth").first())


def measure(decks: Sequence[str | Path], seeds: Sequence[int], deals: int,
            reference: int | None = None, threads: int | None = None, show: bool = False,
            log: Callable[[str], None] | None = None) -> PowerCoverage:
    """Pick the arms (``pick``), play them and their hosts against the decks on
    ``reference`` deals of the reference seed, then on ``deals`` deals of each seed, through
    the evaluation service (``race.Bench``), and count ``truth_coverage``. ``show``: a
    progress bar on stderr."""
    from rnr_sim.discover.genome import Laws
    from rnr_sim.discover.search import Field
    from rnr_sim.power.race import Bench
    from rnr_sim.runs import planning
    from rnr_sim.runs.arguments import check_count
    from rnr_sim.runs.evaluation import Evaluator, Pool
    from rnr_sim.runs.execution import Progress, log_to_stderr

    t0 = time.perf_counter()
    check_count(seeds[0], "--seed", 0,
                       planning.SEED_LIMIT - 1 - max(REFERENCE_SEED_OFFSET, len(seeds)))
    reference = REFERENCE_FACTOR * deals if reference is None else reference
    ref_seed = seeds[0] + REFERENCE_SEED_OFFSET
    plan = planning.plan_run(planning.RunOptions(decks=list(decks), games=1, seed=ref_seed,
                                             threads=threads))
    laws = Laws.of(plan.catalog, plan.profile)
    driver = planning.engine_driver()
    plan.compile(driver)
    hosts = [swaps.Host(d.name, np.asarray(d.card_ids, dtype=np.int32), int(p))
             for d, p in zip(plan.decks, plan.deck_policy, strict=True)]
    fld = Field([h.slots for h in hosts], plan.deck_policy)
    fixed, probes = pick(laws, hosts, np.random.default_rng(seeds[0]))
    subjects = len(fixed) + len({h for h, _ in fixed})
    per_deal = subjects * 2 * len(fld)
    total = per_deal * (reference + deals * len(seeds))
    bar = Progress("check coverage --power", total=total, show=show,
                   log=log or log_to_stderr)
    with bar, Evaluator(driver, threads=threads, progress=bar) as ev:
        pool = Pool.of_plan(plan)

        def play(seed: int, n: int, what: str) -> list[tuple[float, float]]:
            arms = [Arm(h, s) for h, s in fixed]
            bench = Bench(ev, pool, fld, [h.slots for h in hosts],
                          [h.pilot for h in hosts], seed)
            bar.set_postfix(what)
            if not bench.play(arms, 0, n, what):
                raise KeyboardInterrupt
            return gains(arms, probes, fld.weights)

        truth = play(ref_seed, reference, "reference")
        rows = []
        for i, seed in enumerate(seeds):
            got = play(seed, deals, f"seed {i + 1}/{len(seeds)}")
            rows += [(p.family, p.subject, seed, g, se, t, tse)
                     for p, (g, se), (t, tse) in zip(probes, got, truth, strict=True)]
    intervals = pl.DataFrame(rows, schema=INTERVAL_COLUMNS, orient="row")
    return PowerCoverage(list(seeds), deals, ref_seed, reference, plan.deck_names, len(fixed),
                         total, intervals, truth_coverage(intervals),
                         round(time.perf_counter() - t0, 1))


def subjects_table(cov: PowerCoverage) -> pl.DataFrame:
    """Per subject: its truth and the reference's standard error, the seeds' mean gain and
    standard error, its ``spread`` (``truth_coverage``), how many of its intervals held
    the truth, and whether it is ``counted`` (not left out as trivial)."""
    z = Z95
    return cov.intervals.group_by("family", "subject", maintain_order=True).agg(
        pl.col("truth").first(), pl.col("truth_se").first(),
        pl.col("value").mean().alias("mean_gain"), pl.col("se").mean().alias("mean_se"),
        (pl.col("value").var() / (pl.col("se") ** 2).mean()).alias("spread"),
        ((pl.col("value") - pl.col("truth")).abs()
         <= z * (pl.col("se") ** 2 + pl.col("truth_se") ** 2).sqrt()).sum().alias("covered"),
        pl.len().alias("seeds"), (~_trivial()).alias("counted"))


def format_power_coverage(cov: PowerCoverage, low: float = 0.93, high: float = 0.97) -> str:
    """The families' coverage, one line each (``!`` outside [low, high]), then every
    subject's truth and count."""
    def pp(x) -> str:
        return "-" if x is None or not math.isfinite(x) else f"{100 * x:+.2f}"

    head = ["family", "subjects", "intervals", "coverage", "spread", "mean |gain| pp",
            "mean se pp", "reference se pp"]
    body = []
    for r in cov.table.iter_rows(named=True):
        mark = "" if low <= r["coverage"] <= high else " !"
        body.append([r["family"], f"{r['subjects']}", f"{r['intervals']:,}",
                     f"{100 * r['coverage']:.1f}% [{100 * r['coverage_lo']:.1f}, "
                     f"{100 * r['coverage_hi']:.1f}]{mark}",
                     _num(r["spread"]),
                     f"{100 * r['mean_abs_truth']:.2f}", f"{100 * r['mean_se']:.2f}",
                     f"{100 * r['mean_truth_se']:.2f}"])
    lines = [f"Coverage of power's paired 95% intervals over {len(cov.seeds)} seeds "
             f"({cov.seeds[0]}-{cov.seeds[-1]}) x {cov.deals} deals a field deck "
             f"({len(cov.decks)} decks as field and hosts, {cov.arms} fixed arms, "
             f"{cov.total_games:,} games, {cov.seconds:.0f} s): the share of intervals that "
             f"hold the gain measured on {cov.reference_deals:,} deals a field deck of seed "
             f"{cov.reference_seed} (checked as |gain - truth| <= 1.96 sqrt(se² + "
             f"reference se²)), with its 95% interval, the seed as the unit. spread: the "
             f"variance of the gain between seeds over the mean se² (1 when se is right). "
             f"Target {100 * low:.0f}-{100 * high:.0f}%; ! = outside.", ""]
    lines += _aligned(head, body)
    subs = subjects_table(cov)
    lines += ["", "Subjects (truth ± its se, pp; the seeds' mean gain and se, pp; spread; "
              "intervals that held):"]
    lines += _aligned(["family", "subject", "truth", "ref se", "mean gain", "mean se",
                       "spread", "held"],
                      [[r["family"], r["subject"], pp(r["truth"]), f"{100 * r['truth_se']:.2f}",
                        pp(r["mean_gain"]), f"{100 * r['mean_se']:.2f}", _num(r["spread"]),
                        f"{r['covered']}/{r['seeds']}" if r["counted"] else "left out"]
                       for r in subs.iter_rows(named=True)],
                      left=2)
    return "\n".join(lines)


def _num(x) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.2f}"


def _aligned(head: list[str], body: list[list[str]], left: int = 1) -> list[str]:
    """Rows as columns: the first ``left`` left-aligned, the rest right-aligned."""
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = ["  ".join([c.ljust(w) for c, w in zip(row[:left], widths[:left], strict=True)]
                       + [c.rjust(w) for c, w in zip(row[left:], widths[left:], strict=True)])
             for row in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines
