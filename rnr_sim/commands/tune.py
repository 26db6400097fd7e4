"""The ``tune`` subcommand: fit a deck's pilot to its field (``rnr_sim.tune``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from rnr_sim.commands import options as opt

OPTIONS = {
    "deck": opt.argument(Path, metavar="DECK", help="The deck whose pilot is tuned."),
    "field": opt.deck_list_option("--field", "The decks of the field (as discover and balance "
                                             "name it)."),
    "budget": opt.option(int, "--budget", default=400_000, metavar="GAMES", show_default=True,
                         help="Games the search may play."),
    "holdout": opt.option(int | None, "--holdout", metavar="DEALS",
                          help="Deals per field deck for the held-out check. Default: a quarter "
                               "of the budget's games, at least 200 deals."),
    "policy": opt.option(str | None, "--policy", metavar="P",
                         help="Start policy (built-in or file). Default: the deck's own."),
    "out": opt.out_option("POLICY.toml", "Write the resulting policy file here (refuses to "
                                         "overwrite)."),
    #: tune's old name for --field, kept working for scripts (hidden from the help).
    "vs": opt.deck_list_option("--vs", "The decks of the field: the old name of --field.",
                               hidden=True),
}


@opt.command("tune", OPTIONS,
             short_help="Fit a deck's pilot to its field (CMA-ES), checked on fresh deals.",
             epilog="Example: rnr-sim tune decks/scroll_assembly.txt --field "
                    "decks/bison_stampede.txt decks/eagle_blockade.txt --budget "
                    "200000 --out policies/scroll.toml")
def tune_command(*, deck, field, budget, holdout, policy, out, vs, seed, cards, rules, threads,
                 backend, address, quiet, as_json) -> None:
    """Tune DECK's heuristic pilot against the --field decks: CMA-ES (the cma package) over the
    policy weights, every candidate scored on the same deals (common random numbers),
    then the best one and the start policy replay deals of a seed the search never saw.
    The tuned policy is kept only if its held-out paired gain's 95% interval lies above
    zero; otherwise the start is returned and the tool says so. Prints the gain, the
    games spent and the weights that moved; --out writes the policy file (usable as a
    deck's Policy: header or --policy). The same --seed gives the same result on any
    thread count. Cost: about --budget games plus the check (how many games a second:
    docs/benchmarks.md)."""
    from tqdm import tqdm

    from rnr_sim.errors import InputError
    from rnr_sim.tune import policy_toml, tune

    vs = [*(field or ()), *(vs or ())]
    if not vs:
        raise InputError("tune needs the decks to tune against: --field DECK... (e.g. "
                         "--field decks/*.txt)")
    if out is not None and out.exists():
        raise InputError(f"--out {out}: already exists; choose a new file name")
    if out is not None and not out.parent.is_dir():
        raise InputError(f"--out {out}: no such folder {out.parent}")
    bars = []  # opened at the first games played: bad input is answered before any bar

    def progress(games: int) -> None:
        if not bars:
            bars.append(tqdm(total=None, unit=" games", unit_scale=True, file=sys.stderr,
                             dynamic_ncols=True, desc="rnr-sim tune", disable=as_json or quiet))
        bars[0].update(games)

    try:
        result = tune(deck, vs, budget=budget, seed=opt.DEFAULT_SEED if seed is None else seed,
                      cards=cards, rules=rules, policy=policy, threads=threads,
                      holdout_deals=holdout, progress=progress, backend=backend,
                      address=address)
    except KeyboardInterrupt:
        for bar in bars:
            bar.close()
        typer.echo("Stopped after the games under way; nothing written (tune keeps no "
                   "checkpoint: run it again to tune).", err=True)
        raise typer.Exit(opt.EXIT_INTERRUPTED) from None
    finally:
        for bar in bars:
            bar.close()
    from rnr_sim.engine.policies import POLICIES

    base = result.start_base if result.start_base in POLICIES else "balanced"
    if out is not None:  # whole or not at all; a full disk or a read-only folder: one line
        from rnr_sim.files import atomic_write

        text = policy_toml(result, base)
        atomic_write(out, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    if as_json:
        data = result.to_json()
        data["out"] = None if out is None else str(out)
        typer.echo(json.dumps(data, indent=2))
        return
    if quiet:  # the verdict in one line, and where the policy went
        typer.echo(f"{'Kept' if result.kept else 'Not kept'}: held-out paired gain "
                   f"{100 * result.gain:+.1f} pp [{100 * result.gain_lo:+.1f}, "
                   f"{100 * result.gain_hi:+.1f}]" + (f"; wrote {out}." if out else "."))
        return
    gain = (f"{100 * result.gain:+.1f} pp [{100 * result.gain_lo:+.1f}, "
            f"{100 * result.gain_hi:+.1f}]")
    typer.echo(f"Tuned {result.deck} (start: {result.start_name}) against "
               f"{len(vs)} deck{'s' if len(vs) != 1 else ''}: {result.generations} "
               f"generations, {result.games_search:,} search games + "
               f"{result.games_holdout:,} held-out games in {result.seconds:.0f} s.")
    typer.echo(f"Held out ({result.holdout_deals:,} deals, a seed the search never saw): start "
               f"{100 * result.start_share:.1f}%, tuned {100 * result.tuned_share:.1f}%, "
               f"paired gain {gain}.")
    typer.echo(f"Skill: the random pilot wins {100 * result.random_share:.1f}% on the same "
               f"deals; the start pilot's {100 * result.skill:+.1f} pp "
               f"[{100 * result.skill_lo:+.1f}, {100 * result.skill_hi:+.1f}] over it is what "
               "its play adds to the deck.")
    if result.kept:
        typer.echo("Kept: the tuned pilot wins more on the held-out deals.")
    else:
        typer.echo("Not kept: the gain's interval reaches 0 on the held-out deals, so the "
                   "start policy is returned (the search's best may be luck of its deals).")
    if result.moved:
        typer.echo("Weights the search moved (start -> tuned):")
        for key, (a, b) in result.moved.items():
            typer.echo(f"  {key:<24} {a:g} -> {b:.3g}")
    if out is not None:
        typer.echo(f"Wrote {out} ({'tuned' if result.kept else 'the start policy'}).")
