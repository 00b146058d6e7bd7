"""Which operating system a host runs, read from the words a bed (or a report) uses for it, and
version ranges to compare it with.

    parse_os("Windows Server 2008 R2 Enterprise SP1")  -> windows, windows-server, 2008 R2
    parse_os("Microsoft Hyper-V Server 2012 R2")       -> windows, hyper-v-server, 2012 R2
    parse_os("Red Hat Enterprise Linux 7.9")           -> linux, rhel, 7.9
    parse_os("VMware ESXi 6.7 U3")                     -> esxi, esxi, 6.7 (update 3)
    parse_os("Solaris 10")                             -> family "" (unknown: nothing is automated for it)

Windows versions are compared as (year, R): 2008 = (2008, 0), 2008 R2 = (2008, 2), so
`>=2012` holds for 2012, 2012 R2 and 2016 but not for 2008 R2.  A Windows client release is
compared as the server release it shares its management tools with (Windows 7 as 2008 R2,
8 as 2012, 8.1 as 2012 R2, 10 as 2016, 11 as 2022).

A version range (`VersionRange`) is one or more clauses separated by commas, all of which must
hold: `>=2012`, `<2012`, `>6.4`, `<=7`, `==2008 R2`, a bare version (`2008 R2`, `6`, `6.x`: that
version and its minor releases), or an inclusive range `5.x-8.x` / `2008-2008 R2`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

Version = tuple[int, ...]

FAMILIES = ("windows", "linux", "esxi")
# distributions that share their tools (package manager, network scripts) with another
DISTRO_LINEAGE = {"rhel": "rhel", "centos": "rhel", "rocky": "rhel", "alma": "rhel", "oracle": "rhel",
                  "fedora": "rhel", "rhev-h": "rhel", "ovirt-node": "rhel",
                  "debian": "debian", "ubuntu": "debian", "proxmox": "debian",
                  "sles": "suse", "opensuse": "suse"}


@dataclass(frozen=True, slots=True)
class OsRelease:
    """A host's operating system as far as the bed says it."""
    family: str = ""          # windows | linux | esxi | "" (unknown)
    distro: str = ""          # windows-server, hyper-v-server, windows-client, rhel, centos, ubuntu, esxi ...
    version: Version = ()     # () when the bed gives none
    update: int | None = None  # ESXi update, Windows service pack
    hypervisor: str = ""      # hyper-v | kvm | rhev | esxi | xen | ""
    text: str = ""            # the bed's own words

    @property
    def lineage(self) -> str:
        """The distribution whose tools this one shares (centos -> rhel, ubuntu -> debian)."""
        return DISTRO_LINEAGE.get(self.distro, self.distro)

    @property
    def version_text(self) -> str:
        return version_text(self.family, self.version, self.distro)

    def describe(self) -> str:
        """How a sentence names it: 'Windows Server 2008 R2', 'RHEL 6.4', 'ESXi 6.7 U3'."""
        name = _DISTRO_NAMES.get(self.distro) or _FAMILY_NAMES.get(self.family) or ""
        if self.distro == "windows-client" and (c := _WIN_CLIENT.search(self.text)):
            return f"Windows {c.group(1)}"
        if not name:
            return " ".join(self.text.split()) or "an operating system the bed does not name"
        if not self.version:
            return f"{name} (version not stated)"
        out = f"{name} {self.version_text}"
        if self.update and self.family == "esxi":
            out += f" U{self.update}"
        return out


_FAMILY_NAMES = {"windows": "Windows", "linux": "Linux", "esxi": "ESXi"}
_DISTRO_NAMES = {"windows-server": "Windows Server", "hyper-v-server": "Hyper-V Server",
                 "windows-client": "Windows (client)", "rhel": "RHEL", "centos": "CentOS", "rocky": "Rocky Linux",
                 "alma": "AlmaLinux", "oracle": "Oracle Linux", "fedora": "Fedora", "rhev-h": "RHEV-H",
                 "ovirt-node": "oVirt Node", "debian": "Debian", "ubuntu": "Ubuntu", "proxmox": "Proxmox VE",
                 "sles": "SLES", "opensuse": "openSUSE", "esxi": "ESXi"}


