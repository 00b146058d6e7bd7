"""The methodology generator: seed 000's Appendix F values, one logon per path, automation with
quoted values, beds with missing values, templates as data (override, add, broken), the command."""
from __future__ import annotations

import copy
import dataclasses
import random
import re
import shutil
import subprocess
import typing
from pathlib import Path

import pytest

from app.cli import main as cli_main
from resources import example_path
from tests.beds import clean_bed
from tests.test_quoting import PS_QUOTES, parse_c_string, parse_verbatim
from topology import methodology as M
from topology import quoting
from topology.errors import BedFileError
from topology.fileformat import load
from topology.model import AccessSpec, RunPlan
from topology.synthetic import generate as synthetic

SEED000 = example_path("md3000i-hyperv-cluster")


@pytest.fixture(scope="module")
def seed000():
    bed = load(SEED000)
    return bed, M.generate(bed)


@pytest.fixture(scope="module")
def seed000_2012():
    """Seed 000 as if its servers and guests ran Windows Server 2012 R2."""
    bed = load(SEED000)
    for s in bed.servers:
        s.os = "Windows Server 2012 R2 Datacenter"
    for v in bed.vms:
        v.guest_os = "Windows Server 2012 R2 Standard"
    return bed, M.generate(bed)


def steps_of(meth: M.Methodology, key: str) -> list[M.Step]:
    return next((s.steps for s in meth.sections if s.key == key), [])


def all_text(meth: M.Methodology) -> str:
    return M.to_markdown(meth)


# ============================================================ seed 000: Appendix F content

APPENDIX_F_VALUES = [
    # domain controller, mail client, host client NICs, cluster
    "192.168.1.250", "127.0.0.1", "192.168.1.25", "192.168.1.201", "192.168.1.202", "192.168.1.211",
    "192.168.1.212", "192.168.1.102", "domain.company.com",
    # storage NICs and array portals on both iSCSI subnets
    "192.168.130.201", "192.168.130.211", "192.168.130.101", "192.168.130.102",
    "192.168.131.201", "192.168.131.211", "192.168.131.101", "192.168.131.102",
    "255.255.255.0", "9000",
    # array: virtual disks, host type, host group
    "Logs", "128 GB", "Witness", "Database", "Windows Server 2003/Server 2008 Clustered", "MD3000-Cluster",
    # cluster: excluded iSCSI networks, quorum, CSV path
    "192.168.130.0/24", "192.168.131.0/24", "Node and Disk Majority", r"C:\ClusterStorage\Volume1",
    # Hyper-V: virtual network, VM memory, OS VHD
    "Local Area Connection 4", "2048 MB", "4096 MB", "40 GB", "fixed-size",
    # run procedure
    "Wait 10 minutes", "3 runs", "median",
]


def test_seed000_procedure_holds_every_appendix_f_value(seed000):
    text = all_text(seed000[1])
    missing = [v for v in APPENDIX_F_VALUES if v not in text]
    assert not missing, f"not in the generated methodology: {missing}"


@pytest.mark.parametrize("group, disks, raid", [("SQL", 4, "RAID 10"), ("Exchange", 4, "RAID 10"),
                                                ("Logs", 2, "RAID 1"), ("OS", 4, "RAID 10")])
def test_seed000_disk_group_steps_carry_raid_level_and_disk_count(seed000, group, disks, raid):
    storage = steps_of(seed000[1], "storage")
    step = next(s for s in storage if f"disk group {group} " in s.text)
    assert re.search(rf"\b{disks}\b", step.text)
    assert f"; {raid})" in step.text or f"{raid} with" in step.text
    assert "RAID 1/10" in step.text  # the MDSM wizard's own wording for RAID 1 and 10
    assert step.sources.get(str(disks)) == f"MD3000i:group:{group}.members"


def test_seed000_sections_come_in_build_order(seed000):
    keys = [s.key for s in seed000[1].sections]
    assert keys == ["infrastructure", "hosts", "network", "switches", "storage", "connectivity", "cluster",
                    "vms", "workloads", "run"]
    assert [s.number for s in seed000[1].sections] == [str(i) for i in range(1, 11)]
    for sec in seed000[1].sections:
        assert [st.number for st in sec.steps] == [f"{sec.number}.{i}" for i in range(1, len(sec.steps) + 1)]


