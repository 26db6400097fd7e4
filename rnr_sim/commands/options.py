"""The options several subcommands share, each defined once: the same flag, metavar and
help wherever it appears (``--cards``, ``--rules``, ``--seed``, ``--threads``, ``--backend``,
``--address``, ``--json``, ``--out``, ...).

An option whose meaning is the same everywhere is a type (``SeedOption``); one that names
what each command writes or plays (``--out``, ``--games``) is made by a function given
those words (``out_option``), so its flag, short form and type are still written once.

Options that take decks take several after one flag (``--vs a.txt b.txt``, ``--vs
decks/*.txt``) as well as the flag again (``deck_list_option``): every value up to the next
option, or up to ``--``, belongs to the flag before them. click gives an option one value
per flag, so ``Group`` spells such a run of values as the flag repeated before click reads
the command line (``several_values``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import click
import typer
from typer.core import TyperGroup

from rnr_sim.runner import DEFAULT_SEED

#: The exit code of a command stopped by Ctrl-C (128 + SIGINT, the shell's convention).
EXIT_INTERRUPTED = 130

#: The metavar of an option that takes several decks after one flag; ``several_values``
#: reads it to find them.
DECKS = "DECK..."

# ---------------------------------------------------------------------------- the same everywhere

#: ``--cards``, repeatable: later files layer over earlier ones, in order (docs/design.md,
#: "Layered catalogs"). ``None`` when not given: the shipped sample; a list otherwise, which
#: ``load_catalog`` takes as it is.
CardsOption = Annotated[
    list[Path] | None,
    typer.Option("--cards", metavar="PATH", show_default=False,
                 help="Card catalog TOML; give it again to layer an expansion over a base "
                 "(later files add cards and errata). Default: the shipped Foundation "
                 "sample set."),
]
RulesOption = Annotated[
    Path | None,
    typer.Option("--rules", metavar="PATH", show_default=False,
                 help="Rules profile TOML setting any switches. Default: constitution."),
]
SeedOption = Annotated[
    int | None,
    typer.Option("--seed", metavar="S", show_default=False,
                 help="Master seed (0 to 2**64-1): the same seed plays the same games, on "
                 f"any thread count and backend. Default: {DEFAULT_SEED}."),
]
PlayersOption = Annotated[
    int | None,
    typer.Option("--players", metavar="P", show_default=False,
                 help="Players per table: 2, 3 or 4. Default: 2."),
]
ThreadsOption = Annotated[
    int | None,
    typer.Option("--threads", "-t", metavar="N", show_default=False,
                 help="Engine threads. Default: all cores. Results do not depend on it."),
]
BackendOption = Annotated[
    str,
    typer.Option("--backend", metavar="local|ray",
                 help="Where the games are played: here (local), or as Ray tasks (ray; "
                 "needs pip install 'rnr-sim[ray]'). Results do not depend on it."),
]
AddressOption = Annotated[
    str | None,
    typer.Option("--address", metavar="ADDR", show_default=False,
                 help="With --backend ray: the Ray cluster to join (auto, ray://host:10001). "
                 "Default: start a local Ray for this command and stop it after."),
]
PolicyOption = Annotated[
    str | None,
    typer.Option("--policy", metavar="P", show_default=False,
                 help="Pilot for every deck (a built-in or a policy file), overriding each "
                 "deck's 'Policy:' header. Default: that header, else balanced."),
]
JsonOption = Annotated[
    bool,
    typer.Option("--json", help="Print the result as JSON on stdout only (messages and "
                 "progress go to stderr)."),
]
QuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress, no table: only where the results "
                       "are."),
]
MirrorsOption = Annotated[
    bool, typer.Option("--mirrors", help="Also play each deck against itself."),
]
AllowIllegalOption = Annotated[
    bool, typer.Option("--allow-illegal", help="Play decks that break Article V."),
]
ReportDirOption = Annotated[
    Path | None,
    typer.Option("--report", metavar="DIR", show_default=False,
                 help="Report folder. Default: reports/<name of --out>."),
]
NoReportOption = Annotated[
    bool, typer.Option("--no-report", help="Skip the HTML report."),
]


# ---------------------------------------------------------------------------- in each command's words


def out_option(metavar: str, help: str) -> Any:
    """``--out``/``-o``: where the command writes (``metavar`` and ``help`` say what)."""
    return Annotated[Path | None, typer.Option("--out", "-o", metavar=metavar,
                                               show_default=False, help=help)]


def games_option(help: str, default: int | None = None) -> Any:
    """``--games``/``-n N``: how many games or deals (``help`` says which); ``default``
    shown in the help when the command's parameter has one."""
    kind = int if default is not None else int | None
    return Annotated[kind, typer.Option("--games", "-n", metavar="N",
                                        show_default=default is not None, help=help)]


def deck_list_option(flag: str, help: str, *, required: bool = False) -> Any:
    """An option taking deck files, several after one flag (``--vs a.txt b.txt``, ``--vs
    decks/*.txt``) or the flag again; a list of paths (``None`` when not given, unless
    ``required``)."""
    kind = list[Path] if required else list[Path] | None
    return Annotated[kind, typer.Option(
        flag, metavar=DECKS, show_default=False,
        help=f"{help} Takes several decks after one flag, up to the next option (or --), "
        "and the flag again.")]


def several_values(command: click.Command, args: list[str]) -> list[str]:
    """``args`` with every value that follows a several-decks option's value spelt with the
    flag again (``--vs a b --budget 9`` -> ``--vs a --vs b --budget 9``), up to the next
    argument that starts with ``-``; what follows ``--`` is left as it is."""
    flags = {opt for p in command.params  # (by its kind's name: under pytest, typer's
             # option class need not be the click.Option this module sees)
             if p.param_type_name == "option" and getattr(p, "multiple", False)
             and p.metavar == DECKS for opt in p.opts}
    if not flags:
        return args
    out: list[str] = []
    rest = iter(args)
    flag = None  # the several-decks flag whose values are being read
    for arg in rest:
        if arg == "--":
            out += [arg, *rest]
            break
        if flag is not None and not arg.startswith("-"):
            out += [flag, arg]
            continue
        flag = None
        out.append(arg)
        name, eq, _ = arg.partition("=")
        if name in flags:
            if not eq:  # its first value is the next argument, whatever it looks like
                value = next(rest, None)
                if value is None:
                    break
                out.append(value)
            flag = name
    return out


class Group(TyperGroup):
    """A command group whose commands' several-decks options take several values after one
    flag (``several_values``)."""

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and not hasattr(command, "commands"):  # a group resolves its own
            rest = several_values(command, rest)
        return name, command, rest
