"""The report's figures (matplotlib, no pyplot: each figure owns an Agg canvas).

Each ``*_plot`` function takes metric tables and returns a ``Figure`` (or None when
there is nothing to draw); ``render`` turns a figure into PNG (default) or SVG bytes.
"""

from __future__ import annotations

import io
import math

import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure

from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.analytics.length import MINUTES_PER_TURN, RULEBOOK_MINUTES
from rnr_sim.display import branch_label, path_label

PATH_COLORS = {
    "life": "#c0392b",
    "attack": "#d68910",
    "petition": "#2471a3",
    "deck_out": "#7d3c98",
    "draw": "#95a5a6",
}
FLAG_COLORS = {"over": "#1e8449", "under": "#c0392b", "": "#7f8c8d"}
DPI = 110


def _figure(w: float, h: float) -> Figure:
    # margins are set by hand (``_fit``): a layout engine costs a second text layout pass,
    # about a third of the report's drawing time
    fig = Figure(figsize=(w, h), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _fit(fig: Figure, left: float, right: float, bottom: float, top: float, **kw) -> None:
    """Margins in inches."""
    w, h = fig.get_size_inches()
    fig.subplots_adjust(left=min(0.6, left / w), right=1 - right / w,
                        bottom=min(0.6, bottom / h), top=1 - top / h, **kw)


def _text_width(labels: list[str], size: float) -> float:
    """Rough width in inches of the longest label at font ``size`` (points)."""
    return max((len(s) for s in labels), default=0) * size * 0.58 / 72.0


def render(fig: Figure, fmt: str = "png") -> bytes:
    """The figure as PNG or SVG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=DPI, metadata={"Software": None} if fmt == "png" else None)
    return buf.getvalue()


def _short(name: str, width: int = 22) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def win_rate_norm(values: np.ndarray, fair: float) -> TwoSlopeNorm:
    """A colour scale for win rates centred on the fair share ``fair`` (1/P: 50% with two
    players, 33% with three, 25% with four): white means fair, blue above, red below.
    Both sides reach the largest distance from fair in ``values`` (at least 5 points),
    clipped to [0, 1]."""
    finite = values[np.isfinite(values)]
    spread = float(np.max(np.abs(finite - fair))) if finite.size else 0.1
    spread = max(0.05, spread) * (1 + 1e-9)  # the extreme cell inside the scale
    lo = max(0.0, fair - spread)
    hi = min(1.0, fair + spread)
    return TwoSlopeNorm(vcenter=fair, vmin=min(lo, fair - 1e-6), vmax=max(hi, fair + 1e-6))


def heatmap_plot(matrix: pl.DataFrame, keys: list[str], title: str,
                 label=lambda k: k, fair: float = 0.5) -> Figure | None:
    """Row key's win rate against column key; each cell shows the rate and its interval.
    The colour scale is centred on ``fair``, the fair share 1/P of the run's players."""
    k = len(keys)
    if k == 0:
        return None
    idx = {key: i for i, key in enumerate(keys)}
    wr = np.full((k, k), np.nan)
    text = [["" for _ in range(k)] for _ in range(k)]
    for r in matrix.iter_rows(named=True):
        if r["row"] not in idx or r["col"] not in idx:
            continue
        i, j = idx[r["row"]], idx[r["col"]]
        if r["mirror"]:
            # a diagonal cell is a mirror only when the run played one (--mirrors)
            text[i][j] = f"mirror\nn={r['games']:,}" if r["games"] else "not\nplayed"
        elif r["win_rate"] is None:
            text[i][j] = "n=0"
        else:
            wr[i, j] = r["win_rate"]
            d = 1 if k <= 10 else 0
            text[i][j] = (f"{100 * r['win_rate']:.{d}f}%\n"
                          f"[{100 * r['win_rate_lo']:.{d}f}, {100 * r['win_rate_hi']:.{d}f}]")
    size = max(5.0, min(9.0, 60.0 / max(k, 1)))
    names = [_short(label(x), 28) for x in keys]
    label_w = _text_width(names, size + 1)
    side = max(3.0, 0.8 * k)
    fig = _figure(side + label_w + 1.9, side + label_w * 0.65 + 0.9)
    _fit(fig, label_w + 0.2, 1.5, label_w * 0.65 + 0.55, 0.35)
    ax = fig.add_subplot()
    norm = win_rate_norm(wr, fair)
    img = ax.imshow(np.ma.masked_invalid(wr), cmap="RdBu", norm=norm)
    ax.set_facecolor("#eeeeee")
    for i in range(k):
        for j in range(k):
            v = wr[i, j]
            dark = np.isfinite(v) and abs(float(norm(v)) - 0.5) > 0.3
            ax.text(j, i, text[i][j], ha="center", va="center", fontsize=size,
                    color="white" if dark else "#222222")
    ax.set_xticks(range(k), names, rotation=40, ha="right", rotation_mode="anchor",
                  fontsize=size + 1)
    ax.set_yticks(range(k), names, fontsize=size + 1)
    ax.set_xlabel("opponent")
    ax.set_title(title, fontsize=10)
    cax = fig.add_axes((1 - 1.2 / fig.get_size_inches()[0], 0.25, 0.12 / fig.get_size_inches()[0],
                        0.5))
    bar = fig.colorbar(img, cax=cax)
    bar.set_label(f"row's win rate (white: fair share {100 * fair:.0f}%)", fontsize=8)
    bar.ax.yaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    bar.ax.tick_params(labelsize=7)
    return fig


def path_bars_plot(paths_by_deck: pl.DataFrame, order: list[str]) -> Figure | None:
    """Stacked horizontal bars: each deck's wins split by victory path."""
    rows = {r["group"]: r for r in paths_by_deck.iter_rows(named=True)}
    decks = [d for d in order if d in rows] or list(rows)
    if not decks:
        return None
    fig = _figure(7.5, max(2.2, 0.42 * len(decks) + 1.3))
    _fit(fig, _text_width([_short(d, 28) for d in decks], 8) + 0.2, 0.2, 0.5, 0.45)
    ax = fig.add_subplot()
    y = np.arange(len(decks))
    path_share_bars(ax, y, [np.array([rows[d][f"share_{p}"] or 0.0 for d in decks])
                            for p in WIN_PATHS], 0.07, 7)
    for yi, d in enumerate(decks):
        if rows[d]["wins"] == 0:
            ax.text(0.01, yi, "no wins (n=0)", va="center", fontsize=7)
    ax.axvline(0.25, color="#333", lw=0.6, ls=":")
    ax.axvline(0.5, color="#333", lw=0.6, ls=":")
    ax.axvline(0.75, color="#333", lw=0.6, ls=":")
    path_share_axes(ax, y, [_short(d, 28) for d in decks], 8,
                    "share of the deck's wins (dotted: quarters, the Art. III reference only)")
    return fig


def path_share_bars(ax, y: np.ndarray, shares: list[np.ndarray], min_label: float,
                    fontsize: float, **bar) -> None:
    """Stacked horizontal bars at ``y``: each row's shares by victory path (``shares`` in
    ``WIN_PATHS`` order), a share of at least ``min_label`` written on its bar."""
    left = np.zeros(len(y))
    for p, share in zip(WIN_PATHS, shares, strict=True):
        ax.barh(y, share, left=left, color=PATH_COLORS[p], label=path_label(p), **bar)
        for yi, (s, x0) in enumerate(zip(share, left, strict=True)):
            if s >= min_label:
                ax.text(x0 + s / 2, y[yi], f"{100 * s:.0f}%", ha="center", va="center",
                        fontsize=fontsize, color="white")
        left += share


def path_share_axes(ax, y: np.ndarray, labels: list[str], fontsize: float,
                    xlabel: str) -> None:
    """The axes of ``path_share_bars``: the rows' labels top down, shares in %, the
    paths' legend above."""
    ax.set_yticks(y, labels, fontsize=fontsize)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_xlabel(xlabel)
    ax.legend(ncols=4, fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)


def seat_plot(seats: pl.DataFrame) -> Figure | None:
    """First-seat win rate by scope, drawn as its distance from the fair rate, with its 95%
    interval (per deal: the deal is the unit) as error bars; each bar is labelled with the rate itself."""
    rows = [r for r in seats.iter_rows(named=True) if r["games"] > 0]
    if not rows:
        return None
    labels = {("all", "any"): "all games", ("all", "used"): "P2 right used",
              ("all", "declined"): "P2 right not used", ("mirror", "any"): "mirrors",
              ("mirror", "used"): "mirrors,\nP2 used", ("mirror", "declined"): "mirrors,\nP2 not used"}
    multi = len({r["n_players"] for r in rows}) > 1
    names = [labels[(r["scope"], r["p2"])] + (f"\n{r['n_players']}p" if multi else "")
             for r in rows]
    fair = np.array([r["fair"] for r in rows])
    v = np.array([r["first_win_rate"] for r in rows]) - fair
    lo = np.array([r["first_win_rate_lo"] for r in rows]) - fair
    hi = np.array([r["first_win_rate_hi"] for r in rows]) - fair
    fig = _figure(7.0, 3.4)
    _fit(fig, 1.05, 0.2, 0.65 if multi else 0.5, 0.35)
    ax = fig.add_subplot()
    x = np.arange(len(rows))
    ax.bar(x, v, color=["#2471a3" if r["scope"] == "all" else "#85c1e9" for r in rows])
    # an interval that does not hold its point estimate (a ratio estimator's, far from 0.5)
    # draws no negative bar
    ax.errorbar(x, v, yerr=[np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)], fmt="none",
                ecolor="#222", capsize=4, lw=1)
    ax.axhline(0, color="#c0392b", lw=1)
    span = max(0.01, float(np.nanmax(np.abs(np.concatenate([lo, hi])))))
    ax.set_ylim(-1.25 * span, 1.45 * span)
    for xi, r, top in zip(x, rows, hi, strict=True):
        ax.text(xi, top + 0.04 * span if top >= 0 else 0.04 * span,
                f"{100 * r['first_win_rate']:.1f}%\nn={r['games']:,}", ha="center",
                va="bottom", fontsize=7)
    ax.set_xticks(x, names, fontsize=8)
    ax.yaxis.set_major_formatter(lambda val, _: f"{100 * val:+.0f} pp" if span > 0.05
                                 else f"{100 * val:+.1f} pp")
    ax.set_ylabel("first seat's win rate\nminus fair")
    ax.set_title(f"0 = fair ({', '.join(f'{f:.0%}' for f in sorted(set(fair)))}): seat order "
                 "does not matter", fontsize=9)
    return fig


