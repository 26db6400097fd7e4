"""CLI subcommands: each module exposes ``register(app)`` and is listed in ``rnr_sim.cli``."""
