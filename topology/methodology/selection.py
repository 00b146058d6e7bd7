"""Which template fits which machine: a host's platform (family, distribution, version,
hypervisor), the transports its storage paths use, and the vendor families of its multipath
software, arrays and switches; and the conditions templates state on them.

A template file, step or command may say whom it is for::

    platform: {family: windows, versions: '>=2012'}          # Windows Server 2012 and later
    platform: {versions: '2008-2008 R2'}                     # the family is the file's directory
    platform: {distro: [rhel, centos], versions: '>=7', hypervisor: kvm}
    transport: iscsi                                         # or a list: [fc, sas]

A machine fits when every stated key holds: `family` (windows, linux, esxi), `versions` (a range,
see `topology.os_release`), `distro` (the distribution or the one it derives from: centos fits
`rhel`; windows-server, hyper-v-server, windows-client for Windows), `hypervisor` (hyper-v, kvm,
rhev, esxi, xen).  A machine whose version the bed does not state fits no `versions:` range.
`transport` holds when one of the machine's storage paths (or, for a path step, the path itself)
uses one of the listed transports.  Where the chosen template is the `common` one although a
platform template exists for the step, the step is done by hand and says why
("no template for Windows Server 2008 R2 over FC: done by hand").

`host_platform(bed, host_id)` (or `host_platforms(bed)` for all at once) answers, for other tools
(the Ansible export), which platform and transports a host has; `automated_for(methodology,
host_id)` which of its steps are automated.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from topology.methodology.located_yaml import LocatedDict, LocatedList, read_located_yaml
from topology.methodology.template_syntax import template_error
from topology.model import VM, Server
from topology.os_release import FAMILIES, OsRelease, VersionRange, VersionRangeError, parse_os, parse_range

TRANSPORTS = ("iscsi", "fc", "sas")
_TRANSPORT_NAMES = {"iscsi": "iSCSI", "fc": "FC", "sas": "SAS"}
HYPERVISORS = ("hyper-v", "kvm", "rhev", "esxi", "xen")
_PLATFORM_KEYS = ("family", "versions", "distro", "hypervisor")


# ---------------------------------------------------------------------------------------- conditions

@dataclass(frozen=True)
class PlatformCondition:
    """What a template's `platform:` asks of a machine."""
    family: str = ""
    versions: VersionRange | None = None
    distros: frozenset[str] = frozenset()
    hypervisors: frozenset[str] = frozenset()

    def miss(self, release: OsRelease) -> str:
        """'' when the machine fits, else what it lacks (a sentence part)."""
        if self.family and release.family != self.family:
            return f"is not {self.family}"
        if self.distros and release.distro not in self.distros and release.lineage not in self.distros:
            return f"is not {' or '.join(sorted(self.distros))}"
        if self.hypervisors and release.hypervisor not in self.hypervisors:
            return f"does not run {' or '.join(sorted(self.hypervisors))}"
        if self.versions is not None and self.versions.clauses:
            if not release.version:
                return "has no stated version"
            if not self.versions.contains(release.version):
                return f"is outside {self.versions.text}"
        return ""

    def describe(self) -> str:
        parts = [self.family] if self.family else []
        parts += sorted(self.distros) + sorted(self.hypervisors)
        if self.versions is not None and self.versions.clauses:
            parts.append(self.versions.text)
        return " ".join(parts)


def parse_platform(path: Path, raw: Any, line: int, where: str, directory: str) -> PlatformCondition:
    """A `platform:` mapping of a template file (`directory` is its platform directory)."""
    if not isinstance(raw, dict):
        raise template_error(path, line, f"{where}: `platform` must be a mapping",
                             "e.g. platform: {family: windows, versions: '>=2012'}")
    for key in raw:
        if key not in _PLATFORM_KEYS:
            raise template_error(path, line, f"{where}: unknown platform key {key!r}",
                                 f"platform: takes {', '.join(_PLATFORM_KEYS)}")
    family = str(raw.get("family") or (directory if directory in FAMILIES else ""))
    if family and family not in FAMILIES:
        raise template_error(path, line, f"{where}: platform family {family!r} is not one of {', '.join(FAMILIES)}")
    if directory in FAMILIES and family != directory:
        raise template_error(path, line, f"{where}: a template in {directory}/ is for {directory} machines",
                             f"move it to {family}/ or leave `family` out")
    if directory not in FAMILIES and directory != "common":
        raise template_error(path, line, f"{where}: `platform` is for windows/, linux/, esxi/ and common/ templates",
                             "array and switch templates choose their models with `match:`")
    versions = None
    if raw.get("versions") is not None:
        try:
            versions = parse_range(str(raw["versions"]))
        except VersionRangeError as exc:
            raise template_error(path, line, f"{where}: versions: {exc}",
                                 "write e.g. '>=2012', '2008-2008 R2', '<7', '5.x-8.x'") from None
    hypervisors = _word_set(path, line, where, raw.get("hypervisor"), HYPERVISORS, "hypervisor")
    distros = _word_set(path, line, where, raw.get("distro"), None, "distro")
    return PlatformCondition(family, versions, distros, hypervisors)


