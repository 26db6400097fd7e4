"""How a subcommand is declared, and the options several share: each option declared once,
its flag, metavar, help and default together, the same wherever it appears (``--cards``,
``--rules``, ``--seed``, ``--threads``, ``--backend``, ``--address``, ``--json``, ...).

A command module declares each of its own options once, in a table of parameter name ->
``Option`` (the typer definition and the value when not given: ``option``, ``argument``),
and its command with ``command``: the table, the command's name and its help. The
command's signature is keyword-only names without types (``*, field, budget, out, seed,
cards, as_json``), each found in its own table, else in ``SHARED`` (``declare``); their
order is the order of its help, the arguments included. ``cli.py`` adds what each module
declares (``add_commands``); ``group`` declares a command group whose commands other
modules declare (``check``). An option that names what each command writes or plays
(``--out``, ``--games``) is made by a function given those words (``out_option``), so its
flag, short form and type are still written once.

Options that take decks take several after one flag (``--vs a.txt b.txt``, ``--vs
decks/*.txt``) as well as the flag again (``deck_list_option``): every value up to the next
option, or up to ``--``, belongs to the flag before them. click gives an option one value
per flag, so ``Group`` spells such a run of values as the flag repeated before click reads
the command line (``several_values``); a ``--resume`` flag takes the dir after it
(``resume_dir``).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import typer
from typer.core import TyperGroup

from rnr_sim.runs.planning import DEFAULT_SEED

#: The exit code of a command stopped by Ctrl-C (128 + SIGINT, the shell's convention).
EXIT_INTERRUPTED = 130

#: The metavar of an option that takes several decks after one flag; ``several_values``
#: reads it to find them.
DECKS = "DECK..."

#: The default of an option or argument that must be given.
REQUIRED = inspect.Parameter.empty


class Option(NamedTuple):
    """An option or argument as a command declares it: its typer definition
    (``Annotated[kind, typer.Option(...)]``) and its value when not given (``REQUIRED``:
    none, it must be given)."""

    definition: Any
    default: Any


def option(kind: Any, *flags: str, default: Any = None, **settings: Any) -> Option:
    """An option: ``kind``, its ``flags``, its ``default`` (``None``; a flag's ``False``)
    and typer's ``settings`` (metavar, help, ...); the default is left out of the help
    unless ``show_default`` is given (a help says it in words)."""
    settings.setdefault("show_default", False)
    if kind is bool and default is None:
        default = False
    return Option(Annotated[kind, typer.Option(*flags, **settings)], default)


def argument(kind: Any, default: Any = REQUIRED, **settings: Any) -> Option:
    """A positional argument: ``kind``, its ``default`` (none: it must be given) and
    typer's ``settings``."""
    settings.setdefault("show_default", False)
    return Option(Annotated[kind, typer.Argument(**settings)], default)


# ------------------------------------------------------------------------- the same everywhere

#: The shared options by parameter name. ``cards``, repeatable: later files layer over
#: earlier ones, in order (docs/design.md, "Layered catalogs"); ``None`` when not given:
#: the decks' ``Cards:`` headers, else the Original Set (``decks.catalog_paths``).
SHARED: dict[str, Option] = {
    "cards": option(list[Path] | None, "--cards", metavar="PATH",
                    help="Card catalog TOML; give it again to layer an expansion over a base "
                         "(later files add cards and errata). Default: the catalogs the decks' "
                         "'Cards:' headers name, else the 355-card Original Set "
                         "(rnr_sim/data/original.toml)."),
    "rules": option(Path | None, "--rules", metavar="PATH",
                    help="Rules profile TOML setting any switches. Default: constitution."),
    "seed": option(int | None, "--seed", metavar="S",
                   help="Master seed (0 to 2**64-1): the same seed plays the same games, on "
                        f"any thread count and backend. Default: {DEFAULT_SEED}."),
    "players": option(int | None, "--players", metavar="P",
                      help="Players per table: 2, 3 or 4. Default: 2."),
    "threads": option(int | None, "--threads", "-t", metavar="N",
                      help="Engine threads. Default: all cores. Results do not depend on it."),
    "backend": option(str, "--backend", default="local", metavar="local|ray",
                      show_default=True,
                      help="Where the games are played: here (local), or as Ray tasks (ray; "
                           "needs pip install 'rnr-sim[ray]'). Results do not depend on it."),
    "address": option(str | None, "--address", metavar="ADDR",
                      help="With --backend ray: the Ray cluster to join (auto, "
                           "ray://host:10001). Default: start a local Ray for this command "
                           "and stop it after."),
    "policy": option(str | None, "--policy", metavar="P",
                     help="Pilot for every deck (a built-in or a policy file), overriding each "
                          "deck's 'Policy:' header. Default: that header, else balanced."),
    "mirrors": option(bool, "--mirrors", help="Also play each deck against itself."),
    "allow_illegal": option(bool, "--allow-illegal", help="Play decks that break Article V."),
    "report": option(Path | None, "--report", metavar="DIR",
                     help="Report folder. Default: reports/<name of --out>."),
    "no_report": option(bool, "--no-report", help="Skip the HTML report."),
    "quiet": option(bool, "--quiet", "-q",
                    help="No progress, no table: only where the results are."),
    "as_json": option(bool, "--json",
                      help="Print the result as JSON on stdout only (messages and progress go "
                           "to stderr)."),
    "resume": option(bool, "--resume",
                     help="Carry on a stopped run of this command in its dir: --resume DIR, "
                          "or --resume --out DIR (give the same options)."),
    "yardstick": option(int | None, "--yardstick", metavar="DEALS",
                        help="Check the verdicts again with the search pilot in every seat "
                             "(the yardstick), on DEALS deals of each pairing, paired deal by "
                             "deal with the heuristic pilots; outside --budget (about 20 such "
                             "games a second on 2 cores). run: the report's strongest and "
                             "weakest decks and best cards (two players; with --resume a "
                             "finished run gains it); discover: the 3 best elites against "
                             "the field; balance: the first suggestion's effect on every "
                             "deck. Default: no check."),
}


def declare(command: Callable, own: dict[str, Option]) -> Callable:
    """Give each parameter of ``command`` (keyword-only, without a type) its definition and
    default: from ``own``, the command's own options, else from ``SHARED``. typer reads the
    command's signature, so the parameters' order is the order of its help; an own option
    no parameter names is an error, as a parameter with no option is."""
    signature = inspect.signature(command)
    unused = set(own)
    params = []
    for p in signature.parameters.values():
        found = own.get(p.name, SHARED.get(p.name))
        if p.kind is not p.KEYWORD_ONLY or p.annotation is not p.empty or found is None:
            raise TypeError(f"{command.__name__}: {p.name!r} is not a keyword-only name of "
                            "its own options or of the shared ones")
        unused.discard(p.name)
        params.append(p.replace(annotation=found.definition, default=found.default))
    if unused:
        raise TypeError(f"{command.__name__}: no parameter for {', '.join(sorted(unused))}")
    command.__signature__ = signature.replace(parameters=params)
    return command


#: What each command module declares, by module name: each subcommand's name -> a function
#: adding it to a typer app (``command``, ``group``; ``add_commands`` calls them).
DECLARED: dict[str, dict[str, Callable[[typer.Typer], None]]] = {}


def command(name: str, own: dict[str, Option] | None = None, **settings: Any) -> Callable:
    """Declare the decorated function the subcommand ``name``: its parameters from ``own``
    and ``SHARED`` (``declare``); ``settings`` are typer's (``short_help``, ``help``,
    ``epilog``; without ``help``, the docstring)."""

    def declared(function: Callable) -> Callable:
        declare(function, own or {})
        DECLARED.setdefault(function.__module__, {})[name] = (
            lambda app: app.command(name, **settings)(function))
        return function

    return declared


def group(name: str, modules: list[str], *, module: str, help: str) -> None:
    """Declare, in ``module``, the command group ``name`` whose commands ``modules``
    declare, in that order (``check``)."""

    def add(app: typer.Typer) -> None:
        commands = typer.Typer(name=name, cls=Group, help=help, no_args_is_help=True,
                               add_completion=False, rich_markup_mode=None,
                               pretty_exceptions_enable=False)
        for each in modules:
            add_commands(commands, each)
        app.add_typer(commands, name=name)

    DECLARED.setdefault(module, {})[name] = add


def add_commands(app: typer.Typer, module: str) -> None:
    """Add to ``app`` the subcommands ``module`` declares, in the order it declares them."""
    importlib.import_module(module)
    for add in DECLARED[module].values():
        add(app)


# ------------------------------------------------------------------------- in each command's words


def out_option(metavar: str, help: str) -> Option:
    """``--out``/``-o``: where the command writes (``metavar`` and ``help`` say what)."""
    return option(Path | None, "--out", "-o", metavar=metavar, help=help)


def field_weights_option(what: str) -> Option:
    """``--field-weights NAME=W,...``: the field a player expects to meet (the decks'
    names or file stems, weights scaled to sum to 1; ``analytics.field``), in every
    command that takes it; ``what`` says what the command answers with it."""
    return option(str | None, "--field-weights", metavar="NAME=W,...",
                  help="The field you expect to meet, e.g. \"Bison Stampede=30, Scroll "
                       "Assembly=20\" (decks of the run, by name or file stem; weights "
                       f"scaled to sum to 1): {what} (two players).")


def budget_option(default: int, spent_on: str) -> Option:
    """``--budget GAMES``: every game a search plays (discover, balance, power), its default
    shown; ``spent_on`` says on what, in the command's words."""
    return option(int, "--budget", default=default, metavar="GAMES", show_default=True,
                  help=f"Every game the command plays: {spent_on}")


def games_option(help: str, default: int | None = None) -> Option:
    """``--games``/``-n N``: how many games or deals (``help`` says which); ``default``
    shown in the help when there is one."""
    kind = int if default is not None else int | None
    return option(kind, "--games", "-n", default=default, metavar="N",
                  show_default=default is not None, help=help)


def deck_list_option(flag: str, help: str, *, hidden: bool = False) -> Option:
    """An option taking deck files, several after one flag (``--vs a.txt b.txt``, ``--vs
    decks/*.txt``) or the flag again; a list of paths, ``None`` when not given. ``hidden``:
    an old name kept working for scripts, left out of the help."""
    return option(list[Path] | None, flag, metavar=DECKS, hidden=hidden,
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
    """``args`` with ``--resume DIR`` (or ``--resume=DIR``) spelt ``--resume --out DIR`` for a
    command whose ``--resume`` is a flag carrying on in its ``--out`` (discover, balance,
    power, skill): so ``--resume DIR`` reads as it does for ``run``, the word after it being
    the dir even where the command takes decks as arguments (skill); what follows ``--`` is
    left as it is. An ``InputError`` when an ``--out`` names another dir."""
    params = {opt: p for p in command.params if p.param_type_name == "option"
              for opt in p.opts}
    flag = params.get("--resume")
    if flag is None or not getattr(flag, "is_flag", False) or "--out" not in params:
        return args
    outs = params["--out"].opts
    out: list[str] = []
    resumed, named = [], []  # the dirs --resume names, and (flag, dir) of --out
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out += args[i:]
            break
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        after = args[i + 1] if i + 1 < len(args) else None
        if name == "--resume" and (eq or (after is not None and not after.startswith("-"))):
            resumed.append(value if eq else after)
            out += ["--resume", "--out", resumed[-1]]
        elif name in outs and (eq or after is not None):
            named.append((name, value if eq else after))
            out += [arg] if eq else [arg, after]
        else:
            out.append(arg)
            i += 1
            continue
        i += 1 if eq else 2
    other = [(given, d) for given, d in [*(("--resume", d) for d in resumed), *named]
             if Path(d) != Path(resumed[0])] if resumed else []
    if other:
        from rnr_sim.errors import InputError

        raise InputError(f"--resume {resumed[0]} and {other[0][0]} {other[0][1]} name two "
                         "dirs: give the stopped run's dir once, --resume DIR (or --resume "
                         "--out DIR)")
    return out


def exit_if_stopped(result: Any) -> None:
    """A search stopped by Ctrl-C (discover, balance, power: ``result.stopped``): its
    messages on stderr and exit 130."""
    if result.stopped:
        for message in result.messages:
            typer.echo(message, err=True)
        raise typer.Exit(EXIT_INTERRUPTED)


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
