"""The yardstick check: does a verdict hold with a stronger pilot in every seat? (issue 40)

A verdict of the tool (a deck wins more than its fair share, a card is seen in won games
more than in lost ones, an elite beats the field, a patch lowers a deck's win rate) is
measured with heuristic pilots. The check plays a subsample of the **same deals** again
with the search pilot (``engine/search.py``; ``evaluation.Pool.with_yardstick``: every
seat a search pilot at the default budget, its own pilot the rollout pilot and prior,
hidden lists, R59), and pairs the two deal by deal:

- ``change``: the figure with the yardstick minus the figure with the heuristic pilots,
  on the subsample's deals, paired (the deal is the unit; the tables, or field decks, are
  strata: ``stats.paired_gain``; for a card's adjusted IWD its Mantel-Haenszel estimate
  linearised per deal, ``iwd_by_deal``);
- ``value``: the yardstick's figure, the verdict's figure (every deal it was measured on)
  moved by that change: ``value = verdict + change``, with the 95% interval of
  ``sqrt(se_verdict² + se_change²)``. The subsample is part of the verdict's deals, and
  the two errors covary negatively (a deal the heuristics won by luck tends to lose
  some of it to the yardstick), so the sum of the variances is on the safe side. This
  uses every deal the verdict played, not only the subsample's: with a few hundred
  search games the change is the uncertain part, and it is smaller than the figure's
  own spread because the paired games share their shuffles.

**Holds** (``holds``): the verdict says its figure is above (or below) a fair value (a
deck's 1 / players, an IWD's 0, an elite's 50%, a patch's no change). With a stronger
pilot in every seat it

- holds (``yes``) when the yardstick's 95% interval lies wholly on the verdict's side of
  the fair value;
- flips (``no``) when that interval lies wholly on the other side;
- is ``not settled`` otherwise: the subsample cannot tell (more deals can).

A verdict that flips is said first, in plain words (``check_lines``).

Where it runs: ``rnr-sim run --yardstick DEALS`` plays deals ``0 .. DEALS - 1`` of every
table of a finished two-player run with the yardstick into ``yardstick.parquet`` in the
run dir (``play_run``), and ``rnr-sim report`` checks its verdict's decks and cards on them
(``run_checks``); ``rnr-sim discover --yardstick DEALS`` re-measures its best elites
(``check_elites``); ``check_patch`` is balance's: a patch's change of every deck's win
rate, heuristic and yardstick, on the same deals.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rnr_sim.analytics.stats import Z95, paired_gain
from rnr_sim.errors import InputError
from rnr_sim.runs.inputs import GameInputs

#: The run dir's file of yardstick games (seat rows with their game's fields).
FILE = "yardstick.parquet"
#: Search games per engine call of ``play_run`` (a chunk: the bar's step, Ctrl-C's wait).
CHUNK = 64
#: The significant cards of a run's verdict checked, best score first.
CARDS_CHECKED = 3
#: The best elites of a discovery re-measured with the yardstick.
ELITES_CHECKED = 3
#: Kinds whose figure is a difference (in points, fair 0) rather than a share.
DIFFERENCES = ("card", "patch")
#: What ``holds`` answers.
YES, NO, UNSETTLED = "yes", "no", "not settled"

CHECK_SCHEMA = {
    "kind": pl.String, "subject": pl.String, "figure": pl.String, "fair": pl.Float64,
    "claim": pl.String, "verdict": pl.Float64, "verdict_lo": pl.Float64,
    "verdict_hi": pl.Float64, "heuristic": pl.Float64, "yardstick": pl.Float64,
    "change": pl.Float64, "change_lo": pl.Float64, "change_hi": pl.Float64,
    "value": pl.Float64, "value_lo": pl.Float64, "value_hi": pl.Float64,
    "deals": pl.Int64, "games": pl.Int64, "holds": pl.String,
}
#: The stored games: one row per seat, with its game's fields (``schema`` names).
GAME_COLUMNS = ("game_id", "table_id", "deal", "n_players", "first_seat", "winner_seat",
                "path", "turns")
SEAT_COLUMNS = ("game_id", "seat", "deck", "policy", "won", "opening_mask", "drawn_mask",
                "played_mask")


# ---------------------------------------------------------------------------- the figures
@dataclass(frozen=True)
class Check:
    """One verdict checked with the yardstick (module docstring): the verdict's figure
    (``verdict`` with its 95% interval, heuristic pilots, every deal), the same figure on
    the subsample with the heuristic pilots (``heuristic``) and with the yardstick
    (``yardstick``), their paired ``change``, the yardstick's figure ``value`` (verdict +
    change) with its interval, the subsample's ``deals`` (units) and yardstick ``games``,
    and whether the verdict ``holds`` (``YES``, ``NO``: it flips, ``UNSETTLED``)."""

    kind: str  # deck | card | elite | patch
    subject: str
    figure: str  # the statistic in words: "win rate against the field", ...
    fair: float
    claim: str  # "above" | "below": the verdict's side of ``fair``
    verdict: float
    verdict_lo: float
    verdict_hi: float
    heuristic: float
    yardstick: float
    change: float
    change_lo: float
    change_hi: float
    value: float
    value_lo: float
    value_hi: float
    deals: int
    games: int
    holds: str


def holds(claim: str, fair: float, lo: float, hi: float) -> str:
    """``YES`` when [lo, hi] lies wholly on the ``claim`` side (``above`` / ``below``) of
    ``fair``, ``NO`` when wholly on the other side (the verdict flips), else
    ``UNSETTLED`` (also for a missing interval)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return UNSETTLED
    above, below = lo > fair, hi < fair
    if claim == "above":
        return YES if above else NO if below else UNSETTLED
    return YES if below else NO if above else UNSETTLED


