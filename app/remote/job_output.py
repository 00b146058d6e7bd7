"""A job follower's stdout, taken apart into the step's own stdout and stderr.

A follower that starts with its job streams both of the job's files with one `tail` (one program
fewer on the host for every step than a tail per file; on 50 hosts at once every program a step
starts is time they all wait).  tail marks whose bytes follow with a header line, `==> PATH <==`,
written after a newline of its own when another file's bytes came before (GNU tail: the newline and
the header in one write).  The follower names the folder first, on a line of its own
(`MERGED_MARK FOLDER`), so the headers are known exactly; they hold the job's own folder, which
no step prints by chance.  A follower that does not name it (two tails: its stdout is the step's
stdout) is passed through as it is.

Each file's bytes go to a splitter of their own, so a line cut by a switch of files goes on where
it stopped.  A newline that ends the stream so far is held back only when it would end an empty
line (it may be tail's, before the next header): a line's own end is never held, so a line
reaches the display as soon as it arrives.  The one case read differently from the files: a
line still open when the other file printed, whose header arrived in a later read than tail's
newline before it, is ended there.
"""
from __future__ import annotations

from typing import Protocol

from app.remote.base import LineSplitter, OutputSink

MERGED_MARK = b"@testbed-studio-merged "
_FIRST_LINE_BOUND = 64 * 1024      # a first line this long without a newline is not the mark


class Splitter(Protocol):
    def feed(self, data: bytes) -> None: ...
    def flush(self) -> None: ...


def command_stdout(on_output: OutputSink | None, tail: list[str], follows_job: bool) -> Splitter:
    """What reads a command's stdout: a job's follower may carry both of the job's streams on it."""
    out = LineSplitter("stdout", on_output, tail)
    return FollowedOutput(out, LineSplitter("stderr", on_output, tail)) if follows_job else out


class FollowedOutput:
    """feed()/flush() like a LineSplitter: the follower's stdout in, each of the job's streams
    to its own splitter."""

    def __init__(self, out: Splitter, err: Splitter):
        self._out, self._err = out, err
        self._first: bytes | None = b""       # the first line, until it is known (None: known)
        self._headers: dict[bytes, Splitter] = {}
        self._to: Splitter = out
        self._held = b""
        self._at_line_start = True           # the merged stream's last byte was a newline (or none yet)

    def feed(self, data: bytes) -> None:
        if self._first is not None:
            data = self._take_first_line(data)
            if self._first is not None or not data:
                return
        if not self._headers:
            self._out.feed(data)
            return
        self._route(self._held + data)

    def flush(self) -> None:
        if self._first:                      # a first line never ended: plain output
            self._out.feed(self._first)
            self._first = None
        if self._held:
            self._to.feed(self._held)
            self._held = b""
        self._out.flush()
        self._err.flush()

    def _take_first_line(self, data: bytes) -> bytes:
        """Reads the follower's first line; what follows it is returned (all of it, once known)."""
        seen = self._first + data
        end = seen.find(b"\n")
        if end < 0 and len(seen) < _FIRST_LINE_BOUND and (MERGED_MARK.startswith(seen[:len(MERGED_MARK)])):
            self._first = seen
            return b""
        self._first = None
        if end >= 0 and seen.startswith(MERGED_MARK):
            folder = seen[len(MERGED_MARK):end].rstrip(b"\r")
            self._headers = {b"==> " + folder + b"/out <==\n": self._out,
                             b"==> " + folder + b"/err <==\n": self._err}
            return seen[end + 1:]
        return seen

    def _route(self, buf: bytes) -> None:
        self._held = b""
        while True:
            found = self._next_header(buf)
            if found is None:
                break
            at, header = found
            # tail's own newline before a header that follows another file's bytes
            before = buf[:at - 1] if at > 0 else b""
            if before:
                self._to.feed(before)
            self._to = self._headers[header]
            buf = buf[at + len(header):]
            self._at_line_start = True
        self._hold_back(buf)

    def _next_header(self, buf: bytes) -> tuple[int, bytes] | None:
        """The first header in `buf` at the start of a line: (where, which)."""
        best: tuple[int, bytes] | None = None
        for header in self._headers:
            start = 0
            while True:
                at = buf.find(header, start)
                if at < 0:
                    break
                if (at == 0 and self._at_line_start) or (at > 0 and buf[at - 1:at] == b"\n"):
                    if best is None or at < best[0]:
                        best = (at, header)
                    break
                start = at + 1
        return best

    def _hold_back(self, buf: bytes) -> None:
        """Sends `buf` on, but for what may be the start of a header (and tail's newline before it,
        when that newline would end an empty line)."""
        if not buf:
            return
        cut = len(buf)
        line_start = buf.rfind(b"\n") + 1
        piece = buf[line_start:]
        starts_line = line_start > 0 or self._at_line_start
        if piece and starts_line and any(h.startswith(piece) for h in self._headers):
            cut = line_start
        # the newline before the held piece (or the last byte) when it ends an empty line: maybe tail's
        ends_empty_line = cut == 1 and self._at_line_start or buf[cut - 2:cut - 1] == b"\n"
        if cut > 0 and buf[cut - 1:cut] == b"\n" and ends_empty_line:
            cut -= 1
        if cut:
            self._to.feed(buf[:cut])
            self._at_line_start = buf[cut - 1:cut] == b"\n"
        self._held = buf[cut:]
