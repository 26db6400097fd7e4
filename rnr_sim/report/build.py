"""Build the report: index.html (self-contained), summary.md and one CSV per table."""

from __future__ import annotations

import hashlib
import html
import json
import shlex
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

from rnr_sim import __version__
from rnr_sim.analytics import compute_metrics, load_run
from rnr_sim.analytics.metrics import Metrics
from rnr_sim.analytics.run import run_progress
from rnr_sim.display import EMPTY, branch_label, count, interval, pct
from rnr_sim.errors import InputError
from rnr_sim.report import expansion as expansion_section
from rnr_sim.report import links, tables, text
from rnr_sim.report import yardstick as yardstick_section
from rnr_sim.report.figures import FIGURES, FigureProcess, Image, make_images
from rnr_sim.skill import read as read_skill
from rnr_sim.yardstick import frame as frame_of_checks
from rnr_sim.yardstick import run_checks as yardstick_checks

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
.banner{background:#fef5e7;border:1px solid #f0b27a;border-left:5px solid #d35400;
 padding:8px 18px;margin:12px 0}.banner p{margin:4px 0}.method{max-width:900px}
.cardtools{display:flex;flex-wrap:wrap;gap:14px;align-items:center;margin:10px 0 4px;
 font-size:13px}.cardtools input[type=search]{font:inherit;padding:4px 8px;width:300px;
 border:1px solid #bbb;border-radius:3px}.cards th[data-col]{cursor:pointer;
 user-select:none;white-space:nowrap}.cards th[data-col]:hover{background:#e3e7ea}
.cards th[aria-sort=ascending]::after{content:" \\25B2";font-size:9px}
.cards th[aria-sort=descending]::after{content:" \\25BC";font-size:9px}
.cards td{white-space:nowrap}.cards td.wrap{white-space:normal;min-width:180px}
.cards .x{display:none}.cards.all .x{display:table-cell}
.cards td.num{text-align:right}#js-errors{color:#b03a2e}#js-errors:empty{display:none}
"""
#: The report's own record in its folder: which run it reports and the files it wrote.
MARKER = "report.json"
#: Manifest keys that fix a run's results (not when it was made or how far it got).
RUN_IDENTITY = ("seed", "games_requested", "players", "mirrors", "vs", "allow_illegal",
                "rules", "rules_changed", "rules_sha256", "catalog", "decks", "tables",
                "policies")
#: Names an rnr-sim report writes, for folders written before the report.json marker.
REPORT_SUFFIXES = (".html", ".md", ".csv", ".json")


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


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


# ---------------------------------------------------------------- the card table
#: The card table's behaviour: click a header to sort (numbers largest first, again to
#: flip; a row without a value always last), type in the box to filter (every word must
#: appear in the card's name, type, branch or a deck that holds it), tick the box for
#: every column. Errors go on the page (#js-errors), where a reader and the test see them.
CARD_SCRIPT = """
(function () {
  var errors = document.getElementById("js-errors");
  function report(msg) { if (errors) { errors.textContent += msg + "\\n"; } }
  window.addEventListener("error", function (e) { report("error: " + e.message); });
  try {
    var table = document.getElementById("card-table");
    if (!table) { return; }
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var box = document.getElementById("card-filter");
    var all = document.getElementById("card-all");
    var shown = document.getElementById("card-count");
    var setBox = document.getElementById("card-set");
    rows.forEach(function (r, i) { r.dataset.i = i; });
    function key(row, col) {
      var td = row.cells[col];
      var v = td.getAttribute("data-v");
      return v === null || v === "" ? null : v;
    }
    function sortBy(th) {
      var col = th.cellIndex;
      var numeric = th.getAttribute("data-num") === "1";
      var dir = th.getAttribute("aria-sort") === (numeric ? "descending" : "ascending")
        ? (numeric ? "ascending" : "descending") : (numeric ? "descending" : "ascending");
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) {
        c.removeAttribute("aria-sort");
      });
      th.setAttribute("aria-sort", dir);
      var sign = dir === "ascending" ? 1 : -1;
      rows.sort(function (a, b) {
        var x = key(a, col), y = key(b, col);
        if (x === null || y === null) {
          if (x === y) { return a.dataset.i - b.dataset.i; }
          return x === null ? 1 : -1;
        }
        var d = numeric ? Number(x) - Number(y) : (x < y ? -1 : x > y ? 1 : 0);
        return d !== 0 ? sign * d : a.dataset.i - b.dataset.i;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    }
    function filter() {
      var words = box.value.toLowerCase().split(/\\s+/).filter(Boolean);
      var n = 0;
      rows.forEach(function (r) {
        var s = r.getAttribute("data-s");
        var ok = words.every(function (w) { return s.indexOf(w) >= 0; }) &&
          (!setBox || !setBox.value || r.getAttribute("data-set") === setBox.value);
        r.hidden = !ok;
        if (ok) { n += 1; }
      });
      shown.textContent = "Showing " + n + " of " + rows.length + " cards";
    }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      if (!th.hasAttribute("data-col")) { return; }
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(th); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(th); }
      });
    });
    box.addEventListener("input", filter);
    if (setBox) { setBox.addEventListener("change", filter); }
    all.addEventListener("change", function () { table.classList.toggle("all", all.checked); });
    filter();
    table.setAttribute("data-ready", "1");
  } catch (e) {
    report("error: " + e.message);
  }
})();
"""


def _sort_value(v: float | str | None) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v != v:  # NaN
        return ""
    return repr(float(v)) if isinstance(v, (int, float)) else str(v)


def card_table_html(t: tables.CardTable) -> str:
    """The page's card table: every card, sortable and filterable (CARD_SCRIPT)."""
    head = "".join(
        f'<th data-col="{esc(c.key)}" data-num="{1 if c.numeric else 0}"'
        + (' class="x"' if not c.default else "")
        + (f' title="{esc(c.title)}"' if c.title else "") + f">{esc(c.header)}</th>"
        for c in t.columns)
    set_col = next((i for i, c in enumerate(t.columns) if c.key == "set"), None)
    sets = [] if set_col is None else sorted({str(row[set_col][1] or "") for row in t.rows} - {""})
    body = []
    for row, s, hl in zip(t.rows, t.search, t.highlight, strict=True):
        cells = []
        for c, (txt, v) in zip(t.columns, row, strict=True):
            cls = " ".join(x for x in ("x" if not c.default else "",
                                       "num" if c.numeric else "",
                                       "wrap" if c.key == "holders" else "") if x)
            cells.append(f'<td data-v="{esc(_sort_value(v))}"'
                         + (f' class="{cls}"' if cls else "") + f">{esc(txt)}</td>")
        in_set = (f' data-set="{esc(row[set_col][1] or "")}"' if len(sets) > 1 else "")
        body.append(f'<tr data-s="{esc(s)}"' + in_set + (' class="hl"' if hl else "") + ">"
                    + "".join(cells) + "</tr>")
    n = len(t.rows)
    tools = ('<div class="cardtools"><label>Filter: <input type="search" id="card-filter" '
             'placeholder="card, deck, type, branch or set" autocomplete="off"></label>'
             + ('<label>Set: <select id="card-set"><option value="">all</option>'
                + "".join(f'<option value="{esc(x)}">{esc(x)}</option>' for x in sets)
                + "</select></label>" if len(sets) > 1 else "")
             + '<label><input type="checkbox" id="card-all"> every column</label>'
             f'<span id="card-count">Showing {n} of {n} cards</span></div>')
    return (tools + '<div class="scroll"><table id="card-table" class="cards"><thead><tr>'
            + head + "</tr></thead><tbody>" + "".join(body) + "</tbody></table></div>")


