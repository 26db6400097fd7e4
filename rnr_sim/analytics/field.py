"""A player's question: which deck to bring against a field of a given make-up.

``--field-weights "Bison Stampede=30, Scroll Assembly=20, ..."`` names the field: each deck's
share of the opponents one expects to meet (any positive numbers; they are scaled to sum to
1). ``against_field`` reads a two-player run's matchups and gives every deck's expected win
rate against that field, ``E_i = sum_j w_j r_ij``, ``r_ij`` deck i's win rate in the games
it met deck j (a deck meeting its own copy wins half of them), best first: the first row is
the best response. The interval takes the deal as the unit: ``r_ij`` is a ratio of per-deal
sums (each deal played in both seat orders), its variance linearised over the deals of its
table, and the tables are independent, so ``var E_i = sum_j w_j^2 var r_ij``.
"""

from __future__ import annotations

import difflib
import math
from pathlib import Path

import polars as pl

from rnr_sim.analytics.stats import Z95
from rnr_sim.errors import InputError


def parse_field_weights(spec: str, decks: list[str]) -> dict[str, float]:
    """``"Name=30, Other=20"`` as {deck name: share}, shares summing to 1. A name is a deck
    of the run, by its name or its file's stem, case ignored.

    Raises ``InputError`` (one line) for a bad item, an unknown deck (with the closest
    names), a weight that is not a positive number, or no weight at all.
    """
    by_key = {d.casefold(): d for d in decks}
    by_key.update({d.casefold().replace(" ", "_").replace("-", "_"): d for d in decks})
    out: dict[str, float] = {}
    for item in (x.strip() for x in spec.split(",")):
        if not item:
            continue
        name, eq, value = item.rpartition("=")
        name = name.strip()
        if not eq or not name:
            raise InputError(f"--field-weights: {item!r} is not NAME=WEIGHT; write e.g. "
                             "--field-weights \"Bison Stampede=30, Scroll Assembly=20\"")
        deck = by_key.get(name.casefold()) or by_key.get(Path(name).stem.casefold())
        if deck is None:
            near = difflib.get_close_matches(name, decks, n=2, cutoff=0.5)
            hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else \
                f"; the run's decks: {', '.join(decks)}"
            raise InputError(f"--field-weights: no deck {name!r} in the run{hint}")
        try:
            w = float(value)
        except ValueError:
            w = float("nan")
        if not (w > 0 and math.isfinite(w)):
            raise InputError(f"--field-weights: {item!r}: a weight is a positive number")
        out[deck] = out.get(deck, 0.0) + w
    total = sum(out.values())
    if not out:
        raise InputError("--field-weights: no deck named; write e.g. --field-weights "
                         "\"Bison Stampede=30, Scroll Assembly=20\"")
    return {d: w / total for d, w in out.items()}


def _per_deal(games: pl.LazyFrame, seats: pl.LazyFrame) -> pl.DataFrame:
    """Per ordered pair of decks and deal (``deck``, ``opp``, ``table_id``, ``deal``) of a
    two-player run: ``n`` games and ``w`` wins of ``deck``."""
    s = seats.select("game_id", "seat", "deck", "won")
    g = games.select("game_id", "table_id", "deal")
    pairs = (s.join(s, on="game_id", suffix="_opp").filter(pl.col("seat") != pl.col("seat_opp"))
             .join(g, on="game_id"))
    return (pairs.group_by("deck", pl.col("deck_opp").alias("opp"), "table_id", "deal")
            .agg(pl.len().alias("n"), pl.col("won").cast(pl.Int64).sum().alias("w"))
            .collect())


def _deal_variance(per_deal: pl.DataFrame, z: pl.Expr) -> pl.DataFrame:
    """Per (deck, opp): ``v`` = Σ over its tables h with D_h deals of D_h/(D_h-1) Σ_d
    (z_d − mean_h z)² (a table of one deal adds 0): the variance of Σ_d z_d, the deal the
    unit, the tables strata."""
    by_table = per_deal.with_columns(z.alias("z")).group_by("deck", "opp", "table_id").agg(
        pl.len().alias("D"), ((pl.col("z") - pl.col("z").mean()) ** 2).sum().alias("ss"))
    return by_table.with_columns(
        pl.when(pl.col("D") > 1).then(pl.col("D") / (pl.col("D") - 1) * pl.col("ss"))
        .otherwise(0.0).alias("v")).group_by("deck", "opp").agg(pl.col("v").sum())


