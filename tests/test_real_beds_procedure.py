"""Issue 30, the procedure half: the two beds built from published reports are built by the procedure.

The RHEV configurations create the virtual functions (RHEL 6: the port driver's max_vfs), bind three
iSCSI interfaces in each guest, discover the EqualLogic group address, make each VM once (in RHEV-M)
and format inside the guests; the Hyper-V Server 2008 R2 configuration makes VHD files; the DS5020's
arrays and logical drives are made by SMcli.  Where the bed says `not stated`, the step is manual and
names the value it needs.  The same beds with the unstated values filled in (as a lab that knows them
would) get the commands, which pass bash -n, shellcheck and tree-sitter-powershell."""
from __future__ import annotations

import functools
import re

from resources import example_path
from tests import script_checks
from topology import methodology as M
from topology.configurations import configured
from topology.fileformat import load, loads

RHEV = "r710-rhev-hyperv-equallogic"
BLADE = "bladecenter-hs22-ds5020-fc"


@functools.cache
def _view(name: str, configuration: str | None = None, text: str | None = None):
    bed = loads(text, f"{name}.yaml") if text is not None else load(example_path(name))
    return configured(bed, configuration) if configuration else bed


@functools.cache
def _meth(name: str, configuration: str | None = None, text: str | None = None) -> M.Methodology:
    return M.generate(_view(name, configuration, text))


def _stated_rhev() -> str:
    """The RHEV/Hyper-V bed as a lab that knows the unstated values writes it: guests on RHEL 6.1, the
    group address and the guests' addresses given."""
    text = example_path(RHEV).read_text(encoding="utf-8")
    text = text.replace("  - name: eql-group\n    address: not stated",
                        "  - name: eql-group\n    address: 10.10.5.10/24")
    text = text.replace("guest_os: not stated", "guest_os: Red Hat Enterprise Linux 6.1")
    text = text.replace("    memory_gb: not stated\n    guest_os", "    memory_gb: 4\n    guest_os")
    for k in range(2):
        text = text.replace("role: iscsi, address: not stated, network: san, synthetic: true",
                            f"role: iscsi, address: 10.10.5.{21 + k}/24, network: san, synthetic: true", 1)
    return text


def _steps(meth: M.Methodology, template_end: str, target: str | None = None) -> list:
    return [s for s in meth.steps() if s.template.endswith(template_end) and (target is None or s.target == target)]


# ------------------------------------------------------------------------------------ RHEV

def test_the_sriov_configuration_turns_the_iommu_on_and_creates_the_virtual_functions():
    meth = _meth(RHEV, "rhev-sriov")
    iommu = _steps(meth, "#iommu", "R710")
    assert len(iommu) == 1 and "grubby --update-kernel=ALL" in iommu[0].automation[0].script
    vfs = _steps(meth, "linux/hosts-rhev.yaml#vswitch-sriov", "R710")
    assert len(vfs) == 1
    script = vfs[0].automation[0].script
    # RHEL 6.1: max_vfs of the port's own driver (read from sysfs), one function per guest vNIC on the switch
    assert "max_vfs=%s" in script and "/sys/class/net/san0/device/driver" in script and " 2 >" in script
    assert "sriov_numvfs" not in script
    assert "guest1:eth2, guest2:eth2" in vfs[0].text
    assert _steps(meth, "#sriov-restart", "R710")[0].automation[0].verify.count("san0") >= 2
    hook = _steps(meth, "#sriov-hook", "R710")
    assert hook and "UserDefinedVMProperties" in hook[0].text and hook[0].manual
    assert any("yum install -y vdsm-hook-sriov" in c.script for s in _steps(meth, "#software", "R710")
               for c in s.automation)
    # the vhost-net configuration creates none of this, and loads vhost-net instead
    vhost = _meth(RHEV, "rhev-vhost")
    assert not _steps(vhost, "#vswitch-sriov") and not _steps(vhost, "#iommu")
    assert _steps(vhost, "#vhost-net", "R710")[0].automation[0].script.startswith("modprobe vhost_net")
    assert "Setup Host Networks" in _steps(vhost, "#vswitch", "R710")[0].text


def test_rhel_7_hosts_use_sriov_numvfs():
    text = example_path(RHEV).read_text(encoding="utf-8").replace("os: Red Hat Enterprise Linux 6.1",
                                                                  "os: Red Hat Enterprise Linux 7.9")
    meth = _meth(RHEV, "rhev-sriov", text)
    script = _steps(meth, "#vswitch-sriov", "R710")[0].automation[0].script
    assert "echo 2 > /sys/class/net/san0/device/sriov_numvfs" in script and "max_vfs" not in script


