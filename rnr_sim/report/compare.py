"""The compare report: reports/<name>/index.html for ``rnr-sim compare`` (self-contained:
inline CSS, figures as data URIs), with changes.csv and the figures beside it."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.compare.paired import CARD_METRICS, FEW_DEALS, Paired
from rnr_sim.compare.runs import CompareResult
from rnr_sim.compare.text import (
    PATH_EXPECTATION_NOTE,
    adjusted_lines,
    balance_line,
    change_text,
    design_line,
    level_text,
    metric_label,
    moved_line,
    path_expectation_table,
    score_note,
    stopping_line,
    vrf_line,
    vrf_text,
    what_changed,
)
from rnr_sim.display import EMPTY, count, path_label, pct
from rnr_sim.errors import InputError
from rnr_sim.report.build import CSS, Image, esc, html_table
from rnr_sim.report.plots import (
    PATH_COLORS,
    _figure,
    _fit,
    _short,
    _text_width,
    path_share_axes,
    path_share_bars,
    render,
)
from rnr_sim.report.tables import Table

BEFORE, AFTER = "#aab7b8", "#2471a3"
SIGNIFICANT_ROWS = 40
EXTRA_CSS = """
.change{background:#fff;border:1px solid #ddd;border-left:5px solid #1e8449;padding:8px 18px;
 margin:14px 0}.change li{margin:4px 0}
