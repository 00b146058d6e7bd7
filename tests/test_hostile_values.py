"""Issue 10: every value from a bed reaches every consumer as data.

One table of hostile values (command substitution, backticks, `;`, newlines, quotes, Jinja
lookups, ssh options, `../`, terminal escape codes, NUL) is put into every bed field that
reaches a command, a path or an Ansible file.  Each value that would run code touches a
canary file; the test then really runs what the application generates — bash steps and
vendor-CLI steps on a `local` host and on a sandbox sshd host, the exported playbook with
ansible-playbook — and checks that no canary appears, that each value arrived intact, that
every derived path stays inside its folder, and that terminal output shows escape codes
as text.  PowerShell (no pwsh here) is parsed with the tree-sitter PowerShell grammar: each
value is exactly one string literal.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from app.ansible import export
from app.remote.connect import TransportFactory
from app.remote.local import LocalTransport
from app.run.plan import run_steps
from bench.sandbox_hosts import SandboxLab
from tests.beds import clean_bed
from tests.run_beds import TEMPLATES, linux_bed_text
from topology import quoting
from topology.fileformat import loads
from topology.methodology import generate
from topology.model import HostAccess, Port
from topology.safe_paths import PathEscapeError, file_name_for, safe_child

CANARY = "/canary-dir"      # replaced by each test's own canary folder


def hostile_values(canary: Path) -> dict[str, str]:
    c = str(canary)
    return {
        "command substitution": f"$(touch {c}/subst)",
        "backticks": f"`touch {c}/tick`",
        "semicolon": f"x; touch {c}/semi #",
        "newline": f"x\ntouch {c}/newline",
        "single quote": f"x'; touch {c}/squote; '",
        "double quote": f'x"; touch {c}/dquote; "',
        "typographic quote": f"x\u2019; touch {c}/tquote; \u2018",
        "jinja": f"{{{{ lookup('pipe', 'touch {c}/jinja') }}}}",
        "ssh option": f"-oPermitLocalCommand=yes -oLocalCommand=touch {c}/localcmd",
        "parent folder": "../../escape",
        "this folder": ".",
        "escape codes": "\x1b]0;owned\x07\x1b[2J\x9b31m",
        "NUL": f"a\x00$(touch {c}/nul)",
    }


TABLE = list(hostile_values(Path(CANARY)))


def _values(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    canary = tmp_path / "canaries"
    canary.mkdir()
    return canary, hostile_values(canary)


def _no_canary(canary: Path) -> None:
    assert sorted(p.name for p in canary.iterdir()) == [], "a bed value ran as code"


# ====================================================== beds carrying the value everywhere

def _linux_bed(value: str, access: dict, data_file: Path, mark_dir: Path):
    """One load client whose id, workload id, bed name and settings are `value`."""
    doc = yaml.safe_load(linux_bed_text([{"id": "plain"} | access], mark_dir))
    doc["workloads"] = [{"id": "w", "tool": "fio", "driver": "plain",
                         "parameters": {"filename": str(data_file), "size": "1m", "duration_minutes": 0.01}}]
    doc["workloads"][0]["access"] = [{"block_kb": 4, "read_pct": 70, "random_pct": 100}]
    bed = loads(yaml.safe_dump(doc), "hostile.yaml")
    # the loader may refuse such ids: the model is changed in Python, as a script or the GUI could
    bed.bed.name = value
    bed.servers[0].id = bed.access[0].host = bed.workloads[0].driver = value
    bed.workloads[0].id = value
    return bed


def _storage_bed(value: str):
    """The two-node iSCSI bed on an MD3000i: volume, host group, array hosts, cluster, VM,
    vswitch, domain, DNS and a port named `value`."""
    bed = clean_bed()
    bed.bed.name = value
    arr = bed.arrays[0]
    arr.model = "Dell PowerVault MD3000i"
    for k, c in enumerate(arr.controllers):
        c.ports.append(Port(name=f"mgmt{k}", roles=["management"], address=f"10.0.0.{101 + k}/24"))
    vol = next(v for v in arr.volumes if v.name == "db")
    vol.name = value
    for m in arr.mappings:
        m.volume = value if m.volume == "db" else m.volume
        m.to = value if m.to == "cluster" else m.to
    arr.host_groups[0].name = value
    for k, h in enumerate(arr.hosts):
        h.name, h.host_group = f"{value}{k}", value
    cl = bed.clusters[0]
    cl.id = value
    cl.shared_volumes = [f"arr:{value}" if v == "arr:db" else v for v in cl.shared_volumes]
    vm = bed.vms[0]
    vm.id = value
    for d in vm.disks:
        d.volume = f"arr:{value}" if d.volume == "arr:db" else d.volume
    for w in bed.workloads:
        w.targets = [value if t == "sql" else t for t in w.targets]
    for vs in bed.virtual_switches:
        vs.label = value
    for s in bed.servers:
        s.domain, s.dns = value, [value]
    h1 = next(s for s in bed.servers if s.id == "h1")
    next(p for a in h1.adapters for p in a.ports if p.name == "san1").name = value
    for p in bed.paths:
        p.initiator = f"h1:{value}" if p.initiator == "h1:san1" else p.initiator
    for ln in bed.links:
        ln.a = f"h1:{value}" if ln.a == "h1:san1" else ln.a
    return bed


def _platform(bed, platform: str, os_text: str = ""):
    """Every server on `platform`; a Windows one runs Windows Server 2012 R2 unless told (the
    templates choose commands by version: a Windows server with no stated version gets none)."""
    for s in bed.servers:
        s.platform = platform
        s.os = os_text or ("Windows Server 2012 R2" if platform == "windows" else "")
    return bed


# ====================================================== running what is generated

def _run_generated(steps, connect, sections=("hosts", "run")) -> tuple[dict[str, list], list]:
    """Run every automated task (script, then its check) of the given sections: the output
    of each host's tasks, by host, and the tasks that failed."""
    out: dict[str, list] = {}
    failed: list = []
    transports = {}
    try:
        for step in steps:
            if step.section not in sections:
                continue
            for task in step.tasks:
                if task.manual:
                    continue
                t = transports.get(task.host)
                if t is None:
                    t = transports[task.host] = connect(task.host)
                    t.open()
                lines = out.setdefault(task.host, [])
                for script in filter(None, (task.script, task.verify)):
                    r = t.run(script, shell=task.shell, timeout=60,
                              on_output=lambda _s, ln, lines=lines: lines.append(ln))
                    if not r.ok:
                        failed.append((step.number, step.template, task.host, r.message, lines[-5:]))
    finally:
        for t in transports.values():
            t.close()
    return out, failed


