"""The search pilot (engine/search.py): it never reads hidden cards, a game with search
pilots is the same for any thread count, a game resumes from a copied state exactly, and
the search takes a winning action when one exists."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rnr_sim import enums as E

REPO = Path(__file__).resolve().parent.parent
DECKS = sorted((REPO / "decks").glob("*.txt"))


@pytest.fixture(scope="module")
def eng():
    """The sample decks' engine arrays and the engine modules (compiled on first use)."""
    from rnr_sim.engine import driver
    from rnr_sim.runs import planning

    plan = planning.plan_run(planning.RunOptions(decks=DECKS, games=2, seed=1))
    plan.compile(driver)
    driver.prepare_cache()
    from rnr_sim.engine import batch, game, layout, search

    return plan, driver, batch, game, layout, search


def _state(eng, decks=(0, 1), policies=None, turns=4, seed=11, start_turn=True):
    """A game of two sample decks set up and played ``turns`` turns by their pilots, the
    next seat's Draw and Independence Phases done: (t, g, memo, acts, seat to move)."""
    plan, driver, batch, game, L, search = eng
    from rnr_sim.engine.decisions import MEMO_WIDTH
    from rnr_sim.engine.policies import N_WEIGHTS

    w = np.zeros((E.MAX_PLAYERS, N_WEIGHTS))
    for q, d in enumerate(decks):
        row = plan.deck_policy[d] if policies is None else policies[q]
        w[q] = plan.policy_table[row] if np.ndim(row) == 0 else row
    t = L.Table(plan.cards, plan.rules, w)
    g = L.Game(*batch.new_state(), np.zeros((0, L.TRACE_WIDTH), dtype=np.int32))
    memo = np.zeros((E.MAX_PLAYERS, MEMO_WIDTH))
    acts = np.zeros((L.MAX_ACTIONS, L.ACT_WIDTH), dtype=np.int64)
    dc = np.ascontiguousarray(plan.deck_cards[list(decks)])
    ds = np.ascontiguousarray(plan.deck_size[list(decks)])
    game.setup_game(t, g, dc, ds, 2, 0, np.uint64(seed), 0, 0)
    p = game.play_from(t, g, memo, acts, 0, turns)
    assert p >= 0 and g.game[L.G_OVER] == 0
    if start_turn:
        assert game.turn_start(t, g, p)
    return t, g, memo, acts, p


def _seat_zero_to_move_holding(eng, wanted):
    """The first sample deck that holds a card of ``wanted`` against the next deck, both
    played by the random pilot for 2 or 3 turns until seat 0 is to move: (deck, t, g,
    memo, acts, p)."""
    plan = eng[0]
    from rnr_sim.engine.policies import POLICIES

    deck = next(d for d in range(len(DECKS))
                if wanted & set(plan.deck_cards[d, : plan.deck_size[d]].tolist()))
    rnd = POLICIES["random"]
    for turns in (2, 3):
        t, g, memo, acts, p = _state(eng, decks=(deck, (deck + 1) % len(DECKS)),
                                     policies=(rnd, rnd), turns=turns)
        if p == 0:
            break
    assert p == 0
    return deck, t, g, memo, acts, p


def _scratch(eng):
    plan, driver, batch, game, L, search = eng
    from rnr_sim.engine.search_batch import search_state

    n_decks = len(eng[0].deck_cards)
    spl, ssl, sls, sgm, smasks, srng, smemo, sacts, vals, _kn, know, post = search_state(
        1, n_decks)
    sg = L.Game(spl[0], ssl[0], sls[0], sgm[0], smasks[0], srng[0],
                np.zeros((0, L.TRACE_WIDTH), dtype=np.int32))
    return sg, smemo[0], sacts[0], vals[0], know[0], post[0]


def _clone(g, memo, L):
    return L.Game(*(a.copy() for a in g)), memo.copy()


def _decide(eng, t, g, memo, acts, p, k=4, n=2, key=99, gate=0, open_lists=1):
    """The search pilot's first decision of ``p``'s Play Phase: (pick, n, the options'
    values, the legal actions); by default issue 12's flat Monte-Carlo (no gate, open
    lists)."""
    plan, search = eng[0], eng[5]
    sg, smemo, sacts, vals, know, post = _scratch(eng)
    budget = np.array([k, n, gate, open_lists], dtype=np.int64)
    pick, n_acts = search.search_decision(t, g, memo, acts, p, sg, smemo, sacts, vals, budget,
                                          plan.deck_cards, plan.deck_size, know, post,
                                          np.uint64(key))
    return pick, n_acts, vals[: n_acts + 1].copy(), acts[:n_acts].copy()


