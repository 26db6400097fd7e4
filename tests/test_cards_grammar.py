"""The effect grammar `[trigger:] verb [target] N` (docs/design.md): every verb with every trigger."""

from __future__ import annotations

import pytest

from rnr_sim import enums
from rnr_sim.cards import CARD_VERBS, GrammarError, parse_effect

TRIGGERS = [
    ("", "on_resolve", 0),
    ("each turn: ", "each_turn", 0),
    ("activate 2: ", "activate", 2),
    ("on destroy: ", "on_destroy", 0),
]


def test_grammar_verbs_are_the_design_table():
    assert CARD_VERBS == (
        "lp", "strike", "strike ua", "heal", "draw", "force draw", "mill", "exile",
        "discard", "ip", "repair", "destroy petition", "recover", "tutor pillar",
        "ip per pillar", "heal per pillar",
    )
    assert CARD_VERBS == enums.VERBS[1:]


@pytest.mark.parametrize("prefix,trigger,cost", TRIGGERS, ids=[t[1] for t in TRIGGERS])
@pytest.mark.parametrize("verb", CARD_VERBS)
def test_grammar_every_verb_with_every_trigger(verb, prefix, trigger, cost):
    body = verb if verb == "tutor pillar" else f"{verb} 3"
    source = prefix + body
    effect = parse_effect(source)
    assert effect.trigger == trigger
    assert effect.verb == verb
    assert effect.amount == (1 if verb == "tutor pillar" else 3)
    assert effect.cost == cost
    assert effect.source == source
    assert effect.verb_id == enums.VERBS.index(verb)
    assert effect.trigger_id == enums.TRIGGERS.index(trigger)
    assert effect.describe() == source  # the normal form reads back as written
    assert parse_effect(effect.describe()) == effect


def test_grammar_case_and_spaces_are_forgiven():
    effect = parse_effect("  Activate  0 :  Strike   UA  7 ")
    assert (effect.trigger, effect.cost, effect.verb, effect.amount) == (
        "activate", 0, "strike ua", 7)
    assert effect.describe() == "activate 0: strike ua 7"


def test_grammar_strike_ua_is_not_strike():
    assert parse_effect("strike ua 4").verb == "strike ua"
    assert parse_effect("strike 4").verb == "strike"
    assert parse_effect("force draw 2").verb == "force draw"
    assert parse_effect("draw 2").verb == "draw"


@pytest.mark.parametrize(
    "source,fragment",
    [
        ("zap 3", "unknown verb 'zap'; valid verbs: lp N, strike N"),
        ("sometimes: lp 1", "unknown trigger 'sometimes:'"),
        ("activate: draw 1", "'activate' needs its IP cost K"),
        ("activate x: draw 1", "the activate cost K must be a whole number, not 'x'"),
        ("draw", "'draw' takes one whole number N"),
        ("draw 1 2", "'draw' takes one whole number N"),
        ("draw two", "N of 'draw' must be a whole number, not 'two'"),
        ("lp 0", "N of 'lp' must be at least 1, not 0"),
        ("lp -2", "N of 'lp' must be a whole number"),
        ("heal 2000000", "must be at most 1000000"),
        ("tutor pillar 2", "'tutor pillar' takes no number"),
        ("", "empty effect"),
    ],
)
def test_grammar_errors_quote_the_string_and_say_why(source, fragment):
    with pytest.raises(GrammarError) as e:
        parse_effect(source)
    assert fragment in str(e.value)
    assert f'"{source}"' in str(e.value)


def test_grammar_unknown_verb_lists_every_valid_verb():
    with pytest.raises(GrammarError) as e:
        parse_effect("each turn: plunder 2")
    for verb in CARD_VERBS:
        assert verb in str(e.value)


def test_grammar_effect_must_be_a_string():
    with pytest.raises(GrammarError, match="an effect is a string"):
        parse_effect(3)  # type: ignore[arg-type]
