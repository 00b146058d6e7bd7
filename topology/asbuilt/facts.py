"""What a host says about itself: the facts the as-built check reads over the run's transports
(app/asbuilt/) and holds against the drawing (topology/asbuilt/compare.py).

Plain data, no parsing and no transports here: each platform's reader fills these in from its
own commands' output, and the comparison reads only these.  `read` names the areas that were
actually read, so a fact that was not read (no iscsiadm on the host, a cmdlet the release lacks)
is never taken for "none there"; `notes` say why an area was not read."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# the areas a reader may fill in (HostFacts.read)
INTERFACES, DISKS, SESSIONS, MULTIPATH, OS, MEMORY, CPU, VMS, IOMMU = (
    "interfaces", "disks", "sessions", "multipath", "os", "memory", "cpu", "vms", "iommu")


@dataclass
class Interface:
    name: str                       # as the OS names it: eth2, ens1f0, 'SAN 1' (Windows alias), vmnic2, vmk1
    mac: str = ""                   # lower case, colon-separated
    up: bool | None = None          # the link as the OS reports it (None: not reported)
    state: str = ""                 # the OS's own word: UP, DOWN, LOWERLAYERDOWN, Disconnected ...
    mtu: int | None = None
    addresses: list[str] = field(default_factory=list)   # IPv4 'a.b.c.d/prefix'
    speed_mbps: int | None = None
    flow_control: bool | None = None    # pause frames on (rx and tx)
    description: str = ""
    sriov_vfs: int | None = None        # SR-IOV virtual functions enabled on it (None: not a VF-capable NIC)


@dataclass
class Disk:
    name: str                       # sdb, loop3, PhysicalDisk2, naa.600...
    wwn: str = ""                   # bare lowercase hex (topology.volume_identity.normal_wwn)
    serial: str = ""
    vendor: str = ""
    model: str = ""
    size_bytes: int | None = None
    mountpoint: str = ""
    fstype: str = ""


@dataclass
class SessionDisk:
    lun: int
    disk: str                       # the Disk.name it attached as


@dataclass
class Session:
    """One iSCSI session (ESXi, Windows: one per connection path) as the initiator lists it."""
    target: str                     # the target's IQN
    portal: str                     # the portal's address, without port
    initiator_address: str = ""     # the address the session leaves from ('' when the OS does not say)
    initiator_name: str = ""        # the initiator's IQN
    state: str = ""
    disks: list[SessionDisk] = field(default_factory=list)


@dataclass
class MultipathMap:
    wwid: str                       # bare lowercase hex of the LUN's WWN
    name: str = ""
    paths: list[str] = field(default_factory=list)       # path devices
    active: int = 0                 # paths in use (active/ready)
    policy: str = ""


@dataclass
class VmInfo:
    """A running VM as its hypervisor describes it (virsh dominfo, Get-VM, esxcli vm process list)."""
    name: str
    vcpus: int | None = None
    memory_bytes: int | None = None     # the memory it was given (maximum, not what it uses now)
    state: str = ""


@dataclass
class HostFacts:
    host: str                       # the bed's id for it
    platform: str = ""              # linux | windows | esxi
    reached: bool = True
    error: str = ""                 # why it could not be reached or read at all
    os_name: str = ""               # 'Debian GNU/Linux 12 (bookworm)', 'Microsoft Windows Server 2012 R2 Standard'
    os_version: str = ""
    kernel: str = ""
    memory_bytes: int | None = None
    cpu_threads: int | None = None
    cpu_model: str = ""
    iommu: bool | None = None       # the kernel was started with an IOMMU on (intel_iommu=on / amd_iommu)
    initiator_name: str = ""        # the host's iSCSI initiator IQN
    interfaces: list[Interface] = field(default_factory=list)
    disks: list[Disk] = field(default_factory=list)
    sessions: list[Session] = field(default_factory=list)
    multipath: list[MultipathMap] = field(default_factory=list)
    vms: list[str] = field(default_factory=list)         # VMs running on it, by name
    vm_info: list[VmInfo] = field(default_factory=list)  # their vCPUs and memory, where the hypervisor says
    read: list[str] = field(default_factory=list)        # the areas actually read
    notes: list[str] = field(default_factory=list)       # what could not be read, and why
    seconds: float = 0.0

    def has(self, area: str) -> bool:
        return area in self.read

    def mark(self, area: str) -> None:
        if area not in self.read:
            self.read.append(area)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HostFacts:
        """The inverse of as_dict (a run's recorded check); unknown keys are ignored."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        facts = cls(**{k: v for k, v in known.items()
                       if k not in ("interfaces", "disks", "sessions", "multipath", "vm_info")})
        facts.interfaces = [_make(Interface, x) for x in data.get("interfaces") or []]
        facts.disks = [_make(Disk, x) for x in data.get("disks") or []]
        facts.sessions = []
        for x in data.get("sessions") or []:
            s = _make(Session, {k: v for k, v in x.items() if k != "disks"})
            s.disks = [_make(SessionDisk, d) for d in x.get("disks") or []]
            facts.sessions.append(s)
        facts.multipath = [_make(MultipathMap, x) for x in data.get("multipath") or []]
        facts.vm_info = [_make(VmInfo, x) for x in data.get("vm_info") or []]
        return facts


def _make(kind: Any, data: dict[str, Any]) -> Any:
    return kind(**{k: v for k, v in data.items() if k in kind.__dataclass_fields__})
