"""Build the report: index.html (self-contained), summary.md and one CSV per table."""

from __future__ import annotations

import base64
import html
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from rnr_sim.analytics import compute_metrics, load_run
from rnr_sim.analytics.metrics import Metrics
from rnr_sim.errors import InputError
from rnr_sim.report import plots, tables, text
from rnr_sim.report.format import EMPTY, branch_label, count

CSS = """
body{font:15px/1.5 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#222;
 max-width:1180px;margin:0 auto;padding:0 20px 60px;background:#fcfcfb}
h1{font-size:26px;margin:28px 0 2px}h2{font-size:20px;margin:38px 0 6px;
 border-bottom:2px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:20px 0 6px}
.sub{color:#666;margin:0 0 14px}nav a{margin-right:14px;color:#2471a3;text-decoration:none}
p.lead{max-width:900px}.verdict{background:#fff;border:1px solid #ddd;border-left:5px solid
 #2471a3;padding:10px 18px 12px;margin:16px 0}.verdict ol{padding-left:22px;margin:8px 0}
.verdict li{margin:8px 0}.verdict .score{color:#777;font-size:12px}.note{color:#666;
 font-size:12.5px}table{border-collapse:collapse;margin:8px 0 14px;font-size:12.5px;
 background:#fff}th,td{border:1px solid #ddd;padding:4px 7px;text-align:left;
 vertical-align:top}th{background:#f1f3f4;font-weight:600}tr.hl td{background:#fff7d6}
.scroll{overflow-x:auto}img{max-width:100%;height:auto;display:block;margin:8px 0}
.repro{background:#f4f6f7;border:1px solid #d5dbdb;padding:10px 18px;font-size:13px}
.repro td.off{background:#fdebd0;font-weight:600}code,pre{font:12.5px ui-monospace,Menlo,
 Consolas,monospace}pre{background:#fff;border:1px solid #ddd;padding:8px;white-space:
 pre-wrap;word-break:break-all}
"""
CARD_ROWS_HTML = 60


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


@dataclass
class Image:
    name: str
    data: bytes
    fmt: str
    alt: str

    def tag(self) -> str:
        mime = "image/png" if self.fmt == "png" else "image/svg+xml"
        b64 = base64.b64encode(self.data).decode("ascii")
        return f'<img alt="{esc(self.alt)}" src="data:{mime};base64,{b64}">'


def html_table(t: tables.Table) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in t.columns)
    body = []
    for row, hl in zip(t.rows, t.highlight, strict=True):
        cls = ' class="hl"' if hl else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>")
    cap = f"<caption>{esc(t.caption)}</caption>" if t.caption else ""
    return (f'<div class="scroll"><table>{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def md(s: Any) -> str:
    """Text for Markdown: characters a renderer would read as markup are backslashed."""
    out = str(s).replace("\\", "\\\\")
    for ch in "<>*_`":
        out = out.replace(ch, "\\" + ch)
    return out


def md_table(t: tables.Table) -> str:
    def cell(s: str) -> str:
        return md(s).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(c) for c in t.columns) + " |",
             "|" + "---|" * len(t.columns)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in t.rows]
    return "\n".join(lines)


# ---------------------------------------------------------------- reproduce
def reproduce_command(m: Metrics) -> str:
    man = m.run.manifest
    if isinstance(man.get("command"), str):
        return man["command"]
    args = ["rnr-sim", "run"]
    args += [str(d.get("path") or d.get("name")) for d in man.get("decks") or []
             if isinstance(d, dict)]
    deals = m.run.games.group_by("table_id").agg(pl.col("deal").n_unique()).select(
        pl.col("deal").max()).collect().item()
    if deals:
        args += ["--games", str(deals)]
    if man.get("players"):
        args += ["--players", str(man["players"])]
    if man.get("seed") is not None:
        args += ["--seed", str(man["seed"])]
    rules = man.get("rules") or {}
    if rules.get("source"):
        args += ["--rules", str(rules["source"])]
    cat = man.get("catalog") or {}
    if cat.get("path"):
        args += ["--cards", str(cat["path"])]
    return " ".join(shlex.quote(a) for a in args)


