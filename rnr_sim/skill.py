"""``rnr-sim skill``: how much of a deck's strength is its pilot (restricted play, Jaffe 2012).

Each deck plays the field (every other given deck, each with its own ``Policy:`` pilot)
with each of its own pilots, on the same deals for every pilot of the deck (common random
numbers: the engine tables, deals and seat orders are the same, so a pilot's games differ
from another's only by its play), both seat orders:

- ``random``: the built-in random pilot (legal moves at random), the floor;
- ``default``: the built-in the deck plays by default: its ``Policy:`` header when that is
  a built-in, or that policy file's ``base`` when it is a file;
- ``tuned``: the deck's ``Policy:`` header when it names a policy file (``--tuned
  DECK=FILE`` overrides); absent otherwise;
- ``search`` (with ``rollouts`` > 0): the search pilot (``engine/search.py``), flat
  Monte-Carlo over each Play Phase decision with the deck's own pilot (tuned, else
  default) as its rollout pilot: the yardstick of how good the heuristic pilots are.

``PILOTS`` is the column order.

The metrics (each a small polars function below): a pilot's win share against the field
(a draw counts half) with its 95% interval, and its paired difference from the default
pilot with a 95% interval; both take the deal against one opponent (both seat orders) as
the unit, the opponents as strata (``analytics.stats``: ``ratio_by_deal``,
``lincomb_by_deal``). The decks are sorted by the default pilot's gap to the best pilot
measured, largest first (ties by name): a deck whose best pilot beats its default by a lot
was judged on a pilot that undersells it.

Checkpoints (``play(out=DIR)``): the games are played in a fixed sequence of engine calls
(``engine_calls``); each call's frame is written as ``DIR/.skill/part-NNNNN.parquet`` (NNNNN:
the call's place in the sequence) beside ``plan.json``, the fingerprint of everything that
shapes the games (``fingerprint``). Ctrl-C stops after the call under way (a second one at
once) and raises ``Stopped``; ``play(out=DIR, resume=True)`` plays only the calls without a
part and returns every game, the parts read back in call order: the same frame as a run
done in one go, but for the ``seconds`` timing column. ``clear_checkpoint`` removes
``DIR/.skill/`` once the table is written.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
import shutil
import sys
import textwrap
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim.analytics.stats import lincomb_by_deal, ratio_by_deal
from rnr_sim.errors import InputError

#: The pilots measured, in column order; "default" is the reference of every difference.
PILOTS = ("random", "default", "tuned", "search")
SEARCH = "search"
REFERENCE = "default"
DEFAULT_GAMES = 200  # deals per opponent
DEFAULT_SEED = 1
FILE = "skill.parquet"
#: Deals played per engine call (the progress bar's step, and a checkpoint part's size).
DEALS_PER_CALL = 250
#: The folder of ``--out DIR`` holding a stopped run's finished engine calls.
CHECKPOINT = ".skill"
PLAN = "plan.json"

GAME_SCHEMA = {"deck": pl.String, "pilot": pl.String, "policy": pl.String,
               "opponent": pl.String, "table_id": pl.Int64, "deal": pl.Int64,
               "first_seat": pl.Int32, "score": pl.Float64}
#: ``play``'s frame: each game with its share of its engine call's wall time.
TIMED_SCHEMA = {**GAME_SCHEMA, "seconds": pl.Float64}


@dataclass(frozen=True)
class DeckPilot:
    """One pilot of one deck: its role (``PILOTS``), the policy's display name, its
    weights, and where it came from (a built-in name or a file path)."""

    pilot: str
    policy: str
    weights: np.ndarray
    source: str
    search: tuple[int, int] = (0, 0)  # (rollouts, determinizations); (0, 0): no search


# ---------------------------------------------------------------------------- the pilots


def _file_base(path: str) -> str:
    """The ``base`` built-in of a policy file already checked by ``load_policy``."""
    from rnr_sim.pilots import DEFAULT_BASE

    with open(path, "rb") as f:
        head = tomllib.load(f).get("policy", {})
    return head.get("base", DEFAULT_BASE) if isinstance(head, dict) else DEFAULT_BASE


def deck_pilots(ref: str, tuned: str | None = None,
                search: tuple[int, int] = (0, 0)) -> list[DeckPilot]:
    """The pilots of a deck whose policy reference (``runner.plan_run``'s resolved
    ``Policy:``: a built-in name or a file's absolute path) is ``ref``; ``tuned`` (a policy
    file path) replaces the header's file as the tuned pilot; ``search`` (rollouts,
    determinizations) adds the search pilot when rollouts > 0, its rollout pilot the
    tuned pilot if any, else the default. In ``PILOTS`` order."""
    from rnr_sim.pilots import builtin, is_policy_file, load_policy

    default = _file_base(ref) if is_policy_file(ref) else ref
    tuned_ref = tuned if tuned is not None else (ref if is_policy_file(ref) else None)
    out = []
    for role, pilot in (("random", builtin("random")), ("default", builtin(default)),
                        ("tuned", None if tuned_ref is None else load_policy(tuned_ref))):
        if pilot is not None:
            out.append(DeckPilot(role, pilot.name, pilot.weights, pilot.source))
    if search[0] > 0:
        base = out[-1]
        out.append(DeckPilot(SEARCH, f"search K={search[0]} N={search[1]} ({base.policy})",
                             base.weights, base.source, (int(search[0]), int(search[1]))))
    return out


def parse_tuned(items: Sequence[str], decks: Sequence[Any]) -> dict[int, str]:
    """``--tuned DECK=FILE`` options as {deck index: policy file path}. DECK is a deck list
    path as given (or any path to the same file) or a deck's name; FILE a policy file
    (relative to the working folder). Each problem is one ``InputError`` line."""
    from rnr_sim.pilots import is_policy_file, load_policy

    out: dict[int, str] = {}
    for item in items:
        key, sep, file = item.partition("=")
        key, file = key.strip(), file.strip()
        if not sep or not key or not file:
            raise InputError(f"--tuned {item}: write DECK=POLICY.toml, e.g. "
                             "--tuned decks/scroll_assembly.txt=policies/scroll.toml")
        matches = [i for i, d in enumerate(decks)
                   if d.name == key or (d.path is not None and Path(key).exists()
                                        and Path(key).resolve() == Path(d.path).resolve())]
        if not matches:
            names = ", ".join(d.name for d in decks)
            raise InputError(f"--tuned {item}: '{key}' is none of the decks given; name one "
                             f"by its list's path or its name ({names})")
        if not is_policy_file(file):
            raise InputError(f"--tuned {item}: '{file}' is not a policy file; give a .toml "
                             "policy file (built-in pilots are already measured as default "
                             "and random)")
        try:
            pilot = load_policy(file, relative_to=Path.cwd())
        except InputError as e:
            raise InputError(f"--tuned {item}: {e}") from None
        i = matches[0]
        if i in out:
            raise InputError(f"--tuned {item}: deck '{decks[i].name}' is given --tuned twice; "
                             "give one policy file per deck")
        out[i] = str(Path(pilot.source).resolve())
    return out


# ---------------------------------------------------------------------------- the games


def play(decks: Sequence[str | Path], games: int = DEFAULT_GAMES, seed: int = DEFAULT_SEED,
         threads: int | None = None, tuned: Sequence[str] = (),
         cards: str | Path | Sequence[str | Path] | None = None,
         rules: str | Path | None = None,
         progress: Callable[[int], None] | None = None,
         on_plan: Callable[[int], None] | None = None, backend: str = "local",
         address: str | None = None, rollouts: int = 0,
         determinizations: int = 2, out: str | Path | None = None,
         resume: bool = False) -> pl.DataFrame:
    """Every game of the measurement, one row each (``GAME_SCHEMA``): each deck with each
    of its pilots against every other deck (their own pilots), ``games`` deals per
    opponent, both seat orders. The pilots of one deck play the same deals: deck i against
    deck j is engine table ``i * n + j`` for all of i's pilots. ``on_plan`` gets the total
    game count before play and the games taken from a checkpoint (``on_plan(total,
    resumed)``); ``progress`` the games of each engine call. ``out``: checkpoint each
    engine call into ``out/.skill/`` (module docstring; Ctrl-C raises ``Stopped``);
    ``resume``: continue the stopped run checkpointed there. ``backend`` /
    ``address``: where the games are played (``--backend ray``: each engine call's games
    cut into chunks played as Ray tasks; each game depends only on its own inputs, so the
    frame is the same). ``rollouts`` > 0 adds the search pilot (``rollouts`` per action
    and determinization, ``determinizations``); its games are played in engine calls of
    their own, and the frame's ``seconds`` column is each call's wall time shared by its
    games."""
    from rnr_sim import runner
    from rnr_sim.execution import open_backend

    ckpt = None if out is None else Checkpoint(out)
    if ckpt is None and resume:
        raise InputError("--resume continues a skill run stopped with --out DIR: give "
                         "that --out DIR")
    if ckpt is not None:
        ckpt.check(resume)
    if len(decks) < 2:
        raise InputError("skill needs at least 2 decks: each deck plays the others, e.g. "
                         "rnr-sim skill decks/*.txt")
    paths = [Path(p) for p in decks]
    if len({p.resolve() for p in paths}) != len(paths):
        raise InputError("a deck list is given twice; give each deck once")
    if isinstance(games, bool) or not isinstance(games, int) or games < 2:
        raise InputError(f"--games must be a whole number of deals per opponent, at least 2 "
                         f"(an interval needs two deals), not {games!r}")
    options = runner.RunOptions(decks=paths, games=games, seed=seed, cards=cards,
                                rules=rules, threads=threads)
    plan = runner.plan_run(options)
    names = plan.deck_names
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"two decks are named '{dup[0]}'; give one a Name: header")
    for name, v, lo in (("--rollouts", rollouts, 0), ("--determinizations",
                                                       determinizations, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= 4096:
            raise InputError(f"{name} must be a whole number from {lo} to 4096, not {v!r}")
    overrides = parse_tuned(tuned, plan.decks)
    budget = (rollouts, determinizations)
    pilots = [deck_pilots(ref, overrides.get(i), budget) for i, ref in enumerate(plan.policies)]
    where = open_backend(backend, address, threads)  # a bad --backend: before any play
    n = len(plan.decks)
    total = sum(len(p) for p in pilots) * (n - 1) * games * 2
    driver = runner.engine_driver()
    plan.compile(driver)
    if ckpt is None:
        if on_plan is not None:
            on_plan(total, 0)
        with where:
            return _play(plan, pilots, driver, games, where.threads,
                         None if backend == "local" else where, progress)
    calls = engine_calls(pilots, games, n)
    ckpt.start(fingerprint(plan, pilots, overrides, games, rollouts, determinizations,
                           len(calls)), resume)
    done = ckpt.done(len(calls))
    resumed = sum(calls[k].games for k in done)
    if on_plan is not None:
        on_plan(total, resumed)
    with where:
        _play_checkpointed(plan, pilots, driver, games, where.threads,
                           None if backend == "local" else where, progress, ckpt, calls,
                           done, total)
    return ckpt.frame(calls)


@dataclass(frozen=True)
class Call:
    """One engine call of ``play``: deck ``deck``'s pilots ``pilots`` (indices into its
    ``deck_pilots``: the heuristic ones together, the search pilot alone) against the
    field, deals ``start .. start + deals - 1``; ``index``: its place in the sequence."""

    index: int
    deck: int
    pilots: tuple[int, ...]
    start: int
    deals: int
    games: int


def engine_calls(pilots: list[list[DeckPilot]], games: int, n: int) -> list[Call]:
    """``play``'s engine calls in the order they are played (and their frames
    concatenated): by deck, the heuristic pilots before the search pilot, by deals in
    steps of ``DEALS_PER_CALL``. Fixed by the pilots, ``games`` and the deck count ``n``."""
    calls: list[Call] = []
    for i, mine in enumerate(pilots):
        groups = [tuple(k for k, p in enumerate(mine) if p.search[0] == 0),
                  tuple(k for k, p in enumerate(mine) if p.search[0] > 0)]
        for group in groups:
            if not group:
                continue
            for start in range(0, games, DEALS_PER_CALL):
                deals = min(DEALS_PER_CALL, games - start)
                calls.append(Call(len(calls), i, group, start, deals,
                                  len(group) * (n - 1) * deals * 2))
    return calls


def _played(plan, pilots: list[list[DeckPilot]], driver, calls: Sequence[Call],
            threads: int | None, backend):
    """(call, frame) of each of ``calls`` in turn, played on ``backend`` (None: here)."""
    from rnr_sim.tune import Field

    n = len(plan.decks)
    fixed = np.ascontiguousarray(plan.policy_table)
    for call in calls:
        i = call.deck
        opponents = np.array([j for j in range(n) if j != i], dtype=np.int64)
        fld = Field(plan=plan, n_field=n - 1, rows_fixed=fixed, subject=i,
                    opponents=opponents, table_ids=i * n + opponents)
        group = [pilots[i][k] for k in call.pilots]
        yield call, _call_frame(plan, fld, driver, group, call, threads, backend)


def _call_frame(plan, fld, driver, group: list[DeckPilot], call: Call,
                threads: int | None, backend) -> pl.DataFrame:
    """The games of one engine call (``TIMED_SCHEMA``)."""
    names = plan.deck_names
    weights = [p.weights for p in group]
    budget = np.zeros((len(weights) + len(fld.rows_fixed), 2), dtype=np.int64)
    budget[: len(group)] = [p.search for p in group]
    t0 = time.perf_counter()
    inputs, score = fld.scores(driver, weights, call.deals, plan.seed, threads,
                               first_deal=call.start, backend=backend,
                               search=budget if budget.any() else None)
    spent = time.perf_counter() - t0
    cand = inputs["candidate"]
    opponents = fld._opponents()
    return pl.DataFrame({
        "deck": np.full(len(score), names[call.deck], dtype=object),
        "pilot": np.array([group[k].pilot for k in cand], dtype=object),
        "policy": np.array([group[k].policy for k in cand], dtype=object),
        "opponent": np.array([names[j] for j in opponents[inputs["field"]]], dtype=object),
        "table_id": inputs["table_id"], "deal": inputs["deal"],
        "first_seat": inputs["first_seat"], "score": score,
        "seconds": np.full(len(score), spent / max(1, len(score))),
    }, schema=TIMED_SCHEMA)


def _play(plan, pilots: list[list[DeckPilot]], driver, games: int, threads: int | None,
          backend, progress: Callable[[int], None] | None) -> pl.DataFrame:
    """``play``'s games, on ``backend`` (None: in this process)."""
    frames = []
    calls = engine_calls(pilots, games, len(plan.decks))
    for _call, frame in _played(plan, pilots, driver, calls, threads, backend):
        frames.append(frame)
        if progress is not None:
            progress(len(frame))
    return pl.concat(frames, how="vertical")


