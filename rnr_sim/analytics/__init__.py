"""Polars pipelines over a run dir: each metric a small function with its definition.

``load_run`` opens a run lazily; the metric modules (``decks``, ``matchups``, ``paths``,
``seats``, ``branches``, ``cards``, ``length``, ``lp``) each turn frames into small
tables; ``compute_metrics`` composes them all for the report.
"""

from rnr_sim.analytics.metrics import Metrics, compute_metrics
from rnr_sim.analytics.run import Run, load_run, seat_games

__all__ = ["Metrics", "Run", "compute_metrics", "load_run", "seat_games"]
