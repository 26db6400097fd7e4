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
- ``search`` (with ``rollouts`` > 0): the search pilot (``engine/search.py``), Monte-Carlo
  over each Play Phase decision with the deck's own pilot (tuned, else default) as its
  rollout pilot and prior (its pick kept unless an option beats it by the gate), the
  opponents' lists hidden unless ``open_lists`` (R59): the yardstick of how good the
  heuristic pilots are.

``PILOTS`` is the column order.

The metrics (each a small polars function below): a pilot's win share against the field
(a draw counts half) with its 95% interval, and its paired difference from the default
pilot with a 95% interval; both take the deal against one opponent (both seat orders) as
the unit, the opponents as strata (``analytics.stats``: ``ratio_by_deal``,
``lincomb_by_deal``). The decks are sorted by the default pilot's gap to the best pilot
measured, largest first (ties by name): a deck whose best pilot beats its default by a lot
was judged on a pilot that undersells it.

The games: a fixed sequence of engine calls (``engine_calls``), each played by the
evaluation service (``rnr_sim.runs.evaluation``: one ``Evaluator``, the call's pilots the
subjects, the other decks with their own pilots the field). Checkpoints
(``play(out=DIR)``): the service's ``BatchStore`` in ``DIR/.skill/`` keeps each call's
outcome as ``part-call-NNNNN.parquet`` (NNNNN: the call's place in the sequence) beside
``plan.json``, the fingerprint of everything that shapes the games (``fingerprint``).
Ctrl-C stops after the games under way (a second one at once) and raises ``Stopped``;
``play(out=DIR, resume=True)`` reads the stored calls back, plays the others and returns
every game: the same frame as a run done in one go (a stored call keeps its wall time).
The command removes ``DIR/.skill/`` (``checkpoint(DIR).remove()``) once the table is
written.
"""

from __future__ import annotations

import hashlib
import math
import os
import shlex
import sys
import textwrap
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim.analytics.stats import lincomb_by_deal, ratio_by_deal
from rnr_sim.errors import InputError
from rnr_sim.runs.evaluation import BatchStore, Evaluator, Matchups, Outcome, Pool
from rnr_sim.runs.execution import Progress

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
PLAN = BatchStore.PLAN

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
    #: the search budget row (``layout.B_*``: rollouts, determinizations, gate, open lists);
    #: all 0: no search
    search: tuple[int, ...] = (0, 0, 0, 0)


# ---------------------------------------------------------------------------- the pilots


def _file_base(path: str) -> str:
    """The ``base`` built-in of a policy file already checked by ``load_policy``."""
    from rnr_sim.pilots import DEFAULT_BASE

    with open(path, "rb") as f:
        head = tomllib.load(f).get("policy", {})
    return head.get("base", DEFAULT_BASE) if isinstance(head, dict) else DEFAULT_BASE


def deck_pilots(ref: str, tuned: str | None = None,
                search: tuple[int, ...] = (0, 0, 0, 0)) -> list[DeckPilot]:
    """The pilots of a deck whose policy reference (``planning.plan_run``'s resolved
    ``Policy:``: a built-in name or a file's absolute path) is ``ref``; ``tuned`` (a policy
    file path) replaces the header's file as the tuned pilot; ``search`` (a budget row,
    ``search_budget``) adds the search pilot when rollouts > 0, its rollout pilot and
    prior the tuned pilot if any, else the default. In ``PILOTS`` order."""
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
        row = tuple(int(x) for x in search_budget(*search[:2], *search[2:]))
        lists = "open lists" if row[3] else "hidden lists"
        out.append(DeckPilot(SEARCH, f"search K={row[0]} N={row[1]} z={row[2] / 100:g} "
                                     f"{lists} ({base.policy})",
                             base.weights, base.source, row))
    return out


#: ``rnr-sim skill --search``'s budget: K rollouts per option and determinization, N
#: determinizations (docs/benchmarks.md, 2026-12-03: strength against cost).
SEARCH_DEFAULT = (8, 2)


def search_budget(rollouts: int, determinizations: int, gate: int | None = None,
                  open_lists: int = 0) -> tuple[int, int, int, int]:
    """A search pilot's budget row (``layout.B_*``): ``rollouts`` (K) per option and
    determinization, ``determinizations`` (N), the gate (z x 100, ``layout.DEFAULT_GATE``
    when None; 0: the best mean) and whether the opponents' lists are open (R59)."""
    from rnr_sim.engine.layout import DEFAULT_GATE

    return (int(rollouts), int(determinizations),
            DEFAULT_GATE if gate is None else int(gate), 1 if open_lists else 0)


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
         resume: bool = False, gate: int | None = None,
         open_lists: bool = False) -> pl.DataFrame:
    """Every game of the measurement, one row each (``TIMED_SCHEMA``): each deck with each
    of its pilots against every other deck (their own pilots), ``games`` deals per
    opponent, both seat orders. The pilots of one deck play the same deals: deck i against
    deck j is engine table ``i * n + j`` for all of i's pilots. ``on_plan`` gets the total
    game count before play and the games taken from a checkpoint (``on_plan(total,
    resumed)``); ``progress`` the games as they are played. ``out``: checkpoint each
    engine call into ``out/.skill/`` (module docstring; Ctrl-C raises ``Stopped``;
    without ``out``, ``KeyboardInterrupt``); ``resume``: continue the stopped run
    checkpointed there. ``backend`` / ``address``: where the games are played
    (``--backend ray``: each engine call's games cut into chunks played as Ray tasks; each
    game depends only on its own inputs, so the frame is the same). ``rollouts`` > 0 adds
    the search pilot (``rollouts`` per action and determinization, ``determinizations``,
    ``gate``: z x 100 of its gate, None the default; ``open_lists``: it knows the
    opponents' true lists, R59); its games are played in engine calls of their own, and
    the frame's ``seconds`` column is each call's wall time shared by its games."""
    from rnr_sim.runs import planning
    from rnr_sim.runs.execution import open_backend

    if out is None and resume:
        raise InputError("--resume continues a skill run stopped with --out DIR: give "
                         "that --out DIR")
    if out is not None:
        _check_out(Path(out), resume)
    if len(decks) < 2:
        raise InputError("skill needs at least 2 decks: each deck plays the others, e.g. "
                         "rnr-sim skill decks/*.txt")
    paths = [Path(p) for p in decks]
    if len({p.resolve() for p in paths}) != len(paths):
        raise InputError("a deck list is given twice; give each deck once")
    if isinstance(games, bool) or not isinstance(games, int) or games < 2:
        raise InputError(f"--games must be a whole number of deals per opponent, at least 2 "
                         f"(an interval needs two deals), not {games!r}")
    options = planning.RunOptions(decks=paths, games=games, seed=seed, cards=cards,
                                rules=rules, threads=threads)
    plan = planning.plan_run(options)
    names = plan.deck_names
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"two decks are named '{dup[0]}'; give one a Name: header")
    for name, v, lo in (("--rollouts", rollouts, 0), ("--determinizations",
                                                       determinizations, 1),
                        ("--gate", 0 if gate is None else gate, 0)):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= 4096:
            raise InputError(f"{name} must be a whole number from {lo} to 4096, not {v!r}")
    overrides = parse_tuned(tuned, plan.decks)
    budget = search_budget(rollouts, determinizations, gate, open_lists)
    pilots = [deck_pilots(ref, overrides.get(i), budget) for i, ref in enumerate(plan.policies)]
    where = open_backend(backend, address, threads)  # a bad --backend: before any play
    driver = planning.engine_driver()
    plan.compile(driver)
    calls = engine_calls(pilots, games, len(plan.decks))
    total = sum(c.games for c in calls)
    store = None
    if out is not None:
        store = checkpoint(out)
        store.open(fingerprint(plan, pilots, overrides, games, budget, len(calls)), resume)
    if on_plan is not None:
        on_plan(total, _kept(store, calls))
    with where:
        frames = _play(plan, pilots, driver, calls, where.threads,
                       None if backend == "local" else where, store, progress)
    if len(frames) < len(calls):
        if store is None:
            raise KeyboardInterrupt
        raise Stopped(_kept(store, calls), total, Path(out))
    return pl.concat(frames, how="vertical")


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

    @property
    def key(self) -> str:
        """Its part's key in the checkpoint (``BatchStore``)."""
        return f"call-{self.index:05d}"


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


