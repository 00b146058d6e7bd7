"""The inventory: every host the export can reach, grouped by role and by platform.

A host with an `access:` entry gets its connection settings from it.  A server or VM without
one is still listed (a bed drawn before anyone set up access is what the built-in examples
are): it is reached the usual way for its platform, by its management address or its name,
and the export says so.  Windows releases ansible.windows cannot manage are left out, with
the reason.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from app.ansible.yaml_out import data
from topology.methodology.context import platform_of
from topology.methodology.selection import host_platform
from topology.model import Bed
from topology.os_release import parse_range
from topology.safe_paths import file_name_for

_GROUP_SAFE = re.compile(r"[^A-Za-z0-9_]")
# ansible.windows needs PowerShell 5.1 and a Windows release Microsoft still supports, read with
# the methodology's own version rules (topology.os_release: a client release compares as the
# server release of its kernel, Windows 10 as 2016): 2012 / 2012 R2 only with WMF 5.1 added,
# anything older cannot be managed at all.
ANSIBLE_WINDOWS_SUPPORTED = parse_range(">=2016")
ANSIBLE_WINDOWS_MANAGEABLE = parse_range(">=2012")

# where the done markers of scripts live: a variable of the platform groups, so a lab can move them
MARKERS_VARIABLE = "testbed_markers_dir"
LINUX_MARKERS = "~/.testbed-studio/done"
WINDOWS_MARKERS = "C:\\ProgramData\\TestbedStudio\\done"

# how a host without an access entry is reached, by platform (the user overrides it per host)
ASSUMED_TRANSPORT = {"linux": "ssh", "windows": "winrm"}
_PLATFORM_VARS = {
    "linux": {"ansible_connection": "ssh", MARKERS_VARIABLE: LINUX_MARKERS},
    "windows": {"ansible_connection": "winrm", "ansible_port": 5986, "ansible_winrm_scheme": "https",
                "ansible_winrm_transport": "ntlm", "ansible_shell_type": "powershell",
                MARKERS_VARIABLE: WINDOWS_MARKERS},
}


@dataclass
class Reach:
    """Which hosts the export can target and what it says about the others."""
    transports: dict[str, str] = field(default_factory=dict)     # host id -> ssh | winrm | local
    assumed: list[str] = field(default_factory=list)             # no access entry: reached by platform
    refused: dict[str, str] = field(default_factory=dict)        # host id -> why it is left out
    warnings: dict[str, str] = field(default_factory=dict)       # host id -> what to check first


def inventory_name(host_id: str) -> str:
    """The host's name in the inventory: its id when that is a plain name, else a plain name
    derived from it (the id is then kept as the variable `testbed_studio_id`)."""
    return file_name_for(host_id)


def group_name(name: str) -> str:
    g = _GROUP_SAFE.sub("_", name.lower()).strip("_") or "hosts"
    return g if not g[0].isdigit() else f"g_{g}"


def _components(bed: Bed) -> dict[str, tuple[str, str, str]]:
    """host id -> (role, platform, operating system text)."""
    out = {s.id: (s.role, platform_of(s), f"{s.os} {s.hypervisor}") for s in bed.servers}
    out |= {v.id: ("vm", platform_of(v), v.guest_os or "") for v in bed.vms}
    return out


def reach(bed: Bed) -> Reach:
    r = Reach()
    comps = _components(bed)
    for a in bed.access:
        r.transports[a.host] = a.transport
    for hid, (_, platform, _) in comps.items():
        if hid not in r.transports and platform in ASSUMED_TRANSPORT:
            r.transports[hid] = ASSUMED_TRANSPORT[platform]
            r.assumed.append(hid)
    for hid, (_, platform, _) in comps.items():
        if hid not in r.transports or platform != "windows" and r.transports[hid] != "winrm":
            continue
        release = host_platform(bed, hid).release
        named = release.describe()
        if release.family and release.family != "windows":
            continue
        if not release.version:
            r.warnings[hid] = (f"{named}: the bed does not say which Windows release this is; ansible.windows "
                               "manages Server 2016 or later (2012 / 2012 R2 with WMF 5.1), check it before running")
        elif not ANSIBLE_WINDOWS_MANAGEABLE.contains(release.version):
            r.refused[hid] = (f"{named}: ansible.windows needs PowerShell 5.1 on a Windows release it supports "
                              "(Server 2016 or later); the steps of these hosts are shown as manual, run them by "
                              "hand or with the built-in engine (testbed-studio run)")
        elif not ANSIBLE_WINDOWS_SUPPORTED.contains(release.version):
            r.warnings[hid] = (f"{named}: Server 2012 / 2012 R2 is out of Microsoft support and of ansible.windows' "
                               "tested releases; it works only with WMF 5.1 (PowerShell 5.1) installed")
    for hid in r.refused:
        r.transports.pop(hid, None)
    r.assumed = [h for h in r.assumed if h not in r.refused]
    return r


def inventory(bed: Bed, reached: Reach) -> dict:
    """Groups by role (hypervisor, load_client, vm ...), by platform (linux, windows, with the
    platform's connection settings as group variables) and by how hosts are reached (via_ssh ...)."""
    from app.remote.connect import address_of
    comps = _components(bed)
    access = {a.host: a for a in bed.access}
    hosts: dict[str, dict] = {}
    for hid in reached.transports:
        host: dict = {}
        name = inventory_name(hid)
        if name != hid:
            host["testbed_studio_id"] = data(hid)
        a = access.get(hid)
        if a is None:
            server = next((s for s in bed.servers if s.id == hid), None)
            if server is not None and server.management_address:
                host["ansible_host"] = data(server.management_address.split("/")[0])
        elif a.transport == "local":
            # this machine: the Python that runs Ansible is there for sure, whatever `python3` is
            host |= {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}
        elif a.transport == "ssh":
            host["ansible_connection"] = "ssh"
            host["ansible_host"] = data(address_of(bed, a))
            if a.port:
                host["ansible_port"] = int(a.port)
            if a.user:
                host["ansible_user"] = data(a.user)
            if a.key_file:
                host["ansible_ssh_private_key_file"] = data(a.key_file)
            if a.jump:
                # one quoted `-o` argument: text after the jump host can never become another option
                host["ansible_ssh_common_args"] = data(shlex.join(["-o", f"ProxyJump={a.jump}"]))
        else:
            host |= {"ansible_host": data(address_of(bed, a)), "ansible_connection": "winrm",
                     "ansible_port": int(a.port or (5986 if a.winrm_scheme == "https" else 5985)),
                     "ansible_winrm_scheme": data(a.winrm_scheme), "ansible_winrm_transport": data(a.winrm_auth),
                     "ansible_winrm_server_cert_validation": "validate" if a.verify_tls else "ignore"}
            if a.user:
                host["ansible_user"] = data(a.user)
            if a.ca_file:
                host["ansible_winrm_ca_trust_path"] = data(a.ca_file)
        hosts[hid] = host
    groups: dict[str, dict] = {}
    for hid, host in hosts.items():
        name = inventory_name(hid)
        role, platform, _ = comps.get(hid, ("other", "", ""))
        transport = reached.transports[hid]
        platform = "windows" if transport == "winrm" else platform if platform in _PLATFORM_VARS else "linux"
        groups.setdefault(group_name(f"role_{role}"), {"hosts": {}})["hosts"][name] = host or None
        plat = groups.setdefault(platform, {"vars": dict(_PLATFORM_VARS[platform]), "hosts": {}})
        plat["hosts"][name] = None
        groups.setdefault(group_name(f"via_{transport}"), {"hosts": {}})["hosts"][name] = None
    return {"all": {"children": groups}}


def platform_of_host(inv: dict, name: str) -> str:
    return "windows" if name in inv["all"]["children"].get("windows", {}).get("hosts", {}) else "linux"