def parse_transport(path: Path, raw: Any, line: int, where: str) -> frozenset[str]:
    return _word_set(path, line, where, raw, TRANSPORTS, "transport")


def _word_set(path: Path, line: int, where: str, raw: Any, allowed: tuple[str, ...] | None, key: str
              ) -> frozenset[str]:
    if raw is None:
        return frozenset()
    words = raw if isinstance(raw, (list, LocatedList)) else [raw]
    out = set()
    for w in words:
        w = str(w).strip().lower()
        if allowed is not None and w not in allowed:
            raise template_error(path, line, f"{where}: {key} {w!r} is not one of {', '.join(allowed)}")
        if not w:
            raise template_error(path, line, f"{where}: an empty {key}")
        out.add(w)
    return frozenset(out)


# ---------------------------------------------------------------------------------------- families

@dataclass(frozen=True)
class Family:
    kind: str          # multipath | array | switch
    id: str
    pattern: re.Pattern
    name: str
    # an array family's LUNs as hosts read their SCSI INQUIRY: vendor and product (regular
    # expressions), checked before a step writes to a disk; "" = not known
    scsi_vendor: str = ""
    scsi_product: str = ""


# A disk guard matches the disk's SCSI vendor and product against these patterns with grep -E (Linux,
# the ESXi shell) and PowerShell's -match (.NET): a pattern is kept to what all three read alike.
# Outside it a pattern means something else to one of them (`[[:alpha:]]` is a POSIX class to grep and
# a set of `[:alph` then `]` to .NET; `\d` is a digit to .NET and a `d` to grep), or is refused by one
# of them, and PowerShell skips a check whose pattern it cannot read: the vendor check never ran.
_UNPORTABLE = (
    (re.compile(r"\\[^.\[\](){}*+?|^$\\/-]"), "has a backslash before a letter or digit (a class or a back-reference)"),
    (re.compile(r"\(\?"), "has (? (an inline flag, a look-around or a group grep -E has not)"),
    # {,n}: up to n to grep -E and Python, the characters "{,n}" to .NET
    (re.compile(r"(?<!\\)\{,"), "has {,n} (up to n to grep, the characters {,n} to .NET): write {0,n}"),
)
PORTABLE_HINT = ("write it with characters, [ ] sets and ranges, . * + ? {m,n} | ( ) ^ $ and \\ before punctuation "
                 "outside [ ]")


def _in_brackets(pattern: str) -> str:
    """Why a [ ] set of `pattern` reads otherwise to grep -E and .NET ("" when it does not): inside
    a set a backslash is a character to grep and an escape to .NET (`[a\\]]` is "a" or "\\" then "]"
    to grep, "a" or "]" to .NET), and [: [= [. open a POSIX class to grep only."""
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c != "[":
            i += 1
            continue
        i += 1
        if i < n and pattern[i] == "^":
            i += 1
        if i < n and pattern[i] == "]":      # a ] first in a set is a character to both
            i += 1
        while i < n and pattern[i] != "]":
            if pattern[i] == "\\":
                return "has a backslash inside [ ] (a character to grep, an escape to .NET)"
            if pattern[i] == "[" and pattern[i + 1:i + 2] in (":", "=", "."):
                return "has a POSIX class ([:alpha:], [=a=], [.a.]): plain characters to .NET"
            i += 1
        i += 1
    return ""


def unportable(pattern: str) -> str:
    """Why grep -E and .NET would not read `pattern` alike ("" when they would)."""
    for finds, why in _UNPORTABLE:
        if finds.search(pattern):
            return why
    why = _in_brackets(pattern)
    if why:
        return why
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"is not a regular expression ({exc})"
    return ""


