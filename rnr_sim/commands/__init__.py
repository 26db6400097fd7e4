"""CLI subcommands: each module declares its own (``options.command``) and is listed in
``rnr_sim.cli``."""