def _play_checkpointed(plan, pilots: list[list[DeckPilot]], driver, games: int,
                       threads: int | None, backend,
                       progress: Callable[[int], None] | None, ckpt: Checkpoint,
                       calls: list[Call], done: set[int], total: int) -> None:
    """Play the ``calls`` not ``done``, each frame written as its part as it comes. The
    first Ctrl-C lets the call under way finish and be written, a second abandons it;
    either way ``Stopped`` is raised with the games kept."""
    from tqdm import tqdm

    from rnr_sim.execution import StopOnInterrupt

    def log(message: str) -> None:  # above the progress bar, if one is shown
        tqdm.write(message, file=sys.stderr)

    todo = [c for c in calls if c.index not in done]
    kept = sum(c.games for c in calls if c.index in done)
    with StopOnInterrupt(log, "Stopping after the current engine call") as stop:
        played = _played(plan, pilots, driver, todo, threads, backend)
        try:
            while not stop.requested:
                item = next(played, None)
                if item is None:
                    break
                call, frame = item
                ckpt.write(call.index, frame)
                done.add(call.index)
                kept += call.games
                if progress is not None:
                    progress(call.games)
        except KeyboardInterrupt:
            pass  # a second Ctrl-C: the call under way is lost, its part never half-written
        finally:
            played.close()
    if len(done) < len(calls):
        raise Stopped(kept, total, ckpt.out)


