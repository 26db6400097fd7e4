"""Where the engine's machine code lies in this process: each compiled kernel's address
range, and with line tables (``NUMBA_DEBUGINFO=1``) each instruction's source line.

numba hands LLVM's JIT an object file per kernel, compiled or read from its cache; the JIT
copies its code into memory and keeps no symbol table a profiler could read. ``keep()``
asks the JIT to pass this module a copy of each object file as it is compiled or loaded
(call it before the engine's kernels load); ``code_map()`` then reads each object's symbol
table and line table (pyelftools) and places them where the JIT put the code: a function
the object exports (and no other object holds) is looked up by name, and the others of its
section lie at the same offsets from it. ``profiling.py`` turns perf's samples into kernels and lines with it.
"""

from __future__ import annotations

import bisect
import collections
import io
import os
import re
from dataclasses import dataclass, field

_OBJECTS: list[bytes] = []
_KEPT = False


def keep() -> bool:
    """Ask numba's JIT for a copy of every object file it compiles or loads from now on;
    False when the engine's kernels may have loaded already (their code cannot be placed:
    every module that defines kernels imports ``engine.config`` first), or when this numba
    is not the release the hook was written for (``engine/patching.py``)."""
    global _KEPT
    import sys

    from rnr_sim.engine import patching

    if _KEPT:
        return True
    if "rnr_sim.engine.config" in sys.modules or not patching.applies("profiler"):
        return False
    from numba.core.registry import cpu_target

    ee = getattr(cpu_target.target_context.codegen()._engine, "_ee", None)  # LLVM's engine
    if not hasattr(ee, "_object_cache_notify") or not hasattr(ee, "_object_cache_getbuffer"):
        return patching.not_found("profiler")
    notify, getbuffer = ee._object_cache_notify, ee._object_cache_getbuffer

    def notify_and_keep(module, buf):
        _OBJECTS.append(bytes(buf))
        if notify is not None:
            notify(module, buf)

    def getbuffer_and_keep(module):
        buf = getbuffer(module) if getbuffer is not None else None
        if buf:
            _OBJECTS.append(bytes(buf))
        return buf

    ee._object_cache_notify = notify_and_keep
    ee._object_cache_getbuffer = getbuffer_and_keep
    _KEPT = True
    return True


def readable(name: str) -> str:
    """A numba function's name as ``module.qualname`` (``rnr_sim.engine.game.fire_effects``)
    from its Itanium-mangled name; numba's Python wrappers get " (wrapper)"; other names
    are returned as they are."""
    if not name.startswith("_ZN"):
        return name
    rest, parts = name[3:], []
    while rest and rest[0].isdigit():
        n = int(re.match(r"\d+", rest).group())
        d = len(str(n))
        parts.append(rest[d:d + n])
        rest = rest[d + n:]
    if not parts:
        return name
    if parts[0] == "cpython":
        return ".".join(parts[1:]) + " (wrapper)"
    return ".".join(parts)


@dataclass
class CodeMap:
    """The engine's code in this process: functions ``(start, size, name)`` and, from line
    tables, rows ``(address, file, line)``, each sorted by address."""

    functions: list[tuple[int, int, str]] = field(default_factory=list)
    rows: list[tuple[int, str, int]] = field(default_factory=list)

    def __post_init__(self):
        self.functions.sort()
        self.rows.sort()
        self._starts = [f[0] for f in self.functions]
        self._row_starts = [r[0] for r in self.rows]

    def _function(self, ip: int) -> tuple[int, int, str] | None:
        i = bisect.bisect_right(self._starts, ip) - 1
        if i >= 0:
            start, size, name = self.functions[i]
            if ip < start + max(size, 1):
                return self.functions[i]
        return None

    def function_at(self, ip: int) -> str | None:
        """The readable name of the function whose code holds ``ip``, or None."""
        f = self._function(ip)
        return None if f is None else readable(f[2])

    def line_at(self, ip: int) -> tuple[str, int] | None:
        """(file, line) of the line-table row that ``ip`` falls in, or None (outside the
        functions, or before the first row of its function)."""
        f = self._function(ip)
        if f is None:
            return None
        i = bisect.bisect_right(self._row_starts, ip) - 1
        if i < 0 or self.rows[i][0] < f[0]:
            return None
        _, file, line = self.rows[i]
        return file, line