def version_text(family: str, version: Version, distro: str = "") -> str:
    if not version:
        return ""
    if family == "windows" and version[0] >= 1990:
        return f"{version[0]}" + (" R2" if len(version) > 1 and version[1] == 2 else "")
    if distro == "ubuntu" and len(version) > 1:
        return f"{version[0]}.{version[1]:02d}" + "".join(f".{v}" for v in version[2:])
    return ".".join(str(v) for v in version)


# ---------------------------------------------------------------------------------------- parsing

_WIN = re.compile(r"\bwin(dows)?\b|\bw2k\d|\bws20\d\d|\bwin20\d\d|\bwin2k\d?|hyper-v server|microsoft", re.I)
_HYPERV_SERVER = re.compile(r"hyper-?v\s+server", re.I)
_WIN_SERVER_YEAR = re.compile(r"(?<!\d)(2000|2003|2008|2012|2016|2019|2022|2025)(?!\d)\s*(r2)?", re.I)
_WIN_SHORT = re.compile(r"\b(?:w2k|win2k)(3|8|12)\s*(r2)?\b", re.I)
_WIN_SEMI_ANNUAL = re.compile(r"\bversion\s+(1[6-9]\d\d|2[0-9]h[12]|20\d\d)\b", re.I)
_WIN_CLIENT = re.compile(r"\bwindows\s+(xp|vista|7|8\.1|8|10|11)\b", re.I)
_CLIENT_AS_SERVER: dict[str, Version] = {"xp": (2003, 0), "vista": (2008, 0), "7": (2008, 2), "8": (2012, 0),
                                         "8.1": (2012, 2), "10": (2016, 0), "11": (2022, 0)}
_SERVICE_PACK = re.compile(r"\bsp\s*(\d+)\b|service pack\s*(\d+)", re.I)

_ESXI = re.compile(r"\besxi?\b|vsphere|vmware", re.I)
_ESXI_UPDATE = re.compile(r"(?<![a-z])(?:update\s*|u)(\d+)\b", re.I)

# (distro, pattern), the first that matches wins: the more specific names come first
_LINUX_DISTROS: tuple[tuple[str, re.Pattern], ...] = tuple((d, re.compile(p, re.I)) for d, p in (
    ("rhev-h", r"\brhev-?h\b|enterprise virtualization hypervisor"),
    ("ovirt-node", r"\bovirt[- ]node\b"),
    ("centos", r"\bcentos\b"),
    ("rocky", r"\brocky\b"),
    ("alma", r"\balma\s*linux\b|\balma\b"),
    ("oracle", r"\boracle\s+linux\b|\bol\s?\d"),
    ("fedora", r"\bfedora\b"),
    ("rhel", r"\brhel\b|red\s*hat|\brhev\b"),
    ("ubuntu", r"\bubuntu\b"),
    ("proxmox", r"\bproxmox\b"),
    ("debian", r"\bdebian\b"),
    ("sles", r"\bsles\b|suse linux enterprise"),
    ("opensuse", r"\bopensuse\b"),
))
_LINUX = re.compile(r"linux|\bkvm\b|libvirt|\bovirt\b|\brhev", re.I)
_DEBIAN_CODENAMES = {"squeeze": (6,), "wheezy": (7,), "jessie": (8,), "stretch": (9,), "buster": (10,),
                     "bullseye": (11,), "bookworm": (12,), "trixie": (13,)}
_NUMBER = re.compile(r"(?<![\w.])(\d{1,2}(?:\.\d{1,3}){0,2})(?![\d])")

_HYPERVISORS: tuple[tuple[str, re.Pattern], ...] = tuple((h, re.compile(p, re.I)) for h, p in (
    ("rhev", r"\brhev(-?m)?\b|\bovirt\b|red hat (enterprise )?virtualization|\brhv\b"),
    ("esxi", r"\besxi?\b|vsphere"),
    ("hyper-v", r"hyper-?v"),
    ("kvm", r"\bkvm\b|libvirt|qemu|proxmox"),
    ("xen", r"\bxen\b"),
))


