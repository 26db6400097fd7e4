"""``rnr-sim bench --profile``: where the engine's time goes, sampled by Linux perf.

The bench's games (two-player games of the sample decks) are played on one thread in a
child process while ``perf record`` samples it; each sample's instruction address is then
placed in the engine's code (``jit_code.py``): the kernel it belongs to, and with
``--lines`` the source line and function it was compiled from (the engine compiled again
with line tables, ``NUMBA_DEBUGINFO=1``, in a cache of its own beside the numba cache).
A kernel's share is of the samples in the engine's code. numba inlines most kernels into
their callers, so the kernel table names where code ended up (the batch worker holds the
turn); the source-function table says what it was written as. Line tables place machine
code only roughly (LLVM moves and merges instructions; the rows it leaves unnamed are
"line 0"), so read the shares as where to look, not as exact costs.

``python -m rnr_sim.profiling --games N [--lines]`` is the child: it prints one JSON
object.
"""

from __future__ import annotations

import ast
import collections
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rnr_sim.errors import InputError

PROFILE_GAMES = 100_000
SAMPLE_HZ = 2_000  # perf's sampling frequency
TOP = 25  # rows per table
PERF_HINT = "install Linux perf (Debian: apt install linux-perf)"
LINES_FOLDER_SUFFIX = "-lines"


def perf_command() -> str:
    """The path of ``perf``, or one ``InputError`` line saying how to get it."""
    path = shutil.which("perf")
    if path is None:
        raise InputError(f"rnr-sim bench --profile samples the engine with Linux perf, "
                         f"which is not on PATH: {PERF_HINT}")
    return path


def lines_cache_dir(environ: dict[str, str] | None = None) -> str:
    """Where the engine compiled with line tables is cached: beside the numba cache
    (``<NUMBA_CACHE_DIR>-lines``), never in it (numba's cache index does not tell the two
    builds apart), or in the user's cache folder when no numba cache is set."""
    env = os.environ if environ is None else environ
    root = env.get("NUMBA_CACHE_DIR")
    if root:
        return os.path.normpath(root) + LINES_FOLDER_SUFFIX
    return str(Path.home() / ".cache" / "rnr-sim" / "numba-lines")


def profile_engine(games: int = PROFILE_GAMES, lines: bool = False) -> dict[str, Any]:
    """Profile ``games`` bench games in a child process (see the module's docstring); the
    child's progress lines reach stderr. Returns the child's JSON."""
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise InputError(f"--games must be a whole number at least 1, not {games!r}")
    perf_command()
    _need_elftools()
    env = dict(os.environ)
    if lines:
        env["NUMBA_DEBUGINFO"] = "1"
        env["NUMBA_CACHE_DIR"] = lines_cache_dir()
    cmd = [sys.executable, "-m", "rnr_sim.profiling", "--games", str(games)]
    if lines:
        cmd.append("--lines")
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    if proc.returncode == 2:
        raise InputError(proc.stdout.strip().splitlines()[-1] if proc.stdout.strip()
                         else "rnr-sim bench --profile: the profile failed")
    if proc.returncode != 0:
        raise RuntimeError(f"the profiling process stopped (exit {proc.returncode})")
    return json.loads(proc.stdout)


def _need_elftools() -> None:
    try:
        import elftools  # noqa: F401
    except ImportError:
        raise InputError("rnr-sim bench --profile reads the engine's code with pyelftools, "
                         "which is not installed: pip install pyelftools (or "
                         "pip install -e '.[dev]')") from None


