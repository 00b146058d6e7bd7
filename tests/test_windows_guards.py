"""The PowerShell guards' decision, run on recorded Windows output (there is no PowerShell here).

resources/templates/guards/windows-disk.ps1 (Get-Disk, Windows Server 2012+) and
windows-disk-wmi.ps1 (Win32_DiskDrive and the iSCSI initiator's WMI sessions, 2008/2008 R2, under
PowerShell 2.0 rules) are executed by tests/ps_subset.py on the captures in
tests/data/captures/windows/ (sources in its README).  Each scenario says which disk the guard
selects or how it refuses; a mutation of the guard's logic changes at least one outcome (the
last test), so these tests fail when the guard is wrong.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ps_subset import Interpreter, PsHash, PsThrow, Unsupported, from_json
from topology.methodology.guards import GUARDS_DIR

CAPTURES = Path(__file__).parent / "data" / "captures" / "windows"
TARGET = "iqn.2010-10.org.openstack:volume-ccb39627-34fa-4f47-968b-6580d9d7ee2b"
AZURE_WWN = "naa.60022480f48d294f40f18727df9a6349"
VBOX_SERIAL = "VB48714f98-fcbf9ac2"


def _capture(name: str) -> list:
    return json.loads((CAPTURES / name).read_text(encoding="utf-8"))


def _blank_get_disk(disk: dict) -> dict:
    """The captured disk as a new LUN shows before it is initialized: RAW, no partitions; Number and
    Size, which the excerpt cuts off, from its DiskNumber and AllocatedSize."""
    return dict(disk, PartitionStyle="RAW", NumberOfPartitions=0, Number=disk["DiskNumber"],
                Size=disk["AllocatedSize"], IsOffline=True)


def _blank_drive(drive: dict) -> dict:
    """The captured Win32_DiskDrive as a new LUN shows: no partitions, no MBR signature."""
    return dict(drive, Partitions=0, Signature=None)


def _want(**kw) -> PsHash:
    return PsHash({"Volume": "array:data", **kw})


def _gb(lo: float, hi: float) -> dict:
    return {"MinBytes": int(lo * 1e9), "MaxBytes": int(hi * 1e9)}


def _decide(guard: str, want: PsHash, commands: dict, version: int = 5, source: str | None = None):
    """('selected', disk number) or ('refused', message) -- what the guard decides."""
    it = Interpreter(commands, version=version)
    it.run(source if source is not None else (GUARDS_DIR / guard).read_text(encoding="utf-8"))
    it.set("TbWant", want)
    try:
        out = it.call("Select-TbDisk", want)
    except PsThrow as refused:
        return "refused", str(refused)
    assert len(out) == 1 and isinstance(out[0], PsHash), out
    return "selected", out[0].get_ci("Number")


# ------------------------------------------------------------------ Get-Disk (2012 and later)

def _get_disk(*disks: dict, labels: dict[int, list[str]] | None = None) -> dict:
    parts = {n: [PsHash({"DiskNumber": n, "PartitionNumber": i + 1, "Label": lab}) for i, lab in enumerate(ls)]
             for n, ls in (labels or {}).items()}
    return {"Get-Disk": lambda: from_json(list(disks)),
            "Get-Partition": lambda DiskNumber=None: parts.get(DiskNumber, []),
            "Get-Volume": lambda Partition=None: [PsHash({"FileSystemLabel": Partition.get_ci("Label")})]}


AZURE = _capture("get-disk_azuredisk-csi-driver-2661.json")[0]
VMWARE_BOOT = _capture("get-disk_ansible-51595.json")[0]
SERIAL_DISK = dict(_blank_get_disk(AZURE), SerialNumber="D0ZOcKa9BdNx ")
GET_DISK_CASES = {
    # the LUN as captured: offline after a signature collision, GPT-partitioned
    "captured-gpt": (_want(Wwn=AZURE_WWN, **_gb(500, 600)), (AZURE, VMWARE_BOOT)),
    "blank": (_want(Wwn=AZURE_WWN, **_gb(500, 600)), (_blank_get_disk(AZURE), VMWARE_BOOT)),
    "blank-by-0x-wwn": (_want(Wwn="0x60022480F48D294F40F18727DF9A6349", **_gb(500, 600)),
                        (_blank_get_disk(AZURE), VMWARE_BOOT)),
    "other-wwn": (_want(Wwn="naa.60022480f48d294f40f18727df9a6348", **_gb(500, 600)),
                  (_blank_get_disk(AZURE), VMWARE_BOOT)),
    "seen-twice": (_want(Wwn=AZURE_WWN, **_gb(500, 600)),
                   (_blank_get_disk(AZURE), dict(_blank_get_disk(AZURE), DiskNumber=4), VMWARE_BOOT)),
    "too-big-for-100gb": (_want(Wwn=AZURE_WWN, **_gb(95, 107.4)), (_blank_get_disk(AZURE),)),
    "too-small-for-1tb": (_want(Wwn=AZURE_WWN, **_gb(950, 1127)), (_blank_get_disk(AZURE),)),
    "other-vendor": (_want(Wwn=AZURE_WWN, Vendor="^EQLOGIC$", Product="^100E-00", **_gb(500, 600)),
                     (_blank_get_disk(AZURE),)),
    "right-vendor": (_want(Wwn=AZURE_WWN, Vendor="^Msft$", **_gb(500, 600)), (_blank_get_disk(AZURE),)),
    "boot-disk-by-its-id": (_want(Wwn=VMWARE_BOOT["UniqueId"], **_gb(0, 1e6)), (VMWARE_BOOT,)),
    "no-identity": (_want(**_gb(500, 600)), (AZURE,)),
    # the capture shows no SerialNumber: the same disk as an array LUN with a mixed-case serial (as NetApp's are)
    "by-serial": (_want(Serial="D0ZOcKa9BdNx", **_gb(500, 600)), (SERIAL_DISK, VMWARE_BOOT)),
    "serial-in-another-case": (_want(Serial="D0ZOCKA9BDNX", **_gb(500, 600)), (SERIAL_DISK, VMWARE_BOOT)),
    "wwn-and-another-volumes-serial": (_want(Wwn=AZURE_WWN, Serial="D0ZOcKa9BdNy", **_gb(500, 600)), (SERIAL_DISK,)),
    # a command copied from a step done by hand: the size band is a placeholder
    "size-not-stated": (_want(Wwn=AZURE_WWN, MinBytes="«missing: volume.min_bytes»",
                              MaxBytes="«missing: volume.max_bytes»"), (_blank_get_disk(AZURE),)),
    # a WWN cut short (a lab's own template) must not match the disk that shows no UniqueId
    "wwn-cut-short": (_want(Wwn="naa.", **_gb(500, 600)), (dict(_blank_get_disk(AZURE), UniqueId=""), VMWARE_BOOT)),
    # the cluster holds the disk; on a node that does not own it its partition table may read as RAW
    "clustered": (_want(Wwn=AZURE_WWN, **_gb(500, 600)), (dict(_blank_get_disk(AZURE), IsClustered=True),)),
}
GET_DISK_EXPECT = {
    "captured-gpt": ("refused", ["it carries a GPT partition table", "disk  ("]),
    "blank": ("selected", 3),
    "blank-by-0x-wwn": ("selected", 3),
    "other-wwn": ("refused", ["no disk has its identity", "UniqueId 60022480F48D294F40F18727DF9A6349",
                              "UniqueId SCSI\\DISK&VEN_VMWARE"]),
    "seen-twice": ("refused", ["its identity appears on 2 disks", "claim them with MPIO first"]),
    "too-big-for-100gb": ("refused", ["it has 549755813888 bytes, the volume between 95000000000 and 107400000000"]),
    "too-small-for-1tb": ("refused", ["it has 549755813888 bytes"]),
    "other-vendor": ("refused", ["its vendor is Msft, not ^EQLOGIC$"]),
    "right-vendor": ("selected", 3),
    "boot-disk-by-its-id": ("refused", ["it is the boot or system disk", "it carries a GPT partition table"]),
    "no-identity": ("refused", ["the step names no WWN or serial"]),
    "by-serial": ("selected", 3),
    "serial-in-another-case": ("refused", ["no disk has its identity"]),
    "wwn-and-another-volumes-serial": ("refused", ["its serial is D0ZOcKa9BdNx, not D0ZOcKa9BdNy"]),
    "size-not-stated": ("refused", ["the step states no size for the volume (MinBytes «missing: volume.min_bytes»"]),
    "wwn-cut-short": ("refused", ["Wwn naa. is no WWN"]),
    "clustered": ("refused", ["it is a disk of a failover cluster (IsClustered)"]),
}


def _outcome(guard: str, case: tuple, commands, version: int = 5, source: str | None = None):
    want, disks = case
    return _decide(guard, want, commands(*disks), version, source)


def _check(outcome, expect):
    kind, detail = expect
    assert outcome[0] == kind, outcome
    if kind == "selected":
        assert outcome[1] == detail
    else:
        assert outcome[1].startswith("refused, nothing was written to array:data's disk: "), outcome
        for words in detail:
            assert words in outcome[1], (words, outcome[1])


@pytest.mark.parametrize("name", GET_DISK_CASES)
def test_get_disk_guard_on_recorded_disks(name):
    _check(_outcome("windows-disk.ps1", GET_DISK_CASES[name], _get_disk), GET_DISK_EXPECT[name])


def test_reuse_keeps_a_file_system_with_the_volume_label_and_refuses_any_other():
    used = dict(_blank_get_disk(AZURE), PartitionStyle="GPT", NumberOfPartitions=2)
    want = _want(Wwn=AZURE_WWN, Reuse="data", **_gb(500, 600))
    assert _decide("windows-disk.ps1", want, _get_disk(used, labels={3: ["", "data"]})) == ("selected", 3)
    kind, msg = _decide("windows-disk.ps1", want, _get_disk(used, labels={3: ["", "logs"]}))
    assert kind == "refused" and "it holds no file system labelled data to reuse (labels: , logs)" in msg
    # without reuse the same disk is refused for what it holds
    kind, msg = _decide("windows-disk.ps1", _want(Wwn=AZURE_WWN, **_gb(500, 600)),
                        _get_disk(used, labels={3: ["data"]}))
    assert kind == "refused" and "it has 2 partition(s)" in msg


# ------------------------------------------------------------------ Win32_DiskDrive (2008, 2008 R2)

VBOX = _capture("win32_diskdrive_systeminformation-421.json")[0]
AZURE_DRIVE = _capture("win32_diskdrive_azuredisk-csi-driver-2661.json")[0]
SESSIONS = _capture("msiscsiinitiator_sessionclass_nova-hyperv.json")


def _wmi(*drives: dict, sessions: list | None = None, labels: dict[str, list[str]] | None = None) -> dict:
    """Get-WmiObject answering from the captures (one host: the drives, and the initiator's sessions)."""
    def get_wmiobject(*positional, Class=None, Namespace=None, Query=None):
        if Query is not None:
            if "Win32_DiskDriveToDiskPartition" in Query:
                found = [d for d in drives if d["DeviceID"] in Query.replace("\\\\", "\\")]
                return [PsHash({"DeviceID": f"part-{i}-{d['DeviceID']}"}) for d in found
                        for i, _ in enumerate((labels or {}).get(d["DeviceID"], []))]
            for d in drives:
                for i, lab in enumerate((labels or {}).get(d["DeviceID"], [])):
                    if f"part-{i}-{d['DeviceID']}" in Query:
                        return [PsHash({"VolumeName": lab})]
            return []
        if Class == "Win32_DiskDrive":
            return from_json(list(drives))
        if Class == "MSiSCSIInitiator_SessionClass" and str(Namespace).lower() == "root\\wmi":
            return from_json(sessions if sessions is not None else SESSIONS)
        raise AssertionError(f"unexpected WMI query {positional} {Class} {Namespace}")
    return {"Get-WmiObject": get_wmiobject}


# the captured iSCSI session's LUN 1 is \\.\PhysicalDrive1: here the Azure VM's data disk (Index 1)
HOST = (VBOX, AZURE_DRIVE)
BLANK_HOST = (VBOX, _blank_drive(AZURE_DRIVE))
SERIAL_HOST = (VBOX, dict(_blank_drive(AZURE_DRIVE), SerialNumber="SV9A2X00011"))
WMI_CASES = {
    "serial-of-the-system-disk": (_want(Serial=VBOX_SERIAL, **_gb(50, 60)), HOST),
    "blank-by-serial": (_want(Serial=VBOX_SERIAL, **_gb(50, 60)), (_blank_drive(VBOX), AZURE_DRIVE)),
    "target-lun-as-captured": (_want(Target=TARGET, Lun=1, **_gb(1600, 1900)), HOST),
    "target-lun-blank": (_want(Target=TARGET.upper(), Lun=1, **_gb(1600, 1900)), BLANK_HOST),
    "target-controller-lun": (_want(Target=TARGET, Lun=0, **_gb(1600, 1900)), BLANK_HOST),
    "other-target": (_want(Target="iqn.2001-05.com.equallogic:0-8a0906-data", Lun=1, **_gb(1600, 1900)), BLANK_HOST),
    "other-lun": (_want(Target=TARGET, Lun=2, **_gb(1600, 1900)), BLANK_HOST),
    "target-wrong-size": (_want(Target=TARGET, Lun=1, **_gb(95, 107.4)), BLANK_HOST),
    "target-too-small": (_want(Target=TARGET, Lun=1, **_gb(1900, 2200)), BLANK_HOST),
    "serial-other-vendor": (_want(Serial=VBOX_SERIAL, Vendor="^IBM$", Product="^1[78][0-9][0-9]", **_gb(50, 60)),
                            (_blank_drive(VBOX),)),
    "unknown-serial": (_want(Serial="SV9A2X00011", **_gb(50, 60)), HOST),
    "no-identity": (_want(**_gb(50, 60)), HOST),
    "serial-in-another-case": (_want(Serial=VBOX_SERIAL.upper(), **_gb(50, 60)), (_blank_drive(VBOX), AZURE_DRIVE)),
    # the captured LUN 1 with a serial (the capture shows none): the serial and the target and LUN must agree
    "serial-and-its-lun": (_want(Serial="SV9A2X00011", Target=TARGET, Lun=1, **_gb(1600, 1900)), SERIAL_HOST),
    "serial-and-another-lun": (_want(Serial="SV9A2X00011", Target=TARGET, Lun=2, **_gb(1600, 1900)), SERIAL_HOST),
    "size-not-stated": (_want(Serial=VBOX_SERIAL, MinBytes="«missing: volume.min_bytes»",
                              MaxBytes="«missing: volume.max_bytes»"), (_blank_drive(VBOX), AZURE_DRIVE)),
}
WMI_EXPECT = {
    "serial-of-the-system-disk": ("refused", ["disk 0 (53686402560 bytes, VBOX HARDDISK, serial VB48714f98-fcbf9ac2)",
                                              "it has 3 partition(s)",
                                              "it carries an MBR partition table (signature 58649349)"]),
    "blank-by-serial": ("selected", 0),
    "target-lun-as-captured": ("refused", ["disk 1 (1719058844160 bytes", "it has 1 partition(s)"]),
    "target-lun-blank": ("selected", 1),
    "target-controller-lun": ("refused", ["no disk has its identity", "disk 0 (53686402560 bytes, VBOX HARDDISK"]),
    "other-target": ("refused", ["no disk has its identity"]),
    "other-lun": ("refused", ["no disk has its identity"]),
    "target-wrong-size": ("refused", ["it has 1719058844160 bytes, the volume between 95000000000 and 107400000000"]),
    "target-too-small": ("refused", ["it has 1719058844160 bytes, the volume between 1900000000000"]),
    "serial-other-vendor": ("refused", ["its vendor is VBOX, not ^IBM$",
                                        "its product is HARDDISK, not ^1[78][0-9][0-9]"]),
    "unknown-serial": ("refused", ["no disk has its identity; the disks here: disk 0",
                                   "; disk 1 (1719058844160 bytes"]),
    "no-identity": ("refused", ["the step names no serial, or target and LUN"]),
    "serial-in-another-case": ("refused", ["no disk has its identity"]),
    "serial-and-its-lun": ("selected", 1),
    "serial-and-another-lun": ("refused", [f"it is not LUN 2 of {TARGET} (the initiator shows it as target|LUN "
                                           f"{TARGET}|1)"]),
    "size-not-stated": ("refused", ["the step states no size for the volume (MinBytes «missing: volume.min_bytes»"]),
}


@pytest.mark.parametrize("name", WMI_CASES)
def test_wmi_guard_on_recorded_disks_and_iscsi_sessions(name):
    _check(_outcome("windows-disk-wmi.ps1", WMI_CASES[name], _wmi, version=2), WMI_EXPECT[name])


def test_wmi_guard_refuses_a_lun_that_shows_as_two_disks_without_mpio():
    """Two sessions to the target, no MPIO: each path's device is its own PhysicalDrive."""
    second = json.loads(json.dumps(SESSIONS[0]))
    second["Devices"][1]["DeviceNumber"] = 0
    kind, msg = _decide("windows-disk-wmi.ps1", _want(Target=TARGET, Lun=1, **_gb(40, 2000)),
                        _wmi(_blank_drive(VBOX), _blank_drive(AZURE_DRIVE), sessions=SESSIONS + [second]), version=2)
    assert kind == "refused" and "its identity appears on 2 disks" in msg


def test_wmi_guard_reuse_reads_the_labels_through_the_partitions():
    used = dict(_blank_drive(AZURE_DRIVE), Partitions=1)
    want = _want(Target=TARGET, Lun=1, Reuse="data", **_gb(1600, 1900))
    assert _decide("windows-disk-wmi.ps1", want, _wmi(VBOX, used, labels={used["DeviceID"]: ["data"]}),
                   version=2) == ("selected", 1)
    kind, msg = _decide("windows-disk-wmi.ps1", want, _wmi(VBOX, used, labels={used["DeviceID"]: ["old"]}), version=2)
    assert kind == "refused" and "labelled data to reuse (labels: old)" in msg


# ------------------------------------------------------------------ the guard's own language

def test_the_wmi_guard_is_powershell_2():
    """2008 R2 ships PowerShell 2.0: the guard runs under its rules, and a PS 3.0 construct is caught."""
    source = (GUARDS_DIR / "windows-disk-wmi.ps1").read_text(encoding="utf-8")
    Interpreter(version=2).run(source)
    for ps3 in ("$drives = @(1, 2); $x = $drives.Size", "if ($a -in $b) { 1 }", "$o = [pscustomobject]@{ A = 1 }"):
        with pytest.raises(Unsupported):
            Interpreter(version=2).run(source + "\n" + ps3)


def test_the_interpreter_follows_powershell_where_the_guards_rely_on_it():
    it = Interpreter()
    it.run("""
function Get-None { }
function Get-One { return @('a') }
function Get-Two { $x = @(); $x += 'a'; $x += 'b'; return $x }
$none = @(Get-None).Count
$one = Get-One
$two = @(Get-Two).Count
$ci = 'ABC' -eq 'abc'
$numeric = 10 -eq '10'
$filtered = @(1, 2, 3) -gt 1
$m = 'SCSI\\DISK&VEN_IBM&PROD_1818' -match 'VEN_([^&]*)&PROD_(.*)'
$vendor = $Matches[1]
$fmt = '{0} of {1}' -f 'a', 2
$joined = @('x', 'y') -join ', '
$h = @{ Key = 1 }
$hv = $h.KEY
""")
    assert it.get("none") == 0 and it.get("one") == "a" and it.get("two") == 2
    assert it.get("ci") is True and it.get("numeric") is True and it.get("filtered") == [2, 3]
    assert it.get("vendor") == "IBM" and it.get("fmt") == "a of 2" and it.get("joined") == "x, y"
    assert it.get("hv") == 1


# ------------------------------------------------------------------ the tests can fail

MUTATIONS = {
    "windows-disk.ps1": [
        ("$Fact.Size -lt $Want.MinBytes -or $Fact.Size -gt $Want.MaxBytes", "$Fact.Size -lt $Want.MinBytes"),
        ("if ($found.Count -gt 1)", "if ($found.Count -gt 2)"),
        ("$Fact.PartitionStyle -ne 'RAW'", "$Fact.PartitionStyle -eq 'GPT' -and $false"),
        ("if ($Fact.IsBoot -or $Fact.IsSystem)", "if ($Fact.IsBoot -and $false)"),
        ("$Fact.Vendor -notmatch $Want.Vendor", "$Fact.Product -notmatch $Want.Vendor"),
        ("if ($text.StartsWith($prefix))", "if ($false)"),
        ("foreach ($fact in $Facts) { if (Test-TbIdentity $fact $Want) { $found += $fact } }",
         "foreach ($fact in $Facts) { $found += $fact }"),
    ],
    "windows-disk-wmi.ps1": [
        ("if ($parts[2] -eq \"$($drive.Index)\")", "if ($parts[1] -eq \"$($drive.Index)\")"),
        ("if ($Fact.Partitions -gt 0)", "if ($Fact.Partitions -gt 5)"),
        ("$Fact.Signature -ne '' -and $Fact.Signature -ne '0'", "$false"),
        ("$Fact.Size -lt $Want.MinBytes -or $Fact.Size -gt $Want.MaxBytes", "$Fact.Size -gt $Want.MaxBytes"),
        ("$Fact.Product -notmatch $Want.Product", "$false"),
        ("foreach ($target in $Fact.Targets) { if ($target -eq $path) { return $true } }",
         "foreach ($target in $Fact.Targets) { if ($target -like \"$($Want.Target)*\") { return $true } }"),
    ],
}


@pytest.mark.parametrize("guard, old, new", [(g, o, n) for g, ms in MUTATIONS.items() for o, n in ms])
def test_a_wrong_guard_fails_these_tests(guard, old, new):
    source = (GUARDS_DIR / guard).read_text(encoding="utf-8")
    assert source.count(old) == 1, old
    mutated = source.replace(old, new)
    cases, commands, version = ((GET_DISK_CASES, _get_disk, 5) if guard == "windows-disk.ps1" else
                                (WMI_CASES, _wmi, 2))
    expect = GET_DISK_EXPECT if guard == "windows-disk.ps1" else WMI_EXPECT
    failed = []
    for name, case in cases.items():
        try:
            _check(_outcome(guard, case, commands, version, mutated), expect[name])
        except AssertionError:
            failed.append(name)
    assert failed, f"no scenario notices {old!r} -> {new!r}"


# ------------------------------------------------------------------ the generated 2008 R2 step

def _iscsi_bed(case_id: str, target: str = ""):
    """The synthetic iSCSI bed of platform `case_id`, each volume of its array at `target` when given."""
    from topology.synthetic_platforms import cases, platform_bed
    bed = platform_bed(next(c for c, t in cases() if c.id == case_id and t == "iscsi"), "iscsi")
    for v in bed.arrays[0].volumes if target else ():
        v.target = target
    return bed


def _format_script(bed, volume: str) -> str:
    """The script of the one destructive step on array:`volume`, which has one command."""
    from topology import methodology as M
    steps = [s for s in M.generate(bed).steps() if s.destructive and f"array:{volume}" in " ".join(s.devices)]
    assert len(steps) == 1 and len(steps[0].automation) == 1, steps
    return steps[0].automation[0].script


def test_a_generated_2008_r2_iscsi_step_selects_by_target_and_lun_and_refuses_another_vendors_disk():
    """No serial stated: the 2008 R2 format step selects the LUN by the initiator's target and LUN; its
    $TbWant, as generated, reaches the guard, which refuses the captured disk at that target and LUN
    because it is not a Dell MD3 LUN and it holds a partition."""
    bed = _iscsi_bed("ws2008r2", TARGET)
    witness = next(v for v in bed.arrays[0].volumes if v.name == "witness")
    witness.size_gb = 1719.06
    script = _format_script(bed, "witness")
    own = script.split("--- end of guard", 1)[1]
    assert "SerialNumber" not in own and "SCSILogicalUnit" not in own
    want_lines = "\n".join(line for line in own.splitlines() if line.startswith("$TbWant"))
    assert f"Target = '{TARGET}'; Lun = 1;" in want_lines
    it = Interpreter(_wmi(VBOX, AZURE_DRIVE), version=2)
    it.run(script.split("--- end of guard", 1)[0] + "--- end of guard\n" + want_lines)
    with pytest.raises(PsThrow) as refused:
        it.call("Select-TbDisk", it.get("TbWant"))
    assert "array:witness's disk: disk 1 (1719058844160 bytes" in str(refused.value)
    assert "its vendor is , not ^DELL$" in str(refused.value) and "it has 1 partition(s)" in str(refused.value)


def test_a_generated_2008_r2_step_that_selects_by_serial_also_checks_the_stated_target_and_lun():
    """Serial, target and LUN stated: the serial selects the disk, and a disk the initiator shows as another
    LUN of the target (the bed's serial is another volume's) is refused, as on Linux."""
    bed = _iscsi_bed("ws2008r2", TARGET)
    witness = next(v for v in bed.arrays[0].volumes if v.name == "witness")
    witness.size_gb, witness.serial = 1719.06, "SV9A2X00011"
    script = _format_script(bed, "witness")
    guard, own = script.split("--- end of guard", 1)
    want_lines = "\n".join(line for line in own.splitlines() if line.startswith("$TbWant"))
    assert "Serial = 'SV9A2X00011'" in want_lines and f"$TbWant.Target = '{TARGET}'; $TbWant.Lun = 1" in want_lines
    drive = dict(_blank_drive(AZURE_DRIVE), SerialNumber="SV9A2X00011",
                 PNPDeviceID="SCSI\\DISK&VEN_DELL&PROD_MD32XXI\\1")
    sessions = json.loads(json.dumps(SESSIONS))
    for device in sessions[0]["Devices"]:
        device["ScsiLun"] = device["ScsiLun"] + 2 if device["DeviceNumber"] == 1 else device["ScsiLun"]

    def decide(sessions: list):
        it = Interpreter(_wmi(VBOX, drive, sessions=sessions), version=2)
        it.run(guard + "--- end of guard\n" + want_lines)
        try:
            return "selected", it.call("Select-TbDisk", it.get("TbWant"))[0].get_ci("Number")
        except PsThrow as refused:
            return "refused", str(refused)
    assert decide(SESSIONS) == ("selected", 1)
    kind, msg = decide(sessions)
    assert kind == "refused" and f"it is not LUN 1 of {TARGET} (the initiator shows it as target|LUN {TARGET}|3)" in msg


def test_a_step_names_no_lun_that_only_another_hosts_mapping_states():
    """The volume is mapped to node2 as LUN 7 and to node1 with no number; node1 formats it. On node1 the
    LUN may have any number: neither the words ("right-click the disk ... (LUN 7)") nor the guard's
    target and LUN may say 7, which on node1 can be another volume."""
    from topology import methodology as M
    from topology.model_storage import Mapping
    bed = _iscsi_bed("ws2008r2", TARGET)
    array = bed.arrays[0]
    next(v for v in array.volumes if v.name == "data").serial = "SV9A2X00011"
    array.mappings = [m for m in array.mappings if m.volume != "data"] + [
        Mapping(volume="data", to="node2", lun=7), Mapping(volume="data", to="node1", lun=None)]
    steps = [s for s in M.generate(bed).steps() if s.destructive and "array:data" in " ".join(s.devices)]
    assert len(steps) == 1 and steps[0].text.startswith("On node1,"), [s.text for s in steps]
    assert "LUN 7" not in steps[0].text and "Lun = 7" not in steps[0].automation[0].script
    assert "Serial = 'SV9A2X00011'" in steps[0].automation[0].script


def test_the_formatted_already_check_knows_a_disk_selected_by_its_serial():
    """A format step run again (a resume) first asks whether the volume is formatted already, passing
    Get-Disk's own object to Test-TbIdentity: its serial is SerialNumber, not the facts' Serial. Not
    recognised, the step went on to select the disk and refused it for the partition table it had made."""
    from topology import methodology as M
    bed = _iscsi_bed("ws2012r2")
    next(v for v in bed.arrays[0].volumes if v.name == "data").serial = "D0ZOcKa9BdNx"
    step = next(s for s in M.generate(bed).steps() if s.destructive and "array:data" in " ".join(s.devices))
    script = step.automation[0].script
    assert "Get-Disk | Where-Object { Test-TbIdentity $_ $TbWant }" in script
    it = Interpreter(version=5)
    it.run(script.split("--- end of guard", 1)[0] + "--- end of guard\n")
    formatted = from_json([dict(SERIAL_DISK, PartitionStyle="GPT", NumberOfPartitions=2)])[0]
    assert it.call("Test-TbIdentity", formatted, _want(Serial="D0ZOcKa9BdNx")) == [True]
    assert it.call("Test-TbIdentity", formatted, _want(Serial="D0ZOCKA9BDNX")) == [False]
