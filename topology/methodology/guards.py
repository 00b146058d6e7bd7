"""Steps that write to a block device (`destructive: true` in a template) and the guards they carry.

A destructive step names the disk it writes to (`device:`, words the dry run and the
confirmation list), and each of its commands names a guard library (`guard:`): a script in
`resources/templates/guards/` that is put in front of the command.  The library selects the one
device whose identity is the volume's (WWN, serial, or target and LUN: never a LUN number alone,
never the first match) and refuses -- writing nothing -- a device whose vendor, product or size
is not the volume's, that carries a partition table, file system or LVM signature, or that is
mounted, in use or the system disk.  A command of a destructive step is never built from a value
the tool filled in (`Val.assumed`, an auto-numbered LUN): the step is then done by hand and says
which value it lacks.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

from topology.methodology.template_syntax import Template, parse_template, template_error
from topology.methodology.values import Val

GUARDS_DIR = Path(__file__).resolve().parent.parent.parent / "resources" / "templates" / "guards"
# the programs a bash guard calls (the run's pre-flight checks them; `app.run.tool_needs`)
GUARD_TOOLS: dict[str, tuple[str, ...]] = {
    "linux-block": ("udevadm", "blkid", "findmnt", "find", "readlink", "grep", "tr", "head", "cat", "hostname", "sed"),
    "esxi-disk": ("esxcli", "partedUtil", "awk", "sed", "grep", "tr", "head", "hostname"),
}
# guard name -> (the shell it is written for, its file)
GUARDS: dict[str, tuple[str, str]] = {
    "linux-block": ("bash", "linux-block.sh"),
    # the ESXi shell is busybox ash: the guard is POSIX sh, as the steps' scripts on ESXi are
    "esxi-disk": ("bash", "esxi-disk.sh"),
    "windows-disk": ("powershell", "windows-disk.ps1"),          # Storage module (Get-Disk): 2012 and later
    "windows-disk-wmi": ("powershell", "windows-disk-wmi.ps1"),  # Win32_DiskDrive: 2008 and 2008 R2
}


@cache
def guard_library(name: str) -> str:
    """The guard's script text, as it is put in front of a destructive command."""
    return (GUARDS_DIR / GUARDS[name][1]).read_text(encoding="utf-8").rstrip("\n")


# a guard as it stands in front of a step's script (every library begins and ends with these lines)
_GUARD_BLOCK = re.compile(r"^# --- Testbed Studio guard \(([a-z-]+)[^\n]*\n.*?^# --- end of guard$", re.S | re.M)
GUARDS_TITLE = "Disk guards"
IN_DOCUMENT = f'printed once under "{GUARDS_TITLE}"'


def folded(script: str, told: str = IN_DOCUMENT) -> tuple[str, list[str]]:
    """For a document a person reads: each guard library in front of a script as one line that
    names it (a document prints each library once, under GUARDS_TITLE); the names folded.  Only a
    library that is word for word the one named is folded: a document never hides what differs.
    `told`: where the reader finds it.  What runs, and what a person copies, is the script whole."""
    names: list[str] = []

    def one(m: re.Match) -> str:
        name = m.group(1)
        if name not in GUARDS or m.group(0) != guard_library(name):
            return m.group(0)
        names.append(name)
        lines = m.group(0).count("\n") + 1
        return (f"# --- Testbed Studio guard ({name}) goes here: {lines} lines, the same in every step that "
                f"writes to a disk, {told}")
    return _GUARD_BLOCK.sub(one, script), names


def guard_purpose(name: str) -> str:
    """The paragraph above a guard printed once in a document."""
    return (f"Every step above whose script says \"Testbed Studio guard ({name}) goes here\" runs this text in front "
            "of its own lines, word for word: the step's lines state the volume's identity and call it, and it "
            "selects the one disk that is that volume or stops the step before anything is written.")


def guards_in(steps: Iterable) -> list[str]:
    """The guard libraries the steps' commands carry, in the order they first appear."""
    found: dict[str, None] = {}
    for step in steps:
        for cmd in getattr(step, "automation", None) or []:
            found.update(dict.fromkeys(folded(cmd.script)[1]))
    return list(found)


def destructive_keys(path: Path, raw: Any, where: str) -> tuple[bool, Template | None]:
    """A step's `destructive:` and `device:` keys, checked."""
    raw_flag = raw.get("destructive")
    line = raw.key_line.get("destructive", raw.line)
    if str(raw_flag).lower() not in ("none", "true", "false"):
        raise template_error(path, line, f"{where}: `destructive` is true or false")
    flag = str(raw_flag).lower() == "true"
    device = raw.get("device")
    if flag and not isinstance(device, str):
        raise template_error(path, line, f"{where}: a destructive step names its disk in `device:`",
                             "e.g. device: '{volume.device}'")
    tpl = parse_template(device, raw.key_line.get("device", line), where, path, command=False) \
        if isinstance(device, str) else None
    return bool(flag), tpl


def check_guard(path: Path, line: int, where: str, shell: str, guard: Any, destructive: bool) -> str:
    """The `guard:` of a command: required on every command of a destructive step."""
    if guard is None or guard == "":
        if destructive:
            raise template_error(path, line, f"{where}: a command of a destructive step needs a `guard:`",
                                 f"one of: {', '.join(sorted(GUARDS))}")
        return ""
    if guard not in GUARDS:
        raise template_error(path, line, f"{where}: unknown guard {guard!r}", f"one of: {', '.join(sorted(GUARDS))}")
    if GUARDS[guard][0] != shell:
        raise template_error(path, line, f"{where}: guard {guard!r} is written for {GUARDS[guard][0]}, "
                                         f"the command is {shell}")
    return str(guard)


def stated_only(get: Callable[[str], Val | None], assumed: list[str]) -> Callable[[str], Val | None]:
    """`get` for a destructive command: a value the tool filled in reads as not stated (so no
    command is built from it) and is named in `assumed`."""
    def lookup(name: str) -> Val | None:
        v = get(name)
        if v is not None and v.assumed:
            if name not in assumed:
                assumed.append(name)
            return Val(v.text, v.source, "not_stated")
        return v
    return lookup


def assumed_reason(names: list[str]) -> str:
    return (f"{', '.join(names)} {'was' if len(names) == 1 else 'were'} filled in by the tool, not stated by the "
            "bed, and never reaches a command that writes to a disk: done by hand")


def selection_reason(what: str, platform: str) -> str:
    """Why a destructive step on `platform` is manual when the disk's stated identity is `what`."""
    if what == "none":
        return ("the bed states no WWN, serial, or target and LUN for this volume, so no command can tell its "
                "disk from the others: done by hand")
    said = f"no command on {platform or 'this machine'} selects a disk by its {what}: done by hand"
    if "2008" in platform:
        # Win32_DiskDrive has no WWN; the FC HBA API (MSFC_*) names ports, not LUNs, so FC is by hand
        said += (". Windows Server 2008 and 2008 R2 show no WWN: state the LUN's serial (VPD page 0x80, in the "
                 "array's volume list; on the host `wmic diskdrive get Index,SerialNumber,Size,PNPDeviceID`) as "
                 "`serial:`, or for iSCSI the target (`target:`) with the mapping's LUN, and the step runs itself. "
                 "By hand: in Disk Management, open the disk's Properties and check on the MPIO tab (or "
                 "`mpclaim -s -d N`) that its paths lead to the volume's target and LUN, and that its size is the "
                 "volume's, before writing to it")
    return said
