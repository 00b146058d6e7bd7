"""Autosave and crash recovery.

While the document has unsaved changes, its project text is written every few seconds
to a file of its own under the user's state directory, next to a small JSON sidecar
(original path, time, process id, bed name).  Saving, undoing back to the saved state,
opening another bed or closing the window normally deletes both; only a crash leaves
them behind.  On the next start `find_orphans()` returns the autosaves whose process is
gone, and the file controller offers them to the user.

Nothing of the writing runs on the GUI thread: a worker takes the plain-data snapshot of the
live model (`to_data`, seconds on a 5,000-device bed, which stalled the window after each edit),
renders it and writes it.  The snapshot is kept only if no edit ran while it was taken
(`app.background.unless_edited`); an edit that runs into it sends the write round again a moment
later, and after `GUI_FALLBACK_AFTER` such rounds in a row the snapshot is taken on the GUI thread,
the way it always was, so a stream of edits cannot put an autosave off for good.
QtCore only.
"""
from __future__ import annotations

import datetime
import json
import os
import shutil
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from app.background import EditedMeanwhile, unless_edited
from app.preferences import STATE_DIR_ENV, state_dir  # noqa: F401 - where the state lives, for its users
from topology import roundtrip
from topology.fileformat import to_data, write_atomic
from topology.gc_pause import collector_paused
from topology.roundtrip import ProjectSource

INTERVAL_ENV = "TESTBED_STUDIO_AUTOSAVE_SECONDS"    # overrides DEFAULT_INTERVAL_S
DEFAULT_INTERVAL_S = 30.0
SIDECAR_FORMAT = 1
RETRY_MS = 500              # an edit ran into the worker's snapshot: the write goes round again after this
GUI_FALLBACK_AFTER = 3      # rounds an edit ran into in a row, then the GUI thread takes the snapshot


# ====================================================================== where

def autosave_dir() -> Path:
    return state_dir() / "autosave"


def broken_dir() -> Path:
    """Autosaves that could not be read are moved here, never deleted: the text may still help."""
    return autosave_dir() / "unreadable"


def interval_from_environment() -> float:
    try:
        value = float(os.environ.get(INTERVAL_ENV, DEFAULT_INTERVAL_S))
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if value > 0 else DEFAULT_INTERVAL_S


# ====================================================================== is the writer still running?

def _linux_start_token(pid: int) -> str | None:
    """boot id + the process start time: tells a live process from a later one that reuses its pid."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # the command name may contain spaces and brackets
    return f"{boot}:{fields[19]}" if len(fields) > 19 else None


def process_start_token(pid: int | None = None) -> str | None:
    return _linux_start_token(os.getpid() if pid is None else pid)


def process_alive(pid: int, start_token: str | None = None) -> bool:
    if pid <= 0:
        return False
    if os.name == "nt":  # pragma: no cover - not exercised on the Linux test machines
        import ctypes
        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return kernel32.GetLastError() == 5  # access denied: it exists, someone else's
        code = ctypes.c_ulong()
        kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, belongs to another user
    if start_token:
        now = _linux_start_token(pid)
        if now is not None and now != start_token:
            return False  # the pid was reused (or the machine rebooted)
    return True


# ====================================================================== what a crash left behind

@dataclass
class Orphan:
    """An autosave whose application is no longer running."""
    text_path: Path
    meta_path: Path
    bed_name: str
    original_path: Path | None
    saved_at: datetime.datetime
    pid: int

    @property
    def when(self) -> str:
        return self.saved_at.astimezone().strftime("%Y-%m-%d %H:%M")

    def read_text(self) -> str:
        return self.text_path.read_text(encoding="utf-8")

    def discard(self) -> None:
        for p in (self.text_path, self.meta_path):
            p.unlink(missing_ok=True)

    def set_aside(self) -> Path:
        return set_aside(self.text_path, self.meta_path)


@dataclass
class Unreadable:
    """An autosave whose sidecar is damaged: it cannot be offered, only kept for the user."""
    paths: tuple[Path, ...]
    problem: str

    def set_aside(self) -> Path:
        return set_aside(*self.paths)


def set_aside(*paths: Path) -> Path:
    """Move an autosave's files into the unreadable folder; returns where its text (or sidecar) is now."""
    target = broken_dir()
    target.mkdir(parents=True, exist_ok=True)
    moved: list[Path] = []
    for p in paths:
        if p.exists():
            dest = target / p.name
            if dest.exists():
                dest = target / f"{p.stem}-{uuid.uuid4().hex[:6]}{p.suffix}"
            shutil.move(str(p), dest)
            moved.append(dest)
    texts = [m for m in moved if m.suffix != ".json"]
    return (texts or moved or [target])[0]


