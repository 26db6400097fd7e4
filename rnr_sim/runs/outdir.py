"""The folder a command writes: its default name, the checks before it is claimed (empty,
or a resumable dir of the same command), claiming it, and what a stopped command leaves."""

from __future__ import annotations

import contextlib
import shlex
import shutil
from datetime import datetime
from pathlib import Path

from rnr_sim import files
from rnr_sim.errors import InputError
from rnr_sim.runs.dirlock import LOCK_NAME, DirLock
from rnr_sim.runs.manifests import MANIFEST


def _out_name(prefix: str = "") -> Path:
    return Path("runs") / f"{prefix}{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def default_out(prefix: str = "") -> Path:
    """A new folder under runs/ named by the time (``prefix`` first): runs/20261129-201500
    (not created: ``claim_out`` creates it)."""
    base = _out_name(prefix)
    out, k = base, 1
    while out.exists():
        k += 1
        out = base.with_name(f"{base.name}-{k}")
    return out


def check_out(out: Path, command: str = "run", checkpoint: str | None = None,
              what: str | None = None) -> None:
    """Refuse a dir that exists with anything in it: a command never overwrites files.
    ``command`` (``run``, ``discover``, ``balance``, ``power``...) and its ``checkpoint``
    folder (``.discover``...) shape the fix the message offers: a stopped command of that
    kind is continued with its own ``--resume``; a finished one, or another command's dir,
    is left alone for another ``--out``."""
    if out.exists():
        if not out.is_dir():
            raise InputError(f"--out {out}: exists and is not a directory")
        try:  # the lock, and a manifest half-written by a killed start, are not a run
            entries = any(p.name not in (LOCK_NAME, f".{MANIFEST}.tmp") for p in out.iterdir())
        except OSError as e:
            raise InputError(f"--out {out}: cannot read ({e.strerror})") from None
        if not entries:
            return
        quoted = shlex.quote(str(out))
        if (out / MANIFEST).exists():
            from rnr_sim.runs.searchdirs import manifest_kind

            kind = manifest_kind(out) or None  # "" (a run dir) or unreadable: None
            if kind is None and command == "run":  # a run dir: run --resume finishes it
                raise InputError(
                    f"--out {out}: already holds a run; continue it with "
                    f"`rnr-sim run --resume {quoted}`, or choose another --out")
            held = {None: "run", "discovery": "discovery", "balance": "balance run",
                    "power": "power run"}.get(kind, str(kind))
            raise InputError(f"--out {out}: already holds a {held} (manifest.json); choose "
                             "another --out (a command never overwrites files)")
        if checkpoint is not None and (out / checkpoint).is_dir():
            raise InputError(f"--out {out}: holds a stopped {what or command}; continue it with "
                             f"`rnr-sim {command} --resume --out {quoted}` and the same "
                             "options, or choose another --out")
        raise InputError(f"--out {out}: not empty; choose a new or empty directory "
                         "(a command never overwrites files)")


def check_dir(out: Path, resume: bool, command: str, checkpoint: str, kind: str,
              what: str, given: bool = True) -> None:
    """Where a resumable search command (``discover``, ``balance``, ``power``) writes:
    with ``--resume``, a dir holding its stopped ``checkpoint`` (``given``: the user named
    it with ``--out``; a default new folder holds nothing to resume); else one
    ``check_out`` accepts. ``kind``: the manifest kind of its finished dir; ``what``: the
    dir in words ("discovery", "balance run")."""
    if resume and not given:
        raise InputError(f"--resume continues a stopped {what}: give its --out DIR (the "
                         f"folder the stopped `rnr-sim {command}` wrote to)")
    if not resume:
        check_out(out, command, checkpoint, what)
        return
    if (out / checkpoint / "plan.json").exists():
        return
    if (out / MANIFEST).exists():
        from rnr_sim.runs.searchdirs import manifest_kind

        kind_here = manifest_kind(out)
        if kind_here == kind:
            raise InputError(f"--resume {out}: this {what} is complete; nothing to resume")
        held = {None: "unreadable", "": "run"}.get(kind_here, kind_here)
        raise InputError(f"--resume {out}: holds a {held} dir, not a stopped "
                         f"{what}; give the --out of the stopped `rnr-sim {command}`")
    raise InputError(f"--resume {out}: no stopped {what} here (no {checkpoint}/plan.json); "
                     f"give the --out of the stopped `rnr-sim {command}`")


@contextlib.contextmanager
def resume_on_full_disk(command: str, out: Path):
    """A full disk while a resumable command (``discover``, ``balance``, ``power``) writes
    its checkpoints or its dir: one line that says how to carry on once there is room."""
    try:
        yield
    except files.DiskFull as e:
        raise InputError(f"{e}; free some space, then continue with `rnr-sim {command} "
                         f"--resume --out {shlex.quote(str(out))}` and the same options "
                         "(the games played so far are kept)") from None


def claim_out(out: Path | None, prefix: str = "", what: str = "run dir",
              ) -> tuple[Path, bool, DirLock]:
    """Create the output folder and take its lock: ``out``, or without it a new folder
    runs/<prefix><YYYYmmdd-HHMMSS> (``-2``, ``-3``... when taken: the name is claimed by
    creating it, so two commands started in the same second get two folders). Returns
    (folder, created, lock); the folder is checked to be empty under the lock."""
    created = False
    if out is None:
        base, k = _out_name(prefix), 1
        while True:
            out = base if k == 1 else base.with_name(f"{base.name}-{k}")
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.mkdir()
                created = True
                break
            except FileExistsError:
                k += 1
            except OSError as e:
                raise InputError(f"--out {out}: cannot create ({e.strerror})") from None
    else:
        created = files.make_dir(out, what)
    try:
        lock = DirLock(out, what).acquire()
    except InputError:
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise
    try:
        check_out(out)
    except InputError:
        lock.release()
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise
    return out, created, lock


def remove_started(out: Path, created: bool) -> None:
    """Remove what a command that wrote nothing worth keeping put in ``out`` (the folder
    itself if it created it, else its contents: it was empty)."""
    if created:
        shutil.rmtree(out, ignore_errors=True)
        return
    for entry in out.iterdir() if out.is_dir() else ():
        if entry.name == LOCK_NAME:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def resume_hint(out: Path) -> str:
    return f"rnr-sim run --resume {shlex.quote(str(out))}"