# ---------------------------------------------------------------------------- checkpoints


class Stopped(Exception):
    """A checkpointed ``play`` stopped by Ctrl-C: ``kept`` of ``total`` games are in
    ``out/.skill/``; ``play(..., out=out, resume=True)`` plays the rest."""

    def __init__(self, kept: int, total: int, out: Path):
        super().__init__(f"stopped: {kept:,} of {total:,} games kept in {out}")
        self.kept, self.total, self.out = kept, total, out


def _weights_sha256(weights: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(weights, dtype=np.float64).tobytes()).hexdigest()


def fingerprint(plan, pilots: list[list[DeckPilot]], overrides: dict[int, str], games: int,
                rollouts: int, determinizations: int, calls: int) -> dict[str, Any]:
    """Everything that shapes a skill run's games, as JSON-ready data (the ``plan.json``
    of a checkpoint), in the order a resume compares them: the deck lists (absolute path,
    SHA-256 of the file), ``--games``, ``--seed``, ``--tuned`` (deck index, file, SHA-256),
    the card catalog files and the rules file (path, SHA-256), the search budget, each
    deck's pilots and the field's policy rows (SHA-256 of the weights: a changed policy
    file or built-in), the rnr-sim version, and the engine calls' cut. Not threads,
    backend or address: they do not change a game."""
    from rnr_sim import __version__
    from rnr_sim.runner import catalog_sources, file_sha256

    source = plan.profile.source
    return {
        "decks": [[str(Path(d.path).resolve()), d.sha256] for d in plan.decks],
        "games": games,
        "seed": plan.seed,
        "tuned": [[i, path, file_sha256(path)] for i, path in sorted(overrides.items())],
        "cards": [[s["path"], s["sha256"]] for s in catalog_sources(plan.catalog)],
        "rules": [None if source is None else str(Path(source).resolve()),
                  file_sha256(source),
                  plan.profile.to_dict()["switches"]],
        "rollouts": rollouts,
        "determinizations": determinizations,
        "pilots": [[[p.pilot, p.policy, _weights_sha256(p.weights), list(p.search)]
                    for p in mine] for mine in pilots]
        + [[plan.policy_names, _weights_sha256(plan.policy_table)]],
        "tool_version": __version__,
        "calls": [calls, DEALS_PER_CALL],
    }


