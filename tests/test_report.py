"""The report: every section, images that decode, no NaN/None on the page, the CLI."""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path

import pytest
from analytics_fixtures import RandomSpec, random_run, tiny_run

from rnr_sim.cli import main
from rnr_sim.display import diff_text, interval, p_text, pct, pp, rate_text
from rnr_sim.errors import InputError
from rnr_sim.report import build_report

SECTIONS = ("verdict", "decks", "matchups", "paths", "seats", "branches", "cards", "length",
            "method", "reproduce")
DATA_URI = re.compile(r'src="data:(image/[a-z+]+);base64,([A-Za-z0-9+/=]+)"')
FORBIDDEN = re.compile(r"(?i:\bnan\b|\binf\b)|\bNone\b|\bnull\b")


@pytest.fixture(scope="module")
def random_report(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report")
    spec = RandomSpec(deals=25, lp_games=12, extra_decks=("Idle Deck",), seed=4,
                      rules_changed={"p2_free_pillar": "zero_cost_only"})
    run = random_run(root / "run-random", spec)
    return build_report(run, root / "out")


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report")
    return build_report(tiny_run(root / "run-tiny"), root / "out")


def page_text(path: Path, script: bool = True) -> str:
    """The page without its embedded images (random base64 can spell "nan"), and with
    ``script=False`` without its script (code, not text a reader sees)."""
    page = DATA_URI.sub('src=""', path.read_text(encoding="utf-8"))
    return page if script else re.sub(r"<script>.*?</script>", "", page, flags=re.S)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("which", ["random_report", "tiny_report"])
def test_every_section_present(which, request):
    html = page_text(request.getfixturevalue(which))
    for section in SECTIONS:
        assert f'<section id="{section}">' in html, section
    assert html.index('id="verdict"') < html.index('id="decks"')
    assert "http://" not in html and "https://" not in html  # self-contained
    scripts = re.findall(r"<script([^>]*)>", html)
    assert scripts == [""]  # one inline script (the card table's), nothing fetched
    assert "src=" not in " ".join(scripts) and "<link" not in html


def test_lp_section_only_with_lp_curves(random_report, tiny_report):
    assert '<section id="lp">' in page_text(random_report)
    assert '<section id="lp">' not in page_text(tiny_report)


@pytest.mark.parametrize("which", ["random_report", "tiny_report"])
def test_every_image_decodes_as_png(which, request):
    from PIL import Image

    raw = request.getfixturevalue(which).read_text(encoding="utf-8")
    images = DATA_URI.findall(raw)
    assert len(images) >= 6
    for mime, b64 in images:
        assert mime == "image/png"
        data = base64.b64decode(b64, validate=True)
        w, h = png_size(data)
        assert w > 100 and h > 100
        import io

        Image.open(io.BytesIO(data)).verify()


@pytest.mark.parametrize("which", ["random_report", "tiny_report"])
def test_no_nan_or_none_printed(which, request):
    index = request.getfixturevalue(which)
    for text in (page_text(index, script=False),
                 (index.parent / "summary.md").read_text(encoding="utf-8")):
        hits = FORBIDDEN.findall(re.sub(r"<[^>]+>", " ", text))
        assert not hits, hits


def test_names_are_escaped(random_report):
    html = page_text(random_report)
    assert "Tea &amp; &lt;Crates&gt;" in html
    assert "<Crates>" not in html
    md = (random_report.parent / "summary.md").read_text(encoding="utf-8")
    assert "\\<Crates\\>" in md


def test_small_inputs_show_empty_cells_with_counts(tiny_report, random_report):
    html = page_text(tiny_report)
    assert "—  (n=0)" in html  # Gamma never played; a card never seen
    assert "Gamma" in html and "Tea &amp; &lt;Crates&gt;" in html
    assert "Idle Deck" in page_text(random_report)


def test_verdict_reads_as_findings_with_intervals(random_report):
    html = page_text(random_report)
    verdict = html[html.index('id="verdict"'):html.index('id="decks"')]
    items = re.findall(r"<li>(.*?)</li>", verdict)
    assert 1 <= len(items) <= 3
    for item in items:
        assert re.search(r"\[[-+]?\d+\.\d, [-+]?\d+\.\d\]", item), item  # an interval
        assert "score" in item
    assert "How these were chosen" in verdict


def test_reproduce_box(random_report):
    html = page_text(random_report)
    box = html[html.index('id="reproduce"'):]
    assert "Seed" in box and "sha256" in box and "abab" in box
    assert "Foundation &lt;Sample&gt;" in box
    assert re.search(r"<td class=off>p2_free_pillar</td>", box)
    assert "rnr-sim run" in box and "rnr-sim report" in box
    for name in ("Alpha", "Beta", "Gamma", "Delta"):
        assert name in box


def test_summary_and_csvs(random_report):
    out = random_report.parent
    md = (out / "summary.md").read_text(encoding="utf-8")
    for heading in ("## Verdict", "## Decks", "## Matchups and the Nash metagame",
                    "## Victory paths", "## Seat advantage", "## Branches", "## Cards",
                    "## Game length", "## How to read these numbers", "## Reproduce"):
        assert heading in md
    for name in ("decks", "matchups", "nash", "paths_overall", "paths_by_deck",
                 "paths_by_policy", "paths_by_branch", "seats", "branch_summary",
                 "branch_matchups", "cards", "cards_by_deck", "game_length", "findings",
                 "lp_bands", "paths_expected", "paths_by_main_path"):
        text = (out / f"{name}.csv").read_text(encoding="utf-8")
        assert text.count("\n") >= 2, name
        assert not FORBIDDEN.search(text), name
    assert (out / "plots" / "matchups.png").is_file()


def test_svg_on_request(tmp_path):
    index = build_report(tiny_run(tmp_path / "run"), tmp_path / "out", svg=True)
    raw = index.read_text(encoding="utf-8")
    images = DATA_URI.findall(raw)
    assert images and all(mime == "image/svg+xml" for mime, _ in images)
    assert base64.b64decode(images[0][1]).lstrip().startswith(b"<?xml")
    assert (tmp_path / "out" / "plots" / "matchups.svg").is_file()


def test_missing_run_dir_is_input_error(tmp_path):
    with pytest.raises(InputError):
        build_report(tmp_path / "nope", tmp_path / "out")


def test_cli_report(tmp_path, monkeypatch, capsys):
    run = tiny_run(tmp_path / "my-run")
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(run)]) == 0
    out = capsys.readouterr().out
    assert "index.html" in out
    assert (tmp_path / "reports" / "my-run" / "index.html").is_file()
    assert main(["report", str(run), "--out", str(tmp_path / "elsewhere"), "--svg"]) == 0
    assert (tmp_path / "elsewhere" / "plots" / "length.svg").is_file()


