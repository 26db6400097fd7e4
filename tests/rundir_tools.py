"""For tests that change a run dir's part on purpose and want the run dir to stay
consistent (to test what reads it, not the content checks): ``rewrite_part``."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from rnr_sim.files import file_sha256
from rnr_sim.runs import manifests
from rnr_sim.runs.execution import part_name
from rnr_sim.runs.identity import KEY


def rewrite_part(part: Path, frame: pl.DataFrame) -> None:
    """Write ``frame`` over the run dir's ``part`` as the run itself would have: the part's
    stamp kept, its new SHA-256 recorded in the manifest."""
    part = Path(part)
    run_dir = part.parent.parent
    stamp = {KEY: pl.read_parquet_metadata(part)[KEY]}
    frame.write_parquet(part, metadata=stamp)
    manifest = manifests.read_manifest(run_dir)
    manifest["files"][f"{part.parent.name}/{part.name}"] = file_sha256(part)
    manifests.write_manifest(run_dir, manifest)


def stop_after(run_dir: Path, chunks: int) -> dict:
    """Make a finished run dir what a run stopped after its first ``chunks`` chunks leaves
    behind (the later parts removed, the manifest counting the rest); returns the manifest."""
    manifest = manifests.read_manifest(run_dir)
    for c in manifest["chunks"]["complete"][chunks:]:
        for table in ("games", "seats"):
            (run_dir / table / part_name(c)).unlink()
    size, total = manifest["chunk_size"], manifest["games_total"]
    manifest["chunks"]["complete"] = manifest["chunks"]["complete"][:chunks]
    manifest["games_done"] = sum(min(size, total - c * size)
                                 for c in manifest["chunks"]["complete"])
    manifest["status"] = "incomplete"
    manifests.write_manifest(run_dir, manifest)
    return manifest
