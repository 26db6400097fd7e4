"""``rnr-sim bench --profile`` (issue 13 item 5, "profile, then ..."): perf's samples placed
in the engine's code.

The placing is checked against memory: each function placed where the JIT put it holds its
object file's bytes. The aggregation is checked on made-up samples; the whole command once,
where this machine lets perf sample a process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from fake_engine import REAL_ENGINE
from typer.testing import CliRunner

from rnr_sim import jit_code, profiling
from rnr_sim.cli import app

elftools = pytest.importorskip("elftools", reason="pyelftools reads the engine's code")


def invoke(*args):
    result = CliRunner().invoke(app, [str(a) for a in args], prog_name="rnr-sim")
    assert "Traceback" not in result.output
    return result


def test_readable_names_are_module_and_qualname():
    name = "_ZN7rnr_sim6engine4game12fire_effectsB3v12B52c8tJTIeFIjxE5ArrayIiLi2E1C7mutable7alignedE"
    assert jit_code.readable(name) == "rnr_sim.engine.game.fire_effects"
    wrapper = "_ZN7cpython7rnr_sim6engine5batch17play_games_workerB4v107Exx"
    assert jit_code.readable(wrapper) == "rnr_sim.engine.batch.play_games_worker (wrapper)"
    assert jit_code.readable("NRT_decref") == "NRT_decref"


def made_up_code():
    """Two functions: f at [1000, 1100) with rows at 1000 (line 0), 1010 (line 5), 1050
    (line 7) of a file; g at [2000, 2010) with no rows."""
    functions = [(2000, 10, "_ZN7rnr_sim6engine4game1gE"), (1000, 100, "_ZN7rnr_sim6engine4game1fE")]
    rows = [(1050, "/x/rnr_sim/engine/game.py", 7), (1000, "/x/rnr_sim/engine/game.py", 0),
            (1010, "/x/rnr_sim/engine/game.py", 5)]
    return jit_code.CodeMap(functions, rows)


def test_a_sample_is_placed_in_its_function_and_line():
    code = made_up_code()
    assert code.function_at(999) is None
    assert code.function_at(1000) == "rnr_sim.engine.game.f"
    assert code.function_at(1099) == "rnr_sim.engine.game.f"
    assert code.function_at(1100) is None  # past f's end, before g
    assert code.function_at(2005) == "rnr_sim.engine.game.g"
    assert code.line_at(1005) == ("/x/rnr_sim/engine/game.py", 0)
    assert code.line_at(1049) == ("/x/rnr_sim/engine/game.py", 5)
    assert code.line_at(1099) == ("/x/rnr_sim/engine/game.py", 7)
    assert code.line_at(1500) is None


def test_aggregate_counts_samples_by_kernel_and_shares_of_the_engine():
    ips = [1010] * 6 + [1060] * 2 + [2001] * 2 + [5000] * 10  # 10 outside the engine
    r = profiling.aggregate(ips, made_up_code(), with_lines=True)
    assert r["samples"] == 20 and r["engine_samples"] == 10
    assert r["kernels"] == [
        {"kernel": "rnr_sim.engine.game.f", "samples": 8, "share": 0.8},
        {"kernel": "rnr_sim.engine.game.g", "samples": 2, "share": 0.2}]
    functions = {row["function"]: row["samples"] for row in r["functions"]}
    assert functions["(no line table row)"] == 2  # g has no rows
    assert sum(functions.values()) == 10
    assert [(x["line"], x["samples"]) for x in r["lines"]] == [
        ("rnr_sim/engine/game.py:5", 6), ("rnr_sim/engine/game.py:7", 2)]


def test_aggregate_names_the_source_function_of_a_line(tmp_path):
    src = tmp_path / "rnr_sim" / "engine" / "mod.py"
    src.parent.mkdir(parents=True)
    src.write_text("def outer():\n    x = 1\n\n    def inner():\n        return 2\n")
    code = jit_code.CodeMap([(0, 100, "_ZN3mod1kE")], [(0, str(src), 2), (50, str(src), 5)])
    r = profiling.aggregate([10, 60, 60], code, with_lines=True)
    functions = {row["function"]: row["samples"] for row in r["functions"]}
    assert functions == {"rnr_sim/engine/mod.py:outer": 1, "rnr_sim/engine/mod.py:inner": 2}
    assert r["lines"][0]["source"] == "return 2"


PLACED_CHECK = """
import ctypes, io, json
from rnr_sim import jit_code
assert jit_code.keep()
from rnr_sim import bench
plan = bench.sample_plan(400)
bench.play(plan, bench.spread_inputs(plan, 64), 1)
code = jit_code.code_map()
from elftools.elf.elffile import ELFFile
placed = {start: (size, name) for start, size, name in code.functions}
same = differ = 0
for obj in jit_code._OBJECTS:
    elf = ELFFile(io.BytesIO(obj))
    for s in elf.get_section_by_name(".symtab").iter_symbols():
        if s["st_info"]["type"] != "STT_FUNC" or not isinstance(s["st_shndx"], int):
            continue
        head = elf.get_section(s["st_shndx"]).data()[s["st_value"]:s["st_value"] + 4]
        starts = [a for a, (size, name) in placed.items() if name == s.name and size == s["st_size"]]
        if len(head) == 4:
            if any(ctypes.string_at(a, 4) == head for a in starts):
                same += 1
            else:
                differ += 1