def _load_steps(bed):
    # the hello and work host steps of the run tests (their `mark` step makes a path of the id on
    # purpose) and the built-in fio load step
    meth = generate(bed, extra_dirs=[TEMPLATES])
    return [s for s in run_steps(meth, {a.host: a.transport for a in bed.access})
            if s.template.endswith(("#hello", "#work", "run.yaml#load"))]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    reason = SandboxLab.unavailable_reason()
    if reason is not None:
        pytest.skip(f"no sandbox sshd hosts here: {reason}")
    with SandboxLab(tmp_path_factory.mktemp("lab")) as lab:
        lab.start_many(1)
        yield lab


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio (installed by .ci/setup.sh)")
@pytest.mark.parametrize("name", TABLE)
def test_bash_steps_on_a_local_host_take_every_value_as_data(name, tmp_path, monkeypatch):
    canary, values = _values(tmp_path)
    value = values[name]
    state = tmp_path / "state"
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(state))
    bed = _linux_bed(value, {"transport": "local"}, tmp_path / "fio.dat", tmp_path / "marks")
    steps = _load_steps(bed)
    automated = [s for s in steps if not s.manual]
    if "\x00" in value:
        # no command line can carry a NUL: every step that names the host is done by hand
        assert not automated and all("the bed lacks" in s.why_manual for s in steps)
        return
    else:
        assert {s.template.rsplit("#")[1] for s in automated} == {"hello", "work", "load"}
    out, failed = _run_generated(steps, LocalTransport)
    _no_canary(canary)
    assert not failed
    # the host's folder and fio's report stay inside the state directory's local-hosts/
    hosts_dir = (state / "local-hosts").resolve()
    folders = list(hosts_dir.iterdir())
    assert len(folders) == 1 and folders[0].parent == hosts_dir and folders[0].name == file_name_for(value)
    assert sorted(p.name for p in state.iterdir()) == ["local-hosts"]
    assert f"host={value}" in "\n".join(out[value])
    assert (folders[0] / (file_name_for(value) + ".json")).stat().st_size > 0
    assert not any(tmp_path.parent.glob("escape*")) and not any(tmp_path.glob("escape*"))


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio (installed by .ci/setup.sh)")
@pytest.mark.parametrize("name", TABLE)
def test_bash_steps_over_ssh_take_every_value_as_data(name, lab, tmp_path):
    canary, values = _values(tmp_path)
    value = values[name]
    h = lab.hosts["h1"]
    access = {"transport": "ssh", "address": h.address, "port": h.port, "user": "root",
              "key_file": str(lab.client_key_path)}
    bed = _linux_bed(value, access, tmp_path / "fio.dat", tmp_path / "marks")
    factory = TransportFactory(bed, known_hosts=lab.known_hosts_path)
    steps = _load_steps(bed)
    report = file_name_for(value) + ".json"
    try:
        out, failed = _run_generated(steps, factory)
    finally:
        # the load step writes its report in the ssh user's home: remove it again
        if "\x00" not in value:
            with factory(value) as t:
                t.run(f"rm -f -- {quoting.bash(report)}", shell="bash", timeout=30)
    _no_canary(canary)
    assert not failed
    if "\x00" not in value:
        assert f"host={value}" in "\n".join(out[value])
        assert any(f"tee {quoting.bash(report)}" in t.script for s in steps for t in s.tasks)


