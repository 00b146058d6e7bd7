"""The storage part of the test-bed model: array controllers, enclosures and disks, disk groups,
pools, volumes, array hosts and mappings, paths and replication.  `topology.model` re-exports
every name here; the field plan reads the type hints in that module's namespace."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from topology.fields import fld, lst, mapping

if TYPE_CHECKING:
    from topology.model import Port

MEDIA = ("hdd", "ssd", "nvme")
DISK_INTERFACES = ("sas", "sata", "nl-sas", "fc", "nvme", "scsi")
RAID_LEVELS = ("raid0", "raid1", "raid5", "raid6", "raid10", "raid50", "raid60")
FILE_SYSTEMS = ("", "ext4", "xfs", "ext3", "btrfs")
VOLUME_PURPOSES = ("database", "log", "os", "witness", "vm", "data", "backup",
                   "tempdb", "file_share", "other", "access")
# a LUN's unique id as hosts read it from SCSI VPD page 0x83: NAA (16 or 32 hex digits, as `naa.…`,
# `0x…` or bare hex) or EUI-64 (`eui.…`); `topology.volume_identity.normal_wwn` reads them alike
WWN_PATTERN = r"(|(naa\.|0x)?[0-9A-Fa-f]{16}([0-9A-Fa-f]{16})?|eui\.[0-9A-Fa-f]{16}([0-9A-Fa-f]{8}|[0-9A-Fa-f]{16})?)"

# a unit serial as the host compares it: udev's ID_SCSI_SERIAL and Windows' SerialNumber are trimmed, so a serial
# pasted with the padding (or the brackets) iscsi-inq prints is found on no host, and the step that writes to the
# volume's disk is refused only at run time; refused here, where it is typed
SERIAL_PATTERN = r"^(|[^\s\[\]](.*[^\s\[\]])?)$"   # anchored: JSON Schema patterns search


@dataclass(slots=True, kw_only=True)
class Controller:
    name: str = fld(doc="unique within the array")
    cache_gb: float | None = fld(None, minimum=0)
    mode: str = fld("active", choices=("active", "standby", "active-active"))
    ports: list[Port] = lst()
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class DiskSet:
    """Identical disks in a range of slots of one enclosure."""
    slots: str = fld(doc="slot or range, e.g. 0-7 or 3", stated=True)
    model: str = fld("")
    size_gb: float = fld(minimum=0)
    rpm: int | None = fld(None, minimum=0, maximum=100_000)
    media: str = fld("hdd", choices=MEDIA)
    interface: str = fld("sas", choices=DISK_INTERFACES)
    firmware: str = fld("")


@dataclass(slots=True, kw_only=True)
class Enclosure:
    name: str = fld(doc="unique within the array, e.g. RKA0")
    slots: int = fld(minimum=0, maximum=10_000, doc="drive slots (a slot may be empty)")
    model: str = fld("")
    tray_id: int | None = fld(None, minimum=0, maximum=99,
                              doc="the tray ID the array's own CLI numbers the enclosure by (IBM DS / LSI: e.g. 85); "
                                  "its drives are named TRAY,SLOT in SMcli statements")
    disks: list[DiskSet] = lst()
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class DiskGroup:
    name: str = fld()
    raid: str = fld(choices=RAID_LEVELS)
    members: list[str] = lst("ENCLOSURE:SLOTS ranges; `not stated` when the source gives only how many "
                             "(disk_count)", flow=True)
    disk_count: int | None = fld(None, minimum=1, maximum=1_000_000,
                                 doc="how many disks, where the source does not say which slots (members: not stated)")
    geometry: str = fld("", doc="as the report writes it, e.g. 8D+1P")
    owner: str = fld("", ref="controller")
    pool: str = fld("", ref="pool")
    label: str = fld("", doc="the report's own name for the group")
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class Pool:
    name: str = fld()
    provisioning: str = fld("thick", choices=("thick", "thin"))
    purpose: list[str] = lst(choices=VOLUME_PURPOSES, flow=True)
    raid: str = fld("", choices=RAID_LEVELS + ("",), doc="RAID policy of a pool without explicit groups")
    formatted_gb: float | None = fld(None, minimum=0, doc="capacity the report states")
    members: list[str] = lst("a pool of an array group: the member arrays it spans (empty = every member)",
                             ref="array", flow=True)
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class Volume:
    name: str = fld()
    size_gb: float | None = fld(None, minimum=0, doc="empty when not stated (see remainder)")
    remainder: bool = fld(False, doc="takes what its group or pool has left (the whole group if alone)")
    group: str = fld("", ref="disk_group")
    pool: str = fld("", ref="pool")
    purpose: list[str] = lst(choices=VOLUME_PURPOSES, flow=True)
    owner: str = fld("", ref="controller")
    provisioning: str = fld("", choices=("", "thick", "thin"))
    reserve_gb: float | None = fld(None, minimum=0)
    read_only: bool = fld(False)
    dataset: str = fld("", doc="application data it holds, e.g. exchange-db1")
    copy: str = fld("", choices=("", "active", "replica"))
    drive: str = fld("", doc="host drive letter, mount point or disk device (E:, /data, sdb)")
    settings: dict[str, Any] = mapping("the array's settings of the volume as the source names them: "
                                       "segment_size_kb, read_cache, write_cache, write_cache_mirroring, "
                                       "read_ahead ...")
    label: str = fld("")
    # the file system is a choice of the test, not of the OS: a step that makes one needs the bed to say which
    file_system: str = fld("", choices=FILE_SYSTEMS,
                           doc="the file system the machine that formats it makes (mkfs.TYPE on Linux); empty or "
                               "not stated: that step is done by hand, never with an OS default")
    reuse: bool = fld(False, doc="it already holds its file system (labelled with `label`, else the volume's name), "
                                 "which the steps check and mount, never partition or format")
    # how a host tells this LUN from every other disk it sees: the storage steps that write select
    # their device by these at run time (README "Storage steps that write to a disk")
    wwn: str = fld("", pattern=WWN_PATTERN,
                   doc="unique id from SCSI VPD page 0x83 (NAA or EUI-64), e.g. naa.600a0b800026b2820000b4f04c4ddb10")
    serial: str = fld("", pattern=SERIAL_PATTERN,
                      doc="unit serial number (SCSI VPD page 0x80) as udev and Get-Disk show it: trimmed, without "
                          "the padding and brackets iscsi-inq and sg_inq print around it (MPIO0001, not "
                          "'[    MPIO0001]')")
    target: str = fld("", pattern=r"^\S*$", doc="iSCSI target name (IQN) or FC target WWPN that presents it, "
                                              "with no spaces")
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class ArrayHost:
    """A host definition on the array (initiators registered to a name)."""
    name: str = fld()
    server: str = fld("", ref="component", doc="server or VM this host stands for")
    host_type: str = fld("")
    host_group: str = fld("", ref="host_group")
    initiators: list[str] = lst("IQNs / WWPNs, or DEVICE:PORT", flow=True)


@dataclass(slots=True, kw_only=True)
class HostGroup:
    name: str = fld()
    note: str = fld("")


@dataclass(slots=True, kw_only=True)
class Mapping:
    volume: str = fld(ref="local_volume", doc="volume name in this array", stated=True)
    to: str = fld(ref="array_target", doc="array host or host group", stated=True)
    lun: int | None = fld(None, minimum=0, maximum=65535)
    ports: list[str] = lst("array ports presenting the LUN (empty = all)", flow=True)


@dataclass(slots=True, kw_only=True)
class StorageArray:
    id: str = fld(path_part=True)
    model: str = fld("")
    firmware: str = fld("")
    group: str = fld("", doc="array group (EqualLogic) this member belongs to")
    connectivity: str = fld("", choices=("", "iscsi", "fc", "sas", "nfs", "smb"))
    simulated: bool = fld(False, doc="exists only as a setting (e.g. a simulated replica)", stated=True)
    max_disks: int | None = fld(None, minimum=0, maximum=1_000_000)
    controllers: list[Controller] = lst()
    enclosures: list[Enclosure] = lst()
    disk_groups: list[DiskGroup] = lst()
    spares: list[str] = lst("ENCLOSURE:SLOTS ranges of hot spares", flow=True)
    pools: list[Pool] = lst()
    volumes: list[Volume] = lst()
    host_groups: list[HostGroup] = lst()
    hosts: list[ArrayHost] = lst()
    mappings: list[Mapping] = lst()
    attributes: dict[str, Any] = mapping()
    note: str = fld("")
    x: float | None = fld(None, minimum=-1e7, maximum=1e7, stated=True)
    y: float | None = fld(None, minimum=-1e7, maximum=1e7, stated=True)


@dataclass(slots=True, kw_only=True)
class PathSpec:
    """An iSCSI session or FC path: initiator port to target port."""
    host: str = fld(ref="component", doc="server or VM that logs in", stated=True)
    initiator: str = fld(ref="port", doc="DEVICE:PORT (a server port or a VM vNIC)", stated=True)
    target: str = fld(ref="port", doc="ARRAY:PORT", stated=True)
    kind: str = fld("iscsi", choices=("iscsi", "fc", "sas"))
    volumes: list[str] = lst("ARRAY:VOLUME; empty = every volume mapped to the host", ref="volume", flow=True)
    multipath: bool = fld(True)
    persistent: bool = fld(True)
    preferred: bool | None = fld(None, doc="primary (true) or secondary path")


@dataclass(slots=True, kw_only=True)
class Replication:
    source: str = fld(ref="volume", stated=True)
    target: str = fld(ref="volume", stated=True)
    kind: str = fld("", doc="DAG, array replication ...")
    links: int | None = fld(None, minimum=0, maximum=10_000)
    note: str = fld("")
