"""The report of a power dir (``rnr-sim report POWER_DIR``): the "Card power" page a
designer reads to find the cards that are too strong or too weak, or, for one deck (the
deck doctor, ``rnr-sim power --deck``), which cards to cut and what to put in.

- pool: the headline (cards measured, flagged each way, games, the hosts and the field),
  the flagged cards in a sentence each way, the figure (each card's gain against its cost,
  an Order a panel, flagged cards labelled), every card in a table sortable by any column
  (flagged first, then by Order; the cards no field deck plays marked), and each host's
  least valuable cards;
- doctor: what each card of the deck is worth to it, least first, with its figure, and
  the best swaps as ``cut 4 X, add 4 Y: +3.1 pp [+1.9, +4.3]``.

Both say what the figures mean in a paragraph. Every figure comes from the dir's parquet
files and manifest, checked by content first (``searchdirs.verify_power_dir``): a refused
dir writes nothing. The page writes ``plots/power.png``, which the "Card power" links of
the run report and the discovery page wait for (``report.links``).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import polars as pl

from rnr_sim.enums import CARD_TYPES
from rnr_sim.report.build import CSS, esc
from rnr_sim.report.figures import Image
from rnr_sim.report.sortable import SORT_SCRIPT, Raw, sortable

#: Each host's least valuable cards shown on the pool page.
LEAST = 3
#: Flagged cards named in the headline's sentences, each way.
NAMED = 6
#: Row order: too strong first, then too weak, then the rest.
FLAG_RANK = {"too strong": 0, "too weak": 1, "": 2}
#: The Orders in the catalog's order (the table groups by it; an unknown one goes last).
ORDER_INDEX = {t: i for i, t in enumerate(CARD_TYPES)}
#: The marker of a card no field deck plays (in its name's cell).
UNPLAYED = "not in the field"

CSS_POWER = """
.badge{display:inline-block;margin-left:6px;padding:0 5px;border-radius:3px;font-size:10.5px;
 background:#fdebd0;color:#935116;border:1px solid #f0b27a}
tr.strong td{background:#eafaf1}tr.weak td{background:#fdedec}
"""

def is_power_dir(path: str | Path) -> bool:
    """Whether ``path`` holds a power dir's manifest (``kind: "power"``)."""
    from rnr_sim.runs.searchdirs import manifest_kind

    return manifest_kind(path) == "power"


def read(path: str | Path) -> dict[str, Any]:
    """The dir's manifest and tables, checked by content first (``InputError`` naming the
    file that is missing or not the power run's own)."""
    from rnr_sim.runs.searchdirs import read_tables, verify_power_dir

    root = Path(path)
    d: dict[str, Any] = {"manifest": json.loads((root / "manifest.json").read_text("utf-8"))}
    verify_power_dir(root, d["manifest"])
    names = ("cuts", "adds") if d["manifest"].get("mode") == "doctor" else ("power", "worth")
    return d | read_tables(root, names, "power dir", "rnr-sim power")


# ------------------------------------------------------------------------- formatting
def pp(x: float | None, lo: float | None = None, hi: float | None = None) -> str:
    """A share difference in points: ``+3.1 pp [+1.9, +4.3]`` (``-`` for none)."""
    def one(v: float) -> str:
        return f"{round(100 * v, 1) + 0.0:+.1f}"  # + 0.0: no "-0.0"

    if x is None:
        return "-"
    return f"{one(x)} pp" + ("" if lo is None or hi is None else f" [{one(lo)}, {one(hi)}]")


def md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    def cell(s: Any) -> str:
        return str(s).replace("|", "\\|")

    return (["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            + ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows])


def _names(m: dict[str, Any], key: str) -> list[str]:
    return [x["name"] if isinstance(x, dict) else str(x) for x in m.get(key) or []]


def _listing(names: list[str], most: int = 9) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


# ------------------------------------------------------------------------- pool mode
def ordered(power: pl.DataFrame) -> pl.DataFrame:
    """The table's order: flagged first (too strong, then too weak), then by Order (the
    catalog's), then the flagged by the size of their edge, the rest by gain."""
    return power.with_columns(
        pl.col("flag").replace_strict(FLAG_RANK, default=2).alias("_flag"),
        pl.col("order").replace_strict(ORDER_INDEX, default=len(CARD_TYPES)).alias("_order"),
        pl.when(pl.col("flag") != "").then(-pl.col("edge").abs()).otherwise(-pl.col("gain"))
        .alias("_key"),
    ).sort(["_flag", "_order", "_key", "card"], nulls_last=True).drop("_flag", "_order", "_key")


def pool_lead(d: dict[str, Any]) -> str:
    """The headline: what was measured, how, what came out."""
    m, p = d["manifest"], d["power"]
    g, f = m["games"], m.get("flags") or {}
    hosts, field = _names(m, "hosts"), _names(m, "field")
    unplayed = int((p["in_field"] == 0).sum())
    return (f"{p.height} cards measured ({m.get('cards_measured', '')}), each swapped into "
            f"the {len(hosts)} host decks ({_listing(hosts)}) playing the field of "
            f"{len(field)} decks: {f.get('too strong', 0)} flagged too strong, "
            f"{f.get('too weak', 0)} too weak. {unplayed} of the cards are in no field deck. "
            f"{g['total']:,} games in {m['seconds']:.0f} s ({g.get('worth', 0):,} measuring "
            f"what each host's cards are worth to it, {g.get('race', 0):,} racing the swaps, "
            f"{g.get('fresh', 0):,} re-measuring each card's best swap on fresh deals).")


def pool_verdict(d: dict[str, Any]) -> list[str]:
    """A sentence each way naming the flagged cards, and one on the cards no deck plays."""
    p, margin = d["power"], d["manifest"].get("margin", 0.0)
    out = []
    for flag, side in (("too strong", f"above +{100 * margin:.0f} pp"),
                       ("too weak", f"below -{100 * margin:.0f} pp")):
        rows = p.filter(pl.col("flag") == flag).sort(
            pl.col("edge").abs(), descending=True, nulls_last=True)
        if rows.height == 0:
            out.append(f"No card is flagged {flag} (edge over its Order's median {side}).")
            continue
        named = [f"{r['card']} ({pp(r['edge'])} in {r['host']})"
                 for r in rows.head(NAMED).iter_rows(named=True)]
        more = f" and {rows.height - NAMED} more" if rows.height > NAMED else ""
        out.append(f"{rows.height} {'card' if rows.height == 1 else 'cards'} {flag} (edge "
                   f"over its Order's median {side}), the largest first: "
                   f"{', '.join(named)}{more}.")
    strong = p.filter(pl.col("flag") == "too strong")
    unplayed = strong.filter(pl.col("in_field") == 0)
    if strong.height:
        out.append(f"{unplayed.height} of the {strong.height} cards flagged too strong are in "
                   "no field deck: the field has not found them yet.")
    return out


def method(m: dict[str, Any], doctor: bool) -> str:
    """What the figures mean, in a designer's words."""
    deals, margin = m.get("deals") or {}, m.get("margin", 0.0)
    fresh = deals.get("fresh", "")
    swap = ("Each swap takes copies of one of the deck's least valuable cards of an Order out "
            "and puts a card of the pool in, " if doctor else
            "Each card is swapped into the host decks: its copies take the place of the "
            "host's least valuable cards of its Order (one copy, and a full set), ")
    text = [
        swap + "and the deck plays the field on the same deals with and without the swap. "
        "Both versions see the same shuffles and seats, so the luck of the deal cancels "
        "out and a gain of a point shows (paired swaps). A gain is the change in the "
        "deck's win share, in percentage points (pp): +3 pp is 3 more wins in 100 games.",
        "Many swaps were raced on the same deals to find the best ones, and the best of many "
        "noisy measures is flattered (the winner's curse). So each best swap was played "
        f"again on {fresh} fresh deals a field deck, of a seed the race never used: that "
        "is the gain shown, and the race's own figure is in the search column.",
        "What a card is worth to a deck: what the deck loses when the card's copies are cut "
        "and replaced (by the cards named), on the same deals; below 0, the deck wins more "
        "without it.",
    ]
    if not doctor:
        text += [
            "Gain: in the host (and at the copies) where the card serves best. Mean over "
            "hosts: its gain at a full set averaged over every host it can go into, on the "
            "race's first deals: what it does in a typical deck. Edge: its gain over the "
            "median card of its Order swapped into the same host at the same copies, so a "
            "Pillar is judged against Pillars.",
            f"Flags test the edge: too strong above +{100 * margin:.0f} pp, too weak below "
            f"-{100 * margin:.0f} pp, each a one-sided test, with Benjamini-Hochberg over "
            f"every card and both ways at a false discovery rate of "
            f"{100 * m.get('flag_fdr', 0.05):.0f}%: about one flag in twenty may be a false "
            "alarm. Cards no field deck plays are marked: their gain says what they would "
            "do, and no deck of the field shows it yet.",
        ]
    text.append("Intervals are 95%, over deals.")
    return "".join(f"<p>{esc(t)}</p>" for t in text)


def power_rows(p: pl.DataFrame, sets: bool) -> tuple[list[tuple[str, bool]], list]:
    """The card table's header and rows (``sortable``)."""
    head = [("Order", False), ("card", False), ("flag", False), ("cost", True),
            ("Branch", False), ("rarity", False)] + ([("set", False)] if sets else []) + [
        ("copies in the field", True), ("gain in its best host [95%]", True),
        ("best host", False), ("mean over hosts [95%]", True),
        ("edge over its Order [95%]", True), ("search's gain", True), ("hosts", True),
        ("deals", True)]
    rows = []
    for r in ordered(p).iter_rows(named=True):
        name = Raw(esc(r["card"]) + (f'<span class="badge">{UNPLAYED}</span>'
                                     if r["in_field"] == 0 else ""))
        cells = [(r["order"], ORDER_INDEX.get(r["order"], len(CARD_TYPES))),
                 (name, r["card"]), (r["flag"], r["flag"]), (r["cost"], r["cost"]),
                 (r["branch"] or "", r["branch"]), (r["rarity"] or "", r["rarity"])]
        cells += [(r["set"] or "", r["set"])] if sets else []
        cells += [(r["in_field"], r["in_field"]),
                  (pp(r["gain"], r["gain_lo"], r["gain_hi"]), r["gain"]),
                  (f"{r['copies']} in {r['host']}" if r["host"] else "-", r["host"]),
                  (pp(r["mean_gain"], r["mean_gain_lo"], r["mean_gain_hi"]), r["mean_gain"]),
                  (pp(r["edge"], r["edge_lo"], r["edge_hi"]), r["edge"]),
                  (pp(r["gain_search"]), r["gain_search"]), (r["hosts"], r["hosts"]),
                  (f"{r['deals']:,}" if r["deals"] else "-", r["deals"])]
        rows.append(({"too strong": "strong", "too weak": "weak"}.get(r["flag"], ""), cells))
    return head, rows


def least_valuable(worth: pl.DataFrame, n: int = LEAST) -> pl.DataFrame:
    """Each host's ``n`` least valuable cards (those with a legal cut)."""
    return (worth.filter(pl.col("worth").is_not_null())
            .sort(["host", "worth", "card"]).group_by("host", maintain_order=True).head(n))


#: The columns of a card's worth to its deck (``worth_row``): header, numeric.
WORTH_HEAD = [("card", False), ("Order", False), ("worth to the deck [95%]", True),
              ("replaced by", False), ("deals", True)]


def worth_row(r: dict[str, Any]) -> list[tuple[str, Any]]:
    """A row of worth.parquet or cuts.parquet as (text, sort value) of each column."""
    return [(f"{r['copies']} {r['card']}", r["card"]), (r["order"], r["order"]),
            (pp(r["worth"], r["worth_lo"], r["worth_hi"]), r["worth"]),
            (r["replaced_by"] or "no legal cut", r["replaced_by"]),
            (f"{r['deals']:,}" if r["deals"] else "-", r["deals"])]


def _texts(rows: list[list[tuple[str, Any]]]) -> list[list[str]]:
    """The cells' texts of rows of (text, sort value), for Markdown."""
    return [[str(t) for t, _ in row] for row in rows]


def pool_page(d: dict[str, Any], img: Image | None) -> tuple[list[str], list[str]]:
    """(HTML parts, Markdown lines) of the pool page's body."""
    p = d["power"]
    sets = p["set"].n_unique() > 1
    lead, verdict = pool_lead(d), pool_verdict(d)
    head, rows = power_rows(p, sets)
    least = [[(r["host"], r["host"]), *worth_row(r)]
             for r in least_valuable(d["worth"]).iter_rows(named=True)]
    html = [
        f"<p class='lead'>{esc(lead)}</p>",
        "<div class='verdict'><ol>" + "".join(f"<li>{esc(v)}</li>" for v in verdict)
        + "</ol></div>",
        "<h2>Power against cost</h2>",
        img.tag() if img else "<p>No card has a gain to draw.</p>",
        "<p class='note'>Each dot a card: its gain in the host where it serves best, with "
        "its 95% interval, against its cost (spread a little sideways so that cards of one "
        "cost do not hide each other). Green: flagged too strong; red: too weak; hollow: no "
        "field deck plays it. The flagged cards with the largest edge are labelled, as many "
        "as fit; every card is in the table below.</p>",
        "<h2>Every card</h2>",
        f"<p class='note'>Flagged first (too strong, then too weak), then by Order; click a "
        f"header to sort by it (again to flip). Marked <span class='badge'>{UNPLAYED}</span>: "
        "no field deck plays the card.</p>",
        sortable("power-table", head, rows),
        f"<h2>Each host's least valuable cards</h2><p class='note'>The {LEAST} cards worth "
        "least to each host deck (below 0, it wins more without them): the swaps take "
        "their places first.</p>",
        sortable("worth-table", [("host", False), *WORTH_HEAD], [("", row) for row in least]),
    ]
    flagged = ordered(p).filter(pl.col("flag") != "")
    md = [lead, "", *[f"- {v}" for v in verdict], "", "## Flagged cards", ""]
    md += md_table(["card", "Order", "flag", "gain in its best host", "best host", "edge",
                    "copies in the field"],
                   [[r["card"], r["order"], r["flag"], pp(r["gain"], r["gain_lo"], r["gain_hi"]),
                     f"{r['copies']} in {r['host']}", pp(r["edge"], r["edge_lo"], r["edge_hi"]),
                     r["in_field"]] for r in flagged.iter_rows(named=True)])
    md += ["", "## Each host's least valuable cards", "",
           *md_table(["host", *(h for h, _ in WORTH_HEAD)], _texts(least))]
    return html, md


# ------------------------------------------------------------------------- doctor mode
def swap_line(r: dict[str, Any]) -> str:
    """``cut 4 X, add 4 Y: +3.1 pp [+1.9, +4.3]``"""
    return (f"cut {r['copies']} {r['out']}, add {r['copies']} {r['card']}: "
            f"{pp(r['gain'], r['gain_lo'], r['gain_hi'])}")


def doctor_page(d: dict[str, Any], img: Image | None) -> tuple[list[str], list[str]]:
    """(HTML parts, Markdown lines) of the deck doctor's page body."""
    m, cuts = d["manifest"], d["cuts"]
    adds = d["adds"].sort("gain", descending=True, nulls_last=True, maintain_order=True)
    deck, g = (m.get("deck") or {}).get("name", "the deck"), m["games"]
    costly = cuts.filter(pl.col("worth_hi") < 0)
    lead = (f"What each card of {deck} is worth to it against the field of "
            f"{len(_names(m, 'field'))} decks ({_listing(_names(m, 'field'))}), and the best "
            f"swaps of a card of the pool ({m.get('cards_measured', '')}) for some of its "
            f"copies. {g['total']:,} games in {m['seconds']:.0f} s. {costly.height} of its "
            f"{cuts.height} cards cost it games (worth below 0, the interval clear of 0)"
            + (f"; the best swap, on fresh deals: {swap_line(adds.row(0, named=True))}."
               if adds.height else "; no swap was measured."))
    cut_rows = [("weak" if r["worth_hi"] is not None and r["worth_hi"] < 0 else "",
                 worth_row(r)) for r in cuts.iter_rows(named=True)]
    swap_rows = [("", [(swap_line(r), r["gain"]), (pp(r["gain_search"]), r["gain_search"]),
                       (f"{r['deals']:,}", r["deals"])]) for r in adds.iter_rows(named=True)]
    html = [
        f"<p class='lead'>{esc(lead)}</p>",
        "<h2>Cuts: what each card is worth to the deck</h2>",
        "<p class='note'>Least worth first: cut from the top. Highlighted: the deck wins more "
        "without the card (its interval is below 0).</p>",
        img.tag() if img else "",
        sortable("cuts-table", WORTH_HEAD, cut_rows),
        "<h2>Adds: the best swaps</h2>",
        "<p class='note'>Each swap's gain on fresh deals with its 95% interval, best first; "
        "the search's gain beside it (flattered by picking the best).</p>",
        sortable("adds-table", [("swap: gain on fresh deals [95%]", True),
                                ("search's gain", True), ("deals", True)], swap_rows, left=0)
        if swap_rows else "<p>No swap was measured.</p>",
    ]
    md = [lead, "", "## Cuts", "",
          *md_table([h for h, _ in WORTH_HEAD], _texts([row for _, row in cut_rows])),
          "", "## Adds", ""]
    md += [f"- {a} (search {b}, {c} deals)" for a, b, c in _texts([row for _, row in swap_rows])
           ] or ["None."]
    return html, md


# ------------------------------------------------------------------------- the page
def figure(d: dict[str, Any]) -> Image | None:
    """The page's figure (``power_plots``), as ``plots/power.png``."""
    from rnr_sim.report import plots, power_plots

    if d["manifest"].get("mode") == "doctor":
        fig = power_plots.worth_bars(d["cuts"], (d["manifest"].get("deck") or {}).get(
            "name", "the deck"))
        alt = "what each card is worth to the deck"
    else:
        fig = power_plots.gain_by_cost(d["power"])
        alt = "each card's gain in its best host against its cost, by Order"
    return None if fig is None else Image("power", plots.render(fig, "png"), "png", alt)


def render(d: dict[str, Any], root: Path, img: Image | None) -> tuple[str, str]:
    """(index.html, summary.md) of a power dir."""
    m = d["manifest"]
    doctor = m.get("mode") == "doctor"
    title = (f"Deck doctor: {(m.get('deck') or {}).get('name', root.name)}" if doctor
             else f"Card power: {root.name}")
    body, md = (doctor_page if doctor else pool_page)(d, img)
    repro = m.get("command") or "rnr-sim power"
    html = "".join([
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{esc(title)}</title><style>{CSS}{CSS_POWER}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f"<p class='sub'>seed {m.get('seed')}, budget {m.get('budget', 0):,} games, catalog "
        f"{esc((m.get('catalog') or {}).get('name', ''))}, {esc(m.get('source', ''))}</p>",
        '<pre id="js-errors"></pre>',
        *body,
        "<h2>What the figures mean</h2><div class='method'>", method(m, doctor), "</div>",
        f"<h2>Reproduce</h2><pre>{esc(repro)}\nrnr-sim report {esc(shlex.quote(str(root)))}"
        f"</pre><script>{SORT_SCRIPT}</script></body></html>",
    ])
    summary = "\n".join([f"# {title}", "", *md, ""])
    return html, summary


def build_power_report(power_dir: str | Path, out: str | Path) -> Path:
    """Write ``out/index.html``, ``out/summary.md`` and ``out/plots/power.png`` for a power
    dir; returns the page. The dir is read and checked before anything is written."""
    from rnr_sim.files import atomic_write
    from rnr_sim.report import pages

    root, out = Path(power_dir), Path(out)
    d = read(root)
    img = figure(d)
    html, md = render(d, root, img)
    pages.claim(out, root, "power")
    if img is not None:
        (out / "plots").mkdir(exist_ok=True)
        atomic_write(out / "plots" / "power.png", lambda tmp: tmp.write_bytes(img.data))
    atomic_write(out / "summary.md", lambda tmp: tmp.write_text(md, encoding="utf-8"))
    atomic_write(out / "index.html", lambda tmp: tmp.write_text(html, encoding="utf-8"))
    pages.mark(out, root, "power")
    return out / "index.html"