def test_search_never_reads_hidden_cards(eng):
    """Two states that differ only in what the searching seat cannot see (which of the
    opponent's cards are in hand and which in its Draw Pile, the order of both Draw
    Piles, every random stream) give the same choice with the same option values."""
    L = eng[4]
    t, g, memo, acts, p = _state(eng)
    q = 1 - p
    g2, memo2 = _clone(g, memo, L)
    pl, sl, ls = g2.players, g2.slots, g2.lists
    hand = ls[q, L.L_HAND, : pl[q, L.P_N_HAND]]
    draw = ls[q, L.L_DRAW, : pl[q, L.P_N_DRAW]]
    cards_of = lambda idx: sorted(sl[q, s, L.S_CARD] for s in idx)  # noqa: E731
    j = next(j for j in range(len(draw)) if sl[q, draw[j], L.S_CARD] != sl[q, hand[0], L.S_CARD])
    before = cards_of(hand)
    hand[0], draw[j] = draw[j], hand[0]
    sl[q, hand[0], L.S_ZONE], sl[q, draw[j], L.S_ZONE] = L.Z_HAND, L.Z_DRAW
    draw[:] = draw[::-1].copy()
    own = ls[p, L.L_DRAW, : pl[p, L.P_N_DRAW]]
    own[:] = own[::-1].copy()
    g2.rng[:] = g2.rng + np.uint64(12345)
    assert cards_of(ls[q, L.L_HAND, : pl[q, L.P_N_HAND]]) != before  # the hidden hand differs
    a = _decide(eng, t, g, memo, acts, p)
    b = _decide(eng, t, g2, memo2, np.zeros_like(acts), p)
    assert a[1] > 0
    assert a[0] == b[0] and a[1] == b[1]
    np.testing.assert_array_equal(a[2], b[2])
    np.testing.assert_array_equal(a[3], b[3])


def test_the_tie_break_leaves_the_pilot_memory_alone(eng):
    """The search asks its rollout pilot's own pick (the tie-break) on a copy: the real
    memory gets neither the card values that pick noted nor what it would have queued
    (``decisions.note_queued``) when the search takes no action. After a decision, the
    seat's hand values are as the Play Phase's start left them (not noted) and nothing is
    queued."""
    from rnr_sim.engine.decisions import PM_QUEUED0, PM_VALUE0

    L = eng[4]
    t, g, memo, acts, p = _state(eng)
    pick, n, _vals, _rows = _decide(eng, t, g, memo, acts, p)
    assert n > 0
    hand = g.lists[p, L.L_HAND, : g.players[p, L.P_N_HAND]]
    assert np.isnan(memo[p, PM_VALUE0 + hand]).all()
    assert (memo[p, PM_QUEUED0: PM_QUEUED0 + E.N_VERBS] == 0).all()


def test_determinize_deals_anew_only_what_the_seat_cannot_see(eng):
    """Art. VI §1 (the Draw Pile is private), §7 (a hand is private, its size public): the
    search's determinization redeals each opponent's hand and Draw Pile together, hand
    sizes kept, and reshuffles the seat's own Draw Pile; the seat's hand (in order), every
    open zone and every count are as they were, and the cards of each pool are the same
    cards. Some seeds deal an opponent another hand (so the checks could fail)."""
    from rnr_sim.engine import state_api

    L = eng[4]
    t, g, memo, acts, p = _state(eng)
    sg, smemo, _sacts, _vals, _know, _post = _scratch(eng)
    pl, sl = g.players, g.slots
    hidden = (L.Z_HAND, L.Z_DRAW)

    def pool(gg, q):
        return sorted(int(gg.slots[q, s, L.S_CARD]) for s in range(pl[q, L.P_DECK_SIZE])
                      if gg.slots[q, s, L.S_ZONE] in hidden)

    def listed(gg, q, lst, count):
        return [int(s) for s in gg.lists[q, lst, : gg.players[q, count]]]

    redealt = 0
    for seed in range(8):
        state_api.clone(g, memo, sg, smemo)
        state_api.determinize(sg, smemo, p, np.uint64(1000 + seed), np.uint64(seed))
        np.testing.assert_array_equal(sg.players, g.players)  # every count, hand sizes too
        for q in range(g.game[L.G_N_PLAYERS]):
            open_zones = [s for s in range(pl[q, L.P_DECK_SIZE]) if sl[q, s, L.S_ZONE] not in hidden]
            for s in open_zones:
                np.testing.assert_array_equal(sg.slots[q, s], sl[q, s])
            assert listed(sg, q, L.L_BOARD, L.P_N_BOARD) == listed(g, q, L.L_BOARD, L.P_N_BOARD)
            assert pool(sg, q) == pool(g, q)
            if q == p:
                assert listed(sg, q, L.L_HAND, L.P_N_HAND) == listed(g, q, L.L_HAND, L.P_N_HAND)
            elif sorted(listed(sg, q, L.L_HAND, L.P_N_HAND)) != \
                    sorted(listed(g, q, L.L_HAND, L.P_N_HAND)):
                redealt += 1
    assert redealt > 0


