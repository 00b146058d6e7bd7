"""Small beds for every platform × version × transport the methodology templates cover, for the
tests that generate the procedure and check every script (grammar, shellcheck, version table).

A case is data: a platform (the words a bed uses for the hosts' OS and hypervisor, the multipath
software, the guests' OS) and a transport.  `platform_bed(case, transport)` draws two hosts
in a cluster, two switches (Ethernet for iSCSI, FC fabrics A and B for FC; SAS is cabled
directly), a dual-controller array of the transport with a disk group, volumes mapped to the
host group, a VM on each host (one guest of the hosts' family, one Linux guest), BIOS settings,
software, a workload per guest and a run plan.  No `paths:` are written: the paths follow from
the drawing, as for a bed a user draws.  A new platform is one more `PlatformCase` in
`PLATFORM_CASES`.
"""
from __future__ import annotations

from dataclasses import dataclass

from topology.model import (
    VM,
    AccessSpec,
    Adapter,
    ArrayHost,
    Bed,
    BedInfo,
    Cluster,
    Controller,
    Cpu,
    Criterion,
    DiskGroup,
    DiskSet,
    Enclosure,
    HostGroup,
    Link,
    Mapping,
    Network,
    Port,
    RunPlan,
    Server,
    StorageArray,
    Switch,
    VirtualDisk,
    VirtualSwitch,
    VNic,
    Volume,
    Workload,
)

TRANSPORTS = ("iscsi", "fc", "sas")


@dataclass(frozen=True)
class PlatformCase:
    id: str                        # a test id: ws2008r2, rhel7-kvm ...
    os: str                        # the hosts' OS words
    hypervisor: str = ""
    multipath: str = ""
    guest_os: str = ""             # the first guest's OS (default: the hosts')
    model: str = "Dell PowerEdge R720"
    array_model: str = "Dell PowerVault MD3200i"
    switch_model: str = ""         # default: one of the transport's


