"""How the Ansible engine starts ansible-playbook: a wrapper that makes it, and everything it
starts, die with the testbed-studio process that started it (app.ansible.engine)."""
from __future__ import annotations

import os
import signal
from pathlib import Path

PDEATHSIG_WRAPPER = """#!{python}
# ansible-playbook and every process it starts (its workers, which lead sessions of their own,
# and their ssh) are killed when the testbed-studio process that started them dies, kill -9
# included (PR_SET_PDEATHSIG): no task is started or left running by a driver nobody sees any
# more.  Orphans of ansible-playbook become this process's children (PR_SET_CHILD_SUBREAPER).
import ctypes, os, shutil, signal, sys

SECRETS = {secrets!r}     # the withheld -e files (app.run.extra_vars): gone with the pass


def descendants():
    children = dict()
    for entry in os.listdir("/proc"):
        try:
            with open("/proc/" + entry + "/stat") as fh:
                children.setdefault(int(fh.read().rsplit(")", 1)[1].split()[1]), []).append(int(entry))
        except (OSError, ValueError, IndexError):
            pass
    found, todo = [], [os.getpid()]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def forget_secrets():
    if SECRETS:
        shutil.rmtree(SECRETS, ignore_errors=True)


def end_everything(*_):
    forget_secrets()
    for _ in range(10):
        found = descendants()
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    os._exit(137)


signal.signal(signal.SIGUSR1, end_everything)
try:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1)                      # PR_SET_CHILD_SUBREAPER
    libc.prctl(1, signal.SIGUSR1)          # PR_SET_PDEATHSIG
except (OSError, AttributeError):
    pass
if os.getppid() != {driver}:
    forget_secrets()
    sys.exit(125)       # the driver died before the lines above: start nothing
child = os.fork()
if child == 0:
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)
    os.execv({playbook!r}, [{playbook!r}, *sys.argv[1:]])
_, status = os.waitpid(child, 0)
forget_secrets()
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def end_leftovers(playbook: Path) -> list[int]:
    """Ends what is left of a pass once its run is over; the pids it ended.  ansible's workers lead
    sessions of their own, and a cancel kills the wrapper's process group with SIGKILL
    (ansible-runner), so the wrapper's own clean-up never runs: each cancelled pass left workers
    sleeping for good (59 MB each).  A process is the pass's when it is ansible-playbook (the
    wrapper, or the real one and the workers it forked: its script is the first or second word of
    the command line, after its interpreter) and its command line names the pass's playbook, a file
    in the pass's own folder.  A viewer or editor a person opened the playbook in names it too, and
    is not the pass's; nor is another user's process (a driver run as root could signal it)."""
    name = str(playbook).encode()
    ended: list[int] = []
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return ended        # no /proc (not Linux): nothing to look for
    for entry in entries:
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                words = f.read().split(b"\0")
            owner = os.stat(f"/proc/{entry}").st_uid
        except OSError:
            continue
        if name in words and owner == os.getuid() and int(entry) != os.getpid() and \
                any(os.path.basename(w) == b"ansible-playbook" for w in words[:2]):
            try:
                os.kill(int(entry), signal.SIGKILL)
                ended.append(int(entry))
            except OSError:
                pass
    return ended
