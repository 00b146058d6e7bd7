"""File handling for the main window: new, open, save, save as, recent files, autosave and
crash recovery, and the questions around them (discard unsaved changes? recover the work
a crash left?).  Loading and saving themselves are the document's, autosaving is
app/autosave.py's; this module owns the dialogs and the recent-files list.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

import resources
from app import preferences
from app.autosave import Autosaver, Orphan, find_orphans
from app.background import DrawingFirst, FirstFrame
from app.document import new_bed
from topology.errors import BedFileError
from topology.fileformat import loads, loads_keeping_broken_references, read_text
from topology.repair import broken_references, drop_broken_references
from topology.roundtrip import ProjectSource
from widgets.lifetimes import exec_once
from widgets.problems_dialog import show_problems, split_problems

FILE_FILTER = "Test beds (*.yaml *.yml);;All files (*)"
LONG_ERROR_LINES = 12
# the loader speaks to the command line; a window user starts from the menu
CLI_EXAMPLE_HINT = "start from `testbed-studio new --example NAME`"
GUI_EXAMPLE_HINT = "start from File › New from Example…"


class FileController:
    def __init__(self, window: Any):
        self.window = window
        self.document = window.document
        self._recent_menu: QMenu | None = None
        self.autosave = Autosaver(self.document, window)
        self.autosave.failed.connect(lambda text: self.window.statusBar().showMessage(text, 10000))

    # ------------------------------------------------------------------ opening
    def open_initial(self, path: str | None = None, progress: Any = None) -> bool:
        """At start: offer the work a crash left, else open `path`, else the default example.
        `progress`: the start-up splash (widgets/open_progress.py) the command line's bed goes on with."""
        self.autosave.start()
        if progress is not None and (not path or self._recovery_to_offer()):
            progress.close()        # no bed of its own to show, or a question comes first
            progress = None
        recovered = self.offer_recovery()
        if recovered is not None:
            if path:
                self.window.statusBar().showMessage(
                    f"Recovered unsaved work for “{recovered.bed_name}”; {path} was not opened.", 10000)
            return True
        if path:
            return self.open_path(path, progress=progress)
        default = resources.example_path(resources.DEFAULT_EXAMPLE)
        if default.is_file():
            return self.open_path(default, remember=False)
        self.window.statusBar().showMessage("The default example is missing; File ▸ Open a test bed.")
        return False

    def new(self) -> None:
        if self.confirm_discard("starting a new bed"):
            self.document.replace(new_bed(), None)
            self.autosave.start()

    def new_from_example(self) -> bool:
        """The example gallery; the chosen example opens as a new, unsaved bed."""
        from widgets.example_gallery import ExampleGallery
        gallery = ExampleGallery(self.window)
        if not exec_once(gallery) or not gallery.chosen():
            return False
        return self.open_example(gallery.chosen())

    def open_example(self, name: str) -> bool:
        if not self.confirm_discard("starting from an example"):
            return False
        try:
            text = resources.example_path(name).read_text(encoding="utf-8")
            bed = loads(text, str(resources.example_path(name)))
        except (OSError, BedFileError) as exc:
            self.error("Cannot open the example", str(exc))
            return False
        # the copy keeps the example's comments when it is saved
        self.document.replace(bed, None, dirty=True, source=ProjectSource.of(text, bed))
        self.autosave.start()
        self.window.statusBar().showMessage(f"New bed from the example “{bed.bed.name}”: Save keeps your copy.", 8000)
        return True

    def open_dialog(self) -> bool:
        if not self.confirm_discard("opening another bed"):
            return False
        doc = self.document
        start = str(doc.path.parent if doc.path else resources.EXAMPLES_DIR)
        path, _ = QFileDialog.getOpenFileName(self.window, "Open test bed", start, FILE_FILTER)
        return self.open_path(path) if path else False

    def open_path(self, path: str | Path, *, remember: bool = True, progress: Any = None) -> bool:
        """Load a project file; on failure show the loader's message and keep the current bed.
        A big bed shows its progress (a splash from widgets/open_progress.py) until it is drawn."""
        # the splash's turns of the event loop run none of the work that waits for the bed (the
        # run page, the warm-up): app.background.DrawingFirst, released whatever the outcome
        hold = DrawingFirst.of(self.document)
        hold.hold("file")
        try:
            return self._open_path(path, remember, progress)
        finally:
            hold.release("file")

    def _open_path(self, path: str | Path, remember: bool, progress: Any) -> bool:
        from widgets.open_progress import OpenProgress
        if progress is None and OpenProgress.wanted(path):
            progress = OpenProgress.start(path)
        try:
            opened = self.document.open(path, progress.stage if progress is not None else None,
                                        confirm=lambda: self.confirm_discard("opening another bed"))
        except BedFileError as exc:
            if progress is not None:
                progress.close()        # before any question or message: it would sit over them
            repaired = self._open_for_repair(Path(path), remember)
            if repaired is not None:
                return repaired
            self.error("Cannot open test bed", str(exc).replace(CLI_EXAMPLE_HINT, GUI_EXAMPLE_HINT))
            return False
        except Exception as exc:
            if progress is not None:
                progress.close()
            self.error("Cannot open test bed", f"{path}: unexpected error while reading: {exc!r}")
            return False
        if not opened:      # overtaken while it was read (another open, the window closing): nothing changed
            if progress is not None:
                progress.close()
            return False
        if progress is not None:
            progress.close_after_paint(self.window.canvas)
        if remember:
            self._remember_after_first_frame(Path(path))
        self.autosave.start()
        self.window.statusBar().showMessage(f"Opened {path}", 5000)
        return True

    def _open_for_repair(self, path: Path, remember: bool) -> bool | None:
        """A file whose only problems are references that name nothing opens in the repair view
        (every problem listed, nothing dropped).  None when it has other problems too."""
        try:
            text = read_text(path)
            bed, broken = loads_keeping_broken_references(text, str(path))
        except BedFileError:
            return None
        if not broken:
            return None
        items = [p.format(str(path)) for p in broken]
        answer = show_problems(
            self.window, f"Broken references in {path.name}",
            f"{len(broken)} reference{'s in this file name' if len(broken) != 1 else ' in this file names'} nothing. "
            "Open it to "
            "repair them (each is listed here and in the status bar); saving asks before anything is dropped.",
            items, (("open", "Open to repair"), ("cancel", "Cancel")))
        if answer != "open":
            self.window.statusBar().showMessage(items[0].splitlines()[0], 10000)
            return False
        self.document.replace(bed, path, source=ProjectSource.of(text, bed))
        if remember:
            self.remember(path)
        self.autosave.start()
        self.window.statusBar().showMessage(
            f"Opened {path} with {len(broken)} broken reference(s): {broken[0].message}", 15000)
        return True

    # ------------------------------------------------------------------ crash recovery
    @staticmethod
    def _recovery_to_offer() -> bool:
        try:
            orphans, unreadable = find_orphans()
        except OSError:
            return False
        return bool(orphans or unreadable)

    def offer_recovery(self) -> Orphan | None:
        """Offer each autosave a crashed session left, newest first; returns the one recovered.

        Unreadable autosaves are moved aside and reported; they never stop the start.
        """
        try:
            orphans, unreadable = find_orphans()
        except OSError as exc:
            self.window.statusBar().showMessage(f"Cannot look for autosaved work: {exc.strerror or exc}", 10000)
            return None
        for damaged in unreadable:
            self._report_unreadable(damaged.problem, damaged.set_aside)
        for orphan in orphans:
            try:
                text = orphan.read_text()
                bed = loads(text, str(orphan.text_path))
            except BedFileError as exc:
                self._report_unreadable(str(exc), orphan.set_aside)
                continue
            except Exception as exc:
                self._report_unreadable(f"{orphan.text_path}: {exc!r}", orphan.set_aside)
                continue
            answer = self.ask_recovery(orphan)
            if answer == "discard":
                orphan.discard()
            elif answer == "recover":
                self.document.replace(bed, orphan.original_path, dirty=True, source=ProjectSource.of(text, bed))
                self.autosave.wait()  # this session's copy is on disk before the crashed one goes
                orphan.discard()
                self.window.statusBar().showMessage(
                    f"Recovered unsaved work for “{orphan.bed_name}”: save it to keep it.", 10000)
                return orphan
        return None

    def ask_recovery(self, orphan: Orphan) -> str:
        """"recover", "discard" or "later" (keep the autosave and ask again at the next start)."""
        where = str(orphan.original_path) if orphan.original_path else "a bed that was never saved"
        box = QMessageBox(QMessageBox.Icon.Question, "Recover unsaved work",
                          f"Recover unsaved work from {orphan.when} for “{orphan.bed_name}”?",
                          QMessageBox.StandardButton.NoButton, self.window)
        box.setObjectName("recoveryPrompt")
        box.setInformativeText(
            f"Testbed Studio did not close normally. The autosave holds unsaved changes to {where}.\n\n"
            "Recover opens them for you to review and save; Discard deletes the autosave; "
            "Later keeps it and asks again at the next start.")
        recover = box.addButton("Recover", QMessageBox.ButtonRole.AcceptRole)
        discard = box.addButton("Discard", QMessageBox.ButtonRole.DestructiveRole)
        later = box.addButton("Later", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(recover)
        box.setEscapeButton(later)
        exec_once(box)
        clicked = box.clickedButton()
        return "recover" if clicked is recover else "discard" if clicked is discard else "later"

    def _report_unreadable(self, problem: str, set_aside) -> None:
        try:
            kept = f"The file was kept as {set_aside()}."
        except OSError as exc:
            kept = f"It could not be moved aside: {exc.strerror or exc}."
        self.error("Cannot recover unsaved work", f"An autosave cannot be read: {problem}\n\n{kept}")

    # ------------------------------------------------------------------ saving
    def save(self) -> bool:
        if self.document.path is None or self._is_builtin(self.document.path):
            return self.save_as()
        return self._save_to(self.document.path)

    def save_as(self) -> bool:
        doc = self.document
        suggested = re.sub(r'[\\/:*?"<>|]+', "-", doc.title).strip(" .-") or "test bed"  # a file name, not a path
        start = str(doc.path if doc.path and not self._is_builtin(doc.path) else Path.home() / f"{suggested}.yaml")
        path, _ = QFileDialog.getSaveFileName(self.window, "Save test bed", start, FILE_FILTER)
        if not path:
            return False
        if not path.endswith((".yaml", ".yml")):
            path += ".yaml"
        return self._save_to(Path(path))

    def _save_to(self, path: Path) -> bool:
        broken = broken_references(self.document.bed)
        if broken:
            items = [f"{message} (at {'.'.join(map(str, where))})\n    how to fix: {hint}"
                     for where, message, hint in broken]
            answer = show_problems(
                self.window, "Broken references",
                f"The bed still has {len(broken)} reference(s) that name nothing; a file saved so would not open "
                "elsewhere. Fix them, or drop them (one undoable step) and save.",
                items, (("drop", "Drop them and save"), ("cancel", "Cancel")))
            if answer != "drop":
                return False
            self.document.apply(drop_broken_references(self.document.bed))
        try:
            self.document.save(path)
        except OSError as exc:
            self.error("Cannot save test bed", f"{path}: {exc.strerror or exc}")
            return False
        self.remember(path)
        if self.document.last_save == "rewritten":
            self.window.statusBar().showMessage(
                f"Saved {path}, written afresh: the edits could not be made in the file's own text (e.g. they "
                "reach a value shared through a YAML alias), so its comments were not kept", 12000)
        else:
            self.window.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    @staticmethod
    def _is_builtin(path: Path) -> bool:
        """The shipped examples are read-only templates: saving asks for a name of the user's own."""
        try:
            return Path(path).resolve().parent == resources.EXAMPLES_DIR.resolve()
        except OSError:
            return False

    def confirm_discard(self, doing: str) -> bool:
        if not self.document.dirty:
            return True
        answer = QMessageBox.question(
            self.window, "Unsaved changes",
            f"The bed “{self.document.title}” has unsaved changes. Save them before {doing}?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    # ------------------------------------------------------------------ recent files
    def recent(self) -> list[str]:
        """The beds opened last, from this state directory's preferences (a second profile or a
        test run with its own TESTBED_STUDIO_STATE_DIR never sees another's)."""
        return preferences.recent_files()

    def _keep_recent(self, items: list[str]) -> None:
        try:
            preferences.set_recent_files(items)
        except OSError as exc:      # the list is a convenience: the bed itself is open (or saved)
            self.window.statusBar().showMessage(f"Cannot keep the recent files list: {exc.strerror or exc}", 8000)

    def _remember_after_first_frame(self, path: Path) -> None:
        """The recent files list is written (fsync'd: 2-70 ms, over a second on a busy disk) once a
        big bed's first frame is painted, not before it (app/background.py FirstFrame)."""
        hold = FirstFrame.of(self.document)
        if not hold.holding:
            self.remember(path)
            return

        def later() -> None:
            try:
                self.remember(path)
            except RuntimeError:        # the window closed before that frame: the list is written, its menu gone
                pass
        hold.released.connect(later, Qt.ConnectionType.SingleShotConnection)

    def remember(self, path: Path) -> None:
        entry = str(Path(path).resolve())
        self._keep_recent([entry] + [p for p in self.recent() if p != entry])
        self._fill_recent()

    def open_recent(self, path: str) -> bool:
        if not self.confirm_discard("opening another bed"):
            return False
        if self.open_path(path):
            return True
        if not Path(path).exists():  # moved or deleted since: stop offering it
            self._keep_recent([p for p in self.recent() if p != path])
            self._fill_recent()
        return False

    def install_recent_menu(self, file_menu: QMenu) -> None:
        self._recent_menu = QMenu("Open &Recent", self.window)
        self._recent_menu.setObjectName("recentMenu")
        first = file_menu.actions()[2] if len(file_menu.actions()) > 2 else None
        file_menu.insertMenu(first, self._recent_menu)
        self._fill_recent()

    def _fill_recent(self) -> None:
        menu = self._recent_menu
        if menu is None:
            return
        menu.clear()
        for p in self.recent():
            action = menu.addAction(p)
            action.triggered.connect(lambda _=False, p=p: self.open_recent(p))
        menu.setEnabled(bool(self.recent()))

    # ------------------------------------------------------------------ helpers
    def error(self, title: str, text: str) -> None:
        self.window.statusBar().showMessage(text.splitlines()[0] if text else title, 10000)
        if text.count("\n") >= LONG_ERROR_LINES:     # a list that scrolls, never taller than the screen
            items = split_problems(text)
            show_problems(self.window, title, f"{len(items)} problems:", items, (("ok", "OK"),))
            return
        QMessageBox.critical(self.window, title, text)

    def shutdown(self) -> None:
        """The window is closing for good (after the user saved or chose to discard)."""
        self.document.reader.shutdown()     # a file still being read is not opened
        self.autosave.stop()