def reproduce_rows(m: Metrics) -> list[tuple[str, str]]:
    man = m.run.manifest
    games = m.length.filter(pl.col("path") == "all")["games"].item()
    done, total = man.get("games_done"), man.get("games_total")
    size = f"{count(games)} games in this run dir"
    if isinstance(done, int) and isinstance(total, int) and done < total:
        size += f" (an incomplete run: {count(done)} of {count(total)} games played)"
    tables_ = man.get("tables") or []
    size += (f"; {man.get('players', m.players)} players; {len(m.deck_order)} decks; "
             f"{len(tables_)} tables" + (" including mirrors" if man.get("mirrors") else ""))
    cat = man.get("catalog") or {}
    rules = man.get("rules") or {}
    rows = [
        ("Run", f"{m.run.name} (created {man.get('created', EMPTY)}, rnr-sim "
                f"{man.get('tool_version', EMPTY)})"),
        ("Size", size),
        ("Seed", str(man.get("seed", EMPTY))),
        ("Rules profile", f"{rules.get('name', EMPTY)}"
         + (f" from {rules['source']}" if rules.get("source") else "")),
        ("Catalog", f"{cat.get('name', EMPTY)} v{cat.get('version', EMPTY)}, "
                    f"sha256 {cat.get('sha256', EMPTY)}"),
    ]
    timings = man.get("timings") or {}
    if timings:
        rows.append(("Timings", ", ".join(f"{k} {v}" for k, v in timings.items())))
    return rows


def switches_table(m: Metrics) -> tables.Table:
    rules = m.run.manifest.get("rules") or {}
    switches = rules.get("switches") or {}
    changed = m.run.manifest.get("rules_changed") or {}
    names = list(switches) + [k for k in changed if k not in switches]
    rows, hl = [], []
    for k in names:
        v = switches.get(k, changed.get(k))
        off = k in changed
        rows.append([k, json.dumps(v), "off default" if off else "default"])
        hl.append(off)
    return tables.Table(["Switch", "Value", ""], rows, hl)


def decks_repro_table(m: Metrics) -> tables.Table:
    rows = []
    for d in m.run.manifest.get("decks") or []:
        if isinstance(d, dict):
            rows.append([str(d.get("name", EMPTY)), str(d.get("policy") or EMPTY),
                         str(d.get("path") or EMPTY), str(d.get("sha256") or EMPTY)])
    return tables.Table(["Deck", "Policy", "List", "sha256"], rows)


# ---------------------------------------------------------------- figures
def make_images(m: Metrics, fmt: str) -> dict[str, Image]:
    figs = {
        "matchups": (plots.heatmap_plot(m.matchups, m.deck_order,
                                        "row deck's win rate against column deck"),
                     "matchup win-rate heatmap"),
        "paths": (plots.path_bars_plot(m.paths_by_deck, m.deck_order),
                  "victory paths per deck"),
        "seats": (plots.seat_plot(m.seats), "first-seat win rate"),
        "branches": (plots.branch_heatmap_plot(m.branch_matchups, m.branch_order),
                     "branch against branch win rates"),
        "cards": (plots.card_scatter_plot(m.cards), "card play rate against IWD"),
        "length": (plots.length_plot(m.length_hist), "game length by path"),
        "lp": (plots.lp_plot(m.lp) if m.lp is not None else None, "LP over turns"),
    }
    return {k: Image(k, plots.render(f, fmt), fmt, alt) for k, (f, alt) in figs.items()
            if f is not None}


# ---------------------------------------------------------------- CSV
def write_csvs(m: Metrics, out: Path) -> list[str]:
    frames = {
        "decks": m.decks,
        "matchups": m.matchups,
        "nash": m.nash,
        "paths_overall": m.paths_overall,
        "paths_by_deck": m.paths_by_deck,
        "paths_by_policy": m.paths_by_policy,
        "paths_by_branch": m.paths_by_branch,
        "seats": m.seats,
        "branches": m.branches,
        "branch_summary": m.branch_summary,
        "branch_matchups": m.branch_matchups,
        "cards": m.cards,
        "cards_by_deck": m.cards_by_deck,
        "game_length": m.length,
        "game_length_histogram": m.length_hist,
        "findings": pl.DataFrame(
            [{"rank": i + 1, "kind": f.kind, "subject": f.subject, "value": f.value,
              "lo": f.lo, "hi": f.hi, "fair": f.fair, "n": f.n, "score_pp": f.score}
             for i, f in enumerate(m.findings)],
            schema={"rank": pl.Int64, "kind": pl.String, "subject": pl.String,
                    "value": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
                    "fair": pl.Float64, "n": pl.Int64, "score_pp": pl.Float64},
        ),
    }
    if m.lp is not None:
        frames["lp_bands"] = m.lp
    for name, df in frames.items():
        df.write_csv(out / f"{name}.csv")
    return [f"{n}.csv" for n in frames]


# ---------------------------------------------------------------- HTML and Markdown
SECTIONS = [
    ("verdict", "Verdict"), ("decks", "Decks"), ("matchups", "Matchups and the Nash metagame"),
    ("paths", "Victory paths"), ("seats", "Seat advantage"), ("branches", "Branches"),
    ("cards", "Cards"), ("length", "Game length"), ("lp", "Liberty Points over turns"),
    ("reproduce", "Reproduce"),
]


