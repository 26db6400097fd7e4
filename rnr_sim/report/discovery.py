"""The report of a discovery dir (``rnr-sim report DISCOVERY_DIR``): one page a designer
reads in a screen or two.

- the archive as a heatmap (each cell's elite, its held-out share);
- the best deck of each cell with its list, its pilot, its held-out share beside the
  search's (the search's is biased upward by selection: the held-out one is the figure);
- the cards: staples (the share of elites, and of the five best, that play a card) and the
  cards no elite plays, each marked when no field deck plays it either;
- the field's decks ranked in the discovered metagame, and the metagame: the matchup
  matrix of the best elites and the field with intervals, its equilibrium and its paths.

Every figure comes from the dir's parquet files and manifest, checked by content first;
nothing is replayed.
"""

from __future__ import annotations

import io
import json
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim.report import links
from rnr_sim.report.build import CSS, Image, esc

TOP = 5  # "the five best": the staples of the top decks


def is_discovery_dir(path: str | Path) -> bool:
    """Whether ``path`` holds a discovery dir's manifest (``kind: "discovery"``)."""
    from rnr_sim.runs.searchdirs import manifest_kind

    return manifest_kind(path) == "discovery"


def read(path: str | Path) -> dict[str, Any]:
    """The dir's manifest and tables, checked by content first
    (``searchdirs.verify_discovery_dir``); ``InputError`` naming the file that is missing
    or not the discovery's own."""
    from rnr_sim.runs.searchdirs import (
        DISCOVERY_OPTIONAL,
        DISCOVERY_TABLES,
        read_tables,
        verify_discovery_dir,
    )

    root = Path(path)
    out: dict[str, Any] = {"manifest": json.loads((root / "manifest.json").read_text("utf-8"))}
    verify_discovery_dir(root, out["manifest"])
    tables = DISCOVERY_TABLES + tuple(n for n in DISCOVERY_OPTIONAL
                                      if (root / f"{n}.parquet").is_file())
    return out | read_tables(root, tables, "discovery dir", "rnr-sim discover")


def card_use(d: dict[str, Any]) -> pl.DataFrame:
    """Per catalog card: ``elites`` (share of elites playing it), ``top`` (share of the
    ``TOP`` best by held-out share), ``copies`` (mean copies where played) and
    ``in_field`` (whether a field deck plays it)."""
    archive, copies = d["archive"], d["deck_cards"]
    n = archive.height
    best = archive.sort("share_heldout", descending=True).head(TOP)["elite_id"]
    used = copies.group_by("card").agg(
        (pl.len() / n).alias("elites"),
        (pl.col("elite_id").is_in(best.implode()).sum() / min(TOP, n)).alias("top"),
        pl.col("copies").mean().alias("copies"))
    field = set(d["field_cards"]["card"])
    return (d["cards"].select(pl.col("name").alias("card"), "type", "branch", "rarity", "cost")
            .join(used, on="card", how="left")
            .with_columns(pl.col("elites").fill_null(0.0), pl.col("top").fill_null(0.0),
                          pl.col("card").is_in(sorted(field)).alias("in_field")))


def heatmap(d: dict[str, Any]) -> Image:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    a = d["archive"]
    rows = sorted(set(a["cell_row"]))
    n_rows = int(max(a["cell_row"].max(), 0)) + 1
    n_cols = int(max(a["cell_col"].max(), 0)) + 1
    labels = {r["cell_row"]: r["row"] for r in a.iter_rows(named=True)}
    cols = {r["cell_col"]: f"{r['col_lo']:g}-{r['col_hi']:g}" for r in a.iter_rows(named=True)}
    grid = np.full((n_rows, n_cols), np.nan)
    ids = {}
    for r in a.iter_rows(named=True):
        grid[r["cell_row"], r["cell_col"]] = 100 * r["share_heldout"]
        ids[(r["cell_row"], r["cell_col"])] = r["elite_id"]
    fig, ax = plt.subplots(figsize=(1.1 * n_cols + 2.5, 0.75 * n_rows + 1.6))
    im = ax.imshow(grid, cmap="viridis", vmin=np.nanmin(grid) if len(rows) else 0,
                   vmax=np.nanmax(grid) if len(rows) else 100, aspect="auto")
    for (i, j), k in ids.items():
        ax.text(j, i, f"{grid[i, j]:.0f}%\n#{k:02d}", ha="center", va="center", fontsize=8,
                color="white" if grid[i, j] < np.nanmean(grid) else "black")
    ax.set_yticks(range(n_rows), [labels.get(i, "") for i in range(n_rows)])
    ax.set_xticks(range(n_cols), [cols.get(j, "") for j in range(n_cols)], rotation=30)
    ax.set_xlabel("mean turn of the wins" if d["manifest"].get("cells") == "path-speed"
                  else "share of the cards in the main Branch")
    fig.colorbar(im, ax=ax, label="held-out win share (%)")
    ax.set_title("The archive: each cell's strongest deck (#elite id)")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return Image("heatmap", buf.getvalue(), "png", "the archive's cells, held-out share")


