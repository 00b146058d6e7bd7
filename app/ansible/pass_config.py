"""The ansible.cfg of a pass of the run engine: Ansible's `free` strategy looking for work less often.

Ansible's `free` strategy looks at every host of the play for a task to start, then sleeps for
`internal_poll_interval` (1 ms; ansible.cfg only, no environment variable) and looks again, for
as long as the play runs.  With 50 hosts each look cost ansible-playbook's one process 15-30 ms
(each host's next task worked out, a dozen debug calls that ansible-runner's callback wraps in a
context of its own), so that process kept one of this machine's two cores busy for the whole
pass while the hosts' steps ran (issue 33: 15,950 looks in one 35 s pass on 50 hosts).  The
engine's plays start one task a host and then wait for its end, so a look every 50 ms starts
nothing later than one that took up to 30 ms did, and leaves that core to the hosts.

ansible-playbook runs in the pass's folder, so an ansible.cfg there is the one it reads: it is
written only when the person has no ansible.cfg of their own that Ansible would read
(ANSIBLE_CONFIG, ~/.ansible.cfg, /etc/ansible/ansible.cfg); theirs is never replaced.  (A
strategy plugin of the engine's own would not need the file, but Ansible 2.19 deprecates
strategy plugins from outside ansible.builtin.)
"""
from __future__ import annotations

import os
from pathlib import Path

POLL_S = 0.05


def own_config() -> Path | None:
    """The ansible.cfg Ansible would read for a pass if the pass's folder had none."""
    found = []
    if env := os.environ.get("ANSIBLE_CONFIG"):
        path = Path(env).expanduser()
        found.append(path / "ansible.cfg" if path.is_dir() else path)
    found += [Path.home() / ".ansible.cfg", Path("/etc/ansible/ansible.cfg")]
    return next((p for p in found if p.is_file()), None)


def write_config(folder: Path) -> None:
    if own_config() is None:
        (folder / "ansible.cfg").write_text(
            "# Written by Testbed Studio for a pass of `run --engine ansible` (app/ansible/pass_config.py)\n"
            f"[defaults]\ninternal_poll_interval = {POLL_S}\n", encoding="utf-8")