def pair_rates(games: pl.LazyFrame, seats: pl.LazyFrame) -> pl.DataFrame:
    """Per ordered pair of decks (``deck``, ``opp``) of a two-player run: ``n`` games,
    ``wins``, ``rate`` and its variance ``var`` with the deal as the unit (see the module
    docstring)."""
    per_deal = _per_deal(games, seats)
    totals = per_deal.group_by("deck", "opp").agg(pl.col("n").sum().alias("N"),
                                                  pl.col("w").sum().alias("W"))
    d = per_deal.join(totals, on=["deck", "opp"])
    # z_d = w_d - R n_d: the linearised ratio's per-deal term (its variance over N^2)
    var = _deal_variance(d, pl.col("w") - pl.col("W") / pl.col("N") * pl.col("n"))
    return (totals.join(var, on=["deck", "opp"])
            .select("deck", "opp", pl.col("N").alias("n"), pl.col("W").alias("wins"),
                    (pl.col("W") / pl.col("N")).alias("rate"),
                    (pl.col("v") / pl.col("N") ** 2).alias("var"))
            .sort("deck", "opp"))


def paired_pair_rates(before: tuple[pl.LazyFrame, pl.LazyFrame],
                      after: tuple[pl.LazyFrame, pl.LazyFrame]) -> pl.DataFrame:
    """Per ordered pair of decks of two two-player runs on the same deals (``compare``'s
    baseline and variant, each a (games, seats) pair): ``rate_b``, ``rate_a``, and
    ``var`` of ``rate_a − rate_b`` paired deal by deal (the per-deal linearised terms
    subtracted before squaring: ``z_d = (w^a_d − R^a n^a_d)/N^a − (w^b_d − R^b n^b_d)/N^b``,
    tables as strata, as ``pair_rates``)."""
    b, a = _per_deal(*before), _per_deal(*after)
    keys = ["deck", "opp", "table_id", "deal"]
    d = b.join(a, on=keys, how="full", coalesce=True, suffix="_a").with_columns(
        pl.col("n", "w", "n_a", "w_a").fill_null(0))
    totals = d.group_by("deck", "opp").agg(
        pl.col("n").sum().alias("N"), pl.col("w").sum().alias("W"),
        pl.col("n_a").sum().alias("N_a"), pl.col("w_a").sum().alias("W_a"))
    d = d.join(totals, on=["deck", "opp"])
    z = ((pl.col("w_a") - pl.col("W_a") / pl.col("N_a") * pl.col("n_a")) / pl.col("N_a")
         - (pl.col("w") - pl.col("W") / pl.col("N") * pl.col("n")) / pl.col("N"))
    var = _deal_variance(d.filter((pl.col("N") > 0) & (pl.col("N_a") > 0)), z)
    return (totals.filter((pl.col("N") > 0) & (pl.col("N_a") > 0)).join(
        var, on=["deck", "opp"])
            .select("deck", "opp", (pl.col("W") / pl.col("N")).alias("rate_b"),
                    (pl.col("W_a") / pl.col("N_a")).alias("rate_a"), pl.col("v").alias("var"))
            .sort("deck", "opp"))


