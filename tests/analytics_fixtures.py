"""Synthetic run dirs for the analytics and report tests (no engine needed).

``tiny_run`` writes ten hand-made games whose every metric is worked out by hand in
``TINY`` below; ``random_run`` writes a larger, seeded random run (vectorised, so it
also builds the 1M-game benchmark run in a scratch folder).

The tiny run
------------
Decks (4 slots each; slot k is bit k of the masks)::

    Alpha (bison):  0 Bison Pillar, 1 Bison Pillar, 2 Minuteman Volley, 3 Tea & <Crates>
    Beta  (scroll): 0 Scroll Pillar, 1 Scroll Pillar, 2 Petition of Right, 3 Never Drawn
    Gamma (eagle):  0 Eagle Pillar, 1 Eagle Pillar, 2 Tea & <Crates>, 3 Minuteman Volley

Gamma never plays. Table 0 is Alpha (seat 0) vs Beta (seat 1), four deals, each played
with first_seat 0 then 1; table 1 is the mirror Alpha vs Alpha, one deal::

    game table deal first winner path      turns  p2_right (second seat)
    0    0     0    0     0      life      20     yes
    1    0     0    1     0      attack    30
    2    0     1    0     0      life      24     yes
    3    0     1    1     1      petition  40
    4    0     2    0     1      petition  36     yes
    5    0     2    1     0      deck_out  50
    6    0     3    0     0      life      18
    7    0     3    1     -1     draw      200
    8    1     0    0     0      life      22
    9    1     0    1     1      life      26     yes
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

GAMES_SCHEMA = {
    "game_id": pl.Int64, "table_id": pl.Int32, "deal": pl.Int64, "n_players": pl.Int8,
    "first_seat": pl.Int8, "winner_seat": pl.Int8, "path": pl.String, "turns": pl.Int32,
}
SEATS_SCHEMA = {
    "game_id": pl.Int64, "seat": pl.Int8, "deck": pl.String, "policy": pl.String,
    "won": pl.Boolean, "is_first": pl.Boolean, "final_lp": pl.Int32, "uas_lost": pl.Int8,
    "petitions": pl.Int8, "scroll_pillars": pl.Int8, "mulligan": pl.Boolean,
    "p2_right": pl.Boolean, "opening_mask": pl.UInt64, "drawn_mask": pl.UInt64,
    "played_mask": pl.UInt64,
}
DECKS_SCHEMA = {"deck": pl.String, "slot": pl.Int16, "card": pl.String}

TINY_CATALOG = [  # name, type, branch, rarity
    ("Bison Pillar", "pillar", "bison", "common"),
    ("Minuteman Volley", "attack", "bison", "common"),
    ("Tea & <Crates>", "freedom", "eagle", "rare"),
    ("Scroll Pillar", "pillar", "scroll", "common"),
    ("Petition of Right", "rights", "scroll", "uncommon"),
    ("Never Drawn", "defense", "scroll", "common"),
    ("Eagle Pillar", "pillar", "eagle", "common"),
]
TINY_DECKS = {
    "Alpha": ["Bison Pillar", "Bison Pillar", "Minuteman Volley", "Tea & <Crates>"],
    "Beta": ["Scroll Pillar", "Scroll Pillar", "Petition of Right", "Never Drawn"],
    "Gamma": ["Eagle Pillar", "Eagle Pillar", "Tea & <Crates>", "Minuteman Volley"],
}

# game, table, deal, first, winner, path, turns, p2_right on the second seat
TINY_GAMES = [
    (0, 0, 0, 0, 0, "life", 20, True),
    (1, 0, 0, 1, 0, "attack", 30, False),
    (2, 0, 1, 0, 0, "life", 24, True),
    (3, 0, 1, 1, 1, "petition", 40, False),
    (4, 0, 2, 0, 1, "petition", 36, True),
    (5, 0, 2, 1, 0, "deck_out", 50, False),
    (6, 0, 3, 0, 0, "life", 18, False),
    (7, 0, 3, 1, -1, "draw", 200, False),
    (8, 1, 0, 0, 0, "life", 22, False),
    (9, 1, 0, 1, 1, "life", 26, True),
]
TINY_TABLES = {0: ("Alpha", "Beta"), 1: ("Alpha", "Alpha")}

# (game, seat) -> (opening, drawn, played) masks; every other seat saw nothing.
B = [1 << k for k in range(4)]
TINY_MASKS = {
    # Alpha: Volley (slot 2) in the opening hand in games 0-2, drawn later in 3 and 9;
    # Bison Pillar (slots 0, 1): slot 0 opening + slot 1 drawn in game 0 (OH, not GD),
    # slot 1 drawn in game 1 (GD).
    (0, 0): (B[2] | B[0], B[1], B[2]),
    (1, 0): (B[2], B[1], B[2]),
    (2, 0): (B[2], 0, 0),
    (3, 0): (0, B[2], B[2]),
    (8, 1): (0, B[2], 0),
    # Beta: Scroll Pillar slot 0 in every opening hand; Petition drawn (and played) in 3, 4.
    **{(g, 1): (B[0], B[2] if g in (3, 4) else 0, B[2] if g in (3, 4) else 0)
       for g in range(8)},
}

# Known answers, worked out by hand from the tables above.
TINY = {
    "alpha_games": 12, "alpha_wins": 7, "alpha_draws": 1,
    "alpha_turns": (22.0, 26.0, 37.0),  # q1, median, q3 of 18,20,22,22,24,26,26,30,36,40,50,200
    "alpha_paths": {"life": 5, "attack": 1, "petition": 0, "deck_out": 1},
    "beta_games": 8, "beta_wins": 2,
    "ab_win_rate": 0.625, "ab_first": 0.75, "ab_second": 0.5, "ba_win_rate": 0.25,
    "overall_paths": {"life": 5, "attack": 1, "petition": 2, "deck_out": 1},
    "overall_wins": 9, "overall_draws": 1,
    "first_wins": 6, "games": 10, "mirror_first_wins": 2, "mirror_games": 2,
    "p2_used": (3, 4), "p2_declined": (3, 6),
    # Volley, pooled over Alpha (12 rows; Gamma never plays)
    "volley": {"held": 12, "oh": (3, 3), "gd": (0, 2), "gih": (3, 5), "gns": (4, 7),
               "played": (2, 3)},
    "bison_pillar": {"oh": (1, 1), "gd": (1, 1), "gih": (2, 2), "gns": (5, 10)},
}


def _write(root: Path, games: pl.DataFrame, seats: pl.DataFrame, decks: dict[str, list[str]],
           catalog: list[tuple[str, str, str, str]], manifest: dict, parts: int = 1,
           lp: pl.DataFrame | None = None) -> Path:
    (root / "games").mkdir(parents=True, exist_ok=True)
    (root / "seats").mkdir(parents=True, exist_ok=True)
    ids = games["game_id"].to_numpy()
    edges = np.linspace(ids.min(initial=0), ids.max(initial=0) + 1, parts + 1).astype(np.int64)
    for i in range(parts):
        lo, hi = int(edges[i]), int(edges[i + 1])
        games.filter(pl.col("game_id").is_between(lo, hi, closed="left")).write_parquet(
            root / "games" / f"part-{i:05d}.parquet")
        seats.filter(pl.col("game_id").is_between(lo, hi, closed="left")).write_parquet(
            root / "seats" / f"part-{i:05d}.parquet")
    pl.DataFrame(
        [(d, s, c) for d, cards in decks.items() for s, c in enumerate(cards)],
        schema=DECKS_SCHEMA, orient="row",
    ).write_parquet(root / "decks.parquet")
    pl.DataFrame(
        {
            "id": [f"c{i:03d}" for i in range(len(catalog))],
            "name": [c[0] for c in catalog],
            "type": [c[1] for c in catalog],
            "branch": [c[2] for c in catalog],
            "rarity": [c[3] for c in catalog],
            "cost": [1] * len(catalog),
            "ip": [0] * len(catalog),
            "damage": [0] * len(catalog),
            "dp": [0] * len(catalog),
            "drain": [0] * len(catalog),
            "keywords": [[] for _ in catalog],
            "effects": [[] for _ in catalog],
            "text": [""] * len(catalog),
        },
        schema_overrides={"keywords": pl.List(pl.String), "effects": pl.List(pl.String)},
    ).write_parquet(root / "cards.parquet")
    if lp is not None:
        lp.write_parquet(root / "lp_curves.parquet")
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return root


def _manifest(decks: list[str], tables: list[list[str]], games: int, seed: int = 7,
              rules_changed: dict | None = None) -> dict:
    switches = {"p2_free_pillar": "any", "turn_limit": 200, "attack_lifetime": "persistent"}
    switches.update(rules_changed or {})
    return {
        "tool_version": "0.1.0",
        "created": "2025-01-01T00:00:00Z",
        "seed": seed,
        "games_requested": games,
        "games_done": games,
        "players": 2,
        "mirrors": any(len(set(t)) == 1 for t in tables),
        "rules": {"name": "variant" if rules_changed else "constitution",
                  "source": "rules/variant.toml" if rules_changed else None,
                  "switches": switches},
        "rules_changed": rules_changed or {},
        "catalog": {"name": "Foundation <Sample>", "version": "1", "path": "cards.toml",
                    "sha256": "ab" * 32},
        "decks": [{"name": d, "path": f"decks/{d.lower()}.txt", "sha256": f"{i:02d}" * 32,
                   "policy": "default", "main_branch": None} for i, d in enumerate(decks)],
        "tables": tables,
        "policies": ["default"],
        "timings": {"total_s": 1.0},
        "chunks": {"complete": [0]},
    }


def tiny_run(root: Path) -> Path:
    """Write the hand-made run described in the module docstring to ``root``."""
    games = pl.DataFrame(
        [(g, t, d, 2, f, w, p, n) for g, t, d, f, w, p, n, _ in TINY_GAMES],
        schema=GAMES_SCHEMA, orient="row",
    )
    rows = []
    for g, t, _d, f, w, _p, _n, p2 in TINY_GAMES:
        for seat, deck in enumerate(TINY_TABLES[t]):
            o, dr, pl_ = TINY_MASKS.get((g, seat), (0, 0, 0))
            rows.append((g, seat, deck, "default", w == seat, f == seat, 50, 0, 0, 0, False,
                         p2 and seat != f, o, dr, pl_))
    seats = pl.DataFrame(rows, schema=SEATS_SCHEMA, orient="row")
    manifest = _manifest(list(TINY_DECKS), [list(v) for v in TINY_TABLES.values()], 10)
    return _write(root, games, seats, TINY_DECKS, TINY_CATALOG, manifest)


@dataclass
class RandomSpec:
    """A seeded random two-player run: round robin of ``decks`` (plus mirrors), each deal
    played in both seat orders. ``star`` is a card that adds ``star_edge`` to its deck's
    win chance when seen; ``strength`` shifts each deck's win chance."""

    deals: int = 50
    decks: tuple[str, ...] = ("Alpha", "Beta", "Gamma", "Delta")
    mirrors: bool = True
    seed: int = 1
    first_edge: float = 0.05
    star: str = "Tea & <Crates>"
    star_edge: float = 0.15
    strength: tuple[float, ...] = (0.08, 0.0, -0.04, -0.08)
    draw_rate: float = 0.01
    parts: int = 1
    lp_games: int = 0  # traced games written to lp_curves.parquet
    extra_decks: tuple[str, ...] = ()  # decks listed but never played
    rules_changed: dict | None = None  # switches off their default, for the manifest


