"""``rnr-sim skill``: each deck's win share with the random, default and tuned pilots, on
the same deals for every pilot of a deck, with paired intervals; the report's Skill
section."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from analytics_fixtures import tiny_run

from rnr_sim import skill
from rnr_sim.cli import main
from rnr_sim.report import build_report

REPO = Path(__file__).resolve().parent.parent
DECKS = REPO / "decks"
SAMPLE = sorted(DECKS.glob("*.txt"))
FORBIDDEN = re.compile(r"(?i:\bnan\b|\binf\b)|\bNone\b|\bnull\b")


@pytest.fixture(scope="module")
def sample_table() -> pl.DataFrame:
    """The nine sample decks, 24 deals per opponent: 9 x 2 pilots x 8 x 24 x 2 games."""
    return skill.measure(SAMPLE, games=24, seed=3)


@pytest.fixture
def copy_of_balanced(tmp_path: Path) -> Path:
    """A policy file that is the balanced built-in under another name."""
    path = tmp_path / "copy.toml"
    path.write_text('[policy]\nname = "balanced copy"\nbase = "balanced"\n')
    return path


def test_random_pilot_loses_to_the_default_on_every_sample_deck(sample_table):
    """Restricted play: every sample deck's random pilot wins clearly less than its default
    pilot on the same deals; the paired interval lies below 0 for every deck. (Measured at
    1,000 deals per opponent: -26 to -43 pp. At 24 deals the half-widths are about 6 pp,
    so the smallest cost is some four half-widths clear of 0.)"""
    rnd = sample_table.filter(pl.col("pilot") == "random")
    assert rnd.height == len(SAMPLE)
    for r in rnd.iter_rows(named=True):
        assert r["vs_default_lo"] <= r["vs_default"] <= r["vs_default_hi"] < 0, r["deck"]
    # the difference is the difference of the two win shares, same deck, same deals
    shares = {(r["deck"], r["pilot"]): r["win_share"] for r in sample_table.iter_rows(named=True)}
    for r in rnd.iter_rows(named=True):
        assert r["vs_default"] == pytest.approx(
            shares[(r["deck"], "random")] - shares[(r["deck"], "default")], abs=1e-12)


def test_table_counts_order_and_gap(sample_table):
    """Each pilot plays 8 opponents x 24 deals x 2 seat orders; the default row has no
    difference (it is the reference); decks come by gap, largest first, then by name."""
    assert set(sample_table["games"]) == {8 * 24 * 2} and set(sample_table["deals"]) == {24}
    assert sample_table.filter(pl.col("pilot") == "default")["vs_default"].null_count() == 9
    first = sample_table.group_by("deck", maintain_order=True).agg(pl.col("gap").first(),
                                                                   pl.col("rank").first())
    keys = [(-g, d) for d, g in zip(first["deck"], first["gap"], strict=True)]
    assert keys == sorted(keys) and first["rank"].to_list() == list(range(1, 10))
    best = sample_table.group_by("deck").agg(pl.col("win_share").max(), pl.col("gap").first())
    default = sample_table.filter(pl.col("pilot") == "default").select("deck", "win_share")
    joined = best.join(default, on="deck", suffix="_d")
    assert np.allclose(joined["win_share"] - joined["win_share_d"], joined["gap"])


def test_pilots_of_one_deck_play_the_same_deals(copy_of_balanced):
    """The balanced pilot given twice (default, and a policy file that copies it as the
    tuned pilot) plays every game alike: same engine tables, deals and seat orders, same
    results game by game; its paired difference is exactly 0. The random pilot, on the
    same deals, does not."""
    decks = [DECKS / "bison_bell_uprising.txt", DECKS / "eagle_blockade.txt",
             DECKS / "scroll_assembly.txt"]  # Bison-Bell Uprising plays "balanced"
    games = skill.play(decks, games=12, seed=5,
                       tuned=[f"{decks[0]}={copy_of_balanced}"])
    deck = games.filter(pl.col("deck") == "Bison-Bell Uprising")
    keys = ["table_id", "deal", "first_seat"]
    by = {p: deck.filter(pl.col("pilot") == p).sort(keys) for p in ("random", "default",
                                                                     "tuned")}
    assert by["tuned"]["policy"][0] == "balanced copy"
    for p in ("random", "tuned"):
        assert by[p].select(keys).equals(by["default"].select(keys))
    assert by["tuned"]["score"].to_list() == by["default"]["score"].to_list()
    assert by["random"]["score"].to_list() != by["default"]["score"].to_list()
    # the other sample decks' Policy: headers are their tuned policy files
    assert set(games.filter(pl.col("deck") != "Bison-Bell Uprising")["pilot"]) == {
        "random", "default", "tuned"}
    table = skill.skill_table(games)
    tuned = table.filter((pl.col("pilot") == "tuned")
                         & (pl.col("deck") == "Bison-Bell Uprising")).row(0, named=True)
    assert tuned["vs_default"] == 0 and tuned["vs_default_lo"] == tuned["vs_default_hi"] == 0


def test_a_policy_file_header_gives_tuned_and_its_base_as_default(tmp_path):
    """A deck whose Policy: header is a file: tuned is the file, default its base."""
    policy = tmp_path / "mine.toml"
    policy.write_text('[policy]\nname = "Mine"\nbase = "mill"\n[weights]\nstop = 0.5\n')
    pilots = skill.deck_pilots(str(policy))
    assert [(p.pilot, p.policy) for p in pilots] == [("random", "random"),
                                                     ("default", "mill"), ("tuned", "Mine")]
    assert [p.pilot for p in skill.deck_pilots("aggro")] == ["random", "default"]


def test_json_shape(capsys, copy_of_balanced):
    decks = [str(DECKS / "bison_bell_uprising.txt"), str(DECKS / "eagle_blockade.txt")]
    code = main(["skill", *decks, "--games", "6", "--seed", "2", "--json",
                 "--tuned", f"Bison-Bell Uprising={copy_of_balanced}"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pilots"] == ["random", "default", "tuned"]
    assert data["reference"] == "default" and data["seed"] == 2
    assert data["deals_per_opponent"] == 6 and data["games"] == (3 + 3) * 1 * 6 * 2
    assert [d["deck"] for d in data["decks"]] == ["Bison-Bell Uprising", "Eagle Blockade"]
    first = data["decks"][0]
    assert set(first) == {"deck", "rank", "gap", "best_pilot", "pilots"}
    assert list(first["pilots"]) == ["random", "default", "tuned"]
    assert list(data["decks"][1]["pilots"]) == ["random", "default", "tuned"]
    row = first["pilots"]["random"]
    assert set(row) == {"policy", "deals", "games", "win_share", "win_share_lo",
                        "win_share_hi", "vs_default", "vs_default_lo", "vs_default_hi",
                        "vs_default_p", "seconds"}
    assert row["seconds"] > 0
    assert row["win_share_lo"] <= row["win_share"] <= row["win_share_hi"]
    assert first["pilots"]["default"]["vs_default"] is None


def _fake_table() -> pl.DataFrame:
    """A skill table from hand-made games (no engine): deck A's tuned pilot wins every
    game, its default half, its random none; deck B has no tuned pilot."""
    rows = []
    for deck, scores in (("A", {"random": 0.0, "default": None, "tuned": 1.0}),
                         ("B", {"random": 0.0, "default": None})):
        for pilot, s in scores.items():
            for deal in range(20):
                for first in (0, 1):
                    score = s if s is not None else float((deal + first) % 2)
                    rows.append((deck, pilot, pilot, "Other", 7, deal, first, score))
    return skill.skill_table(pl.DataFrame(rows, schema=skill.GAME_SCHEMA, orient="row"))


def test_fake_table_orders_by_gap_and_flags_a_misjudged_deck():
    table = _fake_table()
    assert table["deck"].unique(maintain_order=True).to_list() == ["A", "B"]
    a = table.filter((pl.col("deck") == "A") & (pl.col("pilot") == "tuned")).row(0, named=True)
    assert a["gap"] == pytest.approx(0.5) and a["best_pilot"] == "tuned"
    assert a["vs_default"] == pytest.approx(0.5) and a["vs_default_lo"] > 0


def test_report_has_a_skill_section_only_with_skill_parquet(tmp_path):
    run = tiny_run(tmp_path / "run")
    plain = build_report(run, tmp_path / "plain")
    assert 'id="skill"' not in plain.read_text(encoding="utf-8")
    assert "## Skill" not in (tmp_path / "plain" / "summary.md").read_text(encoding="utf-8")
    assert not (tmp_path / "plain" / "skill.csv").exists()

    skill.write(_fake_table(), run)
    index = build_report(run, tmp_path / "with")
    page = index.read_text(encoding="utf-8")
    section = page[page.index('<section id="skill">'):]
    section = section[:section.index("</section>")]
    assert "<h2>Skill</h2>" in section and '<img alt="win share of each deck' in section
    assert 'href="#skill"' in page and "tuned Δ [95%]" in section
    assert not FORBIDDEN.search(re.sub(r'src="data:[^"]*"', "", section))
    assert '<tr class="hl"><td>A</td>' in section  # A's tuned pilot wins clearly more
    assert "Its decks are not this run&#x27;s: 0 of its 2 decks" in section
    summary = (tmp_path / "with" / "summary.md").read_text(encoding="utf-8")
    assert "## Skill" in summary and "| A | default | 0.0% | -50.0 pp" in summary
    assert (tmp_path / "with" / "plots" / "skill.png").exists()
    assert pl.read_csv(tmp_path / "with" / "skill.csv").height == 5


@pytest.mark.parametrize("tuned, says", [
    ("no_equals_sign", "write DECK=POLICY.toml"),
    ("Nobody=x.toml", "is none of the decks given"),
    ("Eagle Blockade=balanced", "is not a policy file"),
    ("Eagle Blockade=missing.toml", "missing.toml"),
])
def test_bad_tuned_is_one_line_and_exit_2(capsys, tuned, says, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    code = main(["skill", str(DECKS / "bison_bell_uprising.txt"),
                 str(DECKS / "eagle_blockade.txt"), "--games", "4", "--tuned", tuned,
                 "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and says in err and err.startswith("--tuned")
    assert not out.exists()  # nothing half-written


def test_skill_backend_without_ray_or_unknown_is_one_line_and_exit_2(capsys):
    code = main(["skill", str(DECKS / "bison_bell_uprising.txt"),
                 str(DECKS / "eagle_blockade.txt"), "--games", "4", "--backend", "spark"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--backend spark" in err
    code = main(["skill", str(DECKS / "bison_bell_uprising.txt"),
                 str(DECKS / "eagle_blockade.txt"), "--games", "4", "--address", "auto"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--address" in err


def test_search_pilot_joins_the_table_on_the_same_deals():
    """--rollouts adds the search pilot: the same deals and game count as the other pilots,
    its paired difference from the default and from the tuned pilot, and wall time spent."""
    table = skill.measure(SAMPLE[:3], games=3, seed=2, rollouts=2, determinizations=1)
    search = table.filter(pl.col("pilot") == "search")
    assert search.height == 3
    assert set(table["games"]) == {2 * 3 * 2} and set(table["deals"]) == {3}
    for r in search.iter_rows(named=True):
        assert r["policy"].startswith("search K=2 N=1")
        assert r["vs_default_lo"] <= r["vs_default"] <= r["vs_default_hi"]
        assert r["vs_tuned_lo"] <= r["vs_tuned"] <= r["vs_tuned_hi"]
        assert r["seconds"] > 0
    data = skill.to_json(table)
    assert "search" in data["pilots"]
    assert all("vs_tuned" in d["pilots"]["search"] for d in data["decks"])
    text = "\n".join(skill.text_lines(table))
    assert "search − tuned" in text and "Time" in text


def test_search_budget_is_checked():
    """A search budget out of range is one line naming the option."""
    from rnr_sim.errors import InputError

    with pytest.raises(InputError, match="--rollouts"):
        skill.play(SAMPLE[:2], games=2, rollouts=-1)
    with pytest.raises(InputError, match="--determinizations"):
        skill.play(SAMPLE[:2], games=2, rollouts=2, determinizations=0)
    with pytest.raises(InputError, match="--gate"):
        skill.play(SAMPLE[:2], games=2, rollouts=2, gate=-1)


def test_search_flag_adds_the_yardstick_at_its_default_budget(capsys):
    """``--search`` adds the search pilot at ``skill.SEARCH_DEFAULT`` with the default gate
    and hidden lists (R59); ``--open-lists`` and ``--gate`` show in its name; the default
    pilots' games are the same with it as without (it plays engine calls of its own)."""
    decks = [str(p) for p in SAMPLE[:2]]
    assert main(["skill", *decks, "--games", "2", "--seed", "4", "--json", "--search"]) == 0
    data = json.loads(capsys.readouterr().out)
    k, n = skill.SEARCH_DEFAULT
    policy = data["decks"][0]["pilots"]["search"]["policy"]
    assert policy.startswith(f"search K={k} N={n} z=1 hidden lists")
    assert main(["skill", *decks, "--games", "2", "--seed", "4", "--json", "--rollouts", "1",
                 "--determinizations", "1", "--gate", "0", "--open-lists"]) == 0
    other = json.loads(capsys.readouterr().out)
    assert other["decks"][0]["pilots"]["search"]["policy"].startswith(
        "search K=1 N=1 z=0 open lists")
    for a, b in zip(data["decks"], other["decks"], strict=True):
        assert a["pilots"]["tuned"]["win_share"] == b["pilots"]["tuned"]["win_share"]


def test_skill_out_takes_the_dirs_lock(tmp_path, capsys):
    """``skill --out DIR`` wrote skill.parquet while `run`, `discover` or `balance` held the
    dir (issue 44, item 5): a second writer is told the holder's pid, exit 2, nothing
    written; a folder it created for nothing is removed again."""
    import os

    from rnr_sim.runs.dirlock import DirLock

    out = tmp_path / "held"
    out.mkdir()
    with DirLock(out, "run dir"):
        code = main(["skill", *map(str, SAMPLE[:2]), "--games", "2", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and str(os.getpid()) in err and "\n" not in err
    assert list(out.iterdir()) == []
    new = tmp_path / "new"
    assert main(["skill", str(SAMPLE[0]), "--games", "2", "--out", str(new)]) == 2
    assert not new.exists()  # bad input (one deck): the folder it made is gone
