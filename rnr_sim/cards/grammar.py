"""The effect grammar: one string per effect, ``[trigger:] verb [target] N`` (docs/design.md).

Triggers: none (once, when the card resolves), ``each turn:``, ``activate K:`` (pay K IP in
the Play Phase and turn the card sideways, Art. VII §6) and ``on destroy:``. Verbs are the
names of ``enums.VERBS``; every verb takes a whole number N >= 1 except ``tutor pillar``,
which takes none (its amount is 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rnr_sim import enums

#: The verbs a card may use, in the order of ``enums.VERBS`` (``none`` is no verb).
CARD_VERBS: tuple[str, ...] = enums.VERBS[1:]
#: Verbs that take no number; their amount is 1.
VERBS_WITHOUT_AMOUNT = frozenset({"tutor pillar"})
MAX_VERB_WORDS = max(len(v.split(" ")) for v in CARD_VERBS)
#: Largest number a card may print; the compiled catalog is int32.
MAX_NUMBER = 1_000_000

_WS = re.compile(r"\s+")
_ACTIVATE = re.compile(r"activate\s+(\S+)")
_NUMBER = re.compile(r"[0-9]+")


class GrammarError(ValueError):
    """An effect string that does not parse; the message says why, without the card's name."""


@dataclass(frozen=True)
class Effect:
    """One parsed effect of a card.

    ``trigger`` is a name of ``enums.TRIGGERS``; ``verb`` a name of ``enums.VERBS`` other
    than ``none``; ``amount`` is N (1 for ``tutor pillar``); ``cost`` is K of
    ``activate K:`` or, for a kicker, the extra IP paid for it, else 0; ``source`` is the
    string as written on the card; ``kicker`` is True for a Freedom card's kicker.
    """

    trigger: str
    verb: str
    amount: int
    cost: int = 0
    source: str = ""
    kicker: bool = False

    @property
    def trigger_id(self) -> int:
        return enums.TRIGGERS.index(self.trigger)

    @property
    def verb_id(self) -> int:
        return enums.VERBS.index(self.verb)

    def canonical(self) -> str:
        """The effect in the grammar's own normal form, e.g. ``activate 2: draw 1``."""
        body = self.verb if self.verb in VERBS_WITHOUT_AMOUNT else f"{self.verb} {self.amount}"
        if self.trigger == "each_turn":
            return f"each turn: {body}"
        if self.trigger == "on_destroy":
            return f"on destroy: {body}"
        if self.trigger == "activate":
            return f"activate {self.cost}: {body}"
        return body

    def describe(self) -> str:
        """How the tool read the effect, in the normal form; a kicker shows its extra IP."""
        if self.kicker:
            return f"kicker +{self.cost} IP: {self.canonical()}"
        return self.canonical()

    def __str__(self) -> str:
        return self.describe()


def show_source(source: str) -> str:
    """An effect string quoted for a one-line message: ``"draw 2"``, or its escaped form
    (Python's ``repr``) when it holds a character that is not printable (a line break)."""
    return f'"{source}"' if source.isprintable() else repr(source)


def _valid_verbs() -> str:
    return ", ".join(v if v in VERBS_WITHOUT_AMOUNT else f"{v} N" for v in CARD_VERBS)


def _whole_number(text: str, what: str, minimum: int) -> int:
    if not _NUMBER.fullmatch(text):
        raise GrammarError(f"{what} must be a whole number, not '{text}'")
    value = int(text)
    if value < minimum:
        raise GrammarError(f"{what} must be at least {minimum}, not {value}")
    if value > MAX_NUMBER:
        raise GrammarError(f"{what} must be at most {MAX_NUMBER}, not {value}")
    return value


def parse_effect(source: str) -> Effect:
    """Parse one effect string. Raises ``GrammarError`` quoting the string and saying what
    is wrong with it (an unknown verb lists the valid ones)."""
    if not isinstance(source, str):
        raise GrammarError(f"an effect is a string like \"draw 2\", not {source!r}")
    try:
        trigger, cost, verb, amount = _parse(_WS.sub(" ", source.strip().lower()))
    except GrammarError as e:
        raise GrammarError(f"{show_source(source)}: {e}") from None
    return Effect(trigger=trigger, verb=verb, amount=amount, cost=cost, source=source)


def _parse(text: str) -> tuple[str, int, str, int]:
    """(trigger, cost, verb, amount) of a normalised effect string."""
    if not text:
        raise GrammarError("empty effect; write e.g. \"draw 2\"")
    trigger, cost, body = "on_resolve", 0, text
    if ":" in text:
        head, _, body = text.partition(":")
        head, body = head.strip(), body.strip()
        if head == "each turn":
            trigger = "each_turn"
        elif head == "on destroy":
            trigger = "on_destroy"
        elif head == "activate":
            raise GrammarError(f"'activate' needs its IP cost K, e.g. \"activate 2: {body}\"")
        elif m := _ACTIVATE.fullmatch(head):
            trigger = "activate"
            cost = _whole_number(m.group(1), "the activate cost K", 0)
        else:
            raise GrammarError(
                f"unknown trigger '{head}:'; valid triggers: "
                "(none), each turn:, activate K:, on destroy:"
            )
    words = body.split(" ") if body else []
    # Longest verb first, so "strike ua 5" is not read as "strike" with a stray "ua".
    for n_words in range(MAX_VERB_WORDS, 0, -1):
        verb = " ".join(words[:n_words])
        if len(words) >= n_words and verb in CARD_VERBS:
            rest = words[n_words:]
            break
    else:
        bad = words[0] if words else ""
        raise GrammarError(f"unknown verb '{bad}'; valid verbs: {_valid_verbs()}")
    if verb in VERBS_WITHOUT_AMOUNT:
        if rest:
            raise GrammarError(f"'{verb}' takes no number")
        return trigger, cost, verb, 1
    if len(rest) != 1:
        raise GrammarError(f"'{verb}' takes one whole number N (e.g. \"{verb} 2\")")
    return trigger, cost, verb, _whole_number(rest[0], f"N of '{verb}'", 1)
