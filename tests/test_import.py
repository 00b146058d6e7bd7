"""Hosts in from a CSV sheet and an Ansible inventory: one undoable edit, a dry run that changes
nothing, file:line for every bad row and nothing half-imported, hostile values refused or kept
as plain data.  The inventory reader is checked against ansible-core's own (`ansible-inventory`)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from resources import example_path
from topology import roundtrip
from topology.fileformat import loads
from topology.importing import plan_file
from topology.importing.ansible_inventory import read_inventory

CLI = Path(sys.executable).with_name("testbed-studio")
ANSIBLE_INVENTORY = Path(sys.executable).with_name("ansible-inventory")
EXAMPLE = "md3000i-hyperv-cluster"

GOOD_CSV = """host,role,model,memory_gb,adapter,port,address,network,roles,mtu
R710-3,hypervisor,Dell PowerEdge R710,48,NIC1,SAN1,192.168.130.221/24,iSCSI-A,iscsi,9000
R710-3,,,,NIC1,SAN2,192.168.131.221/24,iSCSI-B,iscsi,9000
R710-1,,,64,,,,,,
R710-1,,,,,SAN1,192.168.130.209/24,,,
"""


@pytest.fixture
def lab(tmp_path) -> Path:
    path = tmp_path / "lab.yaml"
    shutil.copy(example_path(EXAMPLE), path)
    return path


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=300)


def test_a_csv_dry_run_says_what_would_change_and_writes_nothing(lab, tmp_path):
    before = lab.read_bytes()
    proc = cli("import", str(lab), str(write(tmp_path, "hosts.csv", GOOD_CSV)), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:5] == [
        "+ server R710-3 (hypervisor)",
        "+ port R710-3:SAN1 on NIC1  192.168.130.221/24  network iSCSI-A  iscsi  MTU 9000",
        "+ port R710-3:SAN2 on NIC1  192.168.131.221/24  network iSCSI-B  iscsi  MTU 9000",
        "~ server R710-1: memory_gb 48 -> 64",
        "~ port R710-1:SAN1: address '192.168.130.201/24' -> '192.168.130.209/24'"]
    assert "dry run" in proc.stdout and lab.read_bytes() == before


def test_a_csv_import_changes_the_bed_and_keeps_the_files_comments(lab, tmp_path):
    before = lab.read_text(encoding="utf-8")
    proc = cli("import", str(lab), str(write(tmp_path, "hosts.csv", GOOD_CSV)))
    assert proc.returncode == 0, proc.stderr
    after = lab.read_text(encoding="utf-8")
    bed = loads(after)
    new = next(s for s in bed.servers if s.id == "R710-3")
    assert [(p.name, p.address, p.network, p.mtu) for ad in new.adapters for p in ad.ports] == [
        ("SAN1", "192.168.130.221/24", "iSCSI-A", 9000), ("SAN2", "192.168.131.221/24", "iSCSI-B", 9000)]
    old = next(s for s in bed.servers if s.id == "R710-1")
    assert old.memory_gb == 64 and old.adapters[0].ports[0].address == "192.168.130.209/24"
    # every comment and every untouched line of the hand-written file is still there
    import difflib
    gone = [d[2:] for d in difflib.ndiff(before.splitlines(), after.splitlines()) if d.startswith("- ")]
    assert gone == ["    memory_gb: 48", "            address: 192.168.130.201/24"]


BAD_ROWS = [
    ("host,role,colour\nh1,hypervisor,red\n", 1, "unknown column(s): colour"),
    ("role,port\nhypervisor,p1\n", 1, "no `host` column"),
    ("host,memory_gb\nh1,lots\n", 2, "memory_gb: expected a number"),
    ("host,memory_gb\nh1,1e400\n", 2, "memory_gb: '1e400' is not a finite number"),
    ("host,port,mtu\nh1,p1,70000\n", 2, "mtu: 70000 is too large"),
    ("host,port,vlan\nh1,p1,99999999999999999999\n", 2, "out of range"),
    ("host,role\nh1,database\n", 2, "role: 'database' is not one of"),
    ("host,port,address\nh1,p1,10.0.0.300/24\n", 2, "is not an IP address with a prefix"),
    ("host,port,address\nh1,p1,$(reboot)\n", 2, "is not an IP address with a prefix"),
    ("host,port,network\nh1,p1,nowhere\n", 2, "'nowhere' is not a network of the bed"),
    ("host,port\n../etc,p1\n", 2, "cannot be an id"),
    ("host,port\nh1/x,p1\n", 2, "cannot be an id"),
    ("host,model\nh1,\"evil\x1b[31m\"\n", 2, "control characters are not allowed"),
    ("host,port\nh1,p1\nh1,p1\n", 3, "port h1:p1 appears twice (first on line 2)"),
    ("host,role\nh1,hypervisor\nh1,load_client\n", 3, "role: 'load_client' differs from 'hypervisor' on line"),
    ("host,port\nh1,p1,extra\n", 2, "3 cells, the header has 2"),
    ("host,port,roles\nh1,p1,iscsi;backup-power\n", 2, "roles: 'backup-power' is not one of"),
]


@pytest.mark.parametrize("text,line,words", BAD_ROWS, ids=[w for _t, _l, w in BAD_ROWS])
def test_a_bad_row_is_named_with_its_line_and_nothing_is_imported(lab, tmp_path, text, line, words):
    # a good host first: it must not be half-imported either
    good = "R710-9,hypervisor\n" if text.startswith("host,role\n") else ""
    sheet = write(tmp_path, "hosts.csv", text if not good else text.replace("\n", "\n" + good, 1))
    if good:
        line += 1
    before = lab.read_bytes()
    proc = cli("import", str(lab), str(sheet))
    assert proc.returncode == 2
    assert f"hosts.csv:{line}" in proc.stderr and words in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "unchanged" in proc.stderr
    assert lab.read_bytes() == before


def test_hostile_text_that_is_a_valid_value_is_kept_as_data(lab, tmp_path):
    sheet = write(tmp_path, "hosts.csv", "host,model,os,port,label\n"
                                          "h1;reboot,\"$(rm -rf ~); `id` | tee\",'; DROP TABLE x;--,p1,\"a\"\"b\"\n")
    proc = cli("import", str(lab), str(sheet))
    assert proc.returncode == 0, proc.stderr
    bed = loads(lab.read_text(encoding="utf-8"))
    host = next(s for s in bed.servers if s.id == "h1;reboot")
    assert host.model == "$(rm -rf ~); `id` | tee" and host.os == "'; DROP TABLE x;--"
    assert host.adapters[0].ports[0].label == 'a"b'


INVENTORY_INI = """# the lab's inventory
[hypervisors]
R710-[1:2] ansible_host=192.168.1.20 ansible_user=Administrator

