"""Export the bed's hosts and automated steps as an Ansible inventory and playbook.

For labs that already run Ansible or outgrow one workstation.  The playbook keeps the run
engine's order: one play per stage, every host of a stage at once (`strategy: free`, so a
host does not wait for the others between its own steps), each host's steps in order.
Every string that comes from the bed (scripts, play and task names, addresses, users, key
files) is marked `!unsafe`, so Ansible never reads `{{ }}` in it as a template; ssh options are
one shell-quoted list; a host id that is not a plain name is given a plain inventory name (host
patterns and `when:` conditions never contain bed text).  No secret is written: WinRM
passwords come from a vault or `--ask-pass`.
"""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Sequence

import yaml

from app.run.plan import RunStep, stages
from topology.fileformat import write_atomic
from topology.model import Bed
from topology.safe_paths import file_name_for

_GROUP_SAFE = re.compile(r"[^A-Za-z0-9_]")


class _Unsafe(str):
    pass


class _Dumper(yaml.SafeDumper):
    pass


def _represent_unsafe(dumper: yaml.SafeDumper, value: _Unsafe):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("!unsafe", str(value), style=style)


_Dumper.add_representer(_Unsafe, _represent_unsafe)


def _group(name: str) -> str:
    g = _GROUP_SAFE.sub("_", name.lower()).strip("_") or "hosts"
    return g if not g[0].isdigit() else f"g_{g}"


def inventory_name(host_id: str) -> str:
    """The host's name in the inventory: its id when that is a plain name, else a plain name
    derived from it (the id is then kept as the variable `testbed_studio_id`)."""
    return file_name_for(host_id)


def _data(value) -> _Unsafe:
    return _Unsafe(str(value))


def inventory(bed: Bed) -> dict:
    """Groups by role (hypervisor, load_client ...) and by how hosts are reached."""
    from app.remote.connect import address_of
    roles = {s.id: s.role for s in bed.servers} | {v.id: "vm" for v in bed.vms}
    groups: dict[str, dict] = {}
    for a in bed.access:
        host: dict = {}
        name = inventory_name(a.host)
        if name != a.host:
            host["testbed_studio_id"] = _data(a.host)
        if a.transport == "local":
            host["ansible_connection"] = "local"
        elif a.transport == "ssh":
            host["ansible_host"] = _data(address_of(bed, a))
            if a.port:
                host["ansible_port"] = int(a.port)
            if a.user:
                host["ansible_user"] = _data(a.user)
            if a.key_file:
                host["ansible_ssh_private_key_file"] = _data(a.key_file)
            if a.jump:
                # one quoted `-o` argument: text after the jump host can never become another option
                host["ansible_ssh_common_args"] = _data(shlex.join(["-o", f"ProxyJump={a.jump}"]))
        else:
            host |= {"ansible_host": _data(address_of(bed, a)), "ansible_connection": "winrm",
                     "ansible_port": int(a.port or (5986 if a.winrm_scheme == "https" else 5985)),
                     "ansible_winrm_scheme": _data(a.winrm_scheme), "ansible_winrm_transport": _data(a.winrm_auth),
                     "ansible_winrm_server_cert_validation": "validate" if a.verify_tls else "ignore"}
            if a.user:
                host["ansible_user"] = _data(a.user)
            if a.ca_file:
                host["ansible_winrm_ca_trust_path"] = _data(a.ca_file)
        groups.setdefault(_group(roles.get(a.host, "other")), {"hosts": {}})["hosts"][name] = host or None
        groups.setdefault(_group(f"via_{a.transport}"), {"hosts": {}})["hosts"][name] = None
    return {"all": {"children": groups}}


def playbook(steps: Sequence[RunStep], bed_name: str) -> list[dict]:
    plays: list[dict] = []
    for stage in stages(steps):
        hosts = [h for h in stage.lanes if any(not t.manual for s in stage.lanes[h] for t in s.tasks)]
        name = _data(f"{bed_name}: {stage.title}")
        # `pause` cannot run under the free strategy: a manual step gets a play of its own, on this
        # machine, between the automated steps before and after it
        chunks: list[tuple[bool, list[dict]]] = []
        for step in stage.steps:
            manual = step.manual
            if not chunks or chunks[-1][0] != manual:
                chunks.append((manual, []))
            if manual:
                chunks[-1][1].append({"name": _data(f"{step.number} (by hand) {step.text}"[:200]),
                                      "ansible.builtin.pause": {"prompt": _Unsafe(
                                          f"Step {step.number} is done by hand: {step.text}\nPress Enter when done")},
                                      "run_once": True, "tags": ["manual", _tag(step)]})
                continue
            for task in step.tasks:
                chunks[-1][1].extend(_tasks(step, task))
        for manual, tasks in chunks:
            play: dict = {"name": name, "hosts": "localhost" if manual or not hosts
                          else ",".join(inventory_name(h) for h in hosts),
                          "gather_facts": False, "any_errors_fatal": False, "tasks": tasks}
            if not manual and len(hosts) > 1:
                play["strategy"] = "free"
            plays.append(play)
    return plays


def _tag(step: RunStep) -> str:
    return "step_" + step.number.replace(".", "_")


def _tasks(step: RunStep, task) -> list[dict]:
    name = _data(f"{step.number} {step.text}"[:200])
    when = f"inventory_hostname == {json.dumps(inventory_name(task.host))}"
    if task.shell in ("powershell", "cmd"):
        module = "ansible.windows.win_shell"
        args: dict = {"_raw_params": _Unsafe(task.script)}
        if task.shell == "cmd":
            args["executable"] = "cmd"
    else:
        module = "ansible.builtin.shell"
        args = {"cmd": _Unsafe(task.script), "executable": "/bin/bash" if task.shell == "bash" else "/bin/sh"}
    out = [{"name": name, module: args, "when": when, "tags": [_tag(step)]}]
    if task.verify:
        vargs = dict(args)
        vargs["cmd" if "cmd" in vargs else "_raw_params"] = _Unsafe(task.verify)
        out.append({"name": _data(f"{step.number} check"), module: vargs, "when": when, "changed_when": False,
                    "tags": [_tag(step)]})
    return out


def export(bed: Bed, steps: Sequence[RunStep], out_dir: Path) -> dict[str, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # the name on one comment line: a line break in it must not start YAML of its own
    head = (f"# Generated by Testbed Studio from the bed {json.dumps(bed.bed.name)}.\n"
            "# Passwords are not written here: use ansible-vault or --ask-pass.\n")
    inv_path, play_path = out_dir / "inventory.yml", out_dir / "playbook.yml"
    write_atomic(inv_path, (head + yaml.dump(inventory(bed), Dumper=_Dumper, sort_keys=False, allow_unicode=True)).encode())
    plays = playbook(steps, bed.bed.name)
    write_atomic(play_path, (head + "# Manual steps pause for Enter; skip them with --skip-tags manual.\n"
                             + yaml.dump(plays, Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=True)).encode())
    return {"inventory": inv_path, "playbook": play_path}
