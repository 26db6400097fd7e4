"""What a user sees while the engine compiles: a live elapsed-time line.

The first command that plays games compiles the engine (tens of seconds). A static
"Compiling…" line looks like a hang, so ``compile_clock`` keeps one line on stderr ticking
("Compiling the engine (first run only)… 12 s") while the block runs, and closes it with
the time taken. Off a terminal (CI, a pipe) it prints the start line and the closing line
only, never a stream of carriage returns.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

COMPILE_MESSAGE = "Compiling the engine (first run only)…"


@contextmanager
def compile_clock(active: bool, message: str = COMPILE_MESSAGE, stream: TextIO | None = None,
                  log: Callable[[str], None] | None = None, tick: float = 1.0) -> Iterator[None]:
    """While the block runs, show ``message`` and the seconds elapsed on ``stream``
    (stderr), redrawn every ``tick`` seconds on a terminal; then "compiled in N s".
    ``active`` False (the engine is cached) shows nothing. ``log``, when given, receives the
    start and closing lines instead of ``stream`` off a terminal."""
    if not active:
        yield
        return
    out = stream if stream is not None else sys.stderr
    live = bool(getattr(out, "isatty", lambda: False)())
    say = log if (log is not None and not live) else (lambda s: print(s, file=out, flush=True))
    t0 = time.perf_counter()
    done = threading.Event()

    def redraw() -> None:
        while not done.wait(tick):
            out.write(f"\r{message} {time.perf_counter() - t0:.0f} s")
            out.flush()

    if live:
        out.write(f"{message} 0 s")
        out.flush()
        ticker = threading.Thread(target=redraw, name="compile-clock", daemon=True)
        ticker.start()
    else:
        say(message)
    finished = False
    try:
        yield
        finished = True
    finally:
        done.set()
        seconds = time.perf_counter() - t0
        if live:
            ticker.join()
            ending = "done" if finished else "stopped"
            out.write(f"\r{message} {ending} in {seconds:.0f} s\n")
            out.flush()
        elif finished:
            say(f"Compiled in {seconds:.0f} s; later runs load it from the cache.")
        else:  # an error or Ctrl-C: nothing was compiled for later runs to load
            say(f"Compiling stopped after {seconds:.0f} s.")