def test_seed000_one_network_step_per_port_with_address_mask_mtu_flow_control(seed000):
    bed, meth = seed000
    net = steps_of(meth, "network")
    san1 = next(s for s in net if s.target == "R710-1" and "adapter SAN1" in s.text)
    for value in ("192.168.130.201", "255.255.255.0", "9000", "Generate & Respond"):
        assert value in san1.text
    assert san1.sources["192.168.130.201"] == "R710-1:SAN1.address"
    ps = san1.automation[0]
    assert (ps.shell, ps.platform) == ("powershell", "windows")
    # Windows Server 2008 R2: netsh and the driver's registry keywords, no NetTCPIP/NetAdapter cmdlets
    assert "$name = 'SAN1'" in ps.script
    assert "netsh interface ipv4 set address $name static '192.168.130.201' '255.255.255.0'" in ps.script
    assert "-Name '*JumboPacket' -Value ([string]9014)" in ps.script
    assert "-Name '*FlowControl' -Value ([string]3)" in ps.script
    assert "New-NetIPAddress" not in ps.script
    assert ps.verify and "netsh interface ipv4 show config 'SAN1'" in ps.verify
    ports = [f"{s.id}:{p.name}" for s in bed.servers if s.role != "infrastructure"
             for a in s.adapters for p in a.ports]
    per_port = [s for s in net if s.template.endswith(("#port", "#port-no-ip"))]
    assert len(per_port) == len(ports)


def test_seed000_on_windows_server_2012_r2_gets_the_2012_cmdlets(seed000_2012):
    bed, meth = seed000_2012
    net = steps_of(meth, "network")
    san1 = next(s for s in net if s.target == "R710-1" and "adapter SAN1" in s.text)
    ps = san1.automation[0]
    assert "New-NetIPAddress -InterfaceAlias 'SAN1' -IPAddress '192.168.130.201' -PrefixLength 24" in ps.script
    assert "-RegistryKeyword '*JumboPacket' -RegistryValue 9014" in ps.script
    assert "-RegistryKeyword '*FlowControl' -RegistryValue 3" in ps.script
    assert ps.verify and "Get-NetIPAddress" in ps.verify
    logons = [s for s in steps_of(meth, "connectivity") if s.template.endswith("#login")]
    assert len(logons) == 8
    for step in logons:
        script = step.automation[0].script
        assert "Connect-IscsiTarget" in script and "-IsMultipathEnabled $true -IsPersistent $true" in script
        assert "Get-IscsiConnection" in step.automation[0].verify
    scripts = "\n".join(c.script for s in meth.steps() for c in s.automation)
    assert "-MemoryStartupBytes 2048MB" in scripts and "-MemoryStartupBytes 4096MB" in scripts
    assert "-SizeBytes 40GB -Fixed:$true" in scripts
    assert "Install-WindowsFeature -Name Multipath-IO" in scripts
    assert "New-IscsiTargetPortal -TargetPortalAddress '192.168.131.102'" in scripts
    # the PowerVault DSM claims its own devices: the Microsoft DSM's automatic claim is not asked for
    assert "Enable-MSDSMAutomaticClaim" not in scripts


def test_seed000_one_logon_step_per_path_source_to_target(seed000):
    bed, meth = seed000
    conn = steps_of(meth, "connectivity")
    logons = [s for s in conn if s.template.endswith("#login")]
    assert len(logons) == len(bed.paths) == 8
    ip = {}
    for s in bed.servers:
        for a in s.adapters:
            for p in a.ports:
                ip[f"{s.id}:{p.name}"] = p.address.split("/")[0]
    for a in bed.arrays:
        for c in a.controllers:
            for p in c.ports:
                ip[f"{a.id}:{p.name}"] = p.address.split("/")[0]
    for path, step in zip(bed.paths, logons, strict=True):
        src, dst = ip[path.initiator], ip[path.target]
        assert step.target == path.host
        assert f"Source IP {src}" in step.text and f"Target portal {dst}" in step.text
        # 2008 R2: iscsicli names initiator ports by number, so the source address is chosen in the dialog
        assert step.manual and not step.automation
    portals = [s for s in conn if s.template.endswith("#portal")]
    assert len(portals) == 8  # four discovery portals on each host
    assert {s.text.split("type ")[1].split(" ")[0] for s in portals} == {
        "192.168.130.101", "192.168.130.102", "192.168.131.101", "192.168.131.102"}
    assert {s.automation[0].script for s in portals} == {
        f"iscsicli.exe QAddTargetPortal '{ip}'" for ip in
        ("192.168.130.101", "192.168.130.102", "192.168.131.101", "192.168.131.102")}


