"""The ``replay`` subcommand: one game, turn by turn, in plain words."""

from __future__ import annotations

from pathlib import Path

import typer

from rnr_sim.commands import options as opt

OPTIONS = {
    "decks": opt.argument(list[Path], metavar="DECK",
                          help="2 to 4 deck list files, one per seat."),
    "game": opt.option(int, "--game", "-g", default=0, metavar="K", show_default=True,
                       help="Which game: deal K, first seat K mod the number of decks."),
    "search_seat": opt.option(int | None, "--search-seat", metavar="Q",
                              help="Seat Q plays the search pilot (its own pilot plays the "
                                   "rollouts); the log shows each option it weighed and its "
                                   "value."),
    "rollouts": opt.option(int, "--rollouts", "-k", default=32, metavar="K", show_default=True,
                           help="Search: playouts per option and determinization (four "
                                "times the yardstick's and skill --search's K=8: one game "
                                "affords a steadier pick; -k 8 shows the pilot they play)."),
    "determinizations": opt.option(int, "--determinizations", default=2, metavar="N",
                                   show_default=True,
                                   help="Search: redeals of the hidden cards per decision."),
    "open_lists": opt.option(bool, "--open-lists",
                             help="Search: the seat knows the other decks' lists (default: it "
                                  "believes each one of the decks given, from what it has "
                                  "seen, R59)."),
}


@opt.command("replay", OPTIONS, short_help="Play one game and print it turn by turn.",
             epilog="Example: rnr-sim replay decks/scroll_assembly.txt "
                    "decks/bison_stampede.txt --game 3")
def replay_command(*, decks, game, search_seat, rollouts, determinizations, open_lists, seed,
                   cards, rules, policy, allow_illegal) -> None:
    """Play one game between the decks (seat 0 holds the first deck, seat 1 the second, ...)
    and print it turn by turn: setup, every turn's draws, plays, activations and Resolve
    steps, and the rule that decided it. Game K is deal K of table 0 with first seat K
    mod P: the same game `rnr-sim run` plays for that seed, table, deal and first seat."""
    from rnr_sim.replay import replay_game
    from rnr_sim.runs.bounds import check_deal

    check_deal(game, max(len(decks), 1))  # the deal must fit a run's 64-bit game_id

    result = replay_game(decks, seed=seed, game=game, cards=cards, rules=rules, policy=policy,
                         allow_illegal=allow_illegal, log=lambda m: typer.echo(m, err=True),
                         search_seat=search_seat, rollouts=rollouts,
                         determinizations=determinizations, open_lists=open_lists)
    typer.echo("\n".join(result.lines))