# ---------------------------------------------------------------- banners
def banners(m: Metrics) -> list[str]:
    """Sentences that must be read before the verdict: a stopped run (games done of
    total), then what ``text.verdict_banners`` has to say (too few games...)."""
    out = []
    progress = run_progress(m.run.manifest)
    if progress is not None:
        done, total = progress
        planned = len(m.run.manifest.get("tables") or [])
        per_table = list(m.shape.games_per_table.values())
        reached = len(per_table)
        full = m.run.manifest.get("games_requested")
        players = m.run.manifest.get("players")
        cut = (sum(g < full * players for g in per_table)
               if isinstance(full, int) and isinstance(players, int) else 0)
        share = pct(done / total, 0) if total else EMPTY
        s = (f"A stopped run: {count(done)} of {count(total)} games played ({share}). Every "
             "figure below covers only the games played")
        if planned and reached < planned:
            s += (f", and {planned - reached} of the {planned} tables were never reached, so "
                  "their matchups are missing from every figure")
        if cut:
            s += f" ({cut} table{'s' if cut != 1 else ''} stopped part-way)"
        s += (f". Finish it with `rnr-sim run --resume {m.run.path}`, then report again.")
        out.append(s)
    more = getattr(text, "verdict_banners", None)
    if callable(more):
        out += [str(x) for x in more(m) if x]
    return out


