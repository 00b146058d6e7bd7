"""Choosing templates by platform family, version and transport: how a host's OS words are read,
version ranges, `platform:` / `transport:` in templates, vendor families as data, derived paths in
the connectivity section, and the manual step that says why no template fits."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.beds import clean_bed
from topology import methodology as M
from topology.errors import BedFileError
from topology.methodology.selection import automated_for, host_platform, host_platforms
from topology.model import Adapter, Port
from topology.os_release import VersionRangeError, parse_os, parse_range
from topology.synthetic import generate as synthetic


@pytest.mark.parametrize("text, family, distro, version, describe", [
    ("Windows Server 2008 R2 Enterprise SP1", "windows", "windows-server", (2008, 2), "Windows Server 2008 R2"),
    ("Microsoft Hyper-V Server 2012 R2", "windows", "hyper-v-server", (2012, 2), "Hyper-V Server 2012 R2"),
    ("Windows Server 2012 Datacenter Edition (build 9200)", "windows", "windows-server", (2012, 0),
     "Windows Server 2012"),
    ("Windows Server 2008 SP2", "windows", "windows-server", (2008, 0), "Windows Server 2008"),
    ("Win2k8 R2", "windows", "windows-server", (2008, 2), "Windows Server 2008 R2"),
    ("Windows 7", "windows", "windows-client", (2008, 2), "Windows 7"),
    ("RHEL 6.4", "linux", "rhel", (6, 4), "RHEL 6.4"),
    ("Red Hat Enterprise Linux 7.9", "linux", "rhel", (7, 9), "RHEL 7.9"),
    ("Red Hat Enterprise Linux Server release 6.5 (Santiago)", "linux", "rhel", (6, 5), "RHEL 6.5"),
    ("CentOS 6", "linux", "centos", (6,), "CentOS 6"),
    ("Ubuntu 22.04", "linux", "ubuntu", (22, 4), "Ubuntu 22.04"),
    ("Debian GNU/Linux 11 (bullseye)", "linux", "debian", (11,), "Debian 11"),
    ("VMware ESXi 6.7 U3", "esxi", "esxi", (6, 7), "ESXi 6.7 U3"),
    ("ESXi 5.5.0 build-1331820", "esxi", "esxi", (5, 5), "ESXi 5.5"),
    ("Solaris 10", "", "", (), "Solaris 10"),
    ("", "", "", (), "an operating system the bed does not name"),
])
def test_an_os_string_is_read_as_family_distribution_and_version(text, family, distro, version, describe):
    rel = parse_os(text)
    assert (rel.family, rel.distro, rel.version, rel.describe()) == (family, distro, version, describe)


def test_hypervisor_words_and_the_declared_platform_settle_what_the_os_words_leave_open():
    assert parse_os("RHEL 7.9", "KVM").hypervisor == "kvm"
    assert parse_os("RHEL 6.4", "RHEV-M 3.2").hypervisor == "rhev"
    assert parse_os("CentOS 7", "").lineage == "rhel"
    assert parse_os("", "Hyper-V").family == "windows"
    declared = parse_os("", "", "windows")
    assert (declared.family, declared.version) == ("windows", ())
    # a declared platform the words contradict: the platform wins and no version is guessed
    assert parse_os("Ubuntu 22.04", "", "windows").version == ()


@pytest.mark.parametrize("spec, inside, outside", [
    (">=2012", [(2012, 0), (2012, 2), (2016, 0)], [(2008, 2), (2008, 0)]),
    ("<2012", [(2008, 0), (2008, 2)], [(2012, 0)]),
    ("2008-2008 R2", [(2008, 0), (2008, 2)], [(2003, 2), (2012, 0)]),
    ("<=2012", [(2012, 0)], [(2012, 2)]),
    ("5.x-8.x", [(5, 0), (6, 7), (8, 0)], [(4, 1), (9, 0)]),
    (">=7", [(7,), (7, 9), (8, 1)], [(6, 9)]),
    ("6", [(6,), (6, 4)], [(7, 0), (5, 11)]),
    (">=6, <7", [(6, 4)], [(7, 0)]),
])
def test_version_ranges(spec, inside, outside):
    r = parse_range(spec)
    assert all(r.contains(v) for v in inside), spec
    assert not any(r.contains(v) for v in outside), spec
    assert not r.contains(()), "a version the bed does not state is in no range"


@pytest.mark.parametrize("spec", ["2012 R3", ">=x", "8-6", "6.x.1", "R2"])
def test_a_bad_version_range_says_what_is_wrong(spec):
    with pytest.raises(VersionRangeError):
        parse_range(spec)


# ---------------------------------------------------------------------------------------- templates

def _lab(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def _bed_with(os_text: str, transport: str = "iscsi"):
    bed = clean_bed()
    for s in bed.servers:
        s.os, s.platform = os_text, ""
        if transport == "fc":
            for a in s.adapters:
                for p in a.ports:
                    if "iscsi" in p.roles:
                        p.roles = ["fc"]
                        p.kind = "fc"
    return bed


_VERSIONED = {"windows/network.yaml": """
    section: network
    platform: {versions: '>=2012'}
    steps:
      - id: port
        foreach: port
        when: {port.needs_ip: 'true'}
        text: On {host.id}, configure {port.name} with {port.ip}.
        automation:
          - shell: powershell
            script: New-NetIPAddress -InterfaceAlias {port.name} -IPAddress {port.ip}
    """}


def _steps(meth: M.Methodology, template: str) -> list[M.Step]:
    return [s for s in meth.steps() if s.template.endswith(template)]


def test_a_versioned_template_is_used_only_inside_its_range_and_the_others_say_why(tmp_path):
    lab = _lab(tmp_path / "lab", _VERSIONED)
    new = _steps(M.generate(_bed_with("Windows Server 2012 R2"), templates_dir=lab), "#port")
    assert new and all("New-NetIPAddress" in s.automation[0].script for s in new)
    common = _lab(tmp_path / "common", {"common/network.yaml": """
        section: network
        steps:
          - id: port
            foreach: port
            when: {port.needs_ip: 'true'}
            text: On {host.id}, set {port.ip} on {port.name}.
        """})
    old = M.generate(_bed_with("Windows Server 2008 R2 Enterprise SP1"), templates_dir=common, extra_dirs=[lab])
    ports = _steps(old, "#port")
    assert ports and all(s.manual and not s.automation for s in ports)
    assert {s.manual_reason for s in ports} == {"no template for Windows Server 2008 R2: done by hand"}
    assert all(s.platform == "Windows Server 2008 R2" for s in ports)
    assert "New-NetIPAddress" not in M.to_markdown(old)
    assert "Manual step: no template for Windows Server 2008 R2: done by hand." in M.to_markdown(old)
    unknown = M.generate(_bed_with("Windows Server"), templates_dir=common, extra_dirs=[lab])
    assert {s.manual_reason for s in _steps(unknown, "#port")} == {
        "no template for Windows Server (version not stated): done by hand"}


def test_a_transport_condition_keeps_iscsi_commands_off_fc_hosts(tmp_path):
    lab = _lab(tmp_path, {
        "common/hosts.yaml": """
            section: hosts
            steps:
              - id: claim
                foreach: server
                text: On {server.id}, let the multipath software claim the storage devices.
            """,
        "windows/hosts.yaml": """
            section: hosts
            transport: iscsi
            steps:
              - id: claim
                foreach: server
                text: On {server.id}, claim the iSCSI devices.
                automation:
                  - shell: powershell
                    script: Enable-MSDSMAutomaticClaim -BusType iSCSI
            """})
    hosts = {"h1", "h2"}
    iscsi = M.generate(_bed_with("Windows Server 2012"), templates_dir=lab)
    claims = [s for s in _steps(iscsi, "#claim") if s.target in hosts]
    assert len(claims) == 2 and all(s.automation for s in claims)
    fc = M.generate(_bed_with("Windows Server 2012", transport="fc"), templates_dir=lab)
    claims = [s for s in _steps(fc, "#claim") if s.target in hosts]
    assert len(claims) == 2 and not any(s.automation for s in claims)
    assert {s.manual_reason for s in claims} == {"no template for Windows Server 2012 over FC: done by hand"}
    assert "Enable-MSDSMAutomaticClaim" not in M.to_markdown(fc)


def test_a_command_level_range_keeps_the_steps_text_and_picks_the_command(tmp_path):
    lab = _lab(tmp_path, {"windows/hosts.yaml": """
        section: hosts
        steps:
          - id: hello
            foreach: server
            text: On {server.id}, say hello.
            automation:
              - shell: powershell
                platform: {versions: '>=2012'}
                script: Write-Output new
              - shell: powershell
                platform: {versions: '2008-2008 R2'}
                script: Write-Output old
        """})
    for os_text, word in (("Windows Server 2016", "new"), ("Windows Server 2008 R2", "old")):
        steps = _steps(M.generate(_bed_with(os_text), templates_dir=lab), "#hello")
        assert steps and {s.automation[0].script for s in steps} == {f"Write-Output {word}"}
    steps = _steps(M.generate(_bed_with("Windows Server 2003 R2"), templates_dir=lab), "#hello")
    assert {s.manual_reason for s in steps} == {"no command for Windows Server 2003 R2: done by hand"}


@pytest.mark.parametrize("body, message", [
    ("platform: {family: linux}\n", "a template in windows/ is for windows machines"),
    ("platform: {versions: '2012 R3'}\n", "versions:"),
    ("platform: {edition: core}\n", "unknown platform key 'edition'"),
    ("transport: nvme\n", "transport 'nvme' is not one of iscsi, fc, sas"),
    ("platform: windows\n", "`platform` must be a mapping"),
])
def test_a_broken_platform_condition_names_the_file_and_line(tmp_path, body, message):
    lab = _lab(tmp_path, {"windows/hosts.yaml": "section: hosts\n" + body + textwrap.dedent("""
        steps:
          - id: x
            foreach: server
            text: On {server.id}, do it.
        """)})
    with pytest.raises(BedFileError) as err:
        M.generate(clean_bed(), extra_dirs=[lab])
    text = err.value.format()
    assert "windows/hosts.yaml:2" in text and message in text


def test_vendor_families_are_data_and_a_lab_adds_its_own(tmp_path):
    bed = _bed_with("Windows Server 2012 R2")
    bed.servers[0].multipath = "IBM RDAC multipath driver"
    bed.servers[1].multipath = "Veritas DMP 6.0"
    lab = _lab(tmp_path, {
        "families.yaml": """
            multipath:
              - {family: vxdmp, pattern: 'veritas|\\bdmp\\b', name: Veritas DMP}
            """,
        "windows/hosts.yaml": """
            section: hosts
            steps:
              - id: which
                foreach: server
                text: "{server.id} uses {host.multipath_family} ({host.multipath_name})."
            """})
    texts = {s.target: s.text for s in _steps(M.generate(bed, extra_dirs=[lab]), "#which")}
    assert texts[bed.servers[0].id] == f"{bed.servers[0].id} uses rdac (IBM/LSI RDAC (MPP) driver)."
    assert texts[bed.servers[1].id] == f"{bed.servers[1].id} uses vxdmp (Veritas DMP)."


def test_a_drawn_bed_gets_one_logon_per_derived_path():
    bed = synthetic(hosts=4, vms=4, arrays=1, disks=24, pins=False)
    for s in bed.servers:
        s.os = "Windows Server 2016"
    assert not bed.paths
    from topology.derived_paths import PathDerivation
    from topology.index import BedIndex
    derived = PathDerivation(BedIndex(bed)).paths
    assert derived
    meth = M.generate(bed)
    logons = _steps(meth, "#login")
    assert len(logons) == len(derived)
    for sp in derived:
        assert any(s.target == sp.host and sp.spec.initiator.split(":")[1] in s.text for s in logons)
    portals = _steps(meth, "#portal")
    assert portals, "discovery portals come from the derived paths too"


def test_host_platform_and_automated_for_answer_other_tools():
    bed = _bed_with("Windows Server 2008 R2 Enterprise SP1", transport="fc")
    host = bed.servers[0].id
    profile = host_platform(bed, host)
    assert (profile.family, profile.release.version, profile.transports) == ("windows", (2008, 2), ("fc",))
    assert profile.describe() == "Windows Server 2008 R2 over FC"
    everyone = host_platforms(bed)
    assert everyone[host] == profile and set(everyone) == {c.id for c in [*bed.servers, *bed.vms]}
    meth = M.generate(bed)
    answers = automated_for(meth, host)
    assert answers and set(answers) <= {s.number for s in meth.steps()}
    assert all(isinstance(v, bool) for v in answers.values())


def test_a_host_with_no_path_has_the_transport_of_its_san_ports():
    bed = clean_bed()
    s = bed.servers[0]
    s.os = "Windows Server 2012"
    s.adapters.append(Adapter(name="HBA9", kind="fc", ports=[Port(name="fc9", kind="fc", roles=["fc"])]))
    bed.paths = []
    bed.arrays[0].mappings = []
    assert "fc" in host_platform(bed, s.id).transports


@pytest.mark.parametrize("os_text", ["Windows Server 2008 R2 Enterprise", "Windows Server 2012 R2"])
def test_a_vendor_multipath_driver_is_never_microsofts_mpio_feature(os_text):
    from dataclasses import replace

    from topology.synthetic_platforms import PLATFORM_CASES, platform_bed
    case = replace(next(c for c in PLATFORM_CASES if c.id == "ws2008r2-rdac"), os=os_text)
    meth = M.generate(platform_bed(case, "fc"))
    node = [s for s in meth.steps() if s.target == "node1"]
    install = next(s for s in node if "IBM RDAC multipath driver" in s.text and s.template.endswith("#software"))
    assert not install.automation
    multipath = next(s for s in node if s.template.endswith("#multipath"))
    assert "IBM RDAC multipath driver from IBM's package (not the Microsoft Multipath I/O feature)" in multipath.text
    assert not multipath.automation and "rdac" in multipath.manual_reason
    scripts = "\n".join(c.script for s in node for c in s.automation)
    assert "Multipath-IO" not in scripts and "MSDSM" not in scripts and "MSFT2005" not in scripts
    # the FC host gets no iSCSI step at all
    assert not [s for s in node if "iSCSI" in s.text or "iscsi" in s.template]


@pytest.mark.parametrize("pattern, message", [
    ("'(?i)dell'", "has (? (an inline flag"),
    ("'^\\dELL'", "has a backslash before a letter or digit"),
    ("'^[[:alpha:]]+$'", "has a POSIX class"),
    ("'^DELL('", "is not a regular expression"),
    # grep -E reads {,1} as "up to one", .NET as the characters "{,1}": ^DEL{,1}L never matched DELL there
    ("'^DEL{,1}L'", "has {,n}"),
    # grep -E reads [E\]] as "E or \" then "]", .NET as "E or ]"
    ("'^D[E\\]]LL'", "has a backslash inside [ ]"),
])
def test_a_labs_scsi_pattern_that_grep_and_powershell_read_differently_is_refused_at_load(tmp_path, pattern, message):
    """A disk guard matches the SCSI vendor with grep -E on Linux and ESXi and with -match in
    PowerShell: a pattern one of them reads otherwise, or cannot read (PowerShell then skips the
    vendor check), is refused where it is written, with its file and line."""
    lab = _lab(tmp_path, {"families.yaml": f"""
        array:
          - {{family: md3, pattern: 'MD3[0-9]', name: Dell MD3,
             scsi_vendor: {pattern}, scsi_product: '^MD3'}}
        """})
    with pytest.raises(BedFileError) as err:
        M.generate(clean_bed(), extra_dirs=[lab])
    text = err.value.format()
    assert "families.yaml:3" in text and "scsi_vendor" in text and message in text, text


def test_every_built_in_scsi_pattern_reads_alike_to_grep_and_powershell():
    from topology.methodology.selection import unportable
    from topology.methodology.template_files import load_families
    families = load_families()
    patterns = [(f.id, p) for entries in families.entries.values() for f in entries
                for p in (f.scsi_vendor, f.scsi_product) if p]
    assert len(patterns) >= 8
    assert not [(fid, p) for fid, p in patterns if unportable(p)]


@pytest.mark.parametrize("pattern", [r"^DELL\.", r"^DELL[.]", r"^DE{1}L{2}$", r"^IBM  *$", r"^[]A-Z]+$", r"^MD3{0,1}"])
def test_a_scsi_pattern_grep_and_powershell_read_alike_is_kept(pattern):
    from topology.methodology.selection import unportable
    assert unportable(pattern) == ""
