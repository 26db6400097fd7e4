"""The coverage of a discovery's held-out intervals, measured (``rnr-sim check coverage
--discovery DIR``).

The elites of a discovery dir, and its field's decks, each with the pilot its deck file
names, are re-measured against the dir's field on K independent seeds, ``deals`` deals a
field deck each, exactly as ``discover`` re-measures them (``meta.shares_of``,
``meta.edges_of``: the edge over the dir's best field deck). Each seed's intervals go to
``checks.coverage.coverage_table``, which checks them against the mean of the other
seeds' estimates (the leave-one-out reference of every other family). Families:
``discover held-out share`` and ``discover held-out edge``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from rnr_sim.errors import InputError


def heldout_intervals(discovery: str | Path, seeds: Sequence[int], deals: int,
                      threads: int | None = None,
                      progress: Callable[[str], None] | None = None) -> tuple[pl.DataFrame, int]:
    """(intervals per seed in ``checks.coverage``'s columns plus ``seed``, games)."""
    from rnr_sim.discover.meta import edges_of, shares_of
    from rnr_sim.discover.search import Field
    from rnr_sim.runs import planning
    from rnr_sim.runs.evaluation import Evaluator, Pool
    from rnr_sim.runs.searchdirs import verify_discovery_dir

    root = Path(discovery)
    try:
        m = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(f"--discovery {root}: not a complete discovery dir ({e})") from None
    if not isinstance(m, dict) or m.get("kind") != "discovery":
        raise InputError(f"--discovery {root}: its manifest is not a discovery's")
    verify_discovery_dir(root, m)  # by content: its tables, its elites' lists and pilots
    if m.get("meta"):
        raise InputError(f"--discovery {root}: a --meta discovery's field is its last mix; "
                         "measure a discovery without --meta")
    try:
        archive = pl.read_parquet(root / "archive.parquet")
    except (OSError, pl.exceptions.PolarsError) as e:
        raise InputError(f"--discovery {root}: not a complete discovery dir ({e})") from None
    field = [Path(f["path"]) for f in m["field"]]
    elites = [root / f for f in archive["deck_file"]]
    rules = (m.get("rules") or {}).get("source")  # the discovery's own profile, if not the default
    plan = planning.plan_run(planning.RunOptions(decks=field + elites, games=1, cards=m["cards"],
                                             rules=rules, threads=threads, mirrors=True))
    driver = planning.engine_driver()
    plan.compile(driver)
    n_f, n_e = len(field), len(elites)
    fld = Field([d.card_ids for d in plan.decks[:n_f]], plan.deck_policy[:n_f])
    games = fld.matchups(np.r_[n_f:n_f + n_e, 0:n_f], plan.deck_policy[np.r_[n_f:n_f + n_e, 0:n_f]],
                         0, deals)
    names = [d.name for d in plan.decks[n_f:]] + [d.name for d in plan.decks[:n_f]]
    best = [d.name for d in plan.decks[:n_f]].index(m["heldout"]["best_field_deck"])
    rows = []
    with Evaluator(driver, threads=threads) as ev:
        for i, seed in enumerate(seeds):
            out = ev.play(Pool.of_plan(plan), games, seed)
            if out is None:
                raise KeyboardInterrupt
            share, lo, hi, per_deal = shares_of(out, fld.weights)
            edge, elo, ehi = edges_of(per_deal[:n_e], per_deal[n_e + best], fld.weights)
            rows += [("discover held-out share", names[k], "deal", share[k], lo[k], hi[k], seed)
                     for k in range(len(names))]
            rows += [("discover held-out edge", names[k], "deal", edge[k], elo[k], ehi[k], seed)
                     for k in range(n_e)]
            if progress is not None:
                progress(f"seed {i + 1}/{len(seeds)} ({seed}) played")
    frame = pl.DataFrame(rows, schema={"family": pl.String, "subject": pl.String,
                                       "method": pl.String, "value": pl.Float64,
                                       "lo": pl.Float64, "hi": pl.Float64, "seed": pl.Int64},
                         orient="row")
    return frame, games.games * len(seeds)
