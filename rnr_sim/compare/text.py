"""The comparison in words: the terminal summary and the machine-readable summary."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from rnr_sim.analytics.decks import WIN_PATHS
from rnr_sim.compare.paired import FEW_DEALS, METRIC_LABELS, Paired
from rnr_sim.compare.runs import CompareResult
from rnr_sim.display import EMPTY, count, format_table, interval, pct, pp
from rnr_sim.patches import toml_string, toml_value

TERMINAL_ROWS = 30


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def change_text(row: dict[str, Any]) -> str:
    """``+6.2 pp [+5.4, +7.0]``, or ``—`` when either side has no value. A change under
    0.1 pp gets the decimals that show its first two digits (``+0.0031 pp``), so a tiny
    change is never printed as a zero; an exact zero is ``0 pp`` (no change)."""
    if row["change"] is None:
        return EMPTY
    c = abs(row["change"])
    if c == 0 and row["lo"] == row["hi"]:
        return "0 pp (no change)"
    d = 1 if c >= 0.001 else 2 if c == 0 else min(6, 1 - math.floor(math.log10(100 * c)))
    return f"{pp(row['change'], d)} {interval(row['lo'], row['hi'], d, signed=True)}"


def vrf_text(v: Any) -> str:
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return EMPTY
    return f"x{v:.1f}"


def rule_change_lines(result: CompareResult) -> list[str]:
    """``switch: old -> new`` per changed rules switch, values as TOML writes them."""
    return [f"{one_line(k)}: {toml_value(a)} -> {toml_value(b)}"
            for k, (a, b) in result.rules_changes.items()]


def one_line(text: Any) -> str:
    """``text`` as written when it is printable on one line, else as an escaped TOML
    string (a patch name or path with a newline or control character cannot break the
    line, or fake another, in the terminal or the report)."""
    s = str(text)
    return s if s.isprintable() else toml_string(s)


def what_changed(result: CompareResult) -> list[str]:
    """Lines naming the change: the patch's card edits, then the rules switches."""
    lines = []
    if result.patch_path is not None:
        title = f" ({one_line(result.patch_name)})" if result.patch_name else ""
        edits = [one_line(e) for e in result.patch_lines] or [
            "(an empty patch: no card changes)"]
        lines.append(f"patch {one_line(result.patch_path)}{title}: " + "; ".join(edits))
    if result.rules_b_path is not None:
        sw = rule_change_lines(result) or ["(the same switches as the baseline)"]
        lines.append(f"rules {one_line(result.rules_b_path)}: " + "; ".join(sw))
    lines += [f"deck {one_line(line)}" for line in getattr(result, "deck_b_lines", [])]
    return lines


def design_line(result: CompareResult, paired: Paired) -> str:
    n_tables = paired.games // (paired.deals * paired.players)
    return (f"{len(paired.decks)} decks, {n_tables} tables, {count(paired.deals)} deals per "
            f"table in every seat order = {count(paired.games)} games per run, "
            f"{paired.players} players, seed {result.options.get('seed')}")


def stopping_line(result: CompareResult) -> str | None:
    st = result.stopping
    if st.get("precision") is None:
        return None
    looks = ", ".join(f"{n:,}" for n in st["looks"])
    return (f"precision ±{100 * st['precision']:g} pp on every deck's win-rate change: "
            f"stopped at {count(result.deals)} deals per table after {len(st['looks'])} "
            f"look{'s' if len(st['looks']) != 1 else ''} ({looks}): {st['reason']}")


def vrf_line(paired: Paired) -> str:
    vr = paired.variance_reduction()
    if vr["median"] is None:
        return f"variance reduction: {vr['note']}"
    return (f"variance reduction from pairing (deck win rates): median x{vr['median']:.1f} "
            f"(x{vr['min']:.1f} to x{vr['max']:.1f}); an unpaired comparison would need about "
            f"{count(vr['unpaired_games'])} games per run for the same interval width")


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    return format_table(header, rows, right=right)


def level_text(metric: str, v: Any) -> str:
    """A metric's value in one run: a rate as a percentage; a gap (``gap_<path>``: share
    minus expected) in signed points."""
    return pp(v) if metric.startswith("gap_") or metric == "iwd" else pct(v)