def test_own_hand_is_seen(eng):
    """The search does read what its seat may see: a state with another own hand gives
    other options (so the test above could fail)."""
    L = eng[4]
    t, g, memo, acts, p = _state(eng)
    g2, memo2 = _clone(g, memo, L)
    pl, sl, ls = g2.players, g2.slots, g2.lists
    hand = ls[p, L.L_HAND, : pl[p, L.P_N_HAND]]
    draw = ls[p, L.L_DRAW, : pl[p, L.P_N_DRAW]]
    for i in range(len(hand)):
        hand[i], draw[i] = draw[i], hand[i]
        sl[p, hand[i], L.S_ZONE], sl[p, draw[i], L.S_ZONE] = L.Z_HAND, L.Z_DRAW
    a = _decide(eng, t, g, memo, acts, p)
    b = _decide(eng, t, g2, memo2, np.zeros_like(acts), p)
    assert a[1] != b[1] or not np.array_equal(a[3], b[3]) or not np.array_equal(a[2], b[2])


def test_resuming_from_a_copied_state_gives_the_same_game(eng):
    """A game stopped after 6 turns, copied into scratch and resumed there, ends as the same
    game played straight through (every player field, game field and mask)."""
    plan, driver, batch, game, L, search = eng
    t, g, memo, acts, _ = _state(eng, turns=0, start_turn=False)
    straight, smemo = _clone(g, memo, L)
    game.play_from(t, straight, smemo, acts.copy(), 0, 10_000)
    assert straight.game[L.G_OVER] == 1 and straight.game[L.G_TURN] > 6
    t, g, memo, acts, _ = _state(eng, turns=0, start_turn=False)
    p = game.play_from(t, g, memo, acts, 0, 6)
    assert p >= 0 and g.game[L.G_OVER] == 0
    sg, smemo2, sacts, _vals, _know, _post = _scratch(eng)
    from rnr_sim.engine import state_api

    state_api.clone(g, memo, sg, smemo2)
    g.players[:] = 0  # the original is gone: only the copy can finish the game
    game.play_from(t, sg, smemo2, sacts, p, 10_000)
    for a, b in zip((straight.players, straight.game, straight.masks),
                    (sg.players, sg.game, sg.masks), strict=True):
        np.testing.assert_array_equal(a, b)


def _lethal_position(eng, verb, least):
    """A position where seat 0 (random pilots both) holds a card whose on-resolve effect
    is ``verb`` of at least ``least`` and 40 IP, at 1 LP: its own UAs' drain (step vii,
    R20) ends it unless it wins first. (t, g, memo, acts, lethal card ids)."""
    plan, driver, batch, game, L, search = eng

    cards = plan.cards
    col = lambda e, f: E.C_EFF0 + e * E.EFF_STRIDE + f  # noqa: E731
    lethal = {c for c in range(len(cards)) for e in range(E.MAX_EFFECTS)
              if cards[c, col(e, E.E_VERB)] == verb
              and cards[c, col(e, E.E_TRIGGER)] == E.TRIG_ON_RESOLVE
              and cards[c, col(e, E.E_KICKER)] == 0 and cards[c, col(e, E.E_AMOUNT)] >= least
              and cards[c, E.C_TYPE] not in (E.UA, E.PILLAR)}
    deck, t, g, memo, acts, p = _seat_zero_to_move_holding(eng, lethal)
    pl, sl, ls = g.players, g.slots, g.lists
    draw = ls[p, L.L_DRAW, : pl[p, L.P_N_DRAW]]
    j = next(j for j in range(len(draw)) if sl[p, draw[j], L.S_CARD] in lethal)
    s = draw[j]
    draw[j:-1] = draw[j + 1:].copy()
    pl[p, L.P_N_DRAW] -= 1
    sl[p, s, L.S_ZONE] = L.Z_HAND
    ls[p, L.L_HAND, pl[p, L.P_N_HAND]] = s
    pl[p, L.P_N_HAND] += 1
    pl[p, L.P_IP_OTHER] += 40
    pl[p, L.P_LP] = 1
    return t, g, memo, acts, lethal


