"""The ``expansion`` subcommand: the metagame before and after an expansion, on the same
deals (rnr_sim.expansion)."""

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
    "decks": opt.argument(list[Path], metavar="BASE_DECK",
                          help="The decks of the field before the expansion."),
    "with_": opt.option(Path, "--with", default=opt.REQUIRED, metavar="EXPANSION.toml",
                        help="The expansion's catalog file (new cards and errata over the "
                             "base)."),
    "new_decks": opt.deck_list_option("--decks", "The expansion's decks."),
    "games": opt.games_option(f"Deals per table, each in every seat order. "
                              f"Default: {planning.DEFAULT_GAMES:,}."),
    "out": opt.out_option("DIR", "New or empty folder for after/ (and before/). Default: "
                                 "runs/expansion-<YYYYmmdd-HHMMSS>."),
}


@opt.command("expansion", OPTIONS,
             short_help="What an expansion does to the metagame, on the same deals.",
             epilog="Example: rnr-sim expansion decks/*.txt --with "
                    "rnr_sim/data/expansion_frontier.toml --decks decks/expansion/*.txt")
def expansion_command(*, decks, with_, new_decks, games, out, cards, players, seed, policy,
                      threads, report, no_report, quiet, as_json) -> None:
    """Play the base decks and the expansion's decks (--decks) with the base catalog layered
    under the expansion (--with), and compare with the base field alone on the same
    tables and deals: each old deck's win share before (against the old decks) and after
    (in the grown field) with paired 95% intervals, the new decks' win rates against the
    old field, victory-path shares before and after, and the expansion's cards ranked by
    play rate and the adjusted IWD. When the expansion has errata on cards the old decks
    hold, the before side is a second run without the errata. Writes OUT/after (a run
    dir holding expansion.json) and a report."""
    from rnr_sim.expansion import (
        ExpansionOptions,
        format_summary,
        run_expansion,
        summarize,
        write_summary,
    )

    options = ExpansionOptions(
        base_decks=decks, expansion=with_, new_decks=new_decks or [], cards=cards,
        games=planning.DEFAULT_GAMES if games is None else games,
        players=2 if players is None else players,
        seed=planning.DEFAULT_SEED if seed is None else seed, policy=policy, threads=threads,
        out=out, command=shlex.join(["rnr-sim", *sys.argv[1:]]))
    log = (lambda m: None) if (quiet or as_json) else log_to_stderr
    result = run_expansion(options, progress=not (quiet or as_json), log=log)
    if result.interrupted:
        typer.echo(f"Stopped: the runs in {result.out} are incomplete; nothing was compared",
                   err=True)
        raise typer.Exit(opt.EXIT_INTERRUPTED)
    summary = summarize(result)
    write_summary(result, summary)
    index = None
    if not no_report:
        from rnr_sim.report import build_report

        t0 = time.perf_counter()
        target = report if report is not None else Path("reports") / result.out.resolve().name
        index = str(build_report(result.after_dir, target))
        result.timings["report_s"] = round(time.perf_counter() - t0, 3)
    summary["report"] = index
    summary["timings"] = result.timings
    write_summary(result, summary)
    if as_json:
        typer.echo(json.dumps(summary, indent=2, ensure_ascii=False))
        return
    if not quiet:
        typer.echo(format_summary(summary))
        typer.echo("")
    typer.echo(f"Run dir: {result.after_dir}"
               + ("" if result.before_dir == result.after_dir
                  else f" (before, without the errata: {result.before_dir})"))
    if index:
        typer.echo(f"Report: {index}")