"""


# ---------------------------------------------------------------------------- figures


def deck_change_plot(decks: pl.DataFrame) -> Figure | None:
    """Each deck's win rate before (grey) and after (blue), the change written beside it
    (bold when significant after Benjamini-Hochberg)."""
    rows = [r for r in decks.sort("variant", descending=True, nulls_last=True)
            .iter_rows(named=True) if r["baseline"] is not None]
    if not rows:
        return None
    names = [_short(r["subject"], 28) for r in rows]
    fig = _figure(8.0, max(2.4, 0.55 * len(rows) + 1.2))
    _fit(fig, _text_width(names, 8) + 0.2, 2.1, 0.55, 0.45)
    ax = fig.add_subplot()
    y = np.arange(len(rows))
    h = 0.38
    ax.barh(y - h / 2, [r["baseline"] for r in rows], height=h, color=BEFORE, label="before")
    ax.barh(y + h / 2, [r["variant"] or 0.0 for r in rows], height=h, color=AFTER,
            label="after")
    for yi, r in zip(y, rows, strict=True):
        ax.text(1.01, yi, change_text(r), transform=ax.get_yaxis_transform(), va="center",
                fontsize=7.5, fontweight="bold" if r["significant"] else "normal")
    ax.axvline(0.5, color="#333", lw=0.7, ls=":")
    ax.set_yticks(y, names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_xlabel("win rate (dotted: 50%); beside each deck: the change [95% paired CI]")
    ax.legend(ncols=2, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0),
              frameon=False)
    return fig


def path_change_plot(paths: pl.DataFrame) -> Figure | None:
    """The share of all wins by each victory path, before and after."""
    rows = {r["metric"]: r for r in paths.iter_rows(named=True)}
    keys = [f"share_{p}" for p in WIN_PATHS if f"share_{p}" in rows]
    if not keys:
        return None
    fig = _figure(7.0, 3.4)
    _fit(fig, 0.8, 0.2, 0.5, 0.45)
    ax = fig.add_subplot()
    x = np.arange(len(keys))
    w = 0.38
    before = [rows[k]["baseline"] or 0.0 for k in keys]
    after = [rows[k]["variant"] or 0.0 for k in keys]
    ax.bar(x - w / 2, before, width=w, color=BEFORE)
    ax.bar(x + w / 2, after, width=w, color=[PATH_COLORS[k[6:]] for k in keys])
    top = max(before + after + [0.3])
    for xi, k in zip(x, keys, strict=True):
        r = rows[k]
        ax.text(xi, max(r["baseline"] or 0, r["variant"] or 0) + 0.02 * top, change_text(r),
                ha="center", va="bottom", fontsize=7,
                fontweight="bold" if r["significant"] else "normal")
    ax.axhline(0.25, color="#333", lw=0.6, ls=":")
    ax.set_xticks(x, [path_label(k[6:]) for k in keys])
    ax.set_ylim(0, top * 1.2)
    ax.yaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_ylabel("share of all wins")
    ax.set_title("grey: before; coloured: after (dotted: 25%, Art. III reference only)",
                 fontsize=8)
    return fig


def deck_paths_plot(paths: pl.DataFrame, order: list[str]) -> Figure | None:
    """Per deck, two stacked bars: its wins split by path before (upper) and after."""
    by = {(r["subject"], r["metric"]): r for r in paths.iter_rows(named=True)}
    decks = [d for d in order if (d, "share_life") in by]
    if not decks:
        return None
    labels = []
    for d in decks:
        labels += [f"{_short(d, 26)}  before", "after"]
    fig = _figure(7.5, max(2.6, 0.34 * len(labels) + 1.2))
    _fit(fig, _text_width(labels, 8) + 0.2, 0.2, 0.5, 0.45)
    ax = fig.add_subplot()
    y = np.arange(len(labels), dtype=float) + np.repeat(np.arange(len(decks)) * 0.5, 2)
    shares = []
    for p in WIN_PATHS:
        share = []
        for d in decks:
            r = by.get((d, f"share_{p}"))
            share += [(r or {}).get("baseline") or 0.0, (r or {}).get("variant") or 0.0]
        shares.append(np.array(share))
    path_share_bars(ax, y, shares, 0.08, 6.5, height=0.85)
    path_share_axes(ax, y, labels, 7.5, "share of the deck's wins, before and after")
    return fig


# ---------------------------------------------------------------------------- tables


def changes_table(df: pl.DataFrame, subject: str = "Subject", kind: bool = True) -> Table:
    rows, hl = [], []
    for r in df.iter_rows(named=True):
        cells = [r["kind"]] if kind else []
        cells += [r["subject"], metric_label(r["metric"]), level_text(r["metric"], r["baseline"]),
                  level_text(r["metric"], r["variant"]),
                  change_text(r), vrf_text(r["vrf"]),
                  f"{count(r['n_baseline'])} / {count(r['n_variant'])}"]
        rows.append(cells)
        hl.append(bool(r["significant"]))
    head = (["Kind"] if kind else []) + [subject, "Metric", "Before", "After",
                                         "Change [95% paired CI]", "Variance reduction",
                                         "n before / after"]
    return Table(head, rows, hl)


def card_table(cards: pl.DataFrame) -> Table:
    """One row per card: before -> after and the change of each card metric; cards with a
    significant change first (largest change first)."""
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for r in cards.iter_rows(named=True):
        by.setdefault(r["subject"], {})[r["metric"]] = r

    def size(card: str) -> tuple[int, float]:
        ms = by[card].values()
        sig = any(m["significant"] for m in ms)
        return (0 if sig else 1, -max(abs(m["change"] or 0.0) for m in ms))

    rows, hl = [], []
    for card in sorted(by, key=lambda c: (*size(c), c)):
        m = by[card]
        cells = [card]
        for metric in CARD_METRICS:
            r = m.get(metric)
            if r is None:
                cells.append(EMPTY)
                continue
            star = " *" if r["significant"] else ""
            if metric == "iwd":
                cells.append(f"{change_text(r)}{star}")
            else:
                cells.append(f"{pct(r['baseline'])} → {pct(r['variant'])}: "
                             f"{change_text(r)}{star}")
        rows.append(cells)
        hl.append(size(card)[0] == 0)
    return Table(["Card", *[f"{metric_label(k)}: before → after: change" if k != "iwd"
                            else "IWD change" for k in CARD_METRICS]], rows, hl)


# ---------------------------------------------------------------------------- the page


def _cards_body(paired: Paired, deck_b: str | None = None) -> list[str]:
    """The patched cards first; then every other card, labelled as moved by the change
    (with ``deck_b``, the deck whose second version the variant plays)."""
    cards = paired.of("card")
    patched = cards.filter(pl.col("role") == "patched")
    moved = cards.filter(pl.col("role") == "moved")
    what = esc(paired.what_moved() if deck_b is None or paired.patched or paired.rules_changed
               else f"the second version of {deck_b}")
    out = ["<h3>Patched cards</h3>"]
    if patched.height:
        out.append(html_table(card_table(patched)))
        out += [f"<p>{esc(line.strip())}</p>" for line in adjusted_lines(paired)]
    elif deck_b is not None and not paired.rules_changed:
        out.append(f"<p>No card's numbers changed: the variant plays {what} in its place "
                   "(--deck-b).</p>")
    else:
        out.append("<p>No card of these decks was patched"
                   + (f": the change is {what}" if paired.rules_changed else "") + ".</p>")
    out.append(f"<h3>Other cards, moved by the change to {what}</h3>")
    if moved.height:
        out.append(f"<p>{esc(moved_line(paired))}.</p>")
        out.append(html_table(card_table(moved)))
    else:
        out.append("<p>No other card.</p>")
    return out


def _method(result: CompareResult, paired: Paired) -> str:
    vr = paired.variance_reduction()
    parts = [
        "<p>Both runs play the same tables, deals, seat orders and seed; game g of the "
        "baseline is paired with game g of the variant (same game_id). The independent unit "
        f"is a table's deal in every seat order ({count(paired.deals)} deals per table), the "
        "tables strata. Each metric is a ratio of sums; its change is estimated with a 95% "
        "interval change ± 1.96·se from the per-deal differences d of the linearised "
        "metric (the delta method; se² the within-table variance of d over n²), not from "
        "two independent intervals. Changes "
        f"are marked significant by Benjamini-Hochberg at 5% over all {paired.tests:,} "
        "changes tested.</p>",
        f"<p>Where fewer than {FEW_DEALS} deals differ between the runs, the normal "
        "approximation would not hold its coverage (its interval is empty when no deal "
        "differs); those changes get a score interval on the discordant deals instead "
        "(Tango's interval for a paired difference, the inversion of McNemar's test; "
        "column interval = score in changes.csv), which keeps 95% down to a single "
        "differing deal and spans about ±3.8/n deals' worth of games when none differs. "
        "A share counting fewer than 10 events in a run (a path a deck almost never wins "
        "by) gets Newcombe's interval for a paired difference (column interval = "
        "newcombe), never of zero width.</p>",
        f"<p>{esc(vrf_line(paired))}.</p>",
    ]
    note = score_note(paired)
    if note:
        parts.append(f"<p>{esc(note)}.</p>")
    if vr["median"] is not None:
        parts.append("<p>The variance-reduction factor is var(unpaired) / var(paired), where "
                     "var(unpaired) is what the same difference would have had from two runs "
                     "on independent seeds; intervals narrow by its square root.</p>")
    st = result.stopping
    if st.get("precision") is not None:
        parts.append(f"<p><strong>Stopping rule.</strong> {esc(st['rule'])}</p>")
        parts.append(f"<p>{esc(stopping_line(result))}.</p>")
    return "".join(parts)


def render_compare_html(result: CompareResult, paired: Paired, images: dict[str, Image],
                        targets: list[str] | None = None) -> str:
    name = result.out.resolve().name
    sig = paired.significant

    def img(key: str) -> str:
        return images[key].tag() if key in images else ""

    def section(key: str, title: str, *body: str) -> str:
        return f'<section id="{key}"><h2>{esc(title)}</h2>' + "".join(body) + "</section>"

    changed = "".join(f"<li>{esc(line)}</li>" for line in what_changed(result))
    excluded = "".join(f"<li>Left out of both runs: {esc(e.deck)} ({esc(e.path)}): "
                       f"{esc(e.reason)}</li>" for e in result.excluded)
    note = f"<p>{esc(result.patch_note)}</p>" if result.patch_note else ""
    spread = balance_line(paired)
    note += f"<p>{esc(spread)}</p>" if spread else ""
    note += f"<pre>{esc(chr(10).join(targets))}</pre>" if targets else ""
    decks = paired.of("deck")
    paths = paired.of("path").filter(~pl.col("metric").str.contains("^(expected|gap)_"))
    _, exp_rows = path_expectation_table(paired)
    expectation = ""
    if exp_rows:
        rows = [[path_label(r[0].replace("-", "_")), *r[1:]] for r in exp_rows]
        expectation = ("<h3>Against the deck-pool expectation</h3>"
                       + html_table(Table(["Path", "Share: before → after",
                                           "Change [95% paired CI]", "Expected: before → after",
                                           "Change [95% paired CI]", "Gap: before → after",
                                           "Change [95% paired CI]"],
                                          [[c.replace(" -> ", " → ") for c in r]
                                           for r in rows]))
                       + f'<p class="note">{esc(PATH_EXPECTATION_NOTE)}; * = significant '
                       "(Benjamini-Hochberg 5%).</p><h3>Every path change</h3>")
    nav = " ".join(f'<a href="#{k}">{t}</a>' for k, t in (
        ("significant", "Significant changes"), ("decks", "Decks"), ("paths", "Victory paths"),
        ("seats", "Seats"), ("matchups", "Matchups"), ("cards", "Cards"),
        ("method", "Method"), ("reproduce", "Reproduce")))
    sig_moved = sig.filter(pl.col("role") == "moved")
    sig = sig.filter(pl.col("role") != "moved")
    if sig.height:
        top = changes_table(sig.head(SIGNIFICANT_ROWS))
        more = (f'<p class="note">Showing {SIGNIFICANT_ROWS} of {sig.height}; every change '
                "is in changes.csv.</p>" if sig.height > SIGNIFICANT_ROWS else "")
        verdict = (f"<p>{sig.height} of {paired.tests:,} changes are significant "
                   "(Benjamini-Hochberg 5%), most important first: deck win rates, then "
                   "victory paths, seats, matchups and cards, each by the size of the "
                   "change; changes under 0.1 points last.</p>" + html_table(top) + more)
    else:
        verdict = ("<p>No change is significant after Benjamini-Hochberg at 5%: at this "
                   "number of games the variant plays like the baseline.</p>")
    if sig_moved.height:
        verdict += (f'<p class="note">Not counted above: {sig_moved["subject"].n_unique()} '
                    "unpatched cards with a significant shift, moved by the change to "
                    f"{esc(paired.what_moved())}; see Cards.</p>")
    repro = [result.options.get("command") or "rnr-sim compare …",
             f"rnr-sim report {shlex.quote(str(result.baseline_dir))}",
             f"rnr-sim report {shlex.quote(str(result.variant_dir))}"]
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc('Change report: ' + name)}</title><style>{CSS}{EXTRA_CSS}</style>"
        "</head><body>",
        f"<h1>Revolt N Reign change report: {esc(name)}</h1>",
        f'<p class="sub">{esc(design_line(result, paired))}</p><nav>{nav}</nav>',
        f'<div class="change"><strong>What changed</strong><ul>{changed}{excluded}</ul>'
        f"{note}</div>",
        section("significant", "Significant changes", verdict),
        section("decks", "Decks", "<p>Each deck's win rate over all its games, before and "
                "after the change.</p>", img("decks"),
                html_table(changes_table(decks, "Deck", kind=False))),
        section("paths", "Victory paths", "<p>How the wins split between the four paths, "
                "over all games and per deck. A path is judged against the deck-pool "
                "expectation, not the flat 25% of Art. III (the dotted line, a reference "
                "only): the share it would take if every deck won its fair share with its "
                "own mix of paths.</p>", img("paths"), expectation, img("deck_paths"),
                html_table(changes_table(paths, "Scope", kind=False))),
        section("seats", "Seats", "<p>The first seat's win rate, overall and by whether the "
                "second seat used its free P2 Pillar.</p>",
                html_table(changes_table(paired.of("seat"), "Games", kind=False))),
        section("matchups", "Matchups", "<p>Row deck's win rate in the games it met the "
                "column deck, largest change first.</p>",
                html_table(changes_table(paired.of("matchup"), "Matchup", kind=False))),
        section("cards", "Cards", "<p>Per card over the decks that hold it: GIH WR (win rate "
                "in games it was seen), played WR, play rate and IWD (GIH WR − GNS WR). "
                "* = significant (Benjamini-Hochberg 5%); highlighted cards have one.</p>",
                *_cards_body(paired, getattr(result, "deck_b_name", None))),
        section("method", "Method", _method(result, paired)),
        section("reproduce", "Reproduce",
                f"<p>Baseline run: {esc(result.baseline_dir)}<br>Variant run: "
                f"{esc(result.variant_dir)}<br>Timings: "
                f"{esc(', '.join(f'{k} {v}' for k, v in result.timings.items()))}</p>",
                f"<pre>{esc(chr(10).join(repro))}</pre>",
                '<p class="note">Every change as CSV beside this page: changes.csv.</p>'),
        "</body></html>",
    ]
    return "\n".join(parts)


def build_compare_report(result: CompareResult, paired: Paired, out_dir: str | Path,
                         svg: bool = False, targets: list[str] | None = None) -> Path:
    """Write ``index.html``, ``changes.csv`` and the figures (``plots/``) to ``out_dir``;
    returns the path of index.html. ``targets``: the lines of ``compare --targets``
    (``text.targets_lines``), shown with what changed as the terminal shows them."""
    out = Path(out_dir)
    try:
        (out / "plots").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{out}: cannot create the report folder ({e.strerror})") from None
    fmt = "svg" if svg else "png"
    decks = paired.of("deck")
    order = decks.sort("variant", descending=True, nulls_last=True)["subject"].to_list()
    figs = {
        "decks": (deck_change_plot(decks), "deck win rates before and after"),
        "paths": (path_change_plot(paired.changes.filter(
            (pl.col("kind") == "path") & (pl.col("subject") == "all games"))),
            "victory path shares before and after"),
        "deck_paths": (deck_paths_plot(paired.of("path"), order),
                       "each deck's victory paths before and after"),
    }
    images = {k: Image(k, render(f, fmt), fmt, alt) for k, (f, alt) in figs.items()
              if f is not None}
    index = out / "index.html"
    try:
        for im in images.values():
            (out / "plots" / f"{im.name}.{fmt}").write_bytes(im.data)
        paired.changes.write_csv(out / "changes.csv")
        index.write_text(render_compare_html(result, paired, images, targets),
                         encoding="utf-8")
    except OSError as e:
        raise InputError(f"{out}: cannot write the report ({e.strerror or e})") from None
    return index
