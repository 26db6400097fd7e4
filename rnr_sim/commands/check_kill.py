"""``rnr-sim check kill``: runs killed with SIGKILL at random moments and finished write the
run dir a run never stopped writes (``rnr_sim.checks.kill``)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rnr_sim.commands import options as opt

OPTIONS = {
    "decks": opt.argument(list[Path] | None, default=None, metavar="DECK...",
                          help="Deck lists (default: the sample decks)."),
    "kills": opt.option(int, "--kills", default=20, metavar="K", show_default=True,
                        help="Runs to kill and finish."),
    "games": opt.games_option("Deals per table of each run.")._replace(default=2000),
    "chunk_size": opt.option(int, "--chunk-size", default=8000, metavar="N", show_default=True,
                             help="Games per chunk."),
    "moments": opt.option(int, "--moments-seed", default=0, metavar="S", show_default=True,
                          help="Seed of the kill moments."),
    "work": opt.option(Path | None, "--work", metavar="DIR",
                       help="Where the run dirs go (default: a temporary folder, removed when "
                            "all match)."),
}


@opt.command(
    "kill", OPTIONS,
    short_help="Kill runs with SIGKILL at random moments; each resume must match.",
    help="Play a run once uninterrupted, then --kills times start it again in a new "
    "process, kill it with SIGKILL at a random moment of its run time, and finish it "
    "(run --resume, or run again when it was killed before its manifest was written). "
    "Every finished run dir must hold the uninterrupted run's bytes (each parquet "
    "file's SHA-256, the manifest's chunks, files and identity). Exit 0 when all do, "
    "1 otherwise (the dirs that differ are kept), 2 on bad input.",
    epilog="Example: rnr-sim check kill decks/*.txt --kills 20",
)
def kill_command(*, decks, kills, games, chunk_size, moments, work, players, as_json) -> None:
    from rnr_sim.checks.kill import KillOptions, kill_check
    from rnr_sim.runs.planning import sample_decks

    options = KillOptions(decks=decks or sample_decks(), games=games, chunk_size=chunk_size,
                          players=2 if players is None else players, kills=kills,
                          moments_seed=moments, work=work)
    report = kill_check(options, log=(lambda m: None) if as_json
                        else (lambda m: typer.echo(m, err=True)))
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        same = sum(k.same for k in report.kills)
        early = sum(k.chunks_at_kill is None for k in report.kills)
        late = sum(k.finished_with == "nothing" for k in report.kills)
        typer.echo(f"{same} of {len(report.kills)} killed runs finished to the uninterrupted "
                   f"run's bytes ({len(report.kills) - early - late} killed mid-run, {early} "
                   f"before their manifest, {late} after their last chunk; {report.chunks} "
                   f"chunks, reference {report.reference_s:.1f} s)")
    raise typer.Exit(0 if report.ok else 1)