def make_check(kind: str, subject: str, figure: str, fair: float, verdict: float,
               verdict_se: float, heuristic: float, yardstick: float, change_se: float,
               deals: int, games: int, verdict_ci: tuple[float, float] | None = None
               ) -> Check:
    """A ``Check`` from the verdict's figure and standard error (every deal; its 95%
    interval ``verdict_ci`` as the verdict states it, default ± 1.96 se), the figure on the
    subsample with each pilot, and the paired change's standard error; the claim is the
    verdict's side of ``fair``. A share's interval is kept within [0, 1], a difference's
    within [-1, 1]."""
    change = yardstick - heuristic
    se = math.sqrt(max(verdict_se, 0.0) ** 2 + max(change_se, 0.0) ** 2)
    value = verdict + change
    claim = "above" if verdict > fair else "below"
    floor = -1.0 if kind in DIFFERENCES else 0.0
    lo, hi = max(floor, value - Z95 * se), min(1.0, value + Z95 * se)
    v_lo, v_hi = verdict_ci or (verdict - Z95 * verdict_se, verdict + Z95 * verdict_se)
    return Check(kind, subject, figure, fair, claim, verdict, v_lo, v_hi, heuristic,
                 yardstick, change, max(-1.0, change - Z95 * change_se),
                 min(1.0, change + Z95 * change_se), value, lo, hi, deals, games,
                 holds(claim, fair, lo, hi))