def _difference(then: dict[str, Any], now: dict[str, Any]) -> str | None:
    """The first thing that differs between two fingerprints, in words, or None."""
    for key in now:
        a, b = then.get(key), now[key]
        if a == b:
            continue
        if key == "decks":
            if [d[0] for d in a or []] != [d[0] for d in b]:
                return "the DECK files differ from the stopped run's"
            path = next(d[0] for d, e in zip(a, b, strict=True) if d != e)
            return f"the deck list {path} changed since the run stopped"
        if key in ("games", "seed", "rollouts", "determinizations"):
            return f"--{key} differs: {a} in the stopped run, {b} now"
        if key == "tuned":
            return "--tuned differs from the stopped run's (or its policy file changed)"
        if key == "cards":
            return "--cards differs from the stopped run's (or a catalog file changed)"
        if key == "rules":
            return "--rules differs from the stopped run's (or the rules file changed)"
        if key == "pilots":
            return "a deck's policy changed since the run stopped (a Policy: file)"
        if key == "tool_version":
            return f"the run was stopped by rnr-sim {a}, this is {b}"
        return "the run was cut into other engine calls (another rnr-sim version?)"
    return None


class Checkpoint:
    """``out/.skill/``: ``plan.json`` (the ``fingerprint``) and one part per finished
    engine call (``part-NNNNN.parquet``, NNNNN the call's index), each written atomically."""

    def __init__(self, out: str | Path):
        self.out = Path(out)
        self.root = self.out / CHECKPOINT

    def part(self, index: int) -> Path:
        from rnr_sim.execution import part_name

        return self.root / part_name(index)

    def check(self, resume: bool) -> None:
        """Before anything is loaded: ``--resume`` needs a checkpoint, a new run none."""
        out = shlex.quote(str(self.out))
        if self.out.exists() and not self.out.is_dir():
            raise InputError(f"--out {self.out}: not a folder; give a run dir or a new folder")
        if resume and self.root.is_dir() and not (self.root / PLAN).is_file():
            raise InputError(f"--resume: {self.root} has no {PLAN} (cut short as it "
                             f"started); delete {self.root} and start again without --resume")
        if resume and not (self.root / PLAN).is_file():
            raise InputError(f"--resume: {self.root} holds no stopped skill run; drop "
                             f"--resume to start one with --out {out}")
        if not resume and self.root.exists():
            raise InputError(f"--out {self.out}: holds a stopped skill run ({self.root}); "
                             f"add --resume to continue it, or delete {self.root} to start "
                             "over")

    def start(self, plan: dict[str, Any], resume: bool) -> None:
        """Resume: refuse a ``plan`` that differs from the stored one. New: store it."""
        path = self.root / PLAN
        if resume:
            try:
                then = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
                raise InputError(f"{path}: cannot read ({e}); delete {self.root} to start "
                                 "over") from None
            why = _difference(then if isinstance(then, dict) else {}, plan)
            if why is not None:
                raise InputError(f"--resume {self.out}: {why}; give the options the run was "
                                 f"started with, or delete {self.root} to start over")
            for tmp in self.root.glob(".*.tmp"):  # a write cut short (the process killed)
                tmp.unlink(missing_ok=True)
            return
        from rnr_sim.execution import write_json

        try:
            self.root.mkdir(parents=True)
        except OSError as e:
            raise InputError(f"--out {self.out}: cannot create {self.root} "
                             f"({e.strerror or e})") from None
        write_json(path, plan)

    def done(self, n_calls: int) -> set[int]:
        """The calls whose parts are written."""
        return {k for k in range(n_calls) if self.part(k).is_file()}

    def write(self, index: int, frame: pl.DataFrame) -> None:
        from rnr_sim.execution import write_parquet

        write_parquet(self.part(index), frame)

    def frame(self, calls: Sequence[Call]) -> pl.DataFrame:
        """Every call's games, read back in call order (``TIMED_SCHEMA``)."""
        frames = []
        for call in calls:
            path = self.part(call.index)
            try:
                frame = pl.read_parquet(path)
            except Exception as e:  # a broken part is bad input, not a crash
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                raise InputError(f"{path}: cannot read ({first}); delete it and --resume "
                                 "to play its games again") from None
            if frame.height != call.games or dict(frame.schema) != TIMED_SCHEMA:
                raise InputError(f"{path}: not the games of engine call {call.index}; "
                                 "delete it and --resume to play them again")
            frames.append(frame)
        return pl.concat(frames, how="vertical")


