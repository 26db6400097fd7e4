"""The repository stands on its own: every file a doc links to or names exists, and nothing
a user clones points outside it (no design notes, rulings or rulebook paths beside the
project, no path of the machine a doc was generated on)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", REPO / "reports" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SOURCES = [*sorted((REPO / "rnr_sim").rglob("*.py")), *sorted((REPO / "tests").glob("*.py")),
           REPO / "Makefile", REPO / "pyproject.toml", *sorted((REPO / "rnr_sim").rglob("*.toml"))]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
# `path/like/this.ext` in backticks, rooted at a top-level folder of the repo (a report a
# command writes, reports/<name>/..., is an output, not a file of the repo).
NAMED = re.compile(r"`((?:rnr_sim|docs|tests|decks|reports|\.ci)/[\w./-]+\.\w+)`")
OUTSIDE = re.compile(r"DESIGN\.md|RULINGS\.md|STYLE\.md|rulebook\.txt|\.\./shared|/work/|/home/")


def test_every_relative_link_in_the_docs_exists():
    missing = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(REPO)} -> {target}")
    assert missing == []


def test_every_repository_file_a_doc_names_exists():
    missing = []
    for doc in DOCS:
        for name in NAMED.findall(doc.read_text()):
            generated = name.startswith("reports/") and name != "reports/README.md"
            if "*" not in name and not generated and not (REPO / name).exists():
                missing.append(f"{doc.relative_to(REPO)} names {name}")
    assert missing == []


def test_nothing_points_outside_the_repository():
    found = []
    for path in [*DOCS, *SOURCES]:
        if path.name == Path(__file__).name:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()[:80]}")
    assert found == []