def _read_sidecar(meta: Path) -> dict[str, Any]:
    data = json.loads(meta.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int):
        raise ValueError("the sidecar has no process id")
    return data


def find_orphans(directory: Path | None = None) -> tuple[list[Orphan], list[Unreadable]]:
    """Autosaves left by processes that are gone, newest first, and the ones that cannot be read.

    Autosaves of running instances (this one included) and of other machines (a shared
    home directory: their processes cannot be checked from here) are left alone.
    """
    folder = directory or autosave_dir()
    if not folder.is_dir():
        return [], []
    orphans: list[Orphan] = []
    unreadable: list[Unreadable] = []
    host = socket.gethostname()
    texts = {p.stem: p for p in folder.glob("*.yaml")}
    for meta in sorted(folder.glob("*.json")):
        text = texts.pop(meta.stem, None)
        try:
            data = _read_sidecar(meta)
        except (OSError, ValueError) as exc:
            unreadable.append(Unreadable((meta,) + ((text,) if text else ()), f"{meta.name}: {exc}"))
            continue
        if data.get("host", host) != host or process_alive(data["pid"], data.get("process_start")):
            continue
        if text is None:  # the text never made it to disk: nothing to recover
            meta.unlink(missing_ok=True)
            continue
        try:
            saved_at = datetime.datetime.fromisoformat(str(data.get("saved_at")))
        except ValueError:
            saved_at = datetime.datetime.fromtimestamp(text.stat().st_mtime).astimezone()
        original = data.get("original_path")
        orphans.append(Orphan(text, meta, str(data.get("bed") or "untitled test bed"),
                              Path(original) if original else None, saved_at, data["pid"]))
    for stem, text in texts.items():
        # a text without a sidecar: the sidecar is written second, so only a crash between the two
        pid = int(stem.split("-", 1)[0]) if stem.split("-", 1)[0].isdigit() else 0
        if not process_alive(pid):
            unreadable.append(Unreadable((text,), f"{text.name}: its description (.json) is missing"))
    orphans.sort(key=lambda o: o.saved_at, reverse=True)
    return orphans, unreadable


# ====================================================================== writing

class _Relay(QObject):
    failed = Signal(str)
    written = Signal(object)    # Path of the autosave text
    interrupted = Signal()      # an edit ran while the worker took the snapshot: nothing was written


class _WriteJob(QRunnable):
    def __init__(self, take: Callable[[], Any], text_path: Path, meta: dict[str, Any], relay: _Relay,
                 source: ProjectSource | None = None):
        super().__init__()
        self.take, self.text_path, self.meta, self.relay = take, text_path, meta, relay
        self.source = source

    def run(self) -> None:
        try:
            data = self.take()
        except EditedMeanwhile:
            self.relay.interrupted.emit()
            return
        except Exception as exc:
            self.relay.failed.emit(f"Autosave failed: {exc}")
            return
        try:
            # render() takes plain data as it takes a bed, so this is the exact project text
            # (over the file's own text: a recovered bed keeps the comments the file had)
            text = roundtrip.render(data, self.source).text
            self.text_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomic(self.text_path, text.encode("utf-8"))
            meta_path = self.text_path.with_suffix(".json")
            write_atomic(meta_path, json.dumps(self.meta, indent=2).encode("utf-8"))
            self.relay.written.emit(self.text_path)
        except Exception as exc:
            self.relay.failed.emit(f"Autosave failed: {getattr(exc, 'strerror', None) or exc}")


def snapshot_data(bed: Any) -> Any:
    """The bed as plain data that shares nothing mutable with the model (safe to hand to a thread)."""
    # the snapshot is acyclic: pausing the collector makes it ~40 % cheaper on big beds
    with collector_paused():
        return _detach(to_data(bed))


