"""``rnr-sim expansion`` (issue 15, item 3): the metagame before and after an expansion
on the same deals.

The arithmetic case: a tiny base catalog (tests/fixtures/tiny.toml) and an expansion that
adds only a strictly stronger copy of Minuteman Volley (same cost, same effect, more
damage). Two old decks are the same list (twins); the new deck swaps the 4 Volleys for the
stronger copy and is otherwise that list. So the new deck must beat its twins (interval
above 50%), and the old decks, whose before field is only each other (50% by symmetry up to
noise), must lose share once it joins. 3 tables x 2 seat orders x 300 deals = 1,800 games.
"""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest
from browser import CHROMIUM, run_script
from conftest import LEGAL_DECK, TINY_CATALOG
from fake_engine import REAL_ENGINE, REPO

from rnr_sim import cli
from rnr_sim.expansion import ExpansionOptions, run_expansion, strip_errata, summarize
from rnr_sim.runs import manifests, planning, runner

needs_engine = pytest.mark.skipif(not REAL_ENGINE, reason="needs the real engine's play")

VETERAN = """base = "tiny.toml"

[set]
name = "Veterans"
version = "1"

[[cards]]
name = "Veteran Volley"
type = "attack"
branch = "bison"
rarity = "common"
cost = 2
damage = 30
effects = ["lp 3"]
"""
ERRATA = '\n[errata."Musket Skirmish"]\ndamage = 9\n'
GAMES = 300


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("expansion-inputs")
    shutil.copy(TINY_CATALOG, d / "tiny.toml")
    (d / "veteran.toml").write_text(VETERAN, encoding="utf-8")
    (d / "errata.toml").write_text(VETERAN + ERRATA, encoding="utf-8")
    legal = LEGAL_DECK.read_text(encoding="utf-8")
    (d / "a.txt").write_text(legal.replace("Name: Tiny Legal", "Name: Twin A"), "utf-8")
    (d / "b.txt").write_text(legal.replace("Name: Tiny Legal", "Name: Twin B"), "utf-8")
    new = legal.replace("Name: Tiny Legal", "Name: Veteran").replace(
        "4 Minuteman Volley", "4 Veteran Volley")
    assert new != legal and "Minuteman" not in new
    (d / "new.txt").write_text(new, encoding="utf-8")
    (d / "bad.txt").write_text(new.replace("Veteran Volley", "Veteran Voley"), "utf-8")
    return d


def options(inputs, out, expansion="veteran.toml", **kw):
    kw.setdefault("new_decks", [inputs / "new.txt"])
    return ExpansionOptions(base_decks=[inputs / "a.txt", inputs / "b.txt"],
                            expansion=inputs / expansion, cards=[inputs / "tiny.toml"],
                            games=GAMES, out=out, **kw)