def _record(perf: str, seconds_call) -> tuple[list[int], float]:
    """Run ``seconds_call()`` under ``perf record`` of this process; (sampled instruction
    addresses, the call's wall seconds)."""
    with tempfile.TemporaryDirectory(prefix="rnr-sim-perf-") as d:
        data = os.path.join(d, "perf.data")
        rec = subprocess.Popen([perf, "record", "-q", "-F", str(SAMPLE_HZ), "-p",
                                str(os.getpid()), "-o", data],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(100):  # perf writes its file's header once it is attached
            if os.path.exists(data) or rec.poll() is not None:
                break
            time.sleep(0.02)
        time.sleep(0.2)
        if rec.poll() is not None:
            raise InputError(f"perf record could not sample this process: "
                             f"{_first_line(rec.stderr.read())} ({PERF_HINT}; see "
                             f"/proc/sys/kernel/perf_event_paranoid)")
        t0 = time.perf_counter()
        seconds_call()
        wall = time.perf_counter() - t0
        rec.send_signal(signal.SIGINT)
        err = rec.communicate(timeout=120)[1]
        if rec.returncode not in (0, -signal.SIGINT) or not os.path.exists(data):
            raise InputError(f"perf record failed: {_first_line(err)}")
        out = subprocess.run([perf, "script", "-i", data, "-F", "ip"], capture_output=True,
                             text=True)
        if out.returncode != 0:
            raise InputError(f"perf script failed: {_first_line(out.stderr)}")
    ips = []
    for token in out.stdout.split():
        try:
            ips.append(int(token, 16))
        except ValueError:
            continue
    return ips, wall


def _first_line(text: str) -> str:
    lines = [t.strip() for t in (text or "").splitlines() if t.strip()]
    return lines[0] if lines else "no message"


@functools.cache
def _source(path: str) -> str:
    """A source file's text, read once ("" when it cannot be read)."""
    try:
        return Path(path).read_text()
    except (OSError, ValueError):
        return ""


def source_functions(path: str) -> list[tuple[int, int, str]]:
    """The functions of a source file: ``(first line, last line, name)``, outer first."""
    try:
        tree = ast.parse(_source(path))
    except (SyntaxError, ValueError):
        return []
    return sorted((n.lineno, n.end_lineno or n.lineno, n.name) for n in ast.walk(tree)
                  if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def aggregate(ips: list[int], code, with_lines: bool) -> dict[str, Any]:
    """Samples ``ips`` placed in ``code`` (a ``jit_code.CodeMap``): counts by kernel and,
    ``with_lines``, by source function and line. Shares are of the samples in the
    engine's code."""
    kernels: collections.Counter = collections.Counter()
    places: collections.Counter = collections.Counter()
    for ip in ips:
        name = code.function_at(ip)
        if name is None:
            continue
        kernels[name] += 1
        if with_lines:
            places[code.line_at(ip)] += 1
    engine = sum(kernels.values())
    result: dict[str, Any] = {
        "samples": len(ips),
        "engine_samples": engine,
        "kernels": _rows(kernels, engine, "kernel"),
    }
    if with_lines:
        spans: dict[str, list[tuple[int, int, str]]] = {}
        functions: collections.Counter = collections.Counter()
        lines: collections.Counter = collections.Counter()
        for place, n in places.items():
            if place is None:
                functions["(no line table row)"] += n
                continue
            file, line = place
            short = _short(file)
            if line == 0:
                functions[f"{short} (line 0: made by the compiler)"] += n
                continue
            if file not in spans:
                spans[file] = source_functions(file)
            inner = [name for lo, hi, name in spans[file] if lo <= line <= hi]
            functions[f"{short}:{inner[-1] if inner else '?'}"] += n
            lines[(file, line)] += n
        result["functions"] = _rows(functions, engine, "function")
        result["lines"] = [
            {"line": f"{_short(f)}:{ln}", "samples": n, "share": round(n / engine, 4),
             "source": _source_line(f, ln)}
            for (f, ln), n in lines.most_common(TOP)] if engine else []
    return result


def _rows(counter: collections.Counter, total: int, key: str) -> list[dict[str, Any]]:
    return [{key: k, "samples": n, "share": round(n / total, 4)}
            for k, n in counter.most_common()] if total else []


def _short(file: str) -> str:
    """A source path from the project's package on: ``rnr_sim/engine/game.py``."""
    parts = Path(file).parts
    return "/".join(parts[parts.index("rnr_sim"):]) if "rnr_sim" in parts else file


def _source_line(file: str, line: int) -> str:
    lines = _source(file).splitlines()
    return lines[line - 1].strip()[:80] if 0 < line <= len(lines) else ""


def format_profile(r: dict[str, Any]) -> str:
    """The profile as plain-text tables."""
    from rnr_sim.display import format_table

    engine = r["engine_samples"]
    out = [f"rnr-sim bench --profile: {r['games']:,} two-player games of the sample decks on "
           f"1 thread in {r['wall_s']:.2f} s ({r['games_per_s']:,.0f} games/s under perf), "
           f"{r['samples']:,} samples at {SAMPLE_HZ:,} Hz, {engine:,} in the engine's code "
           f"({engine / max(1, r['samples']):.0%}; the rest is Python and the set-up)", ""]
    if not engine:
        out.append("no sample fell in the engine's code")
        return "\n".join(out)

    def share_rows(rows, key):
        return [[f"{row['share']:.1%}", f"{row['samples']:,}", row[key]] for row in rows[:TOP]]

    if "functions" not in r:
        out += format_table(["share", "samples", "kernel (the code compiled into it)"],
                            share_rows(r["kernels"], "kernel"), right={0, 1})
        out.append("--lines: by source function and line (compiles the engine once more, "
                   "with line tables).")
    else:
        out += format_table(["share", "samples", "source function (as written)"],
                            share_rows(r["functions"], "function"), right={0, 1})
        out += ["", *format_table(["share", "samples", "line", "source"],
                                  [[f"{x['share']:.1%}", f"{x['samples']:,}", x["line"],
                                    x["source"]] for x in r["lines"]], right={0, 1})]
        out.append("Line tables place machine code roughly: read the shares as where to look.")
    return "\n".join(out)


def _child(games: int, lines: bool) -> dict[str, Any]:
    """Profile in this process (the child ``profile_engine`` starts)."""
    from rnr_sim import bench, jit_code
    from rnr_sim.engine import driver
    from rnr_sim.progress import compile_clock

    perf = perf_command()
    if not jit_code.keep():
        raise RuntimeError("the engine was loaded before its code could be kept")
    plan = bench.sample_plan(games)
    inputs = bench.spread_inputs(plan, games)
    warm = bench.spread_inputs(plan, min(bench.WARMUP_GAMES, plan.games_total))
    message = "Compiling the engine with line tables (once)…" if lines else \
        "Compiling the engine (first run only)…"
    with compile_clock(driver.needs_compile(), message=message):
        bench.play(plan, warm, 1)
    code = jit_code.code_map(lines=lines)
    print(f"Profiling {len(inputs):,} games on 1 thread under perf…", file=sys.stderr,
          flush=True)
    ips, wall = _record(perf, lambda: bench.play(plan, inputs, 1))
    n = len(inputs)
    result = {"games": n, "wall_s": round(wall, 3), "games_per_s": round(n / wall, 1),
              "lines_compiled": lines}
    result.update(aggregate(ips, code, lines))
    return result


def main(argv: list[str]) -> int:
    games, lines = PROFILE_GAMES, False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--games" and args:
            games = int(args.pop(0))
        elif a == "--lines":
            lines = True
        else:
            print(f"usage: python -m rnr_sim.profiling [--games N] [--lines] (not {a!r})")
            return 2
    try:
        print(json.dumps(_child(games, lines)))
    except InputError as e:
        print(str(e))
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover -- the child process
    sys.exit(main(sys.argv[1:]))