def length_plot(hist: pl.DataFrame) -> Figure | None:
    """Histogram of game length in turns, stacked by how the game ended."""
    if hist.height == 0:
        return None
    turns = hist["turns"].to_numpy()
    counts = hist["games"].to_numpy()
    order = np.argsort(turns)
    cum = np.cumsum(counts[order]) / counts.sum()
    cap = int(turns[order][min(np.searchsorted(cum, 0.99), len(cum) - 1)])
    lo_t = int(turns.min())
    width = max(1, math.ceil((cap - lo_t + 1) / 60))
    edges = np.arange(lo_t, cap + width + 1, width)
    fig = _figure(7.5, 3.4)
    _fit(fig, 0.8, 0.2, 0.5, 0.4)
    ax = fig.add_subplot()
    bottom = np.zeros(len(edges) - 1)
    for p in (*WIN_PATHS, "draw"):
        sub = hist.filter(pl.col("path") == p)
        if sub.height == 0:
            continue
        t = np.minimum(sub["turns"].to_numpy(), edges[-2])
        h, _ = np.histogram(t, bins=edges, weights=sub["games"].to_numpy())
        ax.bar(edges[:-1], h, width=width, bottom=bottom, align="edge", color=PATH_COLORS[p],
               label=path_label(p))
        bottom += h
    lo_m, hi_m = RULEBOOK_MINUTES
    ax.axvspan(lo_m / MINUTES_PER_TURN, hi_m / MINUTES_PER_TURN, color="#f4d03f", alpha=0.3,
               lw=0, zorder=0, label=f"{lo_m:.0f}–{hi_m:.0f} min (at {MINUTES_PER_TURN:g} min/turn)")
    ax.yaxis.set_major_formatter(lambda val, _: f"{val:,.0f}")
    ax.set_xlabel(f"turns, all seats (last bar: {edges[-2]}+)" if turns.max() > edges[-2]
                  else "turns, all seats")
    ax.set_ylabel("games")
    ax.legend(fontsize=7, ncols=6, frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return fig


def card_metric_column(cards: pl.DataFrame) -> tuple[str, str]:
    """The card metric the figures and the flags use: the game-length-adjusted IWD when the
    cards table has it, else the raw IWD; (column, axis label)."""
    if "iwd_adjusted" in cards.columns:
        return "iwd_adjusted", "IWD adjusted for deck and game length"
    return "iwd", "IWD (GIH WR − GNS WR)"


def card_scatter_plot(cards: pl.DataFrame, max_labels: int = 14,
                      band: float = 0.0) -> Figure | None:
    """Play rate (x) against IWD (y: the adjusted IWD when present); the flagged cards
    (the report's flag rule) are labelled, the largest first, as many as fit without
    overlap; ``band`` > 0 shades the no-effect band ``±band`` the flags are clear of."""
    col, ylabel = card_metric_column(cards)
    df = cards.filter(pl.col(col).is_not_null() & pl.col("play_rate").is_not_null())
    if df.height == 0:
        return None
    fig = _figure(7.5, 4.6)
    _fit(fig, 0.85, 0.2, 0.5, 0.15)
    ax = fig.add_subplot()
    if band > 0:
        ax.axhspan(-band, band, color="#bbb", alpha=0.35, lw=0,
                   label=f"no-effect band ±{100 * band:.1f} pp")
    for flag, label in (("", "not flagged"), ("over", "over-performs"),
                        ("under", "under-performs")):
        sub = df.filter(pl.col("flag") == flag)
        if sub.height:
            ax.scatter(sub["play_rate"], sub[col], s=18 if flag == "" else 30,
                       color=FLAG_COLORS[flag], alpha=0.6 if flag == "" else 0.9, label=label)
    ax.axhline(0, color="#333", lw=0.7)
    y = df[col].to_numpy()
    pad = 0.12 * max(1e-3, float(y.max() - y.min()))
    ax.set_ylim(float(y.min()) - pad, float(y.max()) + pad)
    ax.set_xlim(0, min(1.0, float(df["play_rate"].max()) + 0.05))
    ax.set_xlabel("play rate (games played / games the deck held it)")
    ax.set_ylabel(ylabel, fontsize=9)
    ax.yaxis.set_major_formatter(  # ticks at 2.5 pp steps keep their half point
        lambda v, _: f"{100 * v:+.{0 if abs(100 * v - round(100 * v)) < 1e-6 else 1}f} pp")
    ax.xaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    legend = ax.legend(fontsize=7, frameon=True, framealpha=0.9, loc="upper left")
    flagged = df.filter(pl.col("flag") != "").sort(
        [pl.col(col).abs(), "card"], descending=[True, False])
    _label_points(ax, [(r["play_rate"], r[col], _short(r["card"], 30))
                       for r in flagged.head(max_labels).iter_rows(named=True)],
                  avoid=[legend],
                  obstacles=list(zip(df["play_rate"].to_list(), y.tolist(), strict=True)))
    return fig


def _label_points(ax, points: list[tuple[float, float, str]], size: float = 7.0,
                  avoid: list | None = None,
                  obstacles: list[tuple[float, float]] | None = None) -> list[str]:
    """Label points so that no label overlaps another label, a point (the labelled ones
    and ``obstacles``), the ``avoid`` artists (a legend) or the axes' edge: each label
    takes the first free spot of a ring around its point, measured on the rendered text; a
    label with no free spot is left out. Returns the labels drawn."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    taken = [a.get_window_extent(renderer) for a in (avoid or [])]
    marks = [ax.transData.transform((x, y)) for x, y, _ in points]
    marks += [ax.transData.transform(xy) for xy in obstacles or []]
    r = 3.0  # a marker's radius in pixels, about
    dots = [(mx - r, my - r, mx + r, my + r) for mx, my in marks]
    offsets = [(dx, dy) for dist in (5, 14, 26) for dx, dy in (
        (dist, 2), (-dist, 2), (dist, -dist), (-dist, -dist), (0, dist), (0, -dist - 6),
        (dist, dist), (-dist, dist))]
    drawn: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []
    leaders: list[np.ndarray] = []  # points along each leader line drawn, in pixels

    def hits(o, pts: np.ndarray) -> bool:
        return bool(((pts[:, 0] > o[0]) & (pts[:, 0] < o[2]) & (pts[:, 1] > o[1])
                     & (pts[:, 1] < o[3])).any())

    def free(b, leader: np.ndarray | None) -> bool:
        if b.x0 < frame.x0 + 2 or b.x1 > frame.x1 - 2 or b.y0 < frame.y0 + 2 or \
                b.y1 > frame.y1 - 2:
            return False
        box = (b.x0, b.y0, b.x1, b.y1)
        for o in boxes + dots:
            if b.x0 < o[2] and o[0] < b.x1 and b.y0 < o[3] and o[1] < b.y1:
                return False
        if any(hits(box, pts) for pts in leaders):  # no label over another's leader
            return False
        if leader is not None and any(hits(o, leader) for o in boxes):
            return False  # nor a leader through another label
        return not any(b.overlaps(t) for t in taken)

    for x, y, label in points:
        placed = None
        px, py = ax.transData.transform((x, y))
        for dx, dy in offsets:
            ha = "left" if dx > 0 else "right" if dx < 0 else "center"
            note = ax.annotate(label, (x, y), fontsize=size, xytext=(dx, dy),
                               textcoords="offset points", ha=ha, va="bottom" if dy >= 0
                               else "top")
            b = note.get_window_extent(renderer).expanded(1.04, 1.1)
            leader = None
            if abs(dx) > 6 or abs(dy) > 6:
                k = fig.dpi / 72.0
                t = np.linspace(0.15, 0.95, 12)[:, None]
                leader = np.array([px, py]) + t * np.array([dx * k, dy * k])
            if free(b, leader):
                placed = (note, b, dx, dy)
                if leader is not None:
                    leaders.append(leader)
                break
            note.remove()
        if placed is None:
            continue
        note, b, dx, dy = placed
        if abs(dx) > 6 or abs(dy) > 6:  # far from its point: draw a leader line
            note.remove()
            note = ax.annotate(label, (x, y), fontsize=size, xytext=(dx, dy),
                               textcoords="offset points",
                               ha="left" if dx > 0 else "right" if dx < 0 else "center",
                               va="bottom" if dy >= 0 else "top",
                               arrowprops={"arrowstyle": "-", "lw": 0.4, "color": "#888",
                                           "shrinkA": 0, "shrinkB": 3})
        boxes.append((b.x0, b.y0, b.x1, b.y1))
        drawn.append(label)
    return drawn


def lp_plot(bands: pl.DataFrame, max_panels: int = 12) -> Figure | None:
    """Median LP over turns with the 10-90% band, one panel per matchup, a line per deck."""
    if bands is None or bands.height == 0:
        return None
    sizes = bands.group_by("matchup").agg(pl.col("games").max()).sort(
        ["games", "matchup"], descending=[True, False])
    matchups = sizes["matchup"].head(max_panels).to_list()
    cols = min(3, len(matchups))
    rows = math.ceil(len(matchups) / cols)
    fig = _figure(3.2 * cols + 0.5, 2.5 * rows + 0.4)
    _fit(fig, 0.75, 0.15, 0.55, 0.3, hspace=0.45, wspace=0.08)
    axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
    colors = ["#2471a3", "#c0392b", "#1e8449", "#7d3c98"]
    for n, m in enumerate(matchups):
        ax = axes[n // cols][n % cols]
        sub = bands.filter(pl.col("matchup") == m)
        # stop where fewer than a tenth of the traced games are still running
        sub = sub.filter(pl.col("games") >= max(3, 0.1 * sub["games"].max()))
        for c, deck in enumerate(sorted(set(sub["deck"].to_list()))):
            d = sub.filter(pl.col("deck") == deck).sort("turn")
            t = d["turn"].to_numpy()
            ax.fill_between(t, d["lp_p10"].to_numpy(), d["lp_p90"].to_numpy(),
                            color=colors[c % 4], alpha=0.18, lw=0)
            ax.plot(t, d["lp_median"].to_numpy(), color=colors[c % 4], lw=1.3,
                    label=_short(deck, 18))
        ax.set_title(_short(m, 40), fontsize=8)
        ax.legend(fontsize=6, frameon=False)
        ax.tick_params(labelsize=7)
    for n in range(len(matchups), rows * cols):
        axes[n // cols][n % cols].set_visible(False)
    fig.supxlabel("turn", fontsize=8)
    fig.supylabel("Liberty Points", fontsize=8)
    return fig


def branch_heatmap_plot(matrix: pl.DataFrame, keys: list[str],
                        fair: float = 0.5) -> Figure | None:
    return heatmap_plot(matrix, keys, "row branch's win rate against column branch",
                        label=branch_label, fair=fair)


SKILL_COLORS = {"random": "#95a5a6", "default": "#2471a3", "tuned": "#1e8449",
                "search": "#d68910"}


def skill_plot(skill: pl.DataFrame) -> Figure | None:
    """Per deck (the skill table's order), its win share against the field with each of
    its pilots, side by side, with 95% intervals (per deal: the deal is the unit) as error
    bars; the dashed line is 50%."""
    from rnr_sim.skill import PILOTS

    if skill is None or skill.is_empty():
        return None
    decks = list(dict.fromkeys(skill.sort("rank")["deck"].to_list()))
    present = [p for p in PILOTS if p in set(skill["pilot"])]
    present += sorted(set(skill["pilot"]) - set(present))
    by = {(r["deck"], r["pilot"]): r for r in skill.iter_rows(named=True)}
    names = [_short(d, 26) for d in decks]
    fig = _figure(7.6, 0.5 + 0.42 * len(decks) * max(1.0, len(present) / 3))
    _fit(fig, 0.3 + _text_width(names, 8), 0.2, 0.5, 0.35)
    ax = fig.add_subplot()
    y = np.arange(len(decks))[::-1].astype(float)
    h = 0.8 / len(present)
    for k, p in enumerate(present):
        rows = [by.get((d, p)) for d in decks]
        keep = [i for i, r in enumerate(rows) if r is not None and r["win_share"] is not None]
        if not keep:
            continue
        v = np.array([rows[i]["win_share"] for i in keep])
        lo = np.array([rows[i]["win_share_lo"] for i in keep], dtype=float)
        hi = np.array([rows[i]["win_share_hi"] for i in keep], dtype=float)
        yy = y[keep] + 0.4 - h * (k + 0.5)
        ax.barh(yy, v, height=h * 0.9, color=SKILL_COLORS.get(p, "#7f8c8d"), label=p)
        ax.errorbar(v, yy, xerr=[np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)],
                    fmt="none", ecolor="#222", capsize=2, lw=0.8)
    ax.axvline(0.5, color="#c0392b", lw=1, ls="--")
    ax.set_yticks(y, names, fontsize=8)
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(lambda val, _: f"{100 * val:.0f}%")
    ax.set_xlabel("win share against the field (a draw counts half)")
    ax.legend(fontsize=7, loc="lower right", title="pilot", title_fontsize=7)
    ax.set_title("each deck's win share with each of its pilots, on the same deals", fontsize=9)
    return fig