@lru_cache(maxsize=4096)
def parse_os(os_text: str, hypervisor_text: str = "", platform: str = "") -> OsRelease:
    """The release `os_text` names.  `hypervisor_text` (a server's hypervisor field) and `platform`
    (its declared platform: windows, linux, esxi) settle the family when the words do not.  Unknown
    words give family "" (or the declared platform, with no version)."""
    text = " ".join(f"{os_text or ''} {hypervisor_text or ''}".split())
    hypervisor = next((h for h, pat in _HYPERVISORS if pat.search(text)), "")
    family = ""
    if _ESXI.search(os_text or "") or (not os_text and _ESXI.search(text)):
        family = "esxi"
    elif _WIN.search(text) and not _LINUX.search(os_text or ""):
        family = "windows"
    elif _LINUX.search(text) or any(p.search(text) for _, p in _LINUX_DISTROS):
        family = "linux"
    elif hypervisor == "hyper-v":
        family = "windows"    # the Hyper-V role runs on Windows
    if platform in FAMILIES and family != platform:
        # the declared platform is how the host is reached: it wins; the words then say nothing of the version
        return OsRelease(platform, "", (), None, hypervisor, text)
    if family == "windows":
        return _windows(text, hypervisor)
    if family == "esxi":
        return _esxi(os_text or text)
    if family == "linux":
        return _linux(text, hypervisor)
    return OsRelease("", "", (), None, hypervisor, text)


def _windows(text: str, hypervisor: str) -> OsRelease:
    distro = "hyper-v-server" if _HYPERV_SERVER.search(text) else "windows-server"
    if distro == "hyper-v-server":
        hypervisor = "hyper-v"
    version: Version = ()
    m = _WIN_SERVER_YEAR.search(text)
    if m:
        version = (int(m.group(1)), 2 if m.group(2) else 0)
    elif (s := _WIN_SHORT.search(text)):
        year = {"3": 2003, "8": 2008, "12": 2012}[s.group(1)]
        version = (year, 2 if s.group(2) else 0)
    elif (c := _WIN_CLIENT.search(text)):
        distro = "windows-client"
        version = _CLIENT_AS_SERVER[c.group(1).lower()]
    elif (sa := _WIN_SEMI_ANNUAL.search(text)):
        # the semi-annual channel: 1709 and 1803 are 2016's tools, 1809 and later 2019's
        code = sa.group(1).lower()
        version = (2016, 0) if code in ("1607", "1709", "1803") else (2019, 0)
    sp = _SERVICE_PACK.search(text)
    update = int(sp.group(1) or sp.group(2)) if sp else None
    return OsRelease("windows", distro, version, update, hypervisor, text)


def _esxi(text: str) -> OsRelease:
    version: Version = ()
    m = _NUMBER.search(text)
    if m:
        version = tuple(int(x) for x in m.group(1).split("."))
        while len(version) > 2 and version[-1] == 0:
            version = version[:-1]
    u = _ESXI_UPDATE.search(text[m.end():] if m else text)
    return OsRelease("esxi", "esxi", version, int(u.group(1)) if u else None, "esxi", " ".join(text.split()))


def _linux(text: str, hypervisor: str) -> OsRelease:
    distro = ""
    rest = text
    for name, pat in _LINUX_DISTROS:
        m = pat.search(text)
        if m:
            distro = name
            rest = text[m.end():]
            break
    version: Version = ()
    m = _NUMBER.search(rest)
    if m:
        version = tuple(int(x) for x in m.group(1).split("."))
    elif distro == "debian":
        version = next((v for code, v in _DEBIAN_CODENAMES.items() if code in text.lower()), ())
    sp = _SERVICE_PACK.search(rest)
    if distro in ("sles",) and sp and len(version) == 1:
        version = (version[0], int(sp.group(1) or sp.group(2)))
    if distro in ("rhev-h", "ovirt-node") and not hypervisor:
        hypervisor = "rhev"
    return OsRelease("linux", distro, version, None, hypervisor, text)


# ---------------------------------------------------------------------------------------- ranges

