"""The as-built check's codes (ASB-*), in the rule catalogue beside the drawing's rules
(`testbed-studio rules` lists them): each with why it matters, where that comes from, and how
to fix it.  The comparison (topology/asbuilt/compare.py) raises them from facts read off the
hosts; the validator never runs them."""
from __future__ import annotations

from topology.validation.registry import fact_rule

_BED_WINS = ("the bed is the plan the results will be reported against: change the host to match it, or, when "
             "the host is right, change the bed (the Run tab's 'Take into the bed' writes learnt values back)")

PORT_MISSING = fact_rule(
    "ASB-001", "error", "a port the bed draws is not on the host",
    reason="A test run over a port that is not there runs over another one: the traffic, the paths and the "
           "figures are not the bed's.",
    source="the bed's port (name, label, MAC or address) against the host's interface list "
           "(ip -j addr, Get-NetAdapter, esxcli network nic/ip interface list)",
    hint="name the port as the host does (the port's label), or cable and configure the NIC the bed draws")
ADDRESS = fact_rule(
    "ASB-002", "error", "an address or prefix differs from the bed",
    reason="A host port on another address or subnet than drawn reaches other portals, or none: the paths the "
           "validation judged are not the paths the test uses.",
    source="the port's address/prefix in the bed against the addresses the host's interface holds",
    hint=_BED_WINS)
MTU = fact_rule(
    "ASB-003", "error", "an MTU differs from the bed",
    reason="One port at 1500 bytes in a jumbo-frame path fragments or drops every large frame: throughput "
           "and latency figures are then the network's fault, not the storage's.",
    source="the port's mtu in the bed against the interface's MTU; NET-005 says why the path must agree",
    hint="set the interface's MTU to the bed's (and the switch ports along the path), or correct the bed")
SPEED = fact_rule(
    "ASB-004", "warning", "a link speed differs from the bed",
    reason="A port negotiated at a lower speed caps the bandwidth the test can reach.",
    source="the port's speed_gbps in the bed against the link speed the host reports",
    hint="check the cable, the transceiver and the switch port's speed setting")
FLOW_CONTROL = fact_rule(
    "ASB-005", "warning", "flow control differs from the bed",
    reason="Storage vendors ask for flow control on iSCSI ports; a port that differs from the drawing changes "
           "how the network behaves under load.",
    source="the port's flow_control in the bed against the pause settings the host reports (ethtool -a)",
    hint=_BED_WINS)
LINK_DOWN = fact_rule(
    "ASB-006", "error", "a link is down",
    reason="A port the bed uses with no link carries nothing: its paths are gone before the test starts.",
    source="the interface's operational state as the host reports it",
    hint="check the cable and the switch port, and that the interface is enabled")
SESSIONS = fact_rule(
    "ASB-007", "error", "fewer (or more) iSCSI sessions than the drawing gives",
    reason="The paths the drawing gives are what the multipath redundancy and the sizing were judged on; a "
           "session short runs the test on fewer paths (one failure from an outage), one too many on a path "
           "that was not planned.",
    source="the derived paths (topology/derived_paths.py) against the host's session list "
           "(iscsiadm -m session -P 3, Get-IscsiSession, iscsicli SessionList, esxcli iscsi session connection list)",
    hint="log in to the missing portal from the missing port (the methodology's login step), or log out of the "
         "extra one")
MULTIPATH = fact_rule(
    "ASB-008", "error", "fewer multipath paths to a volume than the drawing gives",
    reason="The multipath driver sees fewer paths to the LUN than planned: the test runs without the redundancy "
           "and bandwidth the drawing promises.",
    source="the derived paths per volume against multipath -ll / mpclaim -s -d / esxcli storage core path list",
    hint="log in the missing sessions, then let the multipath driver claim the device")
LUN_MISSING = fact_rule(
    "ASB-009", "error", "a LUN the masking maps to the host is not there",
    reason="The host cannot use a volume it does not see: the steps that format or load it fail, or pick "
           "another disk.",
    source="the array's mappings in the bed against the disks the host lists, by WWN, serial or target and LUN",
    hint="map the volume to the host on the array and rescan, or log in to its target")