def _kept(store: BatchStore | None, calls: Sequence[Call]) -> int:
    """The games of ``calls`` already in ``store``."""
    return 0 if store is None else sum(c.games for c in calls if store.has(c.key))


def _play(plan, pilots: list[list[DeckPilot]], driver, calls: Sequence[Call],
          threads: int | None, backend, store: BatchStore | None,
          progress: Callable[[int], None] | None) -> list[pl.DataFrame]:
    """The frames of ``calls``, in turn, through one evaluator on ``backend`` (None: here)
    with ``store`` (each call a part; a stored one read back, not played, nor counted on
    ``progress``), until Ctrl-C stops it: fewer frames than calls."""
    frames: list[pl.DataFrame] = []
    try:
        with Evaluator(driver, backend=backend, threads=threads, store=store,
                       progress=_Counted(progress), count_stored=False) as ev:
            for call in calls:
                group = [pilots[call.deck][k] for k in call.pilots]
                games = _matchups(plan, call)
                outcome = ev.play(_pool(plan, group), games, plan.seed, key=call.key)
                if outcome is None:
                    break
                frames.append(_call_frame(plan, group, call, games, outcome))
    except KeyboardInterrupt:
        pass  # a second Ctrl-C between calls: the calls played are kept all the same
    return frames


def _matchups(plan, call: Call) -> Matchups:
    """The games of ``call``: its pilots (policy rows 0..k-1) against every other deck
    (their own pilots, the plan's rows after), engine table ``i * n + j``."""
    n, i, k = len(plan.decks), call.deck, len(call.pilots)
    field = np.array([j for j in range(n) if j != i], dtype=np.int64)
    return Matchups(subject_deck=np.full(k, i), subject_policy=np.arange(k),
                    field_deck=field, field_policy=k + plan.deck_policy[field],
                    field_table=i * n + field, first_deal=call.start, deals=call.deals)