# ---------------------------------------------------------------- reproduce
def reproduce_command(m: Metrics) -> str:
    man = m.run.manifest
    if isinstance(man.get("command"), str):
        return man["command"]
    args = ["rnr-sim", "run"]
    args += [str(d.get("path") or d.get("name")) for d in man.get("decks") or []
             if isinstance(d, dict)]
    deals = max(m.shape.deals_per_table.values(), default=None)
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
    sources = [src.get("path") for src in cat.get("sources") or [] if src.get("path")]
    if len(sources) > 1:  # a layered catalog: every file, in load order
        for path in sources:
            args += ["--cards", str(path)]
    elif cat.get("path"):
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
# ---------------------------------------------------------------- CSV
def _by_keys(matrix: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """A long-form matrix in the order of ``keys`` (rows, then columns)."""
    pos = {k: i for i, k in enumerate(keys)}
    return matrix.with_columns(
        pl.col("row").replace_strict(pos, default=len(keys)).alias("_r"),
        pl.col("col").replace_strict(pos, default=len(keys)).alias("_c"),
    ).sort("_r", "_c", "row", "col").drop("_r", "_c")


def csv_frames(m: Metrics) -> dict[str, pl.DataFrame]:
    """Every table of the report, each in a fixed row order (ties broken by name)."""
    key = tables.card_metric_key(m.cards)
    frames = {
        "decks": m.decks,
        "matchups": _by_keys(m.matchups, m.deck_order),
        "nash": m.nash,
        "paths_overall": m.paths_overall,
        "paths_by_deck": m.paths_by_deck,
        "paths_by_policy": m.paths_by_policy,
        "paths_by_branch": m.paths_by_branch,
        **({"paths_expected": m.paths_expected} if m.paths_expected is not None else {}),
        **({"paths_by_main_path": m.paths_by_main_path}
           if m.paths_by_main_path is not None else {}),
        "seats": m.seats,
        "branches": m.branches,
        "branch_summary": m.branch_summary,
        "branch_matchups": _by_keys(m.branch_matchups, m.branch_order),
        "cards": tables.card_order(m.cards),
        "cards_by_deck": m.cards_by_deck.sort(
            ["deck", key, "card"], descending=[False, True, False], nulls_last=True),
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
    return frames


# ---------------------------------------------------------------- HTML and Markdown
METHOD_TITLE = "How to read these numbers"
SECTIONS = [
    ("verdict", "Verdict"), ("decks", "Decks"), ("matchups", "Matchups and the Nash metagame"),
    ("paths", "Victory paths"), ("seats", "Seat advantage"), ("branches", "Branches"),
    ("cards", "Cards"), ("expansion", expansion_section.TITLE), ("length", "Game length"),
    ("lp", "Liberty Points over turns"),
    ("skill", "Skill"), ("method", METHOD_TITLE), ("reproduce", "Reproduce"),
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
    strong = text.strongest_decks(m)
    if strong:
        items += (f"<p><strong>{esc(text.STRONGEST_TITLE)}.</strong></p><ul>"
                  + "".join(f"<li>{esc(s)}</li>" for s in strong) + "</ul>")
    return (f'<div class="verdict">{items}<p class="note">{esc(text.scoring_rule())} How '
            f'every interval and figure is computed: <a href="#method">{esc(METHOD_TITLE)}'
            "</a>.</p></div>")


def _method_html(m: Metrics) -> str:
    """The one method section: a titled paragraph per topic (``text.method_sections``)."""
    return ('<section id="method"><h2>' + esc(METHOD_TITLE) + '</h2><div class="method">'
            + "".join(f"<h3>{esc(t)}</h3><p>{esc(body)}</p>"
                      for t, body in text.method_sections(m)) + "</div></section>")


def _nash_html(m: Metrics) -> str:
    """The Nash table (two players); with three or four there is none, nor for a run whose
    matchups leave pairs of decks unplayed (``--vs``): the section's lead says why."""
    nash = tables.nash_table(m) if m.players <= 2 else None
    if nash is None or not nash.rows:
        return ""
    return ("<h3>Nash equilibrium</h3>" + html_table(nash)
            + '<p class="note">Payoff = row win rate − 50% (draws split evenly), a symmetric '
            "zero-sum game solved exactly by linear programming. Highlighted decks are in "
            "the equilibrium's support. The interval is the 95% range of the share over "
            "resamples of the deals; \u201cin the mix\u201d is how often the deck's share "
            "is above 1% in those resamples.</p>")


def _banners_html(m: Metrics) -> str:
    items = banners(m)
    if not items:
        return ""
    return ('<div class="banner" role="alert">'
            + "".join(f"<p>{esc(b)}</p>" for b in items) + "</div>")


def skill_source_note(skill: pl.DataFrame, m: Metrics) -> str:
    """Where the Skill section comes from, and whether its decks are the run's."""
    seed = skill["seed"][0] if "seed" in skill.columns and len(skill) else None
    note = ("From skill.parquet in the run dir (rnr-sim skill --out"
            + (f", seed {seed}" if seed is not None else "") + "), also skill.csv.")
    run_decks = {str(d.get("name")) for d in m.run.manifest.get("decks") or []
                 if isinstance(d, dict)}
    own = set(skill["deck"])
    if run_decks and own != run_decks:
        note += (f" Its decks are not this run's: {len(own & run_decks)} of its "
                 f"{len(own)} decks are in the run, whose field has {len(run_decks)}.")
    return note


def _skill_html(skill: pl.DataFrame | None, images: dict[str, Image], m: Metrics) -> str:
    """The Skill section (``rnr-sim skill --out`` wrote skill.parquet into the run dir)."""
    if skill is None or skill.is_empty():
        return ""
    from rnr_sim.skill import caption

    img = images["skill"].tag() if "skill" in images else ""
    return (f'<section id="skill"><h2>Skill</h2><p class="lead">{esc(text.skill_lead(skill))}'
            f"</p>{img}{html_table(tables.skill_table(skill))}"
            f'<p class="note">{esc(caption(skill))} Highlighted: another pilot wins clearly '
            f"more than the default (its interval is clear of 0). "
            f"{esc(skill_source_note(skill, m))}</p></section>")


def field_table(field: tuple) -> tables.Table:
    """``--field-weights``' answer (``analytics.field.field_answer``) as a table."""
    _, table, _ = field
    rows = [[r["deck"], EMPTY if r["expected"] is None else pct(r["expected"]),
             f"never met {r['missing']}" if r["expected"] is None else
             interval(r["lo"], r["hi"])] for r in table.iter_rows(named=True)]
    return tables.Table(["Deck", "Expected win rate", "95% interval"], rows)


def field_lead(field: tuple) -> str:
    text_, _, best = field
    return (f"Your field: {text_}. Each deck's expected win rate against it, the deal as the "
            "unit (a deck's own copy in the field counts half its games, as its mirror "
            "would), best first. " + (best or "No deck met the whole field."))


def render_html(m: Metrics, images: dict[str, Image], csvs: list[str],
                skill: pl.DataFrame | None = None,
                expansion: dict[str, Any] | None = None, checked: tuple | None = None,
                field: tuple | None = None) -> str:
    checks, place = checked or (None, None)  # the yardstick check (rnr-sim run --yardstick)
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
    has_skill = skill is not None and not skill.is_empty()
    nav = " ".join(f'<a href="#{k}">{esc(t)}</a>' for k, t in SECTIONS
                   if (k != "lp" or has_lp) and (k != "skill" or has_skill)
                   and (k != "expansion" or expansion is not None))

    def img(key: str) -> str:
        return images[key].tag() if key in images else ""

    def section(key: str, title: str, lead: str, *body: str) -> str:
        return (f'<section id="{key}"><h2>{esc(title)}</h2><p class="lead">{esc(lead)}</p>'
                + "".join(body) + "</section>")

    adjusted = tables.card_metric_key(m.cards) == "iwd_adjusted"
    cards_note = ('<p class="note">Every card, flagged first, then by '
                  + ("the adjusted IWD" if adjusted else "IWD")
                  + "; click a header to sort, type to filter, tick \u201cevery column\u201d for "
                  "the rest (type, branch, the decks that hold it, OH/GD/GNS/played WR). "
                  "The same table is cards.csv, and per deck cards_by_deck.csv. GIH: seen "
                  "(opening hand or drawn); GNS: never seen; IWD: GIH WR \u2212 GNS WR, in "
                  "points. "
                  + ("IWD adjusted compares games of one deck and one game length, so a deck "
                     "that wins fast does not make its cards look weak; raw IWD pools every "
                     "deck and length. " if adjusted else "")
                  + "Intervals are 95%.</p>")
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc('Balance report: ' + m.run.name)}</title><style>{CSS}</style></head><body>",
        f"<h1>Revolt N Reign balance report: {esc(m.run.name)}</h1>",
        f'<p class="sub">{esc(sub)}</p><nav>{nav}</nav>',
        '<pre id="js-errors"></pre>',
        '<section id="verdict"><h2>Verdict</h2>' + yardstick_section.banner_html(checks),
        _banners_html(m), _verdict_html(m) + yardstick_section.block_html(checks, place),
        "</section>",
        *([section("field", "Against your field", field_lead(field),
                   html_table(field_table(field)))] if field is not None else []),
        section("decks", "Decks", text.decks_lead(m), html_table(tables.decks_table(m)),
                img("paths")),
        section("matchups", "Matchups and the Nash metagame", text.matchups_lead(m),
                img("matchups"), "<h3>Win-rate matrix</h3>",
                f'<p class="note">Colours and the fair mark: {pct(m.fair, 0)}, the fair share '
                f"of {m.players} players.</p>" if m.players != 2 else "",
                html_table(tables.matrix_table(m.matchups, m.deck_order)),
                _nash_html(m)),
        section("paths", "Victory paths", text.paths_lead(m),
                "<h3>Against the deck-pool expectation</h3>",
                html_table(tables.paths_expected_table(m)),
                '<p class="note">Expected: the share of the wins the path would take if every '
                f"deck won its fair share ({pct(m.fair, 0)} of its games) with its own mix of "
                "paths. Highlighted: the gap's 95% interval is clear of 0, the decks that win "
                "by the path win more (or less) than their share. This is the test the "
                "verdict uses.</p>",
                "<h3>Decks grouped by their main path</h3>",
                html_table(tables.main_path_table(m)),
                '<p class="note">Each deck\'s main path is the path of most of its wins; '
                "win rates are over games against decks of another main path. Highlighted: "
                "the interval is clear of the fair share.</p>",
                "<h3>All games</h3>",
                html_table(tables.paths_table(m.paths_overall, "Games")),
                "<h3>By deck</h3>", html_table(tables.paths_table(m.paths_by_deck, "Deck")),
                "<h3>By policy</h3>", html_table(tables.paths_table(m.paths_by_policy, "Policy")),
                "<h3>By main branch</h3>",
                html_table(tables.paths_table(m.paths_by_branch, "Branch", branch_label)),
                '<p class="note">Shares are of the group\'s wins, with 95% intervals (the deal '
                "as the unit). The two \u201cArt. III reference (flat 25%)\u201d columns "
                "compare the split with 25% per path, the rulebook's \u201cno path is "
                "superior\u201d read literally. They are a reference line, not a finding: "
                "they mostly say which paths the decks aim at, and with thousands of wins "
                "any such deck pool gives p < 0.001 there. A path is judged against the "
                "deck-pool expectation above.</p>"),
        section("seats", "Seat advantage", text.seats_lead(m), img("seats"),
                html_table(tables.seats_table(m))),
        section("branches", "Branches", text.branches_lead(m),
                html_table(tables.branches_table(m)), img("branches"),
                html_table(tables.matrix_table(m.branch_matchups, m.branch_order,
                                               branch_label))),
        section("cards", "Cards", text.cards_lead(m), img("cards"),
                card_table_html(tables.card_table(m.cards, m.cards_by_deck, m.card_band)),
                cards_note,
                links.power_link_html()),  # shown when power/ holds a Card power page
    ]
    if expansion is not None:
        x = expansion_section
        parts.append(section(
            "expansion", x.TITLE, x.lead(expansion),
            "<h3>Old decks: before and after</h3>", html_table(x.old_decks_table(expansion)),
            "<h3>New decks against the old field</h3>",
            html_table(x.new_decks_table(expansion)),
            html_table(x.matchups_table(expansion)) if expansion.get("new_vs_old") else "",
            "<h3>Victory paths before and after</h3>", html_table(x.paths_table(expansion)),
            "<h3>The expansion's cards</h3>", html_table(x.cards_table(expansion)),
            f'<p class="note">{esc(x.note(expansion))}</p>'))
    parts += [
        section("length", "Game length", text.length_lead(m), img("length"),
                html_table(tables.length_table(m))),
    ]
    if has_lp:
        parts.append(section("lp", "Liberty Points over turns", text.lp_lead(m), img("lp")))
    if has_skill:
        parts.append(_skill_html(skill, images, m))
    parts.append(_method_html(m))
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
        + "</div></section>"
        + f"<script>{CARD_SCRIPT}{links.PROBE_SCRIPT}</script></body></html>"
    )
    return "\n".join(parts)


