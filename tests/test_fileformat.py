"""The project file: clear messages for bad input, safe loading, atomic saving, migration."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from beds import clean_bed

from topology.errors import BedFileError
from topology.fileformat import dumps, load, loads, save


def problems(text: str) -> list:
    with pytest.raises(BedFileError) as info:
        loads(text, "bed.yaml")
    return info.value.problems


def one(text: str):
    found = problems(text)
    assert found, "expected a problem"
    return found[0]


def test_malformed_yaml_names_line_and_column():
    p = one("format_version: 1\nbed:\n  name: [unclosed\nservers: []\n")
    assert p.message.startswith("malformed YAML")
    assert p.line is not None and p.line >= 3
    assert p.column is not None


def test_unknown_component_kind_is_named_with_a_suggestion():
    p = one("format_version: 1\nbed: {name: x}\nserver:\n  - id: a\n")
    assert "unknown section 'server'" in p.message
    assert "servers" in p.hint
    assert p.line == 3


def test_unknown_field_suggests_the_right_one():
    p = one("format_version: 1\nbed: {name: x}\nservers:\n  - id: a\n    memroy_gb: 4\n")
    assert "memroy_gb" in p.message and "memory_gb" in p.hint and p.line == 5


def test_dangling_reference_names_the_missing_component():
    p = one("format_version: 1\nbed: {name: x}\nservers:\n  - id: host-1\nvms:\n"
            "  - {id: v, host: host-2, memory_gb: 2}\n")
    assert "'host-2' does not name a server" in p.message
    assert "host-1" in p.hint
    assert p.line == 6


def test_dangling_port_reference_in_a_link():
    p = one("format_version: 1\nbed: {name: x}\nservers:\n  - id: h\nswitches:\n  - {id: s, ports: [{name: p1}]}\n"
            "links:\n  - {a: 'h:nic9', b: 's:p1'}\n")
    assert "no such port" in p.message and p.line == 8


def test_negative_size_is_refused_with_its_location():
    p = one("format_version: 1\nbed: {name: x}\nservers:\n  - id: h\n    memory_gb: -48\n")
    assert "negative" in p.message and p.line == 5 and p.column == 16


def test_duplicate_name():
    found = problems("format_version: 1\nbed: {name: x}\nservers:\n  - id: h\n  - id: h\n")
    assert any("duplicate name 'h'" in p.message for p in found)
    assert found[0].line == 5


def test_duplicate_key_in_a_mapping():
    p = one("format_version: 1\nbed: {name: x}\nservers:\n  - id: h\n    id: g\n")
    assert "appears twice" in p.message and p.line == 5


@pytest.mark.parametrize("version,words", [(99, "newer"), ("one", "not a version"), (-1, "not a version")])
def test_wrong_format_version(version, words):
    p = one(f"format_version: {version}\nbed: {{name: x}}\n")
    assert words in p.message and p.line == 1


def test_missing_format_version():
    assert "format_version is missing" in one("bed: {name: x}\n").message


def test_wrong_type_says_what_was_expected():
    p = one("format_version: 1\nbed: {name: x}\nservers:\n  - id: h\n    memory_gb: lots\n")
    assert "expected a number" in p.message and "'lots'" in p.message


def test_every_problem_is_reported_not_just_the_first():
    found = problems("format_version: 1\nbed: {name: x}\nservers:\n  - id: a\n    memory_gb: -1\n"
                     "  - id: b\n    numa_nodes: 0\n")
    assert len(found) == 2 and [p.line for p in found] == [5, 7]


def test_python_tags_are_refused_not_executed(tmp_path):
    marker = tmp_path / "pwned"
    text = ("format_version: 1\nbed: {name: x}\nservers:\n  - id: !!python/object/apply:os.system "
            f"['touch {marker}']\n")
    p = one(text)
    assert "unsupported YAML tag" in p.message
    assert not marker.exists()


def test_alias_bomb_is_refused_with_its_line_before_it_expands():
    rows = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        rows.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    text = ("format_version: 1\nbed: {name: x}\nworkloads:\n  - id: w\n    tool: fio\n    parameters:\n      "
            + "\n      ".join(rows) + "\n")
    p = one(text)  # 10^9 strings if expanded
    assert "aliases expand" in p.message and p.line is not None and p.line > 6


def test_a_few_aliases_still_load_shared_and_a_fresh_save_writes_them_out():
    text = ("format_version: 1\nbed: {name: x}\nworkloads:\n  - id: w\n    tool: fio\n    parameters:\n"
            "      base: &b {bs: 4k, iodepth: 32}\n      again: *b\n")
    bed = loads(text)
    params = bed.workloads[0].parameters
    assert params["again"] is params["base"]
    # the written values stand on their own (a file saved over its old text keeps its aliases:
    # tests/test_roundtrip.py)
    saved = dumps(bed)
    assert "*" not in saved and loads(saved) == bed


def test_yaml_12_scalars_yes_stays_text_and_octal_is_decimal():
    bed = loads("format_version: 1\nbed: {name: x, note: yes}\nservers:\n  - id: h\n    memory_gb: 0048\n")
    assert bed.bed.note == "yes"
    assert bed.servers[0].memory_gb == 48


def test_merge_keys_work_for_repetitive_beds():
    text = ("format_version: 1\nbed: {name: x}\nservers:\n  - &base {id: h1, memory_gb: 48, role: hypervisor}\n"
            "  - <<: *base\n    id: h2\n")
    bed = loads(text)
    assert [(s.id, s.memory_gb) for s in bed.servers] == [("h1", 48), ("h2", 48)]


def test_round_trip_is_equal_and_byte_stable():
    bed = clean_bed()
    text = dumps(bed)
    again = loads(text)
    assert again == bed
    assert dumps(again) == text


def test_migration_from_format_0():
    bed = loads("format_version: 0\nbed: {name: old}\nservers:\n  - id: h\nvms:\n"
                "  - {id: v, host: h, memory_mb: 3072}\n")
    assert bed.format_version == 1 and bed.vms[0].memory_gb == 3
    assert "memory_mb" not in dumps(bed) and "format_version: 1" in dumps(bed)


def test_save_is_atomic_when_the_write_fails(tmp_path, monkeypatch):
    target = tmp_path / "bed.yaml"
    save(clean_bed(), target)
    before = target.read_bytes()
    bed = clean_bed()
    bed.bed.name = "changed"

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        save(bed, target)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bed.yaml"]


def test_save_survives_a_killed_writer(tmp_path):
    """Kill a process in the middle of a large save: the old file is intact and loads."""
    import signal
    import subprocess
    import sys
    import time
    target = tmp_path / "bed.yaml"
    save(clean_bed(), target)
    before = target.read_bytes()
    root = str(Path(__file__).resolve().parent.parent)
    code = (f"import sys; sys.path.insert(0, {root!r})\n"
            "from topology.synthetic import generate\nfrom topology.fileformat import save\n"
            "bed = generate(400, 4000, 20, 2000)\nprint('ready', flush=True)\n"
            f"while True: save(bed, {str(target)!r})\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    data = target.read_bytes()
    assert data == before or loads(data.decode()).bed.name.startswith("synthetic")


def test_unreadable_file_is_a_bed_file_error(tmp_path):
    with pytest.raises(BedFileError) as info:
        load(tmp_path / "missing.yaml")
    assert "cannot read" in str(info.value)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(BedFileError) as info:
        load(binary)
    assert "UTF-8" in str(info.value)


def test_message_format_has_file_line_and_fix():
    with pytest.raises(BedFileError) as info:
        loads("format_version: 1\nbed: {name: x}\nservers:\n  - id: h\n    memory_gb: -1\n", "lab.yaml")
    text = str(info.value)
    assert text.startswith("lab.yaml:5:")
    assert "how to fix:" in text


def _model_classes() -> list[type]:
    from topology.fileformat import Bed, plan
    seen: list[type] = []
    todo: list[type] = [Bed]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.append(cls)
        for fp in plan(cls):
            if fp.kind == "dc":
                todo.append(fp.inner)
            elif fp.kind == "list" and fp.inner[0] == "dc":
                todo.append(fp.inner[1])
    return seen


@pytest.mark.parametrize("cls", _model_classes(), ids=lambda cls: cls.__name__)
def test_a_mapping_with_only_its_required_keys_builds_what_the_general_case_builds(cls):
    """The loader's short way for a mapping that holds no optional key (a switch port's name) gives the
    object and the messages the field-by-field way gives: an optional key written with no value
    (`key:`) is read as not there, and takes the field-by-field way."""
    from topology.fileformat import _Builder, plan
    fields = plan(cls)
    optional = next((fp.key for fp in fields if not fp.required), None)
    if optional is None:
        pytest.skip("every field is required")
    required = {fp.key: "x1" for fp in fields if fp.required and fp.kind == "str"}
    for given in ({}, required):
        short, general = _Builder(), _Builder()
        assert short.build(cls, dict(given), ()) == general.build(cls, {**given, optional: None}, ())
        assert short.problems == general.problems


@pytest.mark.parametrize("device", ["switches:\n- id: sw1\n  ports:\n  - name: '1'\n  - name: '1'\n",
                                    "servers:\n- id: h1\n  adapters:\n  - name: nic\n    ports:\n"
                                    "    - name: san1\n    - name: san1\n"])
def test_a_port_name_used_twice_on_one_device_is_refused_at_its_line(device):
    p = one("format_version: 1\nbed:\n  name: b\n" + device)
    assert p.message == ("duplicate port name '1'" if "sw1" in device else "duplicate port name 'san1'")
    assert p.line == 3 + device.count("\n") and p.column is not None      # the second one's line