def test_seed000_cluster_vm_and_array_automation(seed000):
    meth = seed000[1]
    scripts = "\n".join(c.script for s in meth.steps() for c in s.automation)
    assert ("New-Cluster -Name 'MD3000-Cluster' -Node 'R710-1','R710-2' -StaticAddress '192.168.1.102' "
            "-IgnoreNetwork '192.168.130.0/24','192.168.131.0/24'") in scripts
    assert "Set-ClusterQuorum -Cluster 'MD3000-Cluster' -NodeAndDiskMajority 'Witness'" in scripts
    assert "Add-ClusterSharedVolume -Cluster 'MD3000-Cluster' -Name 'OS'" in scripts
    assert "Import-Module FailoverClusters" in scripts   # PowerShell 2.0 loads no module by itself
    # Windows Server 2008 R2: the Hyper-V v1 machines are made in Hyper-V Manager; ServerManager's
    # Add-WindowsFeature and iscsicli stand in for Install-WindowsFeature and the iSCSI module
    assert "New-VM" not in scripts and "New-VHD" not in scripts
    assert "Add-WindowsFeature -Name Multipath-IO" in scripts
    assert "Install-WindowsFeature" not in scripts
    assert "iscsicli.exe QAddTargetPortal '192.168.131.102'" in scripts
    vm_text = all_text(meth)
    assert "2048 MB" in vm_text and "40 GB, fixed-size" in vm_text
    vendor = [c for s in steps_of(meth, "storage") for c in s.automation if c.shell == "vendor-cli"]
    assert vendor and all(c.platform == "array" and "MD3000i CLI" in (c.note + " MD3000i CLI") for c in vendor)
    smcli = "\n".join(c.script for c in vendor)
    assert 'create virtualDisk physicalDisks=(0,10 0,11 0,12 0,13) raidLevel=1 userLabel="OS" owner=b;' in smcli
    assert 'userLabel="Logs" capacity=128GB' in smcli
    assert 'create hostGroup userLabel="MD3000-Cluster";' in smcli
    assert "IPV4Address=192.168.131.102 IPV4SubnetMask=255.255.255.0 maxFramePayload=9000" in smcli
    # switches have no vendor template: manual steps
    assert all(s.manual and not s.automation for s in steps_of(meth, "switches"))


def test_seed000_run_procedure_from_the_run_plan(seed000):
    """Seed 000 runs its procedure three times at each user level in each state (optimized, degraded),
    the reset before each run, and reports the median of each level's three runs."""
    bed, meth = seed000
    run = steps_of(meth, "run")
    positions = list(dict.fromkeys((s.position["scenario"], s.position["level"]) for s in run if s.position))
    assert positions == [("optimized", "200 simulated users"), ("optimized", "500 simulated users"),
                         ("degraded", "200 simulated users"), ("degraded", "500 simulated users")]
    resets = [s for s in run if s.template.endswith("#reset")]
    assert len(resets) == 4 * 3 * len(bed.run_plan.reset_steps)
    first_run = [s for s in run if s.position and s.position.get("repetition") == "1"
                 and s.position["level"] == "200 simulated users" and s.position["scenario"] == "optimized"]
    assert [s.text.rstrip(".") for s in first_run if s.template.endswith("#reset")] == \
        [r.rstrip(".") for r in bed.run_plan.reset_steps]
    proc = [s.text.rstrip(".") for s in first_run if s.template.endswith("#procedure")]
    assert proc == [p.rstrip(".") for p in bed.run_plan.procedure]
    # the procedure already waits 10 minutes, and a reset step restarts the servers: no duplicates
    assert not any(s.template.endswith(("#idle", "#reboot")) for s in run)
    # the degraded state unplugs R710-2 once, before its first run
    unplug = [s for s in run if s.template.endswith("#part-disable")]
    assert len(unplug) == 1 and "host R710-2" in unplug[0].text and unplug[0].position["scenario"] == "degraded"
    scores = [s for s in run if s.template.endswith("#score")]
    assert len(scores) == 4 and all("median run of the 3 runs of users" in s.text for s in scores)
    # the last phase's score ends its runs; then R710-2 is plugged back in: the lab is left as the bed draws it
    end = next(k for k, s in enumerate(run) if s.heading.startswith("After the last phase"))
    assert run[end - 1] is scores[-1] and "500 simulated users, scenario degraded" in scores[-1].text
    assert [s.text for s in run[end:] if s.template.endswith("#part-enable")] == ["Put host R710-2 back into service."]


