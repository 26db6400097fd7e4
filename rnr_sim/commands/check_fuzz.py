"""``rnr-sim check fuzz``: random legal catalogs, rules, decks and policies through the real
engine with its invariant checks on; every record checked, a sample replayed alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

from rnr_sim.commands import options as opt
from rnr_sim.errors import InputError

DEFAULT_GAMES = 100_000
DEFAULT_SEED = 1

def parse_players(text: str) -> list[int]:
    """``"2,3,4"`` -> [2, 3, 4]; anything else is an ``InputError``."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if part not in ("2", "3", "4"):
            raise InputError(f"--players takes player counts 2, 3 or 4, comma-separated "
                             f"(e.g. --players 2,3,4), not {text!r}")
        if int(part) not in out:
            out.append(int(part))
    return out


OPTIONS = {
    "games": opt.games_option("Games to play at least (whole cases: rounded up).",
                              default=DEFAULT_GAMES),
    "seed": opt.option(int, "--seed", default=DEFAULT_SEED, metavar="S",
                       help="First case's seed (0 to 2**63-1)."),
    "players": opt.option(str, "--players", default="2,3,4", metavar="P[,P...]",
                          help="Player counts to play each case at."),
    "case_games": opt.option(int, "--case-games", default=512, metavar="G",
                             help="Games per case and player count."),
    "dump": opt.option(Path | None, "--dump", metavar="DIR",
                       help="Write each failing case's catalog, rules and deck files to "
                            "DIR/case-<seed>/, with the `rnr-sim replay` line of each failing "
                            "game."),
    "progress": opt.option(bool, "--progress/--no-progress", default=True,
                           help="Show a progress bar."),
}


@opt.command("fuzz", OPTIONS,
             short_help="Fuzz the engine with random legal inputs; exit 1 on any failure.",
             epilog="Example: rnr-sim check fuzz --games 200000 --seed 1. Reproduce a failure "
                    "of case 1234 at 3 players: rnr-sim check fuzz --seed 1234 --games 512 "
                    "--players 3 --dump fuzz-cases")
def fuzz_command(*, games, seed, players, case_games, dump, progress, threads, as_json) -> None:
    """Play fuzz cases S, S+1, ... until --games games are played. Case S draws, from the seed
    S alone, a rules profile, a card catalog and 2-6 decks with their policies, all
    legal under the contracts; writes them as files and reads them back with the tool's
    own readers; then plays --case-games games at each player count with the engine's
    invariant checks on and every array index checked (the engine's checked build,
    compiled once), checks every game's record (winner, path, turns, LP, UAs, Petitions,
    masks) and replays one game in 8 alone on one thread (determinism). Prints the
    counts and, for each failure, the seed that reproduces it. Exit 0 when clean, 1 on
    any failure, 2 on bad options."""
    # The fuzzer plays the engine's checked build: an array index out of range raises
    # instead of reading a wrong element (engine/indexing.py). Read at the engine's import.
    os.environ.setdefault("RNR_SIM_CHECKED_INDICES", "1")
    from rnr_sim.checks.fuzz.play import MAX_SEED, run_fuzz
    from rnr_sim.checks.fuzz.report import format_report, write_replays

    counts = parse_players(players)
    if games < 1:
        raise InputError(f"--games must be at least 1, not {games}")
    if not 1 <= case_games <= 1_000_000:
        raise InputError(f"--case-games must be 1 to 1,000,000, not {case_games}")
    if not 0 <= seed <= MAX_SEED:
        raise InputError(f"--seed must be 0 to 2**63-1, not {seed}")
    if threads is not None and threads < 1:
        raise InputError(f"--threads must be at least 1, not {threads}")
    report = run_fuzz(games, seed=seed, players=counts, case_games=case_games,
                      threads=threads, progress=progress, dump=dump,
                      log=lambda m: typer.echo(m, err=True))
    if dump is not None:
        write_replays(report, dump)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        typer.echo(format_report(report, dump))
    raise typer.Exit(0 if report.clean else 1)
