"""Imports tried on files the importer was not written around: Ansible inventories copied from
public repositories (tests/data/inventories, sources in its README), each read both by the
importer and by ansible-core's own `ansible-inventory`; hostile values in inventories; CSV
sheets as spreadsheets really save them."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from resources import example_path
from topology.fileformat import loads
from topology.importing import plan_file
from topology.importing.ansible_inventory import read_inventory

ANSIBLE_INVENTORY = Path(sys.executable).with_name("ansible-inventory")
INVENTORIES = Path(__file__).parent / "data" / "inventories"
REAL_INVENTORIES = sorted(p.name for p in INVENTORIES.iterdir() if p.name != "README.md")
EXAMPLE = "md3000i-hyperv-cluster"


def lab_bed():
    return loads(example_path(EXAMPLE).read_text(encoding="utf-8"))


def plan_text(tmp_path: Path, name: str, text: str, bed=None):
    """What importing `text`, saved as `name`, would change in `bed` (the example lab by default)."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return plan_file(lab_bed() if bed is None else bed, path)


def ansible_reading(path: Path, home: Path) -> dict:
    """ansible-core's reading of an inventory: {host: its variables}."""
    proc = subprocess.run([str(ANSIBLE_INVENTORY), "-i", str(path), "--list"], capture_output=True, text=True,
                          timeout=300, env={"ANSIBLE_HOME": str(home), "HOME": str(home), "PATH": "/usr/bin:/bin",
                                            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0"})
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    hosts = {h for group, body in listed.items() if group != "_meta" for h in body.get("hosts", [])}
    return {h: listed["_meta"]["hostvars"].get(h, {}) for h in hosts}


def same_as_ansible(path: Path, home: Path) -> dict:
    records, problems = read_inventory(path.read_text(encoding="utf-8"))
    assert problems == []
    ours = {r.host: {k: c.text for k, c in r.access.items()} for r in records}
    theirs = ansible_reading(path, home)
    assert set(ours) == set(theirs)
    for host, access in ours.items():
        for var, key in (("ansible_host", "address"), ("ansible_port", "port"), ("ansible_user", "user")):
            assert access.get(key, "") == str(theirs[host].get(var, "")), (host, var)
    return ours


@pytest.mark.parametrize("name", REAL_INVENTORIES)
def test_a_real_inventory_gives_the_hosts_and_connections_ansible_gives(tmp_path, name):
    same_as_ansible(INVENTORIES / name, tmp_path)


def test_a_range_with_no_start_counts_from_zero_as_ansible_does(tmp_path):
    ours = same_as_ansible(INVENTORIES / "ansible-examples-hosts", tmp_path)
    assert {f"mail{i}.example.com" for i in range(6)} <= set(ours)
    assert not any("[" in host for host in ours)


@pytest.mark.parametrize("suffix,text", [
    (".ini", "[storage]\n2001:db8::10\nfe80::1%eth0\narray-a:2222\nweb[01:02]:2200\n"
             "san1 ansible_host=2001:db8::30\n"),
    (".yaml", "storage:\n  hosts:\n    '[2001:db8::20]:2222':\n    2001:db8::10:\n    'fe80::1%eth0':\n"
              "    array-a:2222:\n    web[01:02]:2200:\n"),
])
def test_an_ipv6_host_is_one_host_not_a_name_and_a_port(tmp_path, suffix, text):
    inventory = tmp_path / f"inventory{suffix}"
    inventory.write_text(text, encoding="utf-8")
    ours = same_as_ansible(inventory, tmp_path)
    assert "2001:db8::10" in ours and "port" not in ours["2001:db8::10"]
    assert ours["array-a"]["port"] == "2222" and ours["web02"]["port"] == "2200"


def test_a_yaml_group_whose_hosts_is_one_name_reads_as_ansible_reads_it(tmp_path):
    # Ansible's own YAML inventory example writes `hosts: test5` (no colon) for one host
    ours = same_as_ansible(INVENTORIES / "ansible-yaml-plugin-example.yaml", tmp_path)
    assert {"test1", "test5", "test6"} <= set(ours) and ours["test4"]["address"] == "127.0.0.1"
    records, _problems = read_inventory((INVENTORIES / "ansible-yaml-plugin-example.yaml").read_text())
    groups = {r.host: r.attributes.get("Ansible groups") for r in records}
    assert groups["test1"] == "last_group" and groups["test5"] == "group_x"


@pytest.mark.parametrize("text,line,words", [
    ("all:\n  vars: [ansible_user, admin]\n", 2, "vars of 'all' are not a mapping"),
    ("all:\n  children: [web, db]\n", 2, "children of 'all' are not a mapping"),
    ("all:\n  children:\n    web:\n      hosts: [w1, w2]\n", 4, "hosts of 'web' are not a mapping"),
])
def test_a_yaml_inventory_section_written_as_a_list_is_named_with_its_line(tmp_path, text, line, words):
    plan = plan_text(tmp_path, "inventory.yaml", text)
    assert plan.edit is None and [(p.line, p.message) for p in plan.problems] == [(line, words)]


VAULTED = """all:
  vars:
    ansible_user: admin
    ansible_become_password: !vault |
          $ANSIBLE_VAULT;1.1;AES256
          62313365396662343061393464336163383764373764613633653634306231386433626436623361
  children:
    k8s:
      children:
        masters:
          hosts:
            m1: { ansible_host: 192.168.1.11 }
        workers:
          hosts:
            w[1:2]:
          vars:
            ansible_port: 2200
            ansible_user: !vault |
              $ANSIBLE_VAULT;1.1;AES256
              3861636662303632383530373966306165616464343463393636313032366662373638613330
"""


def test_a_vault_encrypted_value_does_not_stop_an_inventory_and_is_never_imported(tmp_path):
    bed = lab_bed()
    plan = plan_text(tmp_path, "inventory.yaml", VAULTED, bed)
    assert plan.problems == [] and plan.edit is not None
    plan.edit.apply()
    access = {a.host: a for a in bed.access}
    assert (access["m1"].address, access["m1"].user) == ("192.168.1.11", "admin")
    assert (access["w1"].port, access["w1"].user) == (2200, "")          # the encrypted user is left out
    text = str([dataclasses.asdict(a) for a in bed.access])
    assert "ANSIBLE_VAULT" not in text and "6231336539" not in text
    notes = "\n".join(plan.notes)
    assert "w1: ansible_user (line 18) is vault-encrypted" in notes
    assert "ansible_become_password was not imported" in notes


@pytest.mark.parametrize("suffix,text,line", [
    (".ini", "[web]\nw1 ansible_host=\"{{ lookup('pipe','id') }}\" ansible_user='{{ lookup(\"env\",\"USER\") }}'\n",
     2),
    (".yaml", "web:\n  hosts:\n    w1:\n      ansible_host: \"{{ lookup('pipe','id') }}\"\n"
              "      ansible_user: \"{% if x %}root{% endif %}\"\n", 4),
])
def test_a_jinja_connection_value_is_left_out_and_said_never_evaluated_or_kept(tmp_path, suffix, text, line):
    bed = lab_bed()
    plan = plan_text(tmp_path, f"inventory{suffix}", text, bed)
    assert plan.problems == [] and plan.edit is not None
    plan.edit.apply()
    w1 = next(a for a in bed.access if a.host == "w1")
    assert (w1.address, w1.user) == ("", "")
    assert any(f"w1: ansible_host (line {line}) is a Jinja template" in n for n in plan.notes), plan.notes


@pytest.mark.parametrize("value,words", [
    ("https://array.example.com:8443/api", "is a URL"),
    ("$(id)", "is not a host name or IP address"),
    ("'a b'", "is not a host name or IP address"),
    ("`reboot`", "is not a host name or IP address"),
    ("../../etc/passwd", "is not a host name or IP address"),
])
def test_an_address_that_is_no_host_name_is_refused_with_its_line(tmp_path, value, words):
    plan = plan_text(tmp_path, "inventory.ini", f"[web]\nw0 ansible_host=10.0.0.1\nw1 ansible_host={value}\n")
    assert plan.edit is None and len(plan.problems) == 1
    assert plan.problems[0].line == 3 and words in plan.problems[0].message, plan.problems


@pytest.mark.parametrize("value", ["10.0.0.1", "2001:db8::1", "fe80::1%eth0", "array-a.lab.example.com",
                                   "san_01", "localhost"])
def test_host_names_and_addresses_of_every_form_are_taken(tmp_path, value):
    plan = plan_text(tmp_path, "inventory.ini", f"[web]\nw1 ansible_host={value}\n")
    assert plan.problems == [] and any(value in c for c in plan.changes)


# ---------------------------------------------------------------- CSV as spreadsheets save it

SHEET_ROWS = [["host", "role", "adapter", "port", "address", "network", "mtu", "label"],
              ["R710-9", "hypervisor", "NIC1", "SAN1", "192.168.130.229/24", "iSCSI-A", "9000", "rack 4, shelf 2"],
              ["R710-9", "", "NIC1", "SAN2", "192.168.131.229/24", "iSCSI-B", "9000", ""]]
SHEET_CHANGES = ["+ server R710-9 (hypervisor)",
                 "+ port R710-9:SAN1 on NIC1  192.168.130.229/24  network iSCSI-A  MTU 9000",
                 "+ port R710-9:SAN2 on NIC1  192.168.131.229/24  network iSCSI-B  MTU 9000"]


def sheet(rows: list[list[str]], sep: str) -> str:
    quoted = [[f'"{c}"' if sep in c or "," in c else c for c in row] for row in rows]
    return "\r\n".join(sep.join(row) for row in quoted) + "\r\n"


def plan_sheet(tmp_path: Path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return plan_file(lab_bed(), path)


@pytest.mark.parametrize("name,sep", [("excel-de.csv", ";"), ("excel.csv", ","), ("export.tsv", "\t"),
                                      ("tabs.csv", "\t")])
def test_a_sheet_saved_with_semicolons_or_tabs_imports_like_one_with_commas(tmp_path, name, sep):
    # Excel in most European locales saves "CSV" with ';', with a BOM and CRLF
    plan = plan_sheet(tmp_path, name, b"\xef\xbb\xbf" + sheet(SHEET_ROWS, sep).encode("utf-8"))
    assert plan.problems == [] and plan.changes == SHEET_CHANGES
    plan.edit.apply()


def test_header_names_in_any_case_with_spaces_or_hyphens_are_the_documented_columns(tmp_path):
    rows = [["Host", " Role ", "Memory GB", "Management-Address", "Speed Gbps", "Port"],
            ["R710-9", "hypervisor", "96", "10.0.0.9", "10", "SAN1"]]
    plan = plan_sheet(tmp_path, "hosts.csv", sheet(rows, ",").encode())
    assert plan.problems == [], plan.problems
    assert plan.changes[0] == "+ server R710-9 (hypervisor)"


def test_empty_cells_past_the_last_column_are_ignored_but_a_value_there_is_named(tmp_path):
    rows = [row + ["", ""] for row in SHEET_ROWS]
    rows[0] = SHEET_ROWS[0] + [""]          # Excel keeps a stray empty header cell too
    plan = plan_sheet(tmp_path, "hosts.csv", sheet(rows, ",").encode())
    assert plan.problems == [] and plan.changes == SHEET_CHANGES
    rows[2][len(SHEET_ROWS[0])] = "stray"     # under the header's empty cell
    plan = plan_sheet(tmp_path, "hosts.csv", sheet(rows, ",").encode())
    assert [(p.line, p.message) for p in plan.problems] == [(3, "a value ('stray') in a column with no name")]


@pytest.mark.parametrize("data,line,words", [
    (b"", 1, "the file is empty"),
    (b"\xef\xbb\xbf\r\n", 1, "the file is empty"),
    (b"host,port\r\n", None, "the file names no host"),
    (b"host;port;mtu\r\nh1;p1;90000\r\n", 2, "90000 is too large"),
    (b'host,port,label\r\nh1,p1,"rack 4\r\nshelf 2"\r\n', 2, "control characters"),
    (b'host,port\r\nh1,"p1\r\nh2,p2\r\n', 2, "cannot read this row"),     # not h2 swallowed into a name
    (b'host,port\r\nh1,p1\r\n"h3,p3\r\n', 3, "cannot read this row"),
    (b'host,port\r\nh1,"p1\r\nx"\r\n', 2, "control characters"),
    (b'host,adapter,port\r\nh1,"nic\r\n1",p1\r\n', 2, "control characters"),
])
def test_a_sheet_with_nothing_or_a_bad_row_is_refused_with_its_line(tmp_path, data, line, words):
    plan = plan_sheet(tmp_path, "hosts.csv", data)
    assert plan.edit is None and plan.problems
    assert plan.problems[0].line == line and words in plan.problems[0].message, plan.problems


@pytest.mark.parametrize("line", ["h[1:50000]-[1:50000]", "h[1:99999999999]", "h[a:z][1:9999]",
                                  "h[1:9]-[1:9]-[1:9]-[1:9]-[1:9]-[1:9]-[1:9]"])
def test_host_ranges_that_stand_for_too_many_hosts_are_refused_at_once(tmp_path, line):
    started = time.monotonic()
    plan = plan_text(tmp_path, "inventory.ini", f"[web]\nweb01\n{line}\n")
    assert time.monotonic() - started < 10          # not minutes and gigabytes of names first
    assert plan.edit is None and [(p.line, "more than 100,000 hosts" in p.message) for p in plan.problems] == \
        [(3, True)], plan.problems


def test_ranges_within_the_bound_expand_in_full(tmp_path):
    records, problems = read_inventory("[web]\nrack[1:2]-node[01:03]\n")
    assert problems == [] and [r.host for r in records] == [
        "rack1-node01", "rack1-node02", "rack1-node03", "rack2-node01", "rack2-node02", "rack2-node03"]


def test_groups_nested_thousands_deep_are_refused_with_a_line_not_a_recursion_error(tmp_path):
    # children listed deepest group first: ansible-inventory itself dies of a RecursionError here
    sections = ["[g3000]\nh1\n"] + [f"[g{i}:children]\ng{i + 1}\n" for i in reversed(range(3000))]
    plan = plan_text(tmp_path, "inventory.ini", "".join(sections))
    assert plan.edit is None and len(plan.problems) == 1
    assert "groups nested more than 50 deep" in plan.problems[0].message and plan.problems[0].line


def test_groups_that_name_each_other_as_children_still_import(tmp_path):
    records, problems = read_inventory("[a:children]\nb\n[b:children]\na\n[a]\nh1\n[b:vars]\nansible_user=bee\n")
    assert problems == [] and [(r.host, r.access["user"].text) for r in records] == [("h1", "bee")]


@pytest.mark.parametrize("value,words", [
    ("$(reboot)", "is not a host name or IP address"),
    ("https://h1.lab/", "is a URL"),
    ("`id`.lab", "is not a host name or IP address"),
    ("10.0.0.300/24", "is not a host name or IP address"),
])
def test_a_management_address_in_a_sheet_that_is_no_host_is_refused_with_its_line(tmp_path, value, words):
    plan = plan_sheet(tmp_path, "hosts.csv", f"host,management_address\nh0,10.0.0.9/24\nh1,{value}\n".encode())
    assert plan.edit is None and [(p.line, words in p.message) for p in plan.problems] == [(3, True)], plan.problems


def test_management_addresses_of_every_form_are_taken_from_a_sheet(tmp_path):
    sheet_text = "host,management_address\nh1,10.0.0.9/24\nh2,2001:db8::9/64\nh3,ilo-h3.lab\nh4,10.0.0.4\n"
    plan = plan_sheet(tmp_path, "hosts.csv", sheet_text.encode())
    assert plan.problems == [] and len(plan.changes) == 4


def test_a_proxycommand_bastion_is_said_not_silently_dropped(tmp_path):
    # as inventories for hosts behind a bastion commonly write it
    plan = plan_text(tmp_path, "hosts.ini",
                     "[internal]\nweb-1 ansible_host=10.10.0.5\n\n[internal:vars]\nansible_user=user\n"
                     "ansible_ssh_common_args='-o ProxyCommand=\"ssh -W %h:%p -q user@178.154.222.252\"'\n")
    assert plan.problems == []
    assert any("web-1: its SSH goes through a ProxyCommand" in n and "line 6" in n for n in plan.notes), plan.notes


def test_excels_sep_line_names_the_separator_and_lines_still_count_from_the_top(tmp_path):
    plan = plan_sheet(tmp_path, "hosts.csv", b"sep=;\r\n" + sheet(SHEET_ROWS, ";").encode())
    assert plan.problems == [] and plan.changes == SHEET_CHANGES
    plan = plan_sheet(tmp_path, "hosts.csv", b"sep=;\r\nhost;colour\r\nh1;red\r\n")
    assert [(p.line, p.message) for p in plan.problems] == [(2, "unknown column(s): colour")]
    plan = plan_sheet(tmp_path, "hosts.csv", b"sep=,\r\nhost,port,mtu\r\nh1,p1,9000\r\nh1,p2,90000\r\n")
    assert [p.line for p in plan.problems] == [4]


def test_whole_numbers_a_sheet_writes_with_decimals_are_whole_numbers(tmp_path):
    plan = plan_sheet(tmp_path, "hosts.csv", b"host,memory_gb,port,mtu,vlan\r\nh1,96.0,p1,9000.0,100.00\r\n")
    assert plan.problems == [] and plan.changes[1].endswith("MTU 9000  VLAN 100")
    plan = plan_sheet(tmp_path, "hosts.csv", b"host,port,mtu\r\nh1,p1,9000.5\r\nh2,p1,\"9,000\"\r\n")
    assert [(p.line, p.message.split(":")[0]) for p in plan.problems] == [(2, "mtu"), (3, "mtu")]


def test_a_sheet_excel_saved_in_the_windows_code_page_is_named_with_its_line(tmp_path):
    plan = plan_sheet(tmp_path, "hosts.csv", "host,model\r\nh1,Dell\r\nh2,Café R710\r\n".encode("cp1252"))
    assert plan.edit is None and [p.line for p in plan.problems] == [3]
    assert "not UTF-8 text: byte 0xe9 in 'h2,Caf\ufffd R710'" in plan.problems[0].message
    assert "CSV UTF-8" in plan.problems[0].hint


def test_excels_unicode_text_export_utf16_with_tabs_imports(tmp_path):
    rows = [row[:] for row in SHEET_ROWS]
    rows[1][-1] = "Café — rack 4"
    plan = plan_sheet(tmp_path, "hosts.tsv", sheet(rows, "\t").encode("utf-16"))
    assert plan.problems == [] and plan.changes == SHEET_CHANGES
    plan.edit.apply()


WINDOWS_INVENTORY = """[windows]
win1 ansible_host=10.0.0.21
win2 ansible_host=10.0.0.22 ansible_connection=ssh ansible_shell_type=powershell
win3 ansible_host=10.0.0.23 ansible_connection=psrp ansible_psrp_protocol=http ansible_port=5985
win4 ansible_host=10.0.0.24 ansible_connection=psrp ansible_psrp_cert_validation=ignore ansible_psrp_auth=kerberos

[windows:vars]
ansible_connection=winrm
ansible_winrm_transport=ntlm
ansible_winrm_scheme=https
"""


def test_windows_over_openssh_and_psrp_hosts_come_in_as_windows_with_their_own_settings(tmp_path):
    bed = lab_bed()
    plan = plan_text(tmp_path, "windows.ini", WINDOWS_INVENTORY, bed)
    assert plan.problems == []
    plan.edit.apply()
    servers = {s.id: s for s in bed.servers}
    access = {a.host: a for a in bed.access}
    assert {h: servers[h].platform for h in ("win1", "win2", "win3", "win4")} == dict.fromkeys(
        ("win1", "win2", "win3", "win4"), "windows")
    assert access["win2"].transport == "ssh"
    assert (access["win3"].transport, access["win3"].winrm_scheme, access["win3"].port) == ("winrm", "http", 5985)
    assert (access["win4"].winrm_auth, access["win4"].verify_tls) == ("kerberos", False)
    assert (access["win1"].winrm_auth, access["win1"].verify_tls) == ("ntlm", True)


def test_a_template_in_a_variable_the_importer_does_not_read_is_no_note(tmp_path):
    plan = plan_text(tmp_path, "inventory.yaml",
                     "all:\n  vars:\n    ansible_python_interpreter: '{{ ansible_playbook_python }}'\n"
                     "    ansible_become_method: '{{ method }}'\n  hosts:\n    h1:\n      ansible_host: 10.0.0.1\n")
    assert plan.problems == [] and plan.notes == []


@pytest.mark.parametrize("name", ["hosts.txt", "hosts", "export.dat"])
def test_a_sheet_saved_under_another_extension_is_read_as_a_sheet(tmp_path, name):
    # Excel's "Unicode Text" is .txt; a sheet copied to a share often loses its extension
    plan = plan_sheet(tmp_path, name, sheet(SHEET_ROWS, "\t").encode("utf-16"))
    assert plan.problems == [] and plan.changes == SHEET_CHANGES


@pytest.mark.parametrize("text", ["web1\nweb2\n", "[web]\nhost,port\n", "host ansible_host=10.0.0.1\n"])
def test_an_inventory_without_extension_stays_an_inventory(tmp_path, text):
    path = tmp_path / "hosts"
    path.write_text(text, encoding="utf-8")
    from topology.importing import format_of
    assert format_of(path, None, text) == "ansible"


def test_a_sheets_capitals_on_a_listed_word_are_that_word(tmp_path):
    bed = lab_bed()
    plan = plan_text(tmp_path, "hosts.csv", "host,role,port,kind,roles\nh1,Hypervisor,p1,Ethernet,iSCSI;LAN\n", bed)
    assert plan.problems == []
    plan.edit.apply()
    port = next(s for s in bed.servers if s.id == "h1").adapters[0].ports[0]
    assert (port.kind, port.roles) == ("ethernet", ["iscsi", "lan"])
    assert plan_sheet(tmp_path, "bad.csv", b"host,role\nh1,Hyperviser\n").problems[0].line == 2   # still named
    bed = lab_bed()
    plan = plan_text(tmp_path, "win.ini", "[w]\nwin1 ansible_connection=winrm ansible_winrm_transport=NTLM\n", bed)
    assert plan.problems == []
    plan.edit.apply()
    assert next(a for a in bed.access if a.host == "win1").winrm_auth == "ntlm"
