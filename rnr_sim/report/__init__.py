"""The balance report: plots (matplotlib) and the HTML/Markdown/CSV report of a run."""

__all__ = ["build_report"]


def __getattr__(name: str):
    # imported on first use, so that a process drawing the figures (report.figures)
    # does not load the analysis
    if name == "build_report":
        from rnr_sim.report.build import build_report

        return build_report
    raise AttributeError(name)
