"""For tests that change a run dir's part on purpose and want the run dir to stay
consistent (to test what reads it, not the content checks): ``rewrite_part``."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from rnr_sim import runner
from rnr_sim.identity import KEY, file_sha256


def rewrite_part(part: Path, frame: pl.DataFrame) -> None:
    """Write ``frame`` over the run dir's ``part`` as the run itself would have: the part's
    stamp kept, its new SHA-256 recorded in the manifest."""
    part = Path(part)
    run_dir = part.parent.parent
    stamp = {KEY: pl.read_parquet_metadata(part)[KEY]}
    frame.write_parquet(part, metadata=stamp)
    manifest = runner.read_manifest(run_dir)
    manifest["files"][f"{part.parent.name}/{part.name}"] = file_sha256(part)
    runner.write_manifest(run_dir, manifest)
