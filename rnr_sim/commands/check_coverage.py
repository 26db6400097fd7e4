"""``rnr-sim check coverage``: how often the report's 95% intervals hold the value, over
independent seeds of the sample decks (``checks.coverage``); with ``--discovery`` a
discovery's held-out intervals (``checks.discovery_coverage``), with ``--power`` the paired
intervals of ``rnr-sim power`` (``checks.power_coverage``)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rnr_sim.commands import options as opt

OPTIONS = {
    "decks": opt.argument(list[Path] | None, default=None, metavar="[DECK]...",
                          help="Deck lists. Default: the sample decks (decks/*.txt)."),
    "seeds": opt.option(int, "--seeds", "-k", default=20, metavar="K",
                        help="Independent seeds (runs), at least 3."),
    "games": opt.games_option("Deals per table in each run.", default=200),
    "compare": opt.option(bool | None, "--compare/--no-compare",
                          help="Also measure compare's deltas (each seed then plays a baseline "
                               "and a variant on the same deals: about 1.5 times as long). "
                               "Default: on, off with --mirrors (compare plays no mirrors)."),
    "patch": opt.option(Path | None, "--patch", metavar="CARDS.toml",
                        help="The variant's card patch for --compare (as for `rnr-sim "
                             "compare`). Default: Minuteman Volley damage 3 -> 6, unless "
                             "--rules-b."),
    "rules_b": opt.option(Path | None, "--rules-b", metavar="RULES.toml",
                          help="The variant's rules profile for --compare."),
    "discovery": opt.option(Path | None, "--discovery", metavar="DIR",
                            help="Measure instead the held-out intervals of a discovery dir "
                                 "(`rnr-sim discover`): its elites and field decks "
                                 "re-measured against its field on --seeds seeds of --games "
                                 "deals a field deck."),
    "power": opt.option(bool, "--power",
                        help="Measure instead the paired intervals of `rnr-sim power` (a "
                             "swap's gain, a cut's worth, the mean over hosts) on fixed arms "
                             "of the decks: how often each seed's interval (--games deals a "
                             "field deck) holds the gain measured on 20 times as many deals "
                             "of a separate seed."),
}


@opt.command("coverage", OPTIONS,
             short_help="Measure how often the report's 95% intervals hold the value.",
             epilog="Example: rnr-sim check coverage --seeds 40 --games 300")
def coverage_command(*, decks, seeds, games, compare, patch, rules_b, discovery, power, players,
                     seed, mirrors, threads, as_json) -> None:
    """Play K independent seeds of the decks (default: the sample decks) with the real runner,
    compute every interval of the report for each (deck, matchup, first seat, path
    shares, branch, each card metric), and print per family the share of intervals that
    hold the mean of the other seeds' estimates, with its own 95% interval, for the
    report's per-deal intervals (after) and for Wilson intervals over independent games
    (before), and the design effects. Target: 93-97%. With --compare (the default), each
    seed is played as `rnr-sim compare` plays it (a baseline and a variant on the same
    deals; the variant: --patch, --rules-b, or a built-in patch, Minuteman Volley damage
    3 -> 6) and compare's deltas (decks, matchups, first seat, paths, patched and moved
    cards) are checked the same way; the report's families then come from the baseline
    run. The runs use the seeds --seed, --seed + 1, ... With --power, the paired intervals
    of `rnr-sim power` instead (one-copy swaps, full-set swaps, cuts, means over hosts of
    the decks), each checked against its gain on a reference 20 times a seed's deals."""
    from rnr_sim.checks.coverage import format_coverage, measure_coverage
    from rnr_sim.errors import InputError
    from rnr_sim.runs import planning

    if seeds < 3:
        raise InputError(f"--seeds must be at least 3 (a leave-one-out reference needs "
                         f"two other seeds), not {seeds}")
    if games < 1:
        raise InputError(f"--games must be a whole number at least 1, not {games}")
    deck_paths = list(decks) if decks else planning.sample_decks()
    first = planning.DEFAULT_SEED if seed is None else seed
    common = {"--players": players not in (None, 2), "--mirrors": mirrors,
              "--compare": bool(compare), "--patch": patch is not None,
              "--rules-b": rules_b is not None}
    if power:
        _check_mode("--power", "the paired intervals of `rnr-sim power` (two players, no "
                    "variant)", games, {**common, "--discovery": discovery is not None})
        return _power_coverage(deck_paths, [first + i for i in range(seeds)], games, threads,
                               as_json)
    if discovery is not None:
        _check_mode("--discovery", "a discovery's held-out intervals against its own field",
                    games, {"DECK arguments": bool(decks), **common})
    if compare is None:
        compare = not mirrors
    if compare and mirrors:
        raise InputError("--compare plays no mirror tables (as `rnr-sim compare`): drop "
                         "--mirrors or add --no-compare")
    if not compare and (patch is not None or rules_b is not None):
        raise InputError("--patch and --rules-b are the variant of --compare: drop them or "
                         "drop --no-compare")
    log = (lambda msg: None) if as_json else (
        lambda msg: typer.echo(f"check coverage: {msg}", err=True))
    if discovery is not None:
        cov = _discovery_coverage(discovery, [first + i for i in range(seeds)], games,
                                  threads, log)
    else:
        cov = measure_coverage(deck_paths, [first + i for i in range(seeds)], games,
                               players=players or 2, threads=threads, mirrors=mirrors,
                               progress=log, compare=compare, patch=patch,
                               rules_b=rules_b)
    if as_json:
        typer.echo(json.dumps({
            "seeds": cov.seeds, "games": cov.games, "players": cov.players,
            "decks": cov.decks, "total_games": cov.total_games, "change": cov.change,
            "seconds": cov.seconds,
            "families": cov.table.to_dicts(),
        }, indent=2))
    else:
        typer.echo(format_coverage(cov))


