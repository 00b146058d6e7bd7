"""A job follower's one tail for both of the job's files, taken apart again by the driver: what
real GNU tail printed while a step wrote to its stdout and stderr in turn comes back as each
file's lines, however the transport cut it into reads, and a line is never held back."""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from app.remote import jobs
from app.remote.base import LineSplitter
from app.remote.job_output import MERGED_MARK, FollowedOutput

pytestmark = pytest.mark.skipif(shutil.which("tail") is None, reason="needs tail")


def _tail_of(folder: Path, writes: list[tuple[str, str]]) -> bytes:
    """What the follower prints: its mark line, then one real tail following both files while
    the writes land one after the other (each a separate moment, as a step's prints are)."""
    (folder / "out").write_text("")
    (folder / "err").write_text("")
    tail = subprocess.Popen(["tail", "-s", "0.02", "-f", "-n", "+1", f"{folder}/out", f"{folder}/err"],
                            stdout=subprocess.PIPE)
    try:
        for name, text in writes:
            time.sleep(0.06)
            with open(folder / name, "a") as f:
                f.write(text)
        time.sleep(0.15)
    finally:
        tail.terminate()
        printed = tail.communicate(timeout=10)[0]
    return MERGED_MARK + str(folder).encode() + b"\n" + printed


def _taken_apart(chunks: list[bytes]) -> tuple[list[str], list[str], list[str]]:
    got: list[str] = []
    out: list[str] = []
    err: list[str] = []
    follower = FollowedOutput(LineSplitter("stdout", lambda s, line: out.append(line), got),
                              LineSplitter("stderr", lambda s, line: err.append(line), got))
    for chunk in chunks:
        follower.feed(chunk)
    follower.flush()
    return out, err, got


WHOLE_LINES = [("out", "first\n"), ("err", "warning: one\n"), ("out", "second\nthird\n"), ("err", "\n"),
               ("out", "==> not a header <==\n"), ("err", "e2\n"), ("out", "\n\n"), ("out", "last\n")]


def test_each_files_lines_come_back_whole_however_the_output_is_cut(tmp_path):
    printed = _tail_of(tmp_path, WHOLE_LINES)
    want_out = "".join(t for n, t in WHOLE_LINES if n == "out").split("\n")[:-1]
    want_err = "".join(t for n, t in WHOLE_LINES if n == "err").split("\n")[:-1]
    assert _taken_apart([printed])[:2] == (want_out, want_err)
    for cut in range(1, len(printed)):
        assert _taken_apart([printed[:cut], printed[cut:]])[:2] == (want_out, want_err), cut
    assert _taken_apart([printed[i:i + 1] for i in range(len(printed))])[:2] == (want_out, want_err)


def test_a_line_cut_by_the_other_streams_print_goes_on_where_it_stopped(tmp_path):
    writes = [("out", "progress 10%"), ("err", "note\n"), ("out", " 50% done\n"), ("err", "half"), ("out", "x\n"),
              ("err", " line\n")]
    printed = _tail_of(tmp_path, writes)
    assert _taken_apart([printed])[:2] == (["progress 10% 50% done", "x"], ["note", "half line"])


def test_a_line_reaches_the_display_as_it_arrives_not_with_the_next_one(tmp_path):
    printed = _tail_of(tmp_path, [("out", "one\n"), ("err", "two\n"), ("out", "three\n")])
    out: list[str] = []
    err: list[str] = []
    follower = FollowedOutput(LineSplitter("stdout", lambda s, line: out.append(line), []),
                              LineSplitter("stderr", lambda s, line: err.append(line), []))
    # each read ends at a line's end: its line is out before the next read
    for piece in printed.split(b"\n")[:-1]:
        follower.feed(piece + b"\n")
        if piece in (b"one", b"three"):
            assert out[-1] == piece.decode()
        if piece == b"two":
            assert err[-1] == "two"


def test_a_follower_of_two_tails_is_passed_through_as_the_steps_stdout():
    out, err, _ = _taken_apart([b"==> out <==\nplain\n", b"lines\n"])
    assert out == ["==> out <==", "plain", "lines"] and err == []


def test_over_a_real_job_the_steps_stdout_and_stderr_arrive_apart_in_one_tail(tmp_path):
    """The follower a fresh start uses: one tail, the folder named first."""
    job = jobs.Job("run-1", "1.1", "h1", attempt=1)
    script = "echo to-out; echo to-err >&2; printf 'no newline' >&2; sleep 0.1; echo ' end' >&2; echo more"
    text = jobs.start_script(job, script, "bash", base=str(tmp_path / "jobs"), merged=True)
    done = subprocess.run(["sh", "-s"], input=text.encode(), capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    out, err, _ = _taken_apart([done.stdout])
    assert out == ["to-out", "more"] and err == ["to-err", "no newline end"]
    assert done.stdout.count(b"==> ") == done.stdout.count(b" <==\n") >= 2        # one tail did both