BRANCH_CARDS = {
    "bison": ["Bison Pillar", "Minuteman Volley", "Liberty Tree", "Stamp Act Riot"],
    "eagle": ["Eagle Pillar", "Eagle Eye", "Tea & <Crates>", "Watchful Eagle"],
    "liberty_bell": ["Bell Pillar", "Ring the Bell", "Bell Tower", "Town Crier"],
    "scroll": ["Scroll Pillar", "Petition of Right", "Never Drawn", "Bill of Grievances"],
}
RANDOM_CATALOG = [
    (name, "pillar" if "Pillar" in name else "attack", branch, "common")
    for branch, names in BRANCH_CARDS.items() for name in names
]


def random_deck(i: int, star: str) -> list[str]:
    """A 60-slot deck: 45 slots of its main branch, 15 of the next; the star card in slot 59
    of every deck whose branch holds it (and in deck 0)."""
    branches = list(BRANCH_CARDS)
    main, other = BRANCH_CARDS[branches[i % 4]], BRANCH_CARDS[branches[(i + 1) % 4]]
    cards = [main[k % 4] for k in range(45)] + [other[k % 4] for k in range(15)]
    if i == 0:
        cards[59] = star
    return cards


def _bits(rng: np.random.Generator, n: int, p: float | np.ndarray) -> np.ndarray:
    """uint64[n] with each of the 60 low bits set independently with probability p
    (a scalar, or one probability per row)."""
    out = np.empty(n, dtype=np.uint64)
    step = 200_000
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        pp = np.asarray(p, dtype=np.float32)
        pp = pp[lo:hi].reshape(-1, 1) if pp.ndim else pp
        b = np.zeros((hi - lo, 64), dtype=bool)
        b[:, :60] = rng.random((hi - lo, 60), dtype=np.float32) < pp
        out[lo:hi] = np.packbits(b, axis=1, bitorder="little").view("<u8").ravel()
    return out


