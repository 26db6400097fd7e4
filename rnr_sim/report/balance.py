"""The "Suggested changes" section of a balance dir (``rnr-sim balance``): the answer, each
suggestion as a short card diff, the targets before and after with intervals, the
metagame after it, and the command that reproduces the check.

``balance_markdown(dir)`` and ``balance_html(dir)`` give the section; ``balance_text``
the terminal summary; ``build_balance_report(dir, out)`` a page of its own
(``rnr-sim report BALANCE_DIR``).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import polars as pl

from rnr_sim.balance.output import adaptation_lines, yardstick_lines

SECTION = "Suggested changes"


def _load(balance_dir: str | Path) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame]:
    """The manifest, suggestions and figures, the dir checked by content first
    (``searchdirs.verify_balance_dir``: ``InputError`` naming a file not the run's own)."""
    from rnr_sim.runs.searchdirs import verify_balance_dir

    d = Path(balance_dir)
    manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    verify_balance_dir(d, manifest)
    return (manifest, pl.read_parquet(d / "suggestions.parquet"),
            pl.read_parquet(d / "figures.parquet"))


def is_balance_dir(path: str | Path) -> bool:
    """Whether ``path`` holds a balance dir's manifest (``kind: "balance"``)."""
    from rnr_sim.runs.searchdirs import manifest_kind

    return manifest_kind(path) == "balance"


# One unit convention on the page: a share (a win rate, a path's share of the wins) is a
# percentage, "57.3%"; a difference of shares and a card's IWD (itself a difference of win
# rates) are percentage points, "+1.4 pp". No raw fraction is shown.
def _pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def _pp(x: float | None, sign: bool = True) -> str:
    return "-" if x is None else f"{100 * x:{'+' if sign else ''}.1f} pp"


def _bound(x: float) -> str:
    """A target's bound as a share: "55%", "55.5%" (the digits the file gave)."""
    return _pct(x, 0) if abs(100 * x - round(100 * x)) < 1e-9 else _pct(x, 1)


def _band(lo: float | None, hi: float | None) -> str:
    if lo is None and hi is None:
        return "-"
    if lo is None:
        return f"<= {_bound(hi)}"
    if hi is None:
        return f">= {_bound(lo)}"
    return f"{_bound(lo)}-{_bound(hi)}"


def targets_text(t: dict[str, Any]) -> str:
    """The targets in the page's units: ``deck_share_max <= 55%, path_share 20%-30% (every
    path)``; a path's own band when they differ; ``iwd_max <= 10.0 pp``. Keys this page
    does not know are shown as the file gives them."""
    parts = []
    for k, v in t.items():
        if v in (None, {}):
            continue
        if k == "deck_share_max":
            parts.append(f"{k} <= {_bound(v)}")
        elif k == "first_seat":
            parts.append(f"{k} {_band(*v)}")
        elif k == "path_share":
            bands = {tuple(b) for b in v.values()}
            if len(bands) == 1 and len(v) == 4:
                parts.append(f"{k} {_band(*bands.pop())} (every path)")
            else:
                parts.append(f"{k} " + ", ".join(f"{p} {_band(*b)}" for p, b in v.items()))
        elif k == "min_support":
            parts.append(f"{k} >= {v} decks")
        elif k == "iwd_max":
            parts.append(f"{k} <= {_pp(v, sign=False)}")
        else:
            parts.append(f"{k} = {v}")
    return ", ".join(parts)


def _subject(r: dict[str, Any]) -> str:
    """A figure row's subject in words. An ``iwd_max`` row names the card with the largest
    adjusted IWD before and after (the dir writes ``A -> B``): "largest: Harriet Tubman",
    or "largest: A before, B after" when they differ."""
    subject = str(r["subject"])
    if r["target"] != "iwd_max":
        return subject
    before, _, after = subject.partition(" -> ")
    if not after or after == before:
        return f"largest: {before}"
    return f"largest: {before} before, {after} after"


def _range(v, lo, hi, fmt) -> str:
    return f"{fmt(v)} [{fmt(lo)}, {fmt(hi)}]" if lo is not None and hi is not None else fmt(v)


def _figure_rows(figures: pl.DataFrame, rank: int) -> list[list[str]]:
    rows = []
    for r in figures.filter(pl.col("rank") == rank).iter_rows(named=True):
        iwd = r["target"] == "iwd_max"
        value = _pp if iwd else _pct  # an IWD is a difference: points (see above)
        band = f"<= {_pp(r['band_hi'], sign=False)}" if iwd else _band(r["band_lo"],
                                                                         r["band_hi"])
        before = _range(r["before"], r["before_lo"], r["before_hi"], value)
        if r["after"] is None:
            rows.append([r["target"], _subject(r), band, before, "", "",
                         "yes" if r["met_before"] else "NO"])
            continue
        after = _range(r["after"], r["after_lo"], r["after_hi"], value)
        change = _range(r["change"], r["change_lo"], r["change_hi"], _pp)
        rows.append([r["target"], _subject(r), band, before, after, change,
                     "yes" if r["met_after"] else "NO"])
    return rows


HEAD = ["target", "subject", "band", "before [95% CI]", "after [95% CI]",
        "change [95% CI, paired]", "met"]


def _after_line(s: dict[str, Any], m: dict[str, Any]) -> str:
    """The metagame after suggestion ``s``: the strongest deck found with the patched cards
    (its held-out share, the one figure deck_share_max is judged on), and whose doing it is:
    the same list played again on fresh deals with the patch and with the unchanged cards,
    paired, read as one verdict with the first (manifest ``m``)."""
    if s["strongest_after"] is None:
        if m.get("rediscover") is False:
            return "Metagame after: not searched (--no-rediscover)."
        return ("Metagame after: not searched (what was left of the budget's re-discovery "
                "share after the suggestions before it was below one discovery's minimum; "
                "raise --budget).")
    cap = (m.get("targets") or {}).get("deck_share_max")
    cap_text = f" (<= {_bound(cap)})" if cap is not None else ""
    breaks = s["strongest_after_breaks"]
    verdict = (f"breaks deck_share_max{cap_text}" if breaks else
               f"within deck_share_max{cap_text}" if breaks is not None else "")
    line = (f"Metagame after (discover with the change): strongest deck "
            f"{s['strongest_after']}, {_pct(s['strongest_after_share'])} "
            f"[{_pct(s['strongest_after_lo'])}, {_pct(s['strongest_after_hi'])}] held out "
            f"against the metagame's decks" + (f": {verdict}." if verdict else "."))
    mine = next((x for x in m.get("suggestions", []) if x.get("rank") == s["rank"]), {})
    w = (mine.get("after") or {}).get("without_patch")
    if w:
        line += (f" Whose doing: the same list played on {w['deals']:,} fresh deals a deck "
                 "with the patch and with the unchanged cards; the patch's part: "
                 f"{_range(w['change'], w['change_lo'], w['change_hi'], _pp)} (paired): "
                 + _whose(w, breaks) + ".")
    return line


def _whose(w: dict[str, Any], breaks: bool | None) -> str:
    """Whose doing the strongest deck after a patch is, read off the paired interval, in
    one verdict with the held-out share's (``breaks``: True, False, None unknown)."""
    if w["change_lo"] > 0:
        return {True: "the patch made it stronger, so the break is the patch's doing",
                False: "the patch made it stronger, though not past deck_share_max"}.get(
            breaks, "the patch made it stronger")
    if w["change_hi"] < 0:
        return {True: "the unchanged cards held it already and the patch weakens it: the "
                      "break is not the patch's doing"}.get(
            breaks, "the unchanged cards held it already, and the patch weakens it")
    return "no clear part of the patch either way"


#: How a share target's rows are labelled in the figure.
PLOT_LABEL = {"deck_share_max": "deck", "path_share": "path", "first_seat": ""}


def target_plot(figures: pl.DataFrame, ranks: list[int]):
    """The figure of the page: every share target's figure (a deck's win rate, a path's
    share of the wins, the first seat's win rate) before (grey) and after (blue) each
    suggestion of ``ranks``, with their 95% intervals, on the target's band (green): one
    panel per suggestion, the rows in the tables' order; with no suggestion, the unchanged
    catalog's figures alone (rank 0). A figure outside its band (after the change, or
    before it on rank 0) is drawn red.
    ``iwd_max`` rows (points, not shares) are left to the tables. None: nothing to draw."""
    from rnr_sim.report.plots import _figure, _fit, _short

    panels = [r for r in ranks if figures.filter((pl.col("rank") == r)
                                                 & (pl.col("target") != "iwd_max")).height]
    if not panels:
        return None
    keys = []
    for r in panels:
        sub = figures.filter((pl.col("rank") == r) & (pl.col("target") != "iwd_max"))
        keys += [k for k in sub.select("target", "subject").iter_rows() if k not in keys]
    labels = [_short(f"{PLOT_LABEL.get(t, t)}: {s}" if PLOT_LABEL.get(t, t) else s, 28)
              for t, s in keys]
    width = 1.9 + 2.6 * len(panels)
    fig = _figure(min(width, 12.0), 0.8 + 0.24 * len(keys))
    _fit(fig, 1.9, 0.15, 0.45, 0.3, wspace=0.08)
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    y = {k: i for i, k in enumerate(keys)}
    for ax, rank in zip(axes, panels, strict=True):
        sub = figures.filter((pl.col("rank") == rank) & (pl.col("target") != "iwd_max"))
        for r in sub.iter_rows(named=True):
            i = y[(r["target"], r["subject"])]
            lo = 0.0 if r["band_lo"] is None else r["band_lo"]
            hi = 1.0 if r["band_hi"] is None else r["band_hi"]
            ax.plot([100 * lo, 100 * hi], [i, i], color="#b7e1c1", lw=7, solid_capstyle="butt",
                    zorder=1)
            met = r["met_after"] if rank else r["met_before"]
            last = "before" if rank == 0 else "after"
            for key, dy in (("before", -0.13), ("after", 0.13)):
                v = r[key]
                if v is None:
                    continue
                colour = ("#2471a3" if met is not False else "#c0392b") if key == last \
                    else "#888"
                a, b = r[f"{key}_lo"], r[f"{key}_hi"]
                if a is not None and b is not None:
                    ax.plot([100 * a, 100 * b], [i + dy, i + dy], color=colour, lw=1.2,
                            zorder=2)
                ax.plot([100 * v], [i + dy], "o", color=colour, ms=3.5, zorder=3)
        ax.set_title("unchanged catalog" if rank == 0 else f"suggestion {rank:02d}",
                     fontsize=8)
        ax.grid(axis="x", color="#eee", lw=0.6)
        ax.tick_params(labelsize=7)
        ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0f}%")
    axes[0].set_yticks(range(len(keys)), labels)
    axes[0].set_ylim(len(keys) - 0.5, -0.5)
    fig.text(0.01, 0.01, "green: the target's band; grey: before; after: blue within the "
             "band, red outside it (95% intervals)", fontsize=6.5, color="#555")
    return fig


