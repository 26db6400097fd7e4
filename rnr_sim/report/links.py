"""Links between report pages: where a run's other pages sit, and the "Card power" link.

The convention (reports/README.md, "Pages beside the run report"): the folder of a run's
report is the hub, and the pages of the searches about the same cards are written into it
as sub-folders named by their kind, as ``make demo`` does::

    reports/demo/index.html            rnr-sim report runs/demo --out reports/demo
    reports/demo/discovery/index.html  rnr-sim report DISCOVERY_DIR --out reports/demo/discovery
    reports/demo/balance/index.html    rnr-sim report BALANCE_DIR --out reports/demo/balance
    reports/demo/power/index.html      rnr-sim report POWER_DIR --out reports/demo/power

The run report's card section links to ``power/index.html``; a page written inside a run
report's folder (its parent holds the run report's ``report.json``) links to its sibling
``../power/index.html``; a discovery page standing alone, to its own ``power/`` sub-folder.

Whether that page exists is decided when the page is opened, not when it is written: the
run report is written first (its folder must be new or its own, ``build._earlier_files``),
the Card power page after it, maybe days later. So the link is in the page, hidden, and a
few lines of the page's one inline script (``PROBE_SCRIPT``) show it once the Card power
page's figure, ``power/plots/power.png``, loads. A page opened from ``file://`` may load an
image beside it where a script may not read the file; the probe is the only file a page
asks for, and nothing leaves the machine. Without the Card power page, nothing shows.
"""

from __future__ import annotations

import html
from pathlib import Path

#: The Card power page's sub-folder of the hub, and the file the link waits for.
POWER_DIR = "power"
POWER_PROBE = "plots/power.png"
#: The run report's own record (``build.MARKER``; not imported: build imports this module).
RUN_REPORT_MARKER = "report.json"

#: Show ``#power-link`` once its ``data-probe`` image loads (the page exists).
PROBE_SCRIPT = """(function () {
  var link = document.getElementById("power-link");
  if (!link) { return; }
  var probe = new Image();
  probe.onload = function () { link.hidden = false; };
  probe.src = link.getAttribute("data-probe");
})();"""


def hub_prefix(out: str | Path) -> str:
    """The relative path from the page written in ``out`` to the hub: ``"../"`` when
    ``out``'s parent holds a run report, else ``""`` (``out`` is the hub)."""
    return "../" if (Path(out).resolve().parent / RUN_REPORT_MARKER).is_file() else ""


def power_link_html(prefix: str = "") -> str:
    """The hidden "Card power" link of a page whose hub is ``prefix`` (``hub_prefix``)
    away. The page's script must include ``PROBE_SCRIPT``, which shows it when the Card
    power page is there (one inline script a page: the run report's test holds it to it)."""
    page = html.escape(f"{prefix}{POWER_DIR}/index.html", quote=True)
    probe = html.escape(f"{prefix}{POWER_DIR}/{POWER_PROBE}", quote=True)
    return (f'<p class="note" id="power-link" data-probe="{probe}" hidden>What each card is '
            f'worth when it is swapped into the decks, on the same deals: <a href="{page}">'
            "Card power</a>.</p>")