def _assert_takes(eng, t, g, memo, acts, lethal):
    """The search plays a card that wins in every rollout (the lethal card, or another
    that wins as surely, e.g. an Attack when the opponent has no Defense), where stopping
    does not; the lethal card's own option wins every rollout too."""
    pick, n, vals, rows = _decide(eng, t, g, memo, acts, 0, k=8, n=2)
    card = [int(g.slots[0, r[eng[4].A_SLOT], eng[4].S_CARD]) for r in rows]
    assert pick >= 0
    assert vals[pick] == 1.0 and vals[n] < 1.0
    assert any(card[i] in lethal and vals[i] == 1.0 for i in range(n))


def test_search_takes_the_lethal_play(eng):
    """LP to 0 (Art. III §1): with the opponent at 2 LP and a card in hand that deals at
    least 2 LP damage, the search pilot (random rollout pilot: nothing else finishes the
    game reliably) plays a lethal card: its option wins every rollout, stopping does not."""
    t, g, memo, acts, lethal = _lethal_position(eng, E.V_LP, 2)
    g.players[1, eng[4].P_LP] = 2
    _assert_takes(eng, t, g, memo, acts, lethal)


def test_search_destroys_the_third_ua(eng):
    """The third UA (Art. III §2): the opponent has lost two UAs and its last one has 1 DP;
    with a card that strikes a UA past Defenses in hand, the search pilot plays one."""
    plan, driver, batch, game, L, search = eng
    t, g, memo, acts, lethal = _lethal_position(eng, E.V_STRIKE_UA, 1)
    pl, sl, ls = g.players, g.slots, g.lists
    uas = [int(s) for s in ls[1, L.L_BOARD, : pl[1, L.P_N_BOARD]]
           if sl[1, s, L.S_ZONE] == L.Z_UA]
    assert len(uas) == pl[1, L.P_N_UAS] - pl[1, L.P_UAS_LOST] >= 1
    for s in uas[:-1]:
        game.leave_play(plan.cards, pl, sl, ls, 1, s, L.Z_DISCARD)
    pl[1, L.P_UAS_LOST] = pl[1, L.P_N_UAS] - 1
    sl[1, uas[-1], L.S_DP] = 1
    _assert_takes(eng, t, g, memo, acts, lethal)


def test_search_finds_the_win_its_pilot_misses(eng):
    """The gate leaves the rollout pilot's pick when an option is better by more than the
    noise: with a lethal card in hand (Art. III §1) and a pilot that never plays (its stop
    threshold at 1e9), the pilot's own pick is stop, a loss to its own UAs' drain; the
    search pilot (default gate, hidden lists) plays a card that wins every rollout."""
    from rnr_sim.engine.decisions import choose_action
    from rnr_sim.engine.policies import W_STOP

    plan, L = eng[0], eng[4]
    t, g, memo, acts, lethal = _lethal_position(eng, E.V_LP, 2)
    g.players[1, L.P_LP] = 2
    t.weights[0] = plan.policy_table[plan.deck_policy[0]]
    t.weights[0, W_STOP] = 1e9
    g2, memo2 = _clone(g, memo, L)
    eng[3].play_phase_start(t, g2, memo2, 0)
    n = eng[3].legal_actions(plan.cards, plan.rules, g2.players, g2.slots, g2.lists, g2.game,
                             0, 0, acts)
    assert n > 0 and choose_action(t, g2, memo2, 0, acts, n) == -1  # the pilot stops
    pick, n, vals, rows = _decide(eng, t, g, memo, acts, 0, k=4, n=2, gate=100, open_lists=0)
    assert pick >= 0 and vals[pick] == 1.0 and vals[n] < 1.0