@pytest.mark.parametrize("name", TABLE)
def test_vendor_cli_statements_reach_the_cli_as_data_on_a_local_host(name, tmp_path, monkeypatch):
    canary, values = _values(tmp_path)
    value = values[name]
    # the vendor CLI (SMcli is not installed here): a program that keeps the statements it is given
    bin_dir, got = tmp_path / "bin", tmp_path / "smcli"
    bin_dir.mkdir()
    got.mkdir()
    fake = bin_dir / "SMcli"
    fake.write_text('#!/bin/bash\nprintf "%s\\n" "$@" >> "$SMCLI_GOT/args"\n'
                    'while [ $# -gt 0 ]; do [ "$1" = -f ] && cat -- "$2" >> "$SMCLI_GOT/statements"; shift; done\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("SMCLI_GOT", str(got))
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))
    bed = _platform(_storage_bed(value), "windows")
    bed.access = [HostAccess(host="arr", transport="local")]
    steps = [s for s in run_steps(generate(bed), {"arr": "local"}) if s.target == "arr"]
    vendor = [t for s in steps for t in s.tasks if not t.manual]
    assert vendor, [s.why_manual for s in steps]
    _, failed = _run_generated(steps, LocalTransport, sections=("storage",))
    _no_canary(canary)
    assert not failed
    statements = (got / "statements").read_text()
    assert (got / "args").read_text().startswith("10.0.0.101\n10.0.0.102\n-f\n")
    if "\x00" not in value:
        for kind in ("create hostGroup userLabel=", "create host userLabel=", "create virtualDisk "):
            assert kind in statements
        assert f"create hostGroup userLabel={quoting.vendor(value)};" in statements
        assert f"show virtualDisk [{quoting.vendor(value)}];" in statements


