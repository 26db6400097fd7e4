"""Text for numbers in the report: the shared formatting of ``rnr_sim.display``."""

from __future__ import annotations

from rnr_sim.display import (
    BRANCH_LABELS,
    EMPTY,
    PATH_LABELS,
    branch_label,
    count,
    diff_text,
    format_table,
    interval,
    missing,
    num,
    p_text,
    path_label,
    pct,
    pp,
    rate_text,
)

__all__ = ["BRANCH_LABELS", "EMPTY", "PATH_LABELS", "branch_label", "count", "diff_text",
           "format_table", "interval", "missing", "num", "p_text", "path_label", "pct",
           "pp", "rate_text"]
