"""The ``rnr-sim`` command line: a typer app, thin (parse, call, print).

Each module of ``COMMAND_MODULES`` exposes ``register(app)`` and adds its subcommands;
they are imported in order, none skipped. Bad input (``InputError``) never shows a
traceback: its message goes to stderr and the exit code is 2 (docs/design.md, "CLI").
"""

from __future__ import annotations

import importlib
import sys
from typing import Annotated

import typer

from rnr_sim.commands.options import Group
from rnr_sim.errors import InputError

#: Modules that add subcommands; each exposes ``register(app: typer.Typer) -> None``.
COMMAND_MODULES = ["rnr_sim.commands.catalog", "rnr_sim.commands.run", "rnr_sim.commands.report"]
COMMAND_MODULES += ["rnr_sim.commands.replay", "rnr_sim.commands.bench"]
COMMAND_MODULES += ["rnr_sim.commands.compare", "rnr_sim.commands.policies",
                    "rnr_sim.commands.tune", "rnr_sim.commands.discover",
                    "rnr_sim.commands.check"]
COMMAND_MODULES += ["rnr_sim.commands.skill"]
COMMAND_MODULES += ["rnr_sim.commands.expansion"]

EXIT_BAD_INPUT = 2


def report_input_error(error: InputError) -> None:
    """Print a user's error as it is meant to be read: its own lines, on stderr."""
    typer.echo(str(error), err=True)


class _Group(Group):
    """Turns an ``InputError`` raised by any subcommand into its message and exit 2."""

    def invoke(self, ctx: typer.Context):
        try:
            return super().invoke(ctx)
        except InputError as e:
            report_input_error(e)
            raise typer.Exit(EXIT_BAD_INPUT) from None


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
    importlib.import_module(_module).register(app)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI (the ``rnr-sim`` console script) and return its exit code."""
    try:
        app(args=argv, prog_name="rnr-sim")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except InputError as e:  # raised while parsing options, outside any subcommand
        report_input_error(e)
        return EXIT_BAD_INPUT
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
