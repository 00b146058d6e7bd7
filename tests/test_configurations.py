"""Configurations: one bed holds several software configurations of the same hardware.

The bed in tests/data/configurations draws one server, switch and array once; configuration
`esxi` gives the server another OS, hypervisor, platform, settings and access, changes two
ports' MTU and a VM's vCPUs and vNIC mode, and takes a standby array port out of use."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from topology.configurations import configured, procedures
from topology.errors import BedFileError
from topology.fileformat import dumps, load, loads
from topology.validation import validate

ROOT = Path(__file__).resolve().parent.parent
BED = ROOT / "tests" / "data" / "configurations" / "one-server-two-hypervisors.yaml"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd or ROOT)


@pytest.fixture(scope="module")
def bed():
    return load(BED)


def test_a_configuration_view_changes_only_what_it_names_and_leaves_the_bed_alone(bed):
    before = dumps(bed)
    esxi = configured(bed, "esxi")
    server = esxi.servers[0]
    assert (server.os, server.hypervisor, server.platform) == ("VMware ESXi 5.5 Update 2", "ESXi", "esxi")
    # mappings are merged key by key: the BIOS keeps virtualization on and gains SR-IOV
    assert server.bios == {"virtualization_technology": True, "sriov": True}
    assert server.settings == {"power_plan": "high performance"}
    ports = {p.name: p for a in server.adapters for p in a.ports}
    assert ports["SAN1"].mtu == ports["SAN2"].mtu == 1500 and ports["LAN1"] is bed.servers[0].adapters[1].ports[0]
    sql1, sql2 = esxi.vms
    assert sql1.vcpu == 8 and sql1.nics[0].synthetic is False and sql1.nics[0].offloads == {"sriov": True}
    assert sql2 is bed.vms[1] and esxi.switches[0] is bed.switches[0]      # untouched: the bed's own objects
    array_ports = [p.name for c in esxi.arrays[0].controllers for p in c.ports]
    assert "eth0b" not in array_ports and [lk for lk in esxi.links if "eth0b" in lk.b] == []
    assert [(a.host, a.transport, a.user) for a in esxi.access] == [("R720", "ssh", "root")]
    assert esxi.configurations == []
    # the bed as drawn is the other configuration, unchanged by building the view
    assert dumps(bed) == before
    hyperv = configured(bed, "hyperv")
    assert hyperv.servers[0] is bed.servers[0] and hyperv.access == bed.access


def test_a_configuration_survives_saving_and_loading(bed):
    again = loads(dumps(bed))
    assert again.configurations == bed.configurations
    assert dumps(configured(again, "esxi")) == dumps(configured(bed, "esxi"))


def _problems(text: str) -> list:
    with pytest.raises(BedFileError) as caught:
        loads(text, "study.yaml")
    return caught.value.problems


def _with(extra: str) -> str:
    return BED.read_text(encoding="utf-8") + extra


def test_an_override_naming_a_missing_component_or_field_is_refused_on_its_line():
    text = _with("""  - id: broken
    set:
      R7200: {os: Linux}
      R720: {hypervisr: KVM, memory_gb: lots, id: R721}
      R720:SAN9: {mtu: 1500}
      PS6110:group:DATA: {raid: raid7}
      SQL2: {host: R999, disks: [{name: data, size_gb: lots}]}
""")
    lines = text.splitlines()
    problems = _problems(text)
    by_where = {p.where: p for p in problems}
    missing = by_where["configurations[2].set.R7200"]
    assert "'R7200'" in missing.message and "names no component" in missing.message
    assert missing.hint == "did you mean 'R720'?" and "R7200" in lines[missing.line - 1]
    field = by_where["configurations[2].set.R720.hypervisr"]
    assert field.message == "a server has no field 'hypervisr'" and field.hint == "did you mean 'hypervisor'?"
    assert "hypervisr" in lines[field.line - 1]
    assert "expected a number" in by_where["configurations[2].set.R720.memory_gb"].message
    assert "cannot change the id" in by_where["configurations[2].set.R720.id"].message
    assert "names no component" in by_where["configurations[2].set.R720:SAN9"].message
    assert "'raid7' is not one of" in by_where["configurations[2].set.PS6110:group:DATA.raid"].message
    assert "'R999' does not name a server" in by_where["configurations[2].set.SQL2.host"].message
    assert "expected a number" in by_where["configurations[2].set.SQL2.disks[0].size_gb"].message
    for p in problems:
        assert p.line and p.column, p


def test_scenarios_results_and_matrix_levels_must_name_a_configuration_that_exists():
    text = _with("""scenarios:
  - {id: optimized, configuration: esxii}
results:
  - {workload: DS2-SQL1, metric: opm, value: 1000, configuration: vmware}
