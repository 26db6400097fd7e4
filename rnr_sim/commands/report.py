"""The ``report`` subcommand: tables, plots and reports/<run>/index.html from a run dir."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add ``report`` to the app."""
    app.command(
        "report",
        short_help="Write the balance report of a run dir.",
        help="Read a run dir (from `rnr-sim run`) and write a self-contained balance report: "
        "index.html (verdict, decks, matchups and the Nash metagame, victory paths, seats, "
        "branches, cards, game length), summary.md, and every table as CSV. The run dir is "
        "checked against its manifest first: a missing, extra or unreadable parquet part is "
        "an error (exit 2) and nothing is written; a stopped run is reported with a banner.",
        epilog="Example: rnr-sim report runs/20250101-120000 --out reports/meta",
    )(report_command)


def report_command(
    run_dir: Annotated[
        Path,
        typer.Argument(metavar="RUN_DIR", show_default=False,
                       help="A run dir written by `rnr-sim run`."),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", metavar="DIR", show_default=False,
                     help="Report folder: new, empty, or an earlier report of the same run "
                     "(its files are replaced). Default: reports/<run dir name>."),
    ] = None,
    svg: Annotated[
        bool, typer.Option("--svg", help="Draw the figures as SVG instead of PNG."),
    ] = False,
) -> None:
    # imported here so that other subcommands start without matplotlib
    from tqdm import tqdm

    from rnr_sim.report import build_report

    t0 = time.perf_counter()
    target = out if out is not None else Path("reports") / Path(run_dir).resolve().name
    bar = tqdm(total=None, unit=" games", unit_scale=True, file=sys.stderr,
               dynamic_ncols=True, desc="Reading the run (2 passes)", leave=False)

    def progress(games: int, total: int) -> None:
        if total and bar.total != total:
            bar.total = total
        bar.update(games)

    try:
        index = build_report(run_dir, target, svg=svg, progress=progress, figures_apart=True)
    finally:
        bar.close()
    typer.echo(f"Report: {index} ({time.perf_counter() - t0:.1f} s)")
