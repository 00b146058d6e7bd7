"""A splash with progress while a bed opens: shown within the first half second of start-up when
the command line names a bed (`testbed-studio BED`), and by File › Open for a big bed, it says
which stage the opening is in (reading the file, building the model, starting validation and
the views, drawing) and closes when the window has painted the bed.

The GUI thread owns it.  Each stage is painted at once, between the opening's steps; while a big
file is read on a worker (app/bed_reading.py) the event loop turns and the bar creeps towards the
next stage, so something moves on screen through a 5,000-device bed's seconds of loading."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QEventLoop, QObject, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import QApplication, QWidget

BIG_BED_BYTES = 500_000          # File › Open shows progress from this size of file up (500 devices: 0.67 MB)
SIZE = (520, 180)
STAGES = {   # stage: (share of the bar done when it starts, what the splash says)
    "start": (0.03, "Starting Testbed Studio…"),
    "reading": (0.10, "Reading the file…"),
    "model": (0.30, "Building the model and checking its references…"),
    "validation": (0.55, "Starting validation in the background and building the views…"),
    "drawing": (0.85, "Drawing the diagram…"),
}
CREEP_MS = 100                   # while the event loop turns, the bar moves this often ...
CREEP_SHARE = 0.04               # ... by this share of what is left of its stage
GIVE_UP_MS = 60_000              # closed anyway if the window never paints (a dialog took over)


class OpenProgress(QWidget):
    """A frameless window over the others.  Not QSplashScreen: its show() waits up to a second for
    the window to be exposed, most of the half second it has."""

    def __init__(self, name: str):
        super().__init__(None, Qt.WindowType.Tool | Qt.WindowType.FramelessWindowHint
                         | Qt.WindowType.WindowStaysOnTopHint)
        self.setObjectName("openProgress")
        self.setFixedSize(*SIZE)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.name = name
        self.key = ""
        self.fraction = 0.0
        self.text = ""
        self.stages_seen: list[str] = []
        self._watched: QObject | None = None
        self._drawing: QWidget | None = None
        self.closed = False
        self._creep = QTimer(self, interval=CREEP_MS, timeout=self._crept)

    @classmethod
    def start(cls, path: str | Path, first_stage: str = "reading") -> OpenProgress:
        splash = cls(Path(path).name)
        screen = QApplication.primaryScreen()
        if screen is not None:      # in the middle of the screen, where the window will be
            splash.move(screen.availableGeometry().center() - splash.rect().center())
        splash.show()
        splash.stage(first_stage)
        return splash

    @staticmethod
    def wanted(path: str | Path) -> bool:
        """File › Open shows progress for a big bed (a small one opens before it would be seen)."""
        try:
            return Path(path).stat().st_size >= BIG_BED_BYTES
        except OSError:
            return False

    def stage(self, key: str) -> None:
        """Show `key`'s stage now: painted before the opening goes on (the event loop is not
        turning while the GUI thread builds the model into the views)."""
        if self.closed or key == self.key:
            return
        self.key = key
        self.fraction, self.text = STAGES[key]
        self.stages_seen.append(key)
        self._creep.start()
        self.raise_()           # over the window shown meanwhile (no window manager keeps a splash on top)
        # the window system maps and exposes the splash, and it is painted now (the opening goes on
        # without the event loop).  Between two stages the bed is whole (the old one, then the new
        # one), so what else is waiting may run here too; input waits for the window.
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)
        self.repaint()

    def _crept(self) -> None:
        """A turn of the event loop while the stage goes on: the bar moves towards the next stage."""
        keys = list(STAGES)
        following = keys.index(self.key) + 1 if self.key in STAGES else len(keys)
        ceiling = STAGES[keys[following]][0] if following < len(keys) else 0.97
        self.fraction += (ceiling - self.fraction) * CREEP_SHARE
        self.update()

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        w, h = SIZE
        painter.fillRect(self.rect(), QColor("#fafbfc"))
        painter.setPen(QColor("#90a4ae"))
        painter.drawRect(QRectF(0.5, 0.5, w - 1, h - 1))
        title = QFont(self.font())
        title.setPointSizeF(title.pointSizeF() + 5)
        title.setBold(True)
        painter.setFont(title)
        painter.setPen(QColor("#1f2933"))
        painter.drawText(QRectF(24, 18, w - 48, 34), Qt.AlignmentFlag.AlignLeft, "Testbed Studio")
        painter.setFont(self.font())
        painter.setPen(QColor("#52606d"))
        painter.drawText(QRectF(24, 58, w - 48, 22), Qt.AlignmentFlag.AlignLeft,
                         painter.fontMetrics().elidedText(f"Opening {self.name}", Qt.TextElideMode.ElideMiddle,
                                                          w - 48))
        painter.setPen(QColor("#1f2933"))
        painter.drawText(QRectF(24, 90, w - 48, 22), Qt.AlignmentFlag.AlignLeft, self.text)
        bar = QRectF(24, 124, w - 48, 14)
        painter.setPen(QColor("#90a4ae"))
        painter.setBrush(QColor("#eceff1"))
        painter.drawRoundedRect(bar, 4, 4)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor("#1565c0"))
        painter.drawRoundedRect(QRectF(bar.left(), bar.top(), bar.width() * self.fraction, bar.height()), 4, 4)
        painter.end()

    def close_after_paint(self, widget: QWidget) -> None:
        """Close once `widget` (the diagram) has painted the bed: the window shows it then."""
        self.stage("drawing")
        target = widget.viewport() if hasattr(widget, "viewport") else widget
        if not widget.isVisible():      # another page or a minimised window: nothing to wait for
            self.close()
            return
        target.installEventFilter(self)
        self._watched = target
        self._drawing = widget
        QTimer.singleShot(GIVE_UP_MS, self.close)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # a big bed's diagram is built over several turns of the event loop: its first paint that shows
        # the bed's devices (painted from the model until their items exist, widgets/canvas/building.py)
        if watched is self._watched and event.type() == QEvent.Type.Paint \
                and getattr(self._drawing, "shows_bed", not getattr(self._drawing, "building", False)):
            watched.removeEventFilter(self)
            self._watched = None
            QTimer.singleShot(0, self.close)        # after this paint has reached the screen
        return False

    def close(self) -> bool:
        if self.closed:         # the give-up timer after the paint closed it (the object may be gone)
            return True
        self.closed = True
        self._creep.stop()
        if self._watched is not None:
            self._watched.removeEventFilter(self)
            self._watched = None
        self.hide()
        self.deleteLater()
        return True