def _verdict_html(m: Metrics) -> str:
    if not m.findings:
        items = f"<p>{esc(text.verdict_empty(m))}</p>"
    else:
        lis = "".join(
            f"<li><strong>{esc(text.finding_title(f))}.</strong> {esc(text.finding_text(f))} "
            f'<span class="score">(score {f.score:.1f} pp)</span></li>'
            for f in m.findings
        )
        items = f"<ol>{lis}</ol>"
        if len(m.findings) < 3:
            items += "<p>Nothing else clears its 95% interval.</p>"
    return (f'<div class="verdict">{items}<p class="note">{esc(text.scoring_rule())}</p></div>')


def render_html(m: Metrics, images: dict[str, Image], csvs: list[str]) -> str:
    man = m.run.manifest
    games = m.length.filter(pl.col("path") == "all")["games"].item()
    rules = man.get("rules") or {}
    changed = man.get("rules_changed") or {}
    sub = (f"{count(games)} games · {man.get('players', m.players)} players · "
           f"{len(m.deck_order)} decks · rules: {rules.get('name', EMPTY)}"
           + (f" ({len(changed)} switch{'es' if len(changed) != 1 else ''} off default)"
              if changed else "")
           + f" · seed {man.get('seed', EMPTY)}")
    has_lp = "lp" in images
    nav = " ".join(f'<a href="#{k}">{esc(t)}</a>' for k, t in SECTIONS
                   if k != "lp" or has_lp)

    def img(key: str) -> str:
        return images[key].tag() if key in images else ""

    def section(key: str, title: str, lead: str, *body: str) -> str:
        return (f'<section id="{key}"><h2>{esc(title)}</h2><p class="lead">{esc(lead)}</p>'
                + "".join(body) + "</section>")

    cards_note = (f'<p class="note">Showing {min(CARD_ROWS_HTML, m.cards.height)} of '
                  f"{m.cards.height} cards (flagged first, then by IWD); every card is in "
                  f"cards.csv, and per deck in cards_by_deck.csv. OH: opening hand; GD: drawn "
                  f"later; GIH: either; GNS: never seen. Intervals are 95% (Wilson; IWD: "
                  f"normal approximation).</p>")
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc('Balance report: ' + m.run.name)}</title><style>{CSS}</style></head><body>",
        f"<h1>Revolt N Reign balance report: {esc(m.run.name)}</h1>",
        f'<p class="sub">{esc(sub)}</p><nav>{nav}</nav>',
        '<section id="verdict"><h2>Verdict</h2>',
        _verdict_html(m), "</section>",
        section("decks", "Decks", text.decks_lead(m), html_table(tables.decks_table(m)),
                img("paths")),
        section("matchups", "Matchups and the Nash metagame", text.matchups_lead(m),
                img("matchups"), "<h3>Win-rate matrix</h3>",
                html_table(tables.matrix_table(m.matchups, m.deck_order)),
                "<h3>Nash equilibrium</h3>", html_table(tables.nash_table(m)),
                '<p class="note">Payoff = row win rate − 50% (draws split evenly), a '
                "symmetric zero-sum game solved exactly by linear programming. Highlighted "
                "decks are in the equilibrium's support.</p>"),
        section("paths", "Victory paths", text.paths_lead(m),
                html_table(tables.paths_table(m.paths_overall, "Games")),
                "<h3>By deck</h3>", html_table(tables.paths_table(m.paths_by_deck, "Deck")),
                "<h3>By policy</h3>", html_table(tables.paths_table(m.paths_by_policy, "Policy")),
                "<h3>By main branch</h3>",
                html_table(tables.paths_table(m.paths_by_branch, "Branch", branch_label)),
                '<p class="note">Shares are of the group\'s wins, with 95% Wilson intervals. '
                "Highlighted rows differ from equal paths (χ² p < 0.05).</p>"),
        section("seats", "Seat advantage", text.seats_lead(m), img("seats"),
                html_table(tables.seats_table(m))),
        section("branches", "Branches", text.branches_lead(m),
                html_table(tables.branches_table(m)), img("branches"),
                html_table(tables.matrix_table(m.branch_matchups, m.branch_order,
                                               branch_label))),
        section("cards", "Cards", text.cards_lead(m), img("cards"),
                html_table(tables.cards_table(m.cards, CARD_ROWS_HTML)), cards_note),
        section("length", "Game length", text.length_lead(m), img("length"),
                html_table(tables.length_table(m))),
    ]
    if has_lp:
        parts.append(section("lp", "Liberty Points over turns", text.lp_lead(m), img("lp")))
    repro = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>"
                    for k, v in reproduce_rows(m))
    sw = switches_table(m)
    sw_rows = "".join(
        f"<tr><td{' class=off' if hl else ''}>{esc(r[0])}</td>"
        f"<td{' class=off' if hl else ''}>{esc(r[1])}</td><td>{esc(r[2])}</td></tr>"
        for r, hl in zip(sw.rows, sw.highlight, strict=True)
    )
    parts.append(
        '<section id="reproduce"><h2>Reproduce</h2><div class="repro">'
        f"<table>{repro}</table><h3>Rules switches</h3>"
        + (f"<table><tr><th>Switch</th><th>Value</th><th></th></tr>{sw_rows}</table>"
           if sw.rows else f"<p>{EMPTY}</p>")
        + "<h3>Decks</h3>" + html_table(decks_repro_table(m))
        + "<h3>Command</h3>"
        + f"<pre>{esc(reproduce_command(m))}\nrnr-sim report {esc(shlex.quote(str(m.run.path)))}</pre>"
        + f'<p class="note">Tables as CSV beside this page: {esc(", ".join(csvs))}.</p>'
        + "</div></section></body></html>"
    )
    return "\n".join(parts)


