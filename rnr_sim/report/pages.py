"""Where a search dir's page is written (``report DISCOVERY_DIR | BALANCE_DIR | POWER_DIR
--out DIR``): the same promise a run report keeps (``build._earlier_files``).

``--out`` must be a new or empty folder, or the folder of an earlier page of the same dir
(its ``page.json`` names the dir), whose files are then replaced; anything else (a run
report, another dir's page, a run dir, a discovery dir, a file) is refused in one line and
nothing is written. ``page.json`` is written with the page.
"""

from __future__ import annotations

import json
from pathlib import Path

from rnr_sim.errors import InputError
from rnr_sim.files import make_dir

MARKER = "page.json"


def claim(out: Path, source: Path, kind: str) -> None:
    """Check ``out`` for the page of ``source`` (a ``kind`` dir) and create it; raise
    ``InputError`` for a folder that holds anything but an earlier page of ``source``."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: not a folder; give --out a new or empty folder")
    if out.is_dir():
        try:
            entries = [e for e in out.iterdir() if e.name != MARKER]
        except OSError as e:
            raise InputError(f"--out {out}: cannot read ({e.strerror or e})") from None
        if entries:
            try:
                rec = json.loads((out / MARKER).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                rec = None
            if not isinstance(rec, dict) or rec.get("source") != str(source.resolve()):
                raise InputError(f"--out {out}: not empty and not the page of this {kind} "
                                 f"dir ({source}); give --out a new or empty folder")
    make_dir(out, "report folder")


def mark(out: Path, source: Path, kind: str) -> None:
    """Record in ``out`` whose page it holds (``claim`` reads it on the next report)."""
    from rnr_sim.files import write_json

    write_json(out / MARKER, {"kind": kind, "source": str(source.resolve())})
