"""Layered catalogs through the commands that play games (issue 15, item 1): ``--cards``
given more than once for ``run`` (its manifest lists every file in load order with its
SHA-256, and ``--resume`` reloads them), ``compare --patch`` over the layers, and a deck
naming a card of a layer that is not loaded. Tiny catalogs and a few games each."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from conftest import LEGAL_DECK, TINY_CATALOG, deck_text
from typer.testing import CliRunner

from rnr_sim.cards import load_catalog
from rnr_sim.cli import app
from rnr_sim.patches import apply_patch, parse_patch
from rnr_sim.runs import manifests

pytestmark = pytest.mark.usefixtures("engine")  # conftest.py: the engine the tests use

# A layer over the tiny set: a new Eagle attack and an erratum of a base card.
FRONTIER = '''[set]
name = "Frontier"
version = "2"

[[cards]]
name = "Powder Horn"
type = "attack"
branch = "eagle"
rarity = "common"
cost = 2
damage = 7

[errata."Minuteman Volley"]
damage = 8
'''

cli = CliRunner()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def layers(write) -> tuple[Path, Path]:
    """(base, expansion): the tiny test set and the Frontier layer over it."""
    return (write("base.toml", TINY_CATALOG.read_text(encoding="utf-8")),
            write("frontier.toml", FRONTIER))


@pytest.fixture
def frontier_deck(write, legal_counts) -> Path:
    """The tiny legal deck with its 4 Musket Skirmish swapped for 4 Powder Horn (Frontier):
    base cards, an errata'd base card (Minuteman Volley) and an expansion card."""
    counts = legal_counts
    counts["Musket Skirmish"] = 0
    counts["Powder Horn"] = 4
    return write("frontier_deck.txt", deck_text(counts, "Frontier Muster"))


def cards_args(*paths: Path) -> list[str]:
    return [a for p in paths for a in ("--cards", str(p))]


def run_layered(out: Path, deck: Path, layers, *extra: str):
    return cli.invoke(app, ["run", str(deck), str(LEGAL_DECK), *cards_args(*layers),
                            "--games", "3", "--quiet", "--out", str(out), *extra])


def part_bytes(run_dir: Path) -> dict[str, bytes]:
    return {f"{t}/{p.name}": p.read_bytes() for t in ("games", "seats")
            for p in sorted((run_dir / t).glob("part-*.parquet"))}


def test_run_over_two_layers_records_both_sources_in_order(tmp_path, layers, frontier_deck):
    base, frontier = layers
    result = run_layered(tmp_path / "r", frontier_deck, layers)
    assert result.exit_code == 0, result.output
    m = manifests.read_manifest(tmp_path / "r")
    assert m["status"] == "complete" and m["games_done"] == 3 * 2  # 1 table, 2 seat orders
    cat = m["catalog"]
    assert cat["sources"] == [{"path": str(base.resolve()), "sha256": sha256(base)},
                              {"path": str(frontier.resolve()), "sha256": sha256(frontier)}]
    joined = f"{sha256(base)}\n{sha256(frontier)}\n".encode("ascii")
    assert cat["sha256"] == hashlib.sha256(joined).hexdigest()
    assert cat["name"] == "Tiny Test Set + Frontier" and cat["path"] is None
    cards = pl.read_parquet(tmp_path / "r" / "cards.parquet")
    sets = dict(zip(cards["name"], cards["set"], strict=True))
    assert sets["Powder Horn"] == "Frontier" and sets["Minuteman Volley"] == "Tiny Test Set"
    assert cards.filter(pl.col("name") == "Minuteman Volley")["damage"].item() == 8
    slots = pl.read_parquet(tmp_path / "r" / "decks.parquet")
    assert "Powder Horn" in slots.filter(pl.col("deck") == "Frontier Muster")["card"].to_list()