def render_markdown(m: Metrics, skill: pl.DataFrame | None = None,
                    expansion: dict[str, Any] | None = None, checked: tuple | None = None,
                    field: tuple | None = None) -> str:
    checks, place = checked or (None, None)  # the yardstick check (rnr-sim run --yardstick)
    man = m.run.manifest
    games = m.length.filter(pl.col("path") == "all")["games"].item()
    out = [f"# Balance report: {md(m.run.name)}", "",
           f"{count(games)} games, {man.get('players', m.players)} players, "
           f"{len(m.deck_order)} decks, seed {man.get('seed', EMPTY)}.", ""]
    for b in banners(m):
        out += [f"> **Read first:** {md(b)}", ""]
    out += ["## Verdict", "", *yardstick_section.banner_markdown(checks, md)]
    if m.findings:
        for i, f in enumerate(m.findings, 1):
            out.append(f"{i}. **{md(text.finding_title(f))}.** {md(text.finding_text(f))} "
                       f"(score {f.score:.1f} pp)")
    else:
        out.append(md(text.verdict_empty(m)))
    strong = text.strongest_decks(m)
    if strong:
        out += ["", f"**{md(text.STRONGEST_TITLE)}.**", ""] + [f"- {md(s)}" for s in strong]
    out += ["", f"_{md(text.scoring_rule())} How every interval and figure is computed: "
                f"{md(METHOD_TITLE)}, at the end._", ""]
    out += yardstick_section.markdown(checks, place, md)
    if field is not None:
        out += ["## Against your field", "", md(field_lead(field)), "",
                md_table(field_table(field)), ""]
    blocks = [
        ("Decks", text.decks_lead(m), [tables.decks_table(m)]),
        ("Matchups and the Nash metagame", text.matchups_lead(m),
         [tables.matrix_table(m.matchups, m.deck_order)]
         + ([tables.nash_table(m)] if m.players <= 2 else [])),
        ("Victory paths", text.paths_lead(m),
         [tables.paths_expected_table(m), tables.main_path_table(m),
          tables.paths_table(m.paths_overall, "Games"),
          tables.paths_table(m.paths_by_deck, "Deck")]),
        ("Seat advantage", text.seats_lead(m), [tables.seats_table(m)]),
        ("Branches", text.branches_lead(m),
         [tables.branches_table(m),
          tables.matrix_table(m.branch_matchups, m.branch_order, branch_label)]),
        ("Cards", text.cards_lead(m),
         [tables.cards_table(m.cards, 25, m.cards_by_deck, m.card_band)]),
        ("Game length", text.length_lead(m), [tables.length_table(m)]),
    ]
    if skill is not None and not skill.is_empty():
        from rnr_sim.skill import caption

        blocks.append(("Skill", f"{text.skill_lead(skill)} {caption(skill)} "
                       f"{skill_source_note(skill, m)}",
                       [tables.skill_table(skill)]))
    for title, lead, tbls in blocks:
        out += [f"## {title}", "", md(lead), ""]
        for t in tbls:
            out += [md_table(t), ""]
    if expansion is not None:
        out += expansion_section.markdown(expansion, md_table)
    out += [f"## {METHOD_TITLE}", ""]
    for title, body in text.method_sections(m):
        out += [f"**{md(title)}.** {md(body)}", ""]
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


