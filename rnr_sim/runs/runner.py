"""The ``run`` command's runs of games (docs/design.md).

A run plays every table of its decks for ``games`` deals in every seat order, each game
numbered and seeded as ``planning`` says, so a game is a pure function of (inputs, seed,
table, deal,
first_seat). Games are simulated in chunks of consecutive ``game_id`` s; chunk c is
written as ``games/part-{c:05d}.parquet`` and ``seats/part-{c:05d}.parquet`` (each
atomically: a temporary name, then ``os.replace``), and only then recorded in
``manifest.json`` (written the same way). So the tables of a run are the same for any
thread count or chunk size, and a run stopped between chunks (Ctrl-C, a full disk) is a
valid run dir that ``resume_run`` finishes to exactly what an uninterrupted run writes.
Memory is one chunk's, whatever the number of games. The chunks are played and written
by the execution loop every command shares (``rnr_sim.runs.execution.execute``).

Each file carries the run's identity and the manifest records its SHA-256
(``rnr_sim.runs.rundir``: ``--resume`` checks them first); a run dir has one writer at a time
(``rnr_sim.runs.dirlock``); sizes are bounded and a full disk answered (``rnr_sim.runs.bounds``).

The public entry points are ``start_run``, ``resume_run`` and ``bench_run``; the plan is
``planning``'s, the manifest ``manifests``', the folder ``outdir``'s, the end-of-run table
``analytics.summary``'s.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rnr_sim import __version__, files
from rnr_sim.errors import InputError
from rnr_sim.pilots import policy_rows
from rnr_sim.runs import bounds, planning, rundir
from rnr_sim.runs.arguments import check_threads
from rnr_sim.runs.dirlock import DirLock
from rnr_sim.runs.execution import (
    Chunk,
    PartSink,
    Progress,
    engine_play,
    execute,
    log_to_stderr,
    open_backend,
    part_name,
)
from rnr_sim.runs.manifests import (
    MANIFEST,
    file_sha256,
    new_manifest,
    policy_weights,
    read_manifest,
    reload_catalog,
    utc_now,
    write_manifest,
    write_tables,
)
from rnr_sim.runs.outdir import (
    check_out,
    claim_out,
    remove_started,
    resume_hint,
)
from rnr_sim.runs.planning import (
    DEFAULT_CHUNK_SIZE,
    RunOptions,
    RunPlan,
    load_decks,
    make_tables,
    plan_run,
    sample_decks,
)


@dataclass
class RunResult:
    run_dir: Path
    manifest: dict[str, Any]
    interrupted: bool
    already_complete: bool = False  # ``--resume`` of a finished run: nothing was changed

    @property
    def complete(self) -> bool:
        return self.manifest["games_done"] == self.manifest["games_total"]




def start_run(options: RunOptions, progress: bool = True,
              log: Callable[[str], None] = log_to_stderr) -> RunResult:
    """Plan, create the run dir (``options.out``, else ``runs/<YYYYmmdd-HHMMSS>``), lock it
    (one writer at a time, ``dirlock``) and simulate every chunk. Ctrl-C stops after the
    current chunk (``interrupted``); stopped before the first chunk is under way, or
    failing to write the run dir's first files, it leaves nothing behind."""
    out = Path(options.out) if options.out is not None else None
    if out is not None:
        check_out(out)
    plan = plan_run(options)
    if options.space_check:
        bounds.check_space(out if out is not None else Path("runs"), plan.games_total,
                           plan.players)
    bounds.check_chunks(plan.games_total, plan.chunk_size)
    where = open_backend(options.backend, options.address, options.threads)
    driver = planning.engine_driver()
    out, created, lock = claim_out(out)
    try:
        try:  # the manifest first: from then on the dir is a run --resume can finish
            (out / f".{MANIFEST}.tmp").unlink(missing_ok=True)
            manifest = new_manifest(plan, driver, options.command)
            write_manifest(out, manifest)
            for sub in ("games", "seats"):
                (out / sub).mkdir(exist_ok=True)
            write_tables(out, plan, manifest)
            write_manifest(out, manifest)
        except OSError as e:
            remove_started(out, created)
            raise InputError(f"--out {out}: cannot create the run dir ({e.strerror})") from None
        except files.DiskFull as e:
            remove_started(out, created)
            need = plan.games_total * bounds.bytes_per_game(plan.players)
            raise InputError(f"{e.path}: no space left on the device ({e.reason}); the run "
                             f"needs about {bounds.format_bytes(need)} and "
                             f"{bounds.format_bytes(bounds.free_bytes(out.parent) or 0)} are "
                             "free; nothing was written") from None
        except BaseException:
            remove_started(out, created)
            raise
        try:
            return _execute(plan, out, manifest, driver, where, progress, log)
        except KeyboardInterrupt:
            if not manifest["chunks"]["complete"]:  # before the loop took over Ctrl-C
                remove_started(out, created)
            raise
    finally:
        lock.release()


