"""``compare`` in flat memory (issue 14, item 5): the paired analysis reads the two runs
one part at a time and folds each pair of parts into per-block moments
(``compare.fold``), so it never holds more than one part's seat rows of each run, and
what it keeps does not grow with the games; the figures do not depend on how the runs
were cut into parts.

Deterministic checks only (counts of reads and rows, equal frames), no timing and no
memory threshold. Five sample decks: 10 tables x 2 seat orders; with ``chunk_size`` one
table's games, each run is written as 10 parts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from fake_engine import REAL_ENGINE, REPO
from rundir_tools import rewrite_part

from rnr_sim.compare import CompareOptions, compare_runs, run_compare
from rnr_sim.compare import fold as fold_mod
from rnr_sim.errors import InputError
from rnr_sim.runs import manifests

DECKS = [REPO / "decks" / f"{n}.txt" for n in (
    "four_branches_convention", "abolitionist_front", "eagle_blockade", "scroll_assembly",
    "bison_stampede")]
DEALS = 12
PER_TABLE = DEALS * 2  # games of one table: every deal in both seat orders
TABLES = 10
STRONG = '[cards."Minuteman Volley"]\ndamage = 20\ncost = 1\n'

pytestmark = [
    pytest.mark.skipif(not all(d.exists() for d in DECKS), reason="sample decks missing"),
    pytest.mark.skipif(not REAL_ENGINE, reason="needs the real engine's play"),
]


def _compare(out: Path, patch: Path, chunk_size: int):
    return run_compare(CompareOptions(decks=DECKS, patch=patch, games=DEALS, out=out,
                                      chunk_size=chunk_size),
                       progress=False, log=lambda m: None)


@pytest.fixture(scope="module")
def runs(module_engine, tmp_path_factory):
    """The same compare twice: cut into 10 parts per run, and into one."""
    d = tmp_path_factory.mktemp("flat")
    patch = d / "strong.toml"
    patch.write_text(STRONG, encoding="utf-8")
    split = _compare(d / "split", patch, chunk_size=PER_TABLE)
    whole = _compare(d / "whole", patch, chunk_size=100 * PER_TABLE)
    return split, whole


def _parts(run_dir: Path) -> int:
    return len(manifests.complete_parts(run_dir))


def test_the_runs_are_cut_as_the_test_needs(runs):
    split, whole = runs
    assert _parts(split.baseline_dir) == _parts(split.variant_dir) == TABLES
    assert _parts(whole.baseline_dir) == 1


def test_the_analysis_folds_one_pair_of_parts_at_a_time(runs, monkeypatch):
    """10 parts per run: the per-part reducer is called 10 times, every seat row read
    comes through ``read_part`` one part file at a time (never more rows than a part
    holds), and no reader of polars is handed the whole seats table."""
    split, _ = runs
    adds, reads, other = [], [], []
    real_add, real_read = fold_mod.Fold.add, fold_mod.read_part

    def add(self, games_b, seats_b, games_v, seats_v, where=""):
        adds.append((games_b.height, seats_b.height, games_v.height, seats_v.height))
        return real_add(self, games_b, seats_b, games_v, seats_v, where)

    def read_part(path, columns):
        frame = real_read(path, columns)
        reads.append((Path(path), frame.height))
        return frame

    real_scan, real_read_parquet = pl.scan_parquet, pl.read_parquet

    def watch(real):
        def reader(source, *a, **kw):
            sources = source if isinstance(source, list) else [source]
            if any("seats" in Path(s).parts for s in sources) and len(sources) > 1:
                other.append(sources)
            return real(source, *a, **kw)
        return reader

    monkeypatch.setattr(fold_mod.Fold, "add", add)
    monkeypatch.setattr(fold_mod, "read_part", read_part)
    monkeypatch.setattr(pl, "scan_parquet", watch(real_scan))
    monkeypatch.setattr(pl, "read_parquet", watch(real_read_parquet))
    result = compare_runs(split.baseline_dir, split.variant_dir)

    assert len(adds) == TABLES
    assert all(a == (PER_TABLE, 2 * PER_TABLE, PER_TABLE, 2 * PER_TABLE) for a in adds)
    seat_reads = [(p, h) for p, h in reads if p.parent.name == "seats"]
    assert len(seat_reads) == 2 * TABLES  # each part of each run, once
    assert len({p for p, _ in seat_reads}) == 2 * TABLES
    assert max(h for _, h in seat_reads) == 2 * PER_TABLE  # one part's seat rows
    assert other == []  # no read of several seat parts at once
    assert result.games == TABLES * PER_TABLE and result.deals == DEALS


def test_the_figures_do_not_depend_on_the_parts(runs):
    """The same games cut into 10 parts or 1 give the same changes, bit for bit."""
    split, whole = runs
    a = compare_runs(split.baseline_dir, split.variant_dir)
    b = compare_runs(whole.baseline_dir, whole.variant_dir)
    assert a.changes.equals(b.changes)
    assert (a.deals, a.games, a.tests, a.patched) == (b.deals, b.games, b.tests, b.patched)


def test_runs_cut_differently_are_paired_by_game(runs):
    """A baseline in 10 parts against a variant in 1 (the same games): the variant's
    games are read by the baseline part's game_id range, with the same result."""
    split, whole = runs
    mixed = compare_runs(split.baseline_dir, whole.variant_dir)
    same = compare_runs(whole.baseline_dir, whole.variant_dir)
    assert mixed.changes.equals(same.changes)