def test_seed000_summary_lists_the_findings_and_the_incomplete_steps(seed000):
    meth = seed000[1]
    summary = "\n".join(meth.findings_summary)
    assert "NET-004" in summary and "RAID-003" in summary
    # the data VHD sizes are not in the report: marked, and those steps are not runnable
    incomplete = [s for s in meth.steps() if s.unresolved]
    assert incomplete and all(s.unresolved == ["disk.size_gb"] for s in incomplete)
    assert all("«missing: disk.size_gb»" in s.text and not s.runnable for s in incomplete)
    assert "«missing: …»" in meth.incomplete_note and "disk.size_gb" in meth.incomplete_note


@pytest.mark.parametrize("name", ["md3000i-hyperv-cluster", "equallogic-ps6110-hyperv", "ams2500-exchange-esrp"])
def test_the_banner_and_the_finding_count_agree_with_the_validator(name):
    """The counts the Validation panel shows (open errors and warnings, scenarios included) are the
    procedure's; a bed with no error gets no "problems" banner."""
    from topology.validation import validate
    bed = load(example_path(name))
    findings = validate(bed)
    meth = M.generate(bed, findings=findings)
    errors = sum(1 for f in findings if f.severity == "error" and not f.accepted)
    warnings = sum(1 for f in findings if f.severity == "warning" and not f.accepted)
    assert (meth.errors, meth.warnings) == (errors, warnings)
    assert len(meth.findings_summary) == errors + warnings
    md = M.to_markdown(meth)
    assert ("The bed has problems" in md) == (errors > 0)
    if not errors and warnings:
        assert f"Validation: no errors, {warnings} warning(s)." in md


# ============================================================ beds with problems

def _blank_addresses(bed):
    bed = copy.deepcopy(bed)
    r1 = next(s for s in bed.servers if s.id == "R710-1")
    san1 = next(p for a in r1.adapters for p in a.ports if p.name == "SAN1")
    san1.address = ""
    bed.clusters[0].address = ""
    # and a real error: R710-2's second storage NIC takes R710-1's address (NET-007)
    r2 = next(s for s in bed.servers if s.id == "R710-2")
    next(p for a in r2.adapters for p in a.ports if p.name == "SAN2").address = "192.168.131.201/24"
    return bed


def test_bed_missing_addresses_still_generates_with_marked_values(seed000):
    meth = M.generate(_blank_addresses(seed000[0]))
    net = steps_of(meth, "network")
    san1 = next(s for s in net if s.target == "R710-1" and "adapter SAN1" in s.text)
    assert "«missing: port.ip»" in san1.text and "port.ip" in san1.unresolved
    assert not san1.runnable
    assert "static '«missing: port.ip»'" in san1.automation[0].script  # inert, never run
    logons = [s for s in steps_of(meth, "connectivity") if s.template.endswith("#login") and s.target == "R710-1"]
    assert sum("path.initiator_ip" in s.unresolved for s in logons) == 2
    create = next(s for s in steps_of(meth, "cluster") if s.template.endswith("#create"))
    assert "«missing: cluster.ip»" in create.text
    md = M.to_markdown(meth)
    assert md.index("The bed has problems: 1 error(s)") < md.index("## 1.")
    assert meth.findings_summary[0].startswith("ERROR NET-007")
    assert "port.ip" in meth.incomplete_note
    assert md.index("ERROR NET-007") < md.index("## 1.")


def test_bed_without_run_plan_says_so_without_placeholders():
    bed = clean_bed()
    meth = M.generate(bed)
    run = steps_of(meth, "run")
    assert "The bed has no run plan" in run[0].text
    assert not any("«missing" in s.text or "not stated" in s.text for s in run)


def _empty_value(tp, rng):
    origin = typing.get_origin(tp)
    if origin is list:
        return []
    if origin is dict:
        return {}
    if tp is str:
        return ""
    return None


