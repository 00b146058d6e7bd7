"""How the run engine starts ansible-playbook for a pass: its environment, its ssh arguments and
the ansible.cfg in the pass's folder.

Three of these are there for speed on many hosts (issue 33, 50 sandbox hosts on a 2-core machine):

* ssh's key exchange.  OpenSSH 9.0-9.9 open a connection with sntrup761x25519 first, whose key
  generation alone takes the client 110 ms of CPU (measured here: 128 ms a connection against
  18 ms with curve25519): 5.5 s of CPU for 50 hosts' connections at the start of a pass, while
  ansible-playbook starts its tasks one host after another on the same two cores.  Where the
  client would pick sntrup761, the engine puts mlkem768x25519 (post-quantum too, and cheap; when
  this ssh has it) and curve25519 at the head of its list: the built-in engine's paramiko
  settles on curve25519 as well.  Host keys are checked as before (StrictHostKeyChecking, the
  run's known_hosts), and a server that has neither still gets the rest of ssh's own list.
  Where a server lacks ML-KEM this trades sntrup761's post-quantum exchange for curve25519's
  classical one, as the built-in engine does; a person who chose their own KexAlgorithms in an
  ssh config (for any host) keeps that choice: the engine then adds nothing.
* What ansible-playbook's process does for every task on every host, one host after another,
  that the passes do not need (about 70 ms a task and host on a loaded machine): looking for
  host_vars/group_vars files again (a pass's variables are in its inventory, read once), and
  copying each host's facts into top-level variables (no pass gathers facts or reads them).
* Ansible's strategies look for work, then sleep `internal_poll_interval` (1 ms; ansible.cfg
  only, no environment variable) and look again, for as long as a play runs.  Under `free`, each
  look works out every host's next task: with 50 hosts 15-30 ms of ansible-playbook's process,
  so that process kept one of the two cores busy all pass long while the hosts' steps ran (15,950
  looks in one 35 s pass).  A look every 50 ms starts nothing later than one that took that long
  did.  ansible-playbook runs in the pass's folder, so an ansible.cfg there is the one it reads:
  it is written only when the person has no ansible.cfg of their own that Ansible would read
  (ANSIBLE_CONFIG, ~/.ansible.cfg, /etc/ansible/ansible.cfg); theirs is never replaced.
"""
from __future__ import annotations

import functools
import glob
import os
import shlex
import shutil
import subprocess
from pathlib import Path

POLL_S = 0.05
SYSTEM_CONFIG = Path("/etc/ansible/ansible.cfg")
_SLOW_KEX = "sntrup761x25519-sha512"
_QUICK_KEX = ("mlkem768x25519-sha256", "curve25519-sha256")
_PER_TASK_SAVINGS = {"ANSIBLE_RUN_VARS_PLUGINS": "start", "ANSIBLE_INJECT_FACT_VARS": "False"}


def quick_kex() -> str | None:
    """`-o KexAlgorithms=` for this machine's ssh (see the module's text); None: its own list, and
    always None when an ssh config this user's ssh reads names KexAlgorithms anywhere (for any
    host): the person's choice stands, never prepended to or widened back to ssh's defaults."""
    offered = _offered_kex()
    if offered is None or _ssh_config_names_kex():
        return None
    return offered


@functools.lru_cache(maxsize=1)
def _offered_kex() -> str | None:
    ssh = shutil.which("ssh")
    if ssh is None:
        return None
    try:
        known = subprocess.run([ssh, "-Q", "kex"], capture_output=True, text=True, timeout=10,
                               stdin=subprocess.DEVNULL).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    quick = [k for k in _QUICK_KEX if k in known]
    return "^" + ",".join(quick) if _SLOW_KEX in known and quick else None


def _ssh_config_names_kex() -> bool:
    """Whether ~/.ssh/config, /etc/ssh/ssh_config or a file either includes says KexAlgorithms
    (ssh_config(5): an Include without an absolute path is under ~/.ssh for the user's file,
    under /etc/ssh for the system's).  A file that cannot be read says nothing."""
    user, system = Path.home() / ".ssh", Path("/etc/ssh")
    pending = [(user / "config", user), (system / "ssh_config", system)]
    seen: set[Path] = set()
    while pending and len(seen) < 256:
        path, base = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            keyword, _, rest = line.strip().replace("=", " ", 1).partition(" ")
            keyword = keyword.lower()
            if keyword == "kexalgorithms":
                return True
            if keyword == "include":
                try:
                    patterns = shlex.split(rest)
                except ValueError:
                    return True         # a line ssh itself may read otherwise: the person's choice, unknown
                for pattern in patterns:
                    pattern = os.path.expanduser(pattern)
                    full = pattern if os.path.isabs(pattern) else str(base / pattern)
                    pending += [(Path(found), base) for found in sorted(glob.glob(full))]
    return False


def ansible_environment(known_hosts: Path | None) -> dict[str, str]:
    """How ansible-playbook is started by the engine: ssh connections kept open between tasks,
    host keys checked against `known_hosts` (the keys pre-flight or --trust accepted)."""
    ssh = ["-C", "-o", "ControlMaster=auto", "-o", "ControlPersist=60s", "-o", "StrictHostKeyChecking=yes"]
    if known_hosts is not None:
        ssh += ["-o", f"UserKnownHostsFile={known_hosts}"]
    if kex := quick_kex():
        ssh += ["-o", f"KexAlgorithms={kex}"]
    return {"ANSIBLE_SSH_ARGS": shlex.join(ssh), "ANSIBLE_HOST_KEY_CHECKING": "True",
            "ANSIBLE_PIPELINING": "True", "ANSIBLE_NOCOLOR": "1", "ANSIBLE_RETRY_FILES_ENABLED": "False",
            **_PER_TASK_SAVINGS}


def own_config() -> Path | None:
    """The ansible.cfg Ansible would read for a pass if the pass's folder had none."""
    found = []
    if env := os.environ.get("ANSIBLE_CONFIG"):
        path = Path(env).expanduser()
        found.append(path / "ansible.cfg" if path.is_dir() else path)
    found += [Path.home() / ".ansible.cfg", SYSTEM_CONFIG]
    return next((p for p in found if p.is_file()), None)


def write_config(folder: Path) -> None:
    if own_config() is None:
        (folder / "ansible.cfg").write_text(
            "# Written by Testbed Studio for a pass of `run --engine ansible` (app/ansible/playbook_settings.py)\n"
            f"[defaults]\ninternal_poll_interval = {POLL_S}\n", encoding="utf-8")
