"""The report page in a real browser: headless Chromium clicks the card table's headers,
types in its filter box, ticks "every column", and the page logs no error.

Needs Chromium (Debian: ``apt-get install -y chromium``); without it these tests skip and
say so. The page is driven by a small script appended to a copy of it, which writes what it
saw as JSON into the DOM that ``--dump-dom`` prints.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest
from analytics_fixtures import RandomSpec, random_run
from browser import CHROMIUM, run_script

from rnr_sim.report import build_report

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium on this machine: the report page's script is not "
    "driven in a browser (install it with `apt-get install -y chromium`)")

#: Clicks and keystrokes, then what the table shows, as JSON in <pre id="test-out">.
DRIVER = """
<script>
(function () {
  var out = {errors: []};
  try {
    var t = document.getElementById("card-table");
    var head = t.tHead.rows[0].cells;
    function col(key) {
      for (var i = 0; i < head.length; i++) { if (head[i].dataset.col === key) { return i; } }
      return -1;
    }
    function visible() {
      return Array.prototype.filter.call(t.tBodies[0].rows, function (r) { return !r.hidden; });
    }
    function column(key) {
      var i = col(key);
      return visible().map(function (r) { return r.cells[i].getAttribute("data-v"); });
    }
    function type(text) {
      var box = document.getElementById("card-filter");
      box.value = text;
      box.dispatchEvent(new Event("input", {bubbles: true}));
      return {names: column("card"),
              count: document.getElementById("card-count").textContent};
    }
    out.ready = t.getAttribute("data-ready");
    out.rows = t.tBodies[0].rows.length;
    out.initial = column("card");
    var gih = head[col("gih_wr")];
    gih.click();
    out.first_click = {sort: gih.getAttribute("aria-sort"), values: column("gih_wr")};
    gih.click();
    out.second_click = {sort: gih.getAttribute("aria-sort"), values: column("gih_wr")};
    head[col("card")].click();
    out.by_name = {sort: head[col("card")].getAttribute("aria-sort"), values: column("card"),
                   gih_sort: gih.getAttribute("aria-sort")};
    out.filters = {};
    FILTERS.forEach(function (f) { out.filters[f] = type(f); });
    out.cleared = type("");
    var extra = t.querySelector("th.x");
    out.extra_before = getComputedStyle(extra).display;
    document.getElementById("card-all").click();
    out.extra_after = getComputedStyle(extra).display;
  } catch (e) {
    out.errors.push(String(e));
  }
  out.page_errors = document.getElementById("js-errors").textContent;
  var pre = document.createElement("pre");
  pre.id = "test-out";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def drive(index: Path, filters: list[str], tmp_path: Path) -> tuple[dict, str]:
    """Load a copy of the page with DRIVER appended; (what it saw, Chromium's log)."""
    return run_script(index, DRIVER.replace("FILTERS", json.dumps(filters)), tmp_path)


def console_lines(log: str) -> list[str]:
    """What the page wrote to the console, or any uncaught error, from Chromium's log."""
    return [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, pl.DataFrame]:
    root = tmp_path_factory.mktemp("page")
    index = build_report(random_run(root / "run", RandomSpec(deals=25, seed=4)), root / "out")
    by_deck = pl.read_csv(index.parent / "cards_by_deck.csv")
    return index, by_deck


@pytest.fixture(scope="module")
def driven(report, tmp_path_factory):
    index, by_deck = report
    deck = sorted(by_deck["deck"].unique().to_list())[0]
    filters = [deck, deck.upper(), "tea &", "no such card at all"]
    seen, log = drive(index, filters, tmp_path_factory.mktemp("chromium"))
    return seen, log, deck, by_deck


def _numbers(values: list[str | None]) -> tuple[list[float], list]:
    nums = [float(v) for v in values if v not in (None, "")]
    return nums, [v for v in values if v in (None, "")]


def test_the_page_script_runs_without_errors(driven):
    seen, log, _, _ = driven
    assert seen["errors"] == [], seen["errors"]
    assert seen["ready"] == "1"
    assert seen["page_errors"] == ""
    assert console_lines(log) == []


def test_clicking_a_number_header_sorts_largest_first_then_smallest(driven):
    seen, *_ = driven
    first, second = seen["first_click"], seen["second_click"]
    assert first["sort"] == "descending" and second["sort"] == "ascending"
    for click, reverse in ((first, True), (second, False)):
        nums, empty = _numbers(click["values"])
        assert nums == sorted(nums, reverse=reverse)
        assert len(nums) >= 5
        # a card without a value stays at the bottom in both directions
        assert click["values"][len(nums):] == empty


def test_clicking_the_card_header_sorts_by_name(driven):
    seen, *_ = driven
    by_name = seen["by_name"]
    assert by_name["sort"] == "ascending" and by_name["gih_sort"] is None
    assert by_name["values"] == sorted(seen["initial"])  # the sort key: the name, lower case


def test_typing_a_deck_name_keeps_only_its_cards(driven):
    seen, _, deck, by_deck = driven
    held = {c.lower() for c in by_deck.filter(pl.col("deck") == deck)["card"].to_list()}
    shown = set(seen["filters"][deck]["names"])
    assert shown == held
    assert 0 < len(shown) < seen["rows"]
    assert seen["filters"][deck]["count"] == f"Showing {len(shown)} of {seen['rows']} cards"
    assert set(seen["filters"][deck.upper()]["names"]) == held  # case does not matter


def test_filter_matches_card_names_and_clears(driven):
    seen, *_ = driven
    tea = seen["filters"]["tea &"]["names"]
    assert tea and all("tea &" in n for n in tea)
    assert seen["filters"]["no such card at all"]["names"] == []
    assert seen["filters"]["no such card at all"]["count"] == f"Showing 0 of {seen['rows']} cards"
    assert len(seen["cleared"]["names"]) == seen["rows"]


def test_every_column_box_shows_the_hidden_columns(driven):
    seen, *_ = driven
    assert seen["extra_before"] == "none"
    assert seen["extra_after"] == "table-cell"


#: After the page's scripts have run and its images loaded: whether the Card power link shows.
LINK_DRIVER = """
<script>
window.addEventListener("load", function () {
  setTimeout(function () {
    var pre = document.createElement("pre");
    pre.id = "test-out";
    pre.textContent = JSON.stringify({shown: !document.getElementById("power-link").hidden});
    document.body.appendChild(pre);
  }, 200);
});
</script>
"""


def test_the_card_power_link_shows_only_when_the_page_is_there(report, tmp_path):
    """The card section's link to power/index.html (report/links.py) is hidden until the
    Card power page's figure, power/plots/power.png, loads."""
    index, _ = report
    seen, _ = run_script(index, LINK_DRIVER, tmp_path / "without")
    assert seen == {"shown": False}
    power = index.parent / "power"
    (power / "plots").mkdir(parents=True)
    try:
        figure = next((index.parent / "plots").glob("*.png"))
        (power / "plots" / "power.png").write_bytes(figure.read_bytes())
        (power / "index.html").write_text("<!doctype html><title>Card power</title>")
        seen, _ = run_script(index, LINK_DRIVER, tmp_path / "with")
    finally:
        shutil.rmtree(power)
    assert seen == {"shown": True}


def test_screenshot_renders(report, tmp_path):
    index, _ = report
    shot = tmp_path / "page.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,1600",
                    f"--screenshot={shot}", index.as_uri()],
                   capture_output=True, timeout=120, cwd=tmp_path)
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size == (1280, 1600)
        assert len(im.convert("L").resize((64, 80)).getcolors(4096) or []) > 8  # not blank