fs = sorted(code.functions)
overlaps = sum(1 for a, b in zip(fs, fs[1:]) if b[0] < a[0] + a[1])
names = sorted({jit_code.readable(n) for _, _, n in fs})
print(json.dumps({"same": same, "differ": differ, "overlaps": overlaps, "names": names}))
"""


@pytest.mark.skipif(not REAL_ENGINE, reason="places the real engine's code")
def test_every_kernel_is_placed_where_the_jit_put_its_code():
    """In a fresh process (the engine must load after ``keep``): the functions placed never
    overlap, and the first bytes at each place are its object file's (before the JIT
    relocated anything, the first bytes of a function are its own instructions)."""
    out = subprocess.run([sys.executable, "-c", PLACED_CHECK], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["overlaps"] == 0
    assert r["same"] >= 100 and r["differ"] <= r["same"] // 50, r
    assert "rnr_sim.engine.batch.play_games_worker" in r["names"]
    assert "rnr_sim.engine.decisions.card_value" in r["names"]


def test_keep_refuses_once_the_engine_is_loaded(monkeypatch):
    monkeypatch.setattr(jit_code, "_KEPT", False)
    monkeypatch.setitem(sys.modules, "rnr_sim.engine.config", object())
    assert jit_code.keep() is False


def test_no_perf_is_a_one_line_error(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    result = invoke("bench", "--profile", "--games", "100")
    assert result.exit_code == 2
    assert "Linux perf" in result.stderr and "apt install linux-perf" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_lines_without_a_cache_dir_never_share_the_numba_cache():
    assert profiling.lines_cache_dir({"NUMBA_CACHE_DIR": "/p/.numba_cache/"}) == \
        "/p/.numba_cache-lines"
    assert profiling.lines_cache_dir({}).endswith(os.path.join("rnr-sim", "numba-lines"))


@pytest.mark.parametrize("args", [["--quick"], ["--threads", "2"], ["--repeat", "5"],
                                  ["--pure-games", "0"], ["--backend", "ray"]])
def test_timing_options_are_refused_with_profile(args):
    result = invoke("bench", "--profile", *args)
    assert result.exit_code == 2 and "--games" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_line_tables_keep_the_engine_inlinable():
    """Compiled with line tables, numba marks each function ``noinline``; the engine's
    kernels drop the mark (config.py), so a profile with --lines is of the same program."""
    from rnr_sim.engine import config

    class Fn:
        attributes = {"noinline"}

    class FakeLower:
        def __init__(self, debuginfo, modname):
            self.flags = type("F", (), {"debuginfo": debuginfo})()
            self.fndesc = type("D", (), {"modname": modname})()
            self.builder = type("B", (), {"function": Fn()})()
            self.builder.function.attributes = {"noinline"}

    wrapped = config._inlinable_with_line_tables(lambda self: None)
    for debuginfo, modname, kept in ((True, "rnr_sim.engine.game", False),
                                     (True, "numpy.core", True),
                                     (False, "rnr_sim.engine.game", True)):
        low = FakeLower(debuginfo, modname)
        wrapped(low)
        assert ("noinline" in low.builder.function.attributes) is kept


def perf_can_sample() -> bool:
    perf = shutil.which("perf")
    if perf is None:
        return False
    probe = subprocess.run([perf, "record", "-q", "-o", os.devnull, "--", "true"],
                           capture_output=True, text=True)
    return probe.returncode == 0


@pytest.mark.skipif(not REAL_ENGINE, reason="profiles the real engine")
@pytest.mark.skipif(not perf_can_sample(), reason="perf cannot sample a process here")
def test_profile_places_the_samples_in_the_engine():
    # 20,000 games: a few tenths of a second on one thread, so that perf, attached just
    # before, samples them even on a busy machine (4,000 once gave none beside a demo)
    result = invoke("bench", "--profile", "--games", "20000", "--json")
    assert result.exit_code == 0, result.output + result.stderr
    r = json.loads(result.stdout)
    assert r["games"] == 20000 and r["samples"] > 0
    assert r["engine_samples"] >= 0.5 * r["samples"]
    kernels = [k["kernel"] for k in r["kernels"]]
    assert "rnr_sim.engine.batch.play_games_worker" in kernels
    assert abs(sum(k["share"] for k in r["kernels"]) - 1.0) < 0.01
    assert not any(k.endswith("(wrapper)") for k in kernels[:5])  # never run in the loop
