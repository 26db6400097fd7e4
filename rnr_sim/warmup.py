"""What ``make demo`` compiles beside the engine (``python -m rnr_sim.warmup``).

The demo's first step compiles the engine, on one core, for about half a minute; nothing
else can play until it is done. Meanwhile this fills the numba cache with what the later
steps would otherwise compile for themselves, one after the other: the report's card
kernels (``analytics.card_kernels``: about 5 CPU seconds) and pyribs' archive kernels
(numpy-groupies, about 5 more, compiled by the deck search's first ``add``), and it loads
matplotlib once (its font cache, on a fresh machine). With ``--search`` it then compiles the
search pilot's kernels (``compile_search_kernels``), which wait for
the engine's: the yardstick checks and the deck search's check play them.

Each is compiled by the code that uses it, so for the types it is used with: a tiny run
(three sample decks, a few deals) is played by the engine as plain Python
(``NUMBA_DISABLE_JIT=1`` in a subprocess, with a throwaway numba cache: it compiles
nothing and never waits on the engine's compile lock, ``engine.driver.prepare_cache``),
then the report's metrics are computed on it here, and an archive of the deck search's
kind takes two entries. Nothing of it is kept but the cache's entries; the games of the
demo do not depend on it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: The tiny run: the first three sample decks, this many deals a table.
DECKS = 3
DEALS = 12


def play_plain(out: Path, scratch: Path, first: int = 0, deals: int = DEALS) -> None:
    """A tiny run into ``out``: ``DECKS`` sample decks from the ``first``, ``deals`` deals a
    table, the engine as plain Python (its numba cache ``scratch``, left empty)."""
    from rnr_sim.runs.planning import sample_decks

    decks = [str(p) for p in sample_decks()[first:first + DECKS]]
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "NUMBA_CACHE_DIR": str(scratch)}
    code = "import sys; from rnr_sim.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", code, "run", *decks,
                           "--games", str(deals), "--out", str(out), "--quiet"],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:  # the demo's own run says what is wrong; say it here too
        raise RuntimeError(f"the warm-up's plain-Python run failed: {done.stderr[-2000:]}")


def compile_report_kernels(run_dir: Path) -> None:
    """The report's metrics of ``run_dir`` (``analytics.compute_metrics``): its card
    kernels compile into the numba cache."""
    from rnr_sim.analytics import compute_metrics, load_run

    compute_metrics(load_run(run_dir))


def compile_archive_kernels() -> None:
    """An archive of the deck search's kind (pyribs' ``GridArchive``, float64 objectives,
    ``discover.meta``) takes two entries: its ``add`` compiles numpy-groupies' kernels."""
    import numpy as np
    from ribs.archives import GridArchive

    archive = GridArchive(solution_dim=2, dims=[2], ranges=[(0.0, 1.0)], seed=1)
    archive.add(np.zeros((2, 2)), np.array([0.25, 0.75]), np.array([[0.1], [0.9]]))


def load_matplotlib() -> None:
    """matplotlib imported and a text drawn once (its font cache built, if missing)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))
    FigureCanvasAgg(fig)
    fig.text(0.5, 0.5, "Revolt N Reign")
    fig.canvas.draw()


def compile_search_kernels() -> None:
    """Two games of two sample decks with the search pilot in every seat, as the yardstick
    plays them (``evaluation.Pool.with_yardstick``, ``Evaluator.play``): the search pilot's
    kernels compile into the numba cache, for the types the yardstick checks use. It first
    waits for the engine's own kernels (``driver.prepare_cache`` holds the cache's lock
    while the demo's first run compiles them) and plays no heuristic game, so no kernel is
    compiled by two processes."""
    import numpy as np

    from rnr_sim.runs import planning
    from rnr_sim.runs.evaluation import Evaluator, Matchups, Pool

    plan = planning.plan_run(planning.RunOptions(decks=planning.sample_decks()[:2], games=1,
                                             seed=1))
    driver = planning.engine_driver()
    plan.compile(driver)
    pol = plan.deck_policy.astype(np.int32)
    games = Matchups(np.array([0]), pol[:1], np.array([1]), pol[1:2], np.array([0]),
                     first_deal=0, deals=1)
    with Evaluator(driver, threads=1) as ev:
        ev.play(Pool.of_plan(plan).with_yardstick(), games, 1)


def main() -> int:
    """The warm-up: what needs no engine (while the demo's first run compiles it); with
    ``--search`` then the search pilot's kernels too, which wait for the engine's (``make
    demo``: the yardstick checks play the search pilot)."""
    with tempfile.TemporaryDirectory(prefix="rnr-warmup-") as tmp:
        run_dir = Path(tmp) / "run"
        play_plain(run_dir, Path(tmp) / "plain-cache")
        compile_report_kernels(run_dir)
    compile_archive_kernels()
    load_matplotlib()
    if "--search" in sys.argv[1:]:
        compile_search_kernels()
    return 0


if __name__ == "__main__":
    sys.exit(main())