def random_run(root: Path, spec: RandomSpec | None = None) -> Path:
    """Write a seeded random run (see RandomSpec) to ``root``; games chunked into parts."""
    spec = spec or RandomSpec()
    rng = np.random.default_rng(spec.seed)
    names = list(spec.decks)
    decks = {d: random_deck(i, spec.star) for i, d in enumerate(names + list(spec.extra_decks))}
    strength = dict(zip(names, spec.strength, strict=False))
    tables = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    if spec.mirrors:
        tables += [(a, a) for a in names]
    n_games = len(tables) * spec.deals * 2
    t_idx = np.repeat(np.arange(len(tables)), spec.deals * 2)
    deal = np.tile(np.repeat(np.arange(spec.deals), 2), len(tables))
    first = np.tile(np.array([0, 1]), len(tables) * spec.deals)
    deck_of = np.array([[a, b] for a, b in tables])[t_idx]  # [n_games, 2]
    strength_arr = np.vectorize(lambda d: strength.get(d, 0.0))(np.array(names))
    s_idx = {d: i for i, d in enumerate(names)}
    si = np.vectorize(s_idx.get)(deck_of)

    opening = _bits(rng, 2 * n_games, 7 / 57)
    turns = np.clip(rng.gamma(6.0, 4.5, n_games).astype(np.int32) + 6, 4, 199)
    p_drawn = np.clip(np.repeat(turns, 2) / 2 / 50, 0.02, 0.9)
    drawn = _bits(rng, 2 * n_games, p_drawn) & ~opening
    played = (opening | drawn) & _bits(rng, 2 * n_games, 0.6)
    star_slots = np.zeros(2 * n_games, dtype=np.uint64)
    for d, cards in decks.items():
        m = 0
        for k, c in enumerate(cards):
            if c == spec.star:
                m |= 1 << k
        if m and d in s_idx:
            star_slots[deck_of.ravel() == d] = np.uint64(m)
    seen_star = (((opening | drawn) & star_slots) != 0).reshape(n_games, 2)

    edge0 = (strength_arr[si[:, 0]] - strength_arr[si[:, 1]]
             + np.where(first == 0, spec.first_edge, -spec.first_edge)
             + spec.star_edge * (seen_star[:, 0].astype(float) - seen_star[:, 1]))
    p0 = np.clip(0.5 + edge0, 0.02, 0.98)
    u = rng.random(n_games)
    draw = rng.random(n_games) < spec.draw_rate
    winner = np.where(draw, -1, np.where(u < p0, 0, 1)).astype(np.int8)
    branch_of = {d: list(BRANCH_CARDS)[i % 4] for i, d in enumerate(names)}
    pref = {"bison": [0.55, 0.2, 0.1, 0.15], "eagle": [0.3, 0.2, 0.1, 0.4],
            "liberty_bell": [0.3, 0.5, 0.1, 0.1], "scroll": [0.3, 0.15, 0.45, 0.1]}
    paths = np.array(["life", "attack", "petition", "deck_out"])
    wdeck = deck_of[np.arange(n_games), np.maximum(winner, 0)]
    probs = np.array([pref[branch_of[d]] for d in names])[np.vectorize(s_idx.get)(wdeck)]
    cum = probs.cumsum(axis=1)
    path = paths[(rng.random((n_games, 1)) > cum).sum(axis=1).clip(0, 3)]
    path = np.where(winner == -1, "draw", path)
    turns = np.where(winner == -1, 200, turns).astype(np.int32)

    games = pl.DataFrame({
        "game_id": np.arange(n_games, dtype=np.int64), "table_id": t_idx.astype(np.int32),
        "deal": deal.astype(np.int64), "n_players": np.full(n_games, 2, np.int8),
        "first_seat": first.astype(np.int8), "winner_seat": winner, "path": path,
        "turns": turns,
    }, schema=GAMES_SCHEMA)
    seat = np.tile(np.array([0, 1], dtype=np.int8), n_games)
    gid = np.repeat(np.arange(n_games, dtype=np.int64), 2)
    p2 = (seat != np.repeat(first, 2)) & (rng.random(2 * n_games) < 0.7)
    seats = pl.DataFrame({
        "game_id": gid, "seat": seat, "deck": deck_of.ravel(),
        "policy": np.where(seat == 0, "default", "aggro"),
        "won": np.repeat(winner, 2) == seat, "is_first": np.repeat(first, 2) == seat,
        "final_lp": rng.integers(0, 100, 2 * n_games, dtype=np.int32),
        "uas_lost": rng.integers(0, 4, 2 * n_games, dtype=np.int8),
        "petitions": rng.integers(0, 4, 2 * n_games, dtype=np.int8),
        "scroll_pillars": rng.integers(0, 4, 2 * n_games, dtype=np.int8),
        "mulligan": rng.random(2 * n_games) < 0.1, "p2_right": p2,
        "opening_mask": opening, "drawn_mask": drawn, "played_mask": played,
    }, schema=SEATS_SCHEMA)
    lp = None
    if spec.lp_games:
        traced = games.head(spec.lp_games)
        rows = []
        for g, t, _, _, _, w, _, n in traced.iter_rows():
            for s in (0, 1):
                life = 100 - np.cumsum(rng.integers(0, 9, int(n)))
                life = np.maximum(life, 0 if w not in (s, -1) else 1)
                for k in range(int(n)):
                    rows.append((g, t, k + 1, s, tables[t][s], int(life[k])))
        lp = pl.DataFrame(rows, schema={"game_id": pl.Int64, "table_id": pl.Int32,
                                        "turn": pl.Int32, "seat": pl.Int8, "deck": pl.String,
                                        "lp": pl.Int32}, orient="row")
    manifest = _manifest(list(decks), [list(t) for t in tables], n_games, seed=spec.seed,
                         rules_changed=spec.rules_changed)
    manifest["chunks"] = {"complete": list(range(spec.parts))}
    catalog = RANDOM_CATALOG
    return _write(root, games, seats, decks, catalog, manifest, parts=spec.parts, lp=lp)