def clear_checkpoint(out: str | Path) -> None:
    """Remove ``out/.skill/`` (once the skill table is written)."""
    shutil.rmtree(Path(out) / CHECKPOINT, ignore_errors=True)


# ---------------------------------------------------------------------------- the metrics


def win_shares(games: pl.DataFrame) -> pl.DataFrame:
    """Per (deck, pilot): ``win_share`` = Σ score / games (a win 1, a draw 1/2, a loss 0)
    against the field, every opponent's games counted alike, with its 95% interval
    ``win_share_lo``/``_hi`` (``ratio_by_deal``: the deal against one opponent, both seat
    orders, is the unit; opponents are strata); ``deals`` (per opponent), ``games``."""
    shares = ratio_by_deal(games, "score", pl.lit(1.0), by=["deck", "pilot"],
                           name="win_share").collect()
    secs = pl.col("seconds").sum() if "seconds" in games.columns else pl.lit(None, pl.Float64)
    counts = games.group_by("deck", "pilot").agg(
        pl.col("policy").first(), pl.col("deal").n_unique().cast(pl.Int64).alias("deals"),
        pl.len().cast(pl.Int64).alias("games"), secs.cast(pl.Float64).alias("seconds"))
    return counts.join(shares, on=["deck", "pilot"]).select(
        "deck", "pilot", "policy", "deals", "games", "win_share", "win_share_lo",
        "win_share_hi", "seconds")


