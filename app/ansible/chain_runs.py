"""The run engine's side of chains (app.ansible.chains): which steps a pass chains, the journal
records that make a chain safe to resume, each step's outcome taken from the chain's output, and
a chain settled when its pass ended without its output (a stop, ansible-playbook dying).

A mixin of AnsibleEngine (app.ansible.engine): it uses the engine's journal, states, _begin,
_finish, _place and _stop_jobs.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from app.ansible import chains
from app.ansible.passes import GATE_PLAY
from app.ansible.playbook import Lane
from app.ansible.stage_gates import STAGES_ACTION, stages_task
from app.remote import jobs
from app.run import journal as J
from app.run.engine import DEFAULT_TIMEOUT_S
from app.run.leftover_choice import MAY_BE_LEFT
from app.run.plan import RunStep, Task


@dataclass
class Chain:
    """A host's consecutive job steps of one play, run as one task."""
    id: str
    host: str
    tasks: list[tuple[RunStep, Task]]
    members: list[chains.Member]
    settled: bool = False


def chainable(task: Task) -> bool:
    """A script that runs as a job and has nothing Ansible must do after it (a check, a fetch)."""
    return (task.shell in jobs.SHELLS and not task.verify and not (task.ansible or {}).get("module")
            and not (task.ansible or {}).get("results"))


