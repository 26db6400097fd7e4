"""The ``check`` command group: standing checks of the tool itself, run at scale outside
``make test`` (a small deterministic version of each runs inside it).

Each check lives in its own module of ``CHECK_MODULES``, which declares it
(``commands.options.command``).
"""

from __future__ import annotations

from rnr_sim.commands import options as opt

#: Modules that declare ``check`` subcommands, in the order of the group's help.
CHECK_MODULES: list[str] = ["rnr_sim.commands.check_fuzz", "rnr_sim.commands.check_coverage",
                             "rnr_sim.commands.check_pilots", "rnr_sim.commands.check_kill"]


opt.group("check", CHECK_MODULES, module=__name__,
          help="Standing checks of the tool itself (fuzzing, interval coverage), run at scale.")
