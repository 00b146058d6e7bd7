"""Export the bed's hosts and automated steps as an Ansible inventory and playbook.

For labs that already run Ansible or outgrow one workstation.  The playbook keeps the run
engine's order: one play per stage, every host of a stage at once (`strategy: free`, so a
host does not wait for the others between its own steps), each host's steps in order.
Scripts are marked `!unsafe` so Ansible never reads `{{ }}` in them as a template.  No
secret is written: WinRM passwords come from a vault or `--ask-pass`.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import yaml

from app.run.plan import RunStep, stages
from topology.fileformat import write_atomic
from topology.model import Bed

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


def inventory(bed: Bed) -> dict:
    """Groups by role (hypervisor, load_client ...) and by how hosts are reached."""
    from app.remote.connect import address_of
    roles = {s.id: s.role for s in bed.servers} | {v.id: "vm" for v in bed.vms}
    groups: dict[str, dict] = {}
    for a in bed.access:
        host: dict = {}
        if a.transport == "local":
            host["ansible_connection"] = "local"
        elif a.transport == "ssh":
            host["ansible_host"] = address_of(bed, a)
            if a.port:
                host["ansible_port"] = a.port
            if a.user:
                host["ansible_user"] = a.user
            if a.key_file:
                host["ansible_ssh_private_key_file"] = a.key_file
            if a.jump:
                host["ansible_ssh_common_args"] = f"-o ProxyJump={a.jump}"
        else:
            host |= {"ansible_host": address_of(bed, a), "ansible_connection": "winrm",
                     "ansible_port": a.port or (5986 if a.winrm_scheme == "https" else 5985),
                     "ansible_winrm_scheme": a.winrm_scheme, "ansible_winrm_transport": a.winrm_auth,
                     "ansible_winrm_server_cert_validation": "validate" if a.verify_tls else "ignore"}
            if a.user:
                host["ansible_user"] = a.user
            if a.ca_file:
                host["ansible_winrm_ca_trust_path"] = a.ca_file
        groups.setdefault(_group(roles.get(a.host, "other")), {"hosts": {}})["hosts"][a.host] = host or None
        groups.setdefault(_group(f"via_{a.transport}"), {"hosts": {}})["hosts"][a.host] = None
    return {"all": {"children": groups}}


def playbook(steps: Sequence[RunStep], bed_name: str) -> list[dict]:
    plays: list[dict] = []
    for stage in stages(steps):
        hosts = [h for h in stage.lanes if any(not t.manual for s in stage.lanes[h] for t in s.tasks)]
        tasks: list[dict] = []
        for step in stage.steps:
            if step.manual:
                tasks.append({"name": f"{step.number} (by hand) {step.text}"[:200],
                              "ansible.builtin.pause": {"prompt": _Unsafe(
                                  f"Step {step.number} is done by hand: {step.text}\nPress Enter when done")},
                              "run_once": True, "tags": ["manual", _tag(step)]})
                continue
            for task in step.tasks:
                tasks.extend(_tasks(step, task))
        if not tasks:
            continue
        play: dict = {"name": f"{bed_name}: {stage.title}", "hosts": ",".join(hosts) or "localhost",
                      "gather_facts": False, "any_errors_fatal": False, "tasks": tasks}
        if len(hosts) > 1:
            play["strategy"] = "free"
        plays.append(play)
    return plays


def _tag(step: RunStep) -> str:
    return "step_" + step.number.replace(".", "_")


def _tasks(step: RunStep, task) -> list[dict]:
    name = f"{step.number} {step.text}"[:200]
    when = f"inventory_hostname == {task.host!r}"
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
        out.append({"name": f"{step.number} check", module: vargs, "when": when, "changed_when": False,
                    "tags": [_tag(step)]})
    return out


def export(bed: Bed, steps: Sequence[RunStep], out_dir: Path) -> dict[str, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    head = (f"# Generated by Testbed Studio from the bed '{bed.bed.name}'.\n"
            "# Passwords are not written here: use ansible-vault or --ask-pass.\n")
    inv_path, play_path = out_dir / "inventory.yml", out_dir / "playbook.yml"
    write_atomic(inv_path, (head + yaml.dump(inventory(bed), Dumper=_Dumper, sort_keys=False, allow_unicode=True)).encode())
    plays = playbook(steps, bed.bed.name)
    write_atomic(play_path, (head + "# Manual steps pause for Enter; skip them with --skip-tags manual.\n"
                             + yaml.dump(plays, Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=True)).encode())
    return {"inventory": inv_path, "playbook": play_path}