def vs_pilot(games: pl.DataFrame, pilot: str, ref: str) -> pl.DataFrame:
    """Per deck that has both: ``vs_<ref>`` = win share with ``pilot`` − win share with
    ``ref``, paired deal by deal as ``vs_default`` (its 95% interval ``_lo``/``_hi`` and
    two-sided ``_p``)."""
    have = (games.filter(pl.col("pilot") == pilot).select("deck").unique()
            .join(games.filter(pl.col("pilot") == ref).select("deck").unique(), on="deck"))
    rows = games.join(have, on="deck", how="semi").filter(pl.col("pilot").is_in([pilot, ref]))
    is_p = (pl.col("pilot") == pilot).cast(pl.Float64)
    is_r = (pl.col("pilot") == ref).cast(pl.Float64)
    name = f"vs_{ref}"
    out = lincomb_by_deal(rows, [(pl.col("score") * is_p, is_p, 1.0),
                                 (pl.col("score") * is_r, is_r, -1.0)],
                          by=["deck"], name=name)
    return out.select("deck", pl.lit(pilot).alias("pilot"), name, f"{name}_lo",
                      f"{name}_hi", f"{name}_p")


def vs_default(games: pl.DataFrame, pilot: str) -> pl.DataFrame:
    """Per deck that has ``pilot``: ``vs_default`` = win share with ``pilot`` − win share
    with the default pilot, on the same deals; its 95% interval ``vs_default_lo``/``_hi``
    and two-sided ``vs_default_p`` pair the two pilots deal by deal (``lincomb_by_deal``:
    the per-deal difference of the linearised shares, opponents as strata): ``vs_pilot``
    against ``REFERENCE``."""
    return vs_pilot(games, pilot, REFERENCE)


def skill_gap(table: pl.DataFrame) -> pl.DataFrame:
    """Per deck: ``best_pilot``, the pilot of the highest win share (ties: the first in
    ``PILOTS``), and ``gap`` = its win share − the default pilot's (0 when the default is
    the best): how far the deck's default pilot is from the best pilot measured."""
    order = {p: k for k, p in enumerate(PILOTS)}
    ranked = table.with_columns(
        pl.col("pilot").replace_strict(order, default=len(PILOTS)).alias("_o")
    ).sort("deck", pl.col("win_share"), "_o", descending=[False, True, False])
    best = ranked.group_by("deck", maintain_order=True).agg(
        pl.col("pilot").first().alias("best_pilot"), pl.col("win_share").max().alias("_b"))
    ref = table.filter(pl.col("pilot") == REFERENCE).select("deck", pl.col("win_share")
                                                             .alias("_d"))
    return best.join(ref, on="deck").select(
        "deck", "best_pilot", (pl.col("_b") - pl.col("_d")).alias("gap"))


