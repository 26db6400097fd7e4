"""docs/rulings.md and docs/rules-coverage.md stay true to the tests and the profile: every
test the coverage table names exists, every section and ruling has a row, every strict
xfail is marked and explained, every switch is documented under its ruling."""

from __future__ import annotations

import re
from pathlib import Path

from rnr_sim.rules import SWITCHES

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
COVERAGE = (ROOT / "docs" / "rules-coverage.md").read_text(encoding="utf-8")
RULINGS = (ROOT / "docs" / "rulings.md").read_text(encoding="utf-8")

ARTICLE_SECTIONS = {"II": 4, "III": 4, "IV": 7, "V": 7, "VI": 7, "VII": 7}
AMENDMENT_ROWS = ["Amend. I §1", "Amend. I §2", "Amend. I §3", "Amend. I §4", "Amend. II §1",
                  "Amend. II §2", "Amend. II §3", "Amend. II §4", "Amend. II §5", "Amend. III",
                  "Amend. IV §1", "Amend. IV §2", "Amend. IV §3", "Amend. IV §4",
                  "Amend. V §1", "Amend. V §2", "Amend. V §3", "Amend. V §4", "Amend. VI",
                  "Amend. VII §1-3", "Amend. VII §4", "Amend. VII §5", "Amend. VIII",
                  "Amend. IX"]
RULINGS_IDS = [f"R{k}" for k in range(1, 59)]


def row_labels(text: str) -> set[str]:
    return {m.group(1).strip() for m in re.finditer(r"^\| ([^|]+) \|", text, re.MULTILINE)}


def defined_tests(file: str) -> set[str]:
    return set(re.findall(r"^def (test_\w+)", (TESTS / file).read_text(encoding="utf-8"),
                          re.MULTILINE))


def strict_xfails() -> set[str]:
    out = set()
    for path in TESTS.glob("test_engine_*.py"):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"@pytest\.mark\.xfail\(strict=True.*?\ndef (test_\w+)", text,
                             re.DOTALL):
            out.add(m.group(1))
    return out


def table_cells(text: str) -> str:
    """The text inside the cells of every table row (what lies between a row's first
    and last ``|``), one row a line."""
    return "\n".join(line[line.index("|") + 1:line.rindex("|")]
                     for line in text.splitlines() if line.startswith("|"))


def test_every_test_named_in_the_coverage_sits_in_a_table_cell():
    """A name after a row's closing ``|`` is outside the table: a Markdown reader shows it
    as stray text, not as the row's test."""
    outside = [line for line in COVERAGE.splitlines()
               if re.search(r"test_\w+\.py::test_\w+",
                            line[line.rindex("|") + 1:] if line.startswith("|") else line)]
    assert outside == []


def test_every_test_named_in_the_coverage_exists():
    named = re.findall(r"(test_\w+\.py)::(test_\w+)", table_cells(COVERAGE))
    assert len(named) > 150
    missing = [f"{f}::{t}" for f, t in named if t not in defined_tests(f)]
    assert missing == []


def test_every_section_and_ruling_has_a_coverage_row():
    labels = row_labels(COVERAGE)
    articles = [f"Art. {a} §{k}" for a, n in ARTICLE_SECTIONS.items() for k in range(1, n + 1)]
    missing = [x for x in articles + AMENDMENT_ROWS + RULINGS_IDS if x not in labels]
    assert missing == []


def test_every_ruling_has_a_row_in_the_rulings_document():
    labels = row_labels(RULINGS)
    assert [r for r in RULINGS_IDS if r not in labels] == []


def test_every_switch_is_documented_under_its_ruling():
    for s in SWITCHES:
        row = next(line for line in RULINGS.splitlines() if line.startswith(f"| {s.ruling} |"))
        assert f"`{s.name}" in row, (s.name, s.ruling)


def test_every_strict_xfail_is_marked_and_explained():
    xfails = strict_xfails()
    marked = set(re.findall(r"::(test_\w+) †", COVERAGE))
    assert marked == xfails
    deviations = RULINGS[RULINGS.index("## Known deviations"):]
    assert {t for t in xfails if f"`{t}`" not in deviations} == set()