def test_cli_report_bad_run_dir_is_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "missing" in err and "Traceback" not in err
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 2
    assert "manifest.json" in capsys.readouterr().err


def test_formatting_never_prints_nan():
    assert rate_text(None, None, None, 0) == "—  (n=0)"
    assert rate_text(float("nan"), None, None, 5) == "—  (n=5)"
    assert rate_text(0.5, 0.4, 0.6, 1234) == "50.0% [40.0, 60.0] (n=1,234)"
    assert diff_text(None, None, None, 0, 12) == "—  (n=0 vs 12)"
    assert diff_text(0.031, 0.01, 0.052, 100, 50) == "+3.1 pp [+1.0, +5.2] (n=100 vs 50)"
    assert interval(-0.264, -0.241, signed=True) == "[-26.4, -24.1]"
    assert pct(None) == "—" and p_text(float("nan")) == "—" and p_text(1e-9) == "p < 0.001"


def test_three_player_report(tmp_path):
    from analytics_fixtures import multiplayer_run

    index = build_report(multiplayer_run(tmp_path / "mp"), tmp_path / "out")
    html = page_text(index)
    for section in SECTIONS:
        assert f'<section id="{section}">' in html
    assert not FORBIDDEN.findall(re.sub(r"<[^>]+>", " ", page_text(index, script=False)))
    assert "33%" in html  # the fair first-seat rate for three players
    # no Nash mix at three players, said with its reason, and no table of empty shares
    assert "No Nash mix at 3 players: a deck&#x27;s result there depends on the whole " \
        "table" in html
    assert "met no other deck" not in html and "Share of the Nash mix" not in html
    md = (index.parent / "summary.md").read_text(encoding="utf-8")
    assert md.count("No Nash mix at 3 players") == 1 and "Share of the Nash mix" not in md