LUN_UNEXPECTED = fact_rule(
    "ASB-010", "error", "a host sees a LUN the masking does not map to it",
    reason="A volume presented to a host that is not meant to have it can be formatted or mounted by it, "
           "and two hosts writing one LUN without a cluster destroy its data.",
    source="the array's mappings in the bed against the disks the host lists",
    hint="remove the mapping on the array (or add it to the bed when it is meant to be there)")
VOLUME_DIFFERS = fact_rule(
    "ASB-011", "error", "a volume's size or identity differs from the bed",
    reason="A LUN of another size or WWN than drawn is another volume: a step that writes to it by position "
           "would destroy the wrong data.",
    source="the volume's size_gb, wwn and serial in the bed against the disk the host shows at that LUN",
    hint="check the mapping's LUN number and the array's volume; correct the bed if the array is right")
OS_RELEASE = fact_rule(
    "ASB-012", "warning", "the operating system differs from the bed",
    reason="The methodology picked its commands for the release the bed names; another build may lack them, "
           "and the report would name the wrong software.",
    source="the server's os/hypervisor in the bed against /etc/os-release, Win32_OperatingSystem, "
           "esxcli system version get",
    hint=_BED_WINS)
MEMORY = fact_rule(
    "ASB-013", "warning", "memory differs from the bed",
    reason="The capacity checks (CAP-001, CAP-003) were judged on the memory the bed states.",
    source="memory_gb in the bed against what the OS reports (a few per cent below the installed memory is normal)",
    hint=_BED_WINS)
CPU = fact_rule(
    "ASB-014", "warning", "CPU threads differ from the bed",
    reason="The vCPU ratio (CAP-002) and the sizing were judged on the processors the bed states.",
    source="sockets x cores x threads in the bed against the logical processors the OS counts",
    hint="check the BIOS (hyper-threading, cores enabled), or correct the bed")
BIOS = fact_rule(
    "ASB-015", "warning", "a BIOS or boot setting differs from the bed",
    reason="SR-IOV, pass-through and VT-d features need the IOMMU on; a host that booted without it behaves "
           "differently from the drawing.",
    source="the server's bios settings (vt_d, iommu, sriov) against the kernel command line and what the OS reports",
    hint="enable the setting in the BIOS and on the kernel command line (intel_iommu=on / amd_iommu=on), then reboot")
VM_PLACEMENT = fact_rule(
    "ASB-016", "warning", "a VM runs on another host than drawn",
    reason="The fail-over and capacity checks were judged on the placement the bed draws.",
    source="the VMs' host in the bed (and the scenario's placement) against virsh list / Get-VM / "
           "esxcli vm process list",
    hint="move the VM, or choose the scenario that places it there")
NOT_READ = fact_rule(
    "ASB-017", "info", "a host or a fact could not be read",
    reason="Where a fact cannot be read the check says so instead of passing it: an unchecked host is not a "
           "host built as drawn.",
    source="the transport's answer, and each command's exit status",
    hint="make the host reachable (the run's pre-flight says how), or install the tool named")
SRIOV = fact_rule(
    "ASB-018", "warning", "SR-IOV virtual functions differ from the bed",
    reason="A VM drawn with an SR-IOV function gets a paravirtual NIC (or none) when the host's adapter has no "
           "virtual functions enabled: the storage path and its figures are not the drawing's.",
    source="the port's offloads (sriov: true, sriov_vfs: N) in the bed against the host's "
           "/sys/class/net/PORT/device/sriov_numvfs",
    hint="enable the virtual functions on the adapter (and SR-IOV in the BIOS), or correct the bed")
VM_SIZE = fact_rule(
    "ASB-019", "warning", "a VM's vCPUs or memory differ from the bed",
    reason="The capacity checks (CAP-001, CAP-002, CAP-003) and the workload's sizing were judged on the vCPUs "
           "and memory the bed gives each VM.",
    source="the VM's vcpu and memory_gb in the bed against what the hypervisor gave it (virsh dominfo)",
    hint="change the VM's settings to the bed's, or correct the bed")
