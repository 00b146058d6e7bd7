"""After an Ansible pass, what is left of it is ended (app.ansible.wrapper.end_leftovers): its
ansible-playbook and the workers it forked.  A person may have the pass's playbook open at that
moment (`less`, `tail -f`, an editor given its full path, as the run folder shows it): that process
names the playbook too, and is not the pass's to end."""
from __future__ import annotations

import subprocess
import sys
import time

from app.ansible.wrapper import end_leftovers


def _alive(proc: subprocess.Popen) -> bool:
    return proc.poll() is None


def test_a_viewer_of_the_passs_playbook_is_not_ended_and_its_ansible_playbook_is(tmp_path):
    play = tmp_path / "pass-001" / "play.yml"
    play.parent.mkdir()
    play.write_text("- hosts: all\n")
    # ansible-playbook as the kernel starts it: its interpreter, then the script, then the playbook
    script = tmp_path / "ansible-playbook"
    script.write_text("import time\ntime.sleep(30)\n")
    viewer = subprocess.Popen(["tail", "-f", str(play)], stdout=subprocess.DEVNULL)
    playbook = subprocess.Popen([sys.executable, str(script), "-i", "inventory.yml", str(play)])
    try:
        time.sleep(0.2)         # both have exec'd: their command lines are the ones above
        ended = end_leftovers(play)
        assert playbook.pid in ended
        playbook.wait(timeout=5)
        assert viewer.pid not in ended and _alive(viewer), "a person's viewer of play.yml was killed"
    finally:
        for proc in (viewer, playbook):
            if _alive(proc):
                proc.kill()
            proc.wait()
