"""A search's budget of games, split into named phases: what each may play, what is spent,
what is left (``discover``, ``balance``, ``power``).

A command's ``--budget`` is every game it plays. Its phases run in a fixed order; each has
a share of the total (a fraction), and a phase that takes the rest plays what is left when
its turn comes, less what the phases after it are held (their shares, or an exact number of
games a phase fixes once it knows its size: ``hold``). One object keeps the reckoning, so a
command asks one question (``allowance``) instead of recomputing its shares in each phase.
"""

from __future__ import annotations

from collections.abc import Mapping


class Ledger:
    """``total`` games split into ``shares`` (phase name -> fraction of the total, in the
    order the phases run); the phases in ``rest`` take what is left when asked."""

    def __init__(self, total: int, shares: Mapping[str, float], rest: tuple[str, ...] = ()):
        unknown = [p for p in rest if p not in shares]
        if unknown or sum(shares.values()) > 1.0 + 1e-12 or min(shares.values(), default=0) < 0:
            raise ValueError(f"shares {dict(shares)} (rest {rest}): fractions of one, in order")
        self.total = int(total)
        self.phases = list(shares)
        self.fractions = dict(shares)
        self.rest = set(rest)
        self.spent_by: dict[str, int] = dict.fromkeys(self.phases, 0)
        self.held: dict[str, int] = {}

    def share(self, phase: str) -> int:
        """The phase's share of the total, in games."""
        return int(self.total * self.fractions[phase])

    def hold(self, phase: str, games: int) -> None:
        """Hold exactly ``games`` for a later ``phase`` (instead of its share): a phase that
        plays whole deals knows its games before the phases ahead of it run."""
        self.held[phase] = int(games)

    def spend(self, phase: str, games: int) -> None:
        """``games`` played by ``phase``."""
        self.spent_by[phase] += int(games)

    def spent(self) -> int:
        """Games played so far, by every phase."""
        return sum(self.spent_by.values())

    def left(self) -> int:
        """The total less every game spent."""
        return self.total - self.spent()

    def later(self, phase: str) -> int:
        """What the phases after ``phase`` are held: the games ``hold`` fixed, and the
        others' shares together (one rounding: ``int(total x their fractions' sum)``)."""
        after = self.phases[self.phases.index(phase) + 1:]
        fixed = sum(self.held[p] for p in after if p in self.held)
        return fixed + int(self.total * sum(self.fractions[p] for p in after
                                            if p not in self.held))

    def allowance(self, phase: str) -> int:
        """What ``phase`` may play now: its share; for a phase that takes the rest, what is
        left less what the later phases are held (never below 0)."""
        if phase not in self.rest:
            return self.share(phase)
        return max(0, self.left() - self.later(phase))
