"""The report's figures: drawn in this process, or in a second one while the run is read.

Drawing the figures is a second or so of matplotlib work and imports, the same at any
size of run. The ``report`` command hands it to a second process (``FigureProcess``,
started with the report), which imports matplotlib and draws the figures the first
pass's tables give while this process reads the run a second time; the card figure
follows once the cards are folded. Anything that stops that process (or a caller
without a ``__main__`` guard, which a spawned process needs) and the figures are drawn
here instead: the same bytes either way.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

#: The figures, in the page's order.
FIGURES = ("matchups", "paths", "seats", "branches", "cards", "length", "lp")
#: What the figures read of the metrics (``analytics.Metrics``).
FIGURE_TABLES = ("matchups", "deck_order", "paths_by_deck", "seats", "branch_matchups",
                 "branch_order", "cards", "length_hist", "lp", "players")


@dataclass
class Image:
    name: str
    data: bytes
    fmt: str
    alt: str

    def tag(self) -> str:
        mime = "image/png" if self.fmt == "png" else "image/svg+xml"
        b64 = base64.b64encode(self.data).decode("ascii")
        return f'<img alt="{html.escape(str(self.alt), quote=True)}" src="data:{mime};base64,{b64}">'


def make_images(m: Any, fmt: str, keys: tuple[str, ...] = FIGURES) -> dict[str, Image]:
    """The figures ``keys`` of metrics ``m`` (those that have something to draw)."""
    from rnr_sim.report import plots

    fair = 1.0 / m.players
    figs = {
        "matchups": (lambda: plots.heatmap_plot(m.matchups, m.deck_order,
                                                "row deck's win rate against column deck",
                                                fair=fair),
                     "matchup win-rate heatmap"),
        "paths": (lambda: plots.path_bars_plot(m.paths_by_deck, m.deck_order),
                  "victory paths per deck"),
        "seats": (lambda: plots.seat_plot(m.seats), "first-seat win rate"),
        "branches": (lambda: plots.branch_heatmap_plot(m.branch_matchups, m.branch_order,
                                                       fair=fair),
                     "branch against branch win rates"),
        "cards": (lambda: plots.card_scatter_plot(m.cards, band=m.card_band),
                  "card play rate against the card metric"),
        "length": (lambda: plots.length_plot(m.length_hist), "game length by path"),
        "lp": (lambda: plots.lp_plot(m.lp) if m.lp is not None else None, "LP over turns"),
    }
    out = {}
    for k in keys:
        draw, alt = figs[k]
        f = draw()
        if f is not None:
            out[k] = Image(k, plots.render(f, fmt), fmt, alt)
    return out


def _draw(tables: dict[str, Any], fmt: str, keys: tuple[str, ...]) -> dict[str, Image]:
    """``make_images`` in the second process, from the tables it reads."""
    return make_images(SimpleNamespace(**tables), fmt, keys)


def _ready() -> bool:
    import rnr_sim.report.plots  # noqa: F401 (matplotlib, while the run is read)

    return True


class FigureProcess:
    """A second process that draws figures (``draw``, then ``images``)."""

    def __init__(self) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # spawn: a fork of a process running polars' thread pool can deadlock
        self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        self.ready = self.pool.submit(_ready)
        self.jobs: list[tuple[Any, Any, str, tuple[str, ...]]] = []

    def draw(self, m: Any, fmt: str, keys: tuple[str, ...]) -> None:
        tables = {k: getattr(m, k) for k in FIGURE_TABLES}
        try:
            job = self.pool.submit(_draw, tables, fmt, keys)
        except Exception:  # a broken pool: drawn here in images()
            job = None
        self.jobs.append((job, m, fmt, keys))

    def images(self) -> dict[str, Image]:
        """Every figure asked for, from the second process or, failing it, drawn here."""
        out: dict[str, Image] = {}
        for job, m, fmt, keys in self.jobs:
            try:
                out.update(job.result() if job is not None else make_images(m, fmt, keys))
            except Exception:  # the process stopped, or cannot be started here
                out.update(make_images(m, fmt, keys))
        self.pool.shutdown(wait=True, cancel_futures=True)
        return out
