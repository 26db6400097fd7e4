"""The Card power page (``rnr-sim report POWER_DIR``, ``report/power.py``): written from a
real power dir, the flagged cards first and the cards no field deck plays marked, the
figure beside it, the deck doctor's cuts and swaps; a dir edited by hand refused in one
line; the way a page finds the Card power page (``report/links.py``; the run report's link
in a browser: tests/test_report_page.py); the table sorted in a browser.

Two tiny power runs of the engine (two cards of the sample catalog, against two sample
decks: a few seconds). Flags need many cards of an Order (a card is judged against the
median card of its Order), so the flagged page rewrites the pool's table with known rows
and stamps it as ``power/output.py`` does."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from browser import CHROMIUM, run_script

from rnr_sim.cli import main
from rnr_sim.files import write_parquet
from rnr_sim.report import links
from rnr_sim.report.power import UNPLAYED, build_power_report
from rnr_sim.runs import searchdirs

ROOT = Path(__file__).parent.parent
TINY = ["--cards", str(ROOT / "rnr_sim" / "data" / "foundation.toml"),
        "--card", "Minuteman Volley", "--card", "Naval Blockade",
        "--field", str(ROOT / "decks" / "bison_stampede.txt"),
        str(ROOT / "decks" / "scroll_assembly.txt"), "--quiet"]
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """A pool's power dir and a deck doctor's (Eagle Blockade), each a tiny run."""
    base = tmp_path_factory.mktemp("power")
    out = {"pool": base / "pool", "doctor": base / "doctor"}
    assert main(["power", *TINY, "--budget", "40000", "--out", str(out["pool"])]) == 0
    assert main(["power", *TINY, "--deck", str(ROOT / "decks" / "eagle_blockade.txt"),
                 "--budget", "20000", "--out", str(out["doctor"])]) == 0
    return out


def manifest(d: Path) -> dict:
    return json.loads((d / "manifest.json").read_text(encoding="utf-8"))


def restamp(d: Path, name: str, frame: pl.DataFrame, **fields) -> None:
    """Write table ``name`` of power dir ``d`` as the command would have: stamped with the
    dir's identity, its SHA-256 in the manifest (and ``fields`` set there, the manifest's
    figures sealed again)."""
    m = manifest(d)
    ident = searchdirs.as_read(searchdirs.power_identity(m))
    m["files"][f"{name}.parquet"] = write_parquet(d / f"{name}.parquet", frame,
                                                  searchdirs.table_stamp(ident, name))
    m.update(fields)
    searchdirs.seal_content(m)  # as the command seals its figures
    (d / "manifest.json").write_text(json.dumps(m, indent=2), encoding="utf-8")


def card(name: str, order: str, flag: str = "", gain: float | None = 0.01,
         in_field: int = 2, edge: float = 0.0) -> dict:
    """A row of power.parquet."""
    g = {} if gain is None else {"gain": gain, "gain_lo": gain - 0.01, "gain_hi": gain + 0.01,
                                 "host": "Bison Stampede", "copies": 4, "deals": 200}
    return {"card": name, "order": order, "branch": "bison", "rarity": "common", "cost": 2,
            "set": "Foundation Sample", "in_field": in_field, "mean_gain": 0.0,
            "mean_gain_lo": -0.01, "mean_gain_hi": 0.01, "edge": edge, "edge_lo": edge - 0.01,
            "edge_hi": edge + 0.01, "gain_search": gain, "hosts": 2, "games": 900,
            "flag": flag, "p_strong": 0.5, "p_weak": 0.5, **g}


#: Known rows, in no useful order: what the page must put first, and mark.
ROWS = [
    card("Plain Attack", "attack", gain=0.03),
    card("Weak Rights", "rights", "too weak", -0.05, edge=-0.06),
    card("Strong Attack", "attack", "too strong", 0.12, in_field=0, edge=0.10),
    card("Unmeasured Pillar", "pillar", gain=None),
    card("Strong Pillar", "pillar", "too strong", 0.05, edge=0.04),
    card("Plain Rights", "rights", gain=0.00, in_field=0),
    card("Stronger Attack", "attack", "too strong", 0.20, edge=0.18),
]
#: Flagged first (too strong, then too weak), each by Order, then the rest by Order.
EXPECTED = ["Strong Pillar", "Stronger Attack", "Strong Attack", "Weak Rights",
            "Unmeasured Pillar", "Plain Rights", "Plain Attack"]


@pytest.fixture(scope="module")
def flagged(made, tmp_path_factory) -> Path:
    """A copy of the pool's dir whose power.parquet holds ROWS; its Card power page."""
    from rnr_sim.power.output import POWER_SCHEMA

    d = Path(shutil.copytree(made["pool"], tmp_path_factory.mktemp("flagged") / "pool"))
    restamp(d, "power", pl.DataFrame(ROWS, schema=POWER_SCHEMA), cards=len(ROWS),
            flags={"too strong": 3, "too weak": 1})
    return build_power_report(d, d.parent / "report")