@pytest.fixture(scope="module")
def veteran(module_engine, inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("veteran") / "exp"
    result = run_expansion(options(inputs, out), progress=False, log=lambda m: None)
    return result, summarize(result)


# ---------------------------------------------------------------------------- arithmetic


@needs_engine
def test_stronger_copy_beats_its_base_twins(veteran):
    _, s = veteran
    for r in s["new_vs_old"]:
        assert r["deck"] == "Veteran"
        assert r["rate_lo"] > 0.5, r
    (new,) = s["new_decks"]
    assert new["vs_old_lo"] > 0.5


@needs_engine
def test_old_twins_lose_share_when_the_stronger_deck_joins(veteran):
    _, s = veteran
    for r in s["old_decks"]:
        assert r["delta_hi"] < 0 and r["verdict"] == "loses", r
        assert r["delta"] == pytest.approx(r["after"] - r["before"], abs=1e-9)


@needs_engine
def test_before_side_is_the_old_vs_old_games_of_the_same_run(veteran):
    result, s = veteran
    assert s["runs"]["same_run"] and result.before_dir == result.after_dir
    # twins: 1 old-vs-old table x 2 seat orders per deal; the after side adds 1 table each
    a = next(r for r in s["old_decks"] if r["deck"] == "Twin A")
    assert a["games_before"] == 2 * GAMES and a["games_after"] == 4 * GAMES
    assert a["deals"] == GAMES


@needs_engine
def test_expansion_card_ranked(veteran):
    _, s = veteran
    (card,) = s["cards"]["by_metric"]
    assert card["card"] == "Veteran Volley" and card["set"] == "Veterans"
    assert card["play_rank"] == 1 and card["metric_rank"] == 1
    assert 0 < card["play_rate"] <= 1
    assert s["cards"]["not_in_any_deck"] == []


@needs_engine
def test_errata_on_old_cards_play_a_before_run_on_the_same_tables(module_engine, inputs, tmp_path):
    result = run_expansion(options(inputs, tmp_path / "exp", expansion="errata.toml"),
                           progress=False, log=lambda m: None)
    assert result.errata_used == {"Twin A": ["Musket Skirmish"], "Twin B": ["Musket Skirmish"]}
    assert result.before_dir != result.after_dir
    before = manifests.read_manifest(result.before_dir)
    after = manifests.read_manifest(result.after_dir)
    assert before["tables"] == after["tables"] and before["seed"] == after["seed"]
    s = summarize(result)
    assert not s["runs"]["same_run"] and s["expansion"]["errata"] == ["Musket Skirmish"]


def test_strip_errata_keeps_the_new_cards_only():
    text = strip_errata(VETERAN + ERRATA + '\n[[cards]]\nname = "Late"\n')
    assert "errata" not in text and "damage = 9" not in text
    assert 'name = "Veteran Volley"' in text and 'name = "Late"' in text
    assert "\nbase =" not in text


# ---------------------------------------------------------------------------- the CLI


def cli_args(inputs, out, *extra):
    return ["expansion", str(inputs / "a.txt"), str(inputs / "b.txt"), "--with",
            str(inputs / "veteran.toml"), "--cards", str(inputs / "tiny.toml"),
            "--out", str(out), *extra]


def test_json_shape(module_engine, inputs, tmp_path, capsys):
    code = cli.main(cli_args(inputs, tmp_path / "exp", "--decks", str(inputs / "new.txt"),
                             "--games", "20", "--json", "--no-report"))
    assert code == 0
    s = json.loads(capsys.readouterr().out)
    assert set(s) >= {"expansion", "catalog", "runs", "games", "definition", "old_decks",
                      "new_decks", "new_vs_old", "paths", "cards", "report", "timings"}
    assert s["catalog"]["cards_after"] == s["catalog"]["cards_before"] + 1
    assert {r["deck"] for r in s["old_decks"]} == {"Twin A", "Twin B"}
    assert set(s["old_decks"][0]) >= {"before", "after", "delta", "delta_lo", "delta_hi",
                                      "verdict"}
    assert [r["deck"] for r in s["new_decks"]] == ["Veteran"]
    assert sum(r["before"] for r in s["paths"]) == pytest.approx(1.0)
    assert sum(r["after"] for r in s["paths"]) == pytest.approx(1.0)
    on_disk = json.loads((tmp_path / "exp" / "after" / "expansion.json").read_text())
    assert on_disk["old_decks"] == s["old_decks"]


@pytest.mark.parametrize("case", ["not_layered", "unknown_card", "new_card_in_base_deck"])
def test_bad_input_is_one_line_exit_2(inputs, tmp_path, capsys, case):
    out = tmp_path / "exp"
    if case == "not_layered":
        # veteran.toml's base is tiny.toml, not the Foundation set given with --cards
        args = cli_args(inputs, out, "--decks", str(inputs / "new.txt"))
        args[args.index("--cards") + 1] = str(REPO / "rnr_sim" / "data" / "foundation.toml")
        want = "does not layer over"
    elif case == "unknown_card":
        args = cli_args(inputs, out, "--decks", str(inputs / "bad.txt"))
        want = "bad.txt"
    else:
        args = cli_args(inputs, out, "--decks", str(inputs / "new.txt"))
        args.insert(1, str(inputs / "new.txt"))
        want = "pass it after --decks"
    code = cli.main(args)
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and want in err, err
    assert "Traceback" not in err
    assert not out.exists()


def test_report_has_the_expansion_section(module_engine, inputs, tmp_path, capsys):
    report = tmp_path / "report"
    code = cli.main(cli_args(inputs, tmp_path / "exp", "--decks", str(inputs / "new.txt"),
                             "--games", "20", "--quiet", "--report", str(report)))
    assert code == 0
    page = (report / "index.html").read_text(encoding="utf-8")
    assert '<section id="expansion">' in page and 'href="#expansion"' in page
    assert "Veteran Volley" in page
    assert "## Expansion" in (report / "summary.md").read_text(encoding="utf-8")
    # the card table carries each card's set, which the filter box matches
    assert 'data-s="veteran volley attack' in page and "veterans" in page


def test_report_without_summary_has_no_expansion_section(module_engine, inputs, tmp_path):
    from rnr_sim.report import build_report

    run = runner.start_run(planning.RunOptions(
        decks=[inputs / "a.txt", inputs / "b.txt"], games=5, cards=[inputs / "tiny.toml"],
        out=tmp_path / "run"), progress=False, log=lambda m: None)
    page = build_report(run.run_dir, tmp_path / "report").read_text(encoding="utf-8")
    assert 'id="expansion"' not in page
    assert pl.read_parquet(run.run_dir / "cards.parquet")["set"].unique().to_list() == [
        "Tiny Test Set"]


SET_DRIVER = """
<script>
(function () {
  var out = {};
  try {
    var t = document.getElementById("card-table");
    var pick = document.getElementById("card-set");
    function visible() {
      return Array.prototype.filter.call(t.tBodies[0].rows, function (r) { return !r.hidden; })
        .map(function (r) { return r.cells[0].getAttribute("data-v"); });
    }
    out.options = Array.prototype.map.call(pick.options, function (o) { return o.value; });
    out.all = visible().length;
    pick.value = "Veterans";
    pick.dispatchEvent(new Event("change", {bubbles: true}));
    out.veterans = visible();
    out.count = document.getElementById("card-count").textContent;
    pick.value = "";
    pick.dispatchEvent(new Event("change", {bubbles: true}));
    out.cleared = visible().length;
  } catch (e) { out.error = String(e); }
  out.page_errors = document.getElementById("js-errors").textContent;
  var pre = document.createElement("pre");
  pre.id = "test-out";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine")
def test_card_table_set_filter_in_a_browser(module_engine, inputs, tmp_path):
    report = tmp_path / "report"
    assert cli.main(cli_args(inputs, tmp_path / "exp", "--decks", str(inputs / "new.txt"),
                             "--games", "20", "--quiet", "--report", str(report))) == 0
    out, _ = run_script(report / "index.html", SET_DRIVER, tmp_path)
    assert "error" not in out and out["page_errors"] == ""
    assert out["options"] == ["", "Tiny Test Set", "Veterans"]
    assert out["veterans"] == ["veteran volley"]
    assert out["count"].startswith("Showing 1 of ")
    assert out["cleared"] == out["all"] > 1
