"""``rnr-sim check pilots``: replays of the given decks read for the plays a good player
would not make (``rnr_sim.checks.pilots``)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rnr_sim.commands import options as opt
from rnr_sim.display import format_table
from rnr_sim.errors import InputError

DEFAULT_GAMES = 20
OPTIONS = {
    "decks": opt.argument(list[Path], metavar="DECK...", help="2 or more deck lists."),
    "games": opt.games_option("Games per ordered pairing.", default=DEFAULT_GAMES),
}


@opt.command("pilots", OPTIONS,
             short_help="Audit the pilots' plays on replays; exit 1 on any wasted play.",
             epilog="Example: rnr-sim check pilots decks/*.txt --games 20")
def pilots_command(*, decks, games, seed, cards, rules, policy, as_json) -> None:
    """Play --games traced games of every ordered pairing of the decks (the games `rnr-sim
    replay --game K` shows) and count, per 100 games, the plays a good player would not
    make: a repair that restored nothing, a recover that found nothing, IP gained in the
    Play Phase and lost unspent (Art. II §2), cards a force draw handed an opponent
    whose Draw Pile still held 30 or more. Also counts Attack-on-Attack fights (won,
    even, blocks), Player 2 free Pillars with a lost on-resolve effect (R41) and the
    most Pillars in play. Exit 0 when no fault was seen, 1 otherwise, 2 on bad input."""
    from rnr_sim.checks.pilots import COUNTS, FAULTS, audit_games

    if len(decks) < 2:
        raise InputError(f"check pilots needs 2 or more deck lists, got {len(decks)}")
    if not 1 <= games <= 100_000:
        raise InputError(f"--games must be 1 to 100,000, not {games}")
    audit = audit_games(decks, games=games, seed=seed, cards=cards, rules=rules, policy=policy)
    if as_json:
        typer.echo(json.dumps(audit.to_json(), indent=2, ensure_ascii=False))
    else:
        per = 100.0 / max(audit.games, 1)
        rows = [[k, f"{audit.faults[k]:,}", f"{audit.faults[k] * per:.2f}"] for k in FAULTS]
        typer.echo(f"{audit.games:,} games, {len(decks)} decks. Faults (a good player would "
                   "not make these plays):")
        for line in format_table(["fault", "count", "per 100 games"], rows, right={1, 2}):
            typer.echo(line)
        typer.echo("What the pilots did:")
        crow = [[k, f"{audit.counts[k] / max(audit.seat_games, 1):.2f}" if k.startswith("most")
                 else f"{audit.counts[k]:,.0f}"] for k in COUNTS]
        for line in format_table(["count", "value"], crow, right={1}):
            typer.echo(line)
    raise typer.Exit(0 if sum(audit.faults.values()) == 0 else 1)
