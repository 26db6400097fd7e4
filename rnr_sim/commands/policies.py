"""The ``policies`` subcommand: the built-in pilots, their weights, and what each weight means."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rnr_sim.commands import options as opt


def _weights_help() -> str:
    from rnr_sim.pilots import describe_weights

    rows = "\n".join(f"{k:<24} {span:<16} {meaning}" for k, span, meaning in describe_weights())
    return (
        "List the built-in heuristic pilots and their weights, or check and show a policy "
        "file.\n\nA policy file is TOML: a [policy] table (name, base = a built-in to start "
        "from, default balanced) and a [weights] table setting any of these weights "
        "(name, range, meaning):\n\n\b\n" + rows + "\n\nA policy file can be given wherever a "
        "built-in name is accepted: a deck's 'Policy:' header (a path relative to the deck "
        "list) and --policy."
    )


OPTIONS = {
    "show": opt.option(Path | None, "--show", metavar="POLICY.toml",
                       help="Check a policy file and show its weights beside its base's."),
}


@opt.command("policies", OPTIONS, short_help="List the built-in pilots and their weights.",
             help=_weights_help(),
             epilog="Example: rnr-sim policies --show policies/tempo.toml")
def policies_command(*, show, as_json) -> None:
    from rnr_sim.engine.policies import POLICY_NAMES, WEIGHT_SPECS
    from rnr_sim.pilots import builtin, load_policy

    if show is not None:
        pilots = [load_policy(str(show))]  # a built-in name or a policy file
    else:
        pilots = [builtin(n) for n in POLICY_NAMES]
    names = list(WEIGHT_SPECS)
    if as_json:
        typer.echo(json.dumps({p.name: {"source": p.source, "weights": {
            k: float(p.weights[WEIGHT_SPECS[k][0]]) for k in names}} for p in pilots},
            indent=2))
        return
    from rnr_sim.display import format_table

    header = ["weight", *[p.name for p in pilots]]
    rows = [[k, *[f"{p.weights[WEIGHT_SPECS[k][0]]:g}" for p in pilots]] for k in names]
    for line in format_table(header, rows, right=set(range(1, len(header)))):
        typer.echo(line)
    if show is None:
        typer.echo("\n(rnr-sim policies --help explains each weight; a policy file sets any "
                   "of them over a built-in base)")