PLATFORM_CASES: list[PlatformCase] = [
    PlatformCase("ws2008", "Windows Server 2008 Enterprise SP2", "Hyper-V", "Microsoft MPIO (MSDSM)",
                 model="Dell PowerEdge R710"),
    PlatformCase("ws2008r2", "Windows Server 2008 R2 Enterprise SP1", "Hyper-V", "Microsoft MPIO (MSDSM)",
                 model="Dell PowerEdge R710"),
    PlatformCase("ws2008r2-rdac", "Windows Server 2008 R2 Enterprise", "Hyper-V", "IBM RDAC multipath driver",
                 model="IBM System x3650 M3", array_model="IBM System Storage DS3512"),
    PlatformCase("ws2008r2-hdlm", "Microsoft Windows Server 2008 R2 Enterprise", "",
                 "Hitachi Dynamic Link Manager (HDLM) v6.2.0", model="Sun Fire 4270",
                 array_model="Hitachi Adaptable Modular Storage 2500 (AMS 2500)"),
    PlatformCase("ws2012", "Windows Server 2012 Datacenter", "Hyper-V", "MPIO with the EqualLogic DSM (HIT Kit 4.5)",
                 array_model="Dell EqualLogic PS6110XV"),
    PlatformCase("ws2012r2", "Windows Server 2012 R2 Datacenter", "Hyper-V", "Microsoft MPIO (MSDSM)"),
    PlatformCase("hyperv-server-2012r2", "Microsoft Hyper-V Server 2012 R2", "Hyper-V", "Microsoft MPIO"),
    PlatformCase("ws2016", "Windows Server 2016 Datacenter", "Hyper-V", "Microsoft MPIO"),
    PlatformCase("ws2022", "Windows Server 2022 Datacenter", "Hyper-V", "Microsoft MPIO"),
    PlatformCase("windows-unknown", "Windows Server", "Hyper-V", "Microsoft MPIO"),
    PlatformCase("rhel6-kvm", "Red Hat Enterprise Linux 6.4", "KVM", "dm-multipath"),
    PlatformCase("centos7-kvm", "CentOS Linux 7 (Core)", "KVM/libvirt", "dm-multipath"),
    PlatformCase("rhel7-rhev", "Red Hat Enterprise Linux 7.9", "RHEV-M 4.3", "dm-multipath"),
    PlatformCase("ubuntu2204", "Ubuntu 22.04 LTS", "KVM", "multipath-tools (dm-multipath)"),
    PlatformCase("esxi67", "VMware ESXi 6.7 U3", "ESXi", "VMware NMP", guest_os="Windows Server 2016"),
    # the Linux, KVM and ESXi releases the platform templates tell apart (h13-platforms)
    PlatformCase("centos6-kvm", "CentOS release 6.9 (Final)", "KVM", "device-mapper-multipath",
                 guest_os="CentOS release 6.9 (Final)"),
    PlatformCase("rhel8-kvm", "Red Hat Enterprise Linux 8.6", "KVM", "dm-multipath",
                 array_model="Dell PowerVault MD3820i"),
    PlatformCase("rocky9-kvm", "Rocky Linux 9.2", "KVM", "dm-multipath"),
    PlatformCase("rhel6-rhev", "Red Hat Enterprise Linux 6.7", "RHEV-M 3.6", "dm-multipath"),
    PlatformCase("debian11", "Debian GNU/Linux 11 (bullseye)", "KVM", "multipath-tools (dm-multipath)",
                 array_model="Dell EqualLogic PS6210X"),
    PlatformCase("ubuntu1604", "Ubuntu 16.04 LTS", "KVM", "multipath-tools (dm-multipath)"),
    PlatformCase("esxi41", "VMware ESX 4.1", "ESXi", "VMware NMP", guest_os="Ubuntu 16.04 LTS"),
    PlatformCase("esxi50", "VMware ESXi 5.0", "ESXi", "VMware NMP (VMW_SATP_LSI, VMW_PSP_RR)",
                 guest_os="Red Hat Enterprise Linux 6.4"),
    PlatformCase("esxi55", "VMware ESXi 5.5 U3", "ESXi", "VMware NMP (VMW_SATP_EQL, VMW_PSP_RR)",
                 guest_os="Ubuntu 16.04 LTS", array_model="Dell EqualLogic PS6100X"),
    PlatformCase("esxi80", "VMware ESXi 8.0 U2", "ESXi", "VMware NMP (VMW_SATP_ALUA, VMW_PSP_RR)",
                 guest_os="Ubuntu 22.04 LTS", array_model="IBM System Storage DS5020"),
    PlatformCase("unknown-os", "", "", ""),
]


def cases() -> list[tuple[PlatformCase, str]]:
    """Every platform case with every transport."""
    return [(c, t) for c in PLATFORM_CASES for t in TRANSPORTS]


