"""The Run tab as a person meets it before and during a run (issue 15 item 10): a new run of an
edited bed asks to save first and one with errors asks before running; pre-flight says what is
missing; the run list follows the open run live; a step that installs with `apt-get || dnf`
is judged by the program this machine has.  Real engine, real commands on this machine (the
local transport), real widgets; dialogs answered by clicking their buttons."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.document import Document
from app.run import journal as J
from app.run.tool_needs import describe_unmet, tool_needs, unmet
from tests.dialogs import answer_modal, click
from tests.run_beds import TEMPLATES, linux_bed_text
from topology.edits import SetField
from widgets.run_wizard import RunWizard

LIN1 = [{"id": "lin1", "transport": "local"}]


def _wizard(qtbot, path: Path, templates: str = TEMPLATES) -> RunWizard:
    doc = Document()
    doc.open(path)
    w = RunWizard(doc)
    w.extra_templates = [templates]
    qtbot.addWidget(w)
    w.resize(1200, 760)
    w.show()
    return w


def _bed(tmp_path: Path, hosts=LIN1, name: str = "bed.yaml", *, work_s: float = 0, manual_check: bool = False,
         server: dict | None = None, **changes) -> Path:
    doc = yaml.safe_load(linux_bed_text(hosts, mark_dir=tmp_path / "marks", work_s=work_s,
                                        manual_check=manual_check))
    doc["servers"][0].update(server or {})
    doc.update(changes)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _wait_idle(qtbot, w, timeout=30000):
    qtbot.waitUntil(lambda: not w.controller.busy and not w.abort_button.isEnabled(), timeout=timeout)


def _history(w) -> str:
    return w.history.itemText(w.history.findData(w.session.run_id))


@pytest.fixture
def shut():
    made = []
    yield made.append
    for w in made:
        w.shutdown()


# ---------------------------------------------------------------- before the run

def test_a_new_run_of_an_edited_bed_saves_it_first_so_the_run_records_what_is_on_screen(qtbot, tmp_path, shut):
    path = _bed(tmp_path)
    w = _wizard(qtbot, path)
    shut(w)
    w.document.apply(SetField(w.document.bed.bed, "name", "renamed on screen"))
    assert w.document.dirty

    seen = answer_modal(click("Cancel"))
    w.new_run()
    assert seen and "unsaved changes" in seen[0].text and "records the project file" in seen[0].informative
    assert w.session is None and w.history.count() == 0          # nothing started
    assert "renamed on screen" not in path.read_text(encoding="utf-8")

    seen = answer_modal(click("Save and Continue"))
    w.new_run()
    assert seen and w.session is not None
    assert not w.document.dirty and "renamed on screen" in path.read_text(encoding="utf-8")
    # the run's record of its bed is the file as saved, which is the bed on screen
    assert w.session.info.bed_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_resuming_a_run_of_an_edited_bed_asks_to_save_it_first(qtbot, tmp_path, shut):
    w = _wizard(qtbot, _bed(tmp_path))
    shut(w)
    w.new_run()
    run_id = w.session.run_id
    w.controller.shutdown()
    w.document.apply(SetField(w.document.bed.bed, "name", "edited since"))
    seen = answer_modal(click("Cancel"))
    w.resume(run_id)
    assert seen and "unsaved changes" in seen[0].text
    assert w.session is None and w.message.text() == f"Run {run_id} not opened."
    seen = answer_modal(click("Save and Continue"))
    w.resume(run_id)
    assert seen and w.session is not None and w.session.run_id == run_id and not w.document.dirty


def test_a_bed_never_saved_is_saved_through_the_windows_save_before_a_run(qtbot, tmp_path, shut):
    path = _bed(tmp_path)
    w = _wizard(qtbot, path)
    shut(w)
    w.document.replace(w.document.bed, None, dirty=True)         # e.g. a new bed from an example
    target = tmp_path / "chosen.yaml"
    w.save_bed = lambda: w.document.save(target) is not None     # what File › Save As would do
    seen = answer_modal(click("Save and Continue"))
    w.new_run()
    assert seen and "not been saved yet" in seen[0].text
    assert target.is_file() and w.session is not None
    assert Path(w.session.info.bed_file) == target.resolve()


def test_a_bed_with_errors_runs_only_when_the_person_says_so_and_the_question_names_the_count(qtbot, tmp_path, shut):
    path = _bed(tmp_path, server={"memory_gb": 8}, vms=[{"id": "vm1", "host": "lin1", "memory_gb": 64},
                                                        {"id": "vm2", "host": "lin1", "memory_gb": 64}])
    w = _wizard(qtbot, path)
    shut(w)

    seen = answer_modal(click("Cancel"))
    w.new_run()
    assert seen and seen[0].text == "The bed has 1 error. Run it anyway?"
    assert "CAP-001" in seen[0].informative and "128 GB" in seen[0].informative
    assert w.session is None and "No run started" in w.message.text()

    seen = answer_modal(click("Run Anyway"))
    w.new_run()
    assert seen and w.session is not None and w.steps


def test_a_saved_bed_without_errors_starts_without_a_question(qtbot, tmp_path, shut):
    w = _wizard(qtbot, _bed(tmp_path))
    shut(w)
    w.new_run()           # a dialog here would block the test: none may come
    assert w.session is not None


# ---------------------------------------------------------------- pre-flight

def test_preflight_without_access_entries_says_what_is_missing_and_how_to_add_it(qtbot, tmp_path, shut):
    path = _bed(tmp_path, access=[])
    w = _wizard(qtbot, path)
    shut(w)
    w.new_run()
    w.preflight_button.click()
    qtbot.waitUntil(lambda: "Pre-flight check:" in w.output.toPlainText(), timeout=10000)
    text = w.output.toPlainText()
    assert "no host has remote access set" in text
    assert "access:" in text and "host: lin1, transport: ssh" in text and "keyring" in text
    assert text.strip() != "Pre-flight check:"
    assert w.message.text().startswith("Pre-flight: nothing to check - no host has remote access set")


def _install_template(tmp_path: Path, script: str) -> str:
    tdir = tmp_path / "tpl"
    (tdir / "linux").mkdir(parents=True)
    (tdir / "common").mkdir()
    (tdir / "common" / "hosts.yaml").write_text("section: hosts\nsteps: []\n")
    (tdir / "linux" / "hosts.yaml").write_text(yaml.safe_dump({"section": "hosts", "steps": [
        {"id": "install", "foreach": "server", "text": "Install the tools on {host.id}.",
         "automation": [{"shell": "bash", "script": script}]}]}))
    return str(tdir)


def _preflight_of(qtbot, tmp_path, shut, script: str) -> tuple[RunWizard, str]:
    """A run of a bed whose one step runs `script` on this machine, pre-flight clicked: what it printed."""
    w = _wizard(qtbot, _bed(tmp_path), _install_template(tmp_path, script))
    shut(w)
    w.new_run()
    w.preflight_button.click()
    qtbot.waitUntil(lambda: "Pre-flight check:" in w.output.toPlainText(), timeout=10000)
    return w, w.output.toPlainText()


@pytest.mark.skipif(not shutil.which("apt-get") or shutil.which("dnf"), reason="needs a Debian machine without dnf")
def test_preflight_on_debian_accepts_apt_get_for_an_apt_get_or_dnf_step(qtbot, tmp_path, shut):
    w, text = _preflight_of(qtbot, tmp_path, shut, "apt-get install -y fio || dnf install -y fio")
    assert "lin1: ok - reachable, logged in" in text
    assert "dnf" not in text and "PROBLEM" not in text
    assert w.message.text() == "Pre-flight: 1 of 1 host(s) ready."


def test_preflight_names_the_alternatives_when_none_is_installed(qtbot, tmp_path, shut):
    _w, text = _preflight_of(qtbot, tmp_path, shut, "no-such-pkg-a install x || no-such-pkg-b install x; "
                                                   "no-such-tool-c")
    assert ("lin1: PROBLEM - not installed: no-such-tool-c; none of no-such-pkg-a, no-such-pkg-b is installed "
            "(a step needs one of them)") in text


@pytest.mark.parametrize("script, needs", [
    ("apt-get install -y x || dnf install -y x", [(("apt-get",), ("dnf",))]),
    ("if command -v apt-get >/dev/null 2>&1; then apt-get install -y fio; "
     "elif command -v dnf >/dev/null; then dnf install -y fio; fi", [(("apt-get",), ("dnf",))]),
    ("modprobe dm_multipath || true", [(("modprobe",),)]),          # error handling, not an alternative
    ("iscsiadm -m discovery 2>&1 | tee out && sync", [(("iscsiadm",),), (("tee",),), (("sync",),)]),
    ("echo '; rm -rf / || evil' > f; X=1 sudo systemctl restart iscsid &", [(("systemctl",),)]),
    ("mkdir -p d && \\\n  mkfs.ext4 /dev/sdb", [(("mkdir",),), (("mkfs.ext4",),)]),
])
def test_the_programs_a_step_needs_understand_alternatives_and_probes(script, needs):
    assert tool_needs(script, "bash") == needs
    assert tool_needs(script, "powershell") == []


def test_an_alternative_is_met_by_any_one_of_its_programs():
    needs = tool_needs("apt-get install x || dnf install x; fio --version", "bash")
    assert unmet(needs, {"dnf"}) == [] and unmet(needs, {"apt-get"}) == []
    assert describe_unmet(unmet(needs, {"apt-get", "dnf", "fio"})) == (
        "not installed: fio; none of apt-get, dnf is installed (a step needs one of them)")


# ---------------------------------------------------------------- the run list, live

def test_the_run_list_follows_the_open_run_running_stopped_waiting_and_complete(qtbot, tmp_path, shut):
    path = _bed(tmp_path, work_s=60, manual_check=True)
    w = _wizard(qtbot, path)
    shut(w)
    w.new_run()
    assert _history(w).endswith("not started)")
    work = next(s for s in w.steps if s.template.endswith("#work"))
    w.run_all_button.click()
    qtbot.waitUntil(lambda: w.step_status(work.number) == J.RUNNING, timeout=10000)
    qtbot.waitUntil(lambda: f"running step {work.number}" in _history(w), timeout=3000)
    assert "not started" not in _history(w)
    # another process reads the journal alone, while this window drives the run
    listing = subprocess.run([sys.executable, "-m", "app.cli", "runs"], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL, env=os.environ.copy())
    line = next(ln for ln in listing.stdout.splitlines() if ln.startswith(w.session.run_id))
    assert f"running step {work.number}" in line, listing.stdout
    w.abort_button.click()
    _wait_idle(qtbot, w)
    assert f"stopped at step {work.number}" in _history(w)

    w._select(work.number)
    w.skip_button.click()
    w.run_all_button.click()
    _wait_idle(qtbot, w)
    cabling = next(s for s in w.steps if s.template.endswith("#cabling"))
    assert f"waiting for manual step {cabling.number}" in _history(w)
    w._select(cabling.number)
    w.done_button.click()
    while (left := w.session.first_unfinished()) is not None:     # the built-in manual steps that follow
        qtbot.waitUntil(lambda left=left: f"waiting for manual step {left.number}" in _history(w), timeout=3000)
        w._select(left.number)
        w.skip_button.click()
    qtbot.waitUntil(lambda: "complete" in _history(w), timeout=3000)
