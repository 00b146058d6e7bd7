"""What a broken host or a hostile user hands over never stops or repeats a run, and never gets a
traceback: result files of any bytes, run records no run wrote, quadratic inputs, text XML cannot
carry, and the small ways a file on disk can surprise (a FIFO, a hard link, a symlink)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.run import journal as J

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "tests" / "data" / "captures"
FIO = CAPTURES / "fio" / "fio-3.33_local_group_reporting_numjobs4.json"
DISKSPD_XML = CAPTURES / "diskspd" / "diskspd-2.0.21a_pkb_seqread.xml"


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, cwd=ROOT)


def _fio(**change) -> dict:
    doc = json.loads(FIO.read_text())
    for key, value in change.items():
        doc[key] = value
    return doc


# ------------------------------------------------------------------ result files of any bytes

def _diskspd_with_count(count: str) -> str:
    return re.sub(r"<ReadCount>\d+", f"<ReadCount>{count}", DISKSPD_XML.read_text(), count=1)


def _line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


@pytest.mark.parametrize("name, content, says", [
    ("deep.json", '{"fio version": "fio-3.33", "jobs": ' + "[" * 100_000 + "]" * 100_000 + "}",
     "line 1: a JSON object nests deeper than any fio report"),
    ("count.xml", _diskspd_with_count("1.5e3"), "line {line}: not a diskspd report this program can read"),
    ("digits.xml", _diskspd_with_count("9" * 5000), "line {line}: not a diskspd report this program can read"),
])
def test_parse_names_the_line_of_a_value_it_cannot_take(tmp_path, name, content, says):
    f = tmp_path / name
    f.write_text(content)
    r = _cli("parse", str(f))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    line = _line_of(content, "<ReadCount>") if "ReadCount" in content else 1
    assert says.format(line=line) in r.stderr, r.stderr


def test_a_fio_jobs_list_holding_a_number_reads_the_jobs_and_says_so(tmp_path):
    doc = _fio()
    doc["jobs"].append(7)
    f = tmp_path / "jobs.json"
    f.write_text(json.dumps(doc))
    r = _cli("parse", str(f), "--format", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["iops"] > 0 and any("are not jobs (the first is item 2)" in p for p in out["problems"])


@pytest.mark.parametrize("raw", [b"\xff\xfe" + "(PDH-CSV 4.0)".encode("utf-16-le") + b"\x00",
                                 b"\xff\xfe" + b"\x00\xd8a\x00", b"\xfe\xff\xd8\x00"])
def test_utf16_with_an_odd_byte_count_or_lone_surrogates_is_no_traceback(tmp_path, raw):
    f = tmp_path / "counters.csv"
    f.write_bytes(raw)
    r = _cli("parse", str(f), "--tool", "typeperf")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "nothing could be read" in r.stderr


def test_an_infinite_figure_is_no_measurement_and_json_never_says_infinity(tmp_path):
    doc = _fio()
    doc["jobs"][0]["read"]["runtime"] = 1e-320        # a rate that overflows to infinity
    doc["jobs"][0]["read"]["total_ios"] = 1e308
    f = tmp_path / "inf.json"
    f.write_text(json.dumps(doc))
    r = _cli("parse", str(f), "--format", "json")
    assert "Infinity" not in r.stdout and "NaN" not in r.stdout
    out = json.loads(r.stdout)
    assert out["read_iops"] is None and any("not a measurement" in p for p in out["problems"])
    run = J.new_run(str(tmp_path / "bed.yaml"), "", root=tmp_path / "runs")
    from app.metrics.run_results import INDEX, attach_file
    rec = attach_file(run.dir, f)
    assert rec.figures["read_iops"] is None
    assert "Infinity" not in (run.dir / INDEX).read_text()


@pytest.mark.timeout(60)
def test_fio_report_splitting_is_linear_in_the_text():
    """1 MB of '{' took over a minute when every '{' started a parse of the rest."""
    from app.metrics.fio_report import split_reports
    report = FIO.read_text()
    text = "{" * 2_000_000 + "\n" + report + "\nnote: x {\n" + report
    assert len(split_reports(text)) == 2


def test_a_result_file_the_engine_cannot_read_is_a_problem_of_its_step_and_the_run_goes_on(tmp_path):
    from app.metrics.run_results import attached
    from app.remote.local import LocalTransport
    from app.run.engine import RunEngine
    from app.run.plan import RunStep, Task
    work = tmp_path / "work"
    deep = '{"fio version": "fio-3.33", "jobs": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (tmp_path / "deep.json").write_text(deep)
    (tmp_path / "count.xml").write_text(_diskspd_with_count("1.5e3"))
    doc = _fio()
    doc["jobs"].append(7)
    (tmp_path / "jobs.json").write_text(json.dumps(doc))
    load = Task("3.1", "h1", "bash", f"cp {tmp_path}/deep.json {tmp_path}/count.xml {tmp_path}/jobs.json .",
                ansible={"results": ["deep.json", "count.xml", "jobs.json"]})
    after = Task("3.2", "h1", "bash", "echo after")
    steps = [RunStep("3.1", "load", "run", "Run", "h1", [load]), RunStep("3.2", "after", "run", "Run", "h1", [after])]
    info = J.new_run(str(tmp_path / "bed.yaml"), "", root=tmp_path / "runs")
    engine = RunEngine(info, steps, lambda host: LocalTransport(host, workdir=work))
    try:
        assert engine.run_steps(steps)
    finally:
        engine.close()
    records = J.read_records(info.dir)[0]
    notes = [r["message"] for r in records if r["kind"] == "note" and r.get("step") == "3.1"]
    assert len(notes) == 2, notes
    assert "deep.json" in notes[0] and "nests deeper" in notes[0]
    assert "count.xml" in notes[1] and f"line {_line_of(_diskspd_with_count('1.5e3'), '<ReadCount>')}" in notes[1]
    assert [r.source for r in attached(info.dir)] == ["h1:jobs.json"]
    states = J.replay(records)
    assert states[("3.1", "h1")].status == J.OK and states[("3.2", "h1")].status == J.OK
    # a resume reads the same records without a traceback
    r = _cli("results", info.id, "--runs-dir", str(tmp_path / "runs"))
    assert "Traceback" not in r.stderr, r.stderr


def test_records_no_run_wrote_are_skipped_not_a_traceback(tmp_path):
    from app.metrics.results import METRICS_FILE, load_samples
    from app.metrics.run_results import INDEX, attach_file, attached
    run = J.new_run(str(tmp_path / "bed.yaml"), "", root=tmp_path / "runs")
    attach_file(run.dir, FIO)
    deep = "[" * 100_000 + "]" * 100_000
    with open(run.dir / INDEX, "a") as fh:
        fh.write(deep + "\n" + '{"source": 1}\n')
    (run.dir / METRICS_FILE).write_text(deep + "\n" + json.dumps([1.0, "h1", "iops", 5.0, "IO/s"]) + "\n"
                                        + '[1.0, "h1", "iops", 1' + "0" * 400 + ', "IO/s"]\n' + "\xff\n")
    assert len(attached(run.dir)) == 1
    assert [s.value for s in load_samples(run.dir)] == [5.0]
    r = _cli("results", run.id, "--runs-dir", str(tmp_path / "runs"))
    assert "Traceback" not in r.stderr, r.stderr


# ------------------------------------------------------------------ run records and run folders

def test_an_end_record_with_an_unknown_status_is_damage_not_a_reason_to_run_the_step_again(tmp_path):
    run = J.new_run(str(tmp_path / "bed.yaml"), "", root=tmp_path / "runs")
    with J.Journal(run.dir) as journal:
        journal.record("start", step="1.1", host="h1")
        journal.record("end", step="1.1", host="h1", status="okay")
        journal.record("note", message="later")
    assert "'status' 'okay' is not a task status" in J.distrust(run.dir)


def test_a_journal_that_is_a_folder_refuses_the_resume_with_a_message(tmp_path):
    from tests.safety_beds import long_step_bed
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=0)
    run = J.new_run(str(bed), "", root=tmp_path / "runs")
    (run.dir / "journal.jsonl").mkdir()
    r = _cli("run", str(bed), "--resume", run.id, "--runs-dir", str(tmp_path / "runs"), "--templates", templates,
             "--skip-manual")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "journal.jsonl" in r.stderr


def test_a_full_state_folder_refuses_a_new_run_with_a_message(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    from tests.safety_beds import long_step_bed
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=0)
    full = tmp_path / "full"
    full.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(full)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        with open(full / "filler", "wb") as fh:
            try:
                fh.write(b"x" * 1024 * 1024)
            except OSError:
                pass
        r = _cli("run", str(bed), "--runs-dir", str(full / "runs"), "--templates", templates, "--skip-manual")
    finally:
        subprocess.run(["umount", "-l", str(full)], check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "No space left on device" in r.stderr and "nothing ran" in r.stderr


def test_a_run_keeps_its_extra_vars_for_a_resume(tmp_path):
    info = J.new_run(str(tmp_path / "bed.yaml"), "", root=tmp_path / "runs", engine="ansible",
                     extra_vars=["@vault.yml", "ntp=10.0.0.1"])
    assert J.open_run(info.id, tmp_path / "runs").extra_vars == ["@vault.yml", "ntp=10.0.0.1"]
    assert oct(info.dir.stat().st_mode & 0o777) == "0o700"
    from app.ansible.engine import missing
    if missing():
        pytest.skip(missing())
    from app.run.session import RunSession
    from tests.safety_beds import long_step_bed
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=0)
    info.bed_file = str(bed)
    info.save()
    events: list = []
    session = RunSession.from_file(bed, templates=[templates], runs_dir=tmp_path / "runs", on_event=events.append)
    try:
        assert session.resume(info.id)
        assert session.engine.extra_vars == ["@vault.yml", "ntp=10.0.0.1"]
    finally:
        session.close()


# ------------------------------------------------------------------ inputs that were quadratic

@pytest.mark.timeout(60)
def test_undoing_an_import_of_many_hosts_is_linear():
    """The import plan applies its edit and undoes it; each undone insert scanned the whole list."""
    from topology.edits import Compound, InsertItem
    hosts: list[object] = []
    edit = Compound([InsertItem(hosts, object()) for _ in range(150_000)])
    edit.apply()
    edit.revert()
    assert hosts == []


def test_an_inventory_range_past_any_host_count_is_a_message(tmp_path):
    bed = tmp_path / "bed.yaml"
    bed.write_text("format_version: 1\nbed: {name: b}\n")
    inv = tmp_path / "hosts"
    inv.write_text("[load_clients]\nh[1:" + "9" * 30 + "]\nw[1:" + "9" * 31 + "]\n")
    r = _cli("import", str(bed), str(inv))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "stands for more than" in r.stderr and "is no host number" in r.stderr


# ------------------------------------------------------------------ text XML cannot carry

@pytest.mark.parametrize("where, value", [
    ("bed.name", '"lab \\x01"'), ("servers[0].note", '"a\\u0007bell"'), ("servers[0].software", '["ok", "x\\e"]'),
    ("servers[0].adapters[0].ports[0].label", '"\\x0c"')])
def test_the_loader_refuses_text_xml_cannot_carry_with_its_line(tmp_path, where, value):
    doc = {"bed.name": "lab", "servers[0].note": "fine", "servers[0].software": '["ok"]',
           "servers[0].adapters[0].ports[0].label": "LAN 1"}
    doc[where] = value
    text = (f"format_version: 1\nbed: {{name: {doc['bed.name']}}}\n"
            f"servers:\n  - id: h1\n    note: {doc['servers[0].note']}\n    software: {doc['servers[0].software']}\n"
            f"    adapters:\n      - name: nic\n"
            f"        ports: [{{name: p1, label: {doc['servers[0].adapters[0].ports[0].label']}}}]\n")
    bed = tmp_path / "bed.yaml"
    bed.write_text(text)
    r = _cli("validate", str(bed))
    assert r.returncode == 2, r.stdout + r.stderr
    line = next(n for n, ln in enumerate(text.splitlines(), 1) if value in ln)
    assert re.search(rf"bed.yaml:{line}:\d+: .* holds the control character U\+00", r.stderr), r.stderr
    assert f"(at {where}" in r.stderr
    # a tab and a line break are text XML carries
    bed.write_text(text.replace(value, '["a\\tb"]' if where == "servers[0].software" else '"a\\tb\\nc"'))
    assert _cli("validate", str(bed)).returncode in (0, 1)


def test_the_quick_look_for_text_xml_cannot_carry_misses_no_character():
    """The loader walks a bed's values only when its text may hold such a character; an ASCII text is
    looked at as bytes (issue 32: a 7 MB bed's File › Open): it must see every character the search
    for them sees, anywhere in the text, ASCII or not."""
    from topology import xml_chars
    for code in [*range(0x100), 0x2028, 0xD800, 0xDFFF, 0xFFFE, 0xFFFF, 0x10FFFF]:
        for text in (f"name: a{chr(code)}b\n", f"name: é{chr(code)}\n"):
            assert xml_chars._may_hold(text) == (xml_chars._MAY_HOLD.search(text) is not None), hex(code)


def test_an_export_is_parsed_back_before_it_is_kept(tmp_path):
    """A bed built in memory (the designer) can still hold such text: the export says so and
    writes nothing, instead of "wrote" a file no program opens."""
    from app.diagram.export import export_diagram
    from topology.fileformat import load
    bed = load(ROOT / "resources" / "examples" / sorted(os.listdir(ROOT / "resources" / "examples"))[0])
    bed.servers[0].model = "bell \x07"
    for fmt in ("drawio", "graphml"):
        out = tmp_path / f"d.{fmt}"
        with pytest.raises(OSError, match="would not be well-formed XML .*control character"):
            export_diagram(bed, out, fmt)
        assert not out.exists()


# ------------------------------------------------------------------ files that surprise

def test_a_fifo_given_as_the_bed_is_refused_at_once(tmp_path):
    fifo = tmp_path / "bed.yaml"
    os.mkfifo(fifo)
    r = _cli("validate", str(fifo), timeout=30)
    assert r.returncode == 2 and "not a regular file" in r.stderr


def test_a_hard_linked_bed_stays_one_file_when_saved(tmp_path):
    from topology.fileformat import load, save
    bed_path = tmp_path / "bed.yaml"
    r = _cli("new", "--example", _cli("examples").stdout.split()[0], "-o", str(bed_path))
    assert r.returncode == 0, r.stderr
    other = tmp_path / "other-name.yaml"
    os.link(bed_path, other)
    bed = load(bed_path)
    bed.bed.name = "renamed"
    save(bed, bed_path)
    assert os.path.samefile(bed_path, other) and load(other).bed.name == "renamed"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]        # no copy left behind


@pytest.mark.slow
def test_exports_are_not_written_through_a_symlink_at_the_output_path(tmp_path):
    bed_path = tmp_path / "bed.yaml"
    assert _cli("new", "--example", _cli("examples").stdout.split()[0], "-o", str(bed_path)).returncode == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (tmp_path / "out.drawio").symlink_to(victim)
    r = _cli("export", str(bed_path), "-o", str(tmp_path / "out.drawio"), "--no-findings")
    assert r.returncode == 2 and "symbolic link" in r.stderr, r.stdout + r.stderr
    out = tmp_path / "ansible"
    out.mkdir()
    (out / "playbook.yml").symlink_to(victim)
    r = _cli("export-ansible", str(bed_path), "-o", str(out))
    assert r.returncode != 0 and "symbolic link" in r.stderr, r.stdout + r.stderr
    assert victim.read_text() == "keep me\n"


def test_a_whitespace_only_host_id_is_refused_with_its_line(tmp_path):
    bed = tmp_path / "bed.yaml"
    bed.write_text("format_version: 1\nbed: {name: b}\nservers:\n  - {id: '   '}\n")
    r = _cli("validate", str(bed))
    assert r.returncode == 2 and "bed.yaml:4:" in r.stderr and "cannot be an id" in r.stderr