@dataclass
class Families:
    """Vendor families from `families.yaml` (built-in, then each lab directory's: a lab's entry
    with the same id replaces the built-in one, new ones are tried first)."""
    entries: dict[str, list[Family]] = field(default_factory=lambda: {"multipath": [], "array": [], "switch": []})
    # (kind, words) -> the family: many machines of a bed name the same software
    _found: dict[tuple, Family | None] = field(default_factory=dict, repr=False, compare=False)

    def of(self, kind: str, *texts: str) -> Family | None:
        key = (kind, texts)
        if key in self._found:
            return self._found[key]
        text = " ".join(t for t in texts if t)
        found = None if not text.strip() else next((f for f in self.entries.get(kind, []) if f.pattern.search(text)),
                                                   None)
        if len(self._found) >= 4096:   # the families live as long as the application: keep the memo small
            self._found.clear()
        self._found[key] = found
        return found

    def add_file(self, path: Path) -> None:
        data = read_located_yaml(path)
        if not isinstance(data, LocatedDict):
            raise template_error(path, 1, "families.yaml is a mapping: multipath, array, switch")
        for kind, entries in data.items():
            line = data.key_line.get(kind, 1)
            if kind not in self.entries:
                raise template_error(path, line, f"unknown family kind {kind!r}", "use multipath, array or switch")
            if not isinstance(entries, list):
                raise template_error(path, line, f"{kind}: a list of {{family, pattern, name}} entries")
            new: list[Family] = []
            for e in entries:
                eline = getattr(e, "line", line)
                if not isinstance(e, dict) or not e.get("family") or not e.get("pattern"):
                    raise template_error(path, eline, f"{kind}: each entry needs `family` and `pattern`")
                try:
                    pat = re.compile(str(e["pattern"]), re.I)
                except re.error as exc:
                    raise template_error(path, eline, f"{kind} {e['family']!r}: pattern is not valid ({exc})") from None
                scsi = [str(e.get(k) or "") for k in ("scsi_vendor", "scsi_product")]
                for key, text in zip(("scsi_vendor", "scsi_product"), scsi):
                    problem = unportable(text)
                    if problem:
                        raise template_error(path, eline, f"{kind} {e['family']!r}: {key} {text!r} {problem}",
                                             PORTABLE_HINT)
                new.append(Family(kind, str(e["family"]), pat, str(e.get("name") or e["family"]), *scsi))
            ids = {f.id for f in new}
            self.entries[kind] = new + [f for f in self.entries[kind] if f.id not in ids]
        self._found.clear()


# ---------------------------------------------------------------------------------------- machines

@dataclass(frozen=True)
class HostProfile:
    """What selects the templates for one machine (a server or a VM)."""
    id: str
    release: OsRelease
    transports: tuple[str, ...] = ()      # of its storage paths: fc, iscsi, sas
    multipath_family: str = ""
    multipath_name: str = ""

    @property
    def family(self) -> str:
        return self.release.family

    def describe(self, transports: tuple[str, ...] | None = None) -> str:
        """'Windows Server 2008 R2 over FC'."""
        tr = self.transports if transports is None else transports
        text = self.release.describe()
        if tr:
            text += " over " + " and ".join(_TRANSPORT_NAMES.get(t, t) for t in tr)
        return text


UNKNOWN = HostProfile("", OsRelease())


def release_of(component: Any) -> OsRelease:
    """The release a server or VM runs (from its os/hypervisor words and its declared platform)."""
    if isinstance(component, Server):
        return parse_os(component.os or "", component.hypervisor or "", component.platform or "")
    if isinstance(component, VM):
        return parse_os(component.guest_os or "")
    return OsRelease()


def transport_words(transports: tuple[str, ...]) -> str:
    return " and ".join(_TRANSPORT_NAMES.get(t, t) for t in transports)


def host_platform(bed: Any, host_id: str) -> HostProfile:
    """Which platform family, version and transports the machine `host_id` has, as the
    methodology sees it (for tools that follow its version rules, e.g. the Ansible export)."""
    from topology.methodology.context import BedContext
    return BedContext(bed).profile(host_id)


def host_platforms(bed: Any) -> dict[str, HostProfile]:
    """`host_platform` of every server and VM of the bed, worked out together (one path derivation)."""
    from topology.methodology.context import BedContext
    ctx = BedContext(bed)
    return {c.id: ctx.profile(c.id) for c in [*bed.servers, *bed.vms]}


def automated_for(methodology: Any, host_id: str) -> dict[str, bool]:
    """Step number -> whether the step is automated on `host_id` (steps done on that machine only)."""
    out: dict[str, bool] = {}
    for step in methodology.steps():
        targets = {step.target} | {c.target for c in step.automation if c.target}
        if host_id in targets:
            out[step.number] = step.runnable
    return out


def families_file(base: Path) -> Path | None:
    path = base / "families.yaml"
    return path if path.is_file() else None
