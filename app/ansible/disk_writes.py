"""The exported playbook's confirmation before a task that writes to a disk.

The built-in engine asks before the first step that formats a disk or runs a load that writes to
it (`--yes-destructive`, the Run tab's dialog, `app/run/destructive.py`).  An exported playbook is
run by someone else's `ansible-playbook`, so it asks the same way Ansible can: each host refuses,
before its first such task, unless the person passed `-e testbed_disk_writes_confirmed=yes`, and
the refusal names every disk that host's tasks in the play would write, by identity.  `--check`
writes nothing, so it is not asked for there.  The run engine (`app/ansible/engine.py`) confirmed
already and writes no such task.
"""
from __future__ import annotations

from collections.abc import Sequence

from app.ansible.tasks import tag
from app.ansible.yaml_out import Unsafe, name
from app.run.plan import RunStep

CONFIRM_VARIABLE = "testbed_disk_writes_confirmed"
CONFIRM_ARGUMENT = f"-e {CONFIRM_VARIABLE}=yes"


def confirmation_task(host: str, steps: Sequence[RunStep]) -> dict | None:
    """The task that goes in front of `host`'s first step that writes to a disk, among `steps` (its
    steps in this play, in order); None when none of them writes to one.  It carries the tags of every
    writing step, so `--tags step_5_11` still asks."""
    writes = list({id(s): s for s in steps if s.destructive}.values())
    if not writes:
        return None
    lines = [f"refused, nothing was written: {len(writes)} step(s) on {host} write to disks, each selecting "
             "its disk by the identity below and refusing one that is not empty or not the volume's:"]
    for s in writes:
        lines += [f"  {s.number} WRITES TO {d}" for d in s.devices]
    lines.append(f"Check that these are the bed's disks, then run again with {CONFIRM_ARGUMENT} "
                 "(--check writes nothing and needs no confirmation).")
    return {"name": name(f"Confirm the disk writes on {host}"),
            "ansible.builtin.assert": {
                "that": [f"({CONFIRM_VARIABLE} | default('') | string) == 'yes'"], "quiet": True,
                "fail_msg": Unsafe("\n".join(lines))},
            "when": "not ansible_check_mode",
            "tags": [tag(s) for s in writes]}