def run_id(manifest: dict[str, Any]) -> str:
    """A run's identity: a hash of the manifest entries that fix its results (seed, decks,
    rules, catalog, tables...), the same before and after ``--resume``."""
    ident = {k: manifest.get(k) for k in RUN_IDENTITY}
    blob = json.dumps(ident, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _earlier_files(out: Path, rid: str, run_name: str) -> list[str]:
    """The files of an earlier report of the same run in ``out`` (to be replaced); an
    InputError if ``out`` holds anything else. A new or empty folder has none."""
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: not a folder; give --out a new or empty folder")
    if not out.exists() or not any(out.iterdir()):
        return []
    marker = out / MARKER
    if marker.is_file():
        try:
            rec = json.loads(marker.read_text(encoding="utf-8"))
            other = rec["run"]
            files = [str(f) for f in rec.get("files", [])]
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
            raise InputError(f"{marker}: unreadable report record; give --out a new or "
                             "empty folder, or remove this one") from None
        if other.get("id") != rid:
            raise InputError(f"{out}: holds the report of another run "
                             f"({other.get('name', 'unknown')}, {other.get('dir', '?')}); give "
                             "--out a new or empty folder, or remove this one")
        return [f for f in files if f and ".." not in Path(f).parts
                and not Path(f).is_absolute()]
    # a report written before the marker: only report files (index.html, CSV, plots/)
    shaped = all(
        (e.is_file() and e.suffix in REPORT_SUFFIXES)
        or (e.is_dir() and e.name == "plots"
            and all(f.is_file() and f.suffix in (".png", ".svg") for f in e.iterdir()))
        for e in out.iterdir())
    if shaped and (out / "index.html").is_file():
        head = (out / "index.html").read_text(encoding="utf-8", errors="replace")[:4000]
        if f"balance report: {esc(run_name)}<" in head:
            return []
    raise InputError(f"{out}: not empty and not a report of this run (no {MARKER}); give "
                     "--out a new or empty folder")


def _write_all(out: Path, files: dict[str, bytes], stale: list[str]) -> None:
    """Write ``files`` (relative path -> bytes) under ``out``, then drop ``stale`` files of
    the earlier report. On a write error remove what this call wrote (and ``out`` itself
    if it made it), so no half-written report is left; raise InputError."""
    made = not out.exists()
    written: list[Path] = []
    try:
        (out / "plots").mkdir(parents=True, exist_ok=True)
        for rel, data in files.items():
            path = out / rel
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
            written.append(path)
    except OSError as e:
        for p in written:
            p.unlink(missing_ok=True)
        for p in out.glob("**/.*.tmp"):
            p.unlink(missing_ok=True)
        if made:
            shutil.rmtree(out, ignore_errors=True)
        raise InputError(f"{out}: cannot write the report ({e.strerror or e})") from None
    for rel in stale:
        if rel not in files:
            (out / rel).unlink(missing_ok=True)
    plots_dir = out / "plots"
    if plots_dir.is_dir() and not any(plots_dir.iterdir()):
        plots_dir.rmdir()


def with_card_sets(m: Metrics, run) -> Metrics:
    """``m`` with each card's ``set`` (from the run's cards.parquet, when it has one) on
    the card tables, so that the page's card filter finds cards by set."""
    have = set(run.cards.collect_schema().names())
    if "set" not in have or "set" in m.cards.columns:
        return m
    sets = run.cards.select(pl.col("name").alias("card"), "set").unique("card").collect()
    return replace(m, cards=m.cards.join(sets, on="card", how="left"),
                   cards_by_deck=m.cards_by_deck.join(sets, on="card", how="left"))


def read_expansion(run_dir: Path) -> dict[str, Any] | None:
    """The run dir's expansion summary (``rnr-sim expansion``), or None."""
    from rnr_sim.expansion import read_summary

    return read_summary(run_dir)


def build_report(run_dir: str | Path, out_dir: str | Path, svg: bool = False,
                 progress: Callable[[int, int], None] | None = None,
                 figures_apart: bool = False, field_weights: str | None = None) -> Path:
    """Write ``index.html``, ``summary.md``, the tables as CSV, the figures and ``report.json``
    (which run this reports, the files written) to ``out_dir``.

    ``index.html`` is self-contained (figures inline as base64 data URIs, inline CSS and
    script, no network). Figures are PNG, or SVG with ``svg=True``; they are also written
    to ``out_dir/plots/``. Returns the path of index.html. Raises InputError, writing
    nothing, for a missing or broken run dir (parts that do not match its manifest), or an
    ``out_dir`` that is not new, empty or an earlier report of the same run. The run is
    read part by part, twice (``analytics.compute_metrics``); ``progress(games, total)``
    is told the games of each part read, of ``total`` (twice the run's games; 0 when the
    manifest does not say). ``figures_apart``: draw the figures in a second process while
    the run is read (``figures.FigureProcess``; the caller's main module needs a
    ``__main__`` guard, as a command's has), else here. ``field_weights``: a weighted field
    (``--field-weights``), answered in a section of its own and ``field.csv``.
    """
    run = load_run(run_dir)
    out = Path(out_dir)
    rid = run_id(run.manifest)
    stale = _earlier_files(out, rid, run.name)
    fmt = "svg" if svg else "png"
    early = tuple(k for k in FIGURES if k != "cards")
    figures = FigureProcess() if figures_apart else None
    drawn: dict[str, Image] = {}

    def draw_while_pass_two(partial: Metrics) -> None:
        if figures is not None:
            figures.draw(partial, fmt, early)
        else:
            drawn.update(make_images(partial, fmt, early))

    done = run.manifest.get("games_done")
    total = 2 * done if isinstance(done, int) else 0
    tick = None if progress is None else (lambda n: progress(n, total))
    m = with_card_sets(compute_metrics(run, tick, draw_while_pass_two), run)
    if figures is not None:
        figures.draw(m, fmt, ("cards",))
        drawn.update(figures.images())
    else:
        drawn.update(make_images(m, fmt, ("cards",)))
    images = {k: drawn[k] for k in FIGURES if k in drawn}
    skill = read_skill(run.path)
    expansion = read_expansion(run.path)
    frames = csv_frames(m)
    checked = yardstick_checks(m)
    field = None
    if field_weights is not None:
        from rnr_sim.analytics.field import field_answer

        field = field_answer(run_dir, field_weights)
        frames["field"] = field[1]
    if checked is not None:
        frames["yardstick"] = frame_of_checks(checked[0])
    if skill is not None and not skill.is_empty():
        from rnr_sim.report import plots

        fig = plots.skill_plot(skill)
        if fig is not None:
            images["skill"] = Image("skill", plots.render(fig, fmt), fmt,
                                    "win share of each deck with each pilot")
        frames["skill"] = skill
    csvs = [f"{n}.csv" for n in frames]
    files: dict[str, bytes] = {f"plots/{img.name}.{fmt}": img.data for img in images.values()}
    for name, df in frames.items():
        files[f"{name}.csv"] = df.write_csv().encode("utf-8")
    files["summary.md"] = render_markdown(m, skill, expansion, checked, field).encode("utf-8")
    files["index.html"] = render_html(m, images, csvs, skill, expansion, checked,
                                      field).encode("utf-8")
    record = {
        "report": "rnr-sim report",
        "tool_version": __version__,
        "run": {"id": rid, "name": run.name, "dir": str(run.path.resolve()),
                "games_done": run.manifest.get("games_done"),
                "games_total": run.manifest.get("games_total")},
        "files": sorted([*files, MARKER]),
    }
    files[MARKER] = (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    _write_all(out, files, stale)
    return out / "index.html"


__all__ = ["build_report"]