def paired_check(kind: str, subject: str, figure: str, fair: float, verdict: float,
                 verdict_se: float, heuristic: np.ndarray, yardstick: np.ndarray,
                 weights: np.ndarray | None = None, games: int = 0,
                 verdict_ci: tuple[float, float] | None = None) -> Check:
    """``make_check`` from per-deal figures on the subsample (float[strata, deals], the
    strata weighted by ``weights``, default equal): each pilot's figure is the weighted
    mean of its strata's means, the change's standard error ``stats.paired_gain``'s of
    ``yardstick - heuristic`` (the deal is the unit)."""
    h = np.asarray(heuristic, dtype=np.float64)
    y = np.asarray(yardstick, dtype=np.float64)
    w = np.ones(h.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    _, se = paired_gain(y - h, w)
    mean_h = float(h.mean(axis=-1) @ (w / w.sum()))
    mean_y = float(y.mean(axis=-1) @ (w / w.sum()))
    return make_check(kind, subject, figure, fair, verdict, verdict_se, mean_h, mean_y,
                      float(se), int(h.size), games, verdict_ci)


def frame(checks: Sequence[Check]) -> pl.DataFrame:
    """The checks as a table (``CHECK_SCHEMA``), in the order given."""
    return pl.DataFrame([asdict(c) for c in checks], schema=CHECK_SCHEMA)


def from_frame(table: pl.DataFrame) -> list[Check]:
    return [Check(**{k: r[k] for k in CHECK_SCHEMA}) for r in table.iter_rows(named=True)]


# ---------------------------------------------------------------------------- the words
def _span(v: float, lo: float, hi: float, kind: str) -> str:
    if kind in DIFFERENCES:
        return f"{100 * v:+.1f} pp [{100 * lo:+.1f}, {100 * hi:+.1f}]"
    return f"{100 * v:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def _fair(c: Check) -> str:
    return "0" if c.kind in DIFFERENCES else f"a fair {100 * c.fair:g}%"


def check_line(c: Check) -> str:
    """One check in a designer's words: the subject and the answer first, then the
    figures."""
    with_h = _span(c.verdict, c.verdict_lo, c.verdict_hi, c.kind)
    with_y = _span(c.value, c.value_lo, c.value_hi, c.kind)
    moved = (f"the stronger pilot moves it by {100 * c.change:+.1f} pp "
             f"[{100 * c.change_lo:+.1f}, {100 * c.change_hi:+.1f}] on the same {c.deals:,} "
             f"deals, {c.games:,} search games")
    other = "below" if c.claim == "above" else "above"
    if c.holds == NO:
        return (f"{c.subject}: FLIPS with a stronger pilot in every seat. Its {c.figure} is "
                f"{c.claim} {_fair(c)} with the heuristic pilots ({with_h}) but {other} it "
                f"with the search pilot in every seat ({with_y}; {moved}).")
    answer = "yes" if c.holds == YES else f"not settled on {c.deals:,} deals"
    return (f"{c.subject}: {c.figure} {c.claim} {_fair(c)} ({with_h}). Holds with a "
            f"stronger pilot in every seat: {answer}. With the yardstick: {with_y} "
            f"({moved}).")


def check_lines(checks: Sequence[Check]) -> list[str]:
    """The checks' lines, those that flip first, then the others in their given order."""
    return [check_line(c) for c in sorted(checks, key=lambda c: c.holds != NO)]


def summary_sentence(checks: Sequence[Check]) -> str:
    """One sentence a designer reads first: which verdicts flip, or that all hold."""
    flips = [c.subject for c in checks if c.holds == NO]
    open_ = [c.subject for c in checks if c.holds == UNSETTLED]
    if flips:
        return (f"With a stronger pilot in every seat the verdict on {_join(flips)} "
                f"flips: do not act on {'it' if len(flips) == 1 else 'them'} before "
                "reading the lines below.")
    if open_:
        return (f"With a stronger pilot in every seat no verdict flips; "
                f"{_join(open_)} {'is' if len(open_) == 1 else 'are'} not settled on "
                "this subsample.")
    return "With a stronger pilot in every seat every verdict checked holds."


def _join(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


# ---------------------------------------------------------------------------- card IWD
def iwd_by_deal(units: pl.DataFrame, masks: dict[str, int]
                ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray] | None:
    """A card's adjusted IWD (``cards.adjusted_iwd``: Mantel-Haenszel risk difference of
    seen against not seen, strata of one deck, player count, turn order and game-length
    band, ``cards.turn_bands`` within each of those groups) on ``units`` (``cards.seat_units``
    rows of the decks in ``masks``: deck -> the card's slot mask), with its per-deal
    linearisation: (estimate, unit ids, z per unit, table id per unit), the units sorted;
    ``units.table_se(z, table)`` is its standard error. None where no stratum holds both
    seen and not seen rows."""
    from rnr_sim.analytics.cards import iwd_by_unit

    rows = units.filter(pl.col("deck").is_in(list(masks))).sort("unit", maintain_order=True)
    if rows.height == 0:
        return None
    deck = rows["deck"].to_numpy()
    card_mask = np.array([masks[d] for d in deck], dtype=np.uint64)
    x = (rows["seen"].to_numpy().astype(np.uint64) & card_mask) != 0
    y = rows["won"].to_numpy().astype(np.float64)
    group = pl.DataFrame({"deck": deck, "p": rows["n_players"], "o": rows["order"]}).select(
        pl.struct(pl.all()).rank("dense").cast(pl.Int64) - 1).to_series().to_numpy()
    unit = rows["unit"].to_numpy()
    got = iwd_by_unit(x, y, group, rows["turns"].to_numpy(), unit)
    if got is None:
        return None
    est, starts, z = got
    return est, unit[starts], z, rows["table_id"].to_numpy()[starts].astype(np.int64)


def card_check(card: str, verdict: float, verdict_se: float, h_units: pl.DataFrame,
               y_units: pl.DataFrame, masks: dict[str, int], games: int,
               verdict_ci: tuple[float, float] | None = None) -> Check | None:
    """A card's adjusted IWD checked (``make_check``): each pilot's estimate on the
    subsample (``iwd_by_deal``), the change's standard error from the per-deal
    difference of their linearisations (the same deals in both), the tables as strata."""
    from rnr_sim.analytics.units import table_se

    h, y = iwd_by_deal(h_units, masks), iwd_by_deal(y_units, masks)
    if h is None or y is None or not np.array_equal(h[1], y[1]):
        return None
    se = table_se(y[2] - h[2], h[3])
    return make_check("card", card, "adjusted IWD", 0.0, verdict, verdict_se, h[0], y[0],
                      se if math.isfinite(se) else math.inf, len(h[1]), games, verdict_ci)


# ---------------------------------------------------------------------------- deck shares
def deal_wins(rows: pl.DataFrame, deck: str) -> np.ndarray:
    """float[tables, deals]: ``deck``'s share of each deal's games won (a draw is not a
    win, as the report's win rate), both seat orders, its tables against other decks in
    table order (a mirror table, the deck against itself, left out as the report does)."""
    mine = rows.with_columns((pl.col("deck").n_unique().over("game_id") == 1).alias("mirror")
                             ).filter((pl.col("deck") == deck) & ~pl.col("mirror"))
    per = mine.group_by("table_id", "deal").agg(pl.col("won").cast(pl.Float64).mean()).sort(
        "table_id", "deal")
    tables = per["table_id"].n_unique()
    return per["won"].to_numpy().reshape(tables, -1) if tables else np.zeros((0, 0))


# ---------------------------------------------------------------------------- a run's check
def _budget_row() -> tuple[int, ...]:
    from rnr_sim.skill import SEARCH_DEFAULT, search_budget

    return search_budget(*SEARCH_DEFAULT)


def budget_words(row: Sequence[int]) -> str:
    """A budget row (``skill.search_budget``) in words."""
    lists = "open lists" if row[3] else "hidden lists (R59)"
    return f"K={row[0]} rollouts x N={row[1]} determinizations, gate z={row[2] / 100:g}, {lists}"


def subsample_ids(plan, deals: int) -> np.ndarray:
    """The ``game_id`` s of deals ``0 .. deals - 1`` of every table of ``plan``, every
    seat order (``runner``: ``game_id = (table * games + deal) * players + rotation``)."""
    t, d, r = np.meshgrid(np.arange(len(plan.tables)), np.arange(deals),
                          np.arange(plan.players), indexing="ij")
    return ((t * plan.games + d) * plan.players + r).ravel().astype(np.int64)


def play_run(run_dir: str | Path, deals: int, threads: int | None = None,
             backend: str = "local", address: str | None = None, progress: bool = True,
             log: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """Play deals ``0 .. deals - 1`` (at most the run's) of every table of the finished
    two-player run in ``run_dir`` again with the yardstick in every seat, and write them
    to ``run_dir/yardstick.parquet`` (seat rows with their game's fields; stamped with the
    run's identity, ``deals``, the budget and the seconds). Returns that stamp's figures,
    or None when Ctrl-C stopped it (nothing written)."""
    from rnr_sim.files import write_parquet
    from rnr_sim.runs import identity, manifests, planning, rundir, runner
    from rnr_sim.runs.execution import Chunk, Progress, chunk_frames, log_to_stderr, open_backend

    log = log or log_to_stderr
    run_dir = Path(run_dir)
    manifest = manifests.read_manifest(run_dir)
    if manifest.get("players") != 2:
        raise InputError(f"--yardstick: {run_dir} is a {manifest.get('players')}-player run; "
                         "the yardstick check plays two-player runs (its search pilot "
                         "weighs two seats)")
    if manifest.get("games_done") != manifest.get("games_total"):
        raise InputError(f"--yardstick: {run_dir} is not finished; finish it first "
                         f"(rnr-sim run --resume {run_dir} --yardstick {deals})")
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 2:
        raise InputError(f"--yardstick must be a whole number of deals a table, at least 2 "
                         f"(an interval needs two deals), not {deals!r}")
    rundir.verify_run_dir(run_dir, manifest)
    plan = runner._plan_from_manifest(run_dir, manifest)
    deals = min(deals, plan.games)
    driver = planning.engine_driver()
    plan.compile(driver)
    row = _budget_row()
    search = np.tile(np.asarray(row, dtype=np.int64), (len(plan.policy_table), 1))
    ids = subsample_ids(plan, deals)
    table, deal, rotation = planning.game_coordinates(ids, plan.games, plan.players)
    inputs = GameInputs.at_tables(plan.tables, plan.deck_policy, table, deal, rotation, ids)
    chunks = [Chunk(i, inputs[a:a + CHUNK])
              for i, a in enumerate(range(0, len(ids), CHUNK))]
    cards, deck_cards, deck_size = plan.cards, plan.deck_cards, plan.deck_size
    rules, seed, policies = plan.rules, plan.seed, plan.policy_table
    where = open_backend(backend, address, threads)
    remote = getattr(where, "remote", False)

    def play(chunk: Chunk):
        return chunk.inputs.play(driver, cards, deck_cards, deck_size, rules, seed,
                                 threads=None if remote else where.threads,
                                 policies=policies, search=search)

    frames: dict[int, pl.DataFrame] = {}

    class _Sink:
        def write(self, chunk: Chunk, records) -> None:
            games, seats = chunk_frames(plan, chunk.inputs, records, plan.policy_names)
            frames[chunk.index] = seats.select(SEAT_COLUMNS).join(
                games.select(GAME_COLUMNS), on="game_id")

    from rnr_sim.runs.execution import execute

    t0 = time.perf_counter()
    bar = Progress("yardstick", total=len(ids), show=progress, log=log)
    with where, bar:
        tally = execute(chunks, play, _Sink(), backend=where, progress=bar,
                        warm_up=driver.needs_compile)
    if tally.interrupted or len(frames) < len(chunks):
        return None
    seconds = time.perf_counter() - t0
    rows = pl.concat([frames[i] for i in range(len(chunks))])
    figures = {"deals": deals, "budget": list(row), "games": len(ids),
               "seconds": round(seconds, 1)}
    stamp = identity.stamp(rundir.run_identity(manifest), file="yardstick", **figures)
    write_parquet(run_dir / FILE, rows, stamp)
    return figures


def read_run(run_dir: str | Path, manifest: dict[str, Any]) -> tuple[pl.DataFrame,
                                                                     dict[str, Any]] | None:
    """A run dir's yardstick games and their figures (``play_run``), or None without
    them; a file from another run, or one without the run's stamp, is refused in one
    line."""
    from rnr_sim.runs import identity, rundir

    path = Path(run_dir) / FILE
    if not path.is_file():
        return None
    found = identity.read_stamp(path)
    want = identity.seal(rundir.run_identity(manifest))["id"]
    place = found.get("place") if isinstance(found, dict) else None
    if not found or found.get("id") != want or not isinstance(place, dict) \
            or place.get("file") != "yardstick":
        raise InputError(f"{path}: not this run's yardstick games (its stamp differs from "
                         f"the run's); remove it and play the check again: rnr-sim run "
                         f"--resume {run_dir} --yardstick DEALS")
    try:
        rows = pl.read_parquet(path)
    except Exception as e:  # a broken file is bad input, not a crash
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise InputError(f"{path}: cannot read ({first}); remove it and play the check "
                         f"again: rnr-sim run --resume {run_dir} --yardstick DEALS") from None
    return rows, place


def run_checks(m) -> tuple[list[Check], dict[str, Any]] | None:
    """The yardstick check of a run's verdict (``analytics.metrics.Metrics`` ``m``), when
    its run dir holds yardstick games: the decks with the highest and the lowest win rate
    among the significant deck findings, and the ``CARDS_CHECKED`` significant cards of
    best score (``findings.judge``), each on the yardstick's deals against the run's own
    games of those deals. None without yardstick games."""
    from rnr_sim.analytics.cards import card_masks, seat_units

    run = m.run
    got = read_run(run.path, run.manifest)
    if got is None:
        return None
    y_rows, place = got
    deals = int(place["deals"])
    h_games = run.games.filter(pl.col("deal") < deals)
    h_seats = run.seats.join(h_games.select("game_id"), on="game_id", how="semi")
    y_games = y_rows.select(GAME_COLUMNS).unique("game_id").lazy()
    y_seats = y_rows.select(SEAT_COLUMNS).lazy()
    h_rows = h_seats.select("game_id", "deck", "won").join(
        h_games.select("game_id", "table_id", "deal"), on="game_id").collect()
    y_deck_rows = y_rows.select("game_id", "deck", "won", "table_id", "deal")
    fair = 1.0 / m.players
    checks: list[Check] = []
    decks = [c for c in m.candidates if c.kind == "deck" and c.significant]
    picked = sorted({id(c): c for c in (max(decks, key=lambda c: c.value, default=None),
                                        min(decks, key=lambda c: c.value, default=None))
                     if c is not None}.values(), key=lambda c: -c.value)
    for c in picked:
        h, y = deal_wins(h_rows, c.subject), deal_wins(y_deck_rows, c.subject)
        if h.size == 0 or h.shape != y.shape:
            continue
        checks.append(paired_check("deck", c.subject, "win rate against the field", fair,
                                   c.value, c.stderr, h, y, games=int(2 * y.size),
                                   verdict_ci=(c.lo, c.hi)))
    cards = sorted((c for c in m.candidates if c.kind == "card" and c.significant
                    and c.score > 0), key=lambda c: (-c.score, c.subject))[:CARDS_CHECKED]
    if cards:
        masks = card_masks(run.decks)
        h_units = seat_units(h_games, h_seats)
        y_units = seat_units(y_games, y_seats)
        for c in cards:
            held = {r["deck"]: int(r["mask"]) for r in
                    masks.filter(pl.col("card") == c.subject).iter_rows(named=True)}
            check = card_check(c.subject, c.value, c.stderr, h_units, y_units, held,
                               games=int(y_units.filter(pl.col("deck").is_in(list(held)))
                                         ["unit"].n_unique() * 2), verdict_ci=(c.lo, c.hi))
            if check is not None:
                checks.append(check)
    return checks, place


def run_note(place: dict[str, Any]) -> str:
    """What a run's yardstick check played, in a sentence."""
    row = place.get("budget") or _budget_row()
    return (f"The yardstick: deals 0-{int(place['deals']) - 1} of every table played again "
            f"with the search pilot in every seat ({budget_words(row)}; each seat's own "
            f"pilot its rollout pilot and prior), {int(place.get('games', 0)):,} games in "
            f"{place.get('seconds', '?')} s; each figure with the yardstick is the run's "
            "figure moved by the change the stronger pilot makes on those same deals "
            "(paired by deal), its 95% interval the two uncertainties added. Holds: the "
            "interval with the yardstick stays on the verdict's side of the fair value; "
            "flips: it lies on the other side; not settled: it reaches across.")


# ---------------------------------------------------------------------------- discover
def check_elites(ev_factory: Callable[[], Any], pool, fld, elite_ids: Sequence[np.ndarray],
                 elite_rows: np.ndarray, names: Sequence[str], verdicts: Sequence[tuple],
                 deals: int, seed: int) -> list[Check] | None:
    """``discover``'s best elites against the field with the yardstick in every seat
    (the elite's own pilot and the field's the rollout pilots and priors), on deals
    ``0 .. deals - 1`` of the held-out seed ``seed`` (a subsample of the deals the
    held-out share was measured on), paired with the same games by the heuristic pilots;
    the field decks as strata weighted as the held-out share weighs them. ``pool`` holds
    the field decks (rows ``0 .. len(fld) - 1``) with ``fld``'s pilots; ``elite_ids`` the
    elites' catalog ids, ``elite_rows`` their pilot rows in ``pool``; ``verdicts`` each
    elite's (held-out share, standard error). ``ev_factory()`` opens the evaluator (its
    store keeps both calls for a resume). None when Ctrl-C stopped it."""
    n_f = len(fld)
    pool = pool.with_decks([*fld.card_ids, *elite_ids])
    games = fld.matchups(np.arange(n_f, n_f + len(elite_ids)), np.asarray(elite_rows),
                         0, deals)
    with ev_factory() as ev:
        h = ev.play(pool, games, seed, key="yardstick-heuristic")
        y = None if h is None else ev.play(pool.with_yardstick(), games, seed,
                                           key="yardstick")
    if y is None:
        return None
    hd, yd = h.per_deal(), y.per_deal()
    return [paired_check("elite", names[k], "held-out share against the field", 0.5,
                         verdicts[k][0], verdicts[k][1], hd[k], yd[k], fld.weights,
                         games=int(y.score[k].size))
            for k in range(len(elite_ids))]


# ---------------------------------------------------------------------------- balance
def check_patch(ev, pool, cards_after: np.ndarray, names: Sequence[str],
                policy_rows: Sequence[int], deals: int, seed: int,
                verdicts: dict[str, tuple[float, float]] | None = None,
                weights: np.ndarray | None = None, key: str | None = None,
                rules_after: np.ndarray | None = None) -> list[Check] | None:
    """A patch's effect on every deck's win share against the others, with the heuristic
    pilots and with the yardstick in every seat, on the same deals (``balance``'s first
    suggestion). ``ev``: an open ``evaluation.Evaluator``; ``pool``: the metagame's decks
    (rows in ``names`` order) and pilots (``policy_rows``, rows of ``pool.policies``) with
    the unchanged catalog and rules; ``cards_after`` the patched catalog's array
    (``Catalog.compile()``; ``pool.cards`` for a rules-only change), ``rules_after`` the
    changed rules array (default: unchanged). Deck i meets every other deck j on engine
    table j (the opponent's, as balance plays them), deals ``0 .. deals - 1`` under
    ``seed``, both seat orders. Each deck's figure is the change of its win share (a draw
    counts half) after minus before, paired by deal, its opponents as strata weighted by
    ``weights`` (default equal); its verdict ``verdicts[deck]`` (the change and its
    standard error as balance measured them on its own deals), or, for a deck without
    one, the heuristic change on these deals (its standard error then counted twice, on
    the safe side). Four engine calls a deck (before and after, each pilot), keys
    ``{key}-{deck index}-{before|after}-{h|y}`` when ``key`` is given. One ``Check`` a
    deck, kind ``patch``; None once Ctrl-C stopped it."""
    from rnr_sim.runs.evaluation import Matchups

    n = len(names)
    rows = np.asarray(policy_rows, dtype=np.int32)
    after = type(pool)(np.ascontiguousarray(cards_after, dtype=np.int32),
                       pool.rules if rules_after is None else rules_after, pool.deck_cards,
                       pool.deck_size, pool.policies, pool.search)
    pools = {"before-h": pool, "after-h": after, "before-y": pool.with_yardstick(),
             "after-y": after.with_yardstick()}
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    checks = []
    for i, name in enumerate(names):
        others = np.array([j for j in range(n) if j != i])
        games = Matchups([i], rows[[i]], others, rows[others], others.astype(np.int64), 0,
                         deals)
        share = {}
        for label, p in pools.items():
            out = ev.play(p, games, seed, key=None if key is None else f"{key}-{i}-{label}")
            if out is None:
                return None
            share[label] = out.per_deal()[0]  # [opponent, deal]
        dh = share["after-h"] - share["before-h"]
        dy = share["after-y"] - share["before-y"]
        wi = w[others]
        if verdicts is not None and name in verdicts:
            v, v_se = verdicts[name]
        else:
            v = float(dh.mean(axis=-1) @ (wi / wi.sum()))
            v_se = float(paired_gain(dh, wi)[1])
        checks.append(paired_check("patch", name, "win rate change from the patch", 0.0,
                                   v, v_se, dh, dy, wi, games=int(2 * dy.size * 2)))
    return checks


def manifest_entry(checks: Sequence[Check], deals: int, seconds: float) -> dict[str, Any]:
    """What a discovery's manifest records of its check (``yardstick``)."""
    return {"deals_per_field_deck": deals, "budget": list(_budget_row()),
            "seconds": round(seconds, 1),
            "games": int(sum(c.games for c in checks)),
            "holds": {c.subject: c.holds for c in checks}}


def read_checks(root: str | Path) -> list[Check]:
    """The checks a search dir holds (``yardstick.parquet``; none without it)."""
    path = Path(root) / FILE
    return from_frame(pl.read_parquet(path)) if path.is_file() else []
