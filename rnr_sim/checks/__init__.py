"""The ``rnr-sim check`` commands' work, in one place: does the tool tell the truth?

``coverage`` (with ``discovery_coverage`` and ``power_coverage``): how often each kind of
interval the tool reports covers the truth, measured; ``fuzz``: random legal catalogs,
decks and rules played with every invariant checked; ``kill``: runs killed at random
moments write the same run dir once finished; ``pilots``: the heuristic pilots' wasted plays
read from replays. They play games through the play pipeline (``rnr_sim.runs``); nothing
else imports them but their commands (``rnr_sim.commands.check_*``).
"""
