"""``rnr-sim check kill``: runs killed with SIGKILL at random moments, then finished, write
the same run dir as a run never stopped (docs/design.md, "Run dir").

A reference run is played once, uninterrupted, in a process of its own (its wall time
``T``). Then, ``kills`` times: the same run is started in a new process into a new dir,
killed with SIGKILL at a moment drawn uniformly from ``[0, T]`` (the process gets no
chance to tidy up), and finished: ``run --resume`` when its manifest exists, else ``run
--out`` again into the same dir (a run killed before its manifest was written leaves
nothing a new start refuses). Each finished dir must hold the reference's bytes: every
parquet file (parts, decks, cards) has the reference's SHA-256, and the manifest records
the same chunks, games, files and identity. A dir that differs is kept for inspection.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rnr_sim.errors import InputError
from rnr_sim.files import file_sha256

#: The manifest entries that must equal the reference's (the rest are times and dates).
SAME_IN_MANIFEST = ("status", "games_done", "games_total", "chunks", "files", "identity",
                    "seed", "rules", "tables")


@dataclass
class KillOptions:
    """What ``rnr-sim check kill`` plays: ``games`` deals per table of ``decks`` in chunks
    of ``chunk_size`` games, ``kills`` times; ``moments_seed`` draws the kill moments."""

    decks: Sequence[str | Path]
    games: int = 2000
    players: int = 2
    chunk_size: int = 8000
    seed: int = 7
    kills: int = 20
    moments_seed: int = 0
    work: str | Path | None = None  # where the dirs go (default: a temporary folder)
    #: How to start rnr-sim (tests swap the engine this way).
    command: Sequence[str] = (sys.executable, "-m", "rnr_sim.cli")


@dataclass
class Kill:
    """One killed run: when it was killed, what its manifest held then, how it was
    finished, and whether the result is the reference."""

    index: int
    at_s: float
    chunks_at_kill: int | None  # chunks the manifest recorded when killed; None: none yet
    finished_before_kill: bool
    finished_with: str  # "resume", "run" (no manifest yet) or "nothing" (it had finished)
    same: bool
    differs: list[str] = field(default_factory=list)
    kept: str | None = None  # the dir, when it differs


@dataclass
class KillReport:
    reference_s: float
    chunks: int
    kills: list[Kill]

    @property
    def ok(self) -> bool:
        return all(k.same for k in self.kills)

    def to_json(self) -> dict[str, Any]:
        return {"reference_s": round(self.reference_s, 3), "chunks": self.chunks,
                "ok": self.ok, "kills": [vars(k) for k in self.kills]}


def parquet_hashes(run_dir: Path) -> dict[str, str]:
    """SHA-256 of every parquet file of a run dir, by path relative to it."""
    return {str(p.relative_to(run_dir)): file_sha256(p)
            for p in sorted(run_dir.rglob("*.parquet"))}


def _manifest(run_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def differences(run_dir: Path, reference: Path) -> list[str]:
    """How ``run_dir`` differs from ``reference``: files and manifest entries."""
    out = []
    mine, theirs = parquet_hashes(run_dir), parquet_hashes(reference)
    for name in sorted(set(mine) | set(theirs)):
        if mine.get(name) != theirs.get(name):
            out.append(name if name in mine and name in theirs
                       else f"{name} ({'extra' if name in mine else 'missing'})")
    m, r = _manifest(run_dir) or {}, _manifest(reference) or {}
    out += [f"manifest.json: {k}" for k in SAME_IN_MANIFEST if m.get(k) != r.get(k)]
    return out


def kill_check(options: KillOptions, log: Callable[[str], None] = lambda m: None
               ) -> KillReport:
    """Play the reference and the killed runs (see the module docstring)."""
    from rnr_sim.runs.arguments import check_count

    check_count(options.kills, "--kills", 1, 1000)
    check_count(options.games, "--games", 1)
    check_count(options.chunk_size, "--chunk-size", 1)
    if len(options.decks) < options.players:
        raise InputError(f"check kill needs at least {options.players} deck lists, got "
                         f"{len(options.decks)}")
    own = options.work is None
    work = Path(tempfile.mkdtemp(prefix="rnr-sim-kill-")) if own else Path(options.work)
    work.mkdir(parents=True, exist_ok=True)
    args = ["run", *map(str, options.decks), "--games", str(options.games), "--players",
            str(options.players), "--chunk-size", str(options.chunk_size), "--seed",
            str(options.seed), "--quiet", "--no-space-check"]

    def play(*argv: str) -> str | None:
        """Run rnr-sim to the end; None, or its last line of stderr when it fails."""
        proc = subprocess.run([*options.command, *argv], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if proc.returncode == 0:
            return None
        return f"exit {proc.returncode}: {(proc.stderr.strip().splitlines() or ['-'])[-1]}"

    reference = work / "reference"
    shutil.rmtree(reference, ignore_errors=True)
    t0 = time.perf_counter()
    failed = play(*args, "--out", str(reference))
    if failed:
        raise InputError(f"check kill: the reference run failed ({failed})")
    span = time.perf_counter() - t0
    chunks = (_manifest(reference) or {}).get("chunks", {}).get("total", 0)
    log(f"reference: {chunks} chunks in {span:.1f} s")
    rng = random.Random(options.moments_seed)
    kills = []
    for i in range(options.kills):
        out = work / f"kill-{i:02d}"
        shutil.rmtree(out, ignore_errors=True)
        at = rng.uniform(0.0, span)
        proc = subprocess.Popen([*options.command, *args, "--out", str(out)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(at)
        done_before = proc.poll() is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        manifest = _manifest(out)
        recorded = None if manifest is None else len(manifest["chunks"]["complete"])
        failed = None
        if done_before and manifest is not None and manifest.get("status") == "complete":
            how = "nothing"
        elif manifest is not None:
            how = "resume"
            failed = play("run", "--resume", str(out), "--quiet", "--no-space-check")
        else:
            how = "run"
            failed = play(*args, "--out", str(out))
        diff = [f"{how} failed ({failed})"] if failed else differences(out, reference)
        kill = Kill(i, round(at, 3), recorded, done_before, how, not diff, diff,
                    None if not diff else str(out))
        kills.append(kill)
        log(f"kill {i + 1:2d}/{options.kills}: at {at:5.2f} s, "
            + ("no manifest yet" if recorded is None else f"{recorded}/{chunks} chunks")
            + f", finished by {how}: " + ("same bytes" if not diff else
                                          f"DIFFERS ({', '.join(diff[:3])})"))
        if not diff:
            shutil.rmtree(out, ignore_errors=True)
    report = KillReport(span, chunks, kills)
    if own and report.ok:
        shutil.rmtree(work, ignore_errors=True)
    return report