def change_rows(df: pl.DataFrame) -> list[list[str]]:
    return [[r["kind"], r["subject"], metric_label(r["metric"]),
             level_text(r["metric"], r["baseline"]), level_text(r["metric"], r["variant"]),
             change_text(r), vrf_text(r["vrf"])]
            for r in df.iter_rows(named=True)]


#: What the path-expectation columns mean, said once wherever they are shown.
PATH_EXPECTATION_NOTE = (
    "expected: the share of the wins each path would take if every deck won its fair "
    "share with its own mix of paths (the deck pool's expectation); gap = share - "
    "expected: how much more of the wins the path takes than its decks' play styles "
    "explain. A path's share can move because the decks that aim at it win more (the gap "
    "moves) or because the decks' own mixes moved (the expectation moves); only the "
    "first says the path got stronger. Every change paired over deals, 95% intervals")


def path_expectation_rows(paired: Paired) -> list[dict[str, Any]]:
    """Per path, over all games: its share, the deck-pool expectation and the gap, each
    a change row (``CHANGE_SCHEMA``); paths the comparison has no share for left out."""
    rows = {r["metric"]: r for r in paired.of("path").filter(
        pl.col("subject") == "all games").iter_rows(named=True)}
    out = []
    for p in WIN_PATHS:
        share = rows.get(f"share_{p}")
        if share is None:
            continue
        out.append({"path": p, "share": share, "expected": rows.get(f"expected_{p}"),
                    "gap": rows.get(f"gap_{p}")})
    return out


def path_expectation_table(paired: Paired) -> tuple[list[str], list[list[str]]]:
    """Header and rows: each path's share (before -> after) with its change, then the same
    for its deck-pool expectation and for the gap (share - expected)."""
    header = ["path", "share", "change [95% CI]", "expected", "change [95% CI]", "gap",
              "change [95% CI]"]
    rows = []
    for e in path_expectation_rows(paired):
        cells = [e["path"].replace("_", "-")]
        for key in ("share", "expected", "gap"):
            r = e[key]
            if r is None:
                cells += [EMPTY, EMPTY]
                continue
            star = " *" if r["significant"] else ""
            cells += [f"{level_text(r['metric'], r['baseline'])} -> "
                      f"{level_text(r['metric'], r['variant'])}", change_text(r) + star]
        rows.append(cells)
    return header, rows


def moved_line(paired: Paired) -> str | None:
    """The unpatched cards whose figures moved, said as what they are: an effect of the
    change on the games those cards are in, not a change to the cards."""
    moved = paired.changes.filter(pl.col("role") == "moved")
    if moved.height == 0:
        return None
    cards = moved["subject"].n_unique()
    sig = moved.filter(pl.col("significant"))["subject"].n_unique()
    what = paired.what_moved()
    through = "the change" if what == "the change" else f"the change to {what}"
    return (f"Unpatched cards: {sig} of {cards} moved significantly, all through {through} "
            f"(a patched card changes the games of every deck "
            "that meets it, and so every card's GIH WR and IWD there): read them as the "
            "change's reach, not as a change to those cards; they are listed apart")


def score_note(paired: Paired) -> str | None:
    n = paired.changes.filter(pl.col("interval") == "score").height
    if n == 0:
        return None
    return (f"{n:,} changes rest on fewer than {FEW_DEALS} deals that differ between the "
            "runs: their intervals are score intervals on those deals (Tango; McNemar's "
            "p-value), not the normal approximation")


_ANSWERS: dict[tuple, dict[str, Any]] = {}


def answer(paired: Paired) -> dict[str, Any]:
    """The patched cards' adjusted IWD in each run (``patched.patched_iwd``) and the decks'
    spread (``patched.spread``), computed once per comparison."""
    from rnr_sim.compare.patched import patched_iwd, spread

    key = (str(paired.baseline_dir), str(paired.variant_dir), tuple(paired.patched))
    if key not in _ANSWERS:
        _ANSWERS[key] = {"iwd": patched_iwd(paired.baseline_dir, paired.variant_dir,
                                            list(paired.patched)),
                         "spread": spread(paired)}
    return _ANSWERS[key]


def _adjusted_text(r: dict[str, Any]) -> str:
    lo, hi = r["iwd_adjusted_lo"], r["iwd_adjusted_hi"]
    where = ("above 0: over-performs" if lo is not None and lo > 0 else
             "below 0: under-performs" if hi is not None and hi < 0 else "holds 0")
    return f"{pp(r['iwd_adjusted'])} {interval(lo, hi, 1, signed=True)} ({where})"


