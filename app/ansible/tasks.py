"""The tasks of one automated step on one host, by kind of step.

* a step whose template names an Ansible module (`ansible:` block): that module, with `become`
  where it needs root; the module itself knows whether anything changes and supports --check;
* a script no module replaces: `shell` / `win_shell` with `creates:` pointing at a marker
  that the next task writes once the script succeeded, named after the script's own text, so a
  second run skips it (and a changed script runs again) and --check reports "would run";
* a measurement (the run section): the script runs every time, that is its purpose;
* in a run driven by `testbed-studio run --engine ansible` the run's journal says what already
  ran, so scripts carry no marker; bash and sh scripts run as jobs (app.remote.jobs) that a
  resumed run finds on their host instead of starting them twice.

After each one, the template's read-only check runs with `check_mode: false`, so `--check`
really checks a bed that is already built; its exit status is compared (`failed_when`).
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from app.ansible.inventory import MARKERS_VARIABLE
from app.ansible.yaml_out import Unsafe, data, name, unsafe_tree
from app.remote.jobs import SHELLS as JOB_SHELLS
from app.run.plan import RunStep, Task

_MARKERS = "{{ " + MARKERS_VARIABLE + " }}"
_WINDOWS_SHELLS = ("powershell", "cmd")


def tag(step: RunStep) -> str:
    return "step_" + step.number.replace(".", "_")


def register_name(step: RunStep, index: int, what: str) -> str:
    return f"{tag(step)}_{what}_{index}"


def vault_variable(name: str) -> str:
    return f"testbed_{name}"


def vault_names(value: Any) -> set[str]:
    if isinstance(value, dict) and set(value) == {"vault"}:
        return {value["vault"]}
    if isinstance(value, dict):
        return {n for v in value.values() for n in vault_names(v)}
    if isinstance(value, list):
        return {n for v in value for n in vault_names(v)}
    return set()


def _module_args(value: Any) -> Any:
    """Bed text as `!unsafe` data; a vault reference as the variable the user keeps in a vault."""
    if isinstance(value, dict) and set(value) == {"vault"}:
        return "{{ " + vault_variable(value["vault"]) + " }}"
    if isinstance(value, dict):
        return {k: _module_args(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_module_args(v) for v in value]
    return unsafe_tree(value)


def modules_of(task: Task) -> list[str]:
    if task.ansible and task.ansible.get("module"):
        return [task.ansible["module"]]
    return ["ansible.windows.win_shell" if task.shell in _WINDOWS_SHELLS else "ansible.builtin.shell"]


def _shell(task: Task, script: str, chdir: str | None = None) -> tuple[str, dict]:
    if task.shell in _WINDOWS_SHELLS:
        args: dict = {"_raw_params": Unsafe(script)}
        if task.shell == "cmd":
            args["executable"] = "cmd"
        module = "ansible.windows.win_shell"
    else:
        args = {"cmd": Unsafe(script), "executable": "/bin/bash" if task.shell == "bash" else "/bin/sh"}
        module = "ansible.builtin.shell"
    if chdir:
        args["chdir"] = Unsafe(chdir)
    return module, args


def _marker(task: Task, step: RunStep) -> str:
    digest = hashlib.sha256(f"{task.shell}\0{task.script}".encode()).hexdigest()[:16]
    if task.shell in _WINDOWS_SHELLS:
        return f"{_MARKERS}\\{tag(step)}-{digest}"
    return f"{_MARKERS}/{tag(step)}-{digest}"


def step_tasks(step: RunStep, task: Task, index: int, measurement: bool,
               job_script: Callable[[RunStep, Task], str] | None = None, chdir: str | None = None) -> list[dict]:
    """The tasks of `step` on its host; every task lands in that host's own task list, so no
    condition picks the host.  `index` tells apart the tasks of one step in register names.

    `job_script` (the run engine, app.ansible.engine): a bash or sh script runs as the job it
    returns, which outlives a driver that dies, and the run's journal, not a marker, says what
    already ran; None (the export): a script runs once, guarded by its done marker."""
    title = name(f"{step.number} {step.text}")
    tags = [tag(step)]
    done = register_name(step, index, "done")
    out: list[dict] = []
    as_job = job_script is not None and task.shell in JOB_SHELLS
    if task.ansible and task.ansible.get("module"):
        spec = task.ansible
        args = _module_args(spec["args"])
        if spec.get("creates"):
            args["creates"] = data(spec["creates"])
        t: dict = {"name": title, spec["module"]: args}
        if spec.get("become"):
            t["become"] = True
        if spec["module"] in ("ansible.builtin.command", "ansible.builtin.shell") and not spec.get("creates"):
            t["changed_when"] = True
        out.append(t | {"register": done, "tags": tags})
    elif as_job:
        assert job_script is not None
        # `raw`: the job's starter and follower are sh, so no Python module is sent to the host and
        # started there for them (about 1 s a task on a busy machine, issue 33); without a tty its
        # stdout and stderr stay apart, and a follower whose driver died gets a broken pipe, as over
        # the built-in engine's connection (the job itself goes on, in its own session)
        out.append({"name": title, "ansible.builtin.raw": {"_raw_params": Unsafe(job_script(step, task)),
                                                            "executable": "/bin/sh"},
                    "vars": {"ansible_ssh_use_tty": False},
                    "register": done, "changed_when": True, "tags": tags})
    elif measurement or job_script is not None:
        module, args = _shell(task, task.script, chdir)
        out.append({"name": title, module: args, "register": done, "changed_when": True, "tags": tags})
    else:
        marker = _marker(task, step)
        module, args = _shell(task, task.script)
        args["creates"] = marker
        windows = task.shell in _WINDOWS_SHELLS
        folder = {"ansible.windows.win_file": {"path": _MARKERS, "state": "directory"}} if windows else \
            {"ansible.builtin.file": {"path": _MARKERS, "state": "directory", "mode": "0700"}}
        out.append({"name": name(f"{step.number} folder for the done markers"), **folder, "tags": tags})
        out.append({"name": title, module: args, "register": done, "tags": tags})
        record = {"ansible.windows.win_copy": {"dest": marker, "content": "done"}} if windows else \
            {"ansible.builtin.copy": {"dest": marker, "content": "done", "mode": "0600"}}
        # a failed script stops the host before this task: the marker means "succeeded once"
        out.append({"name": name(f"{step.number} record that it is done"), **record, "tags": tags})
    if task.verify:
        module, args = _shell(task, task.verify, chdir)
        check = register_name(step, index, "check")
        # in check mode a step that would still run has nothing to check yet
        out.append({"name": name(f"{step.number} check"), module: args, "register": check,
                    "changed_when": False, "failed_when": f"{check}.rc != 0", "check_mode": False,
                    "when": "not ansible_check_mode" if measurement
                    else f"not ansible_check_mode or {done} is not changed", "tags": tags})
    return out


def result_tasks(step: RunStep, task: Task, chdir: str | None = None) -> list[dict]:
    """Copy the files the step leaves on the host to results/HOST/ on the controller.  A file is
    read where the step ran (`chdir`, see step_tasks): a local host's steps run in its own folder,
    not in the login's home, so its `~/` and relative paths are that folder's (as the built-in
    engine reads them, app.run.result_fetch), never a file another run left in the home."""
    files = (task.ansible or {}).get("results") or []
    return [{"name": name(f"{step.number} fetch {f}"),
             "ansible.builtin.fetch": {"src": data(_where_it_ran(f, chdir)),
                                       "dest": "{{ playbook_dir }}/results/{{ inventory_hostname }}/", "flat": True},
             "when": "not ansible_check_mode", "tags": [tag(step), "results"]}
            for f in files]


def _where_it_ran(path: str, chdir: str | None) -> str:
    if not chdir or chdir == "~" or path.startswith("/"):
        return path
    return f"{chdir.rstrip('/')}/{path[2:] if path.startswith('~/') else path}"