def _detach(data: Any) -> Any:
    """Copy the containers of to_data's result: some model values are lists/dicts it shares."""
    if isinstance(data, dict):
        return type(data)((k, _detach(v)) for k, v in data.items())
    if isinstance(data, list):
        return type(data)(_detach(v) for v in data)
    return data


class Autosaver(QObject):
    """Writes the document's text every `interval_s` seconds while it is dirty."""

    failed = Signal(str)
    written = Signal(object)

    def __init__(self, document: Any, parent: QObject | None = None, *,
                 interval_s: float | None = None, directory: Path | None = None):
        super().__init__(parent or document)
        self.document = document
        self.directory = directory
        self.text_path: Path | None = None     # this session's autosave, once written
        self._written_revision: int | None = None
        self._pending = False
        self._interrupted = 0               # snapshots in a row that an edit ran into
        self.gui_snapshots = 0              # snapshots taken on the GUI thread (the fallback)
        self._relay = _Relay(self)
        self._relay.failed.connect(self._on_failed)
        self._relay.written.connect(self._on_written)
        self._relay.interrupted.connect(self._on_interrupted)
        self._retry = QTimer(self, singleShot=True, interval=RETRY_MS, timeout=self._tick)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)         # one writer: files are written in order
        seconds = interval_s if interval_s is not None else interval_from_environment()
        self._timer = QTimer(self, interval=max(1, int(seconds * 1000)), timeout=self._tick)
        self._session = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        document.dirty_changed.connect(self._on_dirty_changed)
        document.reset.connect(self._on_reset)

    @property
    def interval_s(self) -> float:
        return self._timer.interval() / 1000

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def start(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def stop(self) -> None:
        """A clean end: no more writes, and the autosave goes (the user saved or chose to discard)."""
        self._timer.stop()
        self.remove()

    # ------------------------------------------------------------------ writing
    def _tick(self) -> None:
        if self.document.dirty and self.document.revision != self._written_revision:
            self.write_now()

    def write_now(self) -> None:
        if self._pool.activeThreadCount():
            return  # the previous write is still going; the next tick catches up
        folder = self.directory or autosave_dir()
        path = folder / f"{self._session}.yaml"
        doc = self.document
        meta = {"format": SIDECAR_FORMAT, "bed": doc.title,
                "original_path": str(Path(doc.path).resolve()) if doc.path else None,
                "saved_at": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                "pid": os.getpid(), "process_start": process_start_token(), "host": socket.gethostname()}
        self._written_revision = doc.revision
        self.text_path = path
        bed = doc.bed
        if self._interrupted >= GUI_FALLBACK_AFTER or not hasattr(doc, "edit_seq"):
            data = snapshot_data(bed)
            self.gui_snapshots += 1

            def take() -> Any:
                return data
        else:
            def take() -> Any:
                return unless_edited(doc, lambda: snapshot_data(bed))
        self._pool.start(_WriteJob(take, path, meta, self._relay, getattr(doc, "source", None)))

    def wait(self, msecs: int = 10000) -> bool:
        return self._pool.waitForDone(msecs)

    def remove(self) -> None:
        self._retry.stop()
        self._pool.clear()
        self._pool.waitForDone()   # a write in flight must not recreate the file after this
        self._written_revision = None
        if self.text_path is not None:
            for p in (self.text_path, self.text_path.with_suffix(".json")):
                try:
                    p.unlink(missing_ok=True)
                except OSError as exc:
                    self.failed.emit(f"Cannot remove the autosave {p}: {exc.strerror or exc}")
            self.text_path = None

    # ------------------------------------------------------------------ document events
    def _on_dirty_changed(self, dirty: bool) -> None:
        if not dirty:  # saved, or undone back to what is on disk
            self.remove()

    def _on_reset(self) -> None:
        """Another bed is shown: the old autosave is settled; recovered work is written at once."""
        self.remove()
        if self.document.dirty:
            self.write_now()

    def _on_interrupted(self) -> None:
        self._interrupted += 1
        self._written_revision = None       # not written: the write goes round again
        if self.document.dirty and self._timer.isActive():
            self._retry.start()

    def _on_failed(self, text: str) -> None:
        self._written_revision = None  # try again next tick
        self.failed.emit(text)

    def _on_written(self, path: Path) -> None:
        self._interrupted = 0
        self.written.emit(path)