def _hidden_slots(eng, g, q):
    """The slots of ``q`` whose card no other seat knows (``state_api.identity_known``)."""
    from rnr_sim.engine import state_api

    return [s for s in range(g.players[q, eng[4].P_DECK_SIZE])
            if not state_api.identity_known(g.slots, g.masks, q, s)]


def _deal_seen(eng, g, memo, p, prior, seed):
    """``g`` copied and its hidden cards dealt by ``determinize_seen`` from the lists
    ``prior`` (deck indices) as ``p`` believes them: (the copy, the posterior)."""
    from rnr_sim.engine import state_api

    plan = eng[0]
    cards = np.ascontiguousarray(plan.deck_cards[list(prior)])
    size = np.ascontiguousarray(plan.deck_size[list(prior)])
    know = np.zeros((E.MAX_PLAYERS + 1, len(prior), E.MAX_SLOTS + 1), dtype=np.int64)
    post = np.zeros((E.MAX_PLAYERS, len(prior)))
    g2, memo2 = _clone(g, memo, eng[4])
    state_api.read_opponents(plan.cards, g2, p, cards, size, know, post)
    t = eng[4].Table(plan.cards, plan.rules, np.zeros((E.MAX_PLAYERS, 1)))
    state_api.determinize_seen(t, g2, memo2, p, cards, size, know, post,
                               np.uint64(1000 + seed), np.uint64(seed))
    return g2, post


def test_hidden_lists_never_read_the_hidden_cards(eng):
    """R59, Art. VI §1, §7: with hidden lists the deal of an opponent's hidden cards
    depends only on what the seat has seen: two states whose opponent holds other cards in
    its hand and Draw Pile (every hidden card replaced) are dealt the same cards in the
    same places, and the search pilot makes the same choice with the same values."""
    L = eng[4]
    t, g, memo, acts, p = _state(eng, turns=6)
    q = 1 - p
    hidden = _hidden_slots(eng, g, q)
    assert len(hidden) > 40
    g2, memo2 = _clone(g, memo, L)
    other = g.slots[p, g.lists[p, L.L_HAND, 0], L.S_CARD]  # a card of the seat's own deck
    for s in hidden:
        g2.slots[q, s, L.S_CARD] = other
    for seed in range(4):
        a, post_a = _deal_seen(eng, g, memo, p, range(len(DECKS)), seed)
        b, post_b = _deal_seen(eng, g2, memo2, p, range(len(DECKS)), seed)
        np.testing.assert_array_equal(post_a, post_b)
        np.testing.assert_array_equal(a.slots[q], b.slots[q])
        np.testing.assert_array_equal(a.lists[q], b.lists[q])
    x = _decide(eng, t, g, memo, acts, p, gate=100, open_lists=0)
    y = _decide(eng, t, g2, memo2, np.zeros_like(acts), p, gate=100, open_lists=0)
    assert x[1] > 0 and x[0] == y[0]
    np.testing.assert_array_equal(x[2], y[2])


def test_hidden_lists_deal_only_cards_the_seat_may_believe(eng):
    """R59: every card dealt to an opponent's hidden slot comes from the prior's lists
    (here one list, not the opponent's: none of the opponent's own cards that list lacks
    is dealt), never a UA (Art. IV §3.2); the known cards, the hand size (Art. VI §7), the
    Draw Pile's size and every open zone are kept; every Bill's name slot holds its card
    (Art. IV §7.4)."""
    plan, L = eng[0], eng[4]
    t, g, memo, acts, p = _state(eng, decks=(0, 1), turns=6)
    q = 1 - p
    wrong = 5  # another sample deck
    listed = set(plan.deck_cards[wrong, : plan.deck_size[wrong]].tolist())
    own = set(plan.deck_cards[1, : plan.deck_size[1]].tolist())
    assert own - listed, "the opponent holds cards the prior's list lacks"
    hidden = _hidden_slots(eng, g, q)
    for seed in range(4):
        d, post = _deal_seen(eng, g, memo, p, [wrong], seed)
        assert post[q, 0] == 1.0
        dealt = {int(d.slots[q, s, L.S_CARD]) for s in hidden}
        assert dealt <= listed
        assert all(plan.cards[c, E.C_TYPE] != E.UA for c in dealt)
        for s in range(g.players[q, L.P_DECK_SIZE]):
            if s not in hidden:
                assert d.slots[q, s, L.S_CARD] == g.slots[q, s, L.S_CARD]
            c = d.slots[q, s, L.S_CARD]
            assert d.slots[q, d.slots[q, s, L.S_NAME_SLOT], L.S_CARD] == c
        for f in (L.P_N_HAND, L.P_N_DRAW, L.P_N_BOARD):
            assert d.players[q, f] == g.players[q, f]
        board = g.lists[q, L.L_BOARD, : g.players[q, L.P_N_BOARD]]
        np.testing.assert_array_equal(d.lists[q, L.L_BOARD, : len(board)], board)