def _pool(plan, group: list[DeckPilot]) -> Pool:
    """The engine's arrays of a call: ``group`` 's weights, then the plan's policy rows;
    the search budgets when ``group`` is the search pilot."""
    rows = np.vstack([np.stack([p.weights for p in group]), plan.policy_table])
    budget = np.zeros((len(rows), len(group[0].search)), dtype=np.int64)
    budget[: len(group)] = [p.search for p in group]
    return Pool.of_plan(plan, rows, budget if budget.any() else None)


def _call_frame(plan, group: list[DeckPilot], call: Call, games: Matchups,
                outcome: Outcome) -> pl.DataFrame:
    """The games of one engine call (``TIMED_SCHEMA``), in ``Matchups`` order."""
    names = plan.deck_names
    inputs = games.inputs()
    pilot, field = (a.ravel() for a in np.indices(games.shape)[:2])
    n = games.games
    return pl.DataFrame({
        "deck": np.full(n, names[call.deck], dtype=object),
        "pilot": np.array([group[k].pilot for k in pilot], dtype=object),
        "policy": np.array([group[k].policy for k in pilot], dtype=object),
        "opponent": np.array([names[j] for j in games.field_deck[field]], dtype=object),
        "table_id": inputs.table_id, "deal": inputs.deal,
        "first_seat": inputs.first_seat, "score": outcome.score.ravel(),
        "seconds": np.full(n, (outcome.seconds or 0.0) / max(1, n)),
    }, schema=TIMED_SCHEMA)


class _Counted(Progress):
    """The evaluator's progress told to ``play``'s ``progress`` callback (the caller's
    bar); its notes (Ctrl-C) written above that bar."""

    def __init__(self, count: Callable[[int], None] | None):
        super().__init__(show=False, log=_above_the_bar)
        self.count = count

    def update(self, games: int) -> None:
        if self.count is not None:
            self.count(games)


def _above_the_bar(message: str) -> None:
    from tqdm import tqdm

    tqdm.write(message, file=sys.stderr)


# ---------------------------------------------------------------------------- checkpoints


class Stopped(Exception):
    """A checkpointed ``play`` stopped by Ctrl-C: ``kept`` of ``total`` games are in
    ``out/.skill/``; ``play(..., out=out, resume=True)`` plays the rest."""

    def __init__(self, kept: int, total: int, out: Path):
        super().__init__(f"stopped: {kept:,} of {total:,} games kept in {out}")
        self.kept, self.total, self.out = kept, total, out


def checkpoint(out: str | Path) -> BatchStore:
    """The checkpoint store of a run given ``--out out``: ``out/.skill/``."""
    return BatchStore(Path(out) / CHECKPOINT)


def _check_out(out: Path, resume: bool) -> None:
    """Before anything is loaded: ``--resume`` needs a checkpoint in ``out``, a new run
    none."""
    root, plan = out / CHECKPOINT, out / CHECKPOINT / PLAN
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: not a folder; give a run dir or a new folder")
    if resume and root.is_dir() and not plan.is_file():
        raise InputError(f"--resume: {root} has no {PLAN} (cut short as it started); "
                         f"delete {root} and start again without --resume")
    if resume and not plan.is_file() and (out / FILE).is_file():
        raise InputError(f"--resume {out}: its skill run is complete ({FILE}); "
                         "nothing to resume")
    if resume and not plan.is_file():
        raise InputError(f"--resume: {root} holds no stopped skill run; drop --resume to "
                         f"start one with --out {shlex.quote(str(out))}")
    if not resume and root.exists():
        raise InputError(f"--out {out}: holds a stopped skill run ({root}); add --resume to "
                         f"continue it, or delete {root} to start over")


