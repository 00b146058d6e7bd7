"""Loader bounds that hold for any file: alias bombs, unbounded numbers, slot ranges,
ids used as path parts, raw control characters, exception codes, duplicate access entries,
and saving through symlinks with the file's own permissions."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest
from beds import CLEAN_BED

from topology.errors import BedFileError
from topology.fileformat import dumps, load, loads, save

ROOT = Path(__file__).resolve().parent.parent
HEAD = "format_version: 1\nbed: {name: x}\n"


def refused(text: str):
    with pytest.raises(BedFileError) as info:
        loads(text, "bed.yaml")
    return info.value.problems


def laughs(depth: int, width: int, leaf: str, where: str = "settings") -> str:
    rows = [f"a0: &a0 [{', '.join([leaf] * width)}]"]
    rows += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, depth)]
    body = "\n      ".join(rows)
    if where == "settings":
        return HEAD + f"servers:\n  - id: h\n    settings:\n      {body}\n"
    return HEAD + f"workloads:\n  - id: w\n    tool: fio\n    parameters:\n      {body}\n"


# ---------------------------------------------------------------------------- alias bombs

def test_billion_laughs_under_settings_is_refused_at_the_alias_that_overflows():
    problems = refused(laughs(9, 10, "lol"))
    p = problems[0]
    assert "aliases expand" in p.message and p.line is not None and p.line > 5
    assert p.hint


def test_a_10_kb_bomb_of_long_strings_is_refused_within_a_small_multiple_of_its_size():
    text = laughs(6, 10, "x" * 1000, where="parameters")
    assert 9_000 < len(text) < 12_000
    tracemalloc.start()
    try:
        refused(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100 * len(text), f"loading a {len(text)}-byte file took {peak} bytes"


def test_a_100_kb_bomb_exits_2_with_a_message_not_an_abort(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(laughs(7, 10, "y" * 10_000, where="parameters"))
    assert bomb.stat().st_size > 100_000
    script = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GB: the old loader needed 7
        from app.cli import main
        sys.exit(main(["validate", {str(bomb)!r}]))
    """)
    res = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "bomb.yaml:" in res.stderr and "aliases expand" in res.stderr and "how to fix" in res.stderr
    assert "Traceback" not in res.stderr


def test_an_alias_inside_the_node_it_names_is_refused():
    p = refused(HEAD + "servers:\n  - id: h\n    settings: &s\n      self: *s\n")[0]
    assert "inside the node it names" in p.message and p.line == 6


def test_an_alias_without_an_anchor_names_its_line():
    p = refused(HEAD + "servers:\n  - id: h\n    settings: {a: *nowhere}\n")[0]
    assert "*nowhere" in p.message and p.line == 5


def test_merge_keys_and_a_few_aliases_still_load():
    bed = loads(HEAD + "servers:\n  - &base {id: h1, memory_gb: 48, settings: &st {a: 1}}\n"
                "  - <<: *base\n    id: h2\n    settings: *st\n")
    assert [(s.id, s.memory_gb) for s in bed.servers] == [("h1", 48), ("h2", 48)]
    assert bed.servers[1].settings is bed.servers[0].settings


# --------------------------------------------------------------------------- numbers

@pytest.mark.parametrize("field,value,words", [
    ("memory_gb", "99999999999999999999", "out of range"),
    ("memory_gb", ".inf", "not a finite number"),
    ("memory_gb", ".nan", "not a finite number"),
    ("memory_gb", "1e400", "not a finite number"),
    ("numa_nodes", "4294967296", "too large"),
    ("x", "-1e300", "out of range"),
    ("x", "-2e7", "least allowed is -10000000"),
    ("numa_nodes", "5000", "most allowed is 4096"),
])
def test_unbounded_numbers_in_model_fields_are_refused_with_their_line(field, value, words):
    p = refused(HEAD + f"servers:\n  - id: h\n    {field}: {value}\n")[0]
    assert words in p.message and p.line == 5 and p.hint


@pytest.mark.parametrize("value", [".inf", "-.inf", "99999999999999999999", "1e400"])
def test_unbounded_numbers_in_free_form_settings_are_refused(value):
    p = refused(HEAD + f"servers:\n  - id: h\n    settings: {{timeout: {value}}}\n")[0]
    assert p.line == 5 and ("finite" in p.message or "out of range" in p.message)


@pytest.mark.parametrize("port,words", [(22 + 65536, "most allowed is 65535"), (65536, "most allowed is 65535"),
                                        (10 ** 19, "out of range"), (0, "least allowed is 1")])
def test_an_access_port_outside_1_to_65535_is_refused(port, words):
    p = refused(HEAD + f"servers:\n  - id: h\naccess:\n  - {{host: h, port: {port}}}\n")[0]
    assert p.line == 6 and p.column == 21 and words in p.message


def test_a_port_at_the_limits_loads():
    bed = loads(HEAD + "servers:\n  - id: h\n  - id: g\naccess:\n  - {host: h, port: 65535}\n"
                "  - {host: g, port: 1}\n")
    assert [a.port for a in bed.access] == [65535, 1]


@pytest.mark.parametrize("where,spec", [("members", "e0:0-999999999"), ("spares", "e0:12"),
                                        ("disks", "0-999999999")])