def test_without_an_invoke_line_a_vendor_step_is_done_by_hand(tmp_path):
    bed = _platform(_storage_bed("plain"), "windows")
    meth = generate(bed)
    for step in meth.steps():
        for c in step.automation:
            c.invoke = None
    steps = [s for s in run_steps(meth, {"arr": "local"}) if s.target == "arr" and s.section == "storage"]
    assert steps and all(s.manual for s in steps if s.template.startswith("array/"))
    assert any("invoke" in s.why_manual for s in steps)


# ====================================================== PowerShell: one string literal per value

def _powershell_parser():
    ts = pytest.importorskip("tree_sitter")
    tsp = pytest.importorskip("tree_sitter_powershell")
    return ts.Parser(ts.Language(tsp.language()))


def _string_literals(node, out: list[bytes]) -> list[bytes]:
    if node.type == "string_literal":
        out.append(node.text)
    for child in node.children:
        _string_literals(child, out)
    return out


@pytest.mark.parametrize("os_text", ["Windows Server 2012 R2", "Windows Server 2008 R2"])
@pytest.mark.parametrize("name", TABLE)
def test_powershell_scripts_parse_and_hold_each_value_in_one_string_literal(name, os_text, tmp_path):
    parser = _powershell_parser()
    _, values = _values(tmp_path)
    value = values[name]
    meth = generate(_platform(_storage_bed(value), "windows", os_text))
    scripts = [x for s in meth.steps() for c in s.automation if c.shell == "powershell"
               for x in (c.script, c.verify) if x]
    assert len(scripts) > 20
    quoted = quoting.powershell(value) if "\x00" not in value else None
    carried = 0
    for script in scripts:
        tree = parser.parse(script.encode())
        assert not tree.root_node.has_error, script
        if quoted is None:
            continue
        literals = _string_literals(tree.root_node, [])
        # every place the value is written is one whole string literal holding exactly the value
        occurrences = script.count(quoted)
        assert sum(1 for lit in literals if lit == quoted.encode()) >= occurrences, script
        carried += occurrences
    if quoted is not None:
        assert carried >= 5, "the value did not reach the PowerShell scripts"


# ====================================================== Ansible: the exported playbook, really run

@pytest.mark.slow
@pytest.mark.timeout(450)     # 30 hosts, each step with its marker and check: over 2 minutes on a busy machine
def test_exported_playbook_runs_with_every_value_and_templates_none_of_them(lab, tmp_path):
    ansible = Path(sys.executable).with_name("ansible-playbook")
    if not ansible.exists():
        pytest.skip("ansible-playbook is not installed in this environment (pip install ansible-core)")
    canary, values = _values(tmp_path)
    h = lab.hosts["h1"]
    good = {"transport": "ssh", "address": h.address, "port": h.port, "user": "root",
            "key_file": str(lab.client_key_path)}
    doc = yaml.safe_load(linux_bed_text([{"id": "plain"} | good], tmp_path / "marks"))
    bed = loads(yaml.safe_dump(doc), "ansible.yaml")
    template_server, template_access = bed.servers[0], bed.access[0]
    bed.servers, bed.access = [], []
    bed.bed.name = " | ".join(values.values())
    for k, (name, value) in enumerate(values.items()):
        # a host named by the value (host pattern, `when`, task names, step text) ...
        bed.servers.append(replace(template_server, id=value))
        bed.access.append(replace(template_access, host=value))
        # ... and hosts whose access fields are the value: they cannot be reached, and must not run it
        # (only for the values a connection setting could execute: every task is evaluated per host)
        if name not in ("command substitution", "backticks", "jinja", "ssh option", "newline"):
            continue
        for field in ("user", "key_file", "jump", "address"):
            hid = f"{field}{k}"
            bed.servers.append(replace(template_server, id=hid))
            bed.access.append(replace(template_access, host=hid, **{field: value}))
    steps = [s for s in run_steps(generate(bed, extra_dirs=[TEMPLATES]), {a.host: a.transport for a in bed.access})
             if s.template.endswith("#hello")]
    paths = export(bed, steps, tmp_path / "ansible")
    # no file copy per task; but no kept connection either: hosts that differ only by a hostile key
    # file or jump host would ride the first host's connection to the same address and not be refused
    env = os.environ | {"ANSIBLE_HOST_KEY_CHECKING": "True", "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORKS": "30",
                        "ANSIBLE_PIPELINING": "True",
                        "ANSIBLE_SSH_ARGS": f"-o UserKnownHostsFile={lab.known_hosts_path} -o IdentitiesOnly=yes",
                        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ans-local"), "ANSIBLE_REMOTE_TEMP": "/tmp/.ansible-tbs",
                        "ANSIBLE_TIMEOUT": "5"}
    r = subprocess.run([str(ansible), "-i", str(paths["inventory"]), str(paths["playbook"]),
                        "-e", f"ansible_python_interpreter={sys.executable}"],
                       capture_output=True, text=True, timeout=400, env=env, stdin=subprocess.DEVNULL,
                       cwd=tmp_path)
    _no_canary(canary)
    recap = {ln.split()[0]: ln for ln in r.stdout.split("PLAY RECAP", 1)[-1].splitlines() if ":" in ln}
    for value in values.values():
        if "\x00" in value:
            continue
        line = recap.get(file_name_for(value), "")
        # the include of the host's own task file, the marker folder, the step, its done marker, its check
        assert " ok=5 " in line and "failed=0" in line and "unreachable=0" in line, (r.stdout[-4000:], r.stderr[-3000:])
    # names are shown as written, never evaluated
    assert "lookup('pipe'" in r.stdout
    # the hosts whose connection settings are hostile were refused by ssh, without running anything
    hostile_settings = ("user", "key_file", "jump", "address")
    refused = {h: line for h, line in recap.items() if h.rstrip("0123456789") in hostile_settings}
    reached = [line for line in refused.values() if "unreachable=1" not in line]
    assert len(refused) == 20 and not reached, reached


