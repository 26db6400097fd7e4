"""The balance report: plots (matplotlib) and the HTML/Markdown/CSV report of a run."""

from rnr_sim.report.build import build_report

__all__ = ["build_report"]