def _plan_from_manifest(run_dir: Path, manifest: dict[str, Any]) -> RunPlan:
    """Re-load what a run was started with; any changed input file is an error."""
    from rnr_sim.rules import load_profile

    where = f"--resume {run_dir}"
    if manifest.get("tool_version") != __version__:
        raise InputError(f"{where}: the run was started by rnr-sim "
                         f"{manifest.get('tool_version')}, this is {__version__}; its "
                         "games would differ, so start a new run")
    catalog = reload_catalog(manifest["catalog"], where)
    rules = manifest["rules"]
    profile = load_profile(rules.get("source"))
    if profile.to_dict() != rules or file_sha256(rules.get("source")) != manifest.get(
        "rules_sha256"
    ):
        changed = sorted(k for k, v in profile.values.items()
                         if rules["switches"].get(k) != v)
        raise InputError(f"{where}: the rules file {rules.get('source')} changed since the "
                         f"run started ({', '.join(changed) or 'its name'}); start a new run")
    entries = manifest["decks"]
    decks = load_decks([Path(e["path"]) for e in entries], catalog)
    for deck, entry in zip(decks, entries, strict=True):
        if deck.sha256 != entry["sha256"] or deck.name != entry["name"]:
            raise InputError(f"{where}: the deck list {entry['path']} changed since the run "
                             "started (SHA-256 differs); start a new run")
    names = [d.name for d in decks]
    vs = None if manifest.get("vs") is None else names.index(manifest["vs"])
    plan = RunPlan(catalog=catalog, decks=decks, profile=profile,
                   policies=[e["policy"] for e in entries], players=manifest["players"],
                   games=manifest["games_requested"], seed=manifest["seed"],
                   tables=make_tables(len(decks), manifest["players"], manifest["mirrors"], vs),
                   chunk_size=manifest["chunk_size"], mirrors=manifest["mirrors"], vs=vs,
                   allow_illegal=manifest.get("allow_illegal", False))
    tables = [[names[i] for i in t] for t in plan.tables.tolist()]
    if tables != manifest["tables"] or plan.games_total != manifest["games_total"] or (
        plan.n_chunks != manifest["chunks"]["total"]
    ):
        raise InputError(f"{where}: the manifest's tables or games do not match its decks; "
                         "was it edited? Start a new run")
    driver = planning.engine_driver()
    for deck, ref in zip(decks, plan.policies, strict=True):
        try:
            policy_rows([ref])
        except InputError as e:
            raise InputError(f"{where}: deck '{deck.name}': {e}") from None
    if policy_weights(plan, driver) != manifest["policies"]:
        raise InputError(f"{where}: the engine's policy weights changed since the run "
                         "started; start a new run")
    return plan


