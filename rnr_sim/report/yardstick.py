"""The run report's lines for the yardstick check (``rnr_sim.yardstick``): above the
verdict, a banner when a verdict flips with a stronger pilot in every seat; below it, one
line a verdict checked, those that flip first."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from rnr_sim import yardstick as ys

TITLE = "With a stronger pilot in every seat"


def banner_html(checks: list[ys.Check] | None) -> str:
    """The alert above the verdict when a verdict flips (else nothing)."""
    if not checks or not any(c.holds == ys.NO for c in checks):
        return ""
    return f'<div class="banner" role="alert"><p>{escape(ys.summary_sentence(checks))}</p></div>'


def block_html(checks: list[ys.Check] | None, place: dict[str, Any] | None) -> str:
    """The checks below the verdict (nothing without yardstick games)."""
    if checks is None or place is None:
        return ""
    if not checks:
        body = "<p>No deck or card of this verdict is significant: nothing to check.</p>"
    else:
        body = (f'<p class="lead">{escape(ys.summary_sentence(checks))}</p><ul>'
                + "".join(f"<li>{escape(line)}</li>" for line in ys.check_lines(checks))
                + "</ul>")
    return (f'<div class="yardstick"><h3>{escape(TITLE)}</h3>{body}'
            f'<p class="note">{escape(ys.run_note(place))} Also yardstick.csv.</p></div>')


def markdown(checks: list[ys.Check] | None, place: dict[str, Any] | None,
             md: Callable[[str], str]) -> list[str]:
    """The same as Markdown lines, each text escaped by ``md`` (nothing without yardstick
    games)."""
    if checks is None or place is None:
        return []
    out = [f"### {TITLE}", ""]
    if not checks:
        out += ["No deck or card of this verdict is significant: nothing to check.", ""]
    else:
        out += [md(ys.summary_sentence(checks)), ""]
        out += [f"- {md(line)}" for line in ys.check_lines(checks)] + [""]
    return out + [f"_{md(ys.run_note(place))} Also yardstick.csv._", ""]


def banner_markdown(checks: list[ys.Check] | None, md: Callable[[str], str]) -> list[str]:
    """The read-first line above the verdict when a verdict flips (else nothing)."""
    if not checks or not any(c.holds == ys.NO for c in checks):
        return []
    return [f"> **Read first:** {md(ys.summary_sentence(checks))}", ""]