class ChainRuns:
    # ------------------------------------------------------------------ a pass's chains

    def _chains_init(self) -> None:
        self._chains: dict[tuple[str, str], Chain] = {}        # by (first step, host)
        self._shared_tasks: dict[tuple[str, str], str] = {}     # (task name, host) -> its first step
        self._chain_attempts: dict[tuple[str, str], int] = {}   # members of open chains on resume

    def step_timeout(self, host: str) -> int:
        return int(self.timeout or self.host_timeouts.get(host) or DEFAULT_TIMEOUT_S)

    def _chain_lanes(self, lanes: dict[str, Lane]) -> dict[str, Lane]:
        """The lanes with each run of two or more chainable steps of a host as its first step: the
        chain's task (its script: chain_script).  Each chain is journalled before the pass starts, all
        of them in one write (one fsync, not one a host)."""
        out: dict[str, Lane] = {}
        known = set(self._chains)
        for host, lane in lanes.items():
            kept: Lane = []
            run: Lane = []
            for item in [*lane, None]:
                if item is not None and chainable(item[1]):
                    run.append(item)
                    continue
                if len(run) >= 2:
                    self._new_chain(host, run)
                kept.extend(run[:1] if len(run) >= 2 else run)
                run = []
                if item is not None:
                    kept.append(item)
            out[host] = kept
        # before ansible-playbook starts: a driver that dies from here on leaves a resume that asks
        with self.journal.batched():
            for key, c in self._chains.items():
                if key not in known:
                    self.journal.record("chain", host=c.host, chain=c.id,
                                        steps=[[m.step, m.attempt] for m in c.members])
        return out

    def _new_chain(self, host: str, run: Lane) -> None:
        members = [chains.Member(task.step, (prev := self.task_state(task)).attempts + 1, task.script, task.shell,
                                 self.step_timeout(host), follow_found=True,
                                 unseen_end=prev.attempts if prev.status in MAY_BE_LEFT else 0) for _, task in run]
        chain = Chain(uuid.uuid4().hex[:12], host, list(run), members)
        self._chains[run[0][1].key] = chain

    def _chain_script(self, task: Task) -> str | None:
        chain = self._chains.get(task.key)
        if chain is None:
            return None
        base, workdir = self._place(task.host)
        return chains.chain_script(self.info.id, task.host, chain.members, base, workdir or "")

    def chain_backstop(self, task_name: str, host: str) -> int | None:
        """Ansible's timeout of a chain's task: every step's own, and a margin (the chain times
        each step itself)."""
        chain = next((c for (step, h), c in self._chains.items() if h == host
                      and task_name.startswith(step + " ")), None)
        if chain is None:
            return None
        return sum(m.timeout_s for m in chain.members) + chains.BACKSTOP_S * len(chain.members)

    def _one_task_each(self, book, play: dict, folder: str, lanes: dict[str, Lane]) -> None:
        """A play where every host has one task, a `raw` script (a chain, or one job step), as one
        task for all its hosts whose script is a host variable in the pass's own inventory: no
        `include_tasks` per host, which costs Ansible about as much as a task (issue 33: 50 hosts x 3
        stages, 26 s -> 22 s of a loaded machine with `true` as every step).  In the inventory, not in
        host_vars/HOST.yml files: Ansible reads the inventory once, and looks for host_vars files again
        for every task on every host."""
        from app.ansible.inventory import inventory_name
        files = {host: book.task_files.get(f"{folder}/{inventory_name(host)}.yml") for host in lanes}
        if len(lanes) < 2 or len(play["tasks"]) != 1 or any(
                t is None or len(t) != 1 or "ansible.builtin.raw" not in t[0] for t in files.values()):
            return
        number = len({title for title, _ in self._shared_tasks}) + 1
        variable = f"testbed_play_{number:02d}"
        title = f"Each host's steps (play {number})"
        # a play of several such stages waits between them on the controller (app.ansible.stage_gates)
        def joinable(before: dict) -> bool:
            return len(before["tasks"]) == 1 and str(before["tasks"][0]["name"]).startswith("Each host's steps (play ")
        if len(book.plays) >= 3 and book.plays[-2]["name"] == GATE_PLAY and joinable(book.plays[-3]):
            del book.plays[-2]      # the gates between its tasks stand in for the gate play
        before = book.plays[-2] if len(book.plays) >= 2 else None
        joins = before is not None and joinable(before)
        order = self._gate_order[str(before["tasks"][0]["name"])] if joins and before is not None else [title]
        waits = sum(self._stage_longest[t] for t in order if t != title)
        self._stage_longest[title] = 0
        for host, tasks in files.items():
            del book.task_files[f"{folder}/{inventory_name(host)}.yml"]
            own = book.host_vars.setdefault(inventory_name(host), {})
            own[variable] = tasks[0]["ansible.builtin.raw"]["_raw_params"]
            own[variable + "_timeout"] = int(tasks[0]["timeout"]) + waits
            own["testbed_stages_timeout"] = max(own.get("testbed_stages_timeout", 0), own[variable + "_timeout"])
            self._stage_longest[title] = max(self._stage_longest[title], int(tasks[0]["timeout"]))
            self._shared_tasks[(title, host)] = tasks[0]["name"].split(" ", 1)[0]
        task = {"name": title, "ansible.builtin.raw": {
            "_raw_params": "{{ " + variable + " }}", "executable": "/bin/sh"},
            "vars": {"ansible_ssh_use_tty": False}, "changed_when": True,
            "timeout": "{{ " + variable + "_timeout | default(60) }}", "when": f"{variable} is defined"}
        self._report_of[title] = f"{number:02d}"
        if joins and before is not None:
            # one play for a run of such stages: a play costs about 4 s on 50 hosts here (3 plays of
            # one task 23-25 s, one play of 3: 15.6 s); one task for all of them (app.ansible.stage_gates)
            order.append(title)
            self._gate_of[title] = f"{number:02d}"
            known = before["hosts"].split(",")
            before["hosts"] = ",".join([*known, *(h for h in play["hosts"].split(",") if h not in known)])
            if STAGES_ACTION not in before["tasks"][0]:
                first = self._report_of[order[0]]
                before["tasks"][0] = stages_task(before["tasks"][0], f"testbed_play_{first}", first)
            before["tasks"][0][STAGES_ACTION]["stages"].append([variable, self._gate_of[title], self._report_of[title]])
            book.plays.pop()
            return
        self._gate_order[title] = order
        # one task a host, so `linear` starts it on every host as `free` would; `free` then looks at every
        # host for a next task until the play ends (with 50 hosts, half a core of ansible-playbook's process
        # all pass long), `linear` only at the queue of results
        play["strategy"] = "linear"
        play["tasks"] = [task]

    # ------------------------------------------------------------------ its output

    def _chain_event(self, chain: Chain, kind: str, data: dict, progress: dict) -> None:
        """A chain's task ended (ok, failed or unreachable): each step journalled from its marks."""
        first = progress[chain.tasks[0][1].key]
        if kind == "runner_on_unreachable":
            from app.ansible.runner_events import message_of
            self._finish(first.task, J.UNREACHABLE, message_of(data), first)
            return      # the chain stays open: whether any step ran there is asked on resume
        res = data.get("res") or {}
        reports = chains.parse(str(res.get("stdout") or ""), str(res.get("stderr") or ""))
        if not reports:
            from app.ansible.runner_events import message_of, rc_of
            if rc_of(data) != 125:
                return      # cut off before it said anything (Ansible's own timeout): the pass's end settles it
            # it refused to start (a chain of the run still runs there, or no folder for it): no step ran
            err = str(res.get("stderr") or "").strip().splitlines()
            self._finish(first.task, J.FAILED, message_of(data) + (f": {err[-1]}" if err else ""), first, 125)
            self._chain_settled(chain)
            return
        complete = True
        for (_, task), member in zip(chain.tasks, chain.members, strict=True):
            report = reports.get(member.step)
            if report is None:
                break
            item = progress[task.key]
            if item.started is None:
                self._begin(task, item)
            if report.started_at is not None:
                self._host_started(item, report.started_at)
            self._chain_lines(item, report.lines)
            if not report.ended:
                complete = False
                break
            if report.started_at is not None and report.ended_at is not None:
                item.host_seconds = round(max(0.0, report.ended_at - report.started_at), 3)
                # when it ran on the host, as a pass's step says it (the metrics' coverage windows follow it)
                item.ran |= {"ran_from": J.iso_of(report.started_at), "ran_until": J.iso_of(report.ended_at)}
            item.stopped_on_host = True
            if report.exit_code == 0:
                self._finish(task, J.OK, "", item, 0)
            elif report.timed_out:
                self._finish(task, J.TIMEOUT, f"timed out after {member.timeout_s} s; stopped on {task.host}", item)
            else:
                self._finish(task, J.FAILED, f"exit status {report.exit_code}", item, report.exit_code)
        if complete:
            self._chain_settled(chain)

    def _chain_lines(self, item, lines: list[tuple[str, str]]) -> None:
        for stream, line in lines:
            if stream == "stderr" and line.startswith(jobs.FOLLOWED):
                item.ran["taken_attempt"] = int(line[len(jobs.FOLLOWED):].strip() or 0)
                continue
            item.lines.append((stream, line))
            self._write_output(item.task, ("[stderr] " if stream == "stderr" else "") + line)
            self._notify("output", item.task, stream, line)

    def _chain_settled(self, chain: Chain) -> None:
        chain.settled = True
        self.journal.record("chain-end", host=chain.host, chain=chain.id)

    # ------------------------------------------------------------------ a pass without its output

    def _settle_chains(self, progress: dict, cancelled: bool) -> None:
        """Chains whose output never came (a stop, ansible-playbook ended): each is killed on its host,
        then each of its steps that may have started is stopped unless it ended, and journalled as
        what the host says: ended (its status), stopped, or never started (nothing)."""
        open_ = [c for c in self._chains.values() if not c.settled]
        for chain in [c for c in open_ if not cancelled and progress[c.tasks[0][1].key].started is None]:
            # ansible-playbook ended by itself before this chain's task (a gate stopped the pass): Ansible
            # says so before it starts a task on a host, so none of its steps ran
            self._chain_settled(chain)
            open_.remove(chain)
        if not open_:
            return
        answers = self._stop_jobs([], chains_to_settle=open_)
        for chain in open_:
            if not all(task.key in answers for _, task in chain.tasks):
                continue        # its host did not answer: still open, the next resume asks again
            for (_, task), member in zip(chain.tasks, chain.members, strict=True):
                state = self.task_state(task)
                if state.status not in (J.RUNNING, J.PENDING) and state.attempts >= member.attempt:
                    continue        # its outcome is journalled
                item = progress[task.key]
                status, code = answers.get(task.key, (jobs.GONE, None))
                if status == jobs.GONE and state.status != J.RUNNING:
                    continue        # never started
                if state.status != J.RUNNING:
                    self._begin(task, item)
                if status == jobs.ENDED and code is not None:
                    self._finish(task, J.OK if code == 0 else J.FAILED, "" if code == 0 else f"exit status {code}",
                                 item, code)
                elif cancelled:
                    self._finish(task, J.CANCELLED, "stopped", item)
                else:
                    self._finish(task, J.FAILED, "ansible-playbook ended before this step did; stopped on "
                                 f"{task.host}; see {self.folder}", item)
            self._chain_settled(chain)

    def _chain_stop_lanes(self, open_: list[Chain]) -> dict[str, list[dict]]:
        from app.ansible.yaml_out import name
        lanes: dict[str, list[dict]] = {}
        for chain in open_:
            base = self._place(chain.host)[0]
            tasks = lanes.setdefault(chain.host, [])
            tasks.append(_raw(name("Stop the chain of steps"), chains.kill_script(self.info.id, chain.host, base)))
            tasks += [_raw(name(f"{m.step} stop the job"), chains.settle_script(self.info.id, chain.host, m, base))
                      for m in chain.members]
        return lanes

    # ------------------------------------------------------------------ resume

    def _open_chains(self) -> list[tuple[str, list[tuple[str, int]]]]:
        """(host, [(step, attempt)]) of each chain the journal started and never settled."""
        records, _ = J.read_records(self.info.dir)
        opened: dict[str, tuple[str, list[tuple[str, int]]]] = {}
        for r in records:
            if r.get("kind") == "chain" and isinstance(r.get("steps"), list):
                opened[str(r.get("chain"))] = (str(r.get("host")), [(str(s), int(a)) for s, a in r["steps"]])
            elif r.get("kind") == "chain-end":
                opened.pop(str(r.get("chain")), None)
        return list(opened.values())

    def _chain_leftovers(self) -> list[Task]:
        """Steps an unsettled chain may have started without the journal knowing: asked on resume."""
        if not hasattr(self, "_open_chain_list"):
            self._open_chain_list = self._open_chains()
        found: list[Task] = []
        by_key = {t.key: t for s in self.steps for t in s.tasks}
        for host, members in self._open_chain_list:
            for step, attempt in members:
                task = by_key.get((step, host))
                if task is not None and self.task_state(task).attempts < attempt:
                    self._chain_attempts[task.key] = attempt
                    found.append(task)
        return found

    def _resume_lanes(self, tasks: list[Task]) -> dict[str, list[dict]]:
        """Before any question about its steps, each host's unsettled chain is killed; a step it
        may have started is asked about as the attempt the chain would have made."""
        from app.ansible.yaml_out import name
        lanes: dict[str, list[dict]] = {}
        for host, _ in getattr(self, "_open_chain_list", []):
            if host in self.reached.transports and host not in lanes:
                lanes[host] = [_raw(name("Stop the chain of steps"),
                                    chains.kill_script(self.info.id, host, self._place(host)[0]))]
        for task in tasks:
            if task.host not in self.reached.transports:
                continue
            attempt = self._chain_attempts.get(task.key)
            base = self._place(task.host)[0]
            if attempt is None:
                script = jobs.status_script(self._job_of(task), base)
            else:
                script = chains.status_script(self.info.id, task.host, chains.Member(task.step, attempt, "", "bash", 0),
                                              base)
            lanes.setdefault(task.host, []).append(_raw(name(f"{task.step} job status"), script))
        return lanes

    def adopt(self, task: Task) -> bool:
        """Follow the job a dead driver left on its host to its end and take its outcome.  Every job
        its host said had ended is taken in the same pass as the first of them (they need no one's
        decision): a chain leaves several, and each pass costs ansible-playbook's start."""
        if self.task_state(task).status not in MAY_BE_LEFT:
            return self.task_state(task).status == J.OK      # taken with an earlier one
        answers = getattr(self, "_leftover_status", None) or {}
        ended = answers.get(task.key, ("",))[0] == jobs.ENDED
        batch = [task]
        if ended:
            batch += [t for t in self.leftovers() if t.key != task.key and answers.get(t.key, ("",))[0] == jobs.ENDED
                      and self.task_state(t).status in MAY_BE_LEFT]
        plays: dict[bool, dict[str, Lane]] = {}
        for t in batch:
            step = self.by_number[t.step]
            plays.setdefault(step.section == "run", {}).setdefault(t.host, []).append((step, t))
        self._pass([(f"Adopting {', '.join(t.step for t in batch)}", lanes, measurement)
                    for measurement, lanes in plays.items()], adopt=True)
        return self.task_state(task).status == J.OK

    def _took_chain_member(self, task: Task, status: str) -> None:
        """A step an unsettled chain started (the host says it ran): journalled as started, so it is
        adopted or stopped as any step a dead driver left."""
        attempt = self._chain_attempts.pop(task.key, None)
        if attempt is None or status == jobs.GONE:
            return
        from app.run.journal import TaskState
        self.journal.record("start", step=task.step, host=task.host, shell=task.shell, attempt=attempt,
                            engine="ansible", chained=True)
        self._set(TaskState(task.step, task.host, J.INTERRUPTED, attempts=attempt, started=J.now_iso(),
                            message="started by a chain of steps whose driver died"))

    def _chains_resumed(self, answered: set[str]) -> None:
        """The unsettled chains of the hosts that answered were killed and their steps asked about:
        settled (a host that did not answer is asked again by the next resume)."""
        records, _ = J.read_records(self.info.dir)
        ended = {str(r.get("chain")) for r in records if r.get("kind") == "chain-end"}
        for r in records:
            if r.get("kind") == "chain" and str(r.get("chain")) not in ended and str(r.get("host")) in answered:
                self.journal.record("chain-end", host=str(r.get("host")), chain=str(r.get("chain")))
        self._open_chain_list = [(h, m) for h, m in getattr(self, "_open_chain_list", []) if h not in answered]


def _raw(title, script: str) -> dict:
    from app.ansible.yaml_out import Unsafe
    return {"name": title, "ansible.builtin.raw": {"_raw_params": Unsafe(script), "executable": "/bin/sh"},
            "vars": {"ansible_ssh_use_tty": False}, "changed_when": False}
