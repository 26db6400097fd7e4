"""Tables a reader sorts by clicking their headers (the Card power page's,
``report/power.py``): plain JavaScript, inline in the page, nothing fetched.

``sortable`` writes the table (each cell with its sort value in ``data-v``), and
``SORT_SCRIPT``, once in the page, makes every ``table.sortable`` sort on a header's click
as the run report's card table does (``build.CARD_SCRIPT``, which also filters).
"""

from __future__ import annotations

from typing import Any

from rnr_sim.report.build import esc

#: Click a header to sort by its column (numbers largest first, again to flip; a row
#: without a value stays last; ties keep the page's order: on the Card power page, sorted
#: by Order, the flagged cards stay first in each). Errors go on the page (#js-errors).
SORT_SCRIPT = """
(function () {
  var errors = document.getElementById("js-errors");
  try {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (t) {
      var body = t.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.forEach(function (r, i) { r.dataset.i = i; });
      function key(row, col) {
        var v = row.cells[col].getAttribute("data-v");
        return v === null || v === "" ? null : v;
      }
      function sortBy(th) {
        var col = th.cellIndex, num = th.getAttribute("data-num") === "1";
        var first = num ? "descending" : "ascending";
        var then = num ? "ascending" : "descending";
        var dir = th.getAttribute("aria-sort") === first ? then : first;
        Array.prototype.forEach.call(t.tHead.rows[0].cells, function (c) {
          c.removeAttribute("aria-sort");
        });
        th.setAttribute("aria-sort", dir);
        var sign = dir === "ascending" ? 1 : -1;
        rows.sort(function (a, b) {
          var x = key(a, col), y = key(b, col);
          if (x === null || y === null) {
            if (x === y) { return a.dataset.i - b.dataset.i; }
            return x === null ? 1 : -1;
          }
          var d = num ? Number(x) - Number(y) : (x < y ? -1 : x > y ? 1 : 0);
          return d !== 0 ? sign * d : a.dataset.i - b.dataset.i;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th) {
        th.tabIndex = 0;
        th.addEventListener("click", function () { sortBy(th); });
        th.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(th); }
        });
      });
      t.setAttribute("data-ready", "1");
    });
  } catch (e) {
    if (errors) { errors.textContent += "error: " + e.message + "\\n"; }
  }
})();
"""


def _v(x: Any) -> str:
    """A cell's sort value (``data-v``): numbers as ``repr``, none as empty."""
    if x is None or (isinstance(x, float) and x != x):
        return ""
    return repr(float(x)) if isinstance(x, (int, float)) else str(x)


class Raw(str):
    """A table cell's text that is HTML already (``sortable`` escapes every other)."""


def sortable(table_id: str, head: list[tuple[str, bool]],
             rows: list[tuple[str, list[tuple[str, Any]]]], left: int | None = None) -> str:
    """A table SORT_SCRIPT sorts: ``head`` (header, numeric), ``rows`` (row class, cells
    of (text, sort value); the text escaped unless ``Raw``). Numeric columns are
    right-aligned but column ``left`` (a sentence sorted by its number)."""
    th = "".join(f'<th data-col="{i}" data-num="{int(num)}">{esc(h)}</th>'
                 for i, (h, num) in enumerate(head))
    body = "".join(
        (f'<tr class="{cls}">' if cls else "<tr>") + "".join(
            f'<td data-v="{esc(_v(v))}"' + (' class="num"' if num and i != left else "")
            + f">{text if isinstance(text, Raw) else esc(text)}</td>"
            for i, ((text, v), (_, num)) in enumerate(zip(cells, head, strict=True)))
        + "</tr>" for cls, cells in rows)
    return (f'<div class="scroll"><table id="{table_id}" class="cards sortable"><thead><tr>'
            f"{th}</tr></thead><tbody>{body}</tbody></table></div>")
