"""The ``bench`` subcommand: engine and end-to-end throughput (design targets (docs/design.md))."""

from __future__ import annotations

import json

import typer

from rnr_sim.commands import options as opt
from rnr_sim.errors import InputError


def _parse_threads(values: list[str] | None) -> list[int] | None:
    from rnr_sim.errors import InputError

    if not values:
        return None
    out = []
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                out.append(int(part))
            except ValueError:
                raise InputError(f"--threads takes whole numbers (e.g. --threads 1,2), "
                                 f"not {part!r}") from None
    return out


OPTIONS = {
    "games": opt.games_option("Engine games per timed call. Default: 200,000 (--quick: "
                              "2,000)."),
    "threads": opt.option(list[str] | None, "--threads", "-t", metavar="N[,N...]",
                          help="Thread counts to time (repeat or comma-separate). Default: 1 "
                               "and all."),
    "pure_games": opt.option(int | None, "--pure-games", metavar="N",
                             help="Games played as plain Python (NUMBA_DISABLE_JIT=1); 0 skips "
                                  "it. Default: 200 (--quick: 10)."),
    "run_games": opt.option(int | None, "--run-games", metavar="N",
                            help="Games of the end-to-end `rnr-sim run`; 0 skips it. Default: "
                                 "200,000 (--quick: 2,000)."),
    "repeat": opt.option(int | None, "--repeat", "-r", metavar="N",
                         help="Timed runs per measurement; the fastest counts. Default: 3 "
                              "(--quick: 1)."),
    "quick": opt.option(bool, "--quick", help="Tiny sizes: checks the bench runs, in seconds."),
    "profile": opt.option(bool, "--profile",
                          help="Instead of timing: play --games games (default 100,000) on 1 "
                               "thread under Linux perf and print where their time goes, by "
                               "compiled kernel."),
    "lines": opt.option(bool, "--lines",
                        help="With --profile: by source function and line (the engine compiled "
                             "once more, with line tables, and cached beside the numba cache)."),
}


@opt.command("bench", OPTIONS, short_help="Measure engine and end-to-end throughput.",
             epilog="Example: rnr-sim bench --quick")
def bench_command(*, games, threads, pure_games, run_games, repeat, quick, profile, lines,
                  backend, address, as_json) -> None:
    """Measure games per second on two-player games of the sample decks: the warm engine on 1
    thread and on all threads (wall and CPU time), its speed-up over the same engine as
    plain Python (NUMBA_DISABLE_JIT=1, in a subprocess), and `rnr-sim run` end to end
    (with --backend ray, on Ray too, beside the local one). Prints a table, or JSON with
    --json."""
    if profile or lines:
        timing = [name for name, given in (("--threads", bool(threads)),
                                           ("--pure-games", pure_games is not None),
                                           ("--run-games", run_games is not None),
                                           ("--repeat", repeat is not None),
                                           ("--backend", backend != "local"),
                                           ("--address", address is not None),
                                           ("--quick", quick)) if given]
        if timing:
            raise InputError(f"{', '.join(timing)}: --profile plays its games once, on one "
                             f"thread, and times nothing; give only --games, --lines, --json")
        _profile(games, lines, as_json)
        return
    from rnr_sim import bench

    options = bench.BenchOptions.quick() if quick else bench.BenchOptions()
    if games is not None:
        options.games = games
    if pure_games is not None:
        options.pure_games = pure_games
    if run_games is not None:
        options.run_games = run_games
    if repeat is not None:
        options.repeat = repeat
    options.threads = _parse_threads(threads)
    if backend not in ("local", "ray"):
        raise InputError(f"--backend {backend}: unknown backend; choose one of local, ray")
    if backend == "ray":
        from rnr_sim.runs.ray_backend import import_ray

        import_ray(local=address is None)
    elif address is not None:
        raise InputError("--address joins a Ray cluster: give it with --backend ray")
    options.backend, options.address = backend, address
    result = bench.run_bench(options, log=lambda m: typer.echo(m, err=True))
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        typer.echo(bench.format_bench(result))


def _profile(games: int | None, lines: bool, as_json: bool) -> None:
    """``bench --profile [--lines]`` (profiling.py)."""
    from rnr_sim import profiling

    result = profiling.profile_engine(
        profiling.PROFILE_GAMES if games is None else games, lines=lines)
    typer.echo(json.dumps(result, indent=2) if as_json else profiling.format_profile(result))