def test_one_file_run_lists_its_one_source(tmp_path, layers):
    base, _ = layers
    result = cli.invoke(app, ["run", str(LEGAL_DECK), "--mirrors",
                              "--cards", str(base), "--games", "2", "--quiet",
                              "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    cat = manifests.read_manifest(tmp_path / "r")["catalog"]
    assert cat["path"] == str(base.resolve()) and cat["sha256"] == sha256(base)
    assert cat["sources"] == [{"path": str(base.resolve()), "sha256": sha256(base)}]


def stop_after_first_chunk(run_dir: Path) -> None:
    """Leave ``run_dir`` as a run stopped after its first chunk leaves it: later parts
    gone, the manifest recording chunk 0 only."""
    m = manifests.read_manifest(run_dir)
    for c in range(1, m["chunks"]["total"]):
        for t in ("games", "seats"):
            (run_dir / t / f"part-{c:05d}.parquet").unlink()
    m["chunks"]["complete"] = [0]
    m["games_done"] = m["chunk_size"]
    m["status"] = "incomplete"
    manifests.write_manifest(run_dir, m)


def test_resume_of_a_layered_run_reloads_every_layer(tmp_path, layers, frontier_deck):
    whole = run_layered(tmp_path / "whole", frontier_deck, layers, "--chunk-size", "2")
    assert whole.exit_code == 0, whole.output
    shutil.copytree(tmp_path / "whole", tmp_path / "stopped")
    stop_after_first_chunk(tmp_path / "stopped")
    resumed = cli.invoke(app, ["run", "--resume", str(tmp_path / "stopped"), "--quiet"])
    assert resumed.exit_code == 0, resumed.output
    m = manifests.read_manifest(tmp_path / "stopped")
    assert m["status"] == "complete" and len(m["resumed"]) == 1
    assert m["chunks"]["complete"] == [0, 1, 2]
    assert part_bytes(tmp_path / "stopped") == part_bytes(tmp_path / "whole")


def test_resume_refuses_a_changed_expansion_naming_it(tmp_path, layers, frontier_deck):
    _, frontier = layers
    assert run_layered(tmp_path / "r", frontier_deck, layers, "--chunk-size", "2").exit_code == 0
    stop_after_first_chunk(tmp_path / "r")
    frontier.write_text(FRONTIER.replace("damage = 8", "damage = 9"), encoding="utf-8")
    result = cli.invoke(app, ["run", "--resume", str(tmp_path / "r"), "--quiet"])
    assert result.exit_code == 2
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in result.output
    assert f"card catalog file {frontier.resolve()} changed since the run started" in message


def test_expansion_card_without_the_expansion_is_one_line_exit_2(tmp_path, layers,
                                                                 frontier_deck):
    base, _ = layers
    result = run_layered(tmp_path / "r", frontier_deck, [base])
    assert result.exit_code == 2
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in result.output
    line = frontier_deck.read_text(encoding="utf-8").splitlines().index("4 Powder Horn") + 1
    assert message.startswith(f"{frontier_deck}:{line}: unknown card 'Powder Horn'")
    assert not (tmp_path / "r").exists()  # nothing half-written


def test_patch_applies_over_a_layered_catalog(layers):
    catalog = load_catalog(list(layers))
    patch = parse_patch('[cards."Powder Horn"]\ndamage = 9\n\n[cards."Stone Fort"]\ndp = 5\n',
                        where="p.toml")
    patched = apply_patch(patch, catalog)
    after = patched.catalog
    assert [c.name for c in after.cards] == [c.name for c in catalog.cards]  # same ids
    assert after.cards[after.by_name["Powder Horn"]].damage == 9
    assert after.cards[after.by_name["Stone Fort"]].dp == 5
    assert after.cards[after.by_name["Minuteman Volley"]].damage == 8  # the erratum stays
    assert {(c, f) for c, f, _, _ in patched.changed} == {("Powder Horn", "damage"),
                                                          ("Stone Fort", "dp")}
    assert after.name == "Tiny Test Set + Frontier"
    unchanged = [n for n in after.by_name if n not in ("Powder Horn", "Stone Fort")]
    assert all(after.cards[after.by_name[n]].stats() == catalog.cards[catalog.by_name[n]].stats()
               for n in unchanged)


def test_compare_patch_over_layers_plays_and_names_only_the_patched_card(tmp_path, layers,
                                                                         frontier_deck,
                                                                         write):
    patch = write("horn.toml", '[cards."Powder Horn"]\ndamage = 9\n')
    out = tmp_path / "cmp"
    result = cli.invoke(app, ["compare", str(frontier_deck), str(LEGAL_DECK),
                              *cards_args(*layers), "--patch", str(patch), "--games", "2",
                              "--no-report", "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "compare.json").read_text(encoding="utf-8"))
    assert summary["patched_cards"] == {"Powder Horn": ["damage"]}
    base_m = manifests.read_manifest(out / "baseline")
    assert [s["path"] for s in base_m["catalog"]["sources"]] == [str(p.resolve())
                                                                  for p in layers]
    variant = pl.read_parquet(out / "variant" / "cards.parquet")
    baseline = pl.read_parquet(out / "baseline" / "cards.parquet")
    assert variant["set"].to_list() == baseline["set"].to_list()
    horn = variant.filter(pl.col("name") == "Powder Horn")
    assert horn["damage"].item() == 9 and horn["set"].item() == "Frontier"


def test_the_report_reproduces_a_layered_run_with_every_catalog_file(tmp_path, layers,
                                                                     frontier_deck):
    """The report's "reproduce" command, rebuilt from the manifest when the run recorded no
    command line (a run started from Python), names every catalog file in load order (a
    layered run's manifest has no single catalog path)."""
    import json

    from rnr_sim.analytics import compute_metrics, load_run
    from rnr_sim.report.build import reproduce_command

    base, frontier = layers
    assert run_layered(tmp_path / "r", frontier_deck, layers).exit_code == 0
    path = tmp_path / "r" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.pop("command", None)
    path.write_text(json.dumps(manifest))
    command = reproduce_command(compute_metrics(load_run(tmp_path / "r")))
    assert f"--cards {base.resolve()} --cards {frontier.resolve()}" in command