def platform_bed(case: PlatformCase, transport: str) -> Bed:
    if transport not in TRANSPORTS:
        raise ValueError(f"transport {transport!r}: one of {', '.join(TRANSPORTS)}")
    bed = Bed(bed=BedInfo(name=f"{case.id} over {transport}", domain="lab.example.com",
                          description="generated by topology.synthetic_platforms"))
    bed.networks = [Network(id="lan", cidr="10.0.0.0/24", role="lan"),
                    Network(id="hb", cidr="10.3.0.0/24", role="heartbeat", cluster_use="cluster_only")]
    if transport == "iscsi":
        bed.networks += [Network(id="san-a", cidr="10.1.0.0/24", role="iscsi", mtu=9000, cluster_use="none"),
                         Network(id="san-b", cidr="10.2.0.0/24", role="iscsi", mtu=9000, cluster_use="none")]
    hosts = ["node1", "node2"]
    for n, hid in enumerate(hosts, 1):
        bed.servers.append(_server(case, transport, hid, n))
    bed.switches.append(Switch(id="lan-sw", model="Dell PowerConnect 5448", port_count=24, roles=["lan"]))
    if transport == "iscsi":
        for fab in ("a", "b"):
            bed.switches.append(Switch(id=f"iscsi-sw-{fab}", model=case.switch_model or "Dell Force10 S4810",
                                       port_count=24, mtu=9216, flow_control=True, roles=["iscsi"]))
    elif transport == "fc":
        for fab in ("a", "b"):
            bed.switches.append(Switch(id=f"fabric-{fab}", kind="fc", model=case.switch_model or "Brocade 5100",
                                       port_count=24, fabric=fab.upper()))
    bed.arrays.append(_array(case, transport, hosts))
    for hid in hosts:
        bed.links += [Link(a=f"{hid}:lan", b="lan-sw"), Link(a=f"{hid}:hb", b="lan-sw")]
        if transport == "iscsi":
            bed.links += [Link(a=f"{hid}:san1", b="iscsi-sw-a"), Link(a=f"{hid}:san2", b="iscsi-sw-b")]
        elif transport == "fc":
            bed.links += [Link(a=f"{hid}:fc1", b="fabric-a"), Link(a=f"{hid}:fc2", b="fabric-b")]
    for c in ("A", "B"):
        for k, fab in enumerate(("a", "b"), 1):
            if transport == "iscsi":
                bed.links.append(Link(a=f"array:{c}-{fab}", b=f"iscsi-sw-{fab}"))
            elif transport == "fc":
                bed.links.append(Link(a=f"array:{c}-{fab}", b=f"fabric-{fab}"))
            else:
                bed.links.append(Link(a=f"array:{c}-{fab}", b=f"{hosts[k - 1]}:sas{1 if c == 'A' else 2}"))
    bed.clusters.append(Cluster(id="cluster1", nodes=list(hosts), address="10.0.0.50/24",
                                quorum="node_and_disk_majority", witness="array:witness",
                                shared_volumes=["array:vms"],
                                excluded_networks=["san-a", "san-b"] if transport == "iscsi" else []))
    guest_os = case.guest_os or case.os
    for n, hid in enumerate(hosts, 1):
        bed.virtual_switches.append(VirtualSwitch(id=f"{hid}-vs", host=hid, uplinks=[f"{hid}:vm"], role="vm",
                                                  label="VM network", sriov=n == 1))
        vm_os = guest_os if n == 1 else "Ubuntu 22.04 LTS"
        bed.vms.append(VM(id=f"vm{n}", host=hid, role="database" if n == 1 else "web", vcpu=2, memory_gb=4,
                          guest_os=vm_os, highly_available=True, software=["Web Server (IIS)"] if n == 1 else [],
                          nics=[VNic(name="lan", vswitch=f"{hid}-vs", role="lan",
                                     address=f"10.0.0.{100 + n}/24", network="lan")],
                          disks=[VirtualDisk(name="os", size_gb=40, format="vhdx", type="fixed",
                                             volume="array:vms")]))
    for n, vm in enumerate(bed.vms, 1):
        tool = "fio" if "ubuntu" in vm.guest_os.lower() or case.os.lower().startswith(("red", "cent", "ubu")) \
            else "DiskSpd"
        bed.workloads.append(Workload(
            id=f"load{n}", tool=tool, targets=[vm.id],
            parameters={"filename": "/dev/sdb" if tool == "fio" else "D:\\test.dat", "iodepth": 8,
                        "duration_minutes": 5, "threads": 4},
            access=[AccessSpec(share_pct=100, block_kb=8, read_pct=70, random_pct=100)],
            criteria=[Criterion(metric="read_latency_avg_ms", comparison="<", threshold=20, unit="ms")]))
    bed.run_plan = RunPlan(repetitions=3, score="median", reset_steps=["Restore the test files"], reboot=True,
                           idle_minutes=10, duration_minutes=5, counter_hosts=list(hosts), sample_interval_s=1)
    return bed