def _games_line(m: dict[str, Any]) -> str:
    g, sec = m["games"], m["seconds"]
    r = m["search"]["racing"]
    gens = m["search"].get("generations") or 0
    combined = f" ({gens} generations of combinations)" if gens else ""
    return (f"{g['total']:,} games in {sec['total'] / 60:.1f} min (search {g['search']:,}, "
            f"{m['search']['candidates']:,} candidates{combined}, "
            f"racing saved {100 * r['saved']:.0f}%; verification {g['verify']:,}; "
            f"re-discovery {g['rediscover']:,}"
            + (f"; adaptation {g['adapt']:,}" if g.get("adapt") else "") + ").")


def _scope_line(m: dict[str, Any]) -> str:
    """Metagame, targets (``targets_text``) and scope, from the manifest (a field it lacks
    is left out of the line)."""
    parts = []
    source = (m.get("metagame") or {}).get("source")
    if source:
        parts.append(f"Metagame: {source}")
    if m.get("targets"):
        parts.append(f"Targets: {targets_text(m['targets'])}")
    knobs = (m.get("search") or {}).get("knobs")
    how = (m.get("scope_cards") or {}).get("how")
    most = (m.get("scope") or {}).get("max_changes")
    if knobs is not None:
        parts.append(f"Scope: {knobs} numbers" + (f" ({how})" if how else "")
                     + (f", at most {most} changes" if most is not None else ""))
    return ". ".join(parts) + "." if parts else ""


