"""Generators of legal inputs, drawn from the contracts (not from the sample set).

- ``gen_catalog``: a card catalog as the ``[set]`` table and the ``[[cards]]`` tables of the
  card TOML contract (``cards/schema.py``, the effect grammar of ``cards/grammar.py``):
  every Order, Branch, rarity, trigger x verb, kicker, activate cost, keyword, stats from
  0 to ``MAX_NUMBER``; names and texts in any script, written as a deck list can name them.
- ``gen_profile``: a rules profile, any switch of ``rules.SWITCHES`` at any legal value.
- ``gen_deck_counts``: a deck that keeps every law of Article V under that profile.
- ``gen_policy``: one of the built-in pilots (``engine/policies.py``).

Each takes a ``Source`` first (``source.py``): a seeded numpy generator in the check
command, hypothesis' ``draw`` in the tests (``catalogs()``, ``profiles()``, ``cases()``
below are hypothesis strategies built on the same functions, so hypothesis shrinks them).

Cards the catalog check refuses as impossible are not drawn (``allowed_triggers``,
``card_name``): no ``activate`` effect on a Pillar, no effect that fires on play on a UA
(a UA is never played), ``on destroy`` only on cards that can be destroyed, no name a
deck list cannot name.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from rnr_sim import enums
from rnr_sim.cards.grammar import MAX_NUMBER, VERBS_WITHOUT_AMOUNT
from rnr_sim.cards.schema import KEYWORD_ORDER, POSITIVE_STATS, REQUIRED_STATS, TYPE_STATS
from rnr_sim.checks.fuzz.source import Source
from rnr_sim.engine.policies import POLICY_NAMES
from rnr_sim.rules import SWITCHES

CARD_VERBS = enums.VERBS[1:]
DECK_SIZE = 60  # Art. V §1
N_UAS = 3  # Art. IV §3
#: Orders a deck's non-UA slots are drawn from, with the type a deck style weighs.
PLAYABLE = ("pillar", "rights", "attack", "defense", "freedom", "bill")

# ----------------------------------------------------------------------- numbers


def number(src: Source, lo: int = 0, hi: int = MAX_NUMBER, big: bool = False,
           wild: float = 0.2) -> int:
    """A whole number in ``lo..hi``: with probability ``wild`` anywhere in the range or at
    one of its ends, else small (the game's own scale: LP 100, DP and damage in tens);
    ``big``: mostly near the top."""
    if big and src.chance(0.7):
        return src.pick((hi, hi, src.integer(max(lo, hi // 10), hi)))
    if wild and src.chance(wild):
        return src.pick((src.integer(lo, hi), lo, hi))
    if src.chance(0.75):
        return src.integer(lo, min(hi, lo + 5))
    return src.integer(lo, min(hi, lo + 25))


# ----------------------------------------------------------------------- text

_SYLLABLES = ("li", "ber", "ty", "con", "sti", "tu", "tion", "re", "volt", "reign", "ea",
              "gle", "bi", "son", "scroll", "bell", "pe", "ti", "act", "de", "cree", "fort")
# Letters of other scripts and forms: accents, case pairs that fold oddly, CJK, emoji,
# combining marks, joiners and direction marks (none is a line break or whitespace).
_EXOTIC = ("é", "ß", "ø", "π", "Ж", "東", "京", "ǅ", "İ", "ı", "ﬁ", "Σ", "ς", "🦅", "🔔",
           "\u0301", "\u200d", "\u200f", "\ufeff", "\u00ad", "½", "Ⅻ", "㈱")
_PUNCT = tuple("'\"\\-.,!&()[]{}:;/?*+=_~`@$%^<>|#")
#: Characters no name may hold: line breaks (``str.splitlines``) end a deck list's line,
#: and control characters cannot be shown in one.
def _nameable(ch: str) -> bool:
    return unicodedata.category(ch) not in ("Cc", "Zl", "Zp")


def _word(src: Source) -> str:
    kind = src.weighted([70, 10, 8, 7, 5])
    if kind == 0:
        w = "".join(src.pick(_SYLLABLES) for _ in range(src.integer(1, 3)))
        return w.capitalize() if src.chance(0.8) else w.upper()
    if kind == 1:
        return str(number(src, 0, 10_000))
    if kind == 2:
        return "".join(src.pick(_EXOTIC) for _ in range(src.integer(1, 3)))
    if kind == 3:
        return _word(src) + src.pick(_PUNCT)
    return src.pick(("x", "X", "0", "Name:", "Policy:"))


def card_name(src: Source) -> str:
    """A card name a deck list can name: no line break or control character, no ``#``
    after a space or at the start (a deck list's comment), no spaces at its ends."""
    sep = src.pick((" ", " ", " ", "-", "  ", "\u00a0", "\u3000"))
    name = sep.join(_word(src) for _ in range(src.integer(1, 4)))
    return legal_name(name)


def legal_name(name: str) -> str:
    """``name`` made nameable by a deck list (see ``card_name``)."""
    name = "".join(ch for ch in name if _nameable(ch))
    out = []
    for i, ch in enumerate(name):
        if ch == "#" and (i == 0 or name[i - 1].isspace() or not out):
            continue
        out.append(ch)
    name = "".join(out).strip()
    # A '#' left after a stripped space would start a comment again.
    while name.startswith("#"):
        name = name[1:].strip()
    return name or "Card"


def free_text(src: Source, control: bool = False) -> str:
    """A card's printed text: any characters a TOML string can hold (line breaks too;
    ``control``: control characters too)."""
    kind = src.weighted([50, 30, 15, 5])
    if kind == 0:
        return ""
    if kind == 1:
        return " ".join(_word(src) for _ in range(src.integer(1, 8))) + "."
    if kind == 2:
        parts = [_word(src) for _ in range(src.integer(1, 5))]
        seps = ("\n", "\r\n", "\t", " # ", "\u2028", '"""', "'''", "\\n")
        return src.pick(seps + (("\x7f", "\x1b", "\x00") if control else ())).join(parts)
    return "".join(chr(src.integer(0x20, 0x2FF)) for _ in range(src.integer(1, 20)))


# ----------------------------------------------------------------------- themes


@dataclass(frozen=True)
class Theme:
    """A case's bent, so that rare corners get reached: effects favouring one verb and one
    trigger, numbers near ``MAX_NUMBER`` (or near 0), Orders in odd proportions, a field
    of decks dominated by one Order, switches forced, names of Orders, Branches, rarities
    and keywords in any case, control characters in texts. Every card stays legal."""

    name: str = "plain"
    verb: str | None = None
    trigger: str | None = None
    big_amounts: bool = False
    big_stats: frozenset = frozenset()
    small_stats: frozenset = frozenset()
    type_weights: tuple[int, ...] = (4, 4, 2, 5, 3, 2, 2)  # in enums.CARD_TYPES order
    dominant: str | None = None  # an Order of PLAYABLE every deck of the field favours
    rules: tuple[tuple[str, Any], ...] = ()  # switches forced
    spelling: bool = False
    wild: float = 0.05  # share of numbers drawn anywhere in 0..MAX_NUMBER (see number)
    verb_share: float = 0.6  # share of effects of ``verb``
    effects_weights: tuple[int, int, int] = (30, 45, 25)  # cards of 0, 1, 2 effects

    @classmethod
    def draw(cls, src: Source) -> Theme:
        kind = src.weighted([55, 25, 10, 10])
        spelling = src.chance(0.05)
        wild = src.pick((0.0, 0.01, 0.05, 0.2))
        if kind == 0:
            return cls(spelling=spelling, wild=wild)
        if kind == 1:
            return cls(
                name="bent",
                verb=src.pick(CARD_VERBS) if src.chance(0.7) else None,
                trigger=src.pick(enums.TRIGGERS) if src.chance(0.3) else None,
                big_amounts=src.chance(0.4),
                big_stats=frozenset(s for s in ("cost", "ip", "damage", "dp", "drain")
                                    if src.chance(0.2)),
                type_weights=tuple(src.integer(0, 8) + (40 if src.chance(0.15) else 0)
                                   for _ in enums.CARD_TYPES),
                dominant=src.pick(PLAYABLE) if src.chance(0.4) else None,
                spelling=spelling, wild=wild)
        if kind == 2:
            # Siege: many cheap, weak, lasting Attacks against tough UAs and Defenses, so
            # that dozens of Attacks stand in play at 3-4 players.
            return cls(
                name="siege", small_stats=frozenset({"cost", "damage", "drain"}),
                verb=src.pick(("repair", "ip", "draw", "heal")), verb_share=0.8,
                big_stats=frozenset({"dp", "ip"}) if src.chance(0.7) else frozenset({"dp"}),
                type_weights=(3, 2, 1, 40, 4, 1, 1), dominant="attack",
                rules=(("max_copies_attack_defense", src.integer(6, 60)),
                       ("min_pillars", src.integer(0, 15)),
                       ("attack_lifetime", "persistent"), ("aoa", src.chance(0.3)),
                       ("turn_limit", src.pick((200, 1000, 100_000)))),
                spelling=spelling, wild=min(wild, 0.01))
        # Bloom: big lasting heals (and IP), LP climbing far above its start.
        return cls(
            name="bloom", verb=src.pick(("heal", "heal", "heal", "ip")), trigger="each_turn",
            verb_share=0.85, effects_weights=(5, 30, 65),
            big_amounts=True, small_stats=frozenset({"cost", "damage", "drain"}),
            type_weights=(3, 8, 1, 1, 3, 2, 2), dominant=src.pick(("rights", "freedom", None)),
            rules=(("lp_cap", 0), ("turn_limit", src.pick((200, 1000, 100_000)))),
            spelling=spelling, wild=min(wild, 0.01))


# ----------------------------------------------------------------------- effects


def allowed_triggers(card_type: str, petition: bool) -> tuple[str, ...]:
    """The triggers an effect of a card of ``card_type`` may have: no ``activate`` on a
    Pillar (Amend. V §4), no effect that fires on play on a UA (never played, Art. VII
    §1), ``on destroy`` only on what can be destroyed: Defenses and UAs at 0 DP, Attacks
    in Attack-on-Attack, Petitions by ``destroy petition`` (``petition``: the card is one).
    """
    if card_type == "pillar":
        return ("on_resolve", "each_turn")
    if card_type == "ua":
        return ("each_turn", "activate", "on_destroy")
    if card_type in ("attack", "defense") or (card_type == "rights" and petition):
        return enums.TRIGGERS
    return ("on_resolve", "each_turn", "activate")


def effect_string(src: Source, trigger: str, verb: str, amount: int, cost: int = 0) -> str:
    """An effect as a designer might write it: any case, extra spaces, leading zeros."""
    n = str(amount)
    if src.chance(0.05):
        n = "0" * src.integer(1, 3) + n
    body = verb if verb in VERBS_WITHOUT_AMOUNT else f"{verb} {n}"
    head = {"on_resolve": "", "each_turn": "each turn", "on_destroy": "on destroy",
            "activate": f"activate {cost}"}[trigger]
    text = f"{head}: {body}" if head else body
    style = src.weighted([80, 7, 7, 6])
    if style == 1:
        text = text.upper()
    elif style == 2:
        text = text.title()
    elif style == 3:
        text = text.replace(" ", src.pick(("  ", "\t", " \t "))).replace(":", " : ")
        text = src.pick(("", " ")) + text + src.pick(("", "  "))
    return text


def gen_effect(src: Source, card_type: str, petition: bool, kicker: bool = False,
               theme: Theme = Theme()) -> tuple[str, str, str]:
    """(trigger, verb, effect string) of one effect a card of ``card_type`` may hold; a
    kicker is never an ``activate`` effect (R39)."""
    triggers = allowed_triggers(card_type, petition)
    if kicker:
        triggers = tuple(t for t in triggers if t != "activate")
    if theme.trigger in triggers and src.chance(0.7):
        trigger = theme.trigger
    else:
        trigger = triggers[src.weighted([{"on_resolve": 6, "each_turn": 3, "activate": 2,
                                          "on_destroy": 2}[t] for t in triggers])]
    verb = theme.verb if theme.verb and src.chance(theme.verb_share) else src.pick(CARD_VERBS)
    amount = 1 if verb in VERBS_WITHOUT_AMOUNT else number(src, 1, MAX_NUMBER,
                                                              theme.big_amounts, theme.wild)
    cost = number(src, 0, MAX_NUMBER, "cost" in theme.big_stats, theme.wild) \
        if trigger == "activate" else 0
    return trigger, verb, effect_string(src, trigger, verb, amount, cost)


# ----------------------------------------------------------------------- cards


def gen_card(src: Source, name: str, card_type: str, branch: str | None = None,
             rarity: str | None = None, theme: Theme = Theme()) -> dict[str, Any]:
    """One ``[[cards]]`` table of ``card_type``, fields in the contract's order."""
    card: dict[str, Any] = {
        "name": name,
        "type": card_type,
        "branch": branch or src.pick(enums.BRANCHES),
        "rarity": rarity or enums.RARITIES[src.weighted([6, 3, 2])],
    }
    for stat in TYPE_STATS[card_type]:
        required = stat in REQUIRED_STATS.get(card_type, ())
        if not required and not src.chance(0.85):
            continue  # an absent stat is 0
        lo = 1 if stat in POSITIVE_STATS.get(card_type, ()) else 0
        if stat in theme.small_stats:
            card[stat] = src.integer(lo, lo + 2)
        else:
            card[stat] = number(src, lo, MAX_NUMBER, stat in theme.big_stats, theme.wild)
    keywords = [kw for kw in enums.KEYWORDS
                if KEYWORD_ORDER.get(kw, card_type) == card_type
                and src.chance(0.45 if kw == "petition" else 0.12)]
    petition = "petition" in keywords
    n_effects = src.weighted(theme.effects_weights)
    has_kicker = card_type == "freedom" and n_effects > 0 and src.chance(0.6)
    own = n_effects - has_kicker
    effects = [gen_effect(src, card_type, petition, theme=theme)[2] for _ in range(own)]
    if effects or src.chance(0.5):
        card["effects"] = src.shuffled(effects)
    if keywords or src.chance(0.3):
        card["keywords"] = src.shuffled(keywords)
    if has_kicker:
        _t, _v, text = gen_effect(src, card_type, petition, kicker=True, theme=theme)
        card["kicker"] = {"cost": number(src, 0, MAX_NUMBER, "cost" in theme.big_stats,
                                         theme.wild),
                          "effect": text}
    if src.chance(0.6):
        card["text"] = free_text(src, theme.spelling)
    if theme.spelling and src.chance(0.2):  # Orders, Branches ... in any case
        for key in ("type", "branch", "rarity"):
            card[key] = src.pick((str.upper, str.title, str.lower))(card[key])
        if card.get("keywords"):
            card["keywords"] = [kw.title() for kw in card["keywords"]]
    return card


def gen_catalog(src: Source, max_cards: int = 60, theme: Theme | None = None
                ) -> dict[str, Any]:
    """A legal catalog: ``{"set": {...}, "cards": [...]}``. It always holds at least three
    UAs and a non-Rare Pillar of each Branch, so every legal rules profile has legal decks;
    the other cards are of any Order."""
    names: set[str] = set()

    def fresh_name() -> str:
        for k in range(1000):
            name = card_name(src)
            if k:
                name = f"{name} {k}"
            if name.casefold() not in names:
                names.add(name.casefold())
                return name
        raise AssertionError("no fresh name")  # pragma: no cover

    theme = Theme.draw(src) if theme is None else theme
    cards = [gen_card(src, fresh_name(), "ua", theme=theme) for _ in range(N_UAS)]
    cards += [gen_card(src, fresh_name(), "pillar", branch=b, theme=theme,
                       rarity=src.pick(("common", "uncommon"))) for b in enums.BRANCHES]
    weights = list(theme.type_weights) if sum(theme.type_weights) else [1] * 7
    for _ in range(src.integer(0, max_cards - len(cards))):
        card_type = enums.CARD_TYPES[src.weighted(weights)]
        cards.append(gen_card(src, fresh_name(), card_type, theme=theme))
    set_table: dict[str, Any] = {"name": legal_name(" ".join(_word(src) for _ in range(2)))}
    if src.chance(0.7):
        set_table["version"] = str(src.integer(1, 99))
    return {"set": set_table, "cards": src.shuffled(cards)}


# ----------------------------------------------------------------------- rules


def gen_profile(src: Source, theme: Theme = Theme()) -> dict[str, Any]:
    """Switches set away from (or back to) their defaults; the others stay default. Only
    profiles under which a legal deck exists: ``min_pillars`` at most the non-UA slots."""
    out: dict[str, Any] = {}
    for sw in SWITCHES:
        if not src.chance(0.45):
            continue
        if sw.kind == "bool":
            out[sw.name] = src.chance(0.5)
        elif sw.kind == "choice":
            out[sw.name] = src.pick(sw.choices)
        elif sw.name == "turn_limit":
            out[sw.name] = src.pick((src.integer(1, 30), src.integer(30, 400),
                                     number(src, 1, sw.maximum), sw.maximum))
        elif sw.name == "lp_cap":
            out[sw.name] = src.pick((0, src.integer(1, 150), number(src, 1, sw.maximum)))
        else:
            out[sw.name] = number(src, sw.minimum, sw.maximum)
    out.update(theme.rules)
    includes = out.get("deck_includes_uas", True)
    top = DECK_SIZE - N_UAS if includes else DECK_SIZE
    if out.get("min_pillars", 0) > top:
        out["min_pillars"] = src.integer(0, top)
    return out


def profile_toml(switches: dict[str, Any], name: str | None = None,
                 table: bool = False) -> str:
    """A rules file setting ``switches``: flat, or under ``[rules]`` (both are read)."""
    from rnr_sim.patches import toml_value

    lines = [f"name = {toml_value(name)}"] if name else []
    if table:
        lines.append("[rules]")
    lines += [f"{k} = {toml_value(v)}" for k, v in switches.items()]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------- decks


def gen_deck_counts(src: Source, catalog, profile, dominant: str | None = None,
                    verb: str | None = None) -> dict[str, int]:
    """Copies per card name of a deck that keeps Article V under ``profile``: 60 cards (the
    3 UAs among them or not, R1), 3 different UAs, at least ``min_pillars`` Pillars, at
    most ``max_freedom`` Freedom cards and ``max_bills`` Bills (one copy each), at most
    ``max_rares`` Rares besides the UAs, at most ``max_copies_attack_defense`` of each
    Attack and Defense, and a card of each Branch. A deck style weighs the Orders (some
    decks are all Attacks, some all Bills ...); ``dominant`` forces one Order to dominate,
    ``verb`` favours cards holding an effect of that verb."""
    cards = catalog.cards
    by_type: dict[str, list] = {t: [c for c in cards if c.type == t] for t in enums.CARD_TYPES}
    slots = DECK_SIZE - N_UAS if profile["deck_includes_uas"] else DECK_SIZE
    counts: dict[str, int] = {}
    state = {"rares": 0}

    def can_add(card) -> bool:
        n = counts.get(card.name, 0)
        if card.rarity == "rare" and state["rares"] >= profile["max_rares"]:
            return False
        if card.type in ("freedom", "bill"):
            limit = profile["max_freedom" if card.type == "freedom" else "max_bills"]
            used = sum(counts[c.name] for c in by_type[card.type] if c.name in counts)
            return n == 0 and used < limit
        if card.type in ("attack", "defense"):
            return n < profile["max_copies_attack_defense"]
        return True

    def add(card) -> None:
        counts[card.name] = counts.get(card.name, 0) + 1
        if card.rarity == "rare":
            state["rares"] += 1

    for ua in src.shuffled(by_type["ua"])[:N_UAS]:
        counts[ua.name] = 1
    # Pillars: at least the minimum; a handful of names, any copies (Art. V §5 limits only
    # Attacks and Defenses).
    n_pillars = min(slots, profile["min_pillars"] + src.pick((0, src.integer(0, 8),
                                                               src.integer(0, slots))))
    favourites = [src.pick(by_type["pillar"]) for _ in range(src.integer(1, 5))]
    other = slots - n_pillars  # non-Pillar slots left
    # Branches the deck still lacks get a card first (Art. V §6, R5; its UAs' Branches
    # count only while R54's switch lets them).
    uas_count = profile["branch_counts_uas"]
    missing = [b for b in enums.BRANCHES
               if not any(cards[catalog.by_name[n]].branch == b
                          and (uas_count or cards[catalog.by_name[n]].type != "ua")
                          for n in counts)]
    for branch in missing:
        pool = [c for c in cards if c.branch == branch and c.type != "ua" and can_add(c)
                and (c.type == "pillar" or other > 0)]
        card = src.pick(pool)
        add(card)
        if card.type == "pillar" and n_pillars > 0:
            n_pillars -= 1
        else:
            other -= 1
    for _ in range(n_pillars):
        card = src.pick(favourites)
        if not can_add(card):
            card = src.pick([c for c in by_type["pillar"] if can_add(c)])
        add(card)
    # The rest by the deck's style: a weight per Order, sometimes one Order dominant.
    weights = [src.integer(0, 10) for _ in PLAYABLE]
    if dominant is not None:
        weights[PLAYABLE.index(dominant)] += 80
    elif src.chance(0.3):
        weights[src.integer(0, len(PLAYABLE) - 1)] += 60
    if sum(weights) == 0:
        weights[1] = 1
    names_of = {}
    for t in PLAYABLE:
        pool = by_type[t]
        if verb is not None and src.chance(0.8):
            pool = [c for c in pool if any(e.verb == verb for e in c.all_effects())] or pool
        names_of[t] = src.shuffled(pool)[: len(pool) if t == dominant else src.integer(1, 12)]
    for _ in range(other):
        card = None
        for _try in range(4):
            card_type = PLAYABLE[src.weighted(weights)]
            pool = [c for c in names_of[card_type] if can_add(c)]
            if pool:
                card = src.pick(pool)
                break
        if card is None:  # nothing of the style fits: a Pillar always does
            card = src.pick([c for c in by_type["pillar"] if can_add(c)])
        add(card)
    return counts


def deck_list(src: Source, counts: dict[str, int], name: str, policy: str) -> str:
    """A deck list of ``counts`` in the text format, written as people write them:
    ``4 Name`` or ``4x Name``, comments, blank lines, a card split over two lines."""
    lines = [f"Name: {name}"] if src.chance(0.9) else []
    if policy != "balanced" or src.chance(0.5):  # no header: balanced
        lines.append(f"{src.pick(('Policy', 'policy', 'POLICY'))}: {policy}")
    for card, n in src.shuffled(list(counts.items())):
        if src.chance(0.05):
            lines.append(src.pick(("", "# a comment", "   ", "#")))
        parts = [n]
        if n > 1 and src.chance(0.1):
            k = src.integer(1, n - 1)
            parts = [k, n - k]
        for k in parts:
            x = src.pick(("", "", "", "x", "X"))
            tail = src.pick(("", "", "  ", " # why", "\t#note"))
            lines.append(f"{k}{x} {card}{tail}")
    return "\n".join(lines) + src.pick(("\n", "", "\r\n"))


def gen_field_style(src: Source, catalog, theme: Theme = Theme()
                    ) -> tuple[str | None, str | None]:
    """(dominant Order, favoured verb) shared by every deck of a field, or (None, None):
    fields where every deck is all Attacks, or all healing, reach corners that a field of
    mixed decks does not (many Attacks in play at once, LP far above its start)."""
    if theme.dominant or theme.verb:
        return theme.dominant, theme.verb
    if not src.chance(0.4):
        return None, None
    dominant = src.pick(PLAYABLE) if src.chance(0.7) else None
    verbs = sorted({e.verb for c in catalog.cards for e in c.all_effects()})
    verb = src.pick(verbs) if verbs and src.chance(0.6) else None
    return dominant, verb


def gen_policy(src: Source) -> str:
    """One of the built-in pilots (the random one too)."""
    return src.pick(POLICY_NAMES)


# ----------------------------------------------------------------------- hypothesis


def catalogs(max_cards: int = 40):
    """A hypothesis strategy of catalog tables (``gen_catalog``)."""
    from hypothesis import strategies as st

    from rnr_sim.checks.fuzz.source import HypothesisSource

    return st.composite(lambda draw: gen_catalog(HypothesisSource(draw), max_cards))()


def profiles():
    """A hypothesis strategy of rules switches (``gen_profile``)."""
    from hypothesis import strategies as st

    from rnr_sim.checks.fuzz.source import HypothesisSource

    return st.composite(lambda draw: gen_profile(HypothesisSource(draw)))()


def cases(max_cards: int = 40, max_decks: int = 4):
    """A hypothesis strategy of whole fuzz cases (``play.build_case``): catalog, profile,
    decks and policies, loaded through the project's own readers."""
    from hypothesis import strategies as st

    from rnr_sim.checks.fuzz.play import build_case
    from rnr_sim.checks.fuzz.source import HypothesisSource

    return st.composite(lambda draw: build_case(HypothesisSource(draw), seed=0,
                                                max_cards=max_cards,
                                                max_decks=max_decks))()
