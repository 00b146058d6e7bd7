"""The run record, tried in the designer in a real X server (Xvfb + xdotool, tests/x_run_record.py's
scenes), with real fio on this machine's local transport and the application killed with -9:

1. the Run tab belongs to the open bed: File › Open of another bed lets go of the run shown,
   which goes on in the background and writes nothing the other bed's view asks for;
2. every way into a step a killed application left running (Run all, Retry, Run step, the
   command line's resume) adopts it once: one execution in the journal, its real duration, its
   samples after the kill collected from the host (results: >= 95 % of the step);
3. a finished run opened again draws what it recorded; results and compare say what a run
   rests on and will not judge or compare a load cut short by the kill;
4. the smaller things: time left from the load's stated duration, fio's figures in the output
   pane (the raw JSON one click away), no "0 more time(s)" step, a manual step's parameters,
   the results step the engine did itself, the Compare list following a finished run.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from app.run import journal as J
from tests.x_run_record import fio_bed

ROOT = Path(__file__).resolve().parent.parent
SCENES = ROOT / "tests" / "x_run_record.py"
LOAD_S = 36

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (shutil.which("Xvfb") and shutil.which("xdotool") and shutil.which("fio")),
                                 reason="needs Xvfb, xdotool and fio (.ci/setup.sh installs them)")]


@contextlib.contextmanager
def xvfb():
    """An X server of its own (its display name)."""
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_fd,))
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as numbers:
            yield f":{numbers.readline().strip()}"
    finally:
        server.terminate()
        server.wait(timeout=10)


class Lab:
    """One state folder (runs, local hosts' job folders) shared by the scenes of a test."""

    def __init__(self, tmp: Path, display: str):
        self.tmp, self.display = tmp, display
        self.state = tmp / "state"
        self.runs = self.state / "runs"

    def env(self) -> dict:
        return {**os.environ, "DISPLAY": self.display, "QT_QPA_PLATFORM": "xcb",
                "TESTBED_STUDIO_STATE_DIR": str(self.state), "PYTHONPATH": str(ROOT)}

    def scene(self, name: str, *args, out: str | None = None) -> tuple[subprocess.Popen, Path]:
        result = self.tmp / (out or f"{name}.json")
        proc = subprocess.Popen([sys.executable, str(SCENES), name, str(result), *map(str, args)], env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
        return proc, result

    def finish(self, proc: subprocess.Popen, result: Path, timeout: float = 240) -> dict:
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        said = read(result)
        assert "failure" not in said and said.get("done"), f"{said}\n{out[-3000:]}"
        return said

    def cli(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                              timeout=timeout, env=self.env(), cwd=ROOT, stdin=subprocess.DEVNULL)


def read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def wait_for(condition, seconds: float, what: str):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"waited {seconds:.0f} s for {what}")


def executions(run_dir: Path, step: str) -> list[dict]:
    """The start records that started the step (an adopted follower is not an execution)."""
    return [r for r in J.read_records(run_dir)[0] if r["kind"] == "start" and r["step"] == step
            and not r.get("adopted")]


def load_number(bed: Path) -> str:
    from app.run.session import RunSession
    return next(s.number for s in RunSession.from_file(bed).all_steps if s.template.endswith("run.yaml#load"))


def coverage_percent(results_stdout: str) -> int:
    found = re.search(r"rests on: \S+: \d+ s of samples over the [\d.]+ s step \S+ [^(]*\((\d+)%\)", results_stdout)
    assert found, results_stdout
    return int(found.group(1))


def _killed_in_the_load(lab: Lab, bed: Path, path: str) -> tuple[Path, dict, float]:
    """The application started the load step by PATH and was killed with -9 at a random second of it."""
    launched = time.monotonic()
    proc, result = lab.scene("start", bed, path)
    try:
        wait_for(lambda: read(result).get("running") or read(result).get("failure") and read(result), 90,
                 "the load step running with fio's figures shown")
        said = read(result)
        assert "failure" not in said, said
        # the rest of the load must outlast the restart, or the step ends on its own while no driver runs and
        # nothing is left to adopt (seen under load: the resumed application found the step ended).  A restart
        # does about what this start did (the application up, the bed opened, the Run tab): on a slow machine
        # the kill comes earlier, never so late that the load's rest is under twice this start
        started_in = time.monotonic() - launched
        left_of_load = LOAD_S - 5 - (time.time() - said["running"])     # fio had printed 3 reports
        at = random.uniform(3, max(3.0, min(LOAD_S * 0.4, left_of_load - 2 * started_in)))
        time.sleep(at)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
    said = read(result)
    run_dir = lab.runs / said["run_id"]
    assert J.replay(J.read_records(run_dir)[0])[(said["load"], "load-client-1")].status == J.INTERRUPTED
    return run_dir, said, at


ADOPTING_PATHS = ("retry", "run_all", "cli")


def _adopt(tmp: Path, path: str, delay_s: float) -> dict:
    """One way into the load step a killed application left, from the start of the load to the results
    and compare commands, on an X server and state folder of its own (judged by the test of PATH)."""
    time.sleep(delay_s)
    with xvfb() as display:
        lab = Lab(tmp, display)
        bed = fio_bed(lab.tmp / "bed.yaml", "load-client-1", lab.tmp / "fio.dat", LOAD_S)
        run_dir, started, killed_at = _killed_in_the_load(lab, bed, "run_all" if path == "run_all" else "run_step")
        load = started["load"]
        # the record as the kill left it (judged below): a part of the load is not judged, not compared
        snapshot = lab.tmp / "snapshot" / run_dir.name
        shutil.copytree(run_dir, snapshot, ignore=shutil.ignore_patterns("driver.lock"))
        got = {"run_dir": run_dir, "started": started, "killed_at": killed_at, "load": load}
        if path == "cli":
            got["done"] = lab.cli("run", str(bed), "--resume", run_dir.name, "--steps", load, "--still-running",
                                  "adopt", "--no-preflight")
        else:
            proc, result = lab.scene("resume", bed, path)
            got["said"] = lab.finish(proc, result)
        got["partial"] = lab.cli("results", str(snapshot))
        got["results"] = lab.cli("results", run_dir.name)
        got["compared"] = lab.cli("compare", run_dir.name, str(snapshot), "--metric", "iops")
    return got


@pytest.fixture(scope="module")
def adoptions(tmp_path_factory) -> dict[str, Future]:
    """The three ways run at once, each with its own killed application, X server and runs: most of
    each is its own fio load, waited for (fio at queue depth 1 takes little CPU), and one after the
    other they made this file about 80 s longer.  Started 4 s apart, so that the applications do not
    all start at the same instant; the load is 36 s, not 30, so that its rest still outlasts a
    restart slowed by the other two (the kill comes earlier on a slow machine: _killed_in_the_load)."""
    pool = ThreadPoolExecutor(len(ADOPTING_PATHS), thread_name_prefix="adopt")
    futures = {path: pool.submit(_adopt, tmp_path_factory.mktemp(f"adopt-{path}"), path, 4.0 * i)
               for i, path in enumerate(ADOPTING_PATHS)}
    yield futures
    pool.shutdown(wait=True)


@pytest.mark.timeout(420)
@pytest.mark.parametrize("path", ADOPTING_PATHS)
def test_every_way_into_a_step_a_killed_application_left_adopts_it_once_with_its_real_time_and_samples(
        adoptions, path):
    got = adoptions[path].result(timeout=400)
    run_dir, started, killed_at, load = got["run_dir"], got["started"], got["killed_at"], got["load"]
    if path == "cli":
        done = got["done"]
        assert done.returncode == 0, done.stdout + done.stderr
        assert "waiting for it" in done.stdout
    else:
        said = got["said"]
        assert said["status_on_resume"] == J.INTERRUPTED
        assert said["load_status"] == J.OK, said
        assert "still running" in said["asked"]

    starts = executions(run_dir, load)
    assert len(starts) == 1, starts                     # exactly one execution: never a second fio
    ends = [r for r in J.read_records(run_dir)[0] if r["kind"] == "end" and r["step"] == load]
    assert len(ends) == 1 and ends[0]["status"] == J.OK
    assert LOAD_S <= ends[0]["seconds"] < LOAD_S + 15, ends   # the step's real time, not the adopter's wait
    partial = got["partial"]
    assert partial.returncode == 1 and "INCOMPLETE" in partial.stdout and "PASS" not in partial.stdout, partial.stdout
    assert coverage_percent(partial.stdout) < 90
    results = got["results"]
    assert results.returncode == 0, results.stdout + results.stderr
    assert coverage_percent(results.stdout) >= 95, (killed_at, results.stdout)
    # compare names what each run rests on, and refuses the one cut short
    compared = got["compared"]
    assert compared.returncode == 2 and "rests on" in compared.stderr and "not compared" in compared.stderr
    if path == "retry":
        # the smaller things, seen while the load ran and after
        assert re.search(r"about 0:0[01]:\d\d left", started["estimate_before_load"]), started
        json_key = re.compile(r'\] +"[\w<>=.]+" : ')        # a line of fio's JSON report as the host printed it
        assert "fio " in started["output"] and not json_key.search(started["output"]), started["output"]
        assert json_key.search(started["raw_output"])
        assert said["collect_status"] == J.DONE      # the results step the engine did itself is not left to a person
        assert run_dir.name in said["compare_lists"]


def _other_bed(tmp: Path) -> dict:
    with xvfb() as display:
        lab = Lab(tmp, display)
        bed_a = fio_bed(lab.tmp / "a.yaml", "load-client-1", lab.tmp / "a.dat", 20)
        bed_b = fio_bed(lab.tmp / "b.yaml", "load-client-2", lab.tmp / "b.dat", 20, workload="web", read_ms=5)
        proc, result = lab.scene("other-bed", bed_a, bed_b)
        return {"runs": lab.runs, "said": lab.finish(proc, result)}


def _reopen(tmp: Path) -> dict:
    from app.metrics.results import load_samples
    with xvfb() as display:
        lab = Lab(tmp, display)
        bed = fio_bed(lab.tmp / "bed.yaml", "load-client-1", lab.tmp / "fio.dat", 12)
        got: dict = {"ran": lab.cli("run", str(bed), "--steps", load_number(bed), "--no-preflight")}
        if got["ran"].returncode != 0:
            return got
        run_id = next(lab.runs.iterdir()).name
        got["recorded"] = [s for s in load_samples(lab.runs / run_id)
                           if s.source == "load-client-1" and s.metric == "iops"]
        proc, result = lab.scene("reopen", bed, run_id)
        got["said"] = lab.finish(proc, result)
    return got


@pytest.fixture(scope="module")
def finished_runs(tmp_path_factory) -> dict[str, Future]:
    """The scenes of a run another bed's opening let go of and of a finished run opened again, at once
    (each on its own X server, with its own runs): each waits most of its time on its own fio load."""
    pool = ThreadPoolExecutor(2, thread_name_prefix="scene")
    futures = {"other-bed": pool.submit(_other_bed, tmp_path_factory.mktemp("other-bed")),
               "reopen": pool.submit(_reopen, tmp_path_factory.mktemp("reopen"))}
    yield futures
    pool.shutdown(wait=True)


@pytest.mark.timeout(300)
def test_opening_another_bed_lets_go_of_the_run_shown_and_writes_nothing_to_it(finished_runs):
    got = finished_runs["other-bed"].result(timeout=280)
    said = got["said"]
    run_a = got["runs"] / said["run_a"]
    # nothing the other bed's view asked for was written to A (the engine's own tick of the results step is A's)
    assert not [r for r in J.read_records(run_a)[0] if r["kind"] == "mark" and "wizard" in r.get("message", "")]
    shown = said["after_open_b"]
    assert shown["steps shown"] == [] and shown["series"] == [], shown
    assert not any("oltp" in c for c in shown["criteria"]), shown         # A's criterion is not B's
    assert not said["progress_ticking"] and shown["progress"] == ""
    # A went on in the background to its end, and its bed shows it again with its samples
    ends = [r for r in J.read_records(run_a)[0] if r["kind"] == "end"]
    assert ends and ends[-1]["status"] == J.OK, ends
    assert said["reopened_a"]["load"] == J.OK and said["reopened_a"]["points"].get("load-client-1 iops", 0) >= 15


@pytest.mark.timeout(300)
def test_a_finished_run_opened_again_draws_every_sample_it_recorded(finished_runs):
    got = finished_runs["reopen"].result(timeout=280)
    ran = got["ran"]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    recorded = got["recorded"]
    assert len(recorded) >= 10
    said = got["said"]
    assert said["points"]["load-client-1 iops"] == len(recorded), said
    x0, x1 = said["axis"]
    assert x0 > 1e9 and recorded[0].timestamp - 2 <= x0 <= recorded[0].timestamp + 1     # dates, not 0.25 … 1


def test_the_procedure_has_no_empty_or_self_done_steps_and_counts_hosts(tmp_path):
    bed = fio_bed(tmp_path / "bed.yaml", "load-client-1", tmp_path / "fio.dat", 30)
    dry = subprocess.run([sys.executable, "-m", "app.cli", "run", str(bed), "--dry-run"], capture_output=True,
                         text=True, timeout=60, env={**os.environ, "TESTBED_STUDIO_STATE_DIR": str(tmp_path)})
    assert "more time(s)" not in dry.stdout and "host(s) in parallel" not in dry.stdout
    assert "(on 1 host)" in dry.stdout and "(by hand)" in dry.stdout
    assert f"the engine takes these files from load-client-1 when step {load_number(bed)} ends" in dry.stdout
    from app.run.plan import table_text
    from app.run.session import RunSession
    steps = RunSession.from_file(bed).all_steps
    parameters = next(s for s in steps if s.text.startswith("Set up fio"))
    assert str(tmp_path / "fio.dat") in table_text(parameters) and "Duration minutes" in table_text(parameters)
    assert next(s for s in steps if s.template.endswith("#load")).stated_seconds == 30


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", *sys.argv[1:]]))