def headers(page: str, table: str) -> list[str]:
    head = re.search(rf'<table id="{table}".*?<thead>(.*?)</thead>', page, re.S).group(1)
    return re.findall(r"<th[^>]*>([^<]*)</th>", head)


def table_rows(page: str, table: str) -> list[list[str]]:
    """Each body row of table ``table``: its cells' sort values (``data-v``)."""
    body = re.search(rf'<table id="{table}".*?<tbody>(.*?)</tbody>', page, re.S).group(1)
    return [[html.unescape(v) for v in re.findall(r'<td data-v="([^"]*)"', row)]
            for row in re.findall(r"<tr.*?</tr>", body)]


def test_the_command_writes_the_page_its_figure_and_summary(made, tmp_path):
    out = tmp_path / "r"
    assert main(["report", str(made["pool"]), "--out", str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert (out / "plots" / "power.png").read_bytes().startswith(PNG)
    assert "data:image/png;base64" in page  # the same figure, inline
    assert "Minuteman Volley" in page and "Naval Blockade" in page
    assert "What the figures mean" in page and "Benjamini-Hochberg" in page
    assert "http://" not in page and "https://" not in page
    assert re.findall(r"<script([^>]*)>", page) == [""]  # one inline script, the sorting
    assert {r[1] for r in table_rows(page, "power-table")} == {"Minuteman Volley",
                                                               "Naval Blockade"}
    assert "# Card power: pool" in (out / "summary.md").read_text(encoding="utf-8")


def test_flagged_cards_first_by_order_and_unplayed_cards_marked(flagged):
    page = flagged.read_text(encoding="utf-8")
    rows = table_rows(page, "power-table")
    assert [r[1] for r in rows] == EXPECTED
    assert [r[2] for r in rows] == ["too strong"] * 3 + ["too weak"] + [""] * 3
    marked = re.findall(rf'<td data-v="([^"]*)">[^<]*<span class="badge">{UNPLAYED}</span>',
                        page)
    assert marked == ["Strong Attack", "Plain Rights"]  # in_field == 0, and only those
    # percentage points with their intervals; a card without a gain shows none
    gain = headers(page, "power-table").index("gain in its best host [95%]")
    assert [r[gain] for r in rows][-3:] == ["", "0.0", "0.03"]  # no gain: none, and last
    assert "+20.0 pp [+19.0, +21.0]" in page  # percentage points with their interval
    lead = page[page.index("<p class='lead'>"):page.index("</ol>")]
    assert "7 cards measured" in lead and "3 flagged too strong, 1 too weak" in lead
    assert "Stronger Attack (+18.0 pp in Bison Stampede)" in lead
    assert "1 of the 3 cards flagged too strong are in no field deck" in lead


def test_the_figure_is_drawn_with_the_flagged_cards(flagged):
    png = (flagged.parent / "plots" / "power.png").read_bytes()
    assert png.startswith(PNG) and len(png) > 10_000


def test_the_deck_doctor_page_prints_cuts_and_swaps(made, tmp_path):
    out = tmp_path / "doc"
    assert main(["report", str(made["doctor"]), "--out", str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "Deck doctor: Eagle Blockade" in page
    cuts = pl.read_parquet(made["doctor"] / "cuts.parquet")
    shown = table_rows(page, "cuts-table")
    assert [r[0] for r in shown] == cuts["card"].to_list()  # least worth first, as written
    worth = [float(r[2]) for r in shown if r[2]]
    assert worth == sorted(worth)
    adds = pl.read_parquet(made["doctor"] / "adds.parquet").sort("gain", descending=True)
    best = adds.row(0, named=True)
    lo, hi = 100 * best["gain_lo"], 100 * best["gain_hi"]
    line = (f"cut {best['copies']} {best['out']}, add {best['copies']} {best['card']}: "
            f"{100 * best['gain'] + 0.0:+.1f} pp [{lo + 0.0:+.1f}, {hi + 0.0:+.1f}]")
    assert line in page and line in (out / "summary.md").read_text(encoding="utf-8")
    assert (out / "plots" / "power.png").read_bytes().startswith(PNG)


def snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("edit", ["table", "manifest"])
def test_an_edited_power_dir_is_refused_in_one_line_writing_nothing(made, tmp_path, capsys,
                                                                    edit):
    d = Path(shutil.copytree(made["pool"], tmp_path / "pool"))
    if edit == "table":  # opened and saved again: a changed gain, no stamp
        pl.read_parquet(d / "power.parquet").with_columns(pl.col("gain") + 0.05).write_parquet(
            d / "power.parquet")
    else:
        m = manifest(d)
        m["seed"] += 1
        (d / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    before = snapshot(d)
    code = main(["report", str(d), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "Traceback" not in err, err
    assert ("power.parquet" if edit == "table" else "manifest.json") in err
    assert snapshot(d) == before and not (tmp_path / "out").exists()


# ---------------------------------------------------------------- the "Card power" links
def test_a_page_inside_a_run_reports_folder_links_to_its_sibling(tmp_path):
    (tmp_path / "demo").mkdir()
    assert links.hub_prefix(tmp_path / "demo" / "discovery") == ""  # no run report there
    (tmp_path / "demo" / "report.json").write_text("{}", encoding="utf-8")
    assert links.hub_prefix(tmp_path / "demo" / "discovery") == "../"
    link = links.power_link_html("../")
    assert 'href="../power/index.html"' in link and " hidden>" in link
    assert 'data-probe="../power/plots/power.png"' in link


needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium on this machine: the pages' scripts are not driven "
    "in a browser (install it with `apt-get install -y chromium`)")

#: Clicks on the card table's headers (a gain twice, then Order), then what it shows.
DRIVER = """
<script>
(function () {
  var out = {};
  var t = document.getElementById("power-table");
  var head = t.tHead.rows[0].cells, gain = -1;
  for (var i = 0; i < head.length; i++) {
    if (head[i].textContent.indexOf("gain in its best host") === 0) { gain = i; }
  }
  function column(i) {
    return Array.prototype.map.call(t.tBodies[0].rows, function (r) {
      return r.cells[i].getAttribute("data-v");
    });
  }
  out.ready = t.getAttribute("data-ready");
  head[gain].click();
  out.first = {sort: head[gain].getAttribute("aria-sort"), values: column(gain)};
  head[gain].click();
  out.second = {sort: head[gain].getAttribute("aria-sort"), values: column(gain)};
  head[0].click();
  out.by_order = column(1);
  out.errors = document.getElementById("js-errors").textContent;
  var pre = document.createElement("pre");
  pre.id = "test-out";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


@needs_chromium
def test_the_card_table_sorts_on_a_header_click(flagged, tmp_path):
    seen, _ = run_script(flagged, DRIVER, tmp_path)
    assert seen["ready"] == "1" and seen["errors"] == ""
    for click, reverse in ((seen["first"], True), (seen["second"], False)):
        values = click["values"]
        nums = [float(v) for v in values if v]
        assert nums == sorted(nums, reverse=reverse)
        assert values[-1] == ""  # the card without a gain stays last both ways
    assert seen["first"]["sort"] == "descending" and seen["second"]["sort"] == "ascending"
    # by Order: grouped in the catalog's order, flagged first in each (ties keep the page's)
    assert seen["by_order"] == ["Strong Pillar", "Unmeasured Pillar", "Weak Rights",
                                "Plain Rights", "Stronger Attack", "Strong Attack",
                                "Plain Attack"]
