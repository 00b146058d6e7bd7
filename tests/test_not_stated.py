"""A value the source does not state: one marker in the file (`not stated`), kept on save, refused
where it cannot stand (ids, link ends), and never turned into a number: rules say they could not
judge, sums leave it out, the methodology and the appendix print "not stated"."""
from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from collections import Counter

import jsonschema
import pytest
import yaml
from beds import CLEAN_BED, clean_bed
from not_stated_beds import everything_not_stated, mark_everything_not_stated

from resources import SCHEMA_FILE, example_path
from topology.capacity import usable_gb, volume_sizes
from topology.errors import BedFileError
from topology.field_plan import plan
from topology.fileformat import dumps, load, loads
from topology.index import BedIndex
from topology.methodology import generate
from topology.model import VM, DiskSet, Port, Server
from topology.placement import memory_not_stated, vm_memory
from topology.unknown import MARKER, NOT_STATED, accepts_not_stated, is_not_stated, stated
from topology.validation import validate

EXAMPLES = ("md3000i-hyperv-cluster", "equallogic-ps6110-hyperv", "ams2500-exchange-esrp")


def field(cls, attr):
    return next(fp for fp in plan(cls) if fp.attr == attr)


# ------------------------------------------------------------------ the file format

SMALL = """\
format_version: 1
bed: {name: small}
servers:
  - id: h1
    memory_gb: not stated
    multipath: 'not stated'
    bios: {sriov: not stated, virtualization: true}
    adapters:
      - name: nic
        ports:
          - {name: p1, roles: not stated, mtu: not stated, flow_control: not stated, speed_gbps: 10}
vms:
  - {id: v1, host: h1, memory_gb: not stated, vcpu: not stated}
"""


def test_the_marker_loads_as_one_value_in_any_kind_of_field():
    bed = loads(SMALL)
    s, vm = bed.servers[0], bed.vms[0]
    port = s.adapters[0].ports[0]
    for value in (s.memory_gb, s.multipath, port.roles, port.mtu, port.flow_control, vm.memory_gb, vm.vcpu,
                  s.bios["sriov"]):
        assert value is NOT_STATED and is_not_stated(value)
    assert port.speed_gbps == 10 and s.bios["virtualization"] is True
    # it reads as "not stated", is empty and falsy as text, equals only itself
    assert str(NOT_STATED) == MARKER and f"{NOT_STATED:g}" == MARKER and not NOT_STATED
    assert NOT_STATED != "" and "" != NOT_STATED and NOT_STATED != MARKER and NOT_STATED == NOT_STATED
    assert stated(s.memory_gb) is None and stated(8) == 8
    assert pickle.loads(pickle.dumps(bed)).vms[0].memory_gb is NOT_STATED
    assert copy.deepcopy(bed).servers[0].bios["sriov"] is NOT_STATED


def test_saving_writes_the_marker_back_as_a_plain_scalar_and_round_trips():
    bed = loads(SMALL)
    text = dumps(bed)
    assert "memory_gb: not stated" in text and "sriov: not stated" in text and "'not stated'" not in text
    assert "mtu: not stated" in text and "roles: not stated" in text
    again = loads(text)
    assert again == bed and dumps(again) == text
    # a mapping key spelled like the marker stays a key
    keyed = loads("format_version: 1\nbed: {name: k}\nservers:\n  - id: s\n    settings: {not stated: 1}\n")
    assert keyed.servers[0].settings == {"not stated": 1}