def _server(case: PlatformCase, transport: str, hid: str, n: int) -> Server:
    ports = [Port(name="lan", roles=["lan"], address=f"10.0.0.{10 + n}/24", network="lan", flow_control=True),
             Port(name="hb", roles=["heartbeat"], address=f"10.3.0.{10 + n}/24", network="hb"),
             Port(name="vm", roles=["vm"])]
    adapters = [Adapter(name="NIC1", model="Broadcom 5709", ports=ports)]
    if transport == "iscsi":
        adapters.append(Adapter(name="NIC2", model="Intel X520", ports=[
            Port(name="san1", roles=["iscsi"], address=f"10.1.0.{10 + n}/24", network="san-a", mtu=9000,
                 flow_control=True),
            Port(name="san2", roles=["iscsi"], address=f"10.2.0.{10 + n}/24", network="san-b", mtu=9000,
                 flow_control=True)]))
    elif transport == "fc":
        adapters.append(Adapter(name="HBA1", kind="fc", model="Emulex LPe12002", ports=[
            Port(name="fc1", kind="fc", roles=["fc"], wwpn=f"10:00:00:00:c9:00:0{n}:01", fabric="A"),
            Port(name="fc2", kind="fc", roles=["fc"], wwpn=f"10:00:00:00:c9:00:0{n}:02", fabric="B")]))
    else:
        adapters.append(Adapter(name="SAS1", kind="sas", model="LSI SAS 6Gb/s HBA", ports=[
            Port(name="sas1", kind="sas"), Port(name="sas2", kind="sas")]))
    return Server(id=hid, role="hypervisor", model=case.model, os=case.os, hypervisor=case.hypervisor,
                  cpu=Cpu(sockets=2, cores_per_socket=8, threads_per_core=2), memory_gb=128, numa_nodes=2,
                  multipath=case.multipath, domain="lab.example.com", dns=["10.0.0.2"],
                  bios={"virtualization_technology": True, "sr_iov_global_enable": True,
                        "logical_processor": True},
                  software=["Failover Clustering feature", case.multipath] if case.multipath else [],
                  adapters=adapters)


def _array(case: PlatformCase, transport: str, hosts: list[str]) -> StorageArray:
    ctrls = []
    for ci, c in enumerate(("A", "B")):
        ports = []
        for pi, fab in enumerate(("a", "b")):
            if transport == "iscsi":
                ports.append(Port(name=f"{c}-{fab}", roles=["iscsi"], mtu=9000, network=f"san-{fab}",
                                  address=f"10.{1 if fab == 'a' else 2}.0.{101 + ci}/24"))
            elif transport == "fc":
                ports.append(Port(name=f"{c}-{fab}", kind="fc", roles=["fc"], fabric=fab.upper(),
                                  wwpn=f"20:1{ci}:00:a0:b8:00:00:0{pi}"))
            else:
                ports.append(Port(name=f"{c}-{fab}", kind="sas"))
        ports.append(Port(name=f"{c}-mgmt", kind="management", roles=["management"], address=f"10.0.0.{30 + ci}/24",
                          network="lan"))
        ctrls.append(Controller(name=c, cache_gb=2, ports=ports))
    enc = Enclosure(name="E0", slots=12, disks=[DiskSet(slots="0-11", size_gb=600, rpm=15000, media="hdd",
                                                        interface="sas")])
    array = StorageArray(id="array", model=case.array_model, connectivity=transport, controllers=ctrls,
                         enclosures=[enc], spares=["E0:11"],
                         disk_groups=[DiskGroup(name="dg1", raid="raid10", members=["E0:0-7"], owner="A"),
                                      DiskGroup(name="dg2", raid="raid1", members=["E0:8-9"], owner="B")],
                         volumes=[Volume(name="vms", group="dg1", size_gb=1000, purpose=["vm"]),
                                  Volume(name="witness", group="dg2", size_gb=1, purpose=["witness"]),
                                  Volume(name="data", group="dg2", size_gb=200, purpose=["database"])],
                         host_groups=[HostGroup(name="cluster")])
    for hid in hosts:
        array.hosts.append(ArrayHost(name=hid, server=hid, host_group="cluster", host_type="Windows"))
    array.mappings = [Mapping(volume="vms", to="cluster", lun=0), Mapping(volume="witness", to="cluster", lun=1),
                      Mapping(volume="data", to="cluster", lun=2)]
    return array
