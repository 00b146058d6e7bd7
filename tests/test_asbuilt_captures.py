"""The as-built readers on real captures (tests/data/captures/asbuilt/, where each came from is in
tests/data/captures/README.md): `multipath -ll` of four arrays as os-brick's tests keep them, a
Windows host's `mpclaim -s -d`, libvirt's own `virsh dominfo`, an ESXi 7 host's `esxcli
--formatter=json storage core device list`, Windows `Get-Disk` and `Get-NetAdapter` as printed in
public issue threads.  Then the comparison on those
facts: the paths per volume against the drawing (ASB-008), a VM's vCPUs and memory (ASB-019),
the SR-IOV functions of a port (ASB-018)."""
from __future__ import annotations

from pathlib import Path

from app.asbuilt import linux, windows
from topology.asbuilt import check
from topology.asbuilt import facts as F
from topology.fileformat import loads

CAPTURES = Path(__file__).parent / "data" / "captures" / "asbuilt"


def _lines(name: str) -> list[str]:
    return (CAPTURES / name).read_text().splitlines()


def test_multipath_ll_of_four_arrays_gives_each_maps_wwid_paths_and_active_count():
    (svc,) = linux.multipath_maps(_lines("multipath_ll_ibm_2145_svc_four_paths_os_brick.txt"))
    assert (svc.wwid, svc.name, svc.paths, svc.active) == (
        "6005076da00638089c000000000004d5", "36005076da00638089c000000000004d5", ["sde", "sdg", "sdf", "sdh"], 4)
    assert svc.policy == "round-robin 0"
    (threepar,) = linux.multipath_maps(_lines("multipath_ll_3par_ufn_two_paths_os_brick.txt"))
    assert (threepar.wwid, threepar.name, threepar.active) == ("50002ac20398383d", "mpath6", 2)
    # multipathd's own warnings before the map are not a map, and a vendor padded with spaces is read
    (pure,) = linux.multipath_maps(_lines("multipath_ll_pure_with_warnings_os_brick.txt"))
    assert (pure.wwid, pure.paths, pure.active) == ("624a93707edcfde1127040370004ee62", ["sdaa", "sdac"], 2)


def test_mpclaim_lists_the_mpio_disks_with_their_policy():
    f = windows.read("w1", {"win-mpclaim": ("ok", _lines("mpclaim_s_d_compellent_nagios.txt"))})
    assert [(m.name, m.policy) for m in f.multipath] == [("Disk 2", "RR"), ("Disk 3", "RR"), ("Disk 4", "RR")]
    assert f.has(F.MULTIPATH)


def test_virsh_dominfo_gives_vcpus_memory_and_state():
    (vm,) = linux.dominfo(["== fc4", *_lines("virsh_dominfo_fc4_libvirt_virshtest.txt")])
    assert (vm.name, vm.vcpus, vm.memory_bytes, vm.state) == ("fc4", 1, 261072 * 1024, "running")


SAN = """format_version: 1
bed: {name: captured multipath}
servers:
  - id: h1
    role: hypervisor
    platform: linux
    multipath: dm-multipath
    adapters:
      - name: NIC1
        ports:
          - {name: san1, roles: [iscsi], address: 10.0.0.11/24}
          - {name: san2, roles: [iscsi], address: 10.0.0.12/24}
switches:
  - {id: sw1, kind: ethernet}
links:
  - {a: h1:san1, b: sw1:1}
  - {a: h1:san2, b: sw1:2}
  - {a: arr1:P0, b: sw1:3}
  - {a: arr1:P1, b: sw1:4}
arrays:
  - id: arr1
    connectivity: iscsi
    controllers:
      - name: A
        ports: [{name: P0, roles: [iscsi], address: 10.0.0.50/24}]
      - name: B
        ports: [{name: P1, roles: [iscsi], address: 10.0.0.51/24}]
    volumes:
      - {name: data, size_gb: 1, wwn: naa.WWN}
    hosts: [{name: h1, server: h1}]
    mappings: [{volume: data, to: h1, lun: 0}]
"""


def _multipath_facts(capture: str) -> F.HostFacts:
    f = linux.read("h1", {"multipath": ("ok", _lines(capture))})
    f.mark(F.DISKS)
    return f


def test_asb_008_holds_the_captured_paths_per_volume_against_the_four_the_drawing_gives():
    svc = "6005076da00638089c000000000004d5"
    bed = loads(SAN.replace("WWN", svc), "san.yaml")
    result = check(bed, {"h1": _multipath_facts("multipath_ll_ibm_2145_svc_four_paths_os_brick.txt")})
    row = next(r for r in result.rows if r.fact == "paths to arr1:data")
    assert (row.expected, row.seen, row.code) == ("4", "4", "")
    assert "ASB-008" not in {f.code for f in result.findings}
    # the 3PAR host shows two of the four
    bed = loads(SAN.replace("WWN", "50002ac20398383d"), "san.yaml")
    result = check(bed, {"h1": _multipath_facts("multipath_ll_3par_ufn_two_paths_os_brick.txt")})
    (finding,) = [f for f in result.findings if f.code == "ASB-008"]
    assert finding.subjects == ("arr1:data", "h1")
    assert "2 active path(s) in mpath6, the drawing gives 4" in finding.message


