"""What ties the Run tab to the open bed, and the words it uses for what a run did.

A run belongs to the bed file it was started from.  The tab shows the open bed's runs only:
when another bed is opened (or the file changes on disk), the run shown is let go of, and
every action names the bed open now (its file's sha256), so the run's journal refuses a
record made from any other bed (app.run.journal.Writer).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from app.run import events as E
from app.run.plan import table_text as step_table_text  # noqa: F401 - the wizard's name for it


class OpenBed:
    def __init__(self, document):
        self.document = document
        self._digest: tuple[tuple[str, int, int], str] | None = None

    def path(self) -> Path | None:
        path = getattr(self.document, "path", None)
        return Path(path).resolve() if path else None

    def sha256(self) -> str:
        """The open bed's file as it is on disk now ("" when it has none): what a run started
        from it records, and what a record made from it must match."""
        path = self.path()
        if path is None:
            return ""
        try:
            st = os.stat(path)
        except OSError:
            return ""
        key = (str(path), st.st_mtime_ns, st.st_size)
        if self._digest is None or self._digest[0] != key:
            try:
                self._digest = (key, hashlib.sha256(path.read_bytes()).hexdigest())
            except OSError:
                return ""
        return self._digest[1]

    def is_bed_of(self, session) -> bool:
        """The session drives a run of the bed open now, from the file as it is now."""
        return session.bed_path == self.path() and (not session.digest or session.digest == self.sha256())


def leftover_text(e: E.Leftover) -> str:
    if e.detail and e.what in ("ended", "stopping"):
        # the driver's own stop (timeout, Stop) never reached the host: what became of that copy
        then = (f"it has ended there since (exit status {e.number}); its result is taken." if e.what == "ended" else
                f"stopping it (process group {e.number}); it runs again.")
        return f"Step {e.step} on {e.host}: {e.detail}; {then}"
    return {"ended": f"Step {e.step} on {e.host} ended on its own while no driver ran (exit status {e.number}); "
                     "its result is taken.",
            "adopting": f"Step {e.step} on {e.host} is still running (process group {e.number}); waiting for it "
                        "and reading its output on from where the last driver stopped.",
            "stopping": f"Stopping step {e.step} on {e.host} (process group {e.number}); it runs again.",
            "undecided": f"Step {e.step} is still running on {e.host} (process group {e.number}), left by a "
                         "driver that died; nothing was started. Run again to adopt or stop it.",
            "unreachable": f"Step {e.step} on {e.host} may still be running there, and the host cannot be "
                           f"asked: {e.detail}. Nothing was started; run again when the host answers."}[e.what]


def recorded_seconds(run_dir) -> float | None:
    """How long the run's journal says its steps took from the first start to the last end
    (drivers' pauses between resumes included); None before a step ran."""
    from datetime import datetime

    from app.run import journal as J
    try:
        records = J.read_records(run_dir)[0]
    except (OSError, ValueError):
        return None
    times = []
    for r in records:
        if r.get("kind") in ("start", "end", "mark"):
            try:
                times.append(datetime.fromisoformat(str(r.get("time", ""))).timestamp())
            except ValueError:
                continue
    return max(times) - min(times) if len(times) > 1 else None