_VERSION_WORDS = re.compile(r"^\s*(\d+(?:\.(?:\d+|x))*)\s*(r2)?\s*$", re.I)
_CLAUSE = re.compile(r"^\s*(>=|<=|==|>|<)?\s*(.+?)\s*$")


class VersionRangeError(ValueError):
    """A version range a template cannot use (the message says why)."""


def parse_version(text: str) -> tuple[Version, bool]:
    """('2008 R2' -> (2008, 2), exact); ('6.x' -> (6,), a prefix: any 6.y)."""
    m = _VERSION_WORDS.match(str(text))
    if not m:
        raise VersionRangeError(f"{text!r} is not a version (write e.g. 2012, 2008 R2, 6.4 or 7.x)")
    parts = m.group(1).split(".")
    prefix = parts[-1] == "x"
    if prefix:
        parts = parts[:-1]
    if any(p == "x" for p in parts):
        raise VersionRangeError(f"{text!r}: only the last part of a version can be x")
    nums = tuple(int(p) for p in parts)
    if m.group(2):
        if len(nums) != 1:
            raise VersionRangeError(f"{text!r}: R2 follows a year, as in 2008 R2")
        return (nums[0], 2), False
    # a bare year is Windows' release without R2; other bare numbers name a major release and its minors
    if len(nums) == 1 and nums[0] >= 1990:
        return (nums[0], 0), prefix
    return nums, True if len(nums) == 1 else prefix


def _cmp(a: Version, b: Version) -> int:
    n = max(len(a), len(b))
    pa, pb = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return (pa > pb) - (pa < pb)


def _starts_with(v: Version, prefix: Version) -> bool:
    return v[:len(prefix)] == prefix or (len(v) < len(prefix) and _cmp(v, prefix) == 0)


@dataclass(frozen=True)
class VersionRange:
    """Clauses that must all hold (see the module's docstring)."""
    text: str
    clauses: tuple[tuple[str, Version, bool], ...]   # (operator, version, prefix) ; operator "range" uses two

    def contains(self, version: Version) -> bool:
        if not version:
            return False
        for op, bound, prefix in self.clauses:
            c = _cmp(version, bound)
            if op == "==" and not (_starts_with(version, bound) if prefix else c == 0):
                return False
            if op == ">=" and c < 0 and not (prefix and _starts_with(version, bound)):
                return False
            if op == "<=" and c > 0 and not (prefix and _starts_with(version, bound)):
                return False
            if op == ">" and (c <= 0 or (prefix and _starts_with(version, bound))):
                return False
            if op == "<" and c >= 0:
                return False
        return True

    def __str__(self) -> str:
        return self.text


@lru_cache(maxsize=1024)
def parse_range(text: str) -> VersionRange:
    """A `VersionRange`; raises VersionRangeError naming what is wrong."""
    raw = str(text).strip()
    if not raw or raw in ("*", "any"):
        return VersionRange(raw or "*", ())
    clauses: list[tuple[str, Version, bool]] = []
    for part in raw.split(","):
        part = part.strip()
        if not part:
            raise VersionRangeError(f"{raw!r}: an empty clause between commas")
        lo_hi = re.split(r"\s+-\s+|(?<=[\dxX2])-(?=\s*\d)", part)
        if len(lo_hi) == 2 and not part.startswith(("<", ">", "=")):
            lo, lo_prefix = parse_version(lo_hi[0])
            hi, hi_prefix = parse_version(lo_hi[1])
            if _cmp(lo, hi) > 0:
                raise VersionRangeError(f"{part!r}: the range starts after it ends")
            clauses.append((">=", lo, lo_prefix))
            clauses.append(("<=", hi, hi_prefix))
            continue
        m = _CLAUSE.match(part)
        op, version = ((m.group(1) or "=="), m.group(2)) if m else ("==", part)
        v, prefix = parse_version(version)
        if op in ("<", ">=") and prefix:
            prefix = False   # '<7' and '>=7' mean 7.0 as the bound
        clauses.append((op, v, prefix))
    return VersionRange(raw, tuple(clauses))
