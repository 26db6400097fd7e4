"""The evaluation service's checkpoints (``BatchStore``) on the engine stand-in: a call
played and stored is read back with its wall time, counted on the bar or not as the caller
asks; a changed fingerprint, a broken part, the store removed."""

from __future__ import annotations

import hashlib
import json

import fake_engine
import numpy as np
import pytest

from rnr_sim import enums
from rnr_sim.errors import InputError
from rnr_sim.runs.evaluation import BatchStore, Evaluator, Matchups, Pool, first_difference


class Bar:
    """A progress stand-in: the games it is told of."""

    def __init__(self):
        self.games = []

    def open(self):
        pass

    def update(self, games):
        self.games.append(games)

    def note(self, message):
        pass


POOL = Pool(cards=np.zeros((1, enums.N_CARD_COLS), dtype=np.int32),
            rules=np.zeros(1, dtype=np.int64),
            deck_cards=np.zeros((3, enums.MAX_SLOTS), dtype=np.int32),
            deck_size=np.full(3, 4, np.int32), policies=fake_engine.policy_table())
GAMES = Matchups([0, 0], [0, 5], [1, 2], [1, 2], [7, 8], first_deal=3, deals=5)


def test_a_stored_call_is_read_back_with_its_wall_time(tmp_path):
    store = BatchStore(tmp_path / "ckpt")
    store.open({"--seed": 7}, resume=False)
    bar = Bar()
    with Evaluator(fake_engine, store=store, progress=bar) as ev:
        played = ev.play(POOL, GAMES, 7, key="call-00000")
    assert bar.games == [GAMES.games] and played.seconds > 0 and store.has("call-00000")

    store.open({"--seed": 7}, resume=True)
    for count, told in ((True, [GAMES.games]), (False, [])):
        bar = Bar()
        with Evaluator(fake_engine, store=store, progress=bar, count_stored=count) as ev:
            kept = ev.play(POOL, GAMES, 7, key="call-00000")
        assert ev.games_played == 0 and ev.games_stored == GAMES.games and bar.games == told
        assert kept.seconds == played.seconds
        assert np.array_equal(kept.score, played.score)

    store.remove()
    assert not store.root.exists()


def test_a_changed_fingerprint_is_refused_naming_the_difference(tmp_path):
    sha = hashlib.sha256(b"deck").hexdigest()
    store = BatchStore(tmp_path / "ckpt")
    store.open({"--seed": 7, f"the deck list {tmp_path}/a.txt": sha}, resume=False)
    with pytest.raises(InputError) as e:
        store.open({"--seed": 8, f"the deck list {tmp_path}/a.txt": sha}, resume=True)
    assert "the stopped run had --seed 7, now 8; --resume with the inputs" in str(e.value)
    assert f"delete {store.root} to start over" in str(e.value)
    assert json.loads((store.root / BatchStore.PLAN).read_text())["--seed"] == 7
    # a SHA-256 is named by its first 12 digits
    other = hashlib.sha256(b"edited").hexdigest()
    assert first_difference({"f": sha}, {"f": other}) == f"f {sha[:12]}…, now {other[:12]}…"
    # a search's budget (discover, balance, power): what to give is said
    searched = BatchStore(tmp_path / "search")
    searched.open({"seed": 5, "budget": 200_000}, resume=False)
    with pytest.raises(InputError) as e:
        searched.open({"seed": 5, "budget": 2_000_000}, resume=True)
    assert ("had budget 200000, now 2000000; --resume with the inputs it was started with "
            "(here: --budget 200000), or delete") in str(e.value)


def test_a_broken_part_is_one_line_saying_to_delete_it(tmp_path):
    store = BatchStore(tmp_path / "ckpt")
    store.open({}, resume=False)
    store.path("call-00000").write_bytes(b"not parquet")
    with pytest.raises(InputError, match="cannot read .*delete it and resume"):
        store.get("call-00000", GAMES.shape)


def test_what_each_seat_saw_is_kept_and_a_part_without_it_is_played_again(tmp_path):
    """``seen=True`` (balance's ``iwd_max``): each seat's slots seen (opening hand or
    drawn), the subject's seat first, stored with the call and read back; a part stored
    without them is not taken for one that has them."""
    store = BatchStore(tmp_path / "ckpt")
    store.open({"--seed": 7}, resume=False)
    with Evaluator(fake_engine, store=store) as ev:
        plain = ev.play(POOL, GAMES, 7, key="plain")
    with Evaluator(fake_engine, store=store, seen=True) as ev:
        saw = ev.play(POOL, GAMES, 7, key="saw")
        assert ev.play(POOL, GAMES, 7, key="plain").seen is not None
        assert ev.games_played == 2 * GAMES.games  # "plain" lacked them: played again
    assert plain.seen is None and saw.seen.shape == (*GAMES.shape, 2)
    rec = GAMES.inputs().play(fake_engine, POOL.cards, POOL.deck_cards, POOL.deck_size,
                              POOL.rules, 7, policies=POOL.policies)
    want = (rec.opening_mask | rec.drawn_mask).reshape(*GAMES.shape, 2)
    assert np.array_equal(saw.seen, want) and saw.seen.any()
    store.open({"--seed": 7}, resume=True)
    with Evaluator(fake_engine, store=store, seen=True) as ev:
        kept = ev.play(POOL, GAMES, 7, key="saw")
    assert ev.games_played == 0 and np.array_equal(kept.seen, saw.seen)