test_matrix:
  - {id: hypervisor, variable: configuration, levels: [hyperv, kvm]}
""")
    by_where = {p.where: p for p in _problems(text)}
    assert by_where["scenarios[0].configuration"].hint == "did you mean 'esxi'?"
    assert "'vmware' is not a configuration" in by_where["results[0].configuration"].message
    assert "'kvm' is not a configuration" in by_where["test_matrix[0].levels[1]"].message


def test_the_bed_is_judged_in_each_configuration_and_each_finding_names_its_own(bed):
    findings = validate(bed)
    mtu = [f for f in findings if f.code == "NET-005"]
    assert mtu and {f.configuration for f in mtu} == {"esxi"}           # only ESXi runs SAN ports at 1500
    shared = [f for f in findings if f.code == "NET-009"]
    assert len(shared) == 1 and shared[0].configuration is None         # the same in both: said once
    alone = validate(bed, configuration="hyperv")
    assert not [f for f in alone if f.code == "NET-005"] and {f.configuration for f in alone} == {"hyperv"}
    with pytest.raises(KeyError, match="configurations: hyperv, esxi"):
        validate(bed, configuration="kvm")


def test_a_scenario_runs_in_the_configuration_it_names(bed):
    text = _with("""scenarios:
  - {id: esxi-host-down, configuration: esxi, failed: ["R720:SAN1"]}
  - {id: link-down, excluded: ["R720:SAN2"]}
