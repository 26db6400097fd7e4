"""Text for numbers: rates with intervals and counts, never "nan" or "None" on the page."""

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


def pp(x: Any, digits: int = 1) -> str:
    """A difference of proportions in signed percentage points, "+3.1 pp"; "—" if missing."""
    return EMPTY if missing(x) else f"{100.0 * x:+.{digits}f} pp"


def interval(lo: Any, hi: Any, digits: int = 1, signed: bool = False) -> str:
    """"[51.0–55.4]" in percent (or signed points); "" if either end is missing."""
    if missing(lo) or missing(hi):
        return ""
    f = f"{{:{'+' if signed else ''}.{digits}f}}"
    return "[" + f.format(100.0 * lo) + "–" + f.format(100.0 * hi) + "]"


def rate_text(value: Any, lo: Any, hi: Any, n: Any, digits: int = 1) -> str:
    """"53.2% [51.0–55.4] (n=1,234)", or "—  (n=0)" when there is nothing to rate."""
    if missing(value) or missing(n) or n == 0:
        return f"{EMPTY}  (n={count(n if not missing(n) else 0)})"
    iv = interval(lo, hi, digits)
    return f"{pct(value, digits)} {iv} (n={count(n)})".replace("  ", " ")


def diff_text(value: Any, lo: Any, hi: Any, n1: Any, n2: Any, digits: int = 1) -> str:
    """A difference of two rates over n1 and n2 games: "+3.1 pp [+1.0–+5.2] (n=1,234 vs
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
