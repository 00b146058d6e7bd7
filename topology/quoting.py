"""Quoting of bed values for the shells the methodology's commands run in.

Every value that comes from a bed (a name, an address, a label) is inserted into a command
through `quote()`, so a host called ``x; rm -rf /`` or a label ``$(reboot)`` stays a literal
argument and never becomes code.

* POSIX shells (bash over SSH, the ESXi shell): `shlex.quote` — single quotes, with an
  embedded ``'`` written as ``'"'"'``.  Inside single quotes nothing is special.
* PowerShell: a verbatim (single-quoted) string.  PowerShell treats the typographic quotes
  U+2018, U+2019, U+201A and U+201B exactly like ``'`` (language spec, "single-quote-character"),
  so each of the five is doubled — doubling only ``'`` would let ``’`` end the string.
  Nothing else is special inside a verbatim string: ``$``, backtick, ``;`` and newlines are
  literal.
* Vendor CLIs (SMcli script statements and the like): a double-quoted string with ``\\`` and
  ``"`` escaped; line breaks, which end a statement there, become spaces.  That is the vendor
  language's own layer: on a workstation the finished statements are then handed to bash as
  one `bash()`-quoted word written to a file the CLI reads (`app.run.plan.vendor_cli_script`),
  so bash never parses vendor text.

A NUL character cannot be carried by any command line, so quoting refuses it (`ValueError`).
"""
from __future__ import annotations

import shlex
from collections.abc import Iterable

SHELLS = ("powershell", "bash", "vendor-cli")

# U+0027 and the four characters PowerShell's tokenizer accepts in its place.
POWERSHELL_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"
_POWERSHELL_DOUBLED = {ord(ch): ch + ch for ch in POWERSHELL_SINGLE_QUOTES}


def _check(value: str) -> str:
    if not isinstance(value, str):
        value = str(value)
    if "\x00" in value:
        raise ValueError("a NUL character cannot be passed on a command line")
    return value


def bash(value: str) -> str:
    """Quote for bash / POSIX sh: the result is one word whose value is exactly `value`."""
    return shlex.quote(_check(value))


def powershell(value: str) -> str:
    """Quote as a PowerShell verbatim string: ``'...'`` with every single-quote character doubled."""
    return "'" + _check(value).translate(_POWERSHELL_DOUBLED) + "'"


def vendor(value: str) -> str:
    """Quote for a vendor CLI statement (SMcli and similar): ``"..."`` with ``\\`` and ``"`` escaped."""
    value = _check(value).replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


_QUOTERS = {"powershell": powershell, "bash": bash, "vendor-cli": vendor}


def quote(shell: str, value: str) -> str:
    try:
        return _QUOTERS[shell](value)
    except KeyError:
        raise ValueError(f"unknown shell {shell!r}; expected one of {', '.join(SHELLS)}") from None


def quote_list(shell: str, values: Iterable[str]) -> str:
    """A list argument: PowerShell ``'a','b'`` (one array argument), POSIX ``a b`` (separate words),
    vendor CLI ``"a" "b"``."""
    quoted = [quote(shell, v) for v in values]
    return ",".join(quoted) if shell == "powershell" else " ".join(quoted)
