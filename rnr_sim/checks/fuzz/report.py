"""A fuzz run's report for people, and the replay lines of dumped failing cases."""

from __future__ import annotations

import shlex
from pathlib import Path

from rnr_sim import enums
from rnr_sim.checks.fuzz.play import FuzzReport, game_plan
from rnr_sim.rules import SWITCHES


def _n(x: int) -> str:
    return f"{x:,}"


def format_report(report: FuzzReport, dump: Path | None = None) -> str:
    """Counts of what was fuzzed, failures by category and check with the seeds that
    reproduce them, and a few failures spelled out."""
    d = report.to_dict()
    cov = d["coverage"]
    n_verbs = len(enums.VERBS) - 1  # "none" is no verb
    by_p = ", ".join(f"{_n(v)} at {k}" for k, v in d["games_by_players"].items())
    rate = report.total_games / report.elapsed_s if report.elapsed_s > 0 else 0.0
    lines = [
        f"fuzz: cases {d['seed']}..{d['seed'] + d['cases'] - 1} "
        f"({_n(d['case_games'])} games per case and player count)",
        f"  catalogs {_n(d['catalogs'])} ({_n(d['cards'])} cards), decks {_n(d['decks'])}, "
        f"rules profiles {_n(d['profiles'])}",
        f"  games {_n(d['games'])} ({by_p}) in {report.elapsed_s:,.1f} s ({rate:,.0f}/s), "
        + ("every array index checked" if d["indices_checked"] else
           "array indices not checked (the engine's default build)"),
        f"  covered: {cov['types']}/{len(enums.CARD_TYPES)} Orders, "
        f"{cov['branches']}/{len(enums.BRANCHES)} Branches, "
        f"{cov['rarities']}/{len(enums.RARITIES)} rarities, "
        f"{cov['keywords']}/{len(enums.KEYWORDS)} keywords, "
        f"{cov['trigger_verb']}/{len(enums.TRIGGERS) * n_verbs} trigger x verb pairs, "
        f"{cov['kicker_verbs']}/{n_verbs} kicker verbs, "
        f"{cov['switches_changed']}/{len(SWITCHES)} switches changed",
    ]
    cats = d["failures_by_category"]
    lines.append("  failing: " + ", ".join(
        f"{k} {_n(v)}" for k, v in cats.items()) + ("  (games; cases for crash and "
                                                    "rejected)"))
    if report.clean:
        lines.append("clean: no crash, no refused input, no invariant break, no record "
                     "inconsistency, no nondeterminism")
        return "\n".join(lines)
    lines.append("")
    lines.append("failures by check (seeds reproduce: rnr-sim check fuzz --seed S --games "
                 f"{d['case_games']} --players P):")
    for row in d["failures_by_check"]:
        seeds = ", ".join(str(s) for s in row["seeds"][:10])
        more = f" (+{len(row['seeds']) - 10} more)" if len(row["seeds"]) > 10 else ""
        lines.append(f"  {row['category']}/{row['check']}: {_n(row['games'])} failing, "
                     f"seeds {seeds}{more}")
    lines.append("")
    lines.append("examples:")
    for f in report.failures[:40]:
        where = f"seed {f.seed}"
        if f.players:
            where += f", {f.players} players"
        if f.game >= 0:
            where += f", game {f.game}"
        lines.append(f"  [{f.category}/{f.check}] {where}: {f.detail}")
    if dump is not None:
        lines.append("")
        lines.append(f"failing cases written to {dump}/case-<seed>/ (replay lines in "
                     "each REPLAY.txt)")
    return "\n".join(lines)


def write_replays(report: FuzzReport, dump: Path) -> None:
    """For each dumped case, ``REPLAY.txt``: the ``rnr-sim replay`` line of each failing
    game spelled out in the report."""
    by_case: dict[int, list] = {}
    for f in report.failures:
        if f.game >= 0:
            by_case.setdefault(f.seed, []).append(f)
    for seed, failures in by_case.items():
        case_dir = Path(dump) / f"case-{seed}"
        if not case_dir.is_dir():
            continue
        n_decks = len(list((case_dir / "decks").glob("deck-*.txt")))
        lines = [f"# Fuzz case {seed}: rnr-sim check fuzz --seed {seed} --games "
                 f"{report.case_games} --players P", ""]
        for f in failures:
            seat_deck, _deal, _first = game_plan(seed, n_decks, f.players, report.case_games)
            decks = " ".join(shlex.quote(str(case_dir / "decks" / f"deck-{d}.txt"))
                             for d in seat_deck[f.game])
            lines.append(f"# [{f.category}/{f.check}] {f.players} players, game {f.game}: "
                         f"{f.detail}")
            lines.append(f"rnr-sim replay {decks} --cards "
                         f"{shlex.quote(str(case_dir / 'catalog.toml'))} --rules "
                         f"{shlex.quote(str(case_dir / 'rules.toml'))} --seed {seed} "
                         f"--game {f.game}")
            lines.append("")
        (case_dir / "REPLAY.txt").write_text("\n".join(lines), encoding="utf-8")
