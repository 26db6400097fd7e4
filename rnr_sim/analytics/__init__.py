"""Polars pipelines over a run dir: each metric a small function with its definition.

``load_run`` opens a run lazily; the metric modules (``decks``, ``matchups``, ``paths``,
``seats``, ``branches``, ``cards``, ``length``, ``lp``) each turn frames into small
tables; ``compute_metrics`` composes them all for the report (reading the run part by
part, ``fold``). The names below load on first use, so that a module that needs one
metric module (the figures' process) does not load the whole analysis.
"""

from importlib import import_module

__all__ = ["Metrics", "Run", "compute_metrics", "load_run", "seat_games"]
_HOMES = {"Metrics": "metrics", "compute_metrics": "metrics", "Run": "run",
          "load_run": "run", "seat_games": "run"}


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(import_module(f"rnr_sim.analytics.{_HOMES[name]}"), name)
    raise AttributeError(name)
