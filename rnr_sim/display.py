"""Text for numbers: rates with intervals and counts, never "nan" or "None" on the page.

Shared by the report (``rnr_sim.report``), the comparison (``rnr_sim.compare``) and the
terminal, so it depends on nothing of theirs: neither package imports the other for it.
"""

from __future__ import annotations

import math
from typing import Any

EMPTY = "—"
PATH_LABELS = {
    "life": "Life",
    "attack": "Attack",
    "petition": "Petition",
    "deck_out": "Deck-out",
    "draw": "Draw",
}
BRANCH_LABELS = {
    "bison": "Bison",
    "eagle": "Eagle",
    "liberty_bell": "Liberty Bell",
    "scroll": "Scroll",
    "unknown": "Unknown",
}


def missing(x: Any) -> bool:
    """True for None and NaN (the values a report must never print)."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def count(n: Any) -> str:
    """A whole number with thousands separators; "—" if missing."""
    return EMPTY if missing(n) else f"{int(n):,}"


def pct(x: Any, digits: int = 1) -> str:
    """A proportion as a percentage, "53.2%"; "—" if missing."""
    return EMPTY if missing(x) else f"{100.0 * x:.{digits}f}%"


def _points(x: float, digits: int, signed: bool) -> str:
    """100x with ``digits`` decimals; a value that rounds to zero prints without a minus."""
    v = 100.0 * x
    if round(v, digits) == 0:
        v = 0.0
    return f"{v:{'+' if signed else ''}.{digits}f}"


def pp(x: Any, digits: int = 1) -> str:
    """A difference of proportions in signed percentage points, "+3.1 pp"; "—" if missing."""
    return EMPTY if missing(x) else f"{_points(x, digits, True)} pp"


def interval(lo: Any, hi: Any, digits: int = 1, signed: bool = False) -> str:
    """"[51.0, 55.4]" in percent, or in signed points "[-26.4, -24.1]" (a comma between
    the ends, so that a minus sign never reads as a dash); "" if either end is missing."""
    if missing(lo) or missing(hi):
        return ""
    return f"[{_points(lo, digits, signed)}, {_points(hi, digits, signed)}]"


def rate_text(value: Any, lo: Any, hi: Any, n: Any, digits: int = 1) -> str:
    """"53.2% [51.0, 55.4] (n=1,234)", or "—  (n=0)" when there is nothing to rate."""
    if missing(value) or missing(n) or n == 0:
        return f"{EMPTY}  (n={count(n if not missing(n) else 0)})"
    iv = interval(lo, hi, digits)
    return f"{pct(value, digits)} {iv} (n={count(n)})".replace("  ", " ")


def diff_text(value: Any, lo: Any, hi: Any, n1: Any, n2: Any, digits: int = 1) -> str:
    """A difference of two rates over n1 and n2 games: "+3.1 pp [+1.0, +5.2] (n=1,234 vs
    567)", or "—  (n=0 vs 567)" when either side has no games."""
    ns = f"n={count(n1 or 0)} vs {count(n2 or 0)}"
    if missing(value) or not n1 or not n2:
        return f"{EMPTY}  ({ns})"
    return f"{pp(value, digits)} {interval(lo, hi, digits, signed=True)} ({ns})"


def p_text(p: Any) -> str:
    """A p-value: "p < 0.001", "p = 0.034"; "—" if missing."""
    if missing(p):
        return EMPTY
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def num(x: Any, digits: int = 1) -> str:
    """A plain number; whole numbers without decimals; "—" if missing."""
    if missing(x):
        return EMPTY
    if abs(x - round(x)) < 1e-9:
        return f"{round(x):,}"
    return f"{x:,.{digits}f}"


def path_label(p: str) -> str:
    return PATH_LABELS.get(p, p)


def branch_label(b: Any) -> str:
    return EMPTY if missing(b) else BRANCH_LABELS.get(str(b), str(b))


def format_table(header: list[str], rows: list[list[str]], right: set[int] | frozenset[int]
                 = frozenset()) -> list[str]:
    """Plain-text columns, two spaces apart; columns in ``right`` are right-aligned."""
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if k in right else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]
