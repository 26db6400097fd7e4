"""The comparison in words: the terminal summary and the machine-readable summary."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from rnr_sim.compare.paired import METRIC_LABELS, Paired
from rnr_sim.compare.runs import CompareResult
from rnr_sim.report.format import EMPTY, count, interval, pct, pp

TERMINAL_ROWS = 30


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def change_text(row: dict[str, Any]) -> str:
    """``+6.2 pp [+5.4–+7.0]``, or ``—`` when either side has no value."""
    if row["change"] is None:
        return EMPTY
    d = 2 if abs(row["change"]) < 0.001 else 1  # a change under 0.1 pp is not "+0.0"
    return f"{pp(row['change'], d)} {interval(row['lo'], row['hi'], d, signed=True)}"


def vrf_text(v: Any) -> str:
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return EMPTY
    return f"x{v:.1f}"


def rule_change_lines(result: CompareResult) -> list[str]:
    return [f"{k}: {_toml(a)} -> {_toml(b)}" for k, (a, b) in result.rules_changes.items()]


def _toml(v: Any) -> str:
    from rnr_sim.commands.catalog import toml_value

    return toml_value(v)


def what_changed(result: CompareResult) -> list[str]:
    """Lines naming the change: the patch's card edits, then the rules switches."""
    lines = []
    if result.patch_path is not None:
        title = f" ({result.patch_name})" if result.patch_name else ""
        edits = result.patch_lines or ["(an empty patch: no card changes)"]
        lines.append(f"patch {result.patch_path}{title}: " + "; ".join(edits))
    if result.rules_b_path is not None:
        sw = rule_change_lines(result) or ["(the same switches as the baseline)"]
        lines.append(f"rules {result.rules_b_path}: " + "; ".join(sw))
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
    from rnr_sim.commands.catalog import format_table

    return format_table(header, rows, right=right)


def change_rows(df: pl.DataFrame) -> list[list[str]]:
    return [[r["kind"], r["subject"], metric_label(r["metric"]), pct(r["baseline"]),
             pct(r["variant"]), change_text(r), vrf_text(r["vrf"])]
            for r in df.iter_rows(named=True)]


def format_compare(result: CompareResult, paired: Paired, report: str | None = None) -> str:
    """The terminal summary: what changed, the design, the significant changes (most
    important first), every deck's win rate, and where the files are."""
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
    out.append("")

    sig = paired.significant
    header = ["kind", "subject", "metric", "before", "after", "change [95% CI]", "var. red."]
    right = {3, 4, 6}
    out.append(f"Significant changes (Benjamini-Hochberg 5% over {paired.tests:,} tests): "
               f"{sig.height}")
    if sig.height:
        out += _table(header, change_rows(sig.head(TERMINAL_ROWS)), right)
        if sig.height > TERMINAL_ROWS:
            out.append(f"(showing {TERMINAL_ROWS} of {sig.height}, most important first: "
                       "decks, paths, seats, matchups, cards; every change is in the report)")
    else:
        out.append("No change is significant: the variant plays like the baseline on these "
                   "decks, at this number of games.")
    out.append("")
    out.append("Deck win rates:")
    decks = paired.of("deck", "win_rate").sort("subject")
    rows = [[r["subject"], pct(r["baseline"]), pct(r["variant"]), change_text(r),
             "yes" if r["significant"] else "", vrf_text(r["vrf"])]
            for r in decks.iter_rows(named=True)]
    out += _table(["deck", "before", "after", "change [95% CI]", "significant", "var. red."],
                  rows, {1, 2, 5})
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
        "timings": result.timings,
        "method": {
            "unit": "deal (every table's games of one deal index, in every seat order)",
            "interval": "change +/- 1.96 * sd(d) / sqrt(n), d = per-deal difference of the "
                        "linearised metric (variant - baseline)",
            "multiple_testing": f"Benjamini-Hochberg at {paired.q:g} over every change tested",
        },
        "changes": changes,
    }