def test_unwritable_out_dir_is_input_error(tmp_path):
    run = tiny_run(tmp_path / "run")
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(InputError) as e:
        build_report(run, tmp_path / "taken")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_win_rate_colours_are_centred_on_the_fair_share(players):
    import numpy as np
    import polars as pl

    from rnr_sim.report.plots import heatmap_plot, win_rate_norm

    fair = 1 / players
    values = np.array([fair - 0.08, fair + 0.02, fair + 0.15, np.nan])
    norm = win_rate_norm(values, fair)
    assert float(norm(fair)) == pytest.approx(0.5)  # white: the fair share
    assert float(norm(fair + 0.15)) == pytest.approx(1.0)  # the largest gap: full colour
    assert float(norm(fair - 0.15)) == pytest.approx(0.0, abs=1e-9)
    keys = ["A", "B"]
    matrix = pl.DataFrame({"row": ["A", "A", "B", "B"], "col": ["A", "B", "A", "B"],
                           "mirror": [True, False, False, True], "games": [0, 10, 10, 0],
                           "win_rate": [None, fair + 0.1, fair - 0.1, None],
                           "win_rate_lo": [None, fair, fair - 0.2, None],
                           "win_rate_hi": [None, fair + 0.2, fair, None]})
    fig = heatmap_plot(matrix, keys, "t", fair=fair)
    image = fig.axes[0].images[0]
    assert float(image.norm(fair)) == pytest.approx(0.5)
    label = fig.axes[1].get_ylabel()
    assert f"fair share {100 * fair:.0f}%" in label
    # issue 41: no mirror was played, so the diagonal does not say "mirror"
    cells = [t.get_text() for t in fig.axes[0].texts]
    assert "mirror" not in " ".join(cells) and cells.count("not\nplayed") == 2


def test_card_labels_do_not_overlap():
    import polars as pl
    from matplotlib.text import Text

    from rnr_sim.report.plots import card_scatter_plot

    n = 40
    cards = pl.DataFrame({
        "card": [f"A rather long card name {i}" for i in range(n)],
        "play_rate": [0.4 + 0.002 * i for i in range(n)],  # a tight cluster
        "iwd": [0.1 + 0.001 * (i % 5) for i in range(n)],
        "flag": ["over"] * n,
    })
    fig = card_scatter_plot(cards, max_labels=n)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts]  # the words, no leader
    assert boxes  # some labels fit
    frame = ax.get_window_extent(renderer)
    for i, a in enumerate(boxes):
        assert frame.x0 <= a.x0 and a.x1 <= frame.x1 and frame.y0 <= a.y0 and a.y1 <= frame.y1
        for b in boxes[i + 1:]:
            assert not a.overlaps(b)


def test_card_table_has_the_short_default_columns_and_comma_intervals(random_report):
    html = page_text(random_report)
    table = html[html.index('id="card-table"'):]
    table = table[:table.index("</table>")]
    heads = re.findall(r'<th data-col="([a-z_]+)" data-num="[01]"( class="x")?', table)
    default = [k for k, hidden in heads if not hidden]
    assert default == ["card", "decks", "held", "gih_wr", "iwd_adjusted", "iwd", "play_rate",
                       "flag"]
    assert {"type", "branch", "holders", "oh_wr", "gns_wr"} <= {k for k, h in heads if h}
    cells = re.findall(r"<td [^>]*>([^<]*)</td>", table)
    iwd = [c for c in cells if " pp [" in c]
    assert iwd and all(re.fullmatch(r"[-+]\d+\.\d pp \[[-+]\d+\.\d, [-+]\d+\.\d\]", c)
                       for c in iwd), iwd[:3]
    rows = table.count("<tr data-s=")
    assert f"Showing {rows} of {rows} cards" in html  # every card, not the first 60


def _section(html: str, key: str) -> str:
    start = html.index(f'<section id="{key}">')
    return html[start:html.index("</section>", start)]


def test_the_card_section_holds_a_hidden_card_power_link(tiny_report):
    """The link to a Card power page in the report's ``power/`` folder (report/links.py):
    in the page, hidden until the page's script finds that page's figure."""
    from rnr_sim.report.links import PROBE_SCRIPT

    html = tiny_report.read_text(encoding="utf-8")
    cards = _section(html, "cards")
    assert '<p class="note" id="power-link" data-probe="power/plots/power.png" hidden>' in cards
    assert '<a href="power/index.html">Card power</a>' in cards
    assert PROBE_SCRIPT in html