def _blank(obj, rng, p, hints_cache, wild):
    """Blank fields of a dataclass tree at random: empty strings, None, empty lists."""
    if isinstance(obj, list):
        for x in obj:
            _blank(x, rng, p, hints_cache, wild)
        return
    if not dataclasses.is_dataclass(obj):
        return
    cls = type(obj)
    hints = hints_cache.setdefault(cls, typing.get_type_hints(cls))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.name in ("id", "name") and not wild:
            continue
        if rng.random() < p:
            tp = hints[f.name]
            optional = type(None) in typing.get_args(tp)
            container = typing.get_origin(tp) in (list, dict)
            if optional or container or tp is str:
                setattr(obj, f.name, _empty_value(tp, rng))
                continue
            if wild and not dataclasses.is_dataclass(value):  # a required number or flag left empty
                setattr(obj, f.name, None)
                continue
        _blank(value, rng, p, hints_cache, wild)


def _check_complete(meth: M.Methodology) -> None:
    assert meth.sections
    for st in meth.steps():
        assert st.number and st.text
        assert "None" not in st.text.replace("«missing", ""), st.text
        marked = set(re.findall(r"«missing: ([^»]+)»", st.text))
        assert marked <= set(st.unresolved) | {n for n in marked if n.startswith("step ")}
        assert st.manual == (not st.automation)
        for c in st.automation:
            assert c.shell in quoting.SHELLS and c.script.strip()
    assert M.to_markdown(meth)


@pytest.mark.parametrize("seed", range(12))
def test_fuzz_blanked_synthetic_beds_never_crash(seed):
    rng = random.Random(seed)
    bed = synthetic(hosts=4, vms=10, arrays=2, disks=24)
    for s in bed.servers:
        s.platform = rng.choice(["windows", "linux", "", "esxi"])
    bed.run_plan = RunPlan(repetitions=3, score="median", reset_steps=["reset"], reboot=True, idle_minutes=5,
                           counter_hosts=[s.id for s in bed.servers[:2]], sample_interval_s=1, duration_minutes=2)
    _blank(bed, rng, 0.15, {}, wild=seed % 3 == 2)
    _check_complete(M.generate(bed))


@pytest.mark.parametrize("name", ["md3000i-hyperv-cluster", "equallogic-ps6110-hyperv", "ams2500-exchange-esrp"])
def test_fuzz_blanked_examples_never_crash(name):
    rng = random.Random(name)
    bed = load(example_path(name))
    _blank(bed, rng, 0.1, {}, wild=False)
    _check_complete(M.generate(bed))


def test_every_domain_gives_only_the_names_it_declares():
    beds = [load(example_path(n)) for n in ("md3000i-hyperv-cluster", "equallogic-ps6110-hyperv")]
    beds.append(synthetic(hosts=3, vms=6, arrays=1, disks=20))
    for bed in beds:
        ctx = M.BedContext(bed)
        for d in M.DOMAINS.values():
            for item in d.build(ctx):
                extra = {n for n in item.values if n not in d.names
                         and not any(n.startswith(w) for w in M.WILDCARDS)}
                assert not extra, (d.name, extra)


# ============================================================ hostile names stay inert

HOSTILE = {
    "cluster": "cl; rm -rf / #",
    "vm": "vm$(echo pwned > canary_vm)",
    "vswitch": "vs`echo pwned > canary_vs`",
    "volume": "db'; echo pwned > canary_vol; '",
    "domain": "dom\u2019; Stop-Computer; \u2018",
    "port": "san1 && echo pwned > canary_port",
    "dns": "$(reboot)",
}
MARKERS = ("pwned", "rm -rf", "Stop-Computer", "reboot")


