"""Beds of the shapes the run-structure tests need, built from the built-in examples.

`cells_bed()`: the ESG DS5020 shape (illustrative, not a report's figures): FC blades on a
dual-controller array with eight host ports; a characterisation of eight VMs, then one to four
cells of four VMs each (Jetstress, sqlio OLTP then DSS, two Iometer profiles), then a degraded phase
that emulates a DS3950 by taking four of the eight host ports out of service."""
from __future__ import annotations

import copy
from pathlib import Path

from topology.fileformat import load
from topology.model import (
    VM,
    Link,
    MatrixEntry,
    Port,
    Scenario,
    VirtualDisk,
    VNic,
    Workload,
    WorkloadLevel,
)

ROOT = Path(__file__).resolve().parent.parent
BLADES = ROOT / "resources" / "examples" / "bladecenter-fc-hyperv-2008r2.yaml"

CELL_ROLES = ("exch", "sql", "fs", "web")
EXTRA_PORTS = {"A3": ("A", "A", "20:34:00:a0:b8:2a:10:a3", "fcsm-a", "16"),
               "B3": ("B", "A", "20:35:00:a0:b8:2a:10:b3", "fcsm-a", "17"),
               "A4": ("A", "B", "20:44:00:a0:b8:2a:10:a4", "fcsm-b", "16"),
               "B4": ("B", "B", "20:45:00:a0:b8:2a:10:b4", "fcsm-b", "17")}
DEGRADED_PORTS = ["ds5020:A3", "ds5020:A4", "ds5020:B3", "ds5020:B4"]


def cell_vms(cell: int) -> list[str]:
    return [f"{role}-{cell}" for role in CELL_ROLES]


def cells_bed(os_name: str = ""):
    bed = load(BLADES)
    if os_name:
        for s in bed.servers:
            s.os = os_name
    array = bed.arrays[0]
    controllers = {c.name: c for c in array.controllers}
    switches = {s.id: s for s in bed.switches}
    for name, (ctl, fabric, wwpn, switch, sport) in EXTRA_PORTS.items():
        controllers[ctl].ports.append(Port(name=name, kind="fc", speed_gbps=8, roles=["fc"], wwpn=wwpn, fabric=fabric))
        switches[switch].ports.append(Port(name=sport, kind="fc", label=f"external port {sport}"))
        for zone in switches[switch].zones:
            zone.members.append(wwpn)
        bed.links.append(Link(a=f"ds5020:{name}", b=f"{switch}:{sport}"))
    template = next(v for v in bed.vms if v.id == "sql-1")
    bed.vms = [v for v in bed.vms if not v.id.startswith("sql-")]
    for cell in range(1, 5):
        for role in CELL_ROLES:
            vm: VM = copy.deepcopy(template)
            vm.id = f"{role}-{cell}"
            vm.host = f"hs22-{cell}"
            vm.memory_gb = 4
            vm.disks = [VirtualDisk(name="OS", size_gb=40, format="vhd", type="fixed", volume="ds5020:CSV1",
                                    path=f"C:\\ClusterStorage\\Volume1\\{vm.id}")]
            vm.nics = [VNic(name="LAN", vswitch=f"hs22-{cell}/LAN", role="lan")]
            bed.vms.append(vm)

    def per_cell(role: str) -> list[WorkloadLevel]:
        return [WorkloadLevel(level=str(n), targets=[f"{role}-{c}" for c in range(1, n + 1)]) for n in range(1, 5)]

    everywhere = [f"{r}-{c}" for c in range(1, 5) for r in CELL_ROLES]
    bed.workloads = [
        Workload(id="characterise", tool="Iometer", targets=cell_vms(1) + cell_vms(2), duration_minutes=30,
                 parameters={"streams": 32, "note": "4 outstanding I/Os on each of 8 VMs"}),
        Workload(id="jetstress", tool="Jetstress", targets=everywhere[0::4], levels=per_cell("exch"),
                 duration_minutes=120, order=1, together_with=["sqlio-oltp", "iometer-fs", "iometer-web"]),
        Workload(id="sqlio-oltp", tool="sqlio", targets=everywhere[1::4], levels=per_cell("sql"),
                 duration_minutes=45, order=1,
                 parameters={"command": "sqlio -kR -s2700 -frandom -o8 -b8 -t4 -LS -Fparam.txt"}),
        Workload(id="sqlio-dss", tool="sqlio", targets=everywhere[1::4], levels=per_cell("sql"),
                 duration_minutes=45, order=2,
                 parameters={"command": "sqlio -kR -s2700 -fsequential -o8 -b64 -t4 -LS -Fparam.txt"}),
        Workload(id="iometer-fs", tool="Iometer", targets=everywhere[2::4], levels=per_cell("fs"),
                 duration_minutes=90, order=1, parameters={"profile": "file server"}),
        Workload(id="iometer-web", tool="Iometer", targets=everywhere[3::4], levels=per_cell("web"),
                 duration_minutes=90, order=1, parameters={"profile": "web server"}),
    ]
    cells = ["jetstress", "sqlio-oltp", "sqlio-dss", "iometer-fs", "iometer-web"]
    bed.scenarios = [
        Scenario(id="baseline", reference=True, description="All eight DS5020 host ports in service."),
        Scenario(id="ds3950", description="A DS3950 emulated: four of the eight host ports out of service.",
                 failed=list(DEGRADED_PORTS),
                 checks=["Storage Manager shows host ports A3, A4, B3 and B4 as not connected"]),
    ]
    bed.test_matrix = [
        MatrixEntry(id="characterisation", variable="streams", levels=[32], scenarios=["baseline"],
                    workloads=["characterise"]),
        MatrixEntry(id="cells", variable="active cells", levels=[1, 2, 3, 4], scenarios=["baseline"], workloads=cells),
        MatrixEntry(id="degraded", variable="active cells", levels=[4], scenarios=["ds3950"], workloads=cells),
    ]
    bed.run_plan.counter_hosts = ["hs22-1", "hs22-2", "hs22-3", "hs22-4"]
    bed.run_plan.reset_steps = ["Restore the Exchange and SQL Server databases from their backups"]
    bed.run_plan.duration_minutes = None
    return bed


