"""The answer a card patch is made for: the patched cards' own figures, like for like with
the report, and whether the change left the decks closer together.

``compare``'s paired card rows are the raw, pooled 17lands figures (GIH WR, IWD, ...): the
only ones with a per-game pairing. The report flags a card by its adjusted IWD (inside each
deck, at equal game length: ``analytics.cards.adjusted_iwd``). ``patched_iwd`` measures
that headline figure for each patched card in both runs, so "does the card still
over-perform?" is read on the report's own scale. ``largest_iwd`` reads the same figure
for every card of a run (``iwd_max``: ``compare --targets`` and ``balance``'s
verification). ``spread`` says whether the change helped balance: the spread of the decks'
win rates before and after.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from rnr_sim.errors import InputError


def card_iwd(run_dir: Path, cards: list[str] | None = None) -> pl.DataFrame:
    """The per-card rows of the report's adjusted IWD (``cards.adjusted_iwd``: ``card``,
    ``iwd_adjusted``, ``_lo``, ``_hi``, ``_p``, ...) of a run dir, for ``cards`` (None:
    every card), reading only the seats of the decks that hold them."""
    from rnr_sim.analytics.cards import adjusted_iwd, card_masks, seat_units
    from rnr_sim.runs.manifests import scan_table

    try:
        decks = pl.read_parquet(run_dir / "decks.parquet")
        masks = card_masks(decks if cards is None else decks.filter(pl.col("card").is_in(cards)))
        if masks.height == 0:
            return pl.DataFrame()
        seats = scan_table(run_dir, "seats")
        if cards is not None:
            seats = seats.filter(pl.col("deck").is_in(masks["deck"].unique().to_list()))
        units = seat_units(scan_table(run_dir, "games"), seats)
    except (OSError, pl.exceptions.PolarsError) as e:
        raise InputError(f"{run_dir}: cannot read the run's tables ({str(e).splitlines()[0]})"
                         ) from None
    return adjusted_iwd(units, masks)[0]


def patched_iwd(baseline_dir: Path, variant_dir: Path, cards: list[str]
                ) -> dict[str, dict[str, dict[str, Any]]]:
    """Per patched card held by a deck: ``{"baseline": row, "variant": row}``, each row the
    card's adjusted IWD in that run (``card_iwd``: the report's columns and interval, the
    deal as the unit). Cards no deck holds are left out. The two intervals are each run's
    own, not paired."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    if not cards:
        return out
    for side, d in (("baseline", baseline_dir), ("variant", variant_dir)):
        per_card = card_iwd(d, cards)
        if per_card.height == 0:
            return {}
        for r in per_card.iter_rows(named=True):
            if r.get("iwd_adjusted") is not None:
                out.setdefault(r["card"], {})[side] = r
    return {c: v for c, v in out.items() if len(v) == 2}


def largest_iwd(run_dir: Path, bound: float) -> tuple[float, str, float, float, float] | None:
    """The largest adjusted IWD of the run's cards (``card_iwd``), its card and interval,
    and the cards' excess over ``bound`` summed (what ``iwd_max`` adds to the distance, as
    balance's search counts its watched cards); None when no card has one."""
    cards = card_iwd(run_dir)
    if cards.height == 0:
        return None
    cards = cards.filter(pl.col("iwd_adjusted").is_not_null()).sort(
        "iwd_adjusted", "card", descending=[True, False])
    if cards.height == 0:
        return None
    r = cards.row(0, named=True)
    excess = float((cards["iwd_adjusted"] - bound).clip(lower_bound=0.0).sum())
    return (float(r["iwd_adjusted"]), r["card"], float(r["iwd_adjusted_lo"]),
            float(r["iwd_adjusted_hi"]), excess)


def spread(paired) -> dict[str, float] | None:
    """The spread of the decks' win rates in each run: their standard deviation and their
    range (best minus worst), before and after; None with fewer than two decks. A
    smaller spread after the change means the decks sit closer to one another.

    ``sd_change_se``: the standard error of the change in the standard deviation, by the
    delta method: sd(x + d) - sd(x) is about g . d, g_i = (x_i - mean) / (n sd), with two
    sources of noise: the paired changes d (each deck's paired standard error) and the
    baseline's own noise in g, which moves with the size of the changes (each deck's
    unpaired standard error over root 2, times d_i / (n sd)); decks taken as independent.
    Its coverage is measured by ``rnr-sim check coverage`` (family "compare deck spread")."""
    import numpy as np

    d = paired.changes.filter((pl.col("kind") == "deck") & (pl.col("metric") == "win_rate")
                              ).drop_nulls(["baseline", "variant"])
    if d.height < 2:
        return None
    b, v = d["baseline"].to_numpy(), d["variant"].to_numpy()
    se = d["se"].fill_null(0.0).to_numpy()
    se_b = d["se_unpaired"].fill_null(0.0).to_numpy() / np.sqrt(2.0)
    sd = float(np.std(b))
    n = len(b)
    grad = (b - b.mean()) / (n * sd) if sd > 0 else np.zeros_like(b)
    moved = (v - b) - (v - b).mean()
    var = np.sum((grad * se) ** 2) + (np.sum((moved * se_b) ** 2) / (n * sd) ** 2
                                      if sd > 0 else 0.0)
    return {"sd_baseline": sd, "sd_variant": float(np.std(v)),
            "sd_change_se": float(np.sqrt(var)),
            "range_baseline": float(b.max() - b.min()),
            "range_variant": float(v.max() - v.min())}