def hostile_bed(platform: str, os_text: str = ""):
    bed = clean_bed()
    h = HOSTILE
    for s in bed.servers:
        s.platform = platform
        # Linux templates choose their commands by release: one they have commands for
        s.os = os_text or ("Red Hat Enterprise Linux 7.9" if platform == "linux" else "")
        s.domain = h["domain"]
        s.dns = [h["dns"]]
        s.bios = {"virtualization_technology": True}
        s.model = "Dell PowerEdge R720"
    bed.clusters[0].id = h["cluster"]
    bed.clusters[0].address = "10.0.0.50/24"
    vm = bed.vms[0]
    old_vm = vm.id
    vm.id = h["vm"]
    for w in bed.workloads:
        w.targets = [h["vm"] if t == old_vm else t for t in w.targets]
    for vs in bed.virtual_switches:
        vs.label = h["vswitch"]
    arr = bed.arrays[0]
    arr.model = "Dell PowerVault MD3000i"
    vol = next(v for v in arr.volumes if v.name == "db")
    vol.name = h["volume"]
    for m in arr.mappings:
        if m.volume == "db":
            m.volume = h["volume"]
    c = bed.clusters[0]
    c.shared_volumes = [f"arr:{h['volume']}" if v == "arr:db" else v for v in c.shared_volumes]
    for d in vm.disks:
        if d.volume == "arr:db":
            d.volume = f"arr:{h['volume']}"
    h1 = next(s for s in bed.servers if s.id == "h1")
    port = next(p for a in h1.adapters for p in a.ports if p.name == "san1")
    port.name = h["port"]
    for p in bed.paths:
        if p.initiator == "h1:san1":
            p.initiator = f"h1:{h['port']}"
    for ln in bed.links:
        if ln.a == "h1:san1":
            ln.a = f"h1:{h['port']}"
    w = bed.workloads[0]
    w.parameters = {"filename": "/dev/mapper/x; echo pwned > canary_file", "iodepth": 8}
    w.access = [AccessSpec(share_pct=100, block_kb=8, read_pct=70, random_pct=100)]
    bed.run_plan = RunPlan(repetitions=3, score="median", reboot=True, idle_minutes=1, duration_minutes=1,
                           counter_hosts=["h1", "h2"], sample_interval_s=1)
    return bed


def _commands(meth, shell):
    for st in meth.steps():
        for c in st.automation:
            if c.shell == shell:
                yield st, c.script
                if c.verify:
                    yield st, c.verify


def test_hostile_names_in_bash_commands_run_nothing(tmp_path):
    meth = M.generate(hostile_bed("linux"))
    scripts = [s for _, s in _commands(meth, "bash")]
    assert len(scripts) > 20
    empty = tmp_path / "empty"
    empty.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    # every external command (nmcli, iscsiadm, fio ...) is "not found" with PATH empty: bash then
    # calls this handler, which prints the arguments the command would have received
    handler = 'command_not_found_handle() { printf "%s\\0" "$@" >> args.bin; printf "\\n\\0" >> args.bin; return 0; }\n'
    used = set()
    for script in scripts:
        proc = subprocess.run(["/bin/bash", "-c", handler + script], cwd=work, env={"PATH": str(empty)},
                              capture_output=True, timeout=20)
        assert proc.returncode in (0, 1, 127), proc.stderr
        for key, value in HOSTILE.items():
            if quoting.bash(value) in script:
                used.add(key)
    canaries = sorted(p.name for p in work.iterdir() if p.name.startswith("canary"))
    assert canaries == [], f"a bed value ran as code: {canaries}"
    args = (work / "args.bin").read_bytes().decode().split("\0")
    for key in used:
        assert any(HOSTILE[key] in a for a in args), f"{key} did not arrive as one intact argument"
    assert {"port", "dns"} <= used  # the hostile values really went through the linux templates


def _outside_powershell_strings(script: str) -> tuple[str, list[str]]:
    outside, strings, i = [], [], 0
    while i < len(script):
        if script[i] in PS_QUOTES:
            value, i = parse_verbatim(script, i)
            strings.append(value)
        else:
            outside.append(script[i])
            i += 1
    return "".join(outside), strings


@pytest.mark.parametrize("os_text, expected", [
    ("Windows Server 2012 R2", {"cluster", "vm", "vswitch", "volume", "domain", "port", "dns"}),
    ("Windows Server 2008 R2", {"cluster", "volume", "domain", "port", "dns"}),
])
def test_hostile_names_in_powershell_stay_inside_verbatim_strings(os_text, expected):
    meth = M.generate(hostile_bed("windows", os_text))
    seen = set()
    for _, script in _commands(meth, "powershell"):
        outside, strings = _outside_powershell_strings(script)
        for marker in MARKERS:
            assert marker not in outside, (marker, script)
        for key, value in HOSTILE.items():
            if any(value in s for s in strings):
                seen.add(key)
    assert expected <= seen


def test_hostile_names_in_vendor_cli_stay_inside_strings():
    meth = M.generate(hostile_bed("windows"))
    scripts = [s for _, s in _commands(meth, "vendor-cli")]
    assert scripts
    found = False
    for script in scripts:
        outside, i = [], 0
        while i < len(script):
            if script[i] == '"':
                value, n = parse_c_string(script[i:])
                found |= value == HOSTILE["volume"]
                i += n
            else:
                outside.append(script[i])
                i += 1
        assert not any(m in "".join(outside) for m in MARKERS), script
    assert found


