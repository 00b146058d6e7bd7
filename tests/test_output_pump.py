"""A step's output never lost silently: a line without end is cut at a bound with a note (memory
stays bounded however much a step prints without a newline), and a pump that fails fails its
step instead of reporting it OK with its output gone."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from app.remote.base import LINE_BOUND
from app.remote.local import LocalTransport

_UNDER_A_MEMORY_CAP = textwrap.dedent("""
    import resource, sys
    from pathlib import Path
    from app.run import journal as J
    from app.run.engine import RunEngine
    from app.run.plan import RunStep, Task
    from app.remote.local import LocalTransport
    work = Path(sys.argv[1])
    size_mb = int(sys.argv[2])
    task = Task("1.1", "h1", "bash", f"head -c {size_mb}M /dev/zero | tr '\\\\0' x; echo; echo after")
    step = RunStep("1.1", "one endless line", "hosts", "Hosts", "h1", [task])
    info = J.new_run(str(work / "bed.yaml"), "", root=work / "runs")
    engine = RunEngine(info, [step], lambda host: LocalTransport(host, workdir=work / "host"))
    with open("/proc/self/status") as fh:
        vm = next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmSize:"))
    # the line alone is larger than the room left: kept whole, it could never fit
    room = (size_mb // 2) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + room, vm + room))
    ok = engine.run_steps([step])
    engine.close()
    state = J.replay(J.read_records(info.dir)[0])[("1.1", "h1")]
    print(state.status, ok, (info.dir / "output" / "1.1@h1.log").stat().st_size)
""")


def test_an_endless_line_under_a_memory_cap_is_cut_with_a_note_and_the_step_ends_ok(tmp_path):
    try:
        r = subprocess.run([sys.executable, "-c", _UNDER_A_MEMORY_CAP, str(tmp_path), "400"], capture_output=True,
                           text=True, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("the step hung: its output pump died and nothing drained the pipe")
    assert r.returncode == 0, r.stdout + r.stderr
    status, ok, size = r.stdout.split()
    assert (status, ok) == ("ok", "True"), r.stdout + r.stderr
    log = next((tmp_path / "runs").iterdir()) / "output" / "1.1@h1.log"
    text = log.read_bytes()
    assert LINE_BOUND < int(size) < LINE_BOUND + 4096
    assert b"x" * LINE_BOUND + f" … {400 * 1024 * 1024 - LINE_BOUND} bytes cut".encode() in text
    assert text.endswith(b"\nafter\n")


def test_a_line_just_over_the_display_cap_is_still_kept_whole_in_the_output(tmp_path):
    lines: list[str] = []
    t = LocalTransport("h1", workdir=tmp_path)
    result = t.run("head -c 100000 /dev/zero | tr '\\0' y; echo", on_output=lambda s, line: lines.append(line))
    assert result.ok
    assert lines[0].whole == b"y" * 100000 and "bytes cut (the whole line" in lines[0]


def test_a_pump_that_fails_fails_its_step(tmp_path):
    def display(stream: str, line: str) -> None:
        if line == "second":
            raise RuntimeError("the display broke")

    t = LocalTransport("h1", workdir=tmp_path)
    result = t.run("echo first; echo second; echo third", on_output=display)
    assert not result.ok and result.status == "failed"
    assert "the step's output could not be read (RuntimeError: the display broke)" in result.message
