"""Per-card metrics, 17lands-style, over the seats whose deck holds the card.

A deck slot k is bit k of the seats' uint64 masks. A card with several copies holds
several slots; its *card mask* in a deck is the OR of its slots' bits, so for one seat:

- in the opening hand (OH): ``opening_mask & card_mask != 0``
- seen, "game in hand" (GIH): ``(opening_mask | drawn_mask) & card_mask != 0``
- drawn later (GD): GIH and not OH
- never seen (GNS): not GIH
- played: ``played_mask & card_mask != 0``
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from rnr_sim.analytics.stats import (
    Z95,
    benjamini_hochberg,
    diff_interval,
    diff_p_value,
    with_rate,
)

COUNT_COLUMNS = (
    "held", "held_wins", "oh", "oh_wins", "gih", "gih_wins", "played", "played_wins",
)
RATES = (  # (name, wins column, games column)
    ("oh_wr", "oh_wins", "oh"),
    ("gd_wr", "gd_wins", "gd"),
    ("gih_wr", "gih_wins", "gih"),
    ("gns_wr", "gns_wins", "gns"),
    ("played_wr", "played_wins", "played"),
    ("play_rate", "played", "held"),
)


def card_masks(decks: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """One row per (deck, card): ``copies`` (slots) and ``mask`` (uint64: OR of ``1 << slot``).

    Slots outside 0..63 cannot be in a uint64 mask and are ignored.
    """
    d = decks.lazy().select("deck", "card", "slot").collect()
    acc: dict[tuple[str, str], list[int]] = {}
    for deck, card, slot in d.iter_rows():
        entry = acc.setdefault((deck, card), [0, 0])
        entry[0] += 1
        if 0 <= slot < 64:
            entry[1] |= 1 << int(slot)
    return pl.DataFrame(
        {
            "deck": [k[0] for k in acc],
            "card": [k[1] for k in acc],
            "copies": [v[0] for v in acc.values()],
            "mask": [v[1] for v in acc.values()],
        },
        schema={"deck": pl.String, "card": pl.String, "copies": pl.Int64, "mask": pl.UInt64},
    ).sort("deck", "card")


def _count_deck(
    won: np.ndarray, opening: np.ndarray, seen: np.ndarray, played: np.ndarray, masks: np.ndarray
) -> np.ndarray:
    """Counts for one deck: int64[len(masks), 8] in COUNT_COLUMNS order.

    Rows are split once into won and lost seats, so each card costs three ANDs and
    three ``count_nonzero`` over the deck's rows (no boolean temporaries per test).
    """
    out = np.zeros((len(masks), len(COUNT_COLUMNS)), dtype=np.int64)
    n, n_won = len(won), int(np.count_nonzero(won))
    ow, ol = opening[won], opening[~won]
    sw, sl = seen[won], seen[~won]
    pw, plost = played[won], played[~won]
    for i, m in enumerate(masks):
        m = np.uint64(m)
        oh_w, oh_l = np.count_nonzero(ow & m), np.count_nonzero(ol & m)
        s_w, s_l = np.count_nonzero(sw & m), np.count_nonzero(sl & m)
        p_w, p_l = np.count_nonzero(pw & m), np.count_nonzero(plost & m)
        out[i] = (n, n_won, oh_w + oh_l, oh_w, s_w + s_l, s_w, p_w + p_l, p_w)
    return out


def card_counts(seats: pl.LazyFrame, masks: pl.DataFrame) -> pl.DataFrame:
    """Counts per (deck, card) over the deck's seat rows.

    ``held``/``held_wins``: the deck's games and wins; ``oh``, ``gih``, ``played`` (and
    ``*_wins``): games (wins) with the card in the opening hand, seen, played (see the
    module docstring). Derived: ``gd = gih - oh``, ``gns = held - gih`` and their wins.
    """
    rows = (
        seats.select("deck", "won", "opening_mask", "drawn_mask", "played_mask")
        .filter(pl.col("deck").is_in(masks["deck"].unique().to_list()))
        .collect()
    )
    blocks = []
    by_deck = {k[0]: v for k, v in rows.partition_by("deck", as_dict=True).items()}
    for deck, cards in masks.partition_by("deck", as_dict=True).items():
        part = by_deck.get(deck[0])
        if part is None:
            counts = np.zeros((cards.height, len(COUNT_COLUMNS)), dtype=np.int64)
        else:
            opening = part["opening_mask"].to_numpy()
            counts = _count_deck(
                part["won"].to_numpy(),
                opening,
                opening | part["drawn_mask"].to_numpy(),
                part["played_mask"].to_numpy(),
                cards["mask"].to_numpy(),
            )
        blocks.append(
            cards.select("deck", "card", "copies").hstack(
                pl.DataFrame(counts, schema=list(COUNT_COLUMNS), orient="row")
            )
        )
    if not blocks:
        schema = {"deck": pl.String, "card": pl.String, "copies": pl.Int64}
        schema |= {c: pl.Int64 for c in COUNT_COLUMNS}
        return _derive(pl.DataFrame(schema=schema))
    return _derive(pl.concat(blocks).sort("deck", "card"))


def _derive(counts: pl.DataFrame) -> pl.DataFrame:
    return counts.with_columns(
        (pl.col("gih") - pl.col("oh")).alias("gd"),
        (pl.col("gih_wins") - pl.col("oh_wins")).alias("gd_wins"),
        (pl.col("held") - pl.col("gih")).alias("gns"),
        (pl.col("held_wins") - pl.col("gih_wins")).alias("gns_wins"),
    )


def card_metrics(counts: pl.DataFrame, by: tuple[str, ...] = ("card",), q: float = 0.05) -> pl.DataFrame:
    """Rates per card (counts summed over the decks that hold it), or per ``by`` columns.

    For each of OH, GD, GIH, GNS, played: the win rate ``<x>_wr = <x>_wins / <x>`` and
    its 95% Wilson interval (``_lo``/``_hi``); ``play_rate = played / held`` likewise.
    ``iwd = gih_wr - gns_wr`` (improvement when drawn) with a normal-approximation
    95% interval ``iwd_lo``/``iwd_hi`` (Agresti-Caffo Wald, ``stats.diff_interval``) and ``iwd_p``, the two-sided p-value of the
    pooled two-proportion z-test of iwd = 0. ``flag`` is ``over``/``under`` where iwd
    differs from 0 after Benjamini-Hochberg at false-discovery rate ``q`` over every card
    with a p-value, else the empty string. Rates are null where their count is 0.
    """
    summed = [*COUNT_COLUMNS, "gd", "gd_wins", "gns", "gns_wins"]
    agg = counts.group_by(list(by)).agg(
        pl.len().alias("decks"), pl.col("copies").sum(), *[pl.col(c).sum() for c in summed]
    )
    lf = agg.lazy()
    for name, w, n in RATES:
        lf = with_rate(lf, name, w, n)
    out = lf.with_columns((pl.col("gih_wr") - pl.col("gns_wr")).alias("iwd")).collect()

    lo, hi, pv = [], [], []
    for w1, n1, w2, n2 in out.select("gih_wins", "gih", "gns_wins", "gns").iter_rows():
        a, b = diff_interval(w1, n1, w2, n2, Z95)
        p = diff_p_value(w1, n1, w2, n2)
        lo.append(None if math.isnan(a) else a)
        hi.append(None if math.isnan(b) else b)
        pv.append(None if math.isnan(p) else p)
    p_arr = np.array([np.nan if p is None else p for p in pv], dtype=np.float64)
    significant = benjamini_hochberg(p_arr, q)
    iwd = out["iwd"].fill_null(0.0).to_numpy()
    flags = np.where(significant & (iwd > 0), "over", np.where(significant & (iwd < 0), "under", ""))
    out = out.with_columns(
        pl.Series("iwd_lo", lo, dtype=pl.Float64),
        pl.Series("iwd_hi", hi, dtype=pl.Float64),
        pl.Series("iwd_p", pv, dtype=pl.Float64),
        pl.Series("flag", flags.tolist(), dtype=pl.String),
    )
    return out.sort(["iwd", *by], descending=[True] + [False] * len(by), nulls_last=True)