def _weights_sha256(weights: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(weights, dtype=np.float64).tobytes()).hexdigest()


def fingerprint(plan, pilots: list[list[DeckPilot]], overrides: dict[int, str], games: int,
                budget: tuple[int, ...], calls: int) -> dict[str, Any]:
    """Everything that shapes a skill run's games, as JSON-ready data (the ``plan.json``
    of its checkpoint), each entry named in the user's words so that a resume refused
    reads as a sentence (``evaluation.first_difference``: "the stopped run had --seed 7,
    now 8"), in the order a resume compares them: the rnr-sim version, the deck lists
    (absolute paths, then each file's SHA-256), ``--games``, ``--seed``, ``--rollouts``,
    ``--determinizations``, ``--gate``, ``--open-lists``, ``--tuned``, every policy file's SHA-256, the card catalog
    files and the rules file (path, SHA-256) and its switches, each deck's pilots and the
    field's policy rows (SHA-256 of the weights: a changed built-in), and the engine
    calls' cut. Not threads, backend or address: they do not change a game."""
    from rnr_sim import __version__
    from rnr_sim.pilots import is_policy_file
    from rnr_sim.runs.manifests import catalog_sources, file_sha256

    decks = [str(Path(d.path).resolve()) for d in plan.decks]
    policy_files = sorted({*(r for r in plan.policies if is_policy_file(r)),
                           *overrides.values()})
    sources = catalog_sources(plan.catalog)
    rules = plan.profile.source
    rules = None if rules is None else str(Path(rules).resolve())
    return {
        "rnr-sim": __version__,
        "the deck lists": decks,
        **{f"the deck list {p}": d.sha256 for p, d in zip(decks, plan.decks, strict=True)},
        "--games": games,
        "--seed": plan.seed,
        "--rollouts": budget[0],
        "--determinizations": budget[1],
        "--gate": budget[2],
        "--open-lists": bool(budget[3]),
        "--tuned": [[plan.deck_names[i], path] for i, path in sorted(overrides.items())],
        **{f"the policy file {p}": file_sha256(p) for p in policy_files},
        "--cards": [s["path"] for s in sources],
        **{f"the card file {s['path']}": s["sha256"] for s in sources},
        "--rules": rules,
        **({} if rules is None else {f"the rules file {rules}": file_sha256(rules)}),
        "the rules switches": plan.profile.to_dict()["switches"],
        "the pilots": [[[p.pilot, p.policy, _weights_sha256(p.weights), list(p.search)]
                        for p in mine] for mine in pilots],
        "the field's pilots": [plan.policy_names, _weights_sha256(plan.policy_table)],
        "the engine calls": [calls, DEALS_PER_CALL],
    }


# ---------------------------------------------------------------------------- the metrics


def against(games: pl.DataFrame, weights: dict[str, float] | None) -> pl.DataFrame:
    """The games weighed by a field (``--field-weights``, ``analytics.field``): each row's
    ``_w`` is its opponent's weight; the games against decks the field leaves out are
    dropped. Without ``weights`` every opponent weighs 1 (the field as played)."""
    if weights is None:
        return games.with_columns(pl.lit(1.0).alias("_w"))
    return games.filter(pl.col("opponent").is_in(list(weights))).with_columns(
        pl.col("opponent").replace_strict(weights, return_dtype=pl.Float64).alias("_w"))