def _plot_ranks(m: dict[str, Any], sug: pl.DataFrame) -> list[int]:
    """The panels of the figure: every suggestion, or the unchanged catalog alone."""
    if m.get("status") == "no change needed" or sug.height == 0:
        return [0]
    return sug["rank"].to_list()


PLOT_FILE = "plots/balance.png"
PLOT_ALT = ("each target's figure before and after each suggestion, with 95% intervals, "
            "on its band")


def balance_markdown(balance_dir: str | Path, plot: str | None = None) -> str:
    """The section as Markdown; ``plot``: the figure's path beside it, if drawn."""
    m, sug, fig = _load(balance_dir)
    out = [f"## {SECTION}", "", m["message"], "", _scope_line(m), ""]
    if plot:
        out += [f"![{PLOT_ALT}]({plot})", ""]
    if m["status"] == "no change needed" or sug.height == 0:
        out += ["Unchanged catalog:", "", *_md_table(HEAD[:4] + ["met"], [
            [r[0], r[1], r[2], r[3], r[6]] for r in _figure_rows(fig, 0)]), ""]
    for s in sug.iter_rows(named=True):
        mark = "verified: meets every target" if s["verified"] else \
            f"misses {', '.join(s['targets_missed'])}"
        out += [f"### Suggestion {s['rank']:02d} ({mark})", ""]
        out += [f"- `{c}`" for c in s["changes"]]
        out += ["", f"On {s['verify_deals']:,} fresh deals a pair (compare):", ""]
        out += _md_table(HEAD, _figure_rows(fig, s["rank"]))
        out += ["", _after_line(s, m), "", f"Reproduce: `{s['compare_command']}`", ""]
    out += [_games_line(m), ""]
    return "\n".join(out)


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return lines


