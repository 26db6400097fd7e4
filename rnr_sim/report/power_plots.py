"""The Card power page's figure (``report/power.py``), drawn with the report's helpers
(``report.plots``: an Agg canvas a figure, labels placed clear of each other).

- pool: each card's gain in its best host (y, with its 95% interval) against its cost
  (x), one panel an Order on one y scale; flagged cards in the flag's colour and
  labelled, the most extreme first, as many as fit; cards no field deck plays hollow.
- doctor: what each card of the deck is worth to it (its loss when cut), least first.

Either is the page's ``plots/power.png``: the file the "Card power" links of the other
pages wait for (``report.links``).
"""

from __future__ import annotations

from itertools import chain, zip_longest

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from rnr_sim.enums import CARD_TYPES
from rnr_sim.report.plots import FLAG_COLORS, _figure, _fit, _label_points, _short

#: A flag's colour: the run report's over- and under-performers' colours.
COLORS = {"too strong": FLAG_COLORS["over"], "too weak": FLAG_COLORS["under"],
          "": FLAG_COLORS[""]}
#: Labels a panel at most (flagged cards, the largest edge first).
MAX_LABELS = 6


def _pp(ax, axis: str = "y") -> None:
    getattr(ax, f"{axis}axis").set_major_formatter(lambda v, _: f"{100 * v:+.0f} pp")


def _jitter(card: pl.Series) -> np.ndarray:
    """A small fixed offset a card (by its name), so that cards of one cost spread out
    the same way on every run."""
    h = np.array([sum(map(ord, c)) % 97 for c in card.to_list()], dtype=float)
    return (h / 96.0 - 0.5) * 0.5


def _to_label(sub: pl.DataFrame) -> list[tuple[float, float, str]]:
    """A panel's flagged cards to label, in the order they get a place: the largest
    edges of each flag in turn, so that a few too weak cards are named beside many too
    strong ones."""
    ways = [sub.filter(pl.col("flag") == f).sort([pl.col("edge").abs(), "card"],
                                                   descending=[True, False], nulls_last=True)
            .head(MAX_LABELS).rows(named=True) for f in ("too strong", "too weak")]
    turns = [r for r in chain.from_iterable(zip_longest(*ways)) if r is not None]
    return [(r["x"], r["gain"], _short(r["card"], 24)) for r in turns[:MAX_LABELS]]


def gain_by_cost(power: pl.DataFrame) -> Figure | None:
    """The pool's figure (module docstring); None when no card has a gain."""
    df = power.filter(pl.col("gain").is_not_null())
    if df.height == 0:
        return None
    orders = [t for t in CARD_TYPES if t in set(df["order"])] + sorted(
        set(df["order"]) - set(CARD_TYPES))
    cols = min(4, len(orders))
    rows = -(-len(orders) // cols)
    fig = _figure(2.9 * cols + 0.6, 2.7 * rows + 0.7)
    _fit(fig, 0.75, 0.15, 0.45, 0.65, wspace=0.08, hspace=0.38)
    lo, hi = float(df["gain_lo"].min()), float(df["gain_hi"].max())
    pad = 0.08 * max(hi - lo, 1e-3)
    axes = []
    for i, order in enumerate(orders):
        ax = fig.add_subplot(rows, cols, i + 1, sharey=axes[0] if axes else None)
        axes.append(ax)
        sub = df.filter(pl.col("order") == order)
        x = sub["cost"].to_numpy().astype(float) + _jitter(sub["card"])
        y = sub["gain"].to_numpy()
        ax.vlines(x, sub["gain_lo"].to_numpy(), sub["gain_hi"].to_numpy(), color="#bbb",
                  lw=0.6, zorder=1)
        for flag in ("", "too weak", "too strong"):
            for played in (True, False):
                k = ((sub["flag"] == flag) & ((sub["in_field"] > 0) == played)).to_numpy()
                if k.any():
                    ax.scatter(x[k], y[k], s=14 if flag == "" else 26, zorder=2,
                               facecolors=COLORS[flag] if played else "none",
                               edgecolors=COLORS[flag], linewidths=0.9,
                               alpha=0.55 if flag == "" else 0.95)
        ax.axhline(0, color="#333", lw=0.7, zorder=0)
        costs = sub["cost"].to_numpy()
        ax.set_xlim(costs.min() - 0.6, costs.max() + 0.6)
        ax.set_xticks(range(int(costs.min()), int(costs.max()) + 1))
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_title(f"{order} ({sub.height})", fontsize=9)
        ax.tick_params(labelsize=7)
        if i % cols == 0:
            _pp(ax)
            ax.set_ylabel("gain in its best host", fontsize=8)
        else:
            ax.tick_params(labelleft=False)
        if i >= len(orders) - cols:
            ax.set_xlabel("cost", fontsize=8)
        _label_points(ax, _to_label(sub.with_columns(pl.Series("x", x))), size=6.5,
                      obstacles=list(zip(x.tolist(), y.tolist(), strict=True)))
    fig.suptitle("Gain of each card in the host where it serves best, by cost (filled: in a "
                 "field deck; hollow: in none; green: too strong, red: too weak)", fontsize=9)
    return fig


def worth_bars(cuts: pl.DataFrame, deck: str) -> Figure | None:
    """The doctor's figure: each card's worth to ``deck`` with its interval, least first."""
    df = cuts.filter(pl.col("worth").is_not_null())
    if df.height == 0:
        return None
    fig = _figure(7.5, 0.22 * df.height + 1.0)
    labels = [f"{r['copies']} {_short(r['card'], 30)}" for r in df.iter_rows(named=True)]
    _fit(fig, 2.4, 0.2, 0.5, 0.3)
    ax = fig.add_subplot()
    y = np.arange(df.height)
    w = df["worth"].to_numpy()
    side = np.where(df["worth_hi"].to_numpy() < 0, "under",  # the deck wins more without it
                    np.where(df["worth_lo"].to_numpy() > 0, "over", ""))
    ax.barh(y, w, color=[FLAG_COLORS[s] for s in side], alpha=0.85, height=0.7)
    ax.errorbar(w, y, xerr=[w - df["worth_lo"].to_numpy(), df["worth_hi"].to_numpy() - w],
                fmt="none", ecolor="#333", lw=0.7, capsize=2)
    ax.axvline(0, color="#333", lw=0.7)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    _pp(ax, "x")
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel(f"what the card is worth to {deck} (its loss when cut)", fontsize=8)
    return fig
