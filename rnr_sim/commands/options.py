"""The options several subcommands share, each defined once: the same flag, metavar and
help wherever it appears (``--cards``, ``--rules``, ``--seed``, ``--threads``, ``--backend``,
``--address``, ``--json``, ``--out``, ...).

An option whose meaning is the same everywhere is a type (``SeedOption``), and a command
asks for it by name: a keyword-only parameter without a type (``*, cards, seed, as_json``)
gets its definition from ``SHARED`` (``shared_options``). One that names what each command
writes or plays (``--out``, ``--games``) is made by a function given those words
(``out_option``), so its flag, short form and type are still written once.

Options that take decks take several after one flag (``--vs a.txt b.txt``, ``--vs
decks/*.txt``) as well as the flag again (``deck_list_option``): every value up to the next
option, or up to ``--``, belongs to the flag before them. click gives an option one value
per flag, so ``Group`` spells such a run of values as the flag repeated before click reads
the command line (``several_values``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from rnr_sim.runs.planning import DEFAULT_SEED

#: The exit code of a command stopped by Ctrl-C (128 + SIGINT, the shell's convention).
EXIT_INTERRUPTED = 130

#: The metavar of an option that takes several decks after one flag; ``several_values``
#: reads it to find them.
DECKS = "DECK..."

def option(kind: Any, *flags: str, **settings: Any) -> Any:
    """A command's own option: ``Annotated[kind, typer.Option(*flags, ...)]``, its default
    left out of the help unless ``show_default`` is given (a help says it in words)."""
    settings.setdefault("show_default", False)
    return Annotated[kind, typer.Option(*flags, **settings)]


def argument(kind: Any, **settings: Any) -> Any:
    """A command's positional argument: ``Annotated[kind, typer.Argument(...)]``."""
    settings.setdefault("show_default", False)
    return Annotated[kind, typer.Argument(**settings)]


# ------------------------------------------------------------------------- the same everywhere

#: ``--cards``, repeatable: later files layer over earlier ones, in order (docs/design.md,
#: "Layered catalogs"). ``None`` when not given: the decks' ``Cards:`` headers, else the
#: Original Set (``decks.catalog_paths``); a list otherwise, which ``load_catalog`` takes.
CardsOption = option(list[Path] | None, "--cards", metavar="PATH",
                     help="Card catalog TOML; give it again to layer an expansion over a base "
                          "(later files add cards and errata). Default: the catalogs the decks' "
                          "'Cards:' headers name, else the 355-card Original Set "
                          "(rnr_sim/data/original.toml).")
RulesOption = option(Path | None, "--rules", metavar="PATH",
                     help="Rules profile TOML setting any switches. Default: constitution.")
SeedOption = option(int | None, "--seed", metavar="S",
                    help="Master seed (0 to 2**64-1): the same seed plays the same games, on "
                         f"any thread count and backend. Default: {DEFAULT_SEED}.")
PlayersOption = option(int | None, "--players", metavar="P",
                       help="Players per table: 2, 3 or 4. Default: 2.")
ThreadsOption = option(int | None, "--threads", "-t", metavar="N",
                       help="Engine threads. Default: all cores. Results do not depend on it.")
BackendOption = option(str, "--backend", metavar="local|ray", show_default=True,
                       help="Where the games are played: here (local), or as Ray tasks (ray; "
                            "needs pip install 'rnr-sim[ray]'). Results do not depend on it.")
AddressOption = option(str | None, "--address", metavar="ADDR",
                       help="With --backend ray: the Ray cluster to join (auto, "
                            "ray://host:10001). Default: start a local Ray for this command and "
                            "stop it after.")
PolicyOption = option(str | None, "--policy", metavar="P",
                      help="Pilot for every deck (a built-in or a policy file), overriding each "
                           "deck's 'Policy:' header. Default: that header, else balanced.")
JsonOption = option(bool, "--json",
                    help="Print the result as JSON on stdout only (messages and progress go to "
                         "stderr).")
QuietOption = option(bool, "--quiet", "-q",
                     help="No progress, no table: only where the results are.")
MirrorsOption = option(bool, "--mirrors", help="Also play each deck against itself.")
AllowIllegalOption = option(bool, "--allow-illegal", help="Play decks that break Article V.")
ReportDirOption = option(Path | None, "--report", metavar="DIR",
                         help="Report folder. Default: reports/<name of --out>.")
NoReportOption = option(bool, "--no-report", help="Skip the HTML report.")
ResumeOption = option(bool, "--resume",
                      help="Carry on a stopped run of this command in its dir: --resume DIR, "
                           "or --resume --out DIR (give the same options).")
YardstickOption = option(int | None, "--yardstick", metavar="DEALS",
                         help="Check the verdicts again with the search pilot in every seat "
                              "(the yardstick), on DEALS deals of each pairing, paired deal by "
                              "deal with the heuristic pilots; outside --budget (about 20 such "
                              "games a second on 2 cores). run: the report's strongest and "
                              "weakest decks and best cards (two players; with --resume a "
                              "finished run gains it); discover: the 3 best elites against "
                              "the field; balance: the first suggestion's effect on every "
                              "deck. Default: no check.")