def against_field(rates: pl.DataFrame, decks: list[str], weights: dict[str, float]
                  ) -> pl.DataFrame:
    """Every deck's expected win rate against the weighted field (``expected``, ``lo``,
    ``hi``), best first; ``missing`` lists the field decks it never met (then no figure:
    the run did not measure it)."""
    r = {(a, b): (rate, var) for a, b, rate, var in
         rates.select("deck", "opp", "rate", "var").iter_rows()}
    rows = []
    for deck in decks:
        e, v, missing = 0.0, 0.0, []
        for opp, w in weights.items():
            if opp == deck and (deck, opp) not in r:
                e += w * 0.5  # its own copy: half the games
                continue
            if (deck, opp) not in r:
                missing.append(opp)
                continue
            rate, var = r[(deck, opp)]
            e += w * rate
            v += w * w * var
        ok = not missing
        half = Z95 * math.sqrt(max(v, 0.0))
        rows.append({"deck": deck, "expected": e if ok else None,
                     "lo": max(0.0, e - half) if ok else None,
                     "hi": min(1.0, e + half) if ok else None,
                     "missing": ", ".join(missing)})
    return pl.DataFrame(rows, schema={"deck": pl.String, "expected": pl.Float64,
                                      "lo": pl.Float64, "hi": pl.Float64,
                                      "missing": pl.String}
                        ).sort("expected", descending=True, nulls_last=True)


def paired_against_field(pairs: pl.DataFrame, decks: list[str], weights: dict[str, float]
                         ) -> pl.DataFrame:
    """Every deck's expected win rate against the weighted field before and after
    (``before``, ``after``: ``E_i = Σ_j w_j r_ij`` of each run, its own copy winning half)
    and the paired ``change`` with its 95% interval ``change_lo``/``change_hi``
    (``var = Σ_j w_j² var_ij``, ``paired_pair_rates``: the opponents' tables are
    independent); best after first. A deck that never met a field deck has no figures
    (``missing`` names them)."""
    r = {(d, o): (b, a, v) for d, o, b, a, v in
         pairs.select("deck", "opp", "rate_b", "rate_a", "var").iter_rows()}
    rows = []
    for deck in decks:
        eb = ea = v = 0.0
        missing = []
        for opp, w in weights.items():
            if opp == deck and (deck, opp) not in r:
                eb, ea = eb + w * 0.5, ea + w * 0.5  # its own copy: half the games, both
                continue
            if (deck, opp) not in r:
                missing.append(opp)
                continue
            b, a, var = r[(deck, opp)]
            eb, ea, v = eb + w * b, ea + w * a, v + w * w * var
        ok = not missing
        half = Z95 * math.sqrt(max(v, 0.0))
        rows.append({"deck": deck, "before": eb if ok else None, "after": ea if ok else None,
                     "change": ea - eb if ok else None,
                     "change_lo": ea - eb - half if ok else None,
                     "change_hi": ea - eb + half if ok else None,
                     "missing": ", ".join(missing)})
    schema = {"deck": pl.String, **{k: pl.Float64 for k in (
        "before", "after", "change", "change_lo", "change_hi")}, "missing": pl.String}
    return pl.DataFrame(rows, schema=schema).sort("after", descending=True, nulls_last=True)


def check_before_play(spec: str | None, paths: list[Path]) -> None:
    """Refuse a bad ``--field-weights`` against the decks at ``paths`` before any game is
    played (``deck_names``, ``parse_field_weights``): a bad field costs no games."""
    if spec is not None and paths:
        parse_field_weights(spec, deck_names(list(paths)))


def _two_player_decks(run_dir: str | Path) -> list[str]:
    """A run dir's decks, refusing a run of more than two players a table."""
    import json

    manifest = json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8"))
    if int(manifest.get("players", 2)) != 2:
        raise InputError("--field-weights reads two-player matchups; this run has "
                         f"{manifest.get('players')} players a table")
    return [d["name"] for d in manifest["decks"]]


def field_text(weights: dict[str, float]) -> str:
    """"30% Bison Stampede, 20% Scroll Assembly": the field as read, largest first."""
    return ", ".join(f"{100 * w:.0f}% {d}" for d, w in
                     sorted(weights.items(), key=lambda x: -x[1]))


def _deck_lines(table: pl.DataFrame, key: str, figure) -> list[str]:
    """A line per deck of ``table``: its ``figure(row)``, or "not measured" when ``key``
    is null (it never met a deck of the field)."""
    width = max((len(d) for d in table["deck"]), default=0)
    return [f"  {r['deck']:<{width}}  " + (f"not measured: it never met {r['missing']}"
                                           if r[key] is None else figure(r))
            for r in table.iter_rows(named=True)]