def patched_card_lines(paired: Paired) -> list[str]:
    """Each patched card's own figures, whatever their significance, before anything else:
    its paired GIH WR, played WR, play rate and raw IWD, then the report's headline
    figure, the adjusted IWD, in each run (the scale the report flags a card on)."""
    rows = paired.of("card").filter(pl.col("role") == "patched")
    if rows.height == 0:
        return []
    out = []
    for card in sorted(set(rows["subject"].to_list())):
        mine = rows.filter(pl.col("subject") == card)
        fields = ", ".join(paired.patched.get(card, []))
        out.append(f"The patched card, {one_line(card)} ({fields}), every figure, paired "
                   "over the same deals:")
        table = [[metric_label(r["metric"]), level_text(r["metric"], r["baseline"]),
                  level_text(r["metric"], r["variant"]), change_text(r),
                  "yes" if r["significant"] else ""]
                 for r in mine.sort("metric").iter_rows(named=True)]
        out += _table(["metric", "before", "after", "change [95% CI]", "significant"],
                      table, {1, 2})
        out += adjusted_lines(paired, card)
    return out


def adjusted_lines(paired: Paired, card: str | None = None) -> list[str]:
    """The report's headline figure for a patched card (``card``, else each), the adjusted
    IWD, in each run: the like-for-like answer to "does it still over-perform?"."""
    adjusted = answer(paired)["iwd"]
    cards = [card] if card is not None else sorted(adjusted)
    return [f"  {'' if card is not None else one_line(c) + ': '}adjusted IWD (the report's "
            f"flag: inside each deck, at equal game length): before "
            f"{_adjusted_text(adjusted[c]['baseline'])}; after "
            f"{_adjusted_text(adjusted[c]['variant'])}" for c in cards if c in adjusted]


def balance_line(paired: Paired) -> str | None:
    """Whether the change left the decks closer together: the spread of their win rates."""
    s = answer(paired)["spread"]
    if s is None:
        return None
    change = s["sd_variant"] - s["sd_baseline"]
    half = 1.96 * s.get("sd_change_se", 0.0)
    return (f"Balance: the decks' win rates spread {pp(s['sd_baseline']).lstrip('+')} -> "
            f"{pp(s['sd_variant']).lstrip('+')} (standard deviation; change "
            f"{pp(change)} {interval(change - half, change + half, 1, signed=True)}), best "
            f"minus worst {pp(s['range_baseline']).lstrip('+')} -> "
            f"{pp(s['range_variant']).lstrip('+')}: {spread_verdict(change, half)}")


def spread_verdict(change: float, half: float) -> str:
    """Closer or further apart only when the change in the spread is clear of 0 by its 95%
    half-width ``half`` (``patched.spread``), else no clear change."""
    if change < -half:
        return "the decks sit closer together after the change"
    if change > half:
        return "the decks sit further apart after the change"
    return "no clear change in how far apart the decks sit"