def _quiet_relocations():
    """pyelftools applies the relocations of a DWARF section before reading it, and stops at
    a type it does not know (x86-64's PC64, in numba's frame tables): skip those, the line
    tables' own relocations are plain 64-bit ones."""
    from elftools.common.exceptions import ELFRelocationError
    from elftools.elf import relocation

    handler = relocation.RelocationHandler
    if getattr(handler, "_rnr_quiet", False):
        return
    apply = handler._do_apply_relocation

    def apply_known(self, stream, reloc, symtab):
        try:
            return apply(self, stream, reloc, symtab)
        except ELFRelocationError:  # a type it does not know: not a line table's
            return None

    handler._do_apply_relocation = apply_known
    handler._rnr_quiet = True


def _functions(elf) -> list[tuple[int, int, int, str, bool]]:
    """The functions ``elf`` defines: ``(section index, offset, size, name, exported)``."""
    symtab = elf.get_section_by_name(".symtab")
    return [(sym["st_shndx"], sym["st_value"], sym["st_size"], sym.name,
             sym["st_info"]["bind"] == "STB_GLOBAL")
            for sym in (symtab.iter_symbols() if symtab is not None else ())
            if sym["st_info"]["type"] == "STT_FUNC" and isinstance(sym["st_shndx"], int)]


def _section_bases(functions, lookup, once: set[str]) -> dict[int, int]:
    """Where the JIT put each code section holding ``functions``: {section index:
    address}. A section is placed by a function it exports whose name no other kept object
    holds (``once``): the JIT's lookup of a name that another object holds as an internal
    copy of the kernel (a caller's copy of ``note_threats``) may answer with that copy."""
    base: dict[int, int] = {}
    for index, offset, _, name, exported in functions:
        if exported and index not in base and name in once:
            address = lookup(name)
            if address:
                base[index] = address - offset
    return base


def code_map(lines: bool = False) -> CodeMap:
    """The code of every object file kept since ``keep()``: its functions, placed; with
    ``lines``, the rows of its line tables too (present when compiled with
    ``NUMBA_DEBUGINFO=1``)."""
    from elftools.elf.elffile import ELFFile
    from numba.core.registry import cpu_target

    if lines:
        _quiet_relocations()
    engine = cpu_target.target_context.codegen()._engine

    def lookup(name: str) -> int:
        return engine.get_function_address(name) if engine.is_symbol_defined(name) else 0

    objects = [ELFFile(io.BytesIO(obj)) for obj in _OBJECTS]
    found = [_functions(elf) for elf in objects]
    holders = collections.Counter(name for fs in found for name in {f[3] for f in fs})
    once = {name for name, n in holders.items() if n == 1}
    functions: list[tuple[int, int, str]] = []
    rows: list[tuple[int, str, int]] = []
    for elf, fs in zip(objects, found, strict=True):
        base = _section_bases(fs, lookup, once)
        functions += [(base[i] + off, size, name) for i, off, size, name, _ in fs if i in base]
        if lines and base and elf.has_dwarf_info():
            rows += _line_rows(elf, base)
    return CodeMap(functions, rows)


def _line_rows(elf, base: dict[int, int]) -> list[tuple[int, str, int]]:
    """The line-table rows of ``elf`` at their addresses in memory: numba puts a kernel's
    code in one section (``.text`` or, in the large code model, ``.ltext``)."""
    code = [i for i, s in enumerate(elf.iter_sections()) if s.name in (".text", ".ltext")
            and i in base]
    if len(code) != 1:
        return []
    start = base[code[0]]
    dwarf = elf.get_dwarf_info(relocate_dwarf_sections=True)
    rows = []
    for cu in dwarf.iter_CUs():
        program = dwarf.line_program_for_CU(cu)
        if program is None:
            continue
        top = cu.get_top_DIE().attributes.get("DW_AT_comp_dir")
        folder = top.value.decode() if top is not None else ""
        dirs = [d.decode() for d in program["include_directory"]]
        names = []
        for f in program["file_entry"]:  # a path, or a name in a listed folder or comp_dir
            where = dirs[f.dir_index - 1] if 0 < f.dir_index <= len(dirs) else folder
            names.append(os.path.join(where, f.name.decode()))
        first = 1 if program.header["version"] < 5 else 0  # DWARF 5 counts files from 0
        for entry in program.get_entries():
            state = entry.state
            if state is None or state.end_sequence:
                continue
            k = state.file - first
            rows.append((start + state.address, names[k] if 0 <= k < len(names) else "?",
                         state.line))
    return rows
