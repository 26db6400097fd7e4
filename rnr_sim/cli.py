"""The ``rnr-sim`` command line: a typer app, thin (parse, call, print).

Each module of ``COMMAND_MODULES`` declares its subcommands (``commands.options.command``);
they are added in order, none skipped. Bad input (``InputError``) never shows a
traceback: its message goes to stderr and the exit code is 2 (docs/design.md, "CLI").
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Annotated


def _stopped_while_loading(signum, frame) -> None:
    """Ctrl-C while the CLI is still importing or parsing (the first half second): one
    line, no traceback, exit 130; nothing has been done yet, so the process ends at once
    (an exception raised here could land where Python ignores it, e.g. in a callback of
    the import machinery, and the command would go on)."""
    os.write(2, b"Stopped (Ctrl-C) before anything was done.\n")
    os._exit(130)


def _answer_ctrl_c(now, then) -> None:
    """Ctrl-C's handler from ``now`` to ``then`` (only if it is ``now``: not if ignored)."""
    if signal.getsignal(signal.SIGINT) is now:
        try:
            signal.signal(signal.SIGINT, then)
        except ValueError:  # outside the main thread: the handlers are not ours to set
            pass


_answer_ctrl_c(signal.default_int_handler, _stopped_while_loading)

import typer  # noqa: E402  (after the Ctrl-C handler: these imports take a while)

from rnr_sim.commands.options import Group, add_commands  # noqa: E402
from rnr_sim.errors import InputError  # noqa: E402

#: Modules that declare subcommands (``commands.options.command``), in the order of the help.
COMMAND_MODULES = ["rnr_sim.commands.catalog", "rnr_sim.commands.run", "rnr_sim.commands.report"]
COMMAND_MODULES += ["rnr_sim.commands.replay", "rnr_sim.commands.bench"]
COMMAND_MODULES += ["rnr_sim.commands.compare", "rnr_sim.commands.policies",
                    "rnr_sim.commands.tune", "rnr_sim.commands.discover",
                    "rnr_sim.commands.check"]
COMMAND_MODULES += ["rnr_sim.commands.skill"]
COMMAND_MODULES += ["rnr_sim.commands.expansion"]
COMMAND_MODULES += ["rnr_sim.commands.balance"]
COMMAND_MODULES += ["rnr_sim.commands.power"]

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT (commands.options.EXIT_INTERRUPTED)


def report_input_error(error: InputError) -> None:
    """Print a user's error as it is meant to be read: its own lines, on stderr."""
    typer.echo(str(error), err=True)


#: The usage errors of typer's click (typer carries its own copy of click): the public
#: ``typer.BadParameter`` derives from it.
UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def usage_line(error) -> str:
    """A bad option or argument as one line: the command, click's message, where help is."""
    path = error.ctx.command_path if error.ctx is not None else "rnr-sim"
    message = " ".join(error.format_message().split())
    return f"{path}: {message} (see `{path} --help`)"


class _Group(Group):
    """Turns an ``InputError`` raised by any subcommand, or a bad option value or unknown
    option (click's ``UsageError``), into one line and exit 2; a Ctrl-C that reaches here
    (before a command's own handling of it) into one line and exit 130."""

    def invoke(self, ctx: typer.Context):
        _answer_ctrl_c(_stopped_while_loading, signal.default_int_handler)  # answered below
        try:
            return super().invoke(ctx)
        except InputError as e:
            report_input_error(e)
            raise typer.Exit(EXIT_BAD_INPUT) from None
        except UsageError as e:
            if type(e).__name__ == "NoArgsIsHelpError":  # a bare group: its help
                raise
            typer.echo(usage_line(e), err=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None
        except KeyboardInterrupt:
            typer.echo("Stopped (Ctrl-C).", err=True)
            raise typer.Exit(EXIT_INTERRUPTED) from None


app = typer.Typer(
    name="rnr-sim",
    cls=_Group,
    help="Balance simulator for the card game Revolt N Reign: check decks, play games, "
    "report.",
    epilog="Example: rnr-sim validate decks/*.txt",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"rnr-sim {version('rnr-sim')}")
        raise typer.Exit()


@app.callback()
def _options(
    show_version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """Balance simulator for the card game Revolt N Reign."""


for _module in COMMAND_MODULES:
    add_commands(app, _module)

# Loaded: Ctrl-C is a KeyboardInterrupt again, until ``main`` answers it (so that importing
# this module leaves the importer's Ctrl-C as it was).
_answer_ctrl_c(_stopped_while_loading, signal.default_int_handler)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI (the ``rnr-sim`` console script) and return its exit code. Until a
    subcommand is under way, Ctrl-C is answered by ``_stopped_while_loading``."""
    _answer_ctrl_c(signal.default_int_handler, _stopped_while_loading)
    try:
        app(args=argv, prog_name="rnr-sim")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except InputError as e:  # raised while parsing options, outside any subcommand
        report_input_error(e)
        return EXIT_BAD_INPUT
    finally:
        _answer_ctrl_c(_stopped_while_loading, signal.default_int_handler)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
