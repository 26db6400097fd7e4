"""The ``report`` subcommand: tables, plots and reports/<run>/index.html from a run dir."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import typer

from rnr_sim.commands import options as opt

OPTIONS = {
    "run_dir": opt.argument(Path, metavar="RUN_DIR",
                            help="A run dir written by `rnr-sim run`, a discovery dir written "
                                 "by `rnr-sim discover`, a balance dir written by `rnr-sim "
                                 "balance`, or a power dir written by `rnr-sim power` (its Card "
                                 "power page; with --deck, the deck doctor's)."),
    "out": opt.out_option("DIR", "Report folder: new, empty, or an earlier report of the same "
                                 "run (its files are replaced). Default: reports/<run dir "
                                 "name>."),
    "svg": opt.option(bool, "--svg", help="Draw the figures as SVG instead of PNG."),
    "field_weights": opt.field_weights_option(
        "a run dir's decks against it, each deck's expected win rate, best response first"),
}


@opt.command("report", OPTIONS, short_help="Write the balance report of a run dir.",
             epilog="Example: rnr-sim report runs/20250101-120000 --out reports/meta")
def report_command(*, run_dir, out, svg, field_weights) -> None:
    """Read a run dir (from `rnr-sim run`) and write a self-contained balance report:
    index.html (verdict, decks, matchups and the Nash metagame, victory paths, seats,
    branches, cards, game length), summary.md, and every table as CSV. The run dir is
    checked against its manifest first: a missing, extra or unreadable parquet part is
    an error (exit 2) and nothing is written; a stopped run is reported with a banner."""
    # imported here so that other subcommands start without matplotlib
    from rnr_sim.report import build_report
    from rnr_sim.report.balance import build_balance_report, is_balance_dir
    from rnr_sim.report.discovery import build_discovery_report, is_discovery_dir
    from rnr_sim.report.power import build_power_report, is_power_dir
    from rnr_sim.runs.execution import Progress

    t0 = time.perf_counter()
    _stopped_search(Path(run_dir))
    target = out if out is not None else Path("reports") / Path(run_dir).resolve().name
    if is_discovery_dir(run_dir):  # a discovery dir (rnr-sim discover): its own page
        index = build_discovery_report(run_dir, target)
        typer.echo(f"Report: {index} ({time.perf_counter() - t0:.1f} s)")
        return
    if is_balance_dir(run_dir):  # a balance dir (rnr-sim balance): its own page
        index = build_balance_report(run_dir, target)
        typer.echo(f"Report: {index} ({time.perf_counter() - t0:.1f} s)")
        return
    if is_power_dir(run_dir):  # a power dir (rnr-sim power): the Card power page
        index = build_power_report(run_dir, target)
        typer.echo(f"Report: {index} ({time.perf_counter() - t0:.1f} s)")
        return
    import json

    try:
        manifest = json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8"))
        names = [d["name"] for d in manifest["decks"]]
    except (OSError, ValueError, KeyError, TypeError):
        manifest = names = None  # build_report says what is wrong with the dir
    if field_weights is None and manifest is not None:  # the run's own, when it had one
        field_weights = _run_field_weights(manifest.get("command"))
        if field_weights is not None:
            typer.echo(f"The field of the run's command: --field-weights "
                       f"{shlex.quote(field_weights)} (give --field-weights to ask for another)",
                       err=True)
    if field_weights is not None and names is not None:  # refused before the report is written
        from rnr_sim.analytics.field import parse_field_weights

        parse_field_weights(field_weights, names)
    # Opened at the first part read: a run dir refused by its checks shows no bar.
    bar = Progress("Reading the run (2 passes)", leave=False)

    def progress(games: int, total: int) -> None:
        bar.open()
        if total and bar.total != total:
            bar.set_total(total)
        bar.update(games)

    with bar:
        index = build_report(run_dir, target, svg=svg, progress=progress, figures_apart=True,
                             field_weights=field_weights)
    if field_weights is not None:
        from rnr_sim.analytics.field import field_lines

        for line in field_lines(run_dir, field_weights):
            typer.echo(line)
    typer.echo(f"Report: {index} ({time.perf_counter() - t0:.1f} s)")


def _run_field_weights(command: str | None) -> str | None:
    """The ``--field-weights`` of the ``rnr-sim run`` command line a manifest records (its
    ``command``), if it had one: the field the player asked about, which the report answers
    for without being told again."""
    try:
        words = shlex.split(command or "")
    except ValueError:
        return None
    if words[1:2] != ["run"]:
        return None
    for i, w in enumerate(words):
        if w == "--field-weights" and i + 1 < len(words):
            return words[i + 1]
        if w.startswith("--field-weights="):
            return w.split("=", 1)[1]
    return None


#: A search command's checkpoint folder, while it is stopped: (command, the dir in words).
STOPPED = {".discover": ("discover", "discovery"), ".balance": ("balance", "balance run"),
           ".power": ("power", "power run")}


def _stopped_search(d: Path) -> None:
    """A search dir stopped before its manifest was written: say how to finish it, instead
    of "not a run dir"."""
    from rnr_sim.errors import InputError

    if (d / "manifest.json").exists():
        return
    for folder, (command, what) in STOPPED.items():
        if (d / folder).is_dir():
            raise InputError(f"{d}: a stopped {what} (no manifest.json yet); finish it with "
                             f"`rnr-sim {command} --resume --out {shlex.quote(str(d))}` and "
                             "the same options, then report it")