[load_clients]
client[01:02].lab ansible_host=10.0.0.9
client03.lab:2200 ansible_user=tester

[windows:children]
hypervisors

[windows:vars]
ansible_connection=winrm
ansible_winrm_transport=ntlm
ansible_winrm_server_cert_validation=ignore
ansible_password=not-kept

[load_clients:vars]
ansible_user=loader
ansible_port=2222
ansible_ssh_common_args='-o ProxyJump=bastion.lab'
"""

INVENTORY_YAML = """all:
  children:
    hypervisors:
      hosts:
        R710-[1:2]:
          ansible_host: 192.168.1.20
          ansible_user: Administrator
    load_clients:
      hosts:
        client[01:02].lab:
          ansible_host: 10.0.0.9
        client03.lab:
          ansible_port: 2200
          ansible_user: tester
      vars:
        ansible_user: loader
        ansible_port: 2222
        ansible_ssh_common_args: -o ProxyJump=bastion.lab
    windows:
      children:
        hypervisors:
      vars:
        ansible_connection: winrm
        ansible_winrm_transport: ntlm
        ansible_winrm_server_cert_validation: ignore
        ansible_password: not-kept
"""


def _access(records) -> dict:
    return {r.host: {k: c.text for k, c in r.access.items()} for r in records}


@pytest.mark.parametrize("text", [INVENTORY_INI, INVENTORY_YAML], ids=["ini", "yaml"])
def test_an_inventory_reads_as_ansible_reads_it(tmp_path, text):
    records, problems = read_inventory(text)
    assert problems == []
    access = _access(records)
    assert set(access) == {"R710-1", "R710-2", "client01.lab", "client02.lab", "client03.lab"}
    # ansible-core's own reading of the same file: hosts and the variables that reach them
    inv = write(tmp_path, "inventory.ini" if text is INVENTORY_INI else "inventory.yaml", text)
    proc = subprocess.run([str(ANSIBLE_INVENTORY), "-i", str(inv), "--list"], capture_output=True, text=True,
                          timeout=300, env={"ANSIBLE_HOME": str(tmp_path), "HOME": str(tmp_path),
                                            "PATH": "/usr/bin:/bin", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0"})
    assert proc.returncode == 0, proc.stderr
    hostvars = json.loads(proc.stdout)["_meta"]["hostvars"]
    assert set(hostvars) == set(access)
    for host, got in access.items():
        theirs = hostvars[host]
        assert got.get("address", "") == str(theirs.get("ansible_host", ""))
        assert got.get("user", "") == str(theirs.get("ansible_user", ""))
        assert got.get("port", "") == str(theirs.get("ansible_port", ""))
        connection = theirs.get("ansible_connection", "ssh")
        assert got["transport"] == {"winrm": "winrm", "ssh": "ssh"}[connection]
    assert access["client03.lab"]["port"] == "2200" and access["client01.lab"]["port"] == "2222"
    assert access["client01.lab"]["jump"] == "bastion.lab"
    assert access["client01.lab"]["credential"] == "load_clients"      # the group's account, shared
    assert "credential" not in access["client03.lab"]                   # its own account
    assert access["R710-1"]["verify_tls"] == "false"


def test_an_inventory_becomes_servers_and_access_entries(lab, tmp_path):
    inv = write(tmp_path, "inventory.ini", INVENTORY_INI)
    proc = cli("import", str(lab), str(inv))
    assert proc.returncode == 0, proc.stderr
    assert "ansible_password was not imported" in proc.stdout and "not-kept" not in lab.read_text()
    bed = loads(lab.read_text(encoding="utf-8"))
    servers = {s.id: s for s in bed.servers}
    assert servers["client01.lab"].role == "load_client" and servers["R710-1"].role == "hypervisor"
    assert servers["R710-1"].platform == "windows"
    assert servers["client02.lab"].attributes == {"Ansible groups": "load_clients"}
    access = {a.host: a for a in bed.access}
    assert access["R710-2"].transport == "winrm" and access["R710-2"].verify_tls is False
    assert (access["client03.lab"].port, access["client03.lab"].user) == (2200, "tester")
    assert access["client02.lab"].jump == "bastion.lab" and access["client02.lab"].credential == "load_clients"
    # importing again changes nothing
    again = cli("import", str(lab), str(inv))
    assert again.returncode == 0 and "nothing to change" in again.stdout


@pytest.mark.parametrize("text,line,words", [
    ("[web\nh1\n", 1, "is not a section header"),
    ("[web]\nh1 ansible_port=99999\n", 2, "99999 is too large"),
    ("[web]\nh1 ansible_connection=telnet\n", 2, "'telnet' is not one of"),
    ("[web]\nh1 ansible_host\n", 2, "is not key=value"),
    ("[web]\nweb[01:zz]\n", 2, "cannot expand the range"),
    ("all:\n  hosts:\n    h1:\n      ansible_port: lots\n", 4, "expected a whole number"),
    ("all: &a\n  children:\n    x: *a\n", 3, "inside the node it names"),
])
def test_a_bad_inventory_line_is_named_and_nothing_is_imported(lab, tmp_path, text, line, words):
    inv = write(tmp_path, "inventory", text)
    before = lab.read_bytes()
    proc = cli("import", str(lab), str(inv), "--format", "ansible")
    assert proc.returncode == 2
    assert f"inventory:{line}" in proc.stderr and words in proc.stderr, proc.stderr
    assert lab.read_bytes() == before and "Traceback" not in proc.stderr


def test_an_alias_bomb_in_an_inventory_is_refused_quickly(lab, tmp_path):
    rows = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    rows += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    inv = write(tmp_path, "bomb.yaml", "all:\n  vars:\n    " + "\n    ".join(rows) + "\n")
    proc = cli("import", str(lab), str(inv))
    assert proc.returncode == 2 and "aliases expand" in proc.stderr


def test_the_planner_leaves_the_bed_untouched_until_the_edit_is_applied(tmp_path):
    bed = loads(example_path(EXAMPLE).read_text(encoding="utf-8"))
    before = roundtrip.plain(bed)
    plan = plan_file(bed, write(tmp_path, "hosts.csv", GOOD_CSV))
    assert plan.edit is not None and roundtrip.plain(bed) == before
    plan.edit.apply()
    assert any(s.id == "R710-3" for s in bed.servers)
    plan.edit.revert()
    assert roundtrip.plain(bed) == before


def test_file_import_in_the_designer_is_one_undoable_step(qtbot, tmp_path, lab):
    from dialogs import answer_modal, type_file_name
    from PySide6.QtWidgets import QPushButton

    from widgets.main_window import MainWindow
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.document.open(lab)
    steps = window.document.undo_stack.count()

    def choose_then_press(path: Path, button: str, seen: list):
        """Type the file name; then, in the next dialog, press `button`."""
        def act(dialog) -> None:
            type_file_name(path)(dialog)
            seen.append(answer_modal(lambda d: next(b for b in d.findChildren(QPushButton)
                                                    if b.text() == button).click(), timeout_s=60))
        return act

    seen: list = []
    chose = answer_modal(choose_then_press(write(tmp_path, "hosts.csv", GOOD_CSV), "Import", seen))
    window.actions_by_name["import"].trigger()
    assert chose and seen and seen[0] and seen[0][0].title == "Import hosts.csv"
    assert window.document.undo_stack.count() == steps + 1          # one step
    assert any(s.id == "R710-3" for s in window.document.bed.servers)
    assert "R710-3" in window.canvas.devices
    window.document.undo_stack.undo()
    assert not any(s.id == "R710-3" for s in window.document.bed.servers)
    assert next(s for s in window.document.bed.servers if s.id == "R710-1").memory_gb == 48
    # a sheet with a bad row: the problems are listed with their lines, and nothing changes
    seen = []
    bad = write(tmp_path, "bad.csv", "host,port,mtu\nR710-4,p1,9000\nR710-5,p1,70000\n")
    chose = answer_modal(choose_then_press(bad, "Close", seen))
    window.actions_by_name["import"].trigger()
    assert chose and seen and seen[0] and seen[0][0].title == "Cannot import bad.csv"
    assert not any(s.id in ("R710-4", "R710-5") for s in window.document.bed.servers)
    assert window.document.undo_stack.count() == steps + 1 and window.document.undo_stack.index() == steps