def render_markdown(m: Metrics) -> str:
    man = m.run.manifest
    games = m.length.filter(pl.col("path") == "all")["games"].item()
    out = [f"# Balance report: {md(m.run.name)}", "",
           f"{count(games)} games, {man.get('players', m.players)} players, "
           f"{len(m.deck_order)} decks, seed {man.get('seed', EMPTY)}.", "", "## Verdict", ""]
    if m.findings:
        for i, f in enumerate(m.findings, 1):
            out.append(f"{i}. **{md(text.finding_title(f))}.** {md(text.finding_text(f))} "
                       f"(score {f.score:.1f} pp)")
    else:
        out.append(md(text.verdict_empty(m)))
    out += ["", f"_{md(text.scoring_rule())}_", ""]
    blocks = [
        ("Decks", text.decks_lead(m), [tables.decks_table(m)]),
        ("Matchups and the Nash metagame", text.matchups_lead(m),
         [tables.matrix_table(m.matchups, m.deck_order), tables.nash_table(m)]),
        ("Victory paths", text.paths_lead(m),
         [tables.paths_table(m.paths_overall, "Games"),
          tables.paths_table(m.paths_by_deck, "Deck")]),
        ("Seat advantage", text.seats_lead(m), [tables.seats_table(m)]),
        ("Branches", text.branches_lead(m),
         [tables.branches_table(m),
          tables.matrix_table(m.branch_matchups, m.branch_order, branch_label)]),
        ("Cards", text.cards_lead(m), [tables.cards_table(m.cards, 25)]),
        ("Game length", text.length_lead(m), [tables.length_table(m)]),
    ]
    for title, lead, tbls in blocks:
        out += [f"## {title}", "", md(lead), ""]
        for t in tbls:
            out += [md_table(t), ""]
    out += ["## Reproduce", ""]
    out += [f"- **{k}:** {md(v)}" for k, v in reproduce_rows(m)]
    changed = man.get("rules_changed") or {}
    out.append("- **Switches off default:** " + (
        md(", ".join(f"{k} = {json.dumps(v)}" for k, v in changed.items())) if changed
        else "all at their defaults"))
    decks = decks_repro_table(m)
    out += ["", md_table(decks), "", "```", reproduce_command(m),
            f"rnr-sim report {shlex.quote(str(m.run.path))}", "```", ""]
    return "\n".join(out)


def build_report(run_dir: str | Path, out_dir: str | Path, svg: bool = False) -> Path:
    """Write ``index.html``, ``summary.md``, the tables as CSV and the figures to ``out_dir``.

    ``index.html`` is self-contained (figures inline as base64 data URIs, inline CSS, no
    network). Figures are PNG, or SVG with ``svg=True``; they are also written to
    ``out_dir/plots/``. Returns the path of index.html. Raises InputError for a missing or
    invalid run dir, or an out_dir that cannot be written.
    """
    run = load_run(run_dir)
    out = Path(out_dir)
    try:
        (out / "plots").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{out}: cannot create the report folder ({e.strerror})") from None
    m = compute_metrics(run)
    fmt = "svg" if svg else "png"
    images = make_images(m, fmt)
    index = out / "index.html"
    try:
        for img in images.values():
            (out / "plots" / f"{img.name}.{fmt}").write_bytes(img.data)
        csvs = write_csvs(m, out)
        (out / "summary.md").write_text(render_markdown(m), encoding="utf-8")
        index.write_text(render_html(m, images, csvs), encoding="utf-8")
    except OSError as e:
        raise InputError(f"{out}: cannot write the report ({e.strerror or e})") from None
    return index


__all__ = ["build_report"]
