"""Checking a change: a card patch and/or a rules variant against the baseline, played on
the same deals (common random numbers) and analysed in pairs.

Public API::

    CompareOptions, run_compare(options) -> CompareResult    play both runs (rnr-sim compare)
    compare_runs(baseline_dir, variant_dir) -> Paired         the paired analysis of two runs
    format_compare, summary_json                              terminal text, --json
"""

from rnr_sim.compare.paired import Paired, compare_runs
from rnr_sim.compare.runs import (
    CompareOptions,
    CompareResult,
    Interrupted,
    run_compare,
    stopping_rule,
)
from rnr_sim.compare.text import format_compare, summary_json

__all__ = [
    "CompareOptions",
    "CompareResult",
    "Interrupted",
    "Paired",
    "compare_runs",
    "format_compare",
    "run_compare",
    "stopping_rule",
    "summary_json",
]