def test_the_posterior_finds_the_opponents_list(eng):
    """R59: from the opponent's open cards (its UAs, its Pillars and the cards it played)
    the posterior over the nine sample lists puts the most weight on its true list, and
    sums to 1."""
    t, g, memo, acts, p = _state(eng, decks=(2, 7), turns=6)
    _d, post = _deal_seen(eng, g, memo, p, range(len(DECKS)), 0)
    q = 1 - p
    true = 7 if q == 1 else 2
    assert abs(post[q].sum() - 1.0) < 1e-9
    assert int(np.argmax(post[q])) == true


def test_the_yardstick_pool_puts_a_search_pilot_in_every_seat(eng):
    """``Pool.with_yardstick``: every policy row searches at the default budget (hidden
    lists), its own weights the rollout pilot; its games' records differ from the
    heuristic ones on the same deals (the search changes play) and are the same on 1 and
    2 threads."""
    from rnr_sim.runs.evaluation import Pool
    from rnr_sim.skill import SEARCH_DEFAULT, search_budget

    plan, driver = eng[0], eng[1]
    pool = Pool.of_plan(plan).with_yardstick()
    assert pool.search.shape == (len(plan.policy_table), 4)
    assert (pool.search == search_budget(*SEARCH_DEFAULT)).all()
    n = 8
    seat_deck = np.array([[i % 9, (i + 4) % 9] for i in range(n)], dtype=np.int32)
    seat_policy = plan.deck_policy[seat_deck].astype(np.int32)
    args = (pool.cards, pool.deck_cards, pool.deck_size, seat_deck, seat_policy,
            np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64),
            (np.arange(n) % 2).astype(np.int32), pool.rules, 9)
    plain = driver.play_games(*args, threads=2, policies=pool.policies)
    one = driver.play_games(*args, threads=1, policies=pool.policies, search=pool.search)
    two = driver.play_games(*args, threads=2, policies=pool.policies, search=pool.search)
    from test_engine_golden import records_digest

    assert records_digest(one) == records_digest(two)
    assert records_digest(one) != records_digest(plain)


def test_search_games_are_the_same_for_any_thread_count(eng):
    """Same seeds, same game: search pilots' games give the same records on 1 and 2
    threads (their randomness comes from the game's counter-based streams)."""
    plan, driver = eng[0], eng[1]
    k = len(plan.policy_table)
    table = np.vstack([plan.policy_table, plan.policy_table])
    budget = np.zeros((2 * k, 2), dtype=np.int64)
    budget[k:] = (2, 1)
    n = 6
    seat_deck = np.array([[0, 1 + i % 3] for i in range(n)], dtype=np.int32)
    seat_policy = np.array([[plan.deck_policy[a] + k, plan.deck_policy[b]]
                            for a, b in seat_deck], dtype=np.int32)
    args = (plan.cards, plan.deck_cards, plan.deck_size, seat_deck, seat_policy,
            np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64),
            (np.arange(n) % 2).astype(np.int32), plan.rules, 5)
    one = driver.play_games(*args, threads=1, policies=table, search=budget)
    two = driver.play_games(*args, threads=2, policies=table, search=budget)
    for name in ("winner_seat", "turns", "path"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))


