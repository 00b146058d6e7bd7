"""A Windows guest that reaches its own LUNs (in-guest iSCSI) formats them inside itself, in the
procedure's virtual-machine section (after the VM exists), never in the connectivity section where
the servers format theirs; each release range of the command table gets the commands it has
(Get-Disk from 2012, diskpart with Win32_DiskDrive on 2008 and 2008 R2), behind its identity guard;
a guest whose Windows release is not stated formats by hand."""
from __future__ import annotations

import pytest

from resources import example_path
from tests import script_checks
from tests.storage_identity import with_identities
from topology import methodology as M
from topology.fileformat import load

# one release of each range resources/platforms/windows-commands.yaml tells apart, and none
RELEASES = [
    ("Windows Server 2008 Enterprise SP2", "windows/vms-guest-2008.yaml#guest-format", "windows-disk-wmi"),
    ("Windows Server 2008 R2 Enterprise SP1", "windows/vms-guest-2008.yaml#guest-format", "windows-disk-wmi"),
    ("Windows Server 2012 Datacenter", "windows/vms-guest.yaml#guest-format", "windows-disk"),
    ("Windows Server 2012 R2 Datacenter", "windows/vms-guest.yaml#guest-format", "windows-disk"),
    ("Windows Server 2016 Datacenter", "windows/vms-guest.yaml#guest-format", "windows-disk"),
    ("Windows Server 2022 Datacenter", "windows/vms-guest.yaml#guest-format", "windows-disk"),
    ("Windows Server", "common/vms.yaml#guest-format", ""),
]
# the Storage module's cmdlets, which arrive with Windows Server 2012
STORAGE_MODULE = {"get-disk", "set-disk", "initialize-disk", "new-partition", "get-partition", "format-volume",
                  "get-volume", "add-partitionaccesspath", "update-hoststoragecache", "clear-disk"}
GUARD_MARK = {"windows-disk-wmi": "guard (windows-disk-wmi,", "windows-disk": "guard (windows-disk,"}


def _bed(guest_os: str, **identity):
    bed = with_identities(load(example_path("equallogic-ps6110-hyperv")), **identity)
    guests = [vm for vm in bed.vms if vm.storage_access == "guest_iscsi"]
    assert guests
    for vm in guests:
        vm.guest_os = guest_os
    return bed, {vm.id for vm in guests}


@pytest.mark.parametrize("guest_os, template, guard", RELEASES, ids=[r[0] for r in RELEASES])
def test_each_windows_guest_formats_its_own_luns_in_the_vm_section(guest_os, template, guard):
    bed, guests = _bed(guest_os)
    meth = M.generate(bed)
    by_section = {sec.key: sec.steps for sec in meth.sections}
    # no server-side format step for a guest's LUN, before the guest even exists
    assert not [s for s in by_section["connectivity"] if s.destructive and s.target in guests]
    formats = [s for s in by_section["vms"] if s.destructive and s.target in guests]
    assert {s.target for s in formats} == guests
    assert {s.template for s in formats} == {template}
    for s in formats:
        assert s.text.startswith(f"Inside {s.target}") and f"{s.target} formats it because" in s.text
        # 2008 / 2008 R2 show no WWN: their disk is named by the serial it is selected by
        assert s.devices and ("serial SN" if "2008" in guest_os else "WWN naa.") in s.devices[0], s.devices
        if guard:
            assert s.automation, (s.number, s.manual_reason)
            for c in s.automation:
                assert GUARD_MARK[guard] in c.script and "Select-TbDisk $TbWant" in c.script
                own = c.script.split("--- end of guard", 1)[1]
                called = {n.lower() for n in script_checks.powershell_commands(own)}
                if guard == "windows-disk-wmi":   # 2008 / 2008 R2: no Storage module
                    assert not called & STORAGE_MODULE and "diskpart.exe" in called
                else:
                    assert "initialize-disk" in called and "diskpart.exe" not in called
        else:
            assert not s.automation and "operating system" in s.manual_reason or "no template" in s.manual_reason
    # the guest is made before its LUN is formatted inside it
    created = {s.target: s for s in by_section["vms"] if s.template.endswith("#create")}
    for s in formats:
        if s.target in created:
            assert M_order(created[s.target].number) < M_order(s.number)
    assert script_checks.problems(bed, meth) == []