def balance_html(balance_dir: str | Path, img=None) -> str:
    """The section as HTML (a ``<section>``); ``img``: the figure (``figures.Image``)."""
    m, sug, fig = _load(balance_dir)
    e = html.escape

    def table(head, rows) -> str:
        th = "".join(f"<th>{e(h)}</th>" for h in head)
        trs = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>"
                      for r in rows)
        return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"

    parts = [f"<section id=\"suggested-changes\"><h2>{SECTION}</h2>",
             f"<p class=\"answer\">{e(m['message'])}</p>",
             f"<p>{e(_scope_line(m))}</p>", img.tag() if img is not None else ""]
    if m["status"] == "no change needed" or sug.height == 0:
        parts.append("<h3>Unchanged catalog</h3>" + table(
            HEAD[:4] + ["met"], [[r[0], r[1], r[2], r[3], r[6]] for r in _figure_rows(fig, 0)]))
    for s in sug.iter_rows(named=True):
        mark = "verified: meets every target" if s["verified"] else \
            f"misses {', '.join(s['targets_missed'])}"
        diff = "".join(f"<li><code>{e(c)}</code></li>" for c in s["changes"])
        parts.append(f"<h3>Suggestion {s['rank']:02d} ({e(mark)})</h3><ul>{diff}</ul>"
                     f"<p>On {s['verify_deals']:,} fresh deals a pair (compare):</p>"
                     + table(HEAD, _figure_rows(fig, s["rank"]))
                     + f"<p>{e(_after_line(s, m))}</p>"
                     f"<p>Reproduce: <code>{e(s['compare_command'])}</code></p>")
    checked = yardstick_lines(m)
    if checked:
        parts.append(f"<h3>With a stronger pilot</h3><p>{e(checked[0])}</p><ul>"
                     + "".join(f"<li>{e(x.strip())}</li>" for x in checked[1:]) + "</ul>")
    adapted = adaptation_lines(m)
    if adapted:
        parts.append(f"<h3>After adaptation</h3><p>{e(adapted[0])}</p><ul>"
                     + "".join(f"<li>{e(x.strip())}</li>" for x in adapted[1:]) + "</ul>")
    parts.append(f"<p>{e(_games_line(m))}</p></section>")
    return "\n".join(parts)


