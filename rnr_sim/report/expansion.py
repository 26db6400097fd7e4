"""The report's "Expansion" section: shown when the run dir holds ``expansion.json``
(written by ``rnr-sim expansion``; its figures are defined in ``rnr_sim.expansion``)."""

from __future__ import annotations

from typing import Any

from rnr_sim.display import EMPTY, count, diff_text, interval, path_label, pct, pp
from rnr_sim.report import tables

TITLE = "Expansion"
#: rows of the expansion's card table in the report (the full list is in expansion.json)
CARD_ROWS = 40


def lead(s: dict[str, Any]) -> str:
    e, c = s["expansion"], s["catalog"]
    gains = [r["deck"] for r in s["old_decks"] if r["verdict"] == "gains"]
    loses = [r["deck"] for r in s["old_decks"] if r["verdict"] == "loses"]
    parts = [f"{e['set']} adds {e['cards_added']} cards and {len(e['errata'])} errata "
             f"({c['cards_before']} \u2192 {c['cards_after']} cards) and "
             f"{len(s['new_decks'])} new deck{'s' if len(s['new_decks']) != 1 else ''}."]
    parts.append(("Old decks that gain: " + ", ".join(gains) + ".") if gains else
                 "No old deck gains clearly.")
    parts.append(("Old decks that lose: " + ", ".join(loses) + ".") if loses else
                 "No old deck loses clearly.")
    return " ".join(parts)


def old_decks_table(s: dict[str, Any]) -> tables.Table:
    rows, hl = [], []
    for r in s["old_decks"]:
        rows.append([r["deck"], pct(r["before"]), pct(r["after"]),
                     diff_text(r["delta"], r["delta_lo"], r["delta_hi"], r["games_before"],
                               r["games_after"]), r["verdict"]])
        hl.append(r["verdict"] != "no clear change")
    return tables.Table(["Old deck", "Before (old field)", "After (grown field)",
                         "Change [95% paired CI]", "Verdict"], rows, hl)


def new_decks_table(s: dict[str, Any]) -> tables.Table:
    rows = [[r["deck"], f"{pct(r['vs_old'])} {interval(r['vs_old_lo'], r['vs_old_hi'])}",
             f"{pct(r['field'])} {interval(r['field_lo'], r['field_hi'])}"]
            for r in s["new_decks"]]
    return tables.Table(["New deck", "Win share vs the old field [95% CI]",
                         "In the whole new field [95% CI]"], rows)


def matchups_table(s: dict[str, Any]) -> tables.Table:
    rows, hl = [], []
    for r in s["new_vs_old"]:
        rows.append([r["deck"], r["opponent"],
                     f"{pct(r['rate'])} {interval(r['rate_lo'], r['rate_hi'])}"])
        hl.append(r["rate_lo"] is not None and (r["rate_lo"] > 0.5 or r["rate_hi"] < 0.5))
    return tables.Table(["New deck", "Old opponent", "Win rate [95% CI]"], rows, hl)


def paths_table(s: dict[str, Any]) -> tables.Table:
    rows = [[path_label(r["path"]), pct(r["before"]), pct(r["after"]),
             f"{pp(r['delta'])} {interval(r['delta_lo'], r['delta_hi'], signed=True)}"]
            for r in s["paths"]]
    return tables.Table(["Path", "Share of games before", "After", "Change [95% paired CI]"],
                        rows)


def cards_table(s: dict[str, Any], limit: int = CARD_ROWS) -> tables.Table:
    rows, hl = [], []
    for r in s["cards"]["by_metric"][:limit]:
        rows.append([
            str(r.get("metric_rank") or EMPTY), r["card"], str(r.get("type") or EMPTY),
            f"{pp(r.get('iwd_adjusted'))} "
            f"{interval(r.get('iwd_adjusted_lo'), r.get('iwd_adjusted_hi'), signed=True)}",
            str(r.get("play_rank") or EMPTY),
            f"{pct(r.get('play_rate'))} {interval(r.get('play_rate_lo'), r.get('play_rate_hi'))}",
            count(r.get("held") or 0), r.get("flag") or ""])
        hl.append(bool(r.get("flag")))
    return tables.Table(["Rank (IWD adj.)", "Card", "Type", "IWD adjusted [95% CI]",
                         "Rank (play rate)", "Play rate [95% CI]", "Games held", "Flag"],
                        rows, hl)


def note(s: dict[str, Any]) -> str:
    cards = s["cards"]
    shown = min(CARD_ROWS, len(cards["by_metric"]))
    unused = len(cards["not_in_any_deck"])
    return (f"{s['definition']} New decks: games where the deck is the only new deck at "
            f"the table. Cards: the expansion's cards the decks hold ({shown} of "
            f"{len(cards['by_metric'])} shown; {unused} are in no deck), ranked by the "
            "adjusted IWD and by play rate over the after run; the card table below filters "
            f"by set (type \u201c{s['expansion']['set'].lower()}\u201d).")


def markdown(s: dict[str, Any], md_table) -> list[str]:
    """The section for summary.md (``md_table`` renders a ``tables.Table``)."""
    return [f"## {TITLE}", "", lead(s), "", md_table(old_decks_table(s)), "",
            md_table(new_decks_table(s)), "", md_table(paths_table(s)), "",
            md_table(cards_table(s, 15)), "", s["definition"], ""]