""")
    study = loads(text)
    found = validate(study)
    down = [f for f in found if f.scenario == "esxi-host-down"]
    assert down and {f.configuration for f in down} == {"esxi"}
    both = [f for f in found if f.scenario == "link-down"]
    # judged in each: what both configurations find is said once, the rest names its configuration
    assert None in {f.configuration for f in both} and {f.configuration for f in both} <= {None, "hyperv", "esxi"}
    assert [s.id for s in configured(study, "hyperv").scenarios] == ["link-down"]
    assert {f.configuration for f in validate(study, scenario="esxi-host-down")} == {"esxi"}


def test_the_cli_validates_per_configuration_and_names_it():
    out = cli("validate", str(BED))
    assert out.returncode == 1, out.stderr            # NET-005 is an error in esxi
    assert "holds in: configuration esxi" in out.stdout
    data = json.loads(cli("validate", str(BED), "--format", "json", "--configuration", "hyperv").stdout)
    assert data and {f["configuration"] for f in data} == {"hyperv"}
    bad = cli("validate", str(BED), "--configuration", "kvm")
    assert bad.returncode == 2 and "its configurations: hyperv, esxi" in bad.stderr


def test_a_procedure_per_configuration_each_with_its_own_values(bed):
    made = dict(procedures(bed))
    assert list(made) == ["hyperv", "esxi"]
    hyperv_text = "\n".join(s.text for s in made["hyperv"].steps())
    esxi_text = "\n".join(s.text for s in made["esxi"].steps())
    assert "Windows Server 2012 R2 Datacenter" in hyperv_text and "ESXi 5.5 Update 2" not in hyperv_text
    assert "VMware ESXi 5.5 Update 2" in esxi_text
    assert made["esxi"].bed_name.endswith("configuration esxi")
    esxi_mtus = {s.text for s in made["esxi"].steps() if "SAN1" in s.text and "MTU" in s.text.upper()
                 and not s.template.endswith("#configuration")}
    assert esxi_mtus and all("9000" not in t for t in esxi_mtus)
    # the run section opens with the configuration and what changed from the one before (the old MTU too)
    opening = next(s for s in made["esxi"].steps() if s.template.endswith("#configuration"))
    assert opening.text.startswith("The runs below are of configuration esxi (2 of 2)")
    assert "R720:SAN1 mtu: 9000 -> 1500" in opening.text


@pytest.mark.slow
def test_the_methodology_command_prints_one_procedure_per_configuration_or_the_one_asked(tmp_path):
    both = cli("methodology", str(BED))
    assert both.returncode == 0, both.stderr
    titles = [line for line in both.stdout.splitlines() if line.startswith("# Test methodology")]
    assert titles == ["# Test methodology: R720 hypervisor comparison - configuration hyperv",
                      "# Test methodology: R720 hypervisor comparison - configuration esxi"]
    one = cli("methodology", str(BED), "--configuration", "esxi")
    assert [line for line in one.stdout.splitlines() if line.startswith("# Test")] == [titles[1]]
    pdf = cli("methodology", str(BED), "-o", str(tmp_path / "m.pdf"))
    assert pdf.returncode == 0 and "in 2 procedures (hyperv, esxi)" in pdf.stdout
    text = subprocess.run(["pdftotext", str(tmp_path / "m.pdf"), "-"], capture_output=True, text=True).stdout
    text = text.replace("\ufb01", "fi")                 # the "fi" ligature
    assert "configuration hyperv" in text and "configuration esxi" in text
    assert cli("methodology", str(BED), "--configuration", "kvm").returncode == 2


def test_a_run_names_its_configuration_and_reaches_hosts_as_that_configuration_says(tmp_path):
    from app.run import journal as J
    from app.run.session import RunSession
    with pytest.raises(ValueError, match="name the one the run uses"):
        RunSession.from_file(BED, runs_dir=tmp_path)
    session = RunSession.from_file(BED, runs_dir=tmp_path, configuration="esxi")
    assert "ssh" in session.describe("R720").lower()
    assert session.start_new("1")
    info = session.info
    session.close()
    assert J.open_run(info.id, tmp_path).configuration == "esxi"
    other = RunSession.from_file(BED, runs_dir=tmp_path, configuration="hyperv")
    assert "winrm" in other.describe("R720").lower()
    assert not other.resume(info.id)        # a run is resumed in the configuration it ran in
    dry = cli("run", str(BED), "--dry-run", "--configuration", "esxi", "--runs-dir", str(tmp_path))
    assert dry.returncode == 0 and "ESXi 5.5" in dry.stdout
    refused = cli("run", str(BED), "--dry-run", "--runs-dir", str(tmp_path))
    assert refused.returncode == 2 and "hyperv, esxi" in refused.stderr


def test_renaming_or_deleting_a_component_carries_its_configuration_settings(bed):
    from topology.operations import delete
    from topology.rename_ops import rename
    study = loads(dumps(bed))
    edit = rename(study, "SQL1", "SQL-A")
    edit.apply()
    assert "SQL-A" in study.configurations[1].overrides and "SQL-A:net0" in study.configurations[1].overrides
    assert configured(loads(dumps(study)), "esxi").vms[0].vcpu == 8
    edit.revert()
    assert "SQL1" in study.configurations[1].overrides
    gone = delete(study, ["SQL1"])
    gone.apply()
    assert not any(k.startswith("SQL1") for k in study.configurations[1].overrides)
    assert loads(dumps(study)).configurations[1].overrides["R720"]["hypervisor"] == "ESXi"
    gone.revert()
    assert "SQL1" in study.configurations[1].overrides


def test_the_appendix_prints_what_differs_between_configurations_and_a_procedure_for_each(tmp_path):
    pdf = tmp_path / "a.pdf"
    r = cli("appendix", str(BED), "-o", str(pdf))
    assert r.returncode == 0, r.stderr
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout
    text = text.replace("\ufb01", "fi").replace("\ufb00", "ff").replace("\ufb04", "ffl")
    table = text[text.index("Configurations compared"):]
    table = table[:table.index("Testbed Studio")]
    rows = {" ".join(line.split()[:2]): line.split() for line in table.splitlines() if line.strip()}
    assert "Windows Server 2012 R2 Datacenter" in table and "VMware ESXi 5.5 Update 2" in table
    assert rows["R720:SAN1 MTU"][-2:] == ["9,000", "1,500"]
    assert rows["PS6110:eth0b In"][-2:] == ["Yes", "No"]
    assert "winrm Administrator@192.168.1.20" in table and "ssh root@192.168.1.20" in table
    assert "Procedure in configuration hyperv" in text and "Procedure in configuration esxi" in text


def test_a_configuration_may_leave_a_value_not_stated_where_the_field_takes_it():
    from topology.configurations import differences
    from topology.unknown import NOT_STATED
    study = loads(_with("""  - id: undocumented
    set:
      R720: {memory_gb: not stated, bios: {sriov: not stated}}
"""))
    view = configured(study, "undocumented")
    assert view.servers[0].memory_gb is NOT_STATED and view.servers[0].bios["sriov"] is NOT_STATED
    assert [d.values for d in differences(study) if d.setting == "memory_gb"] == [[128, 128, NOT_STATED]]
    found = [f for f in validate(study, configuration="undocumented") if f.code == "CAP-001"]
    assert found and "memory not stated" in found[0].message and found[0].severity == "info"
    assert "memory_gb: not stated" in dumps(study)
    refused = _problems(_with("""  - id: broken
    set:
      R720: {id: not stated, settings: not stated}