STUDY = ROOT / "tests" / "data" / "configurations" / "one-server-two-hypervisors.yaml"
# published figures per client (orders per minute), illustrative: Hyper-V's client 2 is 4.6 % below RHEV's
# when divided by RHEV's figure ((24,804 - 26,000) / 26,000), +4.8 % the other way round
THREE_CONFIGURATION_OPM = {"rhev": {"SQL1": 25_000, "SQL2": 26_000},
                           "hyperv": {"SQL1": 24_000, "SQL2": 24_804},
                           "hyperv-sriov": {"SQL1": 27_350, "SQL2": 27_765}}


def three_configuration_bed():
    """One server, two hypervisors, three configurations (RHEV, Hyper-V, Hyper-V with SR-IOV), the
    report's published figures per client, and one published percentage with its denominator."""
    from topology.configuration_spec import Configuration
    from topology.model import Result
    bed = load(STUDY)
    esxi = next(c for c in bed.configurations if c.id == "esxi")
    rhev = Configuration(id="rhev", description="Red Hat Enterprise Virtualization 3.1 on the same server",
                         overrides={"R720": {"os": "Red Hat Enterprise Virtualization Hypervisor 6.4",
                                             "hypervisor": "RHEV", "platform": "linux"}},
                         access=[a for a in esxi.access])
    hyperv = next(c for c in bed.configurations if c.id == "hyperv")
    sriov = Configuration(id="hyperv-sriov", description="Hyper-V with SR-IOV on the VMs' network adapters",
                          overrides={"SQL1:net0": {"offloads": {"sriov": True}},
                                     "SQL2:net0": {"offloads": {"sriov": True}}})
    bed.configurations = [rhev, hyperv, sriov]
    bed.results = []
    for cfg, per_client in THREE_CONFIGURATION_OPM.items():
        for vm, opm in per_client.items():
            bed.results.append(Result(workload=f"DS2-{vm}", metric="opm", value=opm, unit="OPM", subject=vm,
                                      configuration=cfg))
    hv2 = next(r for r in bed.results if r.configuration == "hyperv" and r.subject == "SQL2")
    hv2.published_percent = -4.6
    hv2.published_against = "rhev"
    return bed
