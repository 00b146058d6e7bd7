"""Text for a terminal: names from a bed (or a host's output) shown, never obeyed.

A bed value can carry ESC sequences or other control characters; printed raw they would
recolour, move the cursor, retitle the window or hide what follows.  `printable` writes
each such character as visible text (``\\x1b``, ``\\u202e``); line feeds and tabs stay.
The command line installs `PrintableStream` on standard output and standard error, so every
print site is covered, including ones added later.
"""
from __future__ import annotations

import re
from typing import TextIO

# C0 controls but tab and line feed, DEL, C1 controls (U+009B is a one-character CSI), and the
# Unicode bidirectional overrides/isolates that reorder what follows on the line
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    return _UNPRINTABLE.sub(_escape, text)


class PrintableStream:
    """A text stream that passes everything through `printable` on its way to `stream`."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(printable(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