# ====================================================== paths derived from values

@pytest.mark.parametrize("name", TABLE)
def test_derived_file_names_stay_inside_their_folder(name, tmp_path):
    _, values = _values(tmp_path)
    value = values[name]
    base = tmp_path / "base"
    base.mkdir()
    child = safe_child(base, file_name_for(value))
    assert child.parent == base.resolve()
    assert file_name_for(value) == file_name_for(value) and file_name_for(value) not in (".", "..")


@pytest.mark.parametrize("bad", ["..", ".", "", "../x", "a/../../x", "/etc", "x\x00y"])
def test_safe_child_refuses_a_name_that_leaves_its_folder(bad, tmp_path):
    with pytest.raises(PathEscapeError):
        safe_child(tmp_path, bad)


def test_safe_child_follows_a_symbolic_link_before_it_decides(tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "link").symlink_to(tmp_path)
    with pytest.raises(PathEscapeError):
        safe_child(tmp_path / "base", "link")


def test_a_local_host_named_dot_dot_gets_its_own_folder(tmp_path, monkeypatch):
    """Before: `..` ran its scripts in the state directory itself, `.` in local-hosts/."""
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))
    folders = set()
    for host in ("..", ".", "a/b", "a_b"):
        t = LocalTransport(host)
        t.open()
        assert t.workdir.parent == (tmp_path / "state" / "local-hosts").resolve()
        folders.add(t.workdir)
    assert len(folders) == 4


# ====================================================== terminal output

@pytest.mark.parametrize("command", [["run", "--dry-run", "--templates", TEMPLATES], ["validate"]])
def test_terminal_output_shows_escape_codes_as_text(command, tmp_path, capsys):
    from app.cli import main
    evil = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202e"
    doc = yaml.safe_load(linux_bed_text([{"id": "h1", "transport": "local"}], tmp_path / f"marks{evil}"))
    doc["bed"]["name"] = f"bed {evil}"
    path = tmp_path / f"bed{evil}.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=False), encoding="utf-8")
    main([command[0], str(path), *command[1:]])
    out, err = capsys.readouterr()
    for ch in "\x1b\x07\x9b\u202e":
        assert ch not in out + err
    assert "\\x1b" in out + err