def multiplayer_run(root: Path, deals: int = 6, seed: int = 2) -> Path:
    """A random three-player run: tables (Alpha, Beta, Beta), (Alpha, Beta, Gamma) and the
    mirror (Gamma, Gamma, Gamma); each deal played in all three first-seat rotations."""
    rng = np.random.default_rng(seed)
    tables = [("Alpha", "Beta", "Beta"), ("Alpha", "Beta", "Gamma"), ("Gamma",) * 3]
    games, seats = [], []
    gid = 0
    for t, decks in enumerate(tables):
        for deal in range(deals):
            for first in range(3):
                winner = int(rng.integers(-1, 3)) if rng.random() < 0.1 else int(rng.integers(0, 3))
                path = "draw" if winner == -1 else str(rng.choice(
                    ["life", "attack", "petition", "deck_out"]))
                games.append((gid, t, deal, 3, first, winner, path, int(rng.integers(10, 60))))
                for s, d in enumerate(decks):
                    o = int(_bits(rng, 1, 0.12)[0])
                    dr = int(_bits(rng, 1, 0.3)[0]) & ~o
                    seats.append((gid, s, d, "default", winner == s, first == s, 10, 0, 0, 0,
                                  False, s == (first + 1) % 3 and rng.random() < 0.5,
                                  o, dr, (o | dr) & int(_bits(rng, 1, 0.5)[0])))
                gid += 1
    g = pl.DataFrame(games, schema=GAMES_SCHEMA, orient="row")
    s = pl.DataFrame(seats, schema=SEATS_SCHEMA, orient="row")
    decks = {d: random_deck(i, "Tea & <Crates>") for i, d in enumerate(("Alpha", "Beta", "Gamma"))}
    manifest = _manifest(list(decks), [list(t) for t in tables], len(games), seed=seed)
    manifest["players"] = 3
    return _write(root, g, s, decks, RANDOM_CATALOG, manifest)
