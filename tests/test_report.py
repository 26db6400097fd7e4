"""The report: every section, images that decode, no NaN/None on the page, the CLI."""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path

import pytest
from analytics_fixtures import RandomSpec, random_run, tiny_run

from rnr_sim.cli import main
from rnr_sim.errors import InputError
from rnr_sim.report import build_report
from rnr_sim.report.format import diff_text, p_text, pct, rate_text

SECTIONS = ("verdict", "decks", "matchups", "paths", "seats", "branches", "cards", "length",
            "reproduce")
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


def page_text(path: Path) -> str:
    """The page without its embedded images (random base64 can spell "nan")."""
    return DATA_URI.sub('src=""', path.read_text(encoding="utf-8"))


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
    assert "<script" not in html


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
    for text in (page_text(index), (index.parent / "summary.md").read_text(encoding="utf-8")):
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
        assert re.search(r"\[[-+]?\d+\.\d–[-+]?\d+\.\d\]", item), item  # an interval
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
                    "## Game length", "## Reproduce"):
        assert heading in md
    for name in ("decks", "matchups", "nash", "paths_overall", "paths_by_deck",
                 "paths_by_policy", "paths_by_branch", "seats", "branch_summary",
                 "branch_matchups", "cards", "cards_by_deck", "game_length", "findings",
                 "lp_bands"):
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
    assert rate_text(0.5, 0.4, 0.6, 1234) == "50.0% [40.0–60.0] (n=1,234)"
    assert diff_text(None, None, None, 0, 12) == "—  (n=0 vs 12)"
    assert diff_text(0.031, 0.01, 0.052, 100, 50) == "+3.1 pp [+1.0–+5.2] (n=100 vs 50)"
    assert pct(None) == "—" and p_text(float("nan")) == "—" and p_text(1e-9) == "p < 0.001"


def test_three_player_report(tmp_path):
    from analytics_fixtures import multiplayer_run

    index = build_report(multiplayer_run(tmp_path / "mp"), tmp_path / "out")
    html = page_text(index)
    for section in SECTIONS:
        assert f'<section id="{section}">' in html
    assert not FORBIDDEN.findall(re.sub(r"<[^>]+>", " ", html))
    assert "33%" in html  # the fair first-seat rate for three players


def test_unwritable_out_dir_is_input_error(tmp_path):
    run = tiny_run(tmp_path / "run")
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(InputError) as e:
        build_report(run, tmp_path / "taken")
    assert "\n" not in str(e.value)