@pytest.mark.parametrize(("snippet", "where", "says"), [
    ("servers:\n  - id: not stated\n", "servers[0].id", "id cannot be 'not stated'"),
    ("servers:\n  - {id: h1}\n  - {id: h2}\nlinks:\n  - {a: not stated, b: h1}\n", "links[0].a", "a cannot be"),
    ("servers:\n  - id: h1\n    bios: not stated\n", "servers[0].bios", "bios cannot be 'not stated' as a whole"),
    ("servers:\n  - id: h1\n    cpu: not stated\n", "servers[0].cpu", "cpu cannot be 'not stated' as a whole"),
    ("servers:\n  - id: h1\n    dns: [10.0.0.1, not stated]\n", "servers[0].dns", "an item of dns cannot be"),
    ("scenarios:\n  - {id: s, description: not stated}\n", "scenarios[0].description", "description cannot be"),
])
def test_the_marker_is_refused_where_it_cannot_stand_with_the_line(snippet, where, says):
    with pytest.raises(BedFileError) as err:
        loads("format_version: 1\nbed: {name: x}\n" + snippet, "bed.yaml")
    problem = err.value.problems[0]
    assert problem.where == where and says in problem.message and problem.line and problem.hint


def test_which_fields_take_the_marker():
    assert accepts_not_stated(VM, field(VM, "memory_gb"))
    assert accepts_not_stated(Port, field(Port, "roles"))
    assert accepts_not_stated(DiskSet, field(DiskSet, "size_gb"))
    assert not accepts_not_stated(Server, field(Server, "id"))
    assert not accepts_not_stated(Server, field(Server, "adapters"))
    assert not accepts_not_stated(Server, field(Server, "x"))
    assert not accepts_not_stated(DiskSet, field(DiskSet, "slots"))


