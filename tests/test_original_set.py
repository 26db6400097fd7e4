"""The shipped Original Set (rnr_sim/data/original.toml: 355 cards over foundation.toml), the
Frontier sample expansion over it, and the expansion's sample decks (decks/expansion/).
Catalog and deck code only, no engine."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from rnr_sim import enums
from rnr_sim.cards import DEFAULT_CATALOG, FOUNDATION_CATALOG, load_catalog
from rnr_sim.decks import is_legal, load_deck, validate_deck
from rnr_sim.rules import default_profile

DATA = DEFAULT_CATALOG.parent
ORIGINAL = DATA / "original.toml"
FRONTIER = DATA / "expansion_frontier.toml"
EXPANSION_DECKS = sorted((Path(__file__).resolve().parent.parent / "decks" / "expansion")
                         .glob("*.txt"))
FOUNDATION_SET, ORIGINAL_SET, FRONTIER_SET = "Foundation Sample", "Original Set", "Frontier"
N_FOUNDATION, N_ORIGINAL = 153, 355
BUILT_IN_POLICIES = {"balanced", "aggro", "mill", "breaker", "petition"}
NEW_VERB = "heal per pillar"
RANK = {r: i for i, r in enumerate(enums.RARITIES)}
TABLE_HEAD = ("total", *enums.RARITIES, *enums.BRANCHES)


@pytest.fixture(scope="module")
def original():
    return load_catalog(ORIGINAL)


@pytest.fixture(scope="module")
def frontier():
    return load_catalog(FRONTIER)


def stated_mix(path: Path) -> dict[str, dict[str, object]]:
    """The mix table of the file's header comment: for each Order (and ``total``), its
    counts by the columns of ``TABLE_HEAD`` and its ``costs`` ({IP cost: cards}, none for UAs)."""
    rows: dict[str, dict[str, object]] = {}
    row = re.compile(r"#\s+(\w+)\s+((?:\d+\s+){7}\d+)\s*(.*)$")
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break  # the header ends at the first line that is not a comment
        m = row.match(line)
        if m and m.group(1) in (*enums.CARD_TYPES, "total"):
            figures = map(int, m.group(2).split())
            counts: dict[str, object] = dict(zip(TABLE_HEAD, figures, strict=True))
            counts["costs"] = {int(k): int(v) for k, v in re.findall(r"(\d+):(\d+)", m.group(3))}
            rows[m.group(1)] = counts
    return rows


def mix_of(cards) -> dict[str, object]:
    """The same figures, counted from the cards."""
    out: dict[str, object] = {"total": len(cards)}
    out.update({r: sum(c.rarity == r for c in cards) for r in enums.RARITIES})
    out.update({b: sum(c.branch == b for c in cards) for b in enums.BRANCHES})
    out["costs"] = dict(Counter(c.cost for c in cards)) if cards[0].type != "ua" else {}
    return out


# ---------------------------------------------------------------------------- base set


def test_the_original_set_has_355_cards_over_the_153_of_the_foundation(original):
    assert len(original.cards) == N_ORIGINAL
    assert original.sets == (FOUNDATION_SET, ORIGINAL_SET)
    assert Counter(c.set for c in original.cards) == {FOUNDATION_SET: N_FOUNDATION,
                                                      ORIGINAL_SET: N_ORIGINAL - N_FOUNDATION}


def test_the_mix_stated_in_the_header_is_the_mix_of_the_cards(original):
    stated = stated_mix(ORIGINAL)
    assert set(stated) == {*enums.CARD_TYPES, "total"}
    for order in enums.CARD_TYPES:
        assert stated[order] == mix_of([c for c in original.cards if c.type == order]), order
    total = mix_of(original.cards)
    total.pop("costs")
    assert {k: v for k, v in stated["total"].items() if k != "costs"} == total


def test_the_stated_mix_follows_the_constitution(original):
    """The reading in the header: Freedom cards all Rare (Art. IV §6), Rare the smallest
    tier, Pillars free (Amend. VIII), every Branch at least a fifth of the set (Art. V §6)."""
    stated = stated_mix(ORIGINAL)
    assert stated["freedom"]["rare"] == stated["freedom"]["total"]
    assert stated["total"]["rare"] < stated["total"]["uncommon"] < stated["total"]["common"]
    assert stated["pillar"]["costs"] == {0: stated["pillar"]["total"]}
    assert all(stated["total"][b] >= N_ORIGINAL // 5 for b in enums.BRANCHES)
    assert all(stated[t]["total"] >= 4 * 6 for t in enums.CARD_TYPES)  # 6+ a Branch each


def test_every_verb_trigger_and_keyword_of_the_grammar_is_in_the_set(original):
    effects = [e for c in original.cards for e in c.all_effects()]
    used_verbs = {e.verb for e in effects}
    assert set(enums.VERBS) - {"none", NEW_VERB} <= used_verbs
    assert {e.trigger for e in effects} == set(enums.TRIGGERS)
    assert {k for c in original.cards for k in c.keywords} == set(enums.KEYWORDS)
    assert any(c.kicker is not None for c in original.cards)


def test_the_new_cards_alone_use_every_verb_and_keyword_too(original):
    new = [c for c in original.cards if c.set == ORIGINAL_SET]
    assert {e.verb for c in new for e in c.all_effects()} >= set(enums.VERBS) - {"none", NEW_VERB}
    assert {k for c in new for k in c.keywords} == set(enums.KEYWORDS)


def test_the_foundation_cards_are_kept_card_for_card(original):
    foundation = load_catalog(FOUNDATION_CATALOG)
    assert original.cards[:N_FOUNDATION] == foundation.cards  # Card equality: every field
    assert [c.set for c in original.cards[:N_FOUNDATION]] == [FOUNDATION_SET] * N_FOUNDATION
    assert (original.compile()[:N_FOUNDATION] == foundation.compile()).all()
    assert not any(c.errata for c in original.cards)


def test_every_demo_deck_stays_legal_with_the_same_card_ids(original):
    """The Original Set is every command's default catalog (issue 41): the sample decks,
    built from its base, the Foundation Sample, are legal in it with the same card ids."""
    assert load_catalog().sha256 == original.sha256 and DEFAULT_CATALOG.name == "original.toml"
    foundation, profile = load_catalog(FOUNDATION_CATALOG), default_profile()
    for path in sorted((DATA.parent.parent / "decks").glob("*.txt")):
        deck = load_deck(path, original)
        assert is_legal(validate_deck(deck, original, profile)), path.name
        assert deck.card_ids.tolist() == load_deck(path, foundation).card_ids.tolist()


def _profile(card) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = Counter()
    for e in card.all_effects():
        out[(e.trigger, e.verb)] += e.amount
    return out


def at_least_as_good(a, b) -> bool:
    """``a`` is at least as good as ``b`` for its controller: same Order, cost and keywords,
    no kicker, every stat and every effect of ``b`` matched or bettered (a UA: DP no lower,
    drain no higher)."""
    if (a.type, a.cost, set(a.keywords)) != (b.type, b.cost, set(b.keywords)) \
            or a.kicker is not None or b.kicker is not None:
        return False
    pa, pb = _profile(a), _profile(b)
    if any(pa.get(k, 0) < n for k, n in pb.items()):
        return False
    if a.type == "ua":
        return a.dp >= b.dp and a.drain <= b.drain
    return a.ip >= b.ip and a.damage >= b.damage and a.dp >= b.dp


def new_dominations(cards, new_set: str) -> list[str]:
    """Each card of ``new_set`` strictly better than a card of the same Order and cost at
    its own or a higher rarity, where no Foundation card of its rarity already is."""
    foundation = [c for c in cards if c.set == FOUNDATION_SET]
    out = []
    for n in (c for c in cards if c.set == new_set):
        for o in cards:
            if o is n or RANK[n.rarity] > RANK[o.rarity] or not at_least_as_good(n, o) \
                    or at_least_as_good(o, n):
                continue
            if not any(f is not o and RANK[f.rarity] <= RANK[n.rarity] and at_least_as_good(f, o)
                       for f in foundation):
                out.append(f"{n.name} > {o.name}")
    return out


def test_no_new_card_strictly_beats_a_card_of_its_cost_and_rarity(original, frontier):
    assert new_dominations(original.cards, ORIGINAL_SET) == []
    assert new_dominations(frontier.cards, FRONTIER_SET) == []


def test_the_dominance_check_catches_a_card_above_the_curve(original):
    """The check above can fail: a 2-IP common Attack of 6 damage beats one on file."""
    from dataclasses import replace
    rifle = next(c for c in original.cards if c.name == "Rifle Company")
    assert new_dominations([*original.cards, replace(rifle, name="Too Good", damage=6)],
                           ORIGINAL_SET) != []


# ---------------------------------------------------------------------------- expansion


def test_the_expansion_loads_over_the_base_as_its_own_set_of_about_60_cards(frontier, original):
    assert frontier.sets == (FOUNDATION_SET, ORIGINAL_SET, FRONTIER_SET)
    new = [c for c in frontier.cards if c.set == FRONTIER_SET]
    assert 55 <= len(new) <= 70
    assert len(frontier.cards) == N_ORIGINAL + len(new)
    assert frontier.cards[:N_ORIGINAL] == original.cards
    assert {c.branch for c in new} == set(enums.BRANCHES)
    assert {c.type for c in new} == set(enums.CARD_TYPES)
    # Its header's mix line: "Mix: pillar 12, rights 14, ...".
    mix = re.search(r"^# Mix: (.*?);", FRONTIER.read_text(encoding="utf-8"), re.M)
    assert mix is not None
    stated = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", mix.group(1))}
    assert stated == dict(Counter(c.type for c in new))


def test_the_expansion_introduces_a_verb_the_base_set_does_not_use(frontier, original):
    """Issue: an expansion "that introduces at least one new verb ... through the grammar":
    ``heal per pillar`` is in the grammar, no base card uses it, and the expansion's do."""
    assert NEW_VERB in enums.VERBS
    assert NEW_VERB not in {e.verb for c in original.cards for e in c.all_effects()}
    new = [c for c in frontier.cards if c.set == FRONTIER_SET]
    assert sum(any(e.verb == NEW_VERB for e in c.all_effects()) for c in new) >= 5
    assert "heal per pillar N" in FRONTIER.read_text(encoding="utf-8")  # its spec


@pytest.mark.parametrize("path", EXPANSION_DECKS, ids=lambda p: p.stem)
def test_each_expansion_deck_is_legal_and_draws_on_the_base_and_the_expansion(path, frontier):
    deck = load_deck(path, frontier)
    assert validate_deck(deck, frontier, default_profile()) == []  # no warning either
    assert deck.policy in BUILT_IN_POLICIES
    sets = {frontier.set_of(int(i)) for i in deck.card_ids}
    assert {ORIGINAL_SET, FRONTIER_SET} <= sets


def test_there_are_four_expansion_decks_one_for_each_policy_of_a_path(frontier):
    assert len(EXPANSION_DECKS) == 4
    policies = {load_deck(p, frontier).policy for p in EXPANSION_DECKS}
    assert policies == {"aggro", "mill", "breaker", "petition"}