def resume_run(run_dir: str | Path, threads: int | None = None, progress: bool = True,
               log: Callable[[str], None] = log_to_stderr, backend: str = "local",
               address: str | None = None, space_check: bool = True) -> RunResult:
    """Finish the chunks a stopped run did not complete; the result equals the run done
    in one go, whichever backend played which chunks. The run dir is locked (one writer
    at a time) and checked by content first (``rundir.verify_run_dir``: its parts, the
    manifest's seed and switches); its inputs are re-read and must be unchanged
    (SHA-256). A finished run is left as it is (``already_complete``)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InputError(f"--resume {run_dir}: no such run dir")
    check_threads(threads)
    read_manifest(run_dir)  # not a run dir: say so before taking a lock in it
    with DirLock(run_dir, "run dir"):
        manifest = read_manifest(run_dir)
        for name in rundir.TABLE_FILES:  # written, but killed before it was recorded
            if name not in (manifest.get("files") or {}):
                (run_dir / name).unlink(missing_ok=True)
        if not rundir.verify_run_dir(run_dir, manifest):
            raise InputError(f"--resume {run_dir}: the run was started by an rnr-sim that "
                             "did not record its parts' identity; start a new run")
        plan = _plan_from_manifest(run_dir, manifest)
        if _finished(run_dir, manifest):
            return RunResult(run_dir, manifest, interrupted=False, already_complete=True)
        if space_check:
            bounds.check_space(run_dir, plan.games_total - _games_on_disk(run_dir, manifest),
                               plan.players)
        where = open_backend(backend, address, threads)
        driver = planning.engine_driver()
        for sub in ("games", "seats", "."):  # and the files a killed run was writing
            try:
                (run_dir / sub).mkdir(exist_ok=True)
                for tmp in (run_dir / sub).glob(".*.tmp"):
                    tmp.unlink()
            except OSError as e:
                raise InputError(f"{run_dir / sub}: cannot write ({e.strerror})") from None
        missing = [n for n in rundir.TABLE_FILES if not (run_dir / n).exists()]
        if missing:
            try:
                write_tables(run_dir, plan, manifest)
            except InputError as e:
                raise InputError(f"{e}; the run dir is as it was: fix the cause and "
                                 f"continue with `{resume_hint(run_dir)}`") from None
        manifest["resumed"] = [*manifest.get("resumed", []), utc_now()]
        return _execute(plan, run_dir, manifest, driver, where, progress, log)


def _games_on_disk(run_dir: Path, manifest: dict[str, Any]) -> int:
    """Games of the complete chunks whose parts are both on disk."""
    size, total = manifest["chunk_size"], manifest["games_total"]
    return sum(min(size, total - c * size) for c in manifest["chunks"]["complete"]
               if (run_dir / "games" / part_name(c)).exists()
               and (run_dir / "seats" / part_name(c)).exists())


def _finished(run_dir: Path, manifest: dict[str, Any]) -> bool:
    """Every game played and every file the manifest vouches for on disk."""
    return (manifest.get("status") == "complete"
            and manifest.get("games_done") == manifest.get("games_total")
            and all((run_dir / rel).is_file() for rel in rundir.expected_files(manifest)))


def _execute(plan: RunPlan, out: Path, manifest: dict[str, Any], driver, where,
             progress: bool, log: Callable[[str], None]) -> RunResult:
    """Simulate and write every chunk not yet complete (``execution.execute`` on
    ``backend``), recording each in the manifest once its parts are written, with the
    backend and each chunk's play seconds (``execution``: one entry per start or resume)."""
    with where:
        return _execute_on(plan, out, manifest, driver, where, progress, log)


def _remove_unrecorded(out: Path, complete: list[int]) -> None:
    """Parts on disk of chunks the manifest does not record (written, then stopped before
    the manifest was): the run dir is left holding only whole, recorded chunks."""
    keep = {part_name(c) for c in complete}
    for sub in ("games", "seats"):
        for part in (out / sub).glob("part-*.parquet"):
            if part.name not in keep:
                part.unlink(missing_ok=True)


def _bytes_per_game(out: Path, complete: list[int], done: int, players: int) -> float:
    """Parquet bytes a game of this run takes: measured on its ``complete`` chunks' parts
    (``done`` games) when it has some, else the estimate."""
    parts = [out / sub / part_name(c) for c in complete for sub in ("games", "seats")]
    size = sum(p.stat().st_size for p in parts if p.exists())
    return size / done if done and size else bounds.bytes_per_game(players)