def skill_table(games: pl.DataFrame, seed: int | None = None) -> pl.DataFrame:
    """The skill table: one row per (deck, pilot), ``win_shares`` with each non-default
    pilot's ``vs_default`` (null on the default row, the reference) and the deck's
    ``skill_gap``; decks by gap, largest first (ties by name), pilots in ``PILOTS`` order;
    ``rank`` is the deck's place. ``seed`` is recorded when given."""
    shares = win_shares(games)
    present = [p for p in PILOTS if p != REFERENCE and p in set(shares["pilot"])]
    extra = sorted(set(shares["pilot"]) - set(PILOTS))
    diffs = [vs_default(games, p) for p in [*present, *extra]]
    table = shares.join(pl.concat(diffs) if diffs else pl.DataFrame(
        schema={"deck": pl.String, "pilot": pl.String, "vs_default": pl.Float64,
                "vs_default_lo": pl.Float64, "vs_default_hi": pl.Float64,
                "vs_default_p": pl.Float64}), on=["deck", "pilot"], how="left")
    tuned_cols = {"vs_tuned": pl.Float64, "vs_tuned_lo": pl.Float64,
                  "vs_tuned_hi": pl.Float64, "vs_tuned_p": pl.Float64}
    vt = vs_pilot(games, SEARCH, "tuned")
    table = table.join(vt if vt.height else pl.DataFrame(
        schema={"deck": pl.String, "pilot": pl.String, **tuned_cols}),
        on=["deck", "pilot"], how="left")
    gap = skill_gap(table)
    decks = gap.sort(["gap", "deck"], descending=[True, False]).with_row_index(
        "rank", offset=1).select("deck", pl.col("rank").cast(pl.Int64))
    order = {p: k for k, p in enumerate([*PILOTS, *extra])}
    table = table.join(gap, on="deck").join(decks, on="deck").with_columns(
        pl.col("pilot").replace_strict(order, default=len(order)).alias("_o")
    ).sort("rank", "_o").drop("_o")
    if seed is not None:
        table = table.with_columns(pl.lit(seed, dtype=pl.UInt64).alias("seed"))
    return table


def measure(decks: Sequence[str | Path], games: int = DEFAULT_GAMES,
            seed: int = DEFAULT_SEED, **kw: Any) -> pl.DataFrame:
    """``play`` then ``skill_table``: the skill table of ``decks`` (keywords as ``play``)."""
    return skill_table(play(decks, games=games, seed=seed, **kw), seed=seed)


# ---------------------------------------------------------------------------- output


