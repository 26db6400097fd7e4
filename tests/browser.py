"""Headless Chromium for the report page's tests: a copy of a page with a script appended
is loaded, and the script writes what it saw as JSON into ``<pre id="test-out">``, which
``--dump-dom`` prints."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

#: The Chromium binary, or None (the browser tests then skip and say so).
CHROMIUM = next((p for p in (shutil.which(n) for n in (
    "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")) if p), None)


def run_script(index: Path, script: str, tmp_path: Path) -> tuple[dict, str]:
    """Load a copy of the page ``index`` with ``script`` appended to its body: (the JSON
    the script wrote, Chromium's log)."""
    page = index.read_text(encoding="utf-8")
    copy = index.parent / "driven.html"
    copy.write_text(page.replace("</body>", script + "</body>"), encoding="utf-8")
    try:
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
             "--virtual-time-budget=5000", "--dump-dom", copy.as_uri()],
            capture_output=True, text=True, timeout=120)
    finally:
        copy.unlink()
    m = re.search(r'<pre id="test-out">(.*?)</pre>', proc.stdout, re.S)
    assert m, f"the driver wrote nothing (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(html.unescape(m.group(1))), proc.stderr