def balance_text(balance_dir: str | Path) -> str:
    """The terminal summary of a balance run."""
    m, sug, fig = _load(balance_dir)
    lines = [m["message"]]
    if m["status"] == "no change needed" or sug.height == 0:
        for r in _figure_rows(fig, 0):
            lines.append(f"  {r[0]:<15} {r[1]:<26} {r[2]:<10} {r[3]}  met: {r[6]}")
    for s in sug.iter_rows(named=True):
        mark = "meets every target" if s["verified"] else \
            f"misses {', '.join(s['targets_missed'])}"
        shown = ", ".join(f for f in (s["file"], s.get("rules_file")) if f)
        lines.append(f"Suggestion {s['rank']:02d} ({shown}): {mark}")
        lines += [f"    {c}" for c in s["changes"]]
        ranked = fig.filter(pl.col("rank") == s["rank"])
        shown = [not (r["target"] == "deck_share_max" and r["met_before"] and r["met_after"])
                 for r in ranked.iter_rows(named=True)]
        for r, show in zip(_figure_rows(fig, s["rank"]), shown, strict=True):
            if show:
                lines.append(f"  {r[0]:<15} {r[1]:<26} {r[2]:<10} {r[3]} -> {r[4]}  "
                             f"met: {r[6]}")
        lines.append("  " + _after_line(s, m))
        lines.append(f"  check: {s['compare_command']}")
    lines += yardstick_lines(m)
    lines += adaptation_lines(m)
    lines.append(_games_line(m))
    lines.append(f"Wrote {balance_dir} (rnr-sim report {balance_dir} draws it).")
    return "\n".join(lines)


PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>{title}</title><style>
body {{ font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1em; }}
td, th {{ border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }}
code {{ background: #f4f4f4; }} .answer {{ font-weight: bold; }}
</style></head><body><h1>{title}</h1>
{body}
</body></html>
"""


def build_balance_report(balance_dir: str | Path, out: str | Path) -> Path:
    """``out/index.html`` (the figure inline), ``out/summary.md`` and
    ``out/plots/balance.png`` of a balance dir; the dir is read and checked before
    anything is written."""
    from rnr_sim.files import atomic_write
    from rnr_sim.report import pages, plots
    from rnr_sim.report.figures import Image

    target = Path(out)
    title = f"Balance suggestions: {Path(balance_dir).resolve().name}"
    m, sug, figures = _load(balance_dir)
    drawn = target_plot(figures, _plot_ranks(m, sug))
    img = None if drawn is None else Image("balance", plots.render(drawn, "png"), "png",
                                            PLOT_ALT)
    page = PAGE.format(title=html.escape(title), body=balance_html(balance_dir, img))
    md = balance_markdown(balance_dir, PLOT_FILE if img is not None else None)
    pages.claim(target, Path(balance_dir), "balance")
    if img is not None:
        (target / "plots").mkdir(exist_ok=True)
        atomic_write(target / PLOT_FILE, lambda tmp: tmp.write_bytes(img.data))
    index = target / "index.html"
    atomic_write(index, lambda tmp: tmp.write_text(page, encoding="utf-8"))
    atomic_write(target / "summary.md", lambda tmp: tmp.write_text(md, encoding="utf-8"))
    pages.mark(target, Path(balance_dir), "balance")
    return index