def _pct(x: float | None, lo: float | None = None, hi: float | None = None) -> str:
    if x is None:
        return ""
    s = f"{100 * x:.1f}%"
    return s if lo is None else f"{s} [{100 * lo:.1f}, {100 * hi:.1f}]"


def _table(head: list[str], rows: list[list[Any]], raw: set[int] = frozenset()) -> str:
    h = "".join(f"<th>{esc(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{c if i in raw else esc(c)}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f'<div class="scroll"><table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table></div>'


def render(d: dict[str, Any], root: Path, hub: str = "") -> tuple[str, str]:
    """(index.html, summary.md) of a discovery dir; ``hub``: the way from the page to the
    folder of the run report it sits in, where a Card power page may be
    (``links.hub_prefix``)."""
    m, a = d["manifest"], d["archive"].sort("elite_id")
    g, s = m["games"], m["search"]
    r = s["racing"]
    use = card_use(d)
    n_cards = use.height
    never = use.filter(pl.col("elites") == 0)
    never_out = never.filter(~pl.col("in_field"))
    out_of_field = use.filter(~pl.col("in_field"))
    chosen_out = out_of_field.filter(pl.col("elites") > 0)
    same_pilot = a.filter(~pl.col("tuned"))  # a tuned pilot's held-out share is another pilot's
    curse = (float((same_pilot["share_search"] - same_pilot["share_heldout"]).mean())
             if same_pilot.height else 0.0)
    beyond = a.filter(pl.col("beyond_four"))
    f = d["field"].sort("share_heldout", descending=True)
    best_field = f.row(0, named=True)
    above = a.filter(pl.col("share_heldout_lo") > best_field["share_heldout_hi"])
    lead = (
        f"{s['elites']} elites in {s['elites']} of {s['cells']} cells from "
        f"{s['children']:,} decks tried over {s['generations']} generations"
        + (f" ({s['decks_per_million_games']:,.0f} per million games, {s['learned']:,} of them "
           "the block swaps the search learned to expect most of)"
           if "learned" in s else "") + f"; {g['total']:,} "
        f"games in {m['seconds']:.0f} s (search {g['search']:,}, held-out {g['heldout']:,}, "
        f"metagame {g['matrix']:,}). Racing played {r['played']:,} search games where running "
        f"every deck to the end would have played {r['flat']:,} ({100 * r['saved']:.0f}% "
        "saved). The shares below are re-measured on deals of a seed the search never used: "
        f"the search's own scores were {100 * curse:+.1f} pp above them on average, over the "
        "elites that kept their pilot (the winner's curse of picking the best of many noisy "
        f"scores). {int(a['tuned'].sum())} elite{'s' if int(a['tuned'].sum()) != 1 else ''} "
        f"play{'s' if int(a['tuned'].sum()) == 1 else ''} a pilot `tune` fitted to "
        f"{'it' if int(a['tuned'].sum()) == 1 else 'them'} "
        "(kept only on a held-out gain)."
    )
    verdict = [
        f"{above.height} of {a.height} elites beat the best field deck "
        f"({esc(best_field['deck'])}, {_pct(best_field['share_heldout'])}) with intervals "
        "apart.",
        f"{never.height} of {n_cards} cards are in no elite; {never_out.height} of them are "
        f"in no field deck either. Of the {out_of_field.height} cards no field deck plays, "
        f"the search chose {chosen_out.height}.",
        f"{beyond.height} elite{'s play' if beyond.height != 1 else ' plays'} more than 4 copies of a Pillar or Rights card (Art. V "
        "sets no limit on those, R4)" + (
            f"; the best of them holds {_pct(beyond.sort('share_heldout')[-1, 'share_heldout'])}"
            if beyond.height else "") + ".",
    ]
    checked = yardstick_lines(d)
    img = heatmap(d)
    # best deck per cell
    cells = []
    copies = d["deck_cards"].join(d["cards"].select(pl.col("name").alias("card"), "type"),
                                  on="card", how="left")
    for row in a.iter_rows(named=True):
        listed = copies.filter(pl.col("elite_id") == row["elite_id"]).sort(["type", "card"])
        deck = "<br>".join(esc(f"{c['copies']} {c['card']}") for c in listed.iter_rows(named=True))
        pilot = (f"{row['pilot']} (tuned from {row['pilot_base']}, "
                 f"{100 * row['tune_gain']:+.1f} pp)" if row["tuned"] else row["pilot"])
        cells.append([f"#{row['elite_id']:02d}", row["cell"], pilot,
                      _pct(row["share_heldout"], row["share_heldout_lo"], row["share_heldout_hi"]),
                      _pct(row["share_search"]),
                      f"{100 * row['edge']:+.1f} pp [{100 * row['edge_lo']:+.1f}, "
                      f"{100 * row['edge_hi']:+.1f}]",
                      row["main_path"] or "", f"{row['win_turn']:.1f}", row["pillars"],
                      row["rights"], row["most_copies"],
                      f"<details><summary>{esc(row['deck_file'])}</summary>{deck}</details>"])
    # UAs are left out: every deck holds exactly three (Art. IV §3), so a UA in many
    # elites says what the law requires, not what players choose.
    staples = use.filter(pl.col("type") != "ua").sort(["elites", "top"], descending=True
                                                      ).head(20)
    staple_rows = [[c["card"], c["type"], c["branch"], f"{100 * c['elites']:.0f}%",
                    f"{100 * c['top']:.0f}%", f"{c['copies']:.1f}" if c["copies"] else "",
                    "yes" if c["in_field"] else "no"] for c in staples.iter_rows(named=True)]
    never_html = []
    for t in ("pillar", "rights", "ua", "attack", "defense", "freedom", "bill"):
        names = never.filter(pl.col("type") == t).sort("card")
        if names.height:
            items = ", ".join(esc(c["card"]) + ("" if c["in_field"] else "*")
                              for c in names.iter_rows(named=True))
            never_html.append(f"<p><b>{t}</b> ({names.height}): {items}</p>")
    field_rows = [[c["deck"], c["policy"], _pct(c["share_heldout"], c["share_heldout_lo"],
                                                c["share_heldout_hi"]), c["elites_above"]]
                  for c in f.iter_rows(named=True)]
    mt = d["matchups"]
    names = list(dict.fromkeys(mt["deck"]))
    mix = dict(zip(mt["deck"], mt["mix"], strict=True))
    cell = {(x["deck"], x["opponent"]): x for x in mt.iter_rows(named=True)}
    matrix_rows = [[nm, f"{100 * mix[nm]:.0f}%"] + [
        f"{100 * cell[(nm, o)]['share']:.0f} [{100 * cell[(nm, o)]['share_lo']:.0f}, "
        f"{100 * cell[(nm, o)]['share_hi']:.0f}]" for o in names] for nm in names]
    paths = m["metagame"]["paths"]
    repro = m.get("command") or "rnr-sim discover"
    html = "".join([
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{esc('Discovery: ' + root.name)}</title><style>{CSS}</style></head><body>",
        f"<h1>The decks players will find: {esc(root.name)}</h1>",
        f"<p class='sub'>seed {m['seed']}, budget {m['budget']:,} games, cells "
        f"{esc(m.get('cells', ''))}, catalog {esc(m['catalog']['name'])}, field of "
        f"{len(m['field'])} decks</p>",
        f"<p class='lead'>{esc(lead)}</p>",
        "<div class='verdict'>" + "".join(f"<p><b>{esc(x)}</b></p>" for x in checked[:1])
        + "<ol>" + "".join(f"<li>{v}</li>" for v in verdict) + "</ol>"
        + ("<ul>" + "".join(f"<li>{esc(x)}</li>" for x in checked[1:-1]) + "</ul>"
           f"<p class='note'>{esc(checked[-1])}</p>" if checked else "") + "</div>",
        "<h2>The archive</h2>", img.tag(),
        "<h2>The best deck of each cell</h2>",
        "<p class='note'>Held-out share: against the field, 95% interval over deals (a deal: "
        "one field deck, both seat orders). Edge: paired difference from the best field deck "
        "on the same deals.</p>",
        _table(["elite", "cell", "pilot", "held-out share", "search share",
                "edge over best field deck", "main path", "win turn", "Pillars", "Rights",
                "most copies", "list"], cells, raw={11}),
        "<h2>Cards: staples and never chosen</h2>",
        "<p class='note'>Staples: the cards most elites play, UAs left out (every deck must "
        "hold three).</p>",
        _table(["card", "Order", "Branch", "of elites", f"of the {TOP} best", "copies",
                "in a field deck"], staple_rows),
        f"<h3>In no elite ({never.height} of {n_cards}; * in no field deck either)</h3>",
        "".join(never_html) or "<p>Every card is in some elite.</p>",
        links.power_link_html(hub),
        "<h2>The field in the discovered metagame</h2>",
        _table(["deck", "pilot", "held-out share", "elites above it"], field_rows),
        "<h2>The metagame</h2>",
        "<p class='note'>Row deck's win share against the column deck (%, 95% interval over "
        f"{mt['deals'][0]} deals, both seat orders); mix: the Nash equilibrium of the "
        "matrix.</p>",
        _table(["deck", "mix", *names], matrix_rows),
        "<p>Paths of the metagame's wins (games weighted by the mix): " + ", ".join(
            f"{esc(k)} {100 * v:.0f}%" for k, v in paths.items()) + ".</p>",
        f"<h2>Reproduce</h2><pre>{esc(repro)}\nrnr-sim report {esc(shlex.quote(str(root)))}"
        f"</pre><script>{links.PROBE_SCRIPT}</script></body></html>",
    ])
    md_lines = [f"# The decks players will find: {root.name}", "", lead, ""]
    md_lines += [f"**{checked[0]}**", ""] if checked else []
    md_lines += [f"- {v}" for v in verdict + checked[1:-1]]
    md_lines += ["", f"_{checked[-1]}_"] if checked else []
    md_lines += ["", "| elite | cell | pilot | held-out | search |",
                                               "|---|---|---|---|---|"]
    md_lines += [f"| {c[0]} | {c[1]} | {c[2]} | {c[3]} | {c[4]} |" for c in cells]
    return html, "\n".join(md_lines).replace("<b>", "").replace("</b>", "") + "\n"


def yardstick_lines(d: dict[str, Any]) -> list[str]:
    """The best elites checked with the yardstick (``discover --yardstick``): the sentence a
    designer reads first (a flip named in it), one line an elite, then what was played;
    nothing without the check."""
    from rnr_sim import yardstick as ys

    if "yardstick" not in d:
        return []
    checks = ys.from_frame(d["yardstick"])
    e = d["manifest"].get("yardstick") or {}
    row = e.get("budget") or ()
    note = (f"The yardstick: the {len(checks)} best elites replayed against the field on "
            f"the first {e.get('deals_per_field_deck', '?')} held-out deals of each field "
            "deck with the search pilot in every seat"
            + (f" ({ys.budget_words(row)}; each deck's own pilot its rollout pilot and "
               "prior)" if row else "")
            + f", {e.get('games', 0):,} games in {e.get('seconds', '?')} s. Each figure with "
            "the yardstick is the held-out share moved by the change the stronger pilot "
            "makes on those same deals (paired by deal). Holds: its 95% interval stays "
            "above 50%; flips: below; not settled: across.")
    return [ys.summary_sentence(checks), *ys.check_lines(checks), note]


def build_discovery_report(path: str | Path, out: str | Path) -> Path:
    """Write ``out/index.html`` and ``out/summary.md`` for a discovery dir."""
    from rnr_sim.files import atomic_write
    from rnr_sim.report import pages

    root, out = Path(path), Path(out)
    d = read(root)
    html, md = render(d, root, links.hub_prefix(out))
    pages.claim(out, root, "discovery")
    atomic_write(out / "index.html", lambda tmp: tmp.write_text(html, encoding="utf-8"))
    atomic_write(out / "summary.md", lambda tmp: tmp.write_text(md, encoding="utf-8"))
    pages.mark(out, root, "discovery")
    return out / "index.html"