# ============================================================ templates are data

def _write(base: Path, rel: str, text: str) -> Path:
    p = base / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def test_lab_template_overrides_a_builtin_step(tmp_path, seed000):
    _write(tmp_path, "windows/network.yaml", """\
section: network
steps:
  - id: port
    foreach: port
    when: {host.role: '^(?!infrastructure$)', port.needs_ip: 'true'}
    text: LAB STEP {host.id} {port.name} gets {port.ip}/{port.prefix}.
    automation:
      - shell: powershell
        script: Lab-Set -Name {port.name} -Address {port.ip}
""")
    meth = M.generate(seed000[0], extra_dirs=[tmp_path])
    net = steps_of(meth, "network")
    lab = [s for s in net if s.text.startswith("LAB STEP")]
    assert "LAB STEP R710-1 SAN1 gets 192.168.130.201/24." in [s.text for s in lab]
    assert lab[0].automation[0].script == "Lab-Set -Name 'SAN1' -Address '192.168.130.201'"
    # steps the lab file does not redefine keep their built-in definition (for 2008 R2)
    assert not any(s.template.startswith("windows/network.yaml#join-domain") for s in net)
    assert any(s.template == "windows/network-2008.yaml#join-domain" for s in net)


def test_lab_template_adds_steps(tmp_path, seed000):
    _write(tmp_path, "common/lab-extras.yaml", """\
section: run
title: Running the combined test
steps:
  - id: lab-check
    foreach: counter_host
    when: {collector.when: '^stop$'}
    text: Check that {host.id} shows no errors in its event log.
""")
    meth = M.generate(seed000[0], extra_dirs=[tmp_path])
    run = next(s for s in meth.sections if s.key == "run")
    assert run.title == "Running the combined test"
    checks = [s for s in run.steps if "event log" in s.text]
    # after each of the 12 runs (2 states x 2 user levels x 3 runs), on each counter host still in service
    assert [s.target for s in checks[:2]] == ["R710-1", "R710-2"]
    assert len(checks) == 6 * 2 + 6 * 1 and not any(s.target == "R710-2" and s.position["scenario"] == "degraded"
                                                     for s in checks)


