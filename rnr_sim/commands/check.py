"""The ``check`` command group: standing checks of the tool itself, run at scale outside
``make test`` (a small deterministic version of each runs inside it).

Each check lives in its own module of ``CHECK_MODULES`` exposing ``register(check_app)``.
"""

from __future__ import annotations

import importlib

import typer

from rnr_sim.commands import options as opt

#: Modules that add ``check`` subcommands; each exposes ``register(check_app) -> None``.
CHECK_MODULES: list[str] = ["rnr_sim.commands.check_fuzz", "rnr_sim.commands.check_coverage",
                             "rnr_sim.commands.check_pilots", "rnr_sim.commands.check_kill"]


def register(app: typer.Typer) -> None:
    """Add the ``check`` group (and every check module's subcommands) to the app."""
    check_app = typer.Typer(
        name="check",
        cls=opt.Group,
        help="Standing checks of the tool itself (fuzzing, interval coverage), run at scale.",
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
    )
    for module in CHECK_MODULES:
        importlib.import_module(module).register(check_app)
    app.add_typer(check_app, name="check")
