"""The ``compare`` subcommand: a card patch and/or a rules variant against the baseline,
played on the same deals, with paired intervals and a report."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import typer

from rnr_sim.commands import options as opt
from rnr_sim.runs import planning
from rnr_sim.runs.execution import log_to_stderr

OPTIONS = {
    "decks": opt.argument(list[Path], metavar="DECK", help="Deck list files."),
    "patch": opt.option(Path | None, "--patch", metavar="CARDS.toml",
                        help='Card patch: [cards."Name"] fields to change, [[add]] cards, '
                             "remove = [...] (docs/designers.md)."),
    "rules_b": opt.option(Path | None, "--rules-b", metavar="PATH",
                          help="The variant's rules profile (a full profile, as for --rules)."),
    "deck_b": opt.option(Path | None, "--deck-b", metavar="DECK",
                         help="A second version of one DECK (the one of the same Name:, "
                              "else the one sharing the most cards): the variant plays it in "
                              "that deck's place, with its pilot, on the same deals (paired), "
                              "against the same field."),
    "games": opt.games_option("Deals per table, each in every seat order, in each run; with "
                              "--precision the most to play. Default: "
                              f"{planning.DEFAULT_GAMES:,} (with --precision: 50,000)."),
    "precision": opt.option(float | None, "--precision", metavar="X",
                            help="Add deals until every deck's win-rate change has a 95% "
                                 "half-width of at most X (0.01 = 1 point), by the "
                                 "Chow-Robbins rule; --games caps it."),
    "out": opt.out_option("DIR", "New or empty folder for baseline/ and variant/. Default: "
                                 "runs/compare-<YYYYmmdd-HHMMSS>."),
    "field_weights": opt.field_weights_option(
        "each deck's expected win rate against it before and after the change, paired on the "
        "same deals, and the best response before and after"),
    "targets": opt.option(Path | None, "--targets", metavar="T.toml",
                          help="A designer's balance targets (docs/design.md, \"Balance "
                               "targets\"): which of them the baseline and the variant meet."),
}


@opt.command("compare", OPTIONS,
             short_help="Check a card patch or rules variant on the same deals.",
             epilog="Example: rnr-sim compare decks/*.txt --patch volley.toml --precision 0.01")
def compare_command(*, decks, patch, rules_b, deck_b, games, precision, out, field_weights,
                    targets, players, seed, rules, cards, policy, threads, backend, address,
                    report, no_report, quiet, as_json) -> None:
    """Play the decks twice on the same tables, deals, seat orders and seed: once as they are
    (the baseline), once with a card patch (--patch), another rules profile (--rules-b)
    and/or a second version of one of the decks in its place (--deck-b). Every deck's win rate, matchup, victory-path share, seat figure and
    card metric is compared game by game, with 95% intervals from the paired per-deal
    differences and Benjamini-Hochberg flags. Writes both run dirs and a report
    (reports/<name>/index.html)."""
    from rnr_sim.analytics.field import check_before_play
    from rnr_sim.compare import (
        CompareOptions,
        Interrupted,
        compare_runs,
        format_compare,
        run_compare,
        summary_json,
    )
    from rnr_sim.compare.runs import write_summary

    check_before_play(field_weights, list(decks))
    goals = None
    if targets is not None:  # a bad file is refused before any game
        from rnr_sim.balance.targets import load_targets

        goals = load_targets(targets)
    options = CompareOptions(
        decks=decks, patch=patch, rules_b=rules_b, deck_b=deck_b, games=games,
        players=2 if players is None else players,
        seed=planning.DEFAULT_SEED if seed is None else seed,
        rules=rules, cards=cards, policy=policy, threads=threads, out=out,
        backend=backend, address=address,
        precision=precision, command=shlex.join(["rnr-sim", *sys.argv[1:]]),
    )
    log = (lambda m: None) if (quiet or as_json) else log_to_stderr
    try:
        result = run_compare(options, progress=not (quiet or as_json), log=log)
    except Interrupted as e:
        typer.echo(f"Stopped: {e}", err=True)
        raise typer.Exit(opt.EXIT_INTERRUPTED) from None
    t0 = time.perf_counter()
    paired = compare_runs(result.baseline_dir, result.variant_dir)
    result.timings["analysis_s"] = round(time.perf_counter() - t0, 3)
    goal_lines = None
    if goals is not None:
        from rnr_sim.compare.text import targets_lines

        largest = None
        if goals.targets.iwd_max is not None:
            from rnr_sim.compare.patched import largest_iwd

            largest = tuple(largest_iwd(d, goals.targets.iwd_max)
                            for d in (result.baseline_dir, result.variant_dir))
        goal_lines = targets_lines(paired, goals.targets, str(targets), largest)
    index = None
    if not no_report:
        from rnr_sim.report.compare import build_compare_report

        t0 = time.perf_counter()
        target = report if report is not None else Path("reports") / result.out.resolve().name
        index = str(build_compare_report(result, paired, target, targets=goal_lines))
        result.timings["report_s"] = round(time.perf_counter() - t0, 3)
    summary = summary_json(result, paired, index)
    write_summary(result, summary)
    if as_json:
        typer.echo(json.dumps(summary, indent=2, ensure_ascii=False))
    elif quiet:
        for e in result.excluded:
            typer.echo(f"Left out of both runs: {e.deck} ({e.path}): {e.reason}", err=True)
        typer.echo(f"Run dirs: {result.baseline_dir} and {result.variant_dir}")
        if index:
            typer.echo(f"Report: {index}")
    else:
        typer.echo(format_compare(result, paired, index))
        if goal_lines is not None:
            for line in goal_lines:
                typer.echo(line)
            typer.echo("")
        if field_weights is not None:
            from rnr_sim.analytics.field import compare_field_lines

            typer.echo("")
            for line in compare_field_lines(result.baseline_dir, result.variant_dir,
                                            field_weights):
                typer.echo(line)
            typer.echo("")
        t = result.timings
        typer.echo(f"Time: {t['total_s']:.1f} s to play both runs "
                   f"({t['compile_s']:.1f} s engine start), {t['analysis_s']:.1f} s "
                   "paired analysis" + (f", {t['report_s']:.1f} s report" if index else ""))
    if result.interrupted:
        raise typer.Exit(opt.EXIT_INTERRUPTED)
