"""One writer at a time: an advisory lock on a directory a command writes (a run dir, a
compare folder, a discovery dir).

::

    with DirLock(run_dir, "run dir"):      # or lock = DirLock(...).acquire(); lock.release()
        ...write the directory...

``acquire`` takes an exclusive ``fcntl.flock`` on ``<dir>/.rnr-sim.lock`` without
waiting, and writes into it who holds it (pid, command line, since when). A second
writer gets one ``InputError`` line naming the first (its pid) and what to do. The
kernel drops the lock when its holder exits, however it exits (a kill -9 included), so a
lock is never stale; ``release`` removes the file. Readers (``report``) take no lock.

An acquirer checks that the file it locked is still the one at the path (a holder that
releases removes it): two writers can never both hold the lock. Where ``fcntl`` does not
exist (Windows) the lock is not taken.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from rnr_sim.errors import InputError

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows)
    fcntl = None

#: The lock file's name inside the locked directory.
LOCK_NAME = ".rnr-sim.lock"


def holder(directory: str | Path) -> dict[str, Any] | None:
    """Who wrote the lock file of ``directory`` (``pid``, ``command``, ``since``), or None
    when there is none or it is unreadable. It says who holds the lock only while it is
    held (``DirLock.acquire`` says whether it is)."""
    try:
        data = json.loads((Path(directory) / LOCK_NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


class DirLock:
    """An exclusive advisory lock on ``directory`` (which must exist), held from
    ``acquire`` to ``release``; ``what`` names the directory in messages ("run dir")."""

    def __init__(self, directory: str | Path, what: str = "run dir"):
        self.directory = Path(directory)
        self.what = what
        self.path = self.directory / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> DirLock:
        """Take the lock, or raise ``InputError`` naming the process that holds it."""
        if fcntl is None or self._fd is not None:
            return self
        for _ in range(10):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as e:
                raise InputError(f"{self.directory}: cannot lock the {self.what} "
                                 f"({e.strerror or e})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise InputError(self._busy()) from None
            except OSError as e:  # a file system without locks
                os.close(fd)
                raise InputError(f"{self.directory}: cannot lock the {self.what} "
                                 f"({e.strerror or e})") from None
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self._fd = fd
                self._write_holder()
                return self
            os.close(fd)  # its holder released and removed it meanwhile: lock the new one
        raise InputError(self._busy())

    def _write_holder(self) -> None:
        info = {"pid": os.getpid(), "command": shlex.join(["rnr-sim", *sys.argv[1:]]),
                "since": datetime.now().astimezone().isoformat(timespec="seconds")}
        data = (json.dumps(info) + "\n").encode("utf-8")
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def _busy(self) -> str:
        info = holder(self.directory)
        if info is None:  # the holder has not written its name yet
            time.sleep(0.05)
            info = holder(self.directory) or {}
        pid = info.get("pid", "unknown")
        since = f" since {info['since']}" if info.get("since") else ""
        command = f": `{info['command']}`" if info.get("command") else ""
        return (f"{self.directory}: another rnr-sim (pid {pid}{command}) is writing this "
                f"{self.what}{since}; wait for it to finish, or stop it (kill {pid}) and "
                "try again")

    def release(self) -> None:
        """Drop the lock and remove the lock file (nothing if not held)."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)  # before unlocking: see the module docstring
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> DirLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
