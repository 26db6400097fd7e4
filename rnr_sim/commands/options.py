"""Option types several subcommands share, declared once: the same flag, metavar and help
wherever it appears."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

#: The exit code of a command stopped by Ctrl-C (128 + SIGINT, the shell's convention).
EXIT_INTERRUPTED = 130

#: ``--cards``, repeatable: later files layer over earlier ones, in order (docs/design.md,
#: "Layered catalogs"). ``None`` when not given: the shipped sample; a list otherwise, which
#: ``load_catalog`` takes as it is.
CardsOption = Annotated[
    list[Path] | None,
    typer.Option("--cards", metavar="PATH", show_default=False,
                 help="Card catalog TOML; give it again to layer an expansion over a base "
                 "(later files add cards and errata). Default: the shipped Foundation "
                 "sample set."),
]
RulesOption = Annotated[
    Path | None,
    typer.Option("--rules", metavar="PATH", show_default=False,
                 help="Rules profile TOML setting any switches. Default: constitution."),
]
PlayersOption = Annotated[
    int | None,
    typer.Option("--players", metavar="P", show_default=False,
                 help="Players per table: 2, 3 or 4. Default: 2."),
]
ThreadsOption = Annotated[
    int | None,
    typer.Option("--threads", "-t", metavar="N", show_default=False,
                 help="Engine threads. Default: all cores. Results do not depend on it."),
]
BackendOption = Annotated[
    str,
    typer.Option("--backend", metavar="local|ray",
                 help="Where the games are played: here (local), or as Ray tasks (ray; "
                 "needs pip install 'rnr-sim[ray]'). Results do not depend on it."),
]
AddressOption = Annotated[
    str | None,
    typer.Option("--address", metavar="ADDR", show_default=False,
                 help="With --backend ray: the Ray cluster to join (auto, ray://host:10001). "
                 "Default: start a local Ray for this command and stop it after."),
]
ReportDirOption = Annotated[
    Path | None,
    typer.Option("--report", metavar="DIR", show_default=False,
                 help="Report folder. Default: reports/<name of --out>."),
]
NoReportOption = Annotated[
    bool, typer.Option("--no-report", help="Skip the HTML report."),
]