def test_each_vm_is_created_once_in_rhev_m():
    for configuration in ("rhev-vhost", "rhev-sriov"):
        meth = _meth(RHEV, configuration)
        for guest in ("guest1", "guest2"):
            made = [s for s in meth.steps() if s.template.endswith("#create") and f"name {guest}," in s.text]
            assert len(made) == 1 and made[0].template == "linux/vms-rhev.yaml#create", (configuration, made)
        text = " ".join(s.text for s in meth.steps())
        assert "external virtual switch" not in text and "management operating system" not in text


def test_each_guest_binds_three_ifaces_discovers_the_group_address_and_formats_its_own_lun():
    for configuration in ("rhev-vhost", "rhev-sriov"):
        meth = _meth(RHEV, configuration)
        for guest, volume in (("guest1", "guest1-data"), ("guest2", "guest2-data")):
            ifaces = _steps(meth, "#guest-iscsi-iface", guest)
            assert [re.search(r"interface (eth2_\d)", s.text).group(1) for s in ifaces] == ["eth2_0", "eth2_1",
                                                                                         "eth2_2"]
            assert all("bind it to the network interface eth2" in s.text for s in ifaces)
            # the group address is not stated: the step is manual and says what it needs
            disc = _steps(meth, "#guest-group-discovery", guest)
            assert len(disc) == 1 and "group address not stated" in disc[0].text and disc[0].manual
            assert f"({volume})" in disc[0].text
            fmt = _steps(meth, "#guest-format", guest)
            assert len(fmt) == 1 and fmt[0].destructive and volume in fmt[0].text
            # its storage NIC gets a step though its address is not stated
            nic = _steps(meth, "#guest-address", guest)
            assert len(nic) == 1 and "eth2" in nic[0].text and nic[0].manual
        assert not [s for s in meth.steps() if s.target == "R710" and "format" in s.template]


def test_with_the_values_stated_the_guests_get_the_commands():
    meth = _meth(RHEV, "rhev-sriov", _stated_rhev())
    view = _view(RHEV, "rhev-sriov", _stated_rhev())
    assert script_checks.problems(view, meth) == []
    for guest in ("guest1", "guest2"):
        scripts = "\n".join(c.script for s in meth.steps() if s.target == guest for c in s.automation)
        for k in range(3):
            assert f"iscsiadm -m iface -I eth2_{k} -o update -n iface.net_ifacename -v eth2" in scripts
        assert 'ifaces=(eth2_0 eth2_1 eth2_2); for i in "${ifaces[@]}"; do args+=(-I "$i"); done' in scripts
        assert 'iscsiadm -m discovery -t sendtargets -p 10.10.5.10:3260 "${args[@]}"' in scripts
        assert "iscsiadm -m node -p 10.10.5.10:3260 --login" in scripts
        # Dell's EqualLogic settings come before the discovery (node records take iscsid.conf's values)
        assert scripts.index('vendor "EQLOGIC"') < scripts.index("iscsiadm -m discovery")
        assert "rr_min_io_rq 10" in scripts and "node.session.timeo.replacement_timeout = 15" in scripts
        assert "yum install -y iscsi-initiator-utils device-mapper-multipath" in scripts
        assert scripts.count("device-mapper-multipath") == 1          # installed once
        # the member ports are never discovery portals: the group address is
        assert "PS5000XV" not in scripts


# ------------------------------------------------------------------------------------ EqualLogic group

def test_the_group_gets_its_members_pool_volumes_and_access_records():
    meth = _meth(RHEV, "rhev-vhost")
    setups = _steps(meth, "storage-equallogic.yaml#member-setup")
    assert [s.target for s in setups] == [f"PS5000XV-{k}" for k in range(1, 7)]
    assert "create the group: yes" in setups[0].text and "create the group: no" in setups[1].text
    volumes = _steps(meth, "storage-equallogic.yaml#volume")
    assert {re.search(r"name (\S+),", s.text).group(1) for s in volumes} == {"guest1-data", "guest2-data",
                                                                              "hyperv-vhds"}
    assert _steps(meth, "storage-equallogic.yaml#pool")
    # the access records name the guests although their initiators are not stated: done by hand
    access = _steps(meth, "storage-equallogic.yaml#access")
    assert len(access) == 2 and all(s.manual and "initiator not stated" in s.text for s in access)
    assert {s.values["array_host.name"].text for s in access} == {"guest1", "guest2"}
    hyperv = _meth(RHEV, "hyperv")
    assert [s.values["array_host.name"].text for s in _steps(hyperv, "storage-equallogic.yaml#access")] == ["R710"]


