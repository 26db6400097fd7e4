"""Files written whole or not at all, and a full disk named: every file the tool writes (run
dirs, search dirs, reports, tuned pilots) goes through ``atomic_write``; a write that fails
for want of space raises ``DiskFull`` (an ``InputError``: one line, exit 2)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rnr_sim.errors import InputError

if TYPE_CHECKING:  # the writers take frames; the full-disk checks need no polars
    import polars as pl

#: The errno values that mean "no room left" (ENOSPC, and a quota's EDQUOT).
NO_SPACE = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


class DiskFull(InputError):
    """A write failed for want of space (``path`` is the file that could not be written)."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: cannot write ({reason})")
        self.path = Path(path)
        self.reason = reason


def make_dir(out: Path, what: str = "run dir") -> bool:
    """Create ``out`` (and its parents) if missing; whether it was created. A folder that
    cannot be made is an ``InputError`` naming it (``--out``, the only way one is given)."""
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--out {out}: cannot create the {what} ({e.strerror or e})") from None
    return created


def no_space_errno(error: BaseException) -> int | None:
    """The errno of a write error when it means the disk is full, else None. polars
    reports the OS error inside its own exception's text ("... (os error 28)")."""
    if isinstance(error, OSError):
        return error.errno if error.errno in NO_SPACE else None
    found = re.search(r"\(os error (\d+)\)", str(error))
    if found and int(found.group(1)) in NO_SPACE:
        return int(found.group(1))
    return None


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes (``InputError`` naming it if it cannot be read)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    return h.hexdigest()


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """``write(tmp)`` then rename to ``path``; on failure remove ``tmp`` and raise
    ``InputError`` (an ``OSError``: unwritable dir; ``DiskFull`` for a full disk,
    also when polars reports it inside its own error) or re-raise."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        full = no_space_errno(e) if isinstance(e, Exception) else None
        if full is not None:
            raise DiskFull(path, os.strerror(full)) from None
        if isinstance(e, OSError):
            reason = e.strerror or str(e)
            raise InputError(f"{path}: cannot write ({reason})") from None
        raise


def write_parquet(path: Path, frame: pl.DataFrame,
                  metadata: dict[str, str] | None = None) -> str:
    """``frame`` as ``path`` (zstd, with statistics, ``metadata`` in its footer), written
    whole or not at all; returns the SHA-256 of the bytes written."""
    sha: list[str] = []

    def write(tmp: Path) -> None:
        frame.write_parquet(tmp, compression="zstd", statistics=True, metadata=metadata)
        sha.append(file_sha256(tmp))

    atomic_write(path, write)
    return sha[0]


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented UTF-8 JSON at ``path``, written whole or not at all (manifests,
    ``compare.json``, ``expansion.json``, a checkpoint's plan)."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
