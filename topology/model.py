"""The test-bed model: every component a published storage / virtualization test bed needs.

Plain dataclasses, no behaviour beyond small derived properties.  The file format
(`topology.fileformat`), the JSON Schema and the validator read the field metadata
declared with `fld`.  References between components are by id (a string); a port is
named ``DEVICE:PORT`` (``R710-1:SAN1``, ``MD3000i:0-0``) and a volume ``ARRAY:VOLUME``.
Slot ranges in disk groups are written ``ENCLOSURE:FIRST-LAST`` (``RKA0:9-14``).

Where a report is silent a field is left out or written ``not stated`` (`topology.unknown`);
a value that is known to be questionable is kept and explained in the component's ``note``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import topology.array_groups as _array_groups
import topology.model_storage as _model_storage
from topology.array_groups import ArrayGroup
from topology.configuration_spec import Configuration
from topology.fields import fld, lst, mapping
from topology.model_storage import (  # noqa: F401  (re-exported: the model is read from this module)
    DISK_INTERFACES,
    MEDIA,
    RAID_LEVELS,
    VOLUME_PURPOSES,
    ArrayHost,
    Controller,
    DiskGroup,
    DiskSet,
    Enclosure,
    HostGroup,
    Mapping,
    PathSpec,
    Pool,
    Replication,
    StorageArray,
    Volume,
)

FORMAT_VERSION = 1

PORT_KINDS = ("ethernet", "fc", "sas", "management", "infiniband")
PORT_ROLES = ("iscsi", "lan", "heartbeat", "live_migration", "management", "vm",
              "fc", "replication", "unused")
SERVER_ROLES = ("hypervisor", "infrastructure", "load_client", "test_controller",
                "management", "application")
VDISK_TYPES = ("", "fixed", "dynamic", "differencing", "passthrough")
STORAGE_ACCESS = ("hypervisor", "guest_iscsi", "sriov", "passthrough", "local")
COMPARISONS = ("<", "<=", ">", ">=", "==", "between")
SEVERITIES = ("error", "warning", "info")


# --------------------------------------------------------------------------- hardware

@dataclass(slots=True, kw_only=True)
class Cpu:
    sockets: int = fld(1, minimum=1, maximum=1024, doc="processor packages")
    cores_per_socket: int | None = fld(None, minimum=1, maximum=4096, doc="empty when the report does not say")
    threads_per_core: int | None = fld(None, minimum=1, maximum=64, doc="2 with Hyper-Threading; empty when not stated")
    model: str = fld("", doc="vendor and name, e.g. Intel Xeon X5570")
    ghz: float | None = fld(None, minimum=0)
    note: str = fld("")

    @property
    def cores(self) -> int | None:
        return self.sockets * self.cores_per_socket if self.cores_per_socket and self.sockets else None

    @property
    def threads(self) -> int | None:
        """Hardware threads; without a stated thread count, one per core."""
        cores = self.cores
        return cores * (self.threads_per_core or 1) if cores else None


@dataclass(slots=True, kw_only=True)
class LocalDisk:
    count: int = fld(1, minimum=1, maximum=100_000)
    model: str = fld("")
    size_gb: float | None = fld(None, minimum=0)
    rpm: int | None = fld(None, minimum=0, maximum=100_000)
    media: str = fld("hdd", choices=MEDIA)
    interface: str = fld("", doc="SAS, SATA ...")
    raid: str = fld("", doc="local RAID layout as the report states it")


@dataclass(slots=True, kw_only=True)
class Port:
    """A physical port on a server adapter, a switch or an array controller."""
    name: str = fld(doc="unique within its device")
    kind: str = fld("ethernet", choices=PORT_KINDS)
    speed_gbps: float | None = fld(None, minimum=0)
    roles: list[str] = lst("traffic the port carries", choices=PORT_ROLES, flow=True)
    address: str = fld("", doc="IPv4 address with prefix, e.g. 192.168.130.201/24")
    network: str = fld("", ref="network")
    mtu: int | None = fld(None, minimum=576, maximum=65535)
    flow_control: bool | None = fld(None)
    vlan: int | None = fld(None, minimum=0, maximum=4095)
    team: str = fld("", doc="team / LAG name the port belongs to")
    wwpn: str = fld("")
    mac: str = fld("", doc="hardware address as the host reports it (the as-built check can learn it)")
    label: str = fld("", doc="the report's own name, e.g. 'Local Area Connection 4'")
    fabric: str = fld("", doc="FC fabric (A/B)")
    edge: bool | None = fld(None, doc="switch port set as spanning-tree edge port")
    offloads: dict[str, Any] = mapping("LSO, checksum, VMQ, SR-IOV ...", flow=True)
    modes: list[str] = lst("adapter personalities, e.g. NDIS, ISOE", flow=True)
    bound_to: str = fld("", ref="port", doc="iSCSI port binding: the physical port (DEVICE:PORT) this "
                                            "initiator interface sends through; several may share one")
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class Adapter:
    name: str = fld(doc="unique within the server, e.g. NIC1 or HBA1")
    model: str = fld("")
    kind: str = fld("ethernet", choices=PORT_KINDS)
    firmware: str = fld("")
    integrated: bool | None = fld(None)
    ports: list[Port] = lst()
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class Server:
    id: str = fld(doc="host name, unique in the bed", path_part=True)
    role: str = fld("hypervisor", choices=SERVER_ROLES)
    model: str = fld("")
    chassis: str = fld("", ref="chassis", doc="blade chassis holding this server")
    bay: int | None = fld(None, minimum=0, maximum=10_000)
    cpu: Cpu | None = fld(None)
    memory_gb: float | None = fld(None, minimum=0)
    numa_nodes: int | None = fld(None, minimum=1, maximum=4096)
    os: str = fld("")
    hypervisor: str = fld("", doc="Hyper-V, ESXi, KVM ...")
    platform: str = fld("", choices=("windows", "linux", "esxi", ""),
                        doc="how the run engine reaches it")
    bios: dict[str, Any] = mapping("BIOS settings: virtualization, sriov, node_interleaving ...")
    software: list[str] = lst("roles and software installed", flow=True)
    multipath: str = fld("", doc="multipath software: MPIO/DSM, HDLM, RDAC, dm-multipath")
    local_disks: list[LocalDisk] = lst()
    adapters: list[Adapter] = lst()
    domain: str = fld("")
    dns: list[str] = lst(flow=True)
    management_address: str = fld("")
    simulated: bool = fld(False, doc="exists only as a setting of the test tool", stated=True)
    attributes: dict[str, Any] = mapping("report-table rows not modelled elsewhere")
    settings: dict[str, Any] = mapping("hypervisor / OS settings")
    note: str = fld("")
    x: float | None = fld(None, minimum=-1e7, maximum=1e7, doc="canvas position", stated=True)
    y: float | None = fld(None, minimum=-1e7, maximum=1e7, stated=True)


@dataclass(slots=True, kw_only=True)
class Chassis:
    id: str = fld(path_part=True)
    model: str = fld("")
    bays: int | None = fld(None, minimum=1, maximum=10_000)
    attributes: dict[str, Any] = mapping()
    note: str = fld("")
    x: float | None = fld(None, minimum=-1e7, maximum=1e7, stated=True)
    y: float | None = fld(None, minimum=-1e7, maximum=1e7, stated=True)


@dataclass(slots=True, kw_only=True)
class Zone:
    """An FC zone: the ports (DEVICE:PORT) or WWPNs allowed to see each other in the fabric."""
    name: str = fld()
    members: list[str] = lst("DEVICE:PORT refs or WWPNs", flow=True)
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class Switch:
    id: str = fld(path_part=True)
    kind: str = fld("ethernet", choices=("ethernet", "fc"))
    model: str = fld("")
    firmware: str = fld("")
    chassis: str = fld("", ref="chassis", doc="blade chassis holding this switch module")
    bay: int | None = fld(None, minimum=0, maximum=10_000, doc="I/O module bay of its chassis")
    port_count: int | None = fld(None, minimum=0, maximum=100_000, doc="ports available; links may name no port")
    ports: list[Port] = lst("ports the bed describes individually")
    mtu: int | None = fld(None, minimum=576, maximum=65535, doc="default for every port")
    flow_control: bool | None = fld(None, doc="default for every port")
    vlans: list[int] = lst(flow=True, minimum=0, maximum=4095)
    spanning_tree: str = fld("")
    fabric: str = fld("", doc="FC fabric (A/B)")
    roles: list[str] = lst("networks carried: iscsi, lan ...", choices=PORT_ROLES, flow=True)
    zones: list[Zone] = lst("FC zoning of the fabric this switch belongs to; none = an open fabric")
    settings: dict[str, Any] = mapping("iscsi_optimization, lldp, ip_routing ...")
    label: str = fld("", doc="the report's own name for the switch")
    simulated: bool = fld(False, stated=True)
    note: str = fld("")
    x: float | None = fld(None, minimum=-1e7, maximum=1e7, stated=True)
    y: float | None = fld(None, minimum=-1e7, maximum=1e7, stated=True)


@dataclass(slots=True, kw_only=True)
class Network:
    id: str = fld()
    cidr: str = fld("", doc="e.g. 192.168.130.0/24; empty when the report gives none")
    vlan: int | None = fld(None, minimum=0, maximum=4095)
    role: str = fld("lan", choices=PORT_ROLES)
    mtu: int | None = fld(None, minimum=576, maximum=65535)
    cluster_use: str = fld("", choices=("", "none", "cluster_only", "cluster_and_client"),
                           doc="failover-cluster network role")
    routed_to: list[str] = lst("networks reachable through a router", ref="network", flow=True)
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class Link:
    a: str = fld(doc="DEVICE:PORT, or DEVICE when the report names no port", stated=True)
    b: str = fld(doc="the other end; `not stated` when the source says the port is cabled but not where to",
                 may_be_unstated=True)
    kind: str = fld("cable", choices=("cable", "isl", "lag", "stack"))
    note: str = fld("")


# ------------------------------------------------------------------------------ storage: topology/model_storage.py
# its Controller.ports names Port, which it imports for type checking only: give `typing.get_type_hints`
# (the fuzz tests, any reader of the hints) the class in that module's namespace too
_model_storage.__dict__["Port"] = Port
for _name in ("ArrayHost", "HostGroup", "Mapping", "Pool", "Volume"):
    _array_groups.__dict__[_name] = getattr(_model_storage, _name)


# ------------------------------------------------------------------------------ virtual

@dataclass(slots=True, kw_only=True)
class Cluster:
    id: str = fld(path_part=True)
    nodes: list[str] = lst(ref="server", flow=True)
    address: str = fld("")
    quorum: str = fld("", doc="node_majority, node_and_disk_majority ...")
    witness: str = fld("", ref="volume")
    shared_volumes: list[str] = lst("cluster shared volumes", ref="volume", flow=True)
    excluded_networks: list[str] = lst(ref="network", flow=True)
    live_migration_networks: list[str] = lst(ref="network", flow=True)
    settings: dict[str, Any] = mapping()
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class VirtualSwitch:
    id: str = fld(doc="unique in the bed, e.g. R710-1/LAN")
    host: str = fld(ref="server", stated=True)
    uplinks: list[str] = lst(ref="port", flow=True)
    role: str = fld("vm", choices=PORT_ROLES)
    sriov: bool = fld(False)
    management_os: bool = fld(False, doc="shared with the management OS")
    label: str = fld("")
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class VirtualDisk:
    name: str = fld()
    size_gb: float | None = fld(None, minimum=0)
    format: str = fld("", choices=("", "vhd", "vhdx", "vmdk", "qcow2", "raw"))
    type: str = fld("", choices=VDISK_TYPES, doc="empty when the report does not say")
    volume: str = fld("", ref="volume", doc="ARRAY:VOLUME it sits on")
    local: bool = fld(False, doc="on the host's local disks")
    controller: str = fld("", doc="IDE / SCSI")
    path: str = fld("")
    purpose: list[str] = lst("what the disk holds (database, log, ...): a VM's database and log disks on one "
                             "volume share its spindles", choices=VOLUME_PURPOSES, flow=True)
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class VNic:
    name: str = fld()
    vswitch: str = fld("", ref="vswitch")
    role: str = fld("lan", choices=PORT_ROLES)
    address: str = fld("")
    network: str = fld("", ref="network")
    mtu: int | None = fld(None, minimum=576, maximum=65535)
    synthetic: bool = fld(True)
    offloads: dict[str, Any] = mapping(flow=True)
    iscsi_ifaces: list[str] = lst("in-guest iSCSI interfaces bound to this NIC (open-iscsi `iscsiadm -m iface`), "
                                  "e.g. eth2_0 eth2_1 eth2_2; their sessions leave by this NIC", flow=True)


@dataclass(slots=True, kw_only=True)
class DynamicMemory:
    startup_gb: float | None = fld(None, minimum=0)
    min_gb: float | None = fld(None, minimum=0)
    max_gb: float | None = fld(None, minimum=0)


@dataclass(slots=True, kw_only=True)
class VM:
    id: str = fld(path_part=True)
    host: str = fld("", ref="server", doc="placement in the reference scenario")
    role: str = fld("")
    vcpu: int = fld(1, minimum=1, maximum=4096)
    memory_gb: float = fld(minimum=0, doc="static memory (startup for dynamic)")
    dynamic_memory: DynamicMemory | None = fld(None)
    guest_os: str = fld("")
    highly_available: bool = fld(False)
    production: bool = fld(True)
    under_load: bool = fld(False)
    storage_access: str = fld("hypervisor", choices=STORAGE_ACCESS)
    multipath: str = fld("")
    disks: list[VirtualDisk] = lst()
    nics: list[VNic] = lst()
    software: list[str] = lst(flow=True)
    note: str = fld("")


# ---------------------------------------------------------------------- tests and runs

@dataclass(slots=True, kw_only=True)
class AccessSpec:
    share_pct: float = fld(100, minimum=0, maximum=100)
    block_kb: float = fld(minimum=0)
    read_pct: float = fld(minimum=0, maximum=100)
    random_pct: float = fld(100, minimum=0, maximum=100)


@dataclass(slots=True, kw_only=True)
class Criterion:
    metric: str = fld(doc="e.g. db_read_latency_avg_ms", stated=True)
    comparison: str = fld(choices=COMPARISONS, stated=True)
    threshold: float = fld()
    upper: float | None = fld(None, doc="upper bound for 'between'")
    unit: str = fld("")
    source: str = fld("")
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class WorkloadLevel:
    """The machines a load runs on at one level of the test matrix (1 cell: the first cell's VMs)."""
    level: str = fld(stated=True, doc="a level of a test_matrix entry that lists the workload, as written there")
    targets: list[str] = lst("VMs or servers the load runs on at that level", ref="target", flow=True)
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class Workload:
    id: str = fld(path_part=True)
    tool: str = fld(doc="fio, DiskSpd, Iometer, Jetstress, LoadGen, DVD Store ...")
    targets: list[str] = lst("VMs, servers or volumes the load runs against", ref="target", flow=True)
    driver: str = fld("", ref="component", doc="machine that runs the tool")
    parameters: dict[str, Any] = mapping()
    access: list[AccessSpec] = lst()
    demand_iops: float | None = fld(None, minimum=0, doc="IOPS the load needs from storage")
    read_pct: float | None = fld(None, minimum=0, maximum=100)
    criteria: list[Criterion] = lst()
    duration_minutes: float | None = fld(None, minimum=0, maximum=100_000,
                                         doc="how long this load runs; empty = run_plan.duration_minutes")
    ramp_minutes: float | None = fld(None, minimum=0, maximum=100_000,
                                     doc="warm-up before its figures count (not measured)")
    order: int | None = fld(None, minimum=0, maximum=10_000,
                            doc="when it starts in a run: loads of one order start together, a higher order "
                                "once the lower ones have finished (sqlio OLTP 1, then DSS 2); empty = 0")
    together_with: list[str] = lst("loads started at the same moment as this one (they share its order)",
                                   ref="workload", flow=True)
    levels: list[WorkloadLevel] = lst("the machines it runs on at each level of the test matrix; a level not "
                                      "listed: targets")
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class Scenario:
    id: str = fld(path_part=True)
    description: str = fld("")
    failed: list[str] = lst("components down in this scenario (a host unplugged, a drive pulled)",
                            ref="component", flow=True)
    vms: list[str] = lst("VMs that run in this scenario; empty = every VM; `not stated` when the source does "
                         "not say which", ref="vm", flow=True, may_be_unstated=True)
    excluded: list[str] = lst("components not part of this scenario", ref="component", flow=True)
    reference: bool = fld(False, doc="the bed's reference configuration")
    configuration: str = fld("", doc="the configuration it runs in (configurations:); empty = each of them")
    note: str = fld("")
    placement: dict[str, str] = mapping("VM -> host overrides", flow=False)
    checks: list[str] = lst("how the lab checks that the bed reached this scenario before its runs "
                            "(the ports down, the paths left)")
    # a failover test takes the parts out while the load runs: that moment is part of the test, not its set-up
    fail_after_minutes: float | None = fld(None, minimum=0, maximum=100_000,
                                           doc="the parts in `failed` go out of service this many minutes after "
                                               "the loads of each run start, while they run (a failover under "
                                               "load), and `checks` are made then; empty: before the runs")
    restore_after_minutes: float | None = fld(None, minimum=0, maximum=100_000,
                                              doc="with fail_after_minutes: the parts come back this many minutes "
                                                  "after the loads start; empty: once the loads have ended")
    settings: dict[str, Any] = mapping()


@dataclass(slots=True, kw_only=True)
class MatrixEntry:
    id: str = fld()
    variable: str = fld(stated=True)
    levels: list[Any] = lst(flow=True)
    constants: dict[str, Any] = mapping()
    scenarios: list[str] = lst(ref="scenario", flow=True)
    workloads: list[str] = lst(ref="workload", flow=True)
    criteria: str = fld("")
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class RunPlan:
    repetitions: int | None = fld(None, minimum=1, maximum=10_000, doc="empty when not stated")
    score: str = fld("", choices=("", "median", "mean", "max", "min", "last"), doc="how the runs' score is taken")
    reset_steps: list[str] = lst()
    procedure: list[str] = lst("the run's ordered steps after the reset, as the report gives them")
    reboot: bool = fld(False)
    idle_minutes: float | None = fld(None, minimum=0, maximum=100_000)
    duration_minutes: float | None = fld(None, minimum=0, maximum=100_000)
    counters: list[str] = lst(flow=False)
    counter_hosts: list[str] = lst(ref="component", flow=True)
    sample_interval_s: float | None = fld(None, minimum=0, maximum=86_400)
    collector: str = fld("testbed-run", pattern=r"^[A-Za-z0-9_.-]{1,40}$",
                         doc="the name of the counter collection a run starts and stops (a perfmon "
                             "data collector set, the iostat/esxtop log file)")
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class ExceptionRecord:
    code: str = fld(pattern=r"^[A-Z]+-\d{3}$", doc="a rule code such as NET-001")
    subject: str = fld(doc="component id the exception is for ('*' = any)")
    reason: str = fld()


@dataclass(slots=True, kw_only=True)
class Result:
    workload: str = fld(ref="workload", stated=True)
    metric: str = fld(stated=True)
    value: float = fld()
    unit: str = fld("")
    scenario: str = fld("", ref="scenario")
    level: str = fld("", doc="matrix level, e.g. 200 users")
    subject: str = fld("", doc="what the figure is for: a server or VM, or an array, volume or group for an "
                               "array-level figure")
    bound: str = fld("", choices=("", "<", "<=", ">", ">="),
                     doc="the source gives a bound, not a figure: '<' with value 10 for '< 10 %'")
    configuration: str = fld("", doc="the configuration measured (configurations:)")
    published_percent: float | None = fld(None, minimum=-1e6, maximum=1e6,
                                          doc="a difference the report prints for this figure, in %")
    published_against: str = fld("", doc="the configuration or scenario the report's percentage is taken "
                                         "against, as it reads (e.g. rhev)")
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class Policy:
    vcpu_per_thread: float = fld(2.0, minimum=0, doc="CAP-002 limit")
    memory_reserve_gb: float = fld(2.0, minimum=0, doc="host RAM kept for the parent OS")
    min_iscsi_ports: int = fld(2, minimum=1, maximum=10_000)
    port_ratio_tolerance: float = fld(2.0, minimum=1, doc="PATH-005: ratio outside 1/t..t warns")


@dataclass(slots=True, kw_only=True)
class BedInfo:
    name: str = fld()
    description: str = fld("")
    source: str = fld("", doc="report the bed comes from")
    publisher: str = fld("")
    date: str = fld("")
    domain: str = fld("")
    note: str = fld("")


# --------------------------------------------------------------------------- remote access

TRANSPORTS = ("ssh", "winrm", "local")
WINRM_AUTH = ("ntlm", "kerberos", "basic", "credssp")


@dataclass(slots=True, kw_only=True)
class HostAccess:
    """How the run wizard reaches one component.  Secrets are never stored here: the
    password or key passphrase lives in the system keyring under `credential` (or the host
    id when empty), so hosts sharing an account can share one entry."""
    host: str = fld(ref="component", doc="server, VM, array or switch the steps target")
    transport: str = fld("ssh", choices=TRANSPORTS)
    address: str = fld("", doc="name or IP to connect to; empty = the host's management address")
    port: int | None = fld(None, minimum=1, maximum=65535, doc="empty = 22 for SSH, 5986/5985 for WinRM")
    user: str = fld("")
    credential: str = fld("", doc="keyring entry shared by several hosts (a group); empty = per host")
    key_file: str = fld("", doc="SSH private key; empty = agent and default keys")
    jump: str = fld("", doc="SSH jump host: another access entry's host id, or user@host:port")
    winrm_scheme: str = fld("https", choices=("https", "http"))
    winrm_auth: str = fld("ntlm", choices=WINRM_AUTH)
    verify_tls: bool = fld(True, doc="check the WinRM server certificate (leave on)")
    ca_file: str = fld("", doc="CA bundle for a lab's own certificates")
    timeout_s: float | None = fld(None, minimum=1, maximum=604_800, doc="default step timeout on this host")
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class Bed:
    format_version: int = fld(FORMAT_VERSION, minimum=1)
    bed: BedInfo = fld()
    policy: Policy = fld(factory=Policy)
    networks: list[Network] = lst()
    chassis: list[Chassis] = lst()
    servers: list[Server] = lst()
    switches: list[Switch] = lst()
    arrays: list[StorageArray] = lst()
    array_groups: list[ArrayGroup] = lst("discovery addresses of array groups (EqualLogic)")
    links: list[Link] = lst()
    paths: list[PathSpec] = lst()
    replications: list[Replication] = lst()
    clusters: list[Cluster] = lst()
    virtual_switches: list[VirtualSwitch] = lst()
    vms: list[VM] = lst()
    workloads: list[Workload] = lst()
    scenarios: list[Scenario] = lst()
    test_matrix: list[MatrixEntry] = lst()
    run_plan: RunPlan | None = fld(None)
    results: list[Result] = lst()
    exceptions: list[ExceptionRecord] = lst()
    access: list[HostAccess] = lst()
    configurations: list[Configuration] = lst("software configurations of the same hardware, compared")