def _num(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def to_json(table: pl.DataFrame) -> dict[str, Any]:
    """The skill table as JSON-ready data: the decks in the table's order, each with its
    gap, best pilot and every pilot measured (win share and interval; the paired
    difference from the default pilot with its interval, null for the default)."""
    decks: dict[str, dict[str, Any]] = {}
    for r in table.iter_rows(named=True):
        d = decks.setdefault(r["deck"], {"deck": r["deck"], "rank": r["rank"],
                                         "gap": _num(r["gap"]), "best_pilot": r["best_pilot"],
                                         "pilots": {}})
        d["pilots"][r["pilot"]] = {
            "policy": r["policy"], "deals": r["deals"], "games": r["games"],
            "win_share": _num(r["win_share"]), "win_share_lo": _num(r["win_share_lo"]),
            "win_share_hi": _num(r["win_share_hi"]),
            "vs_default": _num(r["vs_default"]), "vs_default_lo": _num(r["vs_default_lo"]),
            "vs_default_hi": _num(r["vs_default_hi"]), "vs_default_p": _num(r["vs_default_p"]),
            "seconds": _num(r.get("seconds")),
        }
        if r["pilot"] == SEARCH:
            for k in ("vs_tuned", "vs_tuned_lo", "vs_tuned_hi", "vs_tuned_p"):
                d["pilots"][r["pilot"]][k] = _num(r.get(k))
    seed = table["seed"][0] if "seed" in table.columns and len(table) else None
    return {"pilots": [p for p in PILOTS if p in set(table["pilot"])],
            "reference": REFERENCE, "seed": seed,
            "deals_per_opponent": int(table["deals"].max()) if len(table) else 0,
            "games": int(table["games"].sum()) if len(table) else 0,
            "order": "decks by the default pilot's gap to the best pilot measured, largest "
                     "first (ties by name)",
            "decks": list(decks.values())}


def display_rows(table: pl.DataFrame) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the skill table as text, one row per deck: the default pilot's
    policy, each pilot's win share, each other pilot's paired difference from the default
    ("Δ") with its 95% interval, the gap. Columns for the pilots present only."""
    from rnr_sim.display import EMPTY, interval, pct, pp

    present = [p for p in PILOTS if p in set(table["pilot"])]
    header = ["Deck", "Default policy"]
    for p in present:
        header.append(p)
        if p != REFERENCE:
            header.append(f"{p} Δ [95%]")
    both = SEARCH in present and "tuned" in present
    if both:
        header.append("search − tuned [95%]")
    timed = "seconds" in table.columns and table["seconds"].null_count() < table.height
    header.append("Gap")
    if timed:
        header += ["Games", "Time"]
    rows = []
    for (deck,), g in table.group_by("deck", maintain_order=True):
        by = {r["pilot"]: r for r in g.iter_rows(named=True)}
        row = [str(deck), str(by[REFERENCE]["policy"]) if REFERENCE in by else EMPTY]
        for p in present:
            r = by.get(p)
            row.append(EMPTY if r is None else pct(r["win_share"]))
            if p != REFERENCE:
                row.append(EMPTY if r is None else
                           f"{pp(r['vs_default'])} "
                           f"{interval(r['vs_default_lo'], r['vs_default_hi'], signed=True)}")
        if both:
            r = by.get(SEARCH)
            row.append(EMPTY if r is None or r.get("vs_tuned") is None else
                       f"{pp(r['vs_tuned'])} "
                       f"{interval(r['vs_tuned_lo'], r['vs_tuned_hi'], signed=True)}")
        row.append(pp(g["gap"][0]))
        if timed:
            row += [f"{int(g['games'].sum()):,}", f"{float(g['seconds'].fill_null(0).sum()):.1f} s"]
        rows.append(row)
    return header, rows


def text_lines(table: pl.DataFrame) -> list[str]:
    """The skill table as plain-text lines (``display.format_table``) with a caption."""
    from rnr_sim.display import count, format_table

    header, rows = display_rows(table)
    right = set(range(2, len(header)))
    deals = int(table["deals"].max()) if len(table) else 0
    lines = format_table(header, rows, right)
    return [*lines, "", *textwrap.wrap(caption(table) + f" {count(deals)} deals per opponent.",
                                       width=92)]


def caption(table: pl.DataFrame) -> str:
    """What the skill table shows, in words (the text table's and the report's note)."""
    note = ("Win share against the field (a draw counts half), both seat orders, the same "
            "deals for every pilot of a deck. Δ: the pilot minus the default pilot, paired "
            "by deal, with its 95% interval. Gap: the best pilot's win share minus the "
            "default's. Decks by gap, largest first (ties by name).")
    if SEARCH in set(table["pilot"]):
        note += (" search: the search pilot (each Play Phase decision weighed by playing the "
                 "game out, K rollouts x N determinizations of the hidden cards per option, "
                 "the deck's own pilot as rollout pilot); search − tuned pairs it with the "
                 "tuned pilot. Time: the wall time of the deck's games.")
    if "tuned" not in set(table["pilot"]):
        note += (" No deck has a tuned pilot: give a deck a policy file as its Policy: "
                 "header, or --tuned DECK=FILE.")
    return note


def write(table: pl.DataFrame, out_dir: str | Path) -> Path:
    """Write ``skill.parquet`` into ``out_dir`` (created if missing; an existing run dir is
    fine) atomically: a temporary name, then a rename. Returns the file's path."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: not a folder; give a run dir or a new folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--out {out}: cannot create ({e.strerror or e})") from None
    path = out / FILE
    tmp = out / f".{FILE}.tmp"
    try:
        table.write_parquet(tmp, compression="zstd")
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write ({e.strerror or e})") from None
    return path


def read(run_dir: str | Path) -> pl.DataFrame | None:
    """The skill table stored in ``run_dir`` (``rnr-sim skill --out``), or None."""
    path = Path(run_dir) / FILE
    if not path.is_file():
        return None
    try:
        return pl.read_parquet(path)
    except Exception as e:  # a broken file is bad input, not a crash
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"{path}: cannot read ({first}); rerun rnr-sim skill --out "
                         f"{run_dir}") from None