def test_different_games_in_one_part_are_one_line(runs, tmp_path):
    """A part of the variant whose deals differ is caught at that part: InputError."""
    import shutil

    split, _ = runs
    variant = tmp_path / "variant"
    shutil.copytree(split.variant_dir, variant)
    part = variant / "games" / manifests.complete_parts(variant)[3]
    frame = pl.read_parquet(part)
    rewrite_part(part, frame.with_columns(pl.col("deal").reverse()))
    with pytest.raises(InputError, match="did not play the same games"):
        compare_runs(split.baseline_dir, variant)


def test_slices_that_cut_a_table_anywhere_give_the_same_figures(runs, monkeypatch):
    """Slices of 1, 5 or 7 units (a table's deals cut anywhere, a slice across two
    tables) add up to the same moments, bit for bit: they are sums of integers."""
    split, _ = runs
    ref = compare_runs(split.baseline_dir, split.variant_dir)
    for units in (1, 5, 7):
        monkeypatch.setattr(fold_mod.Fold, "SLICE", units)
        assert compare_runs(split.baseline_dir, split.variant_dir).changes.equals(ref.changes)


def test_what_the_fold_keeps_does_not_grow_with_the_games(runs):
    """The fold's state after 12 deals a table is the same size as after 1 deal: moments
    per block and at most FEW_DEALS stashed units per metric, nothing per unit."""
    split, _ = runs
    mb, parts_b = fold_mod.read_manifest(split.baseline_dir)
    _, parts_v = fold_mod.read_manifest(split.variant_dir)
    decks = fold_mod.read_decks(split.baseline_dir)

    def state_after(deals: int) -> int:
        acc = fold_mod.Fold([d["name"] for d in mb["decks"]], decks, 2)
        for gb, sb, gv, sv in fold_mod.part_pairs(split.variant_dir, parts_b, parts_v, "t"):
            keep = gb["deal"] < deals
            acc.add(gb.filter(keep), sb.filter(pl.Series(np.repeat(keep.to_numpy(), 2))),
                    gv.filter(keep), sv.filter(pl.Series(np.repeat(keep.to_numpy(), 2))))
        acc.finish()
        assert acc.units == TABLES * deals
        fams = acc.families.values()
        arrays = sum(f.S.nbytes + f.W.nbytes + f.differ.nbytes for f in fams)
        stashed = max(len(f.stashed(b, e)) for f in fams for (b, e) in f.stash)
        assert stashed <= fold_mod.FEW_DEALS
        return arrays

    assert state_after(1) == state_after(DEALS)


def test_games_out_of_order_are_refused(runs):
    """The fold completes a table when the next starts: parts handed to it out of
    game_id order are bad input, one line (``check_parts`` already refuses a run dir
    whose part files hold other games)."""
    split, _ = runs
    mb, parts_b = fold_mod.read_manifest(split.baseline_dir)
    _, parts_v = fold_mod.read_manifest(split.variant_dir)
    pairs = list(fold_mod.part_pairs(split.variant_dir, parts_b, parts_v, "t"))
    acc = fold_mod.Fold([d["name"] for d in mb["decks"]],
                        fold_mod.read_decks(split.baseline_dir), 2)
    acc.add(*pairs[1], where="here")
    with pytest.raises(InputError, match="here: the games are not in game_id order"):
        acc.add(*pairs[0], where="here")
