"""The compiled catalog: int32[n_cards, N_CARD_COLS] laid out by the C_* / E_* constants."""

from __future__ import annotations

import numpy as np

from rnr_sim import enums
from rnr_sim.cards import load_catalog


def slot(row: np.ndarray, e: int) -> np.ndarray:
    base = enums.C_EFF0 + e * enums.EFF_STRIDE
    return row[base:base + enums.EFF_STRIDE]


def test_compile_shape_and_dtype(tiny):
    table = tiny.compile()
    assert table.dtype == np.int32
    assert table.shape == (len(tiny.cards), enums.N_CARD_COLS)


def test_compile_matches_records_column_by_column(tiny):
    table = tiny.compile()
    for i, card in enumerate(tiny.cards):
        row = table[i]
        assert row[enums.C_TYPE] == enums.CARD_TYPES.index(card.type)
        assert row[enums.C_BRANCH] == enums.BRANCHES.index(card.branch)
        assert row[enums.C_RARITY] == enums.RARITIES.index(card.rarity)
        assert row[enums.C_COST] == card.cost
        assert row[enums.C_IP] == card.ip
        assert row[enums.C_DAMAGE] == card.damage
        assert row[enums.C_DP] == card.dp
        assert row[enums.C_DRAIN] == card.drain
        assert row[enums.C_KEYWORDS] == sum(enums.KEYWORDS[k] for k in card.keywords)
        effects = list(card.effects) + ([card.kicker] if card.kicker else [])
        assert row[enums.C_N_EFFECTS] == len(effects)
        for e in range(enums.MAX_EFFECTS):
            s = slot(row, e)
            if e < len(effects):
                eff = effects[e]
                assert s[enums.E_TRIGGER] == enums.TRIGGERS.index(eff.trigger)
                assert s[enums.E_VERB] == enums.VERBS.index(eff.verb)
                assert s[enums.E_AMOUNT] == eff.amount
                assert s[enums.E_COST] == eff.cost
                assert s[enums.E_KICKER] == (1 if eff is card.kicker else 0)
            else:
                assert not s.any()
                assert s[enums.E_VERB] == enums.V_NONE


def test_compile_art4_s6_kicker_takes_the_slot_after_the_cards_effects(tiny):
    row = tiny.compile()[tiny.by_name["Paul Revere"]]
    assert list(slot(row, 0)) == [enums.TRIG_ON_RESOLVE, enums.V_DRAW, 2, 0, 0]
    assert list(slot(row, 1)) == [enums.TRIG_ON_RESOLVE, enums.V_FORCE_DRAW, 2, 2, 1]


def test_compile_art7_s6_activate_cost(tiny):
    row = tiny.compile()[tiny.by_name["Samuel Adams"]]
    assert list(slot(row, 0)) == [enums.TRIG_ON_RESOLVE, enums.V_DESTROY_PETITION, 1, 0, 0]
    assert list(slot(row, 1)) == [enums.TRIG_ACTIVATE, enums.V_HEAL, 2, 1, 0]


def test_compile_keywords_bit_mask(tiny):
    table = tiny.compile()
    assert table[tiny.by_name["Right to Assemble"], enums.C_KEYWORDS] == (
        enums.KW_PETITION | enums.KW_PROTECT)
    assert table[tiny.by_name["Musket Skirmish"], enums.C_KEYWORDS] == enums.KW_ONE_SHOT
    assert table[tiny.by_name["Town Hall"], enums.C_KEYWORDS] == 0


def test_compile_tutor_pillar_amount_is_one(tiny):
    row = tiny.compile()[tiny.by_name["Postal Act"]]
    assert list(slot(row, 0)) == [enums.TRIG_ON_RESOLVE, enums.V_TUTOR_PILLAR, 1, 0, 0]


def test_compile_derived_columns_of_a_kicker_card(tiny):
    """Paul Revere: draw 2 on resolve, kicker force draw: both at step vi (R13)."""
    row = tiny.compile()[tiny.by_name["Paul Revere"]]
    assert row[enums.C_RESOLVE_STEPS] == 1 << enums.STEP_EFFECTS
    assert row[enums.C_TURN_STEPS] == 0
    assert row[enums.C_FLAGS] == 0


def test_compile_derived_columns_of_an_activate_card(tiny):
    """Samuel Adams: destroy petition on resolve (step vi), activate heal (step iv); an
    activate effect makes it lasting (R27); a policy's value of a heal reads the Pillars
    and the queued heals, and of a destroy petition the queued ones (VERB_TABLE)."""
    row = tiny.compile()[tiny.by_name["Samuel Adams"]]
    assert row[enums.C_RESOLVE_STEPS] == 1 << enums.STEP_EFFECTS
    assert row[enums.C_TURN_STEPS] == 1 << enums.STEP_HEAL
    assert row[enums.C_FLAGS] == enums.CF_ACTIVATE | enums.CF_LASTING | \
        enums.CF_LASTING_KICKED | enums.CF_VALUE_READS_PILLARS | enums.CF_VALUE_READS_QUEUE


def test_compile_derived_columns_restate_every_sample_card():
    """Each derived column equals a direct reading of the card's effects."""
    sample_catalog = load_catalog()
    table = sample_catalog.compile()
    steps = {"lp": 3, "strike": 3, "strike ua": 3, "heal": 4}
    for i, card in enumerate(sample_catalog.cards):
        effects = [(e, False) for e in card.effects] + ([(card.kicker, True)] if card.kicker else [])
        resolve = turn = flags = 0
        for eff, kicker in effects:
            bit = 1 << steps.get(eff.verb, 6)
            if eff.trigger == "on_resolve":
                resolve |= bit
                if eff.verb in ("ip", "ip per pillar") and not kicker:
                    flags |= enums.CF_IP_ON_RESOLVE
            elif eff.trigger == "on_destroy":
                flags |= enums.CF_ON_DESTROY
            else:
                flags |= enums.CF_LASTING_KICKED
                if not kicker:
                    flags |= enums.CF_LASTING
                if eff.trigger == "activate":
                    turn |= bit
                    if not kicker:
                        flags |= enums.CF_ACTIVATE
                elif eff.verb in ("ip", "ip per pillar"):
                    flags |= enums.CF_EACH_TURN_IP
                else:
                    turn |= bit
        if card.type == "pillar" or "petition" in card.keywords or any(
                e.verb in ("tutor pillar", "ip per pillar", "heal", "heal per pillar")
                for e in card.effects):
            flags |= enums.CF_VALUE_READS_PILLARS
        if any(e.verb in ("heal", "heal per pillar", "repair", "recover", "destroy petition")
               for e in card.effects):
            flags |= enums.CF_VALUE_READS_QUEUE
        row = table[i]
        assert (row[enums.C_RESOLVE_STEPS], row[enums.C_TURN_STEPS], row[enums.C_FLAGS]) == (
            resolve, turn, flags), card.name
