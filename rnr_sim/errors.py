"""Errors a user can fix: the CLI prints them as one line and exits 2."""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Bad input (a file, a name, a switch): the message names the place and the fix."""


#: The largest input file read (the 355-card Original Set is about 100 KB): a bigger one is
#: refused rather than read into memory (``/dev/zero`` as a deck would never end).
MAX_INPUT_BYTES = 64 * 2**20


def read_input(path: Path, noun: str, kind: str) -> bytes:
    """The bytes of a user's input file, or one ``InputError`` line naming it.

    ``noun`` names the file in errors ("deck list"); ``kind`` says what a directory given
    in its place should have been ("a deck list", "a card catalog (a TOML file)"). Only a
    regular file is read (a FIFO would hang, a device never end), at most
    ``MAX_INPUT_BYTES``.
    """
    import stat

    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise InputError(f"{path}: not a regular file (a device, a pipe or a socket); "
                             f"give {kind} saved as a file")
        if stat.S_ISREG(mode):
            with path.open("rb") as f:
                raw = f.read(MAX_INPUT_BYTES + 1)
            if len(raw) > MAX_INPUT_BYTES:
                bound = (f"{MAX_INPUT_BYTES // 2**20} MB" if MAX_INPUT_BYTES >= 2**20
                         else f"{MAX_INPUT_BYTES:,} bytes")
                raise InputError(f"{path}: more than {bound}; {kind} is a small text file")
            return raw
        return path.read_bytes()  # a directory: the error below names it
    except FileNotFoundError:
        raise InputError(f"{path}: no such {noun}") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not {kind}") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read {noun} ({e.strerror})") from None


def decode_text(raw: bytes | str, where: str, kind: str) -> str:
    """The text of a user's input (UTF-8, a leading BOM dropped), or one ``InputError`` line:
    ``<where>: not a text file; <kind>`` (NUL bytes) or ``<where>:<line>: not a text file
    (not UTF-8: byte 0xE9 in column 4); <kind>``. ``kind`` says what the file should hold
    ("a card catalog is TOML")."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    if b"\x00" in raw:
        raise InputError(f"{where}: not a text file; {kind}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line_start = raw.rfind(b"\n", 0, e.start) + 1
        line = raw.count(b"\n", 0, e.start) + 1
        raise InputError(
            f"{where}:{line}: not a text file (not UTF-8: byte 0x{raw[e.start]:02X} in column "
            f"{e.start - line_start + 1}; save it as UTF-8); {kind}") from None


def shown(text: str, most: int = 60) -> str:
    """``text`` quoted for a message, cut to about ``most`` characters: a user's line can
    be any length, an error message is one line."""
    if len(text) <= most:
        return f"'{text}'"
    return f"'{text[:most]}…' ({len(text):,} characters)"
