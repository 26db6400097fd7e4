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
    from rnr_sim.searchdirs import verify_balance_dir

    d = Path(balance_dir)
    manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    verify_balance_dir(d, manifest)
    return (manifest, pl.read_parquet(d / "suggestions.parquet"),
            pl.read_parquet(d / "figures.parquet"))


def is_balance_dir(path: str | Path) -> bool:
    """Whether ``path`` holds a balance dir's manifest (``kind: "balance"``)."""
    from rnr_sim.searchdirs import manifest_kind

    return manifest_kind(path) == "balance"


def _pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def _pp(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f} pp"


def _band(lo: float | None, hi: float | None) -> str:
    if lo is None and hi is None:
        return "-"
    if lo is None:
        return f"<= {_pct(hi, 0)}"
    return f"{_pct(lo, 0)}-{_pct(hi, 0)}"


def targets_text(t: dict[str, Any]) -> str:
    """The targets as the file writes them: ``deck_share_max = 0.55, path_share = [0.2,
    0.3]`` (one band for every path when they are all the same)."""
    parts = []
    for k, v in t.items():
        if v in (None, {}):
            continue
        if k == "path_share":
            bands = {tuple(b) for b in v.values()}
            v = list(bands.pop()) if len(bands) == 1 and len(v) == 4 else v
        parts.append(f"{k} = {v}")
    return ", ".join(parts)


def _figure_rows(figures: pl.DataFrame, rank: int) -> list[list[str]]:
    rows = []
    for r in figures.filter(pl.col("rank") == rank).iter_rows(named=True):
        if r["target"] == "iwd_max":
            before = f"{r['before']:+.3f} [{r['before_lo']:+.3f}, {r['before_hi']:+.3f}]"
            after = f"{r['after']:+.3f} [{r['after_lo']:+.3f}, {r['after_hi']:+.3f}]"
            rows.append([r["target"], r["subject"], f"<= {r['band_hi']:+.3f}", before, after,
                         f"{r['change']:+.3f}", "yes" if r["met_after"] else "NO"])
            continue
        before = f"{_pct(r['before'])} [{_pct(r['before_lo'])}, {_pct(r['before_hi'])}]"
        if r["after"] is None:
            rows.append([r["target"], r["subject"], _band(r["band_lo"], r["band_hi"]), before,
                         "", "", "yes" if r["met_before"] else "NO"])
            continue
        after = f"{_pct(r['after'])} [{_pct(r['after_lo'])}, {_pct(r['after_hi'])}]"
        change = f"{_pp(r['change'])} [{_pp(r['change_lo'])}, {_pp(r['change_hi'])}]"
        rows.append([r["target"], r["subject"], _band(r["band_lo"], r["band_hi"]), before,
                     after, change, "yes" if r["met_after"] else "NO"])
    return rows


HEAD = ["target", "subject", "band", "before [95% CI]", "after [95% CI]",
        "change [95% CI, paired]", "met"]


def _after_line(s: dict[str, Any], m: dict[str, Any]) -> str:
    """The metagame after suggestion ``s``: the strongest deck found with the patched cards,
    and the same list with the unchanged ones (manifest ``m``), since a strong deck found
    after a patch may be one the cards held before."""
    if s["strongest_after"] is None:
        return "Metagame after: not searched (--no-rediscover, or the budget's share was too small)."
    verdict = ("breaks deck_share_max" if s["strongest_after_breaks"] else
               "within deck_share_max" if s["strongest_after_breaks"] is not None else "")
    line = (f"Metagame after (discover with the change): strongest deck "
            f"{s['strongest_after']}, {_pct(s['strongest_after_share'])} "
            f"[{_pct(s['strongest_after_lo'])}, {_pct(s['strongest_after_hi'])}] held out "
            f"against the metagame's decks" + (f": {verdict}." if verdict else "."))
    mine = next((x for x in m.get("suggestions", []) if x["rank"] == s["rank"]), {})
    w = (mine.get("after") or {}).get("without_patch")
    if w:
        line += (f" The same list on {w['deals']:,} fresh deals a deck: "
                 f"{_pct(w['share_patched'])} with the patch, "
                 f"{_pct(w['share_unchanged'])} [{_pct(w['unchanged_lo'])}, "
                 f"{_pct(w['unchanged_hi'])}] with the unchanged cards; the patch's part: "
                 f"{100 * w['change']:+.1f} points [{100 * w['change_lo']:+.1f}, "
                 f"{100 * w['change_hi']:+.1f}] (paired): " + _whose(w) + ".")
    return line


def _whose(w: dict[str, Any]) -> str:
    """Whose doing the strongest deck after a patch is, read off the paired interval."""
    if w["change_lo"] > 0:
        return "the patch made it stronger"
    if w["change_hi"] < 0:
        return "the cards held it before the patch, which weakens it"
    return "no clear part of the patch either way"


def _games_line(m: dict[str, Any]) -> str:
    g, sec = m["games"], m["seconds"]
    r = m["search"]["racing"]
    return (f"{g['total']:,} games in {sec['total'] / 60:.1f} min (search {g['search']:,}, "
            f"{m['search']['candidates']:,} candidates over {m['search']['generations']} "
            f"generations, racing saved {100 * r['saved']:.0f}%; verification {g['verify']:,}; "
            f"re-discovery {g['rediscover']:,}).")


def balance_markdown(balance_dir: str | Path) -> str:
    """The section as Markdown."""
    m, sug, fig = _load(balance_dir)
    out = [f"## {SECTION}", "", m["message"], "",
           f"Metagame: {m['metagame']['source']}. Targets: {targets_text(m['targets'])}"
           f". Scope: {m['search']['knobs']} numbers ({m['scope_cards']['how']}), at most "
           f"{m['scope']['max_changes']} changes.", ""]
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


def balance_html(balance_dir: str | Path) -> str:
    """The section as HTML (a ``<section>``)."""
    m, sug, fig = _load(balance_dir)
    e = html.escape

    def table(head, rows) -> str:
        th = "".join(f"<th>{e(h)}</th>" for h in head)
        trs = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>"
                      for r in rows)
        return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"

    parts = [f"<section id=\"suggested-changes\"><h2>{SECTION}</h2>",
             f"<p class=\"answer\">{e(m['message'])}</p>",
             f"<p>Metagame: {e(m['metagame']['source'])}; targets: "
             f"{e(targets_text(m['targets']))}; scope: {m['search']['knobs']} "
             f"numbers ({e(m['scope_cards']['how'])}), at most {m['scope']['max_changes']} "
             "changes.</p>"]
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
    """``out/index.html`` and ``out/summary.md`` of a balance dir."""
    from rnr_sim.execution import atomic_write
    from rnr_sim.report import pages

    target = Path(out)
    title = f"Balance suggestions: {Path(balance_dir).resolve().name}"
    page = PAGE.format(title=html.escape(title), body=balance_html(balance_dir))
    md = balance_markdown(balance_dir)  # both read (and checked) before anything is written
    pages.claim(target, Path(balance_dir), "balance")
    index = target / "index.html"
    atomic_write(index, lambda tmp: tmp.write_text(page, encoding="utf-8"))
    atomic_write(target / "summary.md", lambda tmp: tmp.write_text(md, encoding="utf-8"))
    pages.mark(target, Path(balance_dir), "balance")
    return index