def format_compare(result: CompareResult, paired: Paired, report: str | None = None) -> str:
    """The terminal summary: what changed, the design, the patched cards' own figures and
    whether the change helped balance, the significant changes (most important first),
    every deck's win rate, and where the files are."""
    out = ["Compare: " + design_line(result, paired)]
    out += ["Change: " + line for line in what_changed(result)]
    for e in result.excluded:
        out.append(f"Left out of both runs: {e.deck} ({e.path}): {e.reason}")
    st = stopping_line(result)
    if st:
        out.append("Stopping: " + st)
        out.append("Stopping rule: " + result.stopping["rule"])
    if result.interrupted:
        out.append("Interrupted: the comparison covers the looks completed before Ctrl-C.")
    out.append("Pairing: game g of the baseline against game g of the variant (same "
               "game_id); 95% intervals from the per-deal differences.")
    out.append(vrf_line(paired))
    note = score_note(paired)
    if note:
        out.append(note + ".")
    out.append("")
    if getattr(result, "deck_b_name", None):
        r = paired.of("deck", "win_rate").filter(pl.col("subject") == result.deck_b_name)
        if r.height:
            r = r.row(0, named=True)
            verdict = ("significant: the second version wins more" if r["significant"]
                       and r["change"] > 0 else "significant: the second version wins less"
                       if r["significant"] else "not significant at this number of deals")
            out += [f"Deck B: {one_line(result.deck_b_name)} wins "
                    f"{pct(r['baseline'])} as DECK, {pct(r['variant'])} as --deck-b "
                    f"{one_line(result.deck_b_path)}, on the same deals: {change_text(r)}, "
                    f"{verdict}", ""]
    patched = patched_card_lines(paired)
    if patched:
        out += patched + [""]
    bal = balance_line(paired)
    if bal:
        out += [bal, ""]

    sig_all = paired.significant
    sig = sig_all.filter(pl.col("role") != "moved")
    header = ["kind", "subject", "metric", "before", "after", "change [95% CI]", "var. red."]
    right = {3, 4, 6}
    out.append(f"Significant changes (Benjamini-Hochberg 5% over {paired.tests:,} tests): "
               f"{sig.height}" + (f", and {sig_all.height - sig.height} figures of unpatched "
                                  "cards (below)" if sig_all.height > sig.height else ""))
    if sig.height:
        out += _table(header, change_rows(sig.head(TERMINAL_ROWS)), right)
        if sig.height > TERMINAL_ROWS:
            out.append(f"(showing {TERMINAL_ROWS} of {sig.height}, most important first: "
                       "decks, paths, seats, matchups, cards, changes under 0.1 pp last; "
                       "every change is in the report)")
    else:
        out.append("No change is significant: the variant plays like the baseline on these "
                   "decks, at this number of games.")
    moved = moved_line(paired)
    if moved:
        out.append(moved + " in the report.")
    out.append("")
    out.append("Deck win rates:")
    decks = paired.of("deck", "win_rate").sort("subject")
    rows = [[r["subject"], pct(r["baseline"]), pct(r["variant"]), change_text(r),
             "yes" if r["significant"] else "", vrf_text(r["vrf"])]
            for r in decks.iter_rows(named=True)]
    out += _table(["deck", "before", "after", "change [95% CI]", "significant", "var. red."],
                  rows, {1, 2, 5})
    header, rows = path_expectation_table(paired)
    if rows:
        out.append("")
        out.append("Victory paths, share of all wins, against the deck-pool expectation "
                   "(* significant):")
        out += _table(header, rows, set())
        out.append("(" + PATH_EXPECTATION_NOTE + ".)")
    out.append("")
    out.append(f"Run dirs: {result.baseline_dir} and {result.variant_dir}")
    if report:
        out.append(f"Report: {report}")
    return "\n".join(out)


