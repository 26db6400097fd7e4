"""The ``run`` subcommand: play every table of the given decks into a run dir."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import typer

from rnr_sim.analytics.summary import format_summary, summarize
from rnr_sim.commands import options as opt
from rnr_sim.errors import InputError
from rnr_sim.runs import planning, runner

#: Options that shape a run's results: a resumed run takes them from its manifest.
_SHAPE_OPTIONS = ("--games", "--players", "--seed", "--rules", "--cards", "--policy",
                  "--out", "--chunk-size", "--mirrors", "--vs", "--allow-illegal")


OPTIONS = {
    "decks": opt.argument(list[Path] | None, default=None, metavar="DECK",
                          help="Deck list files (none with --resume)."),
    "games": opt.games_option(f"Deals per table, each played in every seat order. "
                              f"Default: {planning.DEFAULT_GAMES:,}."),
    "out": opt.out_option("DIR", "New or empty run dir. Default: runs/<YYYYmmdd-HHMMSS>."),
    "chunk_size": opt.option(int | None, "--chunk-size", metavar="N",
                             help=f"Games per chunk (one parquet part each). "
                                  f"Default: {planning.DEFAULT_CHUNK_SIZE:,}."),
    "vs": opt.option(Path | None, "--vs", metavar="DECK",
                     help="Play only the tables holding this deck (one deck vs the field)."),
    "resume": opt.option(Path | None, "--resume", metavar="DIR",
                         help="Finish a stopped run in DIR (its decks and options come from "
                              "its manifest)."),
    "no_space_check": opt.option(bool, "--no-space-check",
                                 help="Start even if the run's estimated parquet is more than "
                                      "the free disk space."),
    "field_weights": opt.field_weights_option(
        "after the run, every deck's expected win rate against it, best response first"),
}


@opt.command("run", OPTIONS, short_help="Play every table of the decks into a run dir.",
             epilog="Example: rnr-sim run decks/*.txt --games 10000 --threads 2")
def run_command(*, decks, games, out, chunk_size, vs, resume, no_space_check, field_weights,
                yardstick, players, seed, rules, cards, policy, threads, backend, address,
                mirrors, allow_illegal, quiet, as_json) -> None:
    """Play every table of P distinct decks (round robin for 2 players), --games deals per
    table, each deal in every seat order, and write the games to a run dir
    (manifest.json + parquet) for `rnr-sim report`. Ctrl-C stops after the current
    chunk; --resume DIR finishes it."""
    progress = not quiet
    if yardstick is not None and (isinstance(yardstick, bool) or yardstick < 2):
        raise InputError(f"--yardstick must be a whole number of deals a table, at least 2 "
                         f"(an interval needs two deals), not {yardstick!r}")
    if yardstick is not None and players not in (None, 2):
        raise InputError(f"--yardstick plays two-player runs (its search pilot weighs two "
                         f"seats), not --players {players}")
    if decks:
        from rnr_sim.analytics.field import check_before_play

        check_before_play(field_weights, list(decks))
    if resume is not None:
        given = [name for name, value in zip(_SHAPE_OPTIONS, (
            games, players, seed, rules, cards, policy, out, chunk_size, mirrors or None, vs,
            allow_illegal or None), strict=True) if value is not None]
        if decks or given:
            what = "deck files" if decks else ", ".join(given)
            raise InputError(f"--resume continues a run as it was started: drop {what} "
                             "(only --threads, --backend, --address, --no-space-check, "
                             "--yardstick, --quiet and --json may change)")
        result = runner.resume_run(resume, threads=threads, progress=progress,
                                   backend=backend, address=address,
                                   space_check=not no_space_check)
    else:
        options = planning.RunOptions(
            decks=decks or [],
            games=planning.DEFAULT_GAMES if games is None else games,
            players=2 if players is None else players,
            seed=planning.DEFAULT_SEED if seed is None else seed,
            rules=rules, cards=cards, policy=policy, threads=threads, out=out,
            chunk_size=planning.DEFAULT_CHUNK_SIZE if chunk_size is None else chunk_size,
            mirrors=mirrors, vs=vs, allow_illegal=allow_illegal, backend=backend,
            address=address, command=shlex.join(["rnr-sim", *sys.argv[1:]]),
            space_check=not no_space_check, fixes=("--allow-illegal", "--mirrors"),
        )
        result = runner.start_run(options, progress=progress)

    run_dir = shlex.quote(str(result.run_dir))
    if result.already_complete and yardstick is not None:
        _yardstick(result, yardstick, threads, backend, address, quiet, as_json)
        return
    if result.already_complete and not as_json:
        typer.echo(f"{result.run_dir}: the run is already complete "
                   f"({result.manifest['games_done']:,} games); nothing to do, nothing "
                   f"changed. Next: rnr-sim report {run_dir}", err=True)
        return
    summary = None
    if result.manifest["games_done"] and (as_json or not quiet):
        summary = summarize(result.run_dir)
    if as_json:
        typer.echo(json.dumps(summary_json(result, summary), indent=2))
    elif not quiet and summary is not None:
        vs_deck = result.manifest.get("vs")
        if isinstance(vs_deck, str):
            typer.echo(f"One deck against the field (--vs): the {vs_deck} row is its result "
                       f"against the {summary.height - 1} other decks; every other row is that "
                       f"deck's result against {vs_deck} alone.")
        typer.echo(format_summary(summary))
        typer.echo("")
    m = result.manifest
    if result.interrupted:
        typer.echo(f"Stopped: {m['games_done']:,} of {m['games_total']:,} games are in "
                   f"{result.run_dir}. Continue with: rnr-sim run --resume {run_dir}",
                   err=True)
        raise typer.Exit(opt.EXIT_INTERRUPTED)
    if yardstick is not None:
        _yardstick(result, yardstick, threads, backend, address, quiet, as_json)
    if not as_json:
        if field_weights is not None and m["games_done"]:
            from rnr_sim.analytics.field import field_lines

            for line in field_lines(result.run_dir, field_weights):
                typer.echo(line)
            typer.echo("")
        typer.echo(f"Run dir: {result.run_dir} ({m['games_done']:,} games, "
                   f"{m['timings']['games_per_s']:,.0f} games/s)")
        field = " (it answers for the same field)" if field_weights else ""
        typer.echo(f"Next: rnr-sim report {run_dir}{field}")


def _yardstick(result, deals: int, threads, backend, address, quiet: bool,
               as_json: bool) -> None:
    """``--yardstick DEALS``: the run's subsample played again with the search pilot in
    every seat (``yardstick.play_run``), said in a line on stderr."""
    from rnr_sim import yardstick

    if result.manifest.get("players") != 2:
        raise InputError(f"--yardstick: {result.run_dir} is a "
                         f"{result.manifest.get('players')}-player run; the yardstick check "
                         "plays two-player runs (its search pilot weighs two seats)")
    figures = yardstick.play_run(result.run_dir, deals, threads=threads, backend=backend,
                                 address=address, progress=not quiet and not as_json)
    run_dir = shlex.quote(str(result.run_dir))
    if figures is None:
        typer.echo(f"Stopped the yardstick check (the run itself is complete); play it with: "
                   f"rnr-sim run --resume {run_dir} --yardstick {deals}", err=True)
        raise typer.Exit(opt.EXIT_INTERRUPTED)
    if not quiet:
        typer.echo(f"Yardstick: deals 0-{figures['deals'] - 1} of every table played again "
                   f"with the search pilot in every seat, {figures['games']:,} games in "
                   f"{figures['seconds']} s ({yardstick.FILE}); `rnr-sim report {run_dir}` "
                   "says whether the verdict's decks and cards hold with it.", err=True)


def summary_json(result: runner.RunResult, summary) -> dict:
    """The machine-readable summary ``rnr-sim run --json`` prints."""
    m = result.manifest
    return {
        "run_dir": str(result.run_dir),
        "status": m["status"],
        "interrupted": result.interrupted,
        "seed": m["seed"],
        "players": m["players"],
        "games_done": m["games_done"],
        "games_total": m["games_total"],
        "timings": m["timings"],
        "decks": [] if summary is None else summary.to_dicts(),
    }