def _discovery_coverage(discovery: Path, seeds: list[int], games: int, threads, log):
    """The coverage of a discovery dir's held-out intervals (``checks.discovery_coverage``)."""
    import time

    from rnr_sim.checks.coverage import CoverageRun, coverage_table
    from rnr_sim.checks.discovery_coverage import heldout_intervals

    t0 = time.perf_counter()
    intervals, total = heldout_intervals(discovery, seeds, games, threads, log)
    return CoverageRun(seeds, games, 2, sorted(set(intervals["subject"])), total, intervals,
                       coverage_table(intervals), [], round(time.perf_counter() - t0, 1))


def _check_mode(mode: str, what: str, games: int, given: dict[str, bool]) -> None:
    """``--power`` and ``--discovery`` measure their own intervals only: refuse, in one line,
    the options they would not read (``given``: each option and whether it was given), and
    fewer than two deals (an interval's spread needs two)."""
    from rnr_sim.errors import InputError

    named = [flag for flag, on in given.items() if on]
    if named:
        raise InputError(f"{mode} measures {what}: drop {', '.join(named)}")
    if games < 2:
        raise InputError(f"{mode} needs --games at least 2 (an interval's spread needs two "
                         f"deals), not {games}")


def _power_coverage(decks: list[Path], seeds: list[int], games: int, threads,
                    as_json: bool) -> None:
    """The coverage of power's paired intervals (``checks.power_coverage``), printed."""
    from rnr_sim.checks.power_coverage import format_power_coverage, measure, subjects_table

    cov = measure(decks, seeds, games, threads=threads, show=not as_json)
    if as_json:
        typer.echo(json.dumps({
            "seeds": cov.seeds, "games": cov.deals, "players": 2, "decks": cov.decks,
            "arms": cov.arms, "reference_seed": cov.reference_seed,
            "reference_deals": cov.reference_deals, "total_games": cov.total_games,
            "seconds": cov.seconds, "families": cov.table.to_dicts(),
            "subjects": subjects_table(cov).to_dicts(),
        }, indent=2))
    else:
        typer.echo(format_power_coverage(cov))