def test_one_method_section_says_each_method_once(random_report):
    """"How to read these numbers" holds the interval note (stats.METHOD_NOTE), the
    adjusted IWD, the path expectation and the Nash bootstrap, each once, in the page and
    in summary.md; the verdict links to it instead of a second method note."""
    from rnr_sim.analytics import compute_metrics, load_run
    from rnr_sim.analytics.stats import METHOD_NOTE
    from rnr_sim.report import text

    html = page_text(random_report, script=False)
    md = (random_report.parent / "summary.md").read_text(encoding="utf-8")
    m = compute_metrics(load_run(random_report.parent.parent / "run-random"))
    sections = text.method_sections(m)
    assert [t for t, _ in sections] == [
        "Intervals: the deal is the unit", "Cards: the adjusted IWD",
        "Victory paths: against the deck-pool expectation", "The Nash metagame"]
    method = _section(html, "method")
    probe = METHOD_NOTE.split(". ")[1][:60]  # a phrase of the interval note
    assert html.count(probe) == 1 and probe in method
    for title, body in sections:
        assert f"<h3>{title}</h3>" in method
        assert html.count(body[:80].replace("'", "&#x27;").replace('"', "&quot;")) == 1, title
        assert md.count(f"**{title}.**") == 1
    assert "<strong>Method.</strong>" not in html and "**Method.**" not in md
    assert 'href="#method"' in _section(html, "verdict")
    assert md.count("## How to read these numbers") == 1


def test_nash_table_shows_its_bootstrap(random_report):
    """Each deck's Nash share with its bootstrap interval "[a, b]" and how often it is in
    the support, from nash.csv."""
    import polars as pl

    html = page_text(random_report, script=False)
    nash = pl.read_csv(random_report.parent / "nash.csv")
    assert {"share_lo", "share_hi", "support_freq"} <= set(nash.columns)
    table = html[html.index("<h3>Nash equilibrium</h3>"):]
    table = table[:table.index("</table>")]
    assert "Share of the Nash mix [95% CI]" in table
    shown = 0
    for r in nash.filter(pl.col("share").is_not_null()).iter_rows(named=True):
        cell = f"{pct(r['share'])} {interval(r['share_lo'], r['share_hi'])}"
        assert f"<td>{cell}</td>" in table, r["deck"]
        if 0 < r["support_freq"] < 1:
            assert f"in the support in {pct(r['support_freq'], 0)} of resamples" in table \
                or "under 1%" in table or "over 99%" in table
            shown += 1
        elif r["support_freq"] == 1:
            assert "in every resample" in table
    assert "(met no other deck)" in table  # Idle Deck played no game


def test_paths_against_the_deck_pool_with_the_flat_25_as_reference(random_report):
    """The paths section shows the deck-pool expectation (observed, expected, gap with
    its interval) and the decks by main path, both also as CSV; the flat-25% columns are
    labelled as the Art. III reference and highlight nothing."""
    import polars as pl

    from rnr_sim.analytics import compute_metrics, load_run

    out = random_report.parent
    m = compute_metrics(load_run(out.parent / "run-random"))
    exp = pl.read_csv(out / "paths_expected.csv")
    assert exp.select("path", "wins").equals(m.paths_expected.select("path", "wins"))
    assert exp["gap"].to_list() == pytest.approx(m.paths_expected["gap"].to_list())
    main = pl.read_csv(out / "paths_by_main_path.csv")
    assert main["main_path"].to_list() == m.paths_by_main_path["main_path"].to_list()
    html = page_text(random_report, script=False)
    paths = _section(html, "paths")
    assert "Deck-pool expectation [95% CI]" in paths and "Gap: observed − expected" in paths
    for r in m.paths_expected.filter(pl.col("gap").is_not_null()).iter_rows(named=True):
        assert f"{pp(r['gap'])} {interval(r['gap_lo'], r['gap_hi'], signed=True)}" in paths
    assert "Win rate vs other main paths [95% CI]" in paths
    assert paths.count("Art. III reference (flat 25%): χ² (df 3)") == 4  # every path table
    assert "Largest gap from 25%" not in html and "differ from equal paths" not in html
    # only the expectation and main-path tables can highlight a row
    flat = paths[paths.index("<h3>All games</h3>"):]
    assert 'class="hl"' not in flat
    readme = (Path(__file__).parent.parent / "reports" / "README.md").read_text()
    assert "paths_expected.csv" in readme and "paths_by_main_path.csv" in readme