def _clean(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v


def summary_json(result: CompareResult, paired: Paired, report: str | None = None
                 ) -> dict[str, Any]:
    """Everything the terminal shows, and every change, for scripts (``--json``)."""
    changes = [{k: _clean(v) for k, v in r.items()} for r in paired.changes.iter_rows(named=True)]
    return {
        "out": str(result.out),
        "baseline": str(result.baseline_dir),
        "variant": str(result.variant_dir),
        "report": report,
        "patch": result.patch_path,
        "patch_name": result.patch_name or None,
        "patch_changes": result.patch_lines,
        "rules_b": result.rules_b_path,
        "deck_b": result.deck_b_path,
        "deck_b_changes": result.deck_b_lines,
        "rules_changes": {k: list(v) for k, v in result.rules_changes.items()},
        "excluded": [{"deck": e.deck, "path": e.path, "reason": e.reason}
                     for e in result.excluded],
        "seed": result.options.get("seed"),
        "players": paired.players,
        "decks": paired.decks,
        "deals": paired.deals,
        "games_per_run": paired.games,
        "stopping": result.stopping,
        "interrupted": result.interrupted,
        "variance_reduction": {k: _clean(v) for k, v in paired.variance_reduction().items()},
        "tests": paired.tests,
        "significant": int(paired.significant.height),
        "patched_cards": paired.patched,
        "patched_adjusted_iwd": {c: {side: {k: _clean(v) for k, v in r.items()
                                             if k.startswith("iwd_adjusted")}
                                      for side, r in sides.items()}
                                 for c, sides in answer(paired)["iwd"].items()},
        "spread": answer(paired)["spread"],
        "significant_moved_cards": int(paired.significant.filter(
            pl.col("role") == "moved")["subject"].n_unique()),
        "timings": result.timings,
        "method": {
            "unit": "a table's deal (its games of one deal index, in every seat order); "
                    "the tables are strata",
            "interval": "change +/- 1.96 * se, se^2 = sum over tables of D_h/(D_h-1) * the "
                        "sum of squares of d about the table's mean / n^2, d = per-deal "
                        "difference of the linearised metric (variant - baseline); where "
                        "fewer than "
                        f"{FEW_DEALS} deals differ, Tango's score interval on the "
                        "discordant deals (column interval = score); a share counting "
                        "fewer than 10 events in a run, Newcombe's paired interval on the "
                        "runs' Wilson intervals (interval = newcombe)",
            "multiple_testing": f"Benjamini-Hochberg at {paired.q:g} over every change tested",
        },
        "changes": changes,
    }


def _met(value: float | None, lo: float | None, hi: float | None) -> bool | None:
    if value is None:
        return None
    return (lo is None or value >= lo) and (hi is None or value <= hi)


def targets_lines(paired: Paired, targets, where: str, largest: tuple | None = None
                  ) -> list[str]:
    """``compare --targets T.toml``: which of a designer's balance targets (docs/design.md,
    "Balance targets") the baseline and the variant meet, on the comparison's own figures:
    each deck's win rate against the field (``deck_share_max``), each path's share of all
    wins (``path_share``), the first seat's win rate (``first_seat``), and with ``largest``
    (each run's ``patched.largest_iwd``) the largest adjusted IWD of any card (``iwd_max``).
    Point estimates, as measured on these deals (``balance`` verifies a change with room on
    fresh deals); ``min_support`` is said to be judged elsewhere."""
    rows: list[tuple[str, str, str, float | None, float | None, float | None, float | None]] = []
    if targets.deck_share_max is not None:
        for r in paired.of("deck", "win_rate").iter_rows(named=True):
            rows.append(("deck_share_max", r["subject"], f"<= {pct(targets.deck_share_max, 0)}",
                         r["baseline"], r["variant"], None, targets.deck_share_max))
    for path, (lo, hi) in sorted(targets.path_share.items()):
        r = paired.of("path", f"share_{path}").filter(pl.col("subject") == "all games")
        if r.height:
            r = r.row(0, named=True)
            rows.append(("path_share", path, f"{pct(lo, 0)}-{pct(hi, 0)}", r["baseline"],
                         r["variant"], lo, hi))
    if targets.first_seat is not None:
        lo, hi = targets.first_seat
        r = paired.of("seat", "first_win_rate").filter(pl.col("subject") == "all games")
        if r.height:
            r = r.row(0, named=True)
            rows.append(("first_seat", "all games", f"{pct(lo, 0)}-{pct(hi, 0)}",
                         r["baseline"], r["variant"], lo, hi))
    if targets.iwd_max is not None and largest is not None and None not in largest:
        b, v = largest
        rows.append(("iwd_max", f"largest: {b[1]} -> {v[1]}", f"<= {pp(targets.iwd_max)}",
                     b[0], v[0], None, targets.iwd_max))
    missed = [[_met(r[3], r[5], r[6]) is False for r in rows],
              [_met(r[4], r[5], r[6]) is False for r in rows]]
    out = [f"Targets ({where}): the baseline misses {sum(missed[0])} of {len(rows)}, the "
           f"variant {sum(missed[1])} (point estimates on these deals; balance verifies a "
           "change with room on fresh deals):"]
    def shown(t: str, x: float | None) -> str:
        return EMPTY if x is None else pp(x) if t == "iwd_max" else pct(x)

    table = [[t, one_line(s), band, shown(t, b), shown(t, v),
              "yes" if _met(v, lo, hi) else "NO" if _met(v, lo, hi) is False else EMPTY]
             for t, s, band, b, v, lo, hi in rows if _met(b, lo, hi) is False
             or _met(v, lo, hi) is False]
    if table:
        out += _table(["target", "subject", "band", "before", "after", "met after"], table,
                      {3, 4})
    elif rows:
        out.append("  every target is met before and after.")
    if targets.min_support is not None:
        out.append("  min_support: not judged here (the equilibrium of every deck against "
                   "every deck: rnr-sim balance).")
    return out