# ------------------------------------------------------------------------------------ Hyper-V 2008 R2

def test_the_hyperv_configuration_creates_vhd_files_and_the_host_formats_their_volume():
    meth = _meth(RHEV, "hyperv")
    disks = _steps(meth, "windows/vms-2008.yaml#disk", "R710")
    assert len(disks) == 2 and all("VHD" in s.text and "VHDX" not in s.text for s in disks)
    assert all("disk.file" in s.manual_reason for s in disks)       # where the files go is not stated
    assert len(_steps(meth, "#disk-attach", "R710")) == 2
    assert [s.target for s in _steps(meth, "connectivity-2008.yaml#format")] == ["R710"]
    assert _steps(meth, "connectivity-2008.yaml#group-discovery", "R710")
    # stated: diskpart makes each VHD, refusing to overwrite a file
    text = example_path(RHEV).read_text(encoding="utf-8").replace(
        '{name: data, format: vhd, type: not stated, size_gb: not stated, volume: "eql-group:hyperv-vhds"}',
        '{name: data, format: vhd, type: fixed, size_gb: 40, volume: "eql-group:hyperv-vhds", path: "E:\\\\VHDs"}')
    stated = _meth(RHEV, "hyperv", text)
    scripts = [c.script for s in _steps(stated, "windows/vms-2008.yaml#disk") for c in s.automation]
    assert len(scripts) == 2 and all("create vdisk file=" in x and "40960" in x and "'fixed'" in x for x in scripts)
    assert "E:\\VHDs\\guest1-data.vhd" in scripts[0] and "Test-Path -LiteralPath $path" in scripts[0]
    assert script_checks.problems(_view(RHEV, "hyperv", text), stated) == []


# ------------------------------------------------------------------------------------ IBM DS5020

def _stated_blade() -> str:
    text = example_path(BLADE).read_text(encoding="utf-8")
    text = text.replace("      - {name: controller-enclosure, slots: not stated}",
                        "      - {name: controller-enclosure, slots: 16, tray_id: 85}")
    text = text.replace('{name: array-1, raid: not stated, members: not stated, owner: not stated,',
                        '{name: array-1, raid: raid10, members: ["controller-enclosure:0-7"], owner: A,')
    text = re.sub(r"size_gb: not stated, group: array-1", "size_gb: 100, group: array-1", text)
    text = text.replace("settings: {segment_size_kb: not stated, read_cache: not stated, write_cache: not stated}",
                        "settings: {segment_size_kb: 128, read_cache: true, write_cache: true}")
    return text


def test_the_ds_array_is_made_by_smcli_from_the_bed():
    meth = _meth(BLADE, None, _stated_blade())
    made = _steps(meth, "storage-ibm-ds.yaml#volume")
    assert len(made) == 12
    first = made[0].automation[0]
    assert first.shell == "vendor-cli"
    assert ('create logicalDrive drives=(85,0 85,1 85,2 85,3 85,4 85,5 85,6 85,7) raidLevel=1 '
            'userLabel="exchange-cell1" capacity=100 GB owner=a segmentSize=128;') in first.script
    assert 'set logicalDrive ["exchange-cell1"] readCacheEnabled=TRUE;' in first.script
    assert 'create logicalDrive array=1 userLabel="sql-cell1" capacity=100 GB' in made[1].automation[0].script
    # the access LUN is checked, never made
    assert not [s for s in made if "name access," in s.text]
    assert _steps(meth, "storage-ibm-ds.yaml#access-lun")


def test_the_ds_example_asks_for_what_it_does_not_state():
    meth = _meth(BLADE)
    made = _steps(meth, "storage-ibm-ds.yaml#volume")
    assert len(made) == 12 and all(s.manual for s in made)
    assert "Create Array" in made[0].text and "group.disk_count" in made[0].manual_reason
    assert "volume.settings.segment_size_kb" in made[1].manual_reason
    # the blade's FC ports are FC host ports though their WWPNs are not stated (no «missing: …»)
    assert not any("«missing: initiator" in s.text for s in meth.steps())
    # tray IDs: an enclosure without one gets a step that asks for it
    text = _stated_blade().replace(", tray_id: 85}", "}")
    asked = _steps(_meth(BLADE, None, text), "storage-ibm-ds.yaml#volume")[0]
    assert asked.manual and "tray IDs of controller-enclosure are not in the bed" in asked.text
