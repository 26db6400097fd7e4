"""Holding once players adapt: a double-oracle loop from the first verified suggestion
(docs/design.md, "Balance after adaptation"; McMahan, Gordon and Blum 2003).

Round r starts from a patch (round 1: the suggestion) and the strongest deck a discovery
with the patched cards found (``verify.rediscover``). That deck joins the metagame, and the
metagame is measured with the patch (``search.run`` with the patch as fixed changes: its
baseline). If the targets still hold, the patch **holds after adaptation** and the loop
ends. If not, the deck broke it: the search looks for more changes on top of the patch
(the changes left of ``max_changes``), the best is verified with ``compare`` on fresh
deals against the enlarged metagame, the metagame is searched again with the combined
patch, and the next round begins, until a round holds, no change left meets the targets,
or the budget ends. Every round is reported: the patch, the deck that broke it, the next
patch.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rnr_sim.balance.targets import Changes, describe, patch_toml, rules_toml

MAX_ROUNDS = 3
#: Of each round's games: the search (the rest: its verification and its re-discovery).
ROUND_SEARCH_SHARE = 0.6
ROUND_SEED_OFFSET = 8_000_009


@dataclass
class Round:
    """One round of the loop, as reported."""

    round: int
    patch: list[str]  # the patch the round starts from
    deck: str | None  # the deck the discovery with that patch found strongest
    deck_share: float | None  # its held-out share against the metagame
    missed: list[str]  # the targets the metagame with that deck misses (search's deals)
    distance: float
    holds: bool  # the patch holds after adaptation
    next: list[str] = field(default_factory=list)  # the changes added (none: the loop ends)
    next_verified: bool | None = None
    candidates: int = 0  # candidates the round's search measured
    games: int = 0
    dir: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def adapt(out: Path, options, tf, plan, meta, knobs, changes: Changes, after: dict[str, Any],
          budget: int, seed: int, log, progress: bool) -> tuple[list[Round], bool | None]:
    """The loop (module docstring) from a verified suggestion's ``changes`` and the
    re-discovery ``after`` it (``verify.rediscover``'s dict); ``budget`` games at most.
    Returns the rounds and whether the last patch holds (None: the budget ended first)."""
    from rnr_sim.balance import search, verify
    from rnr_sim.discover import MIN_BUDGET as DISCOVER_MIN
    from rnr_sim.errors import InputError
    from rnr_sim.runs import planning
    from rnr_sim.runs.evaluation import Evaluator, Pool

    rounds: list[Round] = []
    spent = 0
    paths = list(meta.paths)
    t = tf.targets
    left_changes = tf.scope.max_changes - len(changes)
    driver = planning.engine_driver()
    for r in range(1, MAX_ROUNDS + 1):
        left = budget - spent
        rdir = out / "rounds" / f"{r:02d}"
        shutil.rmtree(rdir, ignore_errors=True)
        rdir.mkdir(parents=True)
        deck = rdir / "deck.txt"
        # the list without its Cards: header: it names the patched catalog the discovery
        # ran on, and the round plays the run's catalog with the patch applied in memory
        lines = Path(after["deck"]).read_text(encoding="utf-8").splitlines()
        deck.write_text("\n".join(x for x in lines if not x.lower().startswith("cards:"))
                        + "\n", encoding="utf-8")
        paths_r = [*paths, deck]
        try:
            plan_r = planning.plan_run(planning.RunOptions(
                decks=paths_r, games=1, seed=seed, cards=options.cards, rules=options.rules,
                threads=options.threads))
        except InputError as e:  # the list needs a card the patch made legal only
            log(f"round {r}: the deck found cannot join the metagame ({e})")
            return rounds, None
        plan_r.compile(driver)
        n = len(plan_r.decks)
        weights = np.full(n, 1.0 / n) if not meta.adaptive else np.append(meta.weights, 0.0)
        meta_r = search.Metagame(plan_r.deck_names, paths_r, weights, Pool.of_plan(plan_r),
                                 plan_r.deck_policy.astype(np.int32), np.arange(n),
                                 np.arange(n), f"{meta.source} and the deck of round {r}",
                                 mirrors=meta.mirrors)
        search_budget = int(ROUND_SEARCH_SHARE * left)
        log(f"round {r}: the metagame with {after['deck']} ({100 * after['share']:.1f}% "
            f"held out), the patch {'; '.join(describe(knobs, changes))}")
        with Evaluator(driver, threads=options.threads, seen=t.iwd_max is not None) as ev:
            found = search.run(ev, meta_r, plan_r, knobs, t, max(1, left_changes),
                               search_budget, seed + r * ROUND_SEED_OFFSET, 1,
                               log=log, fixed=changes)
        if found is None or found.stopped:
            raise KeyboardInterrupt
        spent += found.games
        j0 = found.baseline_judged
        rd = Round(r, describe(knobs, changes), str(after["deck"]), after["share"],
                   list(j0.missed), j0.distance, not j0.missed, games=found.games,
                   candidates=len(found.scored), dir=str(rdir.relative_to(out)))
        rounds.append(rd)
        if rd.holds:
            log(f"round {r}: the patch holds with that deck in the metagame")
            return rounds, True
        best = found.suggestions[0] if found.suggestions else None
        if best is None or left_changes < 1 or not best.safe or best.distance > 0:
            log(f"round {r}: the deck breaks {', '.join(j0.missed)}; no change left in "
                "scope meets the targets against it")
            return rounds, False
        merged = tuple(sorted({**dict(changes), **dict(best.changes)}.items()))
        rd.next = describe(knobs, tuple(c for c in merged if c not in changes))
        patch = rules_b = None
        note = f"rnr-sim balance, round {r}: {'; '.join(describe(knobs, merged))}"
        if any(not knobs[k].rule for k, _ in merged):
            patch = rdir / "patch.toml"
            patch.write_text(patch_toml(plan.catalog, knobs, merged, f"Round {r}", note),
                             encoding="utf-8")
        if any(knobs[k].rule for k, _ in merged):
            rules_b = rdir / "rules.toml"
            rules_b.write_text(rules_toml(plan.profile, knobs, merged, f"Round {r}", note),
                               encoding="utf-8")
        per_deal = 2 * n * (n - 1) * 2
        deals = max(verify_min(), int(0.5 * (budget - spent)) // (2 * per_deal))
        v = verify.check(100 + r, patch, rules_b, meta_r, t, options.cards, options.rules,
                         deals, seed + r * ROUND_SEED_OFFSET, rdir / "verify", options,
                         progress, log)
        spent += v.games
        rd.next_verified = v.verified
        rd.games += v.games
        if not v.verified:
            log(f"round {r}: the next patch misses {', '.join(v.missed)} on fresh deals")
            return rounds, False
        changes = merged
        left_changes = tf.scope.max_changes - len(changes)
        paths = paths_r
        b = budget - spent
        if b < DISCOVER_MIN:
            return rounds, None
        unchanged = list(options.cards or [])
        cards_after = unchanged if patch is None else [v.compare_dir / "variant-catalog.toml"]
        rules_after = options.rules if rules_b is None else rules_b
        after = verify.rediscover(cards_after, meta_r, t, rules_after, b, seed + r,
                                  rdir / "discovery", options, progress, log)
        spent += after["games"]
        rd.games += after["games"]
    return rounds, None


def verify_min() -> int:
    from rnr_sim.balance import MIN_VERIFY_DEALS

    return MIN_VERIFY_DEALS