#: The shared options by parameter name: (definition, default when not given).
SHARED: dict[str, tuple[Any, Any]] = {
    "cards": (CardsOption, None), "rules": (RulesOption, None), "seed": (SeedOption, None),
    "players": (PlayersOption, None), "threads": (ThreadsOption, None),
    "backend": (BackendOption, "local"), "address": (AddressOption, None),
    "policy": (PolicyOption, None), "mirrors": (MirrorsOption, False),
    "allow_illegal": (AllowIllegalOption, False), "report": (ReportDirOption, None),
    "no_report": (NoReportOption, False), "quiet": (QuietOption, False),
    "as_json": (JsonOption, False), "resume": (ResumeOption, False),
    "yardstick": (YardstickOption, None),
}


def shared_options(command: Callable) -> Callable:
    """Give each keyword-only parameter of ``command`` that has no type and is named in
    ``SHARED`` that option's definition and default; typer reads the command's signature,
    so the command's own options come first in its help, the shared ones after."""
    signature = inspect.signature(command, eval_str=True)
    params = []
    for p in signature.parameters.values():
        if p.kind is p.KEYWORD_ONLY and p.annotation is p.empty:
            if p.name not in SHARED:
                raise TypeError(f"{command.__name__}: no shared option named {p.name!r}")
            definition, default = SHARED[p.name]
            p = p.replace(annotation=definition,
                          default=default if p.default is p.empty else p.default)
        params.append(p)
    command.__signature__ = signature.replace(parameters=params)
    return command


# ------------------------------------------------------------------------- in each command's words


def out_option(metavar: str, help: str) -> Any:
    """``--out``/``-o``: where the command writes (``metavar`` and ``help`` say what)."""
    return option(Path | None, "--out", "-o", metavar=metavar, help=help)


def field_weights_option(what: str) -> Any:
    """``--field-weights NAME=W,...``: the field a player expects to meet (the decks'
    names or file stems, weights scaled to sum to 1; ``analytics.field``), in every
    command that takes it; ``what`` says what the command answers with it."""
    return option(str | None, "--field-weights", metavar="NAME=W,...",
                  help="The field you expect to meet, e.g. \"Bison Stampede=30, Scroll "
                       "Assembly=20\" (decks of the run, by name or file stem; weights "
                       f"scaled to sum to 1): {what} (two players).")


def games_option(help: str, default: int | None = None) -> Any:
    """``--games``/``-n N``: how many games or deals (``help`` says which); ``default``
    shown in the help when the command's parameter has one."""
    kind = int if default is not None else int | None
    return option(kind, "--games", "-n", metavar="N", show_default=default is not None,
                  help=help)


def deck_list_option(flag: str, help: str, *, required: bool = False,
                     hidden: bool = False) -> Any:
    """An option taking deck files, several after one flag (``--vs a.txt b.txt``, ``--vs
    decks/*.txt``) or the flag again; a list of paths (``None`` when not given, unless
    ``required``). ``hidden``: an old name kept working for scripts, left out of the help."""
    kind = list[Path] if required else list[Path] | None
    return option(kind, flag, metavar=DECKS, hidden=hidden,
                  help=f"{help} Takes several decks after one flag, up to the next option "
                  "(or --), and the flag again.")


def several_values(command: Any, args: list[str]) -> list[str]:
    """``args`` with every value that follows a several-decks option's value spelt with the
    flag again (``--vs a b --budget 9`` -> ``--vs a --vs b --budget 9``), up to the next
    argument that starts with ``-``; what follows ``--`` is left as it is."""
    flags = {opt for p in command.params  # a click command (typer's own copy of click)
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


def resume_dir(command: Any, args: list[str]) -> list[str]:
    """``args`` with ``--resume DIR`` spelt ``--resume --out DIR`` for a command whose
    ``--resume`` is a flag carrying on in its ``--out`` (discover, balance) and that takes
    no positional argument: so ``--resume DIR`` reads as it does for ``run``; what follows
    ``--`` is left as it is."""
    params = {opt: p for p in command.params if p.param_type_name == "option"
              for opt in p.opts}
    flag = params.get("--resume")
    if (flag is None or not getattr(flag, "is_flag", False) or "--out" not in params
            or any(p.param_type_name == "argument" for p in command.params)):
        return args
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        out.append(arg)
        if arg == "--resume" and i + 1 < len(args) and not args[i + 1].startswith("-"):
            out.append("--out")
    return out


#: A flag another command has, given to one that names the same thing otherwise: what to
#: write instead (said before click's "No such option").
ELSEWHERE: dict[str, dict[str, str]] = {
    "run": {"--field": "run plays every table of the decks given as arguments (the field is "
                       "all of them); --vs DECK... keeps only the tables of those decks"},
    "skill": {"--field": "skill plays each deck against the others given as arguments"},
    "compare": {"--field": "compare plays the decks given as arguments against each other"},
}


def elsewhere(name: str, args: list[str]) -> None:
    """An ``InputError`` for a flag of another command (``ELSEWHERE``), up to ``--``."""
    hints = ELSEWHERE.get(name, {})
    for arg in args:
        if arg == "--":
            return
        flag = arg.split("=", 1)[0]
        if flag in hints:
            from rnr_sim.errors import InputError

            raise InputError(f"rnr-sim {name} has no {flag}: {hints[flag]}")


class Group(TyperGroup):
    """A command group whose commands' several-decks options take several values after one
    flag (``several_values``) and whose ``--resume`` flags take the dir too (``resume_dir``)."""

    def resolve_command(self, ctx: typer.Context, args: list[str]):
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and not hasattr(command, "commands"):  # a group resolves its own
            elsewhere(name, rest)
            rest = resume_dir(command, several_values(command, rest))
        return name, command, rest