VMS = """format_version: 1
bed: {name: vms}
servers:
  - id: kvm1
    platform: linux
    adapters:
      - name: NIC1
        ports:
          - {name: ens1f0, address: 10.0.0.11/24, offloads: {sriov_vfs: 8}}
          - {name: ens1f1, address: 10.0.0.12/24, offloads: {sriov: true}}
vms:
  - {id: fc4, host: kvm1, vcpu: VCPU, memory_gb: MEM}
"""


def _kvm_facts(vfs: tuple[int, int]) -> F.HostFacts:
    f = F.HostFacts("kvm1", "linux", interfaces=[
        F.Interface("ens1f0", up=True, addresses=["10.0.0.11/24"], sriov_vfs=vfs[0]),
        F.Interface("ens1f1", up=True, addresses=["10.0.0.12/24"], sriov_vfs=vfs[1])])
    f.vms = ["fc4"]
    f.vm_info = linux.dominfo(["== fc4", *_lines("virsh_dominfo_fc4_libvirt_virshtest.txt")])
    f.read = [F.INTERFACES, F.VMS]
    return f


def test_a_vm_given_other_vcpus_or_memory_than_drawn_is_asb_019():
    as_drawn = loads(VMS.replace("VCPU", "1").replace("MEM", "0.249"), "vms.yaml")    # 261072 KiB = 0.249 GiB
    result = check(as_drawn, {"kvm1": _kvm_facts((8, 4))})
    assert [f.code for f in result.findings] == []
    assert {r.fact for r in result.rows} >= {"VM fc4 vCPUs", "VM fc4 memory"}
    bigger = loads(VMS.replace("VCPU", "4").replace("MEM", "16"), "vms.yaml")
    result = check(bigger, {"kvm1": _kvm_facts((8, 4))})
    messages = sorted(f.message for f in result.findings if f.code == "ASB-019")
    assert len(messages) == 2
    assert "has 1 vCPU(s), the bed gives 4" in messages[0] and "the bed gives 16 GB" in messages[1]


def test_sriov_functions_are_held_against_the_ports_offloads_as_asb_018():
    bed = loads(VMS.replace("VCPU", "1").replace("MEM", "0.249"), "vms.yaml")
    result = check(bed, {"kvm1": _kvm_facts((4, 0))})
    found = sorted((f.code, f.subjects[0]) for f in result.findings)
    assert found == [("ASB-018", "kvm1:ens1f0"), ("ASB-018", "kvm1:ens1f1")]
    by_port = {f.subjects[0]: f.message for f in result.findings}
    assert "4 SR-IOV virtual function(s) enabled, the bed wants 8" in by_port["kvm1:ens1f0"]
    assert "0 SR-IOV virtual function(s) enabled, the bed wants at least 1" in by_port["kvm1:ens1f1"]


WINDOWS = CAPTURES.parent / "windows"


def test_esxcli_json_device_list_of_an_esxi_7_host_gives_the_naa_id_size_and_model():
    from app.asbuilt import esxi
    f = esxi.read("esx1", {"esx-devices": ("ok", _lines("esxcli_json_storage_core_device_list_scrutiny-388.json"))})
    (disk,) = f.disks
    assert (disk.name, disk.wwn) == ("naa.6589cfc000000b6136c98e7be4a2025f", "6589cfc000000b6136c98e7be4a2025f")
    assert disk.size_bytes == 4194304 * 2**20 and disk.model == "iSCSI Disk"      # esxcli's Size is in MiB: 4 TiB
    assert disk.vendor == ""            # the capture is cut off before Vendor: nothing is made up for it
    assert f.has(F.DISKS) and not f.notes


def test_get_disk_json_gives_an_naa_id_and_never_takes_a_pnp_id_for_a_wwn():
    (azure,) = windows.read("w1", {"win-disks": ("ok", (WINDOWS / "get-disk_azuredisk-csi-driver-2661.json")
                                                  .read_text().splitlines())}).disks
    assert (azure.name, azure.wwn, azure.vendor, azure.model) == (
        "Disk 3", "60022480f48d294f40f18727df9a6349", "Msft", "Msft Virtual Disk")
    assert azure.size_bytes is None     # AllocatedSize is not the disk's size; the excerpt ends before Size
    (vmware,) = windows.read("w2", {"win-disks": ("ok", (WINDOWS / "get-disk_ansible-51595.json")
                                                   .read_text().splitlines())}).disks
    assert (vmware.name, vmware.wwn, vmware.model) == ("Disk 0", "", "Virtual disk")    # UniqueIdFormat Vendor Specific


def test_get_netadapter_json_gives_link_speed_mac_and_state_of_a_10gbe_blade_port():
    f = windows.read("w1", {"win-adapters": ("ok", _lines("get-netadapter_winlldpservice-25.json"))})
    (port,) = f.interfaces
    assert (port.name, port.mac, port.up, port.speed_mbps) == ("Ethernet", "d8:d3:85:de:36:00", True, 10000)
    assert port.description.startswith("HP NC532i") and port.mtu is None      # MtuSize not in the excerpt
