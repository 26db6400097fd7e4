"""``rnr-sim bench``: how fast the engine and the whole tool play games (design targets (docs/design.md)).

Three measurements, all on two-player games of the sample decks (every pair of
``decks/*.txt``, each deck with its ``Policy:`` header, every deal in both seat orders --
the games ``rnr-sim run decks/*.txt`` plays):

- the engine, warm (after a warm-up call that loads or compiles the kernels), on 1 thread
  and on all threads: wall time, games per second and games per CPU-second;
- the same engine as plain Python (``NUMBA_DISABLE_JIT=1``, in a subprocess, a few hundred
  games spread over every table), and the JIT's speed-up over it. Each plain-Python run
  follows a one-thread engine run at once, and the speed-up on one thread is the median of
  these pairs' ratios: a virtual machine's speed drifts by tens of per cent within minutes,
  and a pair sees the same drift;
- ``rnr-sim run`` end to end (``runner.bench_run``: simulate and write parquet), and its
  share of the engine's rate.

Each rate is the best of ``--repeat`` timed runs of the same games (3 by default): other
work on the machine (a shared or virtual machine's neighbours too) only ever slows a run
down, so the fastest run is the closest to the engine's own speed; every run's rate is
kept in the JSON (``runs_games_per_s``) and the table shows their spread.

``python -m rnr_sim.bench --pure-server N`` is the subprocess: it prints ``ready``, then
plays N games for each line it reads and prints one JSON line for each.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rnr_sim.errors import InputError
from rnr_sim.progress import compile_clock
from rnr_sim.runs import planning, runner
from rnr_sim.runs.inputs import GameInputs

DEFAULT_GAMES = 200_000  # engine games per timed call
DEFAULT_PURE_GAMES = 200  # games played as plain Python
DEFAULT_RUN_GAMES = 200_000  # games of the end-to-end run
QUICK_GAMES = 2_000
QUICK_PURE_GAMES = 10
QUICK_RUN_GAMES = 2_000
DEFAULT_REPEAT = 3  # timed runs per measurement; the fastest counts
WARMUP_GAMES = 512
PAIRED_ENGINE_GAMES = 20_000  # the one-thread engine run paired with each plain-Python run
PURE_TIMEOUT_S = 900
#: docs/design.md, "Performance targets".
TARGET_GAMES_PER_S = 150_000  # two players, 2 threads, warm cache
TARGET_THREADS = 2
TARGET_SPEEDUP = 200  # over NUMBA_DISABLE_JIT=1
BUSY_LOAD = 0.5  # a load average above this before the bench: say the rates are low


@dataclass
class BenchOptions:
    games: int = DEFAULT_GAMES
    threads: Sequence[int] | None = None  # None: 1 and all
    pure_games: int = DEFAULT_PURE_GAMES
    run_games: int = DEFAULT_RUN_GAMES
    repeat: int = DEFAULT_REPEAT
    backend: str = "local"  # "ray": also time the end-to-end run on Ray, beside the local one
    address: str | None = None  # the Ray cluster to join (default: start a local Ray)

    @classmethod
    def quick(cls) -> BenchOptions:
        return cls(games=QUICK_GAMES, pure_games=QUICK_PURE_GAMES, run_games=QUICK_RUN_GAMES,
                   repeat=1)


def _driver():
    from rnr_sim.engine import driver

    return driver


def max_threads() -> int:
    import numba

    return int(numba.config.NUMBA_NUM_THREADS)


def thread_counts(threads: Sequence[int] | None) -> list[int]:
    """The thread counts to time: 1 and all by default; each checked against the machine."""
    top = max_threads()
    if not threads:
        return sorted({1, top})
    for t in threads:
        if isinstance(t, bool) or not isinstance(t, int) or not 1 <= t <= top:
            raise InputError(f"--threads must be whole numbers 1..{top} (this machine's "
                             f"NUMBA_NUM_THREADS), not {t!r}")
    return sorted(set(threads))


def sample_plan(games: int) -> planning.RunPlan:
    """The round robin of the sample decks with enough deals for at least ``games`` games,
    compiled for the engine."""
    decks = planning.sample_decks()
    n_tables = len(planning.make_tables(len(decks), 2))
    deals = max(1, math.ceil(games / (2 * n_tables)))
    plan = planning.plan_run(planning.RunOptions(decks=decks, games=deals, players=2))
    plan.compile(_driver())
    return plan


def spread_inputs(plan: planning.RunPlan, games: int) -> GameInputs:
    """Engine inputs of ``games`` games spread evenly over every table of ``plan``."""
    inputs = plan.chunk_inputs(0, plan.games_total)
    if games >= plan.games_total:
        return inputs
    ids = np.linspace(0, plan.games_total - 1, games).round().astype(np.int64)
    return inputs[ids]


def play(plan: planning.RunPlan, inputs: GameInputs, threads: int | None):
    return inputs.play(_driver(), plan.cards, plan.deck_cards, plan.deck_size, plan.rules,
                       plan.seed, threads=threads, policies=plan.policy_table)


def best_of(repeat: int, call: Callable[[], Any]) -> tuple[float, float, list[float], Any]:
    """Time ``call`` ``repeat`` times: (wall, CPU seconds of the fastest run, every run's
    wall seconds, the fastest run's result)."""
    runs: list[tuple[float, float, Any]] = []
    for _ in range(max(1, repeat)):
        c0 = time.process_time()
        t0 = time.perf_counter()
        out = call()
        runs.append((time.perf_counter() - t0, time.process_time() - c0, out))
    wall, cpu, out = min(runs, key=lambda r: r[0])
    return wall, cpu, [r[0] for r in runs], out


def rates(n: int, wall: float, cpu: float, walls: list[float], digits: int) -> dict[str, Any]:
    """The rate fields of one measurement of ``n`` games."""
    return {
        "games": n,
        "wall_s": round(wall, 4),
        "cpu_s": round(cpu, 4),
        "games_per_s": round(n / wall, digits) if wall > 0 else 0.0,
        "games_per_cpu_s": round(n / cpu, digits) if cpu > 0 else 0.0,
        "runs_games_per_s": [round(n / w, digits) if w > 0 else 0.0 for w in walls],
    }


def time_engine(plan: planning.RunPlan, inputs: GameInputs, threads: int,
                repeat: int = 1) -> tuple[dict[str, Any], Any]:
    """Timed, warm calls of the engine (the best of ``repeat``): wall and CPU seconds, rates;
    and the records."""
    n = len(inputs)
    wall, cpu, walls, records = best_of(repeat, lambda: play(plan, inputs, threads))
    return {
        "threads": threads,
        **rates(n, wall, cpu, walls, 1),
        "mean_turns": round(float(records.turns.mean()), 2) if n else 0.0,
    }, records


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    k = len(xs) // 2
    return xs[k] if len(xs) % 2 else (xs[k - 1] + xs[k]) / 2


def pure_python_paired(plan: planning.RunPlan, games: int, repeat: int,
                       timeout: float = PURE_TIMEOUT_S) -> dict[str, Any]:
    """Plain Python (``NUMBA_DISABLE_JIT=1``, a subprocess; its start-up and set-up not
    counted): ``repeat`` runs of ``games`` games, each right after a one-thread engine run
    of ``PAIRED_ENGINE_GAMES`` games. The rates are the fastest Python run's; the speed-up
    on one thread (wall and CPU) is the median ratio of the pairs."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    cmd = [sys.executable, "-m", "rnr_sim.bench", "--pure-server", str(games)]
    engine_inputs = spread_inputs(plan, min(PAIRED_ENGINE_GAMES, plan.games_total))
    n_engine = len(engine_inputs)
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    runs: list[dict[str, Any]] = []
    ratios: list[float] = []
    cpu_ratios: list[float] = []
    try:
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the plain-Python subprocess did not start")
        for _ in range(max(1, repeat)):
            wall, cpu, _, _ = best_of(1, lambda: play(plan, engine_inputs, 1))
            proc.stdin.write("go\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("the plain-Python subprocess stopped")
            py = json.loads(line)
            runs.append(py)
            if wall > 0 and py["games_per_s"] > 0:
                ratios.append(n_engine / wall / py["games_per_s"])
            if cpu > 0 and py["games_per_cpu_s"] > 0:
                cpu_ratios.append(n_engine / cpu / py["games_per_cpu_s"])
    except (RuntimeError, ValueError, OSError) as exc:
        proc.kill()
        tail = (proc.stderr.read().strip().splitlines() or [str(exc)])[-1]
        return {"games": games, "error": tail}
    finally:
        if proc.poll() is None:
            proc.stdin.close()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
    best = max(runs, key=lambda r: r["games_per_s"])
    out = {**best, "runs_games_per_s": [r["games_per_s"] for r in runs],
           "paired_engine_games": n_engine, "paired_speedups": [round(x, 1) for x in ratios]}
    if ratios:
        out["speedup_1_thread"] = round(_median(ratios), 1)
    if cpu_ratios:
        out["speedup_per_cpu_s"] = round(_median(cpu_ratios), 1)
    return out


def _pure_server(games: int) -> None:
    """The subprocess's side: plain-Python games of the sample round robin, timed, once for
    each line read from standard input."""
    import warnings

    # The engine's 64-bit hashing overflows on purpose; numpy scalars warn about it.
    warnings.simplefilter("ignore", RuntimeWarning)
    plan = sample_plan(games)
    inputs = spread_inputs(plan, games)
    n = len(inputs)
    print("ready", flush=True)
    for _ in sys.stdin:
        with np.errstate(over="ignore"):
            wall, cpu, walls, records = best_of(1, lambda: play(plan, inputs, None))
        print(json.dumps({
            **rates(n, wall, cpu, walls, 2),
            "mean_turns": round(float(records.turns.mean()), 2) if n else 0.0,
            "jit_disabled": os.environ.get("NUMBA_DISABLE_JIT") == "1",
        }), flush=True)


def machine() -> dict[str, Any]:
    import numba

    return {
        "cpus": os.cpu_count(),
        "numba_threads": max_threads(),
        "numba": numba.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }


def run_bench(options: BenchOptions, log: Callable[[str], None] = lambda m: None
              ) -> dict[str, Any]:
    """Every measurement, as a JSON-ready dict (``format_bench`` prints it)."""
    for name, value, low in (("--games", options.games, 1),
                             ("--pure-games", options.pure_games, 0),
                             ("--run-games", options.run_games, 0),
                             ("--repeat", options.repeat, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InputError(f"{name} must be a whole number at least {low}, not {value!r}")
    threads = thread_counts(options.threads)
    load_before = _load_average()
    driver = _driver()
    plan = sample_plan(options.games)
    inputs = spread_inputs(plan, options.games)
    result: dict[str, Any] = {
        "decks": len(plan.decks),
        "tables": len(plan.tables),
        "policies": dict(zip(plan.deck_names, plan.policies, strict=True)),
        "seed": plan.seed,
    }

    # Warm-up: load (or compile) the kernels and start the thread pool, untimed.
    compiling = driver.needs_compile()
    if not compiling:
        log("Loading the engine…")
    warm = spread_inputs(plan, min(WARMUP_GAMES, plan.games_total))
    t0 = time.perf_counter()
    with compile_clock(compiling, log=log):
        for t in sorted({1, max(threads)}):
            play(plan, warm, t)
    result["warmup"] = {"compiled": compiling, "seconds": round(time.perf_counter() - t0, 2)}

    engine = []
    winners = []
    try:
        for t in threads:
            log(f"Engine: {len(inputs):,} games on {t} thread{'s' if t > 1 else ''}…")
            row, records = time_engine(plan, inputs, t, options.repeat)
            engine.append(row)
            winners.append((records.winner_seat, records.path, records.turns))
    finally:
        import numba

        numba.set_num_threads(max_threads())  # play_games(threads=t) set it
    result["engine"] = engine
    result["same_results_every_thread_count"] = all(
        all(np.array_equal(a, b) for a, b in zip(w, winners[0], strict=True)) for w in winners)
    best = max(engine, key=lambda r: r["threads"])

    pure: dict[str, Any] | None = None
    if options.pure_games:
        log(f"Plain Python (NUMBA_DISABLE_JIT=1): {options.pure_games:,} games in a "
            "subprocess…")
        try:
            pure = pure_python_paired(plan, options.pure_games, options.repeat)
        finally:
            import numba

            numba.set_num_threads(max_threads())
        rate = pure.get("games_per_s") or 0.0
        if rate > 0:
            pure["speedup_all_threads"] = round(best["games_per_s"] / rate, 1)
            pure["speedup_threads"] = best["threads"]
    result["pure_python"] = pure

    e2e: dict[str, Any] | None = None
    if options.run_games:
        n_tables = len(plan.tables)
        deals = max(1, math.ceil(options.run_games / (2 * n_tables)))
        log(f"End to end: rnr-sim run of {deals * 2 * n_tables:,} games…")
        c0 = time.process_time()
        rate = runner.bench_run(games=options.run_games, threads=None)
        cpu = time.process_time() - c0  # the whole call: plan, warm-up, simulate, write
        games = deals * 2 * n_tables
        e2e = {
            "games": games,
            "threads": max_threads(),
            "games_per_s": round(rate, 1),
            "cpu_s": round(cpu, 4),
            "games_per_cpu_s": round(games / cpu, 1) if cpu > 0 else 0.0,
        }
        same = next((r for r in engine if r["threads"] == max_threads()), None)
        if same is not None and same["games_per_s"] > 0:
            e2e["share_of_engine"] = round(rate / same["games_per_s"], 3)
        if same is not None and same["games_per_cpu_s"] > 0 and cpu > 0:
            e2e["share_of_engine_per_cpu_s"] = round(e2e["games_per_cpu_s"]
                                                     / same["games_per_cpu_s"], 3)
    result["end_to_end"] = e2e
    result["end_to_end_ray"] = (ray_run(options.run_games, options.address, log)
                                if options.run_games and options.backend == "ray" else None)
    result["repeat"] = options.repeat

    at_target = next((r for r in engine if r["threads"] == TARGET_THREADS), None)
    result["targets"] = {
        "engine_games_per_s": TARGET_GAMES_PER_S,
        "engine_threads": TARGET_THREADS,
        "engine_met": None if at_target is None
        else at_target["games_per_s"] >= TARGET_GAMES_PER_S,
        "speedup": TARGET_SPEEDUP,
        # Like for like: the engine on one thread against plain Python (one thread).
        "speedup_met": None if not pure or "speedup_1_thread" not in pure
        else pure["speedup_1_thread"] >= TARGET_SPEEDUP,
    }
    result["machine"] = machine()
    result["machine"]["load_average_before"] = load_before
    return result


def ray_run(games: int, address: str | None, log: Callable[[str], None]) -> dict[str, Any]:
    """The end-to-end run on Ray: the seconds to start (or join) Ray, then the same run
    twice: ``cold`` (each worker loads the engine from the numba cache in its first chunk,
    as a command starting its own Ray does) and ``warm`` (the workers keep it, as on a
    long-lived cluster). Chunks of about games / (4 x workers), so every worker has work."""
    from rnr_sim.runs.ray_backend import import_ray, init_ray

    ray = import_ray(local=address is None)
    started = not ray.is_initialized()
    log("End to end on Ray: starting Ray…" if address is None and started
        else "End to end on Ray: joining the cluster…")
    startup = init_ray(address) if started else 0.0
    try:
        workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        chunk = max(1000, math.ceil(games / (4 * workers)))
        out: dict[str, Any] = {"startup_s": round(startup, 2), "workers": workers,
                               "chunk_size": chunk}
        for label in ("cold", "warm"):
            log(f"End to end on Ray ({label})…")
            manifest: dict[str, Any] = {}
            rate = runner.bench_run(games=games, backend="ray", chunk_size=chunk,
                                    manifest=manifest)
            times = sorted(manifest["execution"][-1]["chunk_s"].values())
            out[label] = {"games": manifest["games_done"], "games_per_s": round(rate, 1),
                          "chunk_s_median": times[len(times) // 2] if times else 0.0}
        return out
    finally:
        if started:
            ray.shutdown()


def _load_average() -> float | None:
    """The 1-minute load average (other work on the machine slows every rate)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _n(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def format_bench(r: dict[str, Any]) -> str:
    """The bench result as a compact table for the terminal."""
    m = r["machine"]
    lines = [
        f"rnr-sim bench: two-player games of the {r['decks']} sample decks "
        f"({r['tables']} pairings, each deck with its Policy header, seed {r['seed']})",
        f"machine: {m['cpus']} CPUs, numba {m['numba']} (up to {m['numba_threads']} worker "
        f"threads), Python {m['python']}",
        f"warm-up: {r['warmup']['seconds']:.1f} s "
        f"({'compiled the engine' if r['warmup']['compiled'] else 'loaded from the cache'}; "
        "not timed below)",
        "",
    ]
    repeat = r.get("repeat", 1)
    head = ["engine (warm)", "threads", "games", "wall s", "games/s", "games/CPU-s",
            f"all {repeat} runs, games/s" if repeat > 1 else "runs"]

    def spread(x: dict[str, Any], digits: int = 0) -> str:
        runs = x.get("runs_games_per_s") or []
        return f"{_n(min(runs), digits)}-{_n(max(runs), digits)}" if len(runs) > 1 else "-"

    rows = [["numba", str(e["threads"]), _n(e["games"]), f"{e['wall_s']:.2f}",
             _n(e["games_per_s"]), _n(e["games_per_cpu_s"]), spread(e)] for e in r["engine"]]
    p = r.get("pure_python")
    if p and "error" not in p:
        rows.append(["plain Python", "1", _n(p["games"]), f"{p['wall_s']:.2f}",
                     _n(p["games_per_s"], 1), _n(p.get("games_per_cpu_s", 0.0), 1),
                     spread(p, 1)])
    e = r.get("end_to_end")
    if e:
        rows.append(["rnr-sim run", str(e["threads"]), _n(e["games"]), "-",
                     _n(e["games_per_s"]), _n(e.get("games_per_cpu_s", 0.0)), "-"])
    ray = r.get("end_to_end_ray")
    if ray:
        for label in ("cold", "warm"):
            rows.append([f"rnr-sim run --backend ray ({label})",
                         f"{ray['workers']}x1", _n(ray[label]["games"]), "-",
                         _n(ray[label]["games_per_s"]), "-", "-"])
    widths = [max(len(x[i]) for x in [head, *rows]) for i in range(len(head))]
    for row in [head, *rows]:
        lines.append("  ".join([row[0].ljust(widths[0])]
                               + [c.rjust(w) for c, w in zip(row[1:], widths[1:],
                                                             strict=True)]))
    lines.insert(5, "  ".join("-" * w for w in widths))
    if repeat > 1:
        lines.append(f"(each rate: the fastest of {repeat} timed runs of the same games; "
                     "other work on the machine only slows a run down)")
    lines.append("")
    if p is None:
        lines.append("plain Python: skipped (--pure-games 0)")
    elif "error" in p:
        lines.append(f"plain Python (NUMBA_DISABLE_JIT=1): failed: {p['error']}")
    else:
        parts = []
        if "speedup_1_thread" in p:
            pairs = len(p.get("paired_speedups", []))
            parts.append(f"{_n(p['speedup_1_thread'])}x on 1 thread" + (
                f" (median of {pairs} back-to-back pairs)" if pairs > 1 else ""))
        if p["speedup_threads"] > 1:
            parts.append(f"{_n(p['speedup_all_threads'])}x on {p['speedup_threads']} threads")
        if "speedup_per_cpu_s" in p:
            parts.append(f"{_n(p['speedup_per_cpu_s'])}x per CPU-second")
        lines.append("JIT speed-up over plain Python (NUMBA_DISABLE_JIT=1): " + ", ".join(parts))
    if e and "share_of_engine" in e:
        cpu_share = (f", {100 * e['share_of_engine_per_cpu_s']:.0f}% per CPU-second"
                     if "share_of_engine_per_cpu_s" in e else "")
        lines.append(f"rnr-sim run end to end (simulate + write parquet): "
                     f"{100 * e['share_of_engine']:.0f}% of the engine's rate on "
                     f"{e['threads']} threads{cpu_share}")
    if ray:
        lines.append(f"Ray: {ray['startup_s']:.1f} s to start (not in its rates), "
                     f"{ray['workers']} workers of 1 thread, chunks of {ray['chunk_size']:,} "
                     "games; cold: each worker loads the engine in its first chunk; warm: "
                     "the same workers again")
    lines.append("results identical on every thread count: "
                 + ("yes" if r["same_results_every_thread_count"] else "NO"))
    t = r["targets"]

    def verdict(met: bool | None) -> str:
        return "not measured" if met is None else ("met" if met else "not met")

    lines.append(f"design targets (docs/design.md): >= {_n(t['engine_games_per_s'])} games/s on "
                 f"{t['engine_threads']} threads: {verdict(t['engine_met'])}; >= "
                 f"{t['speedup']}x plain Python on 1 thread: {verdict(t['speedup_met'])}")
    load = m.get("load_average_before")
    if load is not None and load >= BUSY_LOAD:
        lines.append(f"note: the machine was busy (load average {load:.1f} before the bench): "
                     "other work shares the CPUs, so these rates are low")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover -- the plain-Python subprocess
    if len(sys.argv) == 3 and sys.argv[1] == "--pure-server":
        _pure_server(int(sys.argv[2]))
    else:
        sys.exit("usage: python -m rnr_sim.bench --pure-server N")
