"""The Ansible export, run for real with ansible-playbook against sandbox sshd hosts.

What a seasoned Ansible user checks: a second run changes nothing, `--check` changes nothing
and still runs the read-only checks, a check that fails fails the run, a manual step in a
multi-host play never aborts it, modules (with `become`) where the template names one.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.ansible import export, reach
from app.run.plan import run_steps
from bench.sandbox_hosts import SandboxLab, host_python
from tests.run_beds import write_bed, write_fio_bed
from topology.fileformat import load
from topology.methodology import generate

TEMPLATES = str(Path(__file__).parent / "ansible_templates")
ANSIBLE = Path(sys.executable).with_name("ansible-playbook")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    reason = SandboxLab.unavailable_reason()
    if reason is not None:
        pytest.skip(f"no sandbox sshd hosts here: {reason}")
    if not ANSIBLE.exists():
        pytest.skip("ansible-playbook is not installed in this environment (pip install ansible-core)")
    with SandboxLab(tmp_path_factory.mktemp("lab")) as lab:
        lab.start_many(2)
        yield lab


def _access(lab, name: str) -> dict:
    h = lab.hosts[name]
    return {"id": name, "transport": "ssh", "address": h.address, "port": h.port, "user": "root",
            "key_file": str(lab.client_key_path)}


def _export(lab, tmp_path: Path, manual_check: bool = True) -> tuple[dict, Path]:
    bed_file = write_bed(tmp_path / "bed.yaml", [_access(lab, n) for n in ("h1", "h2")],
                         mark_dir=tmp_path / "marks", manual_check=manual_check)
    bed = load(bed_file)
    reached = reach(bed)
    steps = [s for s in run_steps(generate(bed, extra_dirs=[TEMPLATES]), reached.transports) if s.section == "hosts"]
    return export(bed, steps, tmp_path / "ansible", reached).paths, tmp_path / "marks"


def _play(lab, tmp_path: Path, paths: dict, *extra: str) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    env = os.environ | {"ANSIBLE_HOST_KEY_CHECKING": "True", "ANSIBLE_NOCOLOR": "1", "ANSIBLE_PIPELINING": "True",
                        "ANSIBLE_SSH_ARGS": f"-o UserKnownHostsFile={lab.known_hosts_path} -o IdentitiesOnly=yes "
                                            "-o ControlMaster=auto -o ControlPersist=60s",
                        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(tmp_path / "cp"),
                        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ans-local"), "ANSIBLE_REMOTE_TEMP": "/tmp/.ansible-tbs"}
    # the sandbox hosts share this machine's disk: each test keeps its done markers apart
    r = subprocess.run([str(ANSIBLE), "-i", str(paths["inventory"]), str(paths["playbook"]),
                        "-e", f"ansible_python_interpreter={host_python()}",
                        "-e", f"testbed_markers_dir={tmp_path / 'done'}", "-e", "ansible_become_method=su", *extra],
                       capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    recap = {}
    for line in r.stdout.split("PLAY RECAP", 1)[-1].splitlines():
        if ":" in line:
            recap[line.split()[0]] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}
    return r, recap


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_second_run_changes_nothing_and_check_mode_checks_without_changing(lab, tmp_path):
    paths, marks = _export(lab, tmp_path)
    out = lambda r: r.stdout[-4000:] + r.stderr[-2000:]       # noqa: E731

    # --check on hosts where nothing is done yet: says what would change, changes nothing
    r, recap = _play(lab, tmp_path, paths, "--check")
    assert r.returncode == 0, out(r)
    assert recap["h1"]["changed"] > 0 and recap["h1"]["failed"] == 0
    assert not marks.exists()

    r, recap = _play(lab, tmp_path, paths)
    assert r.returncode == 0, out(r)
    assert all(recap[h]["changed"] > 0 and recap[h]["failed"] == 0 and recap[h]["unreachable"] == 0
               for h in ("h1", "h2")), out(r)
    # each host went through its own steps only: no task was skipped on one host because it is the other's
    assert recap["h1"]["skipped"] == 0 and recap["h2"]["skipped"] == 0, out(r)
    # the manual step between automated ones was shown, and the run went on
    assert "Check by eye that the cables of h1 are seated" in r.stdout
    assert (marks / "h1.visits").read_text() == "visit\n"
    assert (marks / "h2.d").is_dir()

    r, recap = _play(lab, tmp_path, paths)
    assert r.returncode == 0, out(r)
    assert recap["h1"]["changed"] == 0 and recap["h2"]["changed"] == 0, out(r)
    assert (marks / "h1.visits").read_text() == "visit\n", "a script without a check ran twice"
    assert (marks / "h1.checked").read_text() == "checked\n"

    # --check on a built bed: nothing would change, and the checks really ran
    r, recap = _play(lab, tmp_path, paths, "--check")
    assert r.returncode == 0, out(r)
    assert recap["h1"]["changed"] == 0 and recap["h2"]["changed"] == 0, out(r)
    assert re.search(r"TASK \[1\.\d+ check\][^\n]*\n(ok|changed): \[h\d\]", r.stdout)


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_failing_check_fails_the_run_even_in_check_mode(lab, tmp_path):
    paths, marks = _export(lab, tmp_path, manual_check=False)
    r, _ = _play(lab, tmp_path, paths)
    assert r.returncode == 0, r.stdout[-3000:]
    (marks / "h2.checked").write_text("tampered\n")
    r, recap = _play(lab, tmp_path, paths, "--check")
    assert r.returncode != 0
    assert recap["h2"]["failed"] == 1 and recap["h1"]["failed"] == 0
    assert (marks / "h2.checked").read_text() == "tampered\n"


def test_each_host_of_a_play_has_its_own_task_list_and_no_condition_picks_it(tmp_path):
    hosts = [{"id": f"h{n}", "transport": "ssh", "address": f"192.0.2.{n}"} for n in range(1, 4)]
    bed = load(write_bed(tmp_path / "bed.yaml", hosts, mark_dir=tmp_path / "marks"))
    reached = reach(bed)
    result = export(bed, run_steps(generate(bed, extra_dirs=[TEMPLATES]), reached.transports),
                    tmp_path / "ansible", reached)
    everything = "".join(p.read_text() for p in [result["playbook"], *result.task_files])
    assert "inventory_hostname ==" not in everything
    automated = [p for p in yaml.safe_load(_plain(result["playbook"])) if p["hosts"] != "localhost"]
    assert automated and all(p["hosts"] == "h1,h2,h3" and p["strategy"] == "free" for p in automated)
    include = automated[0]["tasks"][-1]["ansible.builtin.include_tasks"]["file"]
    assert include.endswith("/{{ inventory_hostname }}.yml")
    for n in (1, 2, 3):
        own = yaml.safe_load(_plain(result["playbook"].parent / include.replace("{{ inventory_hostname }}", f"h{n}")))
        # the host's own steps, in order, and nobody else's
        assert own and all(f"h{n}" in t["name"] or "done markers" in t["name"] or "record that" in t["name"]
                           or t["name"].endswith(" check") for t in own), own
        assert not any(f"h{m}" in str(t) for m in (1, 2, 3) if m != n for t in own)


def test_a_module_step_uses_the_module_with_become_and_no_script(tmp_path):
    bed_file = write_bed(tmp_path / "bed.yaml", [{"id": "h1", "transport": "ssh", "address": "192.0.2.1"}],
                         mark_dir=tmp_path / "marks")
    bed = load(bed_file)
    steps = run_steps(generate(bed, extra_dirs=[TEMPLATES]), reach(bed).transports)
    result = export(bed, steps, tmp_path / "ansible")
    tasks = [t for play in yaml.safe_load(_plain(result["playbook"])) for t in play["tasks"]]
    folder = next(t for t in tasks if "ansible.builtin.file" in t and str(t["name"]).endswith("h1.d in "
                                                                                            f"{tmp_path / 'marks'}."))
    assert folder["become"] is True and folder["ansible.builtin.file"]["state"] == "directory"
    assert not any("mkdir -p" in str(t.get("ansible.builtin.shell", {}).get("cmd", "")) and "h1.d" in
                   str(t["ansible.builtin.shell"]["cmd"]) for t in tasks if "ansible.builtin.shell" in t)
    # every shell task either says when it changes something or skips itself once done
    for t in tasks:
        shell = t.get("ansible.builtin.shell")
        if shell is not None:
            assert "creates" in shell or "changed_when" in t, t


def _plain(path: Path) -> str:
    """The file with its `!unsafe` tags dropped, for reading it back with PyYAML."""
    return path.read_text().replace("!unsafe ", "")


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_measure_playbook_runs_the_load_and_fetches_its_results_to_the_controller(lab, tmp_path):
    if shutil.which("fio") is None or shutil.which("iostat") is None:
        pytest.skip("needs fio and sysstat (installed by .ci/setup.sh)")
    acc = _access(lab, "h1")
    bed = load(write_fio_bed(tmp_path / "fio.yaml", "h1", tmp_path / "h1.dat", minutes=0.05,
                             access={k: v for k, v in acc.items() if k != "id"}))
    reached = reach(bed)
    result = export(bed, run_steps(generate(bed), reached.transports), tmp_path / "ansible", reached)
    paths = {"inventory": result["inventory"], "playbook": result["measure"]}
    r, recap = _play(lab, tmp_path, paths)
    assert r.returncode == 0 and recap["h1"]["failed"] == 0, r.stdout[-4000:] + r.stderr[-2000:]
    # where the README says: results/HOST/, not results/HOST/<the path on the host>
    fetched = {p.name: p for p in (tmp_path / "ansible" / "results" / "h1").glob("*.json")}
    assert "oltp.json" in fetched, r.stdout[-3000:]
    text = fetched["oltp.json"].read_text()
    reports, at = [], text.find("{")
    while at != -1:          # fio writes one JSON report a second, the last one is the final report
        report, end = json.JSONDecoder().raw_decode(text, at)
        reports.append(report)
        at = text.find("{", end)
    assert reports and reports[-1]["jobs"][0]["jobname"] == "oltp"


def _stage_step(number: str, host: str, manual: bool = False):
    from app.run.plan import RunStep, Task
    task = Task(number, host) if manual else Task(number, host, "bash", f"echo {number}")
    return RunStep(number, f"Step {number} on {host}.", "network", "Network adapters", host, [task])


def test_a_stage_is_one_play_over_its_hosts_and_manual_steps_come_between_plays_never_between_hosts(tmp_path):
    hosts = [{"id": h, "transport": "ssh", "address": f"192.0.2.{n}"} for n, h in enumerate(("h1", "h2", "h3"), 1)]
    bed = load(write_bed(tmp_path / "bed.yaml", hosts, mark_dir=tmp_path / "marks"))
    # as the methodology orders them: host after host, a switch's manual step between two hosts, and h2
    # with a manual step inside its own lane
    steps = [_stage_step("3.1", "h1"), _stage_step("3.2", "h1"), _stage_step("3.3", "sw1", manual=True),
             _stage_step("3.4", "h2"), _stage_step("3.5", "h2", manual=True), _stage_step("3.6", "h2"),
             _stage_step("3.7", "h3")]
    result = export(bed, steps, tmp_path / "ansible")
    book = yaml.safe_load(_plain(result["playbook"]))
    assert [p["hosts"] for p in book] == ["h1,h2,h3", "localhost", "h2"]
    assert [t["name"].split(" by hand")[0] for t in book[1]["tasks"]] == ["3.3", "3.5"]
    first = result["playbook"].parent / "tasks/playbook/play_01"
    assert [t["name"].split()[0] for t in yaml.safe_load(_plain(first / "h1.yml")) if "record" not in t["name"]
            and "markers" not in t["name"]] == ["3.1", "3.2"]
    assert [t["name"].split()[0] for t in yaml.safe_load(_plain(first / "h2.yml")) if "record" not in t["name"]
            and "markers" not in t["name"]] == ["3.4"]
    assert [t["name"].split()[0] for t in book[2]["tasks"] if "record" not in t["name"]
            and "markers" not in t["name"]] == ["3.6"]


def test_the_measurement_asks_nobody_to_copy_the_files_its_fetch_already_copied(tmp_path):
    bed = load(write_fio_bed(tmp_path / "fio.yaml", "h1", tmp_path / "h1.dat", minutes=0.05,
                             access={"transport": "ssh", "address": "192.0.2.1", "user": "root"}))
    reached = reach(bed)
    steps = run_steps(generate(bed), reached.transports)
    copy = next(s for s in steps if s.fetched_by)
    result = export(bed, steps, tmp_path / "ansible", reached)
    text = _plain(result["measure"])
    tasks = [t for play in yaml.safe_load(text) for t in play["tasks"]]
    fetches = [t["ansible.builtin.fetch"] for t in tasks if "ansible.builtin.fetch" in t]
    assert fetches and all(f["dest"] == "{{ playbook_dir }}/results/{{ inventory_hostname }}/" and f["flat"]
                           for f in fetches)
    assert not any(str(t["name"]).startswith(f"{copy.number} ") for t in tasks), copy.number


def test_exporting_an_example_says_why_hosts_are_assumed_or_left_out(tmp_path):
    r = subprocess.run([sys.executable, "-m", "app.cli", "export-ansible",
                        str(Path(__file__).resolve().parent.parent / "resources/examples/md3000i-hyperv-cluster.yaml"),
                        "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "no `access:` entries" in r.stdout
    assert "left out R710-1, R710-2, DC, Client1" in r.stdout and "Windows Server 2008 R2" in r.stdout
    inventory = yaml.safe_load(_plain(tmp_path / "out" / "inventory.yml"))
    assert "R710-1" not in str(inventory)
    # their steps are shown as manual, saying why
    playbook = (tmp_path / "out" / "playbook.yml").read_text()
    assert "no remote access is set for R710-1" not in playbook
    assert "done by hand: R710-1 runs Windows Server 2008 R2" in playbook
    assert "R710-1" in (tmp_path / "out" / "README.md").read_text()


def test_an_ansible_block_naming_a_module_badly_is_refused_with_its_file_and_line(tmp_path):
    from topology.methodology.template_syntax import TemplateError
    templates = tmp_path / "templates"
    (templates / "linux").mkdir(parents=True)
    (templates / "linux" / "hosts.yaml").write_text(
        "section: hosts\nsteps:\n  - id: x\n    foreach: server\n    text: X on {host.id}.\n    automation:\n"
        "      - shell: bash\n        script: echo {host.id}\n        ansible:\n          module: package\n")
    bed = load(write_bed(tmp_path / "bed.yaml", [{"id": "h1", "transport": "ssh", "address": "192.0.2.1"}],
                         mark_dir=tmp_path / "marks"))
    with pytest.raises(TemplateError) as err:
        generate(bed, extra_dirs=[str(templates)])
    assert "hosts.yaml:10" in err.value.format() and "fully qualified module name" in err.value.format()


def test_a_script_that_would_ask_for_credentials_on_the_host_is_never_exported_as_a_task(tmp_path):
    from app.run.plan import RunStep, Task
    bed = load(write_bed(tmp_path / "bed.yaml", [{"id": "w1", "transport": "winrm", "address": "192.0.2.5"}],
                         mark_dir=tmp_path / "marks"))
    step = RunStep("2.1", "Join w1 to the domain lab.example.", "network", "Network", "w1",
                   [Task("2.1", "w1", "powershell",
                         "Add-Computer -DomainName 'lab.example' -Credential (Get-Credential)")])
    result = export(bed, [step], tmp_path / "ansible")
    text = result["playbook"].read_text()
    assert "win_shell" not in text and "ansible.builtin.pause" in text
    assert "asks for credentials on the host" in text


def test_only_the_playbooks_with_steps_are_written(tmp_path):
    bed_file = write_fio_bed(tmp_path / "fio.yaml", "h1", tmp_path / "h1.dat",
                             {"transport": "ssh", "address": "192.0.2.1"})
    r = subprocess.run([sys.executable, "-m", "app.cli", "export-ansible", str(bed_file), "-o", str(tmp_path / "out"),
                        "--steps", "3"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "measure.yml").exists() and not (tmp_path / "out" / "playbook.yml").exists()
    assert "measure.yml" in r.stdout and "playbook.yml" not in r.stdout


def test_windows_hosts_follow_the_methodology_version_rules_and_the_export_says_why(tmp_path):
    releases = {"w2008r2": "Windows Server 2008 R2 SP1", "w7": "Windows 7", "w2003": "Windows Server 2003",
                "w2012r2": "Windows Server 2012 R2", "hv2012": "Hyper-V Server 2012 R2",
                "w2019": "Windows Server 2019", "w10": "Windows 10", "wnone": "Windows Server"}
    doc = {"format_version": 1, "bed": {"name": "windows releases"},
           "servers": [{"id": h, "role": "load_client", "platform": "windows", "os": text}
                       for h, text in releases.items()],
           "access": [{"host": h, "transport": "winrm", "address": f"192.0.2.{n}", "user": "lab\\\\tester"}
                      for n, h in enumerate(releases, 1)]}
    (tmp_path / "bed.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    r = subprocess.run([sys.executable, "-m", "app.cli", "export-ansible", str(tmp_path / "bed.yaml"),
                        "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    inventory = _plain(tmp_path / "out" / "inventory.yml")
    # below what ansible.windows can manage: nothing exported, and the export says so
    for h in ("w2008r2", "w7", "w2003"):
        assert h not in inventory
    left_out = next(line for line in r.stdout.splitlines() if line.startswith("note: left out"))
    assert all(h in left_out for h in ("w2008r2", "w7", "w2003"))
    assert "Windows Server 2008 R2" in left_out and "Windows 7" in left_out and "Server 2016 or later" in left_out
    # 2012 / 2012 R2: exported, with the condition it needs; no version stated: exported, check it
    for h in ("w2012r2", "hv2012", "w2019", "w10", "wnone"):
        assert h in inventory
    assert re.search(r"note: w2012r2, hv2012 \(Windows Server 2012 R2; Hyper-V Server 2012 R2\): .*WMF 5\.1", r.stdout)
    assert re.search(r"note: wnone \(Windows Server \(version not stated\)\): the bed does not say", r.stdout)
    assert "w2019" not in "".join(line for line in r.stdout.splitlines() if line.startswith("note:"))