BROKEN = {
    "bad yaml": ("section: run\nsteps:\n  - id: x\n    text: [unclosed\n", 4, "not valid YAML"),
    "unknown value": ("section: run\nsteps:\n  - id: x\n    foreach: run\n    text: |\n      first line\n"
                      "      uses {run.no_such_value}\n", 6, "unknown value {run.no_such_value}"),
    "missing text": ("section: run\nsteps:\n  - id: x\n    foreach: run\n", 3, "`text` is missing"),
    "unknown foreach": ("section: run\nsteps:\n  - id: x\n    foreach: nothing\n    text: t\n", 4,
                        "unknown foreach 'nothing'"),
    "unknown section": ("section: coffee\nsteps: []\n", 1, "`section` must be one of"),
    "bad pattern": ("section: run\nsteps:\n  - id: x\n    foreach: run\n    when: {run.score: '('}\n    text: t\n", 5,
                    "not a valid regular expression"),
    "quoted placeholder": ("section: run\nsteps:\n  - id: x\n    foreach: counter_host\n    text: t\n"
                           "    automation:\n      - shell: bash\n        script: echo '{host.id}'\n", 8,
                           "written inside quotes"),
    "lone brace": ("section: run\nsteps:\n  - id: x\n    foreach: run\n    text: a } b\n", 5, "lone"),
    "unknown key": ("section: run\nsteps:\n  - id: x\n    foreach: run\n    text: t\n    colour: red\n", 6,
                    "unknown key 'colour'"),
    "bad step ref": ("section: run\nsteps:\n  - id: x\n    foreach: run\n    text: see {@nowhere}\n", 5,
                     "names no step"),
    "bad shell": ("section: run\nsteps:\n  - id: x\n    foreach: run\n    text: t\n    automation:\n"
                  "      - shell: cmd\n        script: dir\n", 7, "shell must be one of"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_template_is_reported_with_file_and_line(tmp_path, case):
    text, line, message = BROKEN[case]
    path = _write(tmp_path, "common/broken.yaml", text)
    with pytest.raises(M.TemplateError) as err:
        M.generate(clean_bed(), extra_dirs=[tmp_path])
    exc = err.value
    assert isinstance(exc, BedFileError)
    assert exc.filename == str(path)
    assert exc.problems[0].line == line, exc.format()
    assert message in exc.format()
    assert exc.format().startswith(f"{path}:{line}: ")


def test_template_outside_a_platform_directory_is_refused(tmp_path):
    _write(tmp_path, "network.yaml", "section: network\nsteps: []\n")
    with pytest.raises(M.TemplateError, match="platform directory"):
        M.load_templates(extra_dirs=[tmp_path])


def test_builtin_templates_load_and_cover_every_section():
    files = M.load_templates()
    assert {f.section for f in files} == set(M.SECTION_KEYS)
    assert {f.platform for f in files} >= {"common", "windows", "linux", "array"}
    assert "port:" in M.domain_reference() and "path.initiator_ip" in M.domain_reference()


# ============================================================ the command

def test_methodology_command_prints_markdown(capsys):
    assert cli_main(["methodology", str(SEED000)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Test methodology")
    assert "192.168.131.211" in out and "```powershell" in out


def test_methodology_command_writes_a_file(tmp_path, capsys):
    out = tmp_path / "m.md"
    assert cli_main(["methodology", str(SEED000), "-o", str(out)]) == 0
    assert "MD3000-Cluster" in out.read_text(encoding="utf-8")
    assert "wrote" in capsys.readouterr().out


def test_methodology_command_unreadable_bed(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("format_version: 1\nbed: {name: x}\nservers:\n  - {id: a, role: wizard}\n")
    assert cli_main(["methodology", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:4" in err and "wizard" in err


def test_methodology_command_broken_template(tmp_path, capsys):
    _write(tmp_path, "common/x.yaml", "section: run\nsteps:\n  - id: x\n    foreach: run\n    text: '{nope.x}'\n")
    assert cli_main(["methodology", str(SEED000), "--templates", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "common/x.yaml:5" in err and "{nope.x}" in err


def test_methodology_command_pdf_needs_an_output(capsys):
    assert cli_main(["methodology", str(SEED000), "--format", "pdf"]) == 2
    assert "-o" in capsys.readouterr().err


def test_methodology_command_html(tmp_path):
    out = tmp_path / "m.html"
    assert cli_main(["methodology", str(SEED000), "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "192.168.130.101" in html and "MD3000-Cluster" in html


@pytest.mark.skipif(not shutil.which("pdftotext"), reason="poppler-utils not installed")
def test_methodology_command_pdf(tmp_path):
    out = tmp_path / "m.pdf"
    proc = subprocess.run([__import__("sys").executable, "-m", "app.cli", "methodology", str(SEED000), "-o", str(out)],
                          cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert proc.returncode == 0, proc.stderr
    text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True).stdout
    assert "192.168.131.102" in text and "MD3000-Cluster" in text


def test_methodology_command_prints_the_procedure_as_json(capsys):
    import json
    assert cli_main(["methodology", str(SEED000), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == "testbed-studio methodology" and data["bed"]
    assert data["validation"]["errors"] == 0 and data["validation"]["warnings"] == len(data["validation"]["findings"])
    steps = {st["number"]: st for sec in data["sections"] for st in sec["steps"]}
    assert data["steps"] == len(steps) and [s["key"] for s in data["sections"]][0] == "infrastructure"
    address = next(st for st in steps.values() if st["template"].endswith("#address"))
    assert address["target"] == "DC" and address["platform"] == "Windows Server 2008 R2"
    assert address["machine"]["family"] == "windows" and address["machine"]["version"] == "2008 R2"
    command = address["commands"][0]
    assert command["shell"] == "powershell" and "netsh interface ipv4 set address" in command["script"]
    assert command["verify"] and command["target"] == "DC"
    assert {"name": "port.ip", "value": "192.168.1.250", "source": "DC:NIC1.address"} in address["values"]
    login = next(st for st in steps.values() if st["template"].endswith("#login"))
    assert login["manual"] and not login["commands"] and login["machine"]["transports"] == ["iscsi"]
    bios = next(st for st in steps.values() if st["template"].endswith("#bios"))
    assert bios["table"]["header"] == ["Setting", "Value"] and bios["table"]["rows"]
    assert bios["manual_reason"].startswith("no command for Dell PowerEdge R710")