def compare_field_lines(baseline_dir: str | Path, variant_dir: str | Path, spec: str
                        ) -> list[str]:
    """``compare --field-weights``: every deck's expected win rate against the field before
    and after the change, the paired change (``paired_against_field``), and the best
    response before and after."""
    from rnr_sim.runs.manifests import scan_table

    decks = _two_player_decks(baseline_dir)
    weights = parse_field_weights(spec, decks)
    pairs = paired_pair_rates(
        (scan_table(baseline_dir, "games"), scan_table(baseline_dir, "seats")),
        (scan_table(variant_dir, "games"), scan_table(variant_dir, "seats")))
    table = paired_against_field(pairs, decks, weights)
    out = [f"Against your field ({field_text(weights)}): each deck's expected win rate "
           "before -> after, and the change paired on the same deals, 95% interval:"]
    out += _deck_lines(table, "before", lambda r: (
        f"{100 * r['before']:5.1f}% -> {100 * r['after']:5.1f}%  {100 * r['change']:+.1f} pp "
        f"[{100 * r['change_lo']:+.1f}, {100 * r['change_hi']:+.1f}]"))
    measured = table.filter(pl.col("before").is_not_null())
    if measured.height:
        best_b = measured.sort("before", descending=True).row(0, named=True)
        best_a = measured.row(0, named=True)
        out.append(f"Best response: {best_b['deck']} ({100 * best_b['before']:.1f}%) before, "
                   f"{best_a['deck']} ({100 * best_a['after']:.1f}%) after.")
    return out


def best_response(table: pl.DataFrame) -> str | None:
    """The best response to the field (``against_field``'s first row), and the decks not
    told apart from it: their interval reaches its estimate, or its interval theirs."""
    measured = table.filter(pl.col("expected").is_not_null())
    if not measured.height:
        return None
    best = measured.row(0, named=True)
    ties = [r["deck"] for r in list(measured.iter_rows(named=True))[1:]
            if r["hi"] >= best["expected"] or best["lo"] <= r["expected"]]
    line = f"Best response: {best['deck']} ({100 * best['expected']:.1f}%)"
    if ties:
        line += (f"; not told apart from it at this number of deals: {', '.join(ties)} "
                 "(their 95% intervals overlap its estimate)")
    return line + "."


def field_answer(run_dir: str | Path, spec: str) -> tuple[str, pl.DataFrame, str | None]:
    """``--field-weights`` on a run: the field as read (``field_text``), every deck's
    expected win rate against it with its 95% interval, best first (``against_field``: the
    deal as the unit; a deck's own copy in the field counts half its games, as its mirror
    would), and the best response (``best_response``)."""
    from rnr_sim.runs.manifests import scan_table

    decks = _two_player_decks(run_dir)
    weights = parse_field_weights(spec, decks)
    table = against_field(pair_rates(scan_table(run_dir, "games"), scan_table(run_dir, "seats")),
                          decks, weights)
    return field_text(weights), table, best_response(table)


def field_lines(run_dir: str | Path, spec: str) -> list[str]:
    """The terminal answer: the field as read, then every deck against it, best first."""
    field, table, best = field_answer(run_dir, spec)
    out = [f"Against your field ({field}): each deck's expected win rate, 95% interval (the "
           "deal as the unit; a deck's own copy counts half its games), best first:"]
    out += _deck_lines(table, "expected", lambda r: (
        f"{100 * r['expected']:5.1f}% [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]"))
    return out + ([best] if best else [])


def deck_names(paths: list[Path]) -> list[str]:
    """The names the decks at ``paths`` will play under (their ``Name:`` header, else the
    file's stem), read before a run so that a bad --field-weights costs no games."""
    import re

    header = re.compile(r"\s*name\s*:\s*(.*?)\s*(#.*)?$", re.IGNORECASE)
    out = []
    for p in paths:
        try:
            text = Path(p).read_text(encoding="utf-8-sig", errors="replace")[:100_000]
        except (OSError, ValueError):
            text = ""
        found = next((m.group(1) for line in text.splitlines()
                      if (m := header.match(line)) and m.group(1)), None)
        out.append(found or Path(p).stem)
    return out