def M_order(number: str) -> tuple[int, ...]:
    return tuple(int(x) for x in number.split("."))


def test_a_2008_r2_guest_with_only_a_wwn_formats_by_hand_and_says_to_state_the_serial():
    """Win32_DiskDrive shows no WWN: with no serial (and no target) the 2008 R2 guest's step is manual."""
    bed, guests = _bed("Windows Server 2008 R2 Enterprise SP1", serial=False)
    meth = M.generate(bed)
    formats = [s for s in meth.steps() if s.destructive and s.target in guests]
    assert formats and all(not s.automation for s in formats)
    assert all("serial" in s.manual_reason and "Win32_DiskDrive" not in s.manual_reason or
               "wmic diskdrive" in s.manual_reason for s in formats)


@pytest.mark.parametrize("guest_os, kept_template", [
    ("Windows Server 2012 R2 Datacenter", "windows/vms-guest.yaml#guest-mount-kept"),
    ("Windows Server 2008 R2 Enterprise SP1", "common/vms.yaml#guest-mount-kept"),
])
def test_a_reused_guest_lun_is_kept_never_formatted(guest_os, kept_template):
    """`reuse: true` on a guest's LUN: no format step; 2012 and later select the disk behind the guard with
    the label to keep (Reuse) and only bring it online and give it its letter; 2008 R2 is done by hand."""
    bed, guests = _bed(guest_os)
    for a in bed.arrays:
        for v in a.volumes:
            v.reuse = True
    meth = M.generate(bed)
    assert not [s for s in meth.steps() if s.destructive and s.target in guests]
    kept = [s for s in meth.steps() if s.target in guests and s.template.endswith("#guest-mount-kept")]
    assert {s.template for s in kept} == {kept_template} and {s.target for s in kept} == guests
    for s in kept:
        if kept_template.startswith("windows/"):
            (c,) = s.automation
            own = c.script.split("--- end of guard", 1)[1]
            called = {n.lower() for n in script_checks.powershell_commands(own)}
            assert "Reuse = '" in own and "select-tbdisk" in called
            assert not called & {"initialize-disk", "new-partition", "format-volume", "clear-disk", "diskpart.exe"}
        else:
            assert not s.automation and "keep the file system labelled" in s.text
    assert script_checks.problems(bed, meth) == []


@pytest.mark.parametrize("case_id", ["ws2008", "ws2008r2", "ws2008r2-rdac", "ws2008r2-hdlm"])
@pytest.mark.parametrize("transport", ["iscsi", "fc", "sas"])
def test_2008_steps_name_the_disk_by_what_2008_shows(case_id, transport):
    """Windows Server 2008 / 2008 R2 show no WWN (Win32_DiskDrive has none, Get-Disk arrives with 2012): a
    step there names and selects the disk by its serial, and neither its words, the disks the run lists
    before writing, nor its commands use a WWN or a Storage-module cmdlet."""
    from topology.synthetic_platforms import PLATFORM_CASES, platform_bed
    case = next(c for c in PLATFORM_CASES if c.id == case_id)
    bed = with_identities(platform_bed(case, transport))
    meth = M.generate(bed)
    hosts = {s.id for s in bed.servers}
    steps = [s for s in meth.steps() if s.destructive and s.target in hosts]
    assert steps
    for s in steps:
        assert "WWN" not in s.text and all("serial SN" in d and "WWN" not in d for d in s.devices), (s.number, s.text)
        for c in s.automation:
            called = {n.lower() for n in script_checks.powershell_commands(c.script)}
            assert not called & STORAGE_MODULE and "diskpart.exe" in called
            assert "Serial = 'SN" in c.script
    assert script_checks.problems(bed, meth) == []
    # with only a WWN stated, the step is done by hand and says to state the serial
    bed = with_identities(platform_bed(case, transport), serial=False)
    for s in [s for s in M.generate(bed).steps() if s.destructive and s.target in hosts]:
        assert not s.automation and not s.devices and "show no WWN" in s.manual_reason
        assert "wmic diskdrive" in s.text