def _execute_on(plan: RunPlan, out: Path, manifest: dict[str, Any], driver, where,
                progress: bool, log: Callable[[str], None]) -> RunResult:
    t_start = time.perf_counter()
    session = {**where.describe(), "started": utc_now(), "chunk_s": {}}
    manifest["execution"] = [*manifest.get("execution", []), session]
    timings = manifest["timings"]
    complete = sorted(c for c in manifest["chunks"]["complete"]
                      if (out / "games" / part_name(c)).exists()
                      and (out / "seats" / part_name(c)).exists())
    games_done = manifest["games_done"] = sum(b - a for a, b in map(plan.chunk_range, complete))
    saved = {"complete": complete, "games_done": games_done}  # as last written to disk
    plan.compile(driver)
    engine = engine_play(driver, plan, where.threads)
    sink = PartSink(out, plan, plan.policy_names,
                    metadata=lambda table, c: rundir.part_stamp(manifest, table, c))

    def save(tally) -> None:
        session["chunk_s"] = {str(c): round(s, 3) for c, s in tally.chunk_s.items()}
        elapsed = time.perf_counter() - t_start
        compile_s = tally.compile_s
        manifest["chunks"]["complete"] = sorted(complete + tally.written)
        manifest["games_done"] = games_done + tally.games
        manifest["status"] = ("complete" if manifest["games_done"] == plan.games_total
                              else "incomplete")
        manifest.setdefault("files", {}).update(sink.sha)
        run_s = timings["total_s"] + elapsed - timings["compile_s"] - compile_s
        manifest["timings"] = {
            "compile_s": round(timings["compile_s"] + compile_s, 3),
            "simulate_s": round(timings["simulate_s"] + sum(tally.simulate_s.values()), 3),
            "write_s": round(timings["write_s"] + sum(tally.write_s.values()), 3),
            "total_s": round(timings["total_s"] + elapsed, 3),
            # Steady throughput: every game simulated and written, the compile aside.
            "games_per_s": round(manifest["games_done"] / run_s, 1) if run_s > 0 else 0.0,
        }
        write_manifest(out, manifest)
        saved.update(complete=list(manifest["chunks"]["complete"]),
                     games_done=manifest["games_done"])

    chunks = (Chunk(c, plan.chunk_inputs(*plan.chunk_range(c))) for c in range(plan.n_chunks))
    bar = Progress("rnr-sim run", plan.games_total, games_done, show=progress, log=log)
    try:
        with bar:
            tally = execute(chunks, lambda chunk: engine(chunk.inputs), sink,
                            skip=set(complete), backend=where, progress=bar,
                            warm_up=driver.needs_compile,
                            after=lambda chunk, tally: save(tally))
        save(tally)
    except InputError as e:
        # The manifest on disk is the last one written: the message counts its games, and
        # parts it does not record go, as after a Ctrl-C.
        _remove_unrecorded(out, saved["complete"])
        done = saved["games_done"]
        if isinstance(e, files.DiskFull):
            per_game = _bytes_per_game(out, saved["complete"], done, plan.players)
            raise InputError(bounds.disk_full_message(
                e, out, plan.games_total - done, per_game, done, resume_hint(out))) from None
        raise InputError(
            f"{e}; the run dir keeps the {done:,} games done: fix the cause and "
            f"continue with `{resume_hint(out)}`"
        ) from None
    if tally.interrupted:
        _remove_unrecorded(out, saved["complete"])
    return RunResult(out, manifest, tally.interrupted)



def bench_run(games: int = 200_000, threads: int | None = None, backend: str = "local",
              address: str | None = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
              manifest: dict[str, Any] | None = None) -> float:
    """Games per second of ``rnr-sim run`` end to end on the sample decks: simulate and
    write about ``games`` two-player games into a temporary run dir (the compile or
    cache load before the first game excluded; with Ray, the start of Ray excluded but
    each worker's engine load included). ``manifest``: filled with the run's manifest."""
    decks = sample_decks()
    n_tables = len(make_tables(len(decks), 2))
    deals = max(1, math.ceil(games / (2 * n_tables)))
    with tempfile.TemporaryDirectory(prefix="rnr-sim-bench-") as tmp:
        options = RunOptions(decks=decks, games=deals, players=2, threads=threads,
                             out=Path(tmp) / "run", command="bench_run",
                             chunk_size=chunk_size, backend=backend, address=address)
        result = start_run(options, progress=False, log=lambda m: None)
        if manifest is not None:
            manifest.update(result.manifest)
        return float(result.manifest["timings"]["games_per_s"])