def win_shares(games: pl.DataFrame, weights: dict[str, float] | None = None) -> pl.DataFrame:
    """Per (deck, pilot): ``win_share`` = Σ w score / Σ w (a win 1, a draw 1/2, a loss 0)
    against the field, w each game's opponent's weight (``against``: 1, every opponent's
    games counted alike, or a ``--field-weights`` field's, over the field decks the deck
    met: each opponent plays the same deals, so this is Σ_j w_j r_j over them, scaled to
    sum to 1), with its 95% interval ``win_share_lo``/``_hi`` (``ratio_by_deal``: the deal
    against one opponent, both seat orders, is the unit; opponents are strata);
    ``deals`` (per opponent), ``games``."""
    games = against(games, weights)
    w = pl.col("_w")
    shares = ratio_by_deal(games, pl.col("score") * w, w, by=["deck", "pilot"],
                           name="win_share").collect()
    # the wall time of the deck's games; against a weighted field, none: its rows are some of
    # the games only, and their time is not the table's
    secs = (pl.col("seconds").sum() if "seconds" in games.columns and weights is None
            else pl.lit(None, pl.Float64))
    counts = games.group_by("deck", "pilot").agg(
        pl.col("policy").first(), pl.col("deal").n_unique().cast(pl.Int64).alias("deals"),
        pl.len().cast(pl.Int64).alias("games"), secs.cast(pl.Float64).alias("seconds"))
    return counts.join(shares, on=["deck", "pilot"]).select(
        "deck", "pilot", "policy", "deals", "games", "win_share", "win_share_lo",
        "win_share_hi", "seconds")


def vs_pilot(games: pl.DataFrame, pilot: str, ref: str,
             weights: dict[str, float] | None = None) -> pl.DataFrame:
    """Per deck that has both: ``vs_<ref>`` = win share with ``pilot`` − win share with
    ``ref`` (``win_shares``, weighed alike), paired deal by deal as ``vs_default`` (its
    95% interval ``_lo``/``_hi`` and two-sided ``_p``)."""
    games = against(games, weights)
    have = (games.filter(pl.col("pilot") == pilot).select("deck").unique()
            .join(games.filter(pl.col("pilot") == ref).select("deck").unique(), on="deck"))
    rows = games.join(have, on="deck", how="semi").filter(pl.col("pilot").is_in([pilot, ref]))
    is_p = (pl.col("pilot") == pilot).cast(pl.Float64) * pl.col("_w")
    is_r = (pl.col("pilot") == ref).cast(pl.Float64) * pl.col("_w")
    name = f"vs_{ref}"
    out = lincomb_by_deal(rows, [(pl.col("score") * is_p, is_p, 1.0),
                                 (pl.col("score") * is_r, is_r, -1.0)],
                          by=["deck"], name=name)
    return out.select("deck", pl.lit(pilot).alias("pilot"), name, f"{name}_lo",
                      f"{name}_hi", f"{name}_p")


def vs_default(games: pl.DataFrame, pilot: str,
               weights: dict[str, float] | None = None) -> pl.DataFrame:
    """Per deck that has ``pilot``: ``vs_default`` = win share with ``pilot`` − win share
    with the default pilot, on the same deals; its 95% interval ``vs_default_lo``/``_hi``
    and two-sided ``vs_default_p`` pair the two pilots deal by deal (``lincomb_by_deal``:
    the per-deal difference of the linearised shares, opponents as strata): ``vs_pilot``
    against ``REFERENCE``."""
    return vs_pilot(games, pilot, REFERENCE, weights)


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


def skill_table(games: pl.DataFrame, seed: int | None = None,
                weights: dict[str, float] | None = None) -> pl.DataFrame:
    """The skill table: one row per (deck, pilot), ``win_shares`` with each non-default
    pilot's ``vs_default`` (null on the default row, the reference) and the deck's
    ``skill_gap``; decks by gap, largest first (ties by name), pilots in ``PILOTS`` order;
    ``rank`` is the deck's place. ``seed`` is recorded when given; ``weights``: against a
    weighted field (``against``) instead of the field as played."""
    shares = win_shares(games, weights)
    present = [p for p in PILOTS if p != REFERENCE and p in set(shares["pilot"])]
    extra = sorted(set(shares["pilot"]) - set(PILOTS))
    diffs = [vs_default(games, p, weights) for p in [*present, *extra]]
    table = shares.join(pl.concat(diffs) if diffs else pl.DataFrame(
        schema={"deck": pl.String, "pilot": pl.String, "vs_default": pl.Float64,
                "vs_default_lo": pl.Float64, "vs_default_hi": pl.Float64,
                "vs_default_p": pl.Float64}), on=["deck", "pilot"], how="left")
    tuned_cols = {"vs_tuned": pl.Float64, "vs_tuned_lo": pl.Float64,
                  "vs_tuned_hi": pl.Float64, "vs_tuned_p": pl.Float64}
    vt = vs_pilot(games, SEARCH, "tuned", weights)
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
                 "the deck's own pilot as rollout pilot and kept unless an option beats its "
                 "pick by z standard errors; hidden lists: the opponents' hidden cards dealt "
                 "from what it has seen and the decks given, R59); search − tuned pairs it "
                 "with the tuned pilot. Time: the wall time of the deck's games.")
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
