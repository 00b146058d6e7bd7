"""The exported playbook asks before it writes to a disk, as the built-in engine does
(`--yes-destructive`): each host stops before its first task that formats a disk or writes to it
unless the person passed `-e testbed_disk_writes_confirmed=yes`, and says which disks, by identity."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.ansible import export, reach
from app.ansible.disk_writes import CONFIRM_VARIABLE
from app.run.plan import RunStep, Task, run_steps
from tests.run_beds import with_a_formatted_volume, write_bed, write_fio_bed
from topology.fileformat import load
from topology.methodology import generate

ANSIBLE = Path(sys.executable).with_name("ansible-playbook")
DISK = "array1:data (serial beaf12, 1 GB)"      # as the methodology names the volume of with_a_formatted_volume


def _plain(path: Path) -> list:
    return yaml.safe_load(path.read_text().replace("!unsafe ", ""))


def test_the_exported_format_step_is_preceded_by_a_confirmation_naming_its_disk(tmp_path):
    bed = load(with_a_formatted_volume(write_fio_bed(tmp_path / "bed.yaml", "client1", tmp_path / "c.dat",
                                                     {"transport": "ssh", "address": "192.0.2.10", "user": "root"})))
    reached = reach(bed)
    steps = run_steps(generate(bed), reached.transports)
    fmt = next(s for s in steps if s.destructive)
    assert fmt.template.endswith("#format") and fmt.devices == [DISK]
    result = export(bed, steps, tmp_path / "out", reached)
    tasks = [t for play in _plain(result.paths["playbook"]) for t in play.get("tasks", [])]
    asks = [i for i, t in enumerate(tasks) if "ansible.builtin.assert" in t and CONFIRM_VARIABLE in str(t)]
    first_write = next(i for i, t in enumerate(tasks) if str(t["name"]).startswith(f"{fmt.number} "))
    assert len(asks) == 1 and asks[0] == first_write - 1, [t["name"] for t in tasks]
    ask = tasks[asks[0]]
    assert f"{fmt.number} WRITES TO {DISK}" in ask["ansible.builtin.assert"]["fail_msg"]
    assert f"-e {CONFIRM_VARIABLE}=yes" in ask["ansible.builtin.assert"]["fail_msg"]
    assert ask["tags"] == [f"step_{fmt.number.replace('.', '_')}"] and ask["when"] == "not ansible_check_mode"
    # the export's README and the CLI's notes say so
    assert f"1 step(s) write to disks ({fmt.number})" in " ".join(result.notes)
    assert f"-e {CONFIRM_VARIABLE}=yes" in result.paths["readme"].read_text()
    # no step of the measurement writes to a disk here (fio on a file): it asks nothing
    assert CONFIRM_VARIABLE not in result.paths["measure"].read_text()


def _write_step(host: str, marks: Path) -> RunStep:
    return RunStep("4.2", f"Format a disk on {host}.", "storage", "Storage", host,
                   [Task("4.2", host, "bash", f"echo done > {marks / host}")], devices=[DISK])


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_exported_playbook_stops_before_a_disk_write_until_the_person_confirms_it(tmp_path):
    """One real ansible-playbook run of the export (about 4 s here: one run for both cases): h1, not
    confirmed, stops before its write; h2, confirmed, writes."""
    if not ANSIBLE.exists():
        pytest.skip("ansible-playbook is not installed in this environment (pip install ansible-core)")
    marks = tmp_path / "marks"
    marks.mkdir()
    hosts = [{"id": h, "transport": "ssh", "address": f"192.0.2.{n}"} for n, h in enumerate(("h1", "h2"), 1)]
    bed = load(write_bed(tmp_path / "bed.yaml", hosts, mark_dir=marks))
    paths = export(bed, [_write_step("h1", marks), _write_step("h2", marks)], tmp_path / "out").paths
    # h2 confirmed (as `-e` would, for this host only); h1 did not
    inventory = paths["inventory"].read_text()
    assert inventory.count("h2: null") == 2
    paths["inventory"].write_text(inventory.replace("h2: null", f"h2: {{{CONFIRM_VARIABLE}: 'yes'}}", 1))
    env = os.environ | {"ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ans-local"),
                        "ANSIBLE_REMOTE_TEMP": str(tmp_path / "ans-remote")}
    # the inventory's hosts, reached on this machine: the playbook runs as exported
    r = subprocess.run([str(ANSIBLE), "-i", str(paths["inventory"]), str(paths["playbook"]),
                        "-e", "ansible_connection=local", "-e", f"ansible_python_interpreter={sys.executable}",
                        "-e", f"testbed_markers_dir={tmp_path / 'done'}"],
                       capture_output=True, text=True, timeout=100, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode != 0, r.stdout[-3000:]
    assert f"4.2 WRITES TO {DISK}" in r.stdout and f"{CONFIRM_VARIABLE}=yes" in r.stdout, r.stdout[-3000:]
    assert not (marks / "h1").exists(), "h1 wrote to its disk without a confirmation"
    assert (marks / "h2").read_text() == "done\n", r.stdout[-3000:] + r.stderr[-2000:]


def test_a_load_that_writes_over_a_raw_lun_is_confirmed_first_in_measure_yml(tmp_path):
    bed_file = with_a_formatted_volume(write_fio_bed(tmp_path / "bed.yaml", "client1", tmp_path / "c.dat",
                                                     {"transport": "ssh", "address": "192.0.2.10", "user": "root"}))
    doc = yaml.safe_load(bed_file.read_text())
    del doc["arrays"][0]["volumes"][0]["drive"]            # the load runs on the LUN itself, writing 30 %
    doc["workloads"][0]["targets"] = ["array1:data"]
    del doc["workloads"][0]["parameters"]["filename"]
    bed_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    bed = load(bed_file)
    reached = reach(bed)
    steps = run_steps(generate(bed), reached.transports)
    load_step = next(s for s in steps if s.destructive)
    assert load_step.section == "run" and load_step.devices == [DISK]
    result = export(bed, steps, tmp_path / "out", reached)
    tasks = [t for play in _plain(result.paths["measure"]) for t in play.get("tasks", [])]
    first_write = next(i for i, t in enumerate(tasks) if str(t["name"]).startswith(f"{load_step.number} "))
    ask = tasks[first_write - 1]
    assert CONFIRM_VARIABLE in str(ask["ansible.builtin.assert"]["that"])
    assert f"{load_step.number} WRITES TO {DISK}" in ask["ansible.builtin.assert"]["fail_msg"]
    assert CONFIRM_VARIABLE not in result.paths["playbook"].read_text()    # the build writes to no disk


def test_the_run_engine_asked_before_the_run_so_its_own_plays_carry_no_confirmation(tmp_path):
    from app.ansible.playbook import Book, automated_play
    steps = [_write_step("h1", tmp_path)]
    lanes = {"h1": [(s, s.tasks[0]) for s in steps]}
    exported = automated_play(Book(), "Storage", lanes, False, "tasks")
    engine = automated_play(Book(), "Storage", lanes, False, "tasks", job_script=lambda step, task: "true")
    assert CONFIRM_VARIABLE in str(exported["tasks"][0]) and CONFIRM_VARIABLE not in str(engine["tasks"])