"""))
    assert {p.where for p in refused} == {"configurations[2].set.R720.id", "configurations[2].set.R720.settings"}


def test_a_configuration_gives_a_list_of_parts_in_full_and_the_view_has_exactly_that_list(bed):
    """Hyper-V data VHDs exist in one configuration only; the array maps the guests' LUNs to the guests in the
    other: a configuration replaces a VM's disks, an array's hosts and mappings, and leaves out a workload."""
    study = loads(_with("""  - id: guests
    set:
      SQL1:
        disks:
          - {name: os, size_gb: 60, type: fixed, volume: "PS6110:VMS"}
        storage_access: guest_iscsi
      PS6110:
        hosts:
          - {name: R720, server: R720}
          - {name: SQL1, server: SQL1}
        mappings:
          - {volume: VMS, to: R720, lun: 4}
          - {volume: SQL1-DB, to: SQL1, lun: 0}
    excluded: [DS2-SQL2]
"""))
    view = configured(study, "guests")
    assert [d.name for d in view.vms[0].disks] == ["os"] and view.vms[0].storage_access == "guest_iscsi"
    assert [(m.volume, m.to) for m in view.arrays[0].mappings] == [("VMS", "R720"), ("SQL1-DB", "SQL1")]
    assert [w.id for w in view.workloads] == ["DS2-SQL1"]
    # the bed as drawn keeps its lists, and the other configurations see them
    assert [d.name for d in study.vms[0].disks] == ["os", "data", "log"]
    assert len(configured(study, "esxi").arrays[0].mappings) == 4
    from topology.configurations import differences
    rows = {(d.subject, d.setting): d.values for d in differences(study)}
    assert rows[("SQL1", "disks")][-1] == "os" and rows[("SQL1", "disks")][0] == "os, data, log"
    assert rows[("PS6110", "mappings")][-1] == "VMS to R720 (LUN 4), SQL1-DB to SQL1 (LUN 0)"
    assert rows[("DS2-SQL2", "in use")] == [True, True, False]


def test_a_replaced_list_is_checked_on_its_lines_in_the_configuration_it_belongs_to():
    text = _with("""  - id: broken
    set:
      SQL1:
        disks:
          - {name: os, size_gb: 60, volume: "PS6110:VMZ"}
          - {name: os, size_gb: 10}
      PS6110:
        mappings:
          - {volume: SQL9-DB, to: R720}
""")
    lines = text.splitlines()
    by_where = {p.where: p for p in _problems(text)}
    dup = by_where["configurations[2].set.SQL1.disks[1].name"]
    assert "a second part called 'os'" in dup.message
    # references are checked once the entries build: a fixed bed shows the reference problems
    text = text.replace("          - {name: os, size_gb: 10}\n", "")
    by_where = {p.where: p for p in _problems(text)}
    vol = by_where["configurations[2].set.SQL1.disks[0].volume"]
    assert "'PS6110:VMZ' does not name a volume" in vol.message and "configuration 'broken'" in vol.message
    assert "PS6110:VMZ" in text.splitlines()[vol.line - 1]
    mapping = by_where["configurations[2].set.PS6110.mappings[0].volume"]
    assert "'SQL9-DB' does not name a volume in this array" in mapping.message
    assert lines and mapping.line and mapping.column


def test_a_part_changed_inside_a_list_the_same_configuration_replaces_is_refused():
    text = _with("""  - id: both
    set:
      SQL1:
        nics:
          - {name: net0, vswitch: R720/VMs, network: LAN}
      SQL1:net0: {mtu: 9000}
""")
    (problem,) = _problems(text)
    assert problem.where == "configurations[2].set.SQL1:net0"
    assert "replaces the nics of 'SQL1'" in problem.message and "nics list" in problem.hint


def test_the_hint_for_a_list_never_suggests_a_name_the_loader_refuses():
    """The old hint said to write a VM disk as 'SQL2:NAME' and then refused that name."""
    by_where = {p.where: p for p in _problems(_with("""  - id: named
    set:
      SQL2:data: {size_gb: 300}
"""))}
    problem = by_where["configurations[2].set.SQL2:data"]
    assert "names no component" in problem.message
    assert "SQL2:NAME" not in problem.hint and ":NAME)" not in problem.hint
    assert problem.hint == "'data' is one of the disks of SQL2: give the disks in full under it (SQL2: {disks: [...]})"


def test_the_readme_documents_configurations_with_an_example_bed_that_uses_them():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = readme[readme.index("## Command line"):readme.index("A run has one driver")]
    assert "validate FILE" in commands and "[--configuration NAME]" in commands
    assert "testbed-studio compare RUN|CONFIG" in commands
    section = readme[readme.index("### Configurations:"):]
    example = section[section.index("resources/examples/"):].split("`")[0]
    bed = load(ROOT / example)
    assert [c.id for c in bed.configurations] == ["rhev-vhost", "rhev-sriov", "hyperv"]
    for name in ("guest1:eth2", "eql-group"):
        assert name in section and any(name in c.overrides for c in bed.configurations)