def test_search_plays_the_third_petition(eng):
    """The third Petition (Art. III §3): seat 0 has two Petitions and three Scroll Pillars in
    play, 60 LP and a Petition in hand; playing it wins at step v in every rollout, where
    stopping (random rollout pilots) does not."""
    plan, driver, batch, game, L, search = eng

    cards = plan.cards
    petitions = {c for c in range(len(cards))
                 if cards[c, E.C_KEYWORDS] & E.KW_PETITION and cards[c, E.C_TYPE] == E.RIGHTS}
    scroll = {c for c in range(len(cards))
              if cards[c, E.C_TYPE] == E.PILLAR and cards[c, E.C_BRANCH] == E.SCROLL}
    deck, t, g, memo, acts, p = _seat_zero_to_move_holding(eng, petitions)
    pl, sl, ls = g.players, g.slots, g.lists
    draw = [int(s) for s in ls[0, L.L_DRAW, : pl[0, L.P_N_DRAW]]]
    in_hand = next(s for s in draw if sl[0, s, L.S_CARD] in petitions)
    placed = [s for s in draw if s != in_hand and sl[0, s, L.S_CARD] in petitions][:2]
    assert len(placed) == 2, "the deck holds three Petitions"
    for s in [in_hand, *placed]:
        draw.remove(s)
    pl[0, L.P_N_DRAW] = len(draw)
    ls[0, L.L_DRAW, : len(draw)] = draw
    sl[0, in_hand, L.S_ZONE] = L.Z_HAND
    ls[0, L.L_HAND, pl[0, L.P_N_HAND]] = in_hand
    pl[0, L.P_N_HAND] += 1
    for s in placed:  # two Petitions in the Petition Area (Art. VI §4)
        game.put_in_play(cards, pl, sl, ls, 0, s, L.Z_PETITION)
    need = 3 - pl[0, L.P_N_SCROLL_PILLARS]  # Scroll Pillars from the pile to the Pillar Area
    more = [s for s in draw if sl[0, s, L.S_CARD] in scroll][:max(0, need)]
    assert len(more) == max(0, need), "the deck holds three Scroll Pillars"
    for s in more:
        draw.remove(s)
        game.put_in_play(cards, pl, sl, ls, 0, s, L.Z_PILLAR)
    pl[0, L.P_N_DRAW] = len(draw)
    ls[0, L.L_DRAW, : len(draw)] = draw
    assert pl[0, L.P_N_SCROLL_PILLARS] >= 3 and pl[0, L.P_N_PETITIONS] == 2
    pl[0, L.P_IP_OTHER] += 40
    pl[0, L.P_LP] = 60
    _assert_takes(eng, t, g, memo, acts, {int(sl[0, in_hand, L.S_CARD])})


#: The search games below, pinned as ``test_engine_golden`` pins the heuristic games: a
#: change to the engine's build must leave them as they are; a change to the rules or the
#: search changes them on purpose (then put the new digest here and say so in the commit).
SEARCH_GOLDEN = "ee0f131b203ad23e"


#: The same games with the yardstick's defaults (the gate at z = 1, hidden lists, R59).
YARDSTICK_GOLDEN = "9563cc043423ba53"


@pytest.mark.parametrize(("row", "digest"), [((2, 1, 0, 1), SEARCH_GOLDEN),
                                             ((2, 1), YARDSTICK_GOLDEN)],
                         ids=["issue-12", "yardstick"])
def test_the_search_games_are_the_pinned_games(eng, row, digest):
    """18 games, each sample deck searching (K=2, N=1) against the next one, both seat
    orders: their records hash to ``SEARCH_GOLDEN`` with issue 12's search (no gate, open
    lists: unchanged by issue 40) and to ``YARDSTICK_GOLDEN`` with the defaults."""
    from test_engine_golden import records_digest

    plan, driver = eng[0], eng[1]
    k = len(plan.policy_table)
    table = np.vstack([plan.policy_table, plan.policy_table])
    budget = np.zeros((2 * k, len(row)), dtype=np.int64)
    budget[k:] = row
    n_decks = len(DECKS)
    seat_deck = np.array([[d, (d + 1) % n_decks] for d in range(n_decks) for _ in (0, 1)],
                         dtype=np.int32)
    seat_policy = np.array([[plan.deck_policy[a] + k, plan.deck_policy[b]]
                            for a, b in seat_deck], dtype=np.int32)
    n = len(seat_deck)
    records = driver.play_games(plan.cards, plan.deck_cards, plan.deck_size, seat_deck,
                                seat_policy, np.arange(n, dtype=np.int64),
                                np.arange(n, dtype=np.int64),
                                (np.arange(n) % 2).astype(np.int32), plan.rules, 7,
                                threads=2, policies=table, search=budget)
    assert records_digest(records) == digest, (
        f"the search games changed: {records_digest(records)}; if on purpose, set "
        "the digest to the new one")
