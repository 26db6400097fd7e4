"""The fuzzer: random legal catalogs, rules profiles, decks and policies, played through
the real engine with its invariant checks on, every game's record checked.

Modules: ``source`` (where choices come from: a seeded numpy generator, or hypothesis),
``strategies`` (generators drawn from the contracts), ``play`` (a case from a seed, its
games, a whole run), ``check`` (what every record must satisfy, and determinism).
The command is ``rnr-sim check fuzz`` (``commands/check_fuzz.py``); docs/fuzzing.md.
"""
