"""The central tab area.  Each page except the diagram sits in a scroll area, so a page that
needs more room than the window has scrolls instead of widening the window (a wide
methodology table once pushed the window past the screen at 1366×768).  Callers keep
naming the pages themselves: setCurrentWidget, currentWidget and indexOf see through the
scroll areas."""
from __future__ import annotations

from PySide6.QtWidgets import QAbstractScrollArea, QFrame, QScrollArea, QTabWidget, QWidget


class CentralTabs(QTabWidget):
    def add_page(self, page: QWidget, title: str) -> int:
        if isinstance(page, QAbstractScrollArea):     # scrolls by itself (the diagram)
            return self.addTab(page, title)
        holder = QScrollArea(self)
        holder.setObjectName(f"{page.objectName() or 'page'}Scroll")
        holder.setWidgetResizable(True)
        holder.setFrameShape(QFrame.Shape.NoFrame)
        holder.setWidget(page)
        return self.addTab(holder, title)

    def _holder(self, page: QWidget) -> QWidget:
        parent = page.parentWidget()
        holder = parent.parentWidget() if parent is not None else None
        return holder if isinstance(holder, QScrollArea) and holder.widget() is page else page

    def setCurrentWidget(self, page: QWidget) -> None:
        super().setCurrentWidget(self._holder(page))

    def indexOf(self, page: QWidget) -> int:
        return super().indexOf(self._holder(page))

    def currentWidget(self) -> QWidget:
        shown = super().currentWidget()
        return shown.widget() if isinstance(shown, QScrollArea) and shown.widget() is not None else shown
