"""The first run's compile shows a live elapsed-time line on a terminal, and two plain lines
elsewhere (``rnr_sim.progress.compile_clock``)."""

from __future__ import annotations

import io
import time

import pytest

from rnr_sim.progress import COMPILE_MESSAGE, compile_clock


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def wait_for(predicate, limit: float = 10.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.005)
    return False


def test_compile_clock_ticks_on_a_terminal():
    out = Terminal()
    with compile_clock(True, stream=out, tick=0.01):
        assert wait_for(lambda: out.getvalue().count("\r") >= 2)  # redrawn while it runs
    text = out.getvalue()
    assert text.startswith(f"{COMPILE_MESSAGE} 0 s")
    assert text.endswith(" s\n") and "done in" in text.splitlines()[-1]


def test_compile_clock_off_a_terminal_logs_two_lines():
    lines: list[str] = []
    out = io.StringIO()
    with compile_clock(True, stream=out, log=lines.append, tick=0.01):
        time.sleep(0.05)
    assert out.getvalue() == ""  # no carriage returns into a pipe or a log
    assert lines[0] == COMPILE_MESSAGE and lines[1].startswith("Compiled in ")


def test_compile_clock_never_says_compiled_when_the_compile_failed():
    lines: list[str] = []
    with pytest.raises(RuntimeError), \
            compile_clock(True, stream=io.StringIO(), log=lines.append, tick=0.01):
        raise RuntimeError("numba failed")
    assert lines[0] == COMPILE_MESSAGE and lines[1].startswith("Compiling stopped after ")
    out = Terminal()
    with pytest.raises(KeyboardInterrupt), compile_clock(True, stream=out, tick=0.01):
        raise KeyboardInterrupt
    assert "stopped in" in out.getvalue().splitlines()[-1]
    assert "done in" not in out.getvalue()


def test_compile_clock_is_silent_when_the_engine_is_cached():
    out = Terminal()
    lines: list[str] = []
    with compile_clock(False, stream=out, log=lines.append):
        pass
    assert out.getvalue() == "" and lines == []