def test_the_schema_documents_the_marker_and_accepts_a_bed_full_of_it(tmp_path):
    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    assert schema["$defs"]["NotStated"]["const"] == MARKER
    memory = schema["$defs"]["VM"]["properties"]["memory_gb"]
    assert {"$ref": "#/$defs/NotStated"} in memory["anyOf"]
    assert "anyOf" not in schema["$defs"]["Server"]["properties"]["id"]
    bed = everything_not_stated(load(example_path(EXAMPLES[0])))
    jsonschema.validate(yaml.safe_load(dumps(bed)), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(yaml.safe_load("format_version: 1\nbed: {name: x}\nservers: [{id: h, memory_gb: "
                                           "unknown}]\n"), schema)


# ------------------------------------------------------------------ arithmetic never invents

def test_sizes_and_memory_not_stated_are_left_out_of_the_sums_and_named():
    bed = clean_bed()
    next(v for v in bed.arrays[0].volumes if v.name == "db").size_gb = NOT_STATED
    sizes = volume_sizes(BedIndex(bed))
    assert "arr:db" not in sizes and sizes["arr:log"] == 100
    assert usable_gb("raid5", [600, NOT_STATED, 600]) == 0 and usable_gb(NOT_STATED, [600] * 3) == 0
    vm = bed.vms[0]
    vm.memory_gb = NOT_STATED
    assert vm_memory(vm) == 0 and memory_not_stated(bed.vms) == [vm.id]


# A value each rule needs, marked not stated on the clean bed: the rule says it could not judge (an info
# finding naming the value), never an error or a warning it could not know.
UNSTATED = {
    "NET-001": lambda b: setattr(_port(b, "h1:san1"), "roles", NOT_STATED),
    "NET-005": lambda b: [setattr(_port(b, "arr:c1-b"), "mtu", NOT_STATED), setattr(b.networks[2], "mtu", None)],
    "NET-006": lambda b: setattr(_port(b, "h2:san1"), "flow_control", NOT_STATED),
    "NET-011": lambda b: setattr(_port(b, "h1:san1"), "team", NOT_STATED),
    "NET-012": lambda b: setattr(b.switches[0], "port_count", NOT_STATED),
    "PATH-004": lambda b: setattr(b.servers[1], "multipath", NOT_STATED),
    "RAID-001": lambda b: setattr(b.arrays[0].disk_groups[0], "raid", NOT_STATED),
    "RAID-003": lambda b: setattr(b.arrays[0], "spares", NOT_STATED),
    "RAID-007": lambda b: setattr(b.arrays[0].enclosures[0].disks[0], "size_gb", NOT_STATED),
    "RAID-009": lambda b: setattr(b.workloads[0], "demand_iops", NOT_STATED),
    "CAP-001": lambda b: setattr(b.vms[0], "memory_gb", NOT_STATED),
    "CAP-003": lambda b: setattr(b.servers[0], "memory_gb", NOT_STATED),
    "CAP-004": lambda b: setattr(b.servers[0], "numa_nodes", NOT_STATED),
    "CLU-001": lambda b: [setattr(b.clusters[0], "witness", NOT_STATED),
                          setattr(b.clusters[0], "quorum", "node_majority")],
    "CLU-003": lambda b: [setattr(_port(b, f"{h}:lm"), "roles", NOT_STATED) for h in ("h1", "h2")],
    "WL-001": lambda b: setattr(b.vms[0], "host", NOT_STATED),
}


def _port(bed, ref):
    dev, name = ref.split(":")
    for s in bed.servers:
        if s.id == dev:
            return next(p for a in s.adapters for p in a.ports if p.name == name)
    for a in bed.arrays:
        if a.id == dev:
            return next(p for c in a.controllers for p in c.ports if p.name == name)
    raise KeyError(ref)


@pytest.mark.parametrize("code", sorted(UNSTATED))
def test_a_rule_that_needs_a_value_not_stated_says_it_could_not_judge(code):
    bed = clean_bed()
    UNSTATED[code](bed)
    bed = loads(dumps(bed))         # as a file would hold it
    found = [f for f in validate(bed) if f.code == code]
    assert found, f"{code} is silent about the value it could not judge"
    assert all(f.severity == "info" and f.message.startswith("could not judge") and "not stated" in f.message
               for f in found), [(f.severity, f.message) for f in found]
    assert not [f for f in validate(bed) if f.severity != "info"]


def test_stated_values_that_already_disagree_still_give_the_error():
    """An MTU not stated on one hop does not hide two stated hops that differ."""
    bed = clean_bed()
    _port(bed, "arr:c1-b").mtu = 1500
    _port(bed, "h1:san2").flow_control = NOT_STATED
    assert any(f.code == "NET-005" and f.severity == "error" for f in validate(bed))


# ------------------------------------------------------------------ every value not stated

@pytest.fixture(scope="module", params=EXAMPLES)
def bed_of_unknowns(request, tmp_path_factory):
    """An example with every value marked not stated, written to a file and loaded back."""
    bed = load(example_path(request.param))
    assert mark_everything_not_stated(bed) > 200
    path = tmp_path_factory.mktemp("ns") / f"{request.param}.yaml"
    path.write_text(dumps(bed))
    again = load(path)
    assert dumps(again) == path.read_text()
    return request.param, again, path


def test_a_bed_with_every_value_not_stated_validates_with_info_findings_only(bed_of_unknowns):
    _, bed, _ = bed_of_unknowns
    findings = validate(bed)
    assert findings and {f.severity for f in findings} == {"info"}
    judged = [f for f in findings if f.message.startswith("could not judge")]
    assert len(judged) >= 5 and all("not stated" in f.message for f in judged)


def test_a_bed_with_every_value_not_stated_prints_its_methodology_without_a_gap(bed_of_unknowns):
    _, bed, _ = bed_of_unknowns
    meth = generate(bed)
    steps = list(meth.steps())
    assert steps
    assert not [s for s in steps if s.unresolved], [s.unresolved for s in steps if s.unresolved][:3]
    assert sum(MARKER in s.text for s in steps) >= 10
    for s in steps:   # no command carries the marker
        assert not any("not stated" in c.script for c in s.automation)


def test_a_step_whose_command_needs_a_value_not_stated_is_done_by_hand_and_says_so():
    bed = load(example_path(EXAMPLES[0]))
    port = next(p for a in bed.servers[1].adapters for p in a.ports if p.name == "SAN1")
    port.address = port.mtu = NOT_STATED

    def san1_step(b):
        return next(s for s in generate(b).steps() if s.target == "R710-2" and "configure adapter SAN1" in s.text)
    before = san1_step(load(example_path(EXAMPLES[0])))
    assert before.automation and "192.168.130.211" in before.text
    step = san1_step(bed)
    assert not step.automation and step.manual and not step.unresolved
    # the example's servers run Windows Server 2008 R2: netsh takes the address and the mask
    assert step.not_stated == ["port.ip", "port.mask"]
    assert "Jumbo MTU to not stated" in step.text and "192.168.130.211" not in step.text


def test_the_appendix_of_a_bed_with_every_value_not_stated_has_no_unresolved_value(bed_of_unknowns, tmp_path):
    name, _, path = bed_of_unknowns
    if name == "ams2500-exchange-esrp":
        fmt, out = "html", tmp_path / "a.html"   # 85 pages as PDF: the HTML is the same blocks, faster
    else:
        fmt, out = "pdf", tmp_path / "a.pdf"
    done = subprocess.run([sys.executable, "-m", "app.cli", "appendix", str(path), "-o", str(out), "--format", fmt],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    if fmt == "pdf":
        text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True,
                              check=True).stdout
    else:
        text = out.read_text()
    assert "Unresolved" not in text and "«missing" not in text and "[not set]" not in text
    assert text.count(MARKER) > 100


def test_marking_values_not_stated_never_adds_an_error_or_a_warning():
    """For each kind of component, every value of it marked not stated: no rule reports a problem it
    cannot know of (only what stated values already show, or info findings)."""
    base = clean_bed()
    before = {f.code for f in validate(base) if f.severity != "info"}
    classes = sorted({type(o).__name__ for o in _walk(base)})
    assert len(classes) > 15
    for cls in classes:
        bed = copy.deepcopy(base)
        for obj in _walk(bed):
            if type(obj).__name__ == cls:
                for fp in plan(type(obj)):
                    if accepts_not_stated(type(obj), fp):
                        setattr(obj, fp.attr, NOT_STATED)
        bed = loads(dumps(bed))
        after = Counter(f.code for f in validate(bed) if f.severity != "info")
        assert set(after) <= before, (cls, after)


def _walk(obj):
    yield obj
    for fp in plan(type(obj)):
        v = getattr(obj, fp.attr)
        if fp.kind == "dc" and v is not None:
            yield from _walk(v)
        elif fp.kind == "list" and fp.inner[0] == "dc":
            for item in v:
                yield from _walk(item)


# ------------------------------------------------------------------ notes print where they matter

def test_component_notes_print_under_their_table_and_with_the_first_step_that_uses_them(tmp_path):
    text = CLEAN_BED.replace("    memory_gb: 48\n    numa_nodes: 2\n    multipath: MPIO/DSM\n",
                             "    memory_gb: 48\n    numa_nodes: 2\n    multipath: MPIO/DSM\n"
                             "    note: RAM from the report's Table 3; the DIMM layout is not given\n", 1)
    text = text.replace("  - id: sql\n    host: h1\n", "  - id: sql\n    host: h1\n    note: sized by the lab\n")
    bed = loads(text)
    meth = generate(bed)
    with_note = [s for s in meth.steps() if any(n.startswith("h1: RAM from") for n in s.notes)]
    assert len(with_note) == 1 and with_note[0].target == "h1"
    path = tmp_path / "bed.yaml"
    path.write_text(text)
    out = tmp_path / "a.md"
    subprocess.run([sys.executable, "-m", "app.cli", "appendix", str(path), "-o", str(out)], check=True, timeout=300,
                   capture_output=True)
    md = out.read_text()
    assert "Notes. h1: RAM from the report's Table 3; the DIMM layout is not given." in md
    assert "sql: sized by the lab." in md
    assert md.count("RAM from the report's Table 3") == 2      # the table and the step, once each