def test_a_slot_range_past_its_enclosure_is_refused_naming_the_enclosure(where, spec):
    text = CLEAN_BED
    if where == "members":
        text = text.replace("members: [e0:0-3]", f"members: [{spec}]")
    elif where == "spares":
        text = text.replace("spares: [e0:11]", f"spares: [{spec}]")
    else:
        text = text.replace("{slots: 0-11,", f"{{slots: {spec},")
    assert text != CLEAN_BED
    p = refused(text)[0]
    assert "runs past the end of enclosure 'e0'" in p.message and "12 slots" in p.message and p.line


def test_an_enclosure_cannot_claim_a_billion_slots():
    p = refused(CLEAN_BED.replace("slots: 12\n", "slots: 1000000000\n"))[0]
    assert "too large" in p.message and p.line


# ----------------------------------------------------------------------- ids as paths

@pytest.mark.parametrize("bad", ["'../x'", "a/b", "'a\\b'", "'.'", "'..'", '"a\\u0001b"'])
@pytest.mark.parametrize("section", ["servers", "workloads"])
def test_ids_that_become_path_parts_refuse_separators_dots_and_control_characters(bad, section):
    item = f"{{id: {bad}, tool: fio}}" if section == "workloads" else f"{{id: {bad}}}"
    p = refused(HEAD + f"{section}:\n  - {item}\n")[0]
    assert "cannot be an id" in p.message and p.line == 4 and "'/'" in p.hint


def test_ordinary_ids_with_dots_and_dashes_load():
    bed = loads(HEAD + "servers:\n  - {id: host-1.lab}\n  - {id: ...}\n")
    assert [s.id for s in bed.servers] == ["host-1.lab", "..."]


# ------------------------------------------------------------------ control characters

def test_a_raw_nul_byte_is_refused_with_line_and_column():
    p = refused(HEAD + "servers:\n  - id: h\n    note: a\x00b\n")[0]
    assert "#x0000" in p.message and (p.line, p.column) == (5, 12)


# -------------------------------------------------------------------- exception codes

def test_an_exception_code_must_look_like_a_rule_code():
    p = refused(HEAD + "exceptions:\n  - {code: net-1, subject: '*', reason: r}\n")[0]
    assert "rule code such as NET-001" in p.message and p.line == 4


def test_an_unknown_rule_code_is_refused_with_the_codes_of_its_kind():
    p = refused(HEAD + "exceptions:\n  - {code: NET-999, subject: '*', reason: r}\n")[0]
    assert "'NET-999' is not a rule code" in p.message and "NET-001" in p.hint and p.line == 4


def test_a_known_rule_code_loads():
    bed = loads(HEAD + "exceptions:\n  - {code: CAP-001, subject: '*', reason: r}\n")
    assert bed.exceptions[0].code == "CAP-001"


# ------------------------------------------------------------------- access entries

def test_two_access_entries_for_one_host_name_both_lines():
    p = refused(HEAD + "servers:\n  - id: h\naccess:\n  - {host: h, transport: ssh}\n"
                "  - {host: h, transport: local}\n")[0]
    assert p.line == 7 and "the first is on line 6" in p.message


# --------------------------------------------------------------------------- saving

def test_saving_through_a_symlink_writes_the_file_it_points_at(tmp_path):
    real = tmp_path / "beds" / "real.yaml"
    real.parent.mkdir()
    real.write_text(CLEAN_BED)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    bed = load(link)
    bed.bed.name = "edited through the link"
    save(bed, link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert load(real).bed.name == "edited through the link"
    assert [p.name for p in real.parent.iterdir()] == ["real.yaml"]  # no temporary file left


def test_saving_keeps_the_mode_of_the_existing_file(tmp_path):
    target = tmp_path / "bed.yaml"
    target.write_text(CLEAN_BED)
    target.chmod(0o640)
    save(load(target), target)
    assert target.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_its_mode_from_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        save(loads(CLEAN_BED), tmp_path / "new.yaml")
    finally:
        os.umask(old)
    assert (tmp_path / "new.yaml").stat().st_mode & 0o777 == mode


def test_saved_text_round_trips_after_the_bounds():
    bed = loads(CLEAN_BED)
    assert loads(dumps(bed)) == bed


# ---------------------------------------------- saving on a full disk or a read-only mount

@pytest.fixture
def small_disk(tmp_path):
    """A real 64 KB tmpfs (needs root, as the sandbox-host tests do)."""
    where = tmp_path / "disk"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                                           capture_output=True).returncode:
        pytest.skip("mounting a tmpfs needs root")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def test_saving_on_a_full_disk_keeps_the_old_file_and_leaves_no_temporary(small_disk):
    target = small_disk / "bed.yaml"
    target.write_text(CLEAN_BED)
    bed = loads(CLEAN_BED)
    bed.bed.note = "x" * 80_000  # more than the disk has left
    with pytest.raises(OSError):
        save(bed, target)
    assert target.read_text() == CLEAN_BED
    assert [p.name for p in small_disk.iterdir()] == ["bed.yaml"]


def test_saving_on_a_read_only_mount_keeps_the_old_file(small_disk):
    target = small_disk / "bed.yaml"
    target.write_text(CLEAN_BED)
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    bed = loads(CLEAN_BED)
    bed.bed.note = "changed"
    with pytest.raises(OSError):
        save(bed, target)
    assert target.read_text() == CLEAN_BED
