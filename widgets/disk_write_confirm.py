"""The Run tab's question before the first step of a run that writes to disks (partition, format,
mkfs): every such step still to run, the machine it runs on and each disk it writes to, by the
identity its guard selects it by.  Asked once per run; the CLI asks the same (`--yes-destructive`)."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QMessageBox, QWidget

from app.run.destructive import pending_writes, writes_text

_CONFIRMED: dict[str, set[str]] = {}     # run id -> the steps the user has said yes to


def _dialog(parent: QWidget | None, text: str) -> bool:
    box = message_box(parent, text)
    return box.exec() == QMessageBox.StandardButton.Yes


def message_box(parent: QWidget | None, text: str) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.Warning, "Write to these disks?",
                      "The steps below partition and format disks. Each selects its disk by the identity shown "
                      "and stops without writing if the disk is not empty or not the volume's.\n\n" + text,
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, parent)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.button(QMessageBox.StandardButton.Yes).setText("Write to these disks")
    return box


def confirm_disk_writes(parent: QWidget | None, steps: Sequence, session,
                        ask: Callable[[QWidget | None, str], bool] = _dialog) -> bool:
    """True when `steps` write to no disk the user has not yet agreed to, or the user agrees now."""
    if session is None:
        return True
    run_id = getattr(getattr(session, "info", None), "id", "") or ""
    done = _CONFIRMED.setdefault(run_id, set())
    pending = [s for s in pending_writes(steps, session.task_state) if s.number not in done]
    if not pending:
        return True
    if not ask(parent, writes_text(pending)):
        return False
    done.update(s.number for s in pending)
    return True
