"""Testbed Studio's main window: the canvas in the middle, panels around it, menus.

The window is an assembly: actions are declared as data (ACTIONS), panels as data
(PANELS), and every behaviour lives in the document (app/document.py), the file
controller (widgets/file_controller.py) or the panel that owns it.  The window holds
no domain logic.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from app.background import BackgroundJob, DrawingFirst
from app.document import Document
from app.selection import Selection
from widgets import window_state
from widgets.central_tabs import CentralTabs
from widgets.context_menus import install_storage_menus
from widgets.find_bar import FindBar
from widgets.lifetimes import exec_once
from widgets.page_docks import PageDocks
from widgets.tree_filter import FilteredTree

APP_NAME = "Testbed Studio"
FINDINGS_MIN_WIDTH = 520

# menu, name, text, shortcut (a QKeySequence.StandardKey name or a key string), status tip,
# handler ("object.method" on the window: file, canvas, storage, ...; or a window method)
ACTIONS: tuple[tuple[str, str, str, str, str, str], ...] = (
    ("&File", "new", "&New", "New", "Start an empty test bed", "files.new"),
    ("&File", "new_from_example", "New from E&xample…", "Ctrl+Shift+N", "Start from one of the built-in example beds",
     "files.new_from_example"),
    ("&File", "open", "&Open…", "Open", "Open a test-bed project file", "files.open_dialog"),
    ("&File", "save", "&Save", "Save", "Save the test bed", "files.save"),
    ("&File", "save_as", "Save &As…", "SaveAs", "Save the test bed under a new name", "files.save_as"),
    ("&File", "-", "", "", "", ""),
    ("&File", "import", "&Import Hosts…", "",
     "Add hosts, ports and addresses from a CSV sheet or an Ansible inventory (one undoable step)",
     "import_hosts"),
    ("&File", "draft_from_lab", "&Draft Bed from Lab…", "",
     "Read the lab's hosts (read-only) and open what they report as a new bed: hosts, ports, addresses, the "
     "volumes they see (as `import --from-hosts` does)", "draft_from_lab"),
    ("&File", "export_png", "Export Diagram as &PNG…", "Ctrl+Shift+E", "Export the drawing as an image",
     "canvas.export_png_dialog"),
    ("&File", "export_svg", "Export Diagram as S&VG…", "", "Export the drawing as SVG", "canvas.export_svg_dialog"),
    ("&File", "export_pdf", "Export Diagram as P&DF…", "", "Export the drawing as a one-page PDF",
     "canvas.export_pdf_dialog"),
    ("&File", "export_drawio", "Export Diagram for &draw.io…", "",
     "Export the drawing as a draw.io (diagrams.net) diagram: devices, ports and cables stay connected",
     "canvas.export_drawio_dialog"),
    ("&File", "export_graphml", "Export Diagram as &GraphML…", "",
     "Export every component and link with its attributes as GraphML (networkx, yEd)",
     "canvas.export_graphml_dialog"),
    ("&File", "print", "&Print Diagram…", "Print", "Print the drawing", "canvas.print_dialog"),
    ("&File", "print_appendix", "Print &Appendix…", "", "Preview and print the report appendices",
     "methodology.print_preview"),
    ("&File", "export_appendix", "Export Appendi&x as PDF…", "", "Write the report appendices as a PDF",
     "methodology.export_pdf_dialog"),
    ("&File", "-", "", "", "", ""),
    ("&File", "quit", "&Quit", "Ctrl+Q", "Quit Testbed Studio", "close"),
    ("&Edit", "undo", "&Undo", "Undo", "Undo the last edit", "document.undo_stack.undo"),
    ("&Edit", "redo", "&Redo", "Redo", "Redo the edit undone last", "document.undo_stack.redo"),
    ("&Edit", "-", "", "", "", ""),
    ("&Edit", "cut", "Cu&t", "Cut", "Cut the selected components", "canvas.cut"),
    ("&Edit", "copy", "&Copy", "Copy", "Copy the selected components", "canvas.copy"),
    ("&Edit", "paste", "&Paste", "Paste", "Paste components", "canvas.paste"),
    ("&Edit", "duplicate", "D&uplicate", "Ctrl+D", "Copy the selected components next to them (the clipboard is "
     "left alone)", "canvas.duplicate_selected"),
    ("&Edit", "delete", "&Delete", "Delete", "Delete the selected components", "canvas.delete_selected"),
    ("&Edit", "select_all", "Select &All", "SelectAll", "Select every device", "canvas.select_all"),
    ("&Edit", "-", "", "", "", ""),
    ("&Edit", "find", "&Find…", "Find", "Find a component by id, name, address or note", "find_bar.open_bar"),
    ("&Edit", "-", "", "", "", ""),
    ("&Edit", "add_workload", "Add &Workload", "", "Add a load (fio, DiskSpd ...) on the selected machine; its form "
     "opens (tool, parameters, targets, criteria, duration, order)", "add_workload"),
    ("&Edit", "configurations", "C&onfigurations…", "", "The bed's software configurations side by side: what each "
     "changes", "edit_configurations"),
    ("&Edit", "-", "", "", "", ""),
    ("&Edit", "preferences", "Pre&ferences…", "Ctrl+,", "Settings for every bed: the paper size of prints and PDFs",
     "edit_preferences"),
    ("&View", "zoom_in", "Zoom &In", "ZoomIn", "Zoom in", "canvas.zoom_in"),
    ("&View", "zoom_out", "Zoom &Out", "ZoomOut", "Zoom out", "canvas.zoom_out"),
    ("&View", "fit", "&Fit to Window", "Ctrl+0", "Show the whole bed", "canvas.fit"),
    ("&View", "layout", "Automatic &Layout", "Ctrl+L", "Arrange devices in tiers", "canvas.auto_layout"),
    ("&View", "grid", "Snap to &Grid", "Ctrl+G", "Snap moved devices to the grid", "canvas.toggle_grid"),
)

# attribute, module.Class, title, dock area (None = a tab of the central area)
PANELS: tuple[tuple[str, str, str, Qt.DockWidgetArea | None], ...] = (
    ("canvas", "widgets.canvas.view.Canvas", "Diagram", None),
    ("storage", "widgets.storage.editor.StorageEditor", "Storage", None),
    ("placement", "widgets.placement_view.PlacementView", "VM placement", None),
    ("methodology", "widgets.methodology_view.MethodologyView", "Methodology", None),
    ("run", "widgets.run_wizard.RunWizard", "Run", None),
    ("compare", "widgets.compare_view.CompareView", "Compare", None),
    ("palette", "widgets.palette.Palette", "Palette", Qt.DockWidgetArea.LeftDockWidgetArea),
    ("tree", "widgets.component_tree.ComponentTree", "Components", Qt.DockWidgetArea.LeftDockWidgetArea),
    ("properties", "widgets.property_editor.PropertyEditor", "Properties", Qt.DockWidgetArea.RightDockWidgetArea),
    ("findings", "widgets.validation_panel.ValidationPanel", "Validation", Qt.DockWidgetArea.BottomDockWidgetArea),
    ("readiness", "widgets.readiness_panel.ReadinessPanel", "Readiness", Qt.DockWidgetArea.BottomDockWidgetArea),
    ("paths", "widgets.path_view.PathView", "Paths", Qt.DockWidgetArea.BottomDockWidgetArea),
)


# pages not needed for the first frame: built a while after the window shows (or when first
# asked for), so their imports and widgets do not hold the window back (bench.canvas --cold-start-only)
LATER_PAGES = ("run",)
LATER_PAGES_MS = 1000


def _load(dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


class MainWindow(QMainWindow):
    def __init__(self, document: Document | None = None, parent=None):
        super().__init__(parent)
        # the views' background work (validation, methodology, paths) starts once the window is up
        BackgroundJob.hold_until_event_loop()
        self.document = document or Document(parent=self)
        self.selection = Selection(self)
        self.actions_by_name: dict[str, QAction] = {}
        self.docks: dict[str, QDockWidget] = {}
        self.tabs = CentralTabs(self)
        self.tabs.setObjectName("centralTabs")
        self.tabs.setDocumentMode(True)
        self.setCentralWidget(self.tabs)
        self._later: dict[str, tuple[str, QWidget]] = {}      # page: (its class, the stand-in shown till built)
        for attr, dotted, title, area in PANELS:
            if attr in LATER_PAGES:
                stand_in = QWidget(self)
                stand_in.setObjectName(f"{attr}StandIn")
                self._later[attr] = (dotted, stand_in)
                self.tabs.add_page(stand_in, title)
                continue
            widget = _load(dotted)(self.document, self.selection, self)
            widget.setObjectName(attr)
            setattr(self, attr, widget)
            if area is None:
                self.tabs.add_page(widget, title)
            else:
                dock = QDockWidget(title, self)
                dock.setObjectName(f"{attr}Dock")
                dock.setWidget(widget)
                self.addDockWidget(area, dock)
                self.docks[attr] = dock
        self.docks["tree"].setWidget(FilteredTree(self.tree))
        self.tabifyDockWidget(self.docks["palette"], self.docks["tree"])
        self.paths.highlight.connect(self._show_paths)
        self.docks["paths"].visibilityChanged.connect(self.paths.set_shown)
        self.paths.reveal.connect(self._reveal_paths)
        self.findings.paths_requested.connect(self.open_paths)
        # a panel's widest row must not set the window's least width (it once passed 1366 px)
        self.findings.setMinimumWidth(FINDINGS_MIN_WIDTH)
        self._tabify_bottom()
        self.docks["palette"].raise_()
        self.findings.summary_changed.connect(
            lambda text: self.docks["findings"].setWindowTitle(f"Validation — {text}"))
        # readiness: worked out with the procedure the Methodology page generates, counted in Validation too
        self.methodology.readiness_changed.connect(self.readiness.show_gaps)
        self.readiness.summary_changed.connect(self.findings.show_readiness)
        self.readiness.summary_changed.connect(
            lambda text: self.docks["readiness"].setWindowTitle(f"Readiness — {text}" if text else "Readiness"))
        self.findings.readiness_requested.connect(lambda: (self.docks["readiness"].show(),
                                                           self.docks["readiness"].raise_()))
        self.tree.storage_view_requested.connect(lambda _ids: self.tabs.setCurrentWidget(self.storage))
        self.document.reset.connect(self.selection.clear)  # old ids mean nothing in another bed
        self.document.reset.connect(self._clear_messages)
        # another scenario: "Done: moved X" about the last one would mislead
        self.document.scenario.changed.connect(lambda _s: self._clear_messages())
        install_storage_menus(self.storage)
        self.find_bar = FindBar(self)              # floats over the pages: opening it moves nothing
        from widgets.configuration_chooser import ConfigurationBar
        self.configuration_bar = ConfigurationBar(self.document, self)
        # in the menu bar's corner: shown or hidden, it takes no row of its own that pushes the window down
        self.menuBar().setCornerWidget(self.configuration_bar, Qt.Corner.TopRightCorner)
        from widgets.file_controller import FileController
        self.files = FileController(self)
        # a later page picked before it is built is built first, then the page's docks follow it
        self.tabs.currentChanged.connect(lambda _index: self._build_shown_page())
        self.page_docks = PageDocks(self, self._later["run"][1])     # the Run page has a layout of its own
        self._build_actions()
        self.document.dirty_changed.connect(lambda _: self.update_title())
        self.document.path_changed.connect(lambda _: self.update_title())
        self.document.reset.connect(self.update_title)
        window_state.resize_within_screen(self, 1400, 900)
        # the diagram gets the room: findings a strip at the bottom, side panels narrow
        self.resizeDocks([self.docks["findings"]], [self.findings.rows_height(8) + 60], Qt.Orientation.Vertical)
        self.resizeDocks([self.docks["palette"], self.docks["properties"]], [220, 330], Qt.Orientation.Horizontal)
        self.update_title()

    def _tabify_bottom(self) -> None:
        """Validation, Readiness and Paths share the bottom dock as tabs.  After the least width
        above: tabifying lays the docks out, and the panel's own wish would become the window's."""
        for dock in ("paths", "readiness"):
            self.tabifyDockWidget(self.docks["findings"], self.docks[dock])
        self.docks["findings"].raise_()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if not getattr(self, "_shown_once", False):
            self._shown_once = True
            self._hide_stray_tab_bars()
            QTimer.singleShot(LATER_PAGES_MS, self._build_later_pages)

    @property
    def run(self) -> Any:
        """The Run page (widgets/run_wizard.py), built now if it was not yet."""
        return self._page("run")

    def _page(self, attr: str) -> Any:
        built = self.__dict__.get(f"_{attr}_page")
        if built is not None:
            return built
        dotted, stand_in = self._later[attr]
        widget = _load(dotted)(self.document, self.selection, self)
        widget.setObjectName(attr)
        self.__dict__[f"_{attr}_page"] = widget
        holder = stand_in.parentWidget().parentWidget()        # the page's scroll area (CentralTabs)
        holder.takeWidget()
        holder.setWidget(widget)
        stand_in.deleteLater()
        if attr == "run":
            widget.save_bed = self.files.save      # a new run saves the bed the way File › Save does
            widget.runs_changed.connect(self.compare.follow_runs)    # the Compare list follows runs as they end
            self.page_docks.run_page = widget
        return widget

    def _build_later_pages(self) -> None:
        hold = DrawingFirst.of(self.document)
        if hold.holding:        # a bed is opening or drawn: right after that
            hold.released.connect(self._build_later_pages, Qt.ConnectionType.SingleShotConnection)
            return
        for attr in self._later:
            self._page(attr)

    def _build_shown_page(self) -> None:
        shown = self.tabs.currentWidget()
        for attr, (_dotted, stand_in) in self._later.items():
            if shown is stand_in and self.__dict__.get(f"_{attr}_page") is None:
                self._page(attr)

    def _hide_stray_tab_bars(self) -> None:
        """Docks tabified before the window has a size leave a stray copy of an earlier tab bar drawn
        over the left docks (Qt keeps it): a bar naming a group of docks no longer shown is hidden."""
        from PySide6.QtWidgets import QTabBar
        titles = {d.windowTitle() for d in self.docks.values()}
        bars = {bar: {bar.tabText(i) for i in range(bar.count())} for bar in self.findChildren(QTabBar)
                if bar.parent() is self and bar.isVisible()}
        for bar, texts in bars.items():
            if not texts <= titles or any(texts < other for other in bars.values()):
                bar.hide()

    def _build_actions(self) -> None:
        menus: dict[str, Any] = {}
        for menu_title, name, text, shortcut, tip, handler in ACTIONS:
            menu = menus.get(menu_title) or menus.setdefault(menu_title, self.menuBar().addMenu(menu_title))
            if name == "-":
                menu.addSeparator()
                continue
            action = QAction(text, self)
            action.setObjectName(f"action_{name}")
            if shortcut:
                std = getattr(QKeySequence.StandardKey, shortcut, None)
                action.setShortcuts(QKeySequence.keyBindings(std) if std is not None else [QKeySequence(shortcut)])
            action.setStatusTip(tip)
            action.triggered.connect(self._handler(handler))
            menu.addAction(action)
            self.actions_by_name[name] = action
        self.actions_by_name["grid"].setCheckable(True)
        self.actions_by_name["grid"].setChecked(True)
        stack = self.document.undo_stack
        stack.undoTextChanged.connect(lambda text: self._name_step("undo", "&Undo", text))
        stack.redoTextChanged.connect(lambda text: self._name_step("redo", "&Redo", text))
        stack.canUndoChanged.connect(self.actions_by_name["undo"].setEnabled)
        stack.canRedoChanged.connect(self.actions_by_name["redo"].setEnabled)
        self.actions_by_name["undo"].setEnabled(stack.canUndo())
        self.actions_by_name["redo"].setEnabled(stack.canRedo())
        view = menus["&View"]
        view.addSeparator()
        for dock in self.docks.values():
            view.addAction(dock.toggleViewAction())
        self.files.install_recent_menu(menus["&File"])

    def _name_step(self, name: str, verb: str, text: str) -> None:
        """Edit › Undo says what it undoes ("Undo Move R710-1")."""
        action = self.actions_by_name[name]
        action.setText(f"{verb} {text}" if text else verb)
        action.setStatusTip(f"{verb.replace('&', '')} “{text}”" if text else action.statusTip())

    def _clear_messages(self) -> None:
        """Another bed: what the views said about the last one no longer applies."""
        self.statusBar().clearMessage()
        self.canvas.clear_messages()
        for view, label in ((self.findings, "notice"), (self.placement, "message"), (self.storage, "message")):
            widget = getattr(view, label, None)
            if widget is not None:
                widget.clear()

    def add_workload(self) -> str:
        """A new workload (fio until its form says otherwise) on the selected machine, as one edit."""
        from topology.edits import InsertItem
        from topology.model import Workload
        bed = self.document.bed
        taken = {w.id for w in bed.workloads} | {c for c in self.selection.ids}
        ident = next(f"load-{n}" for n in range(1, len(taken) + 2) if f"load-{n}" not in taken)
        machines = {m.id for m in (*bed.servers, *bed.vms)}
        on = sorted(i for i in self.selection.ids if i in machines)
        workload = Workload(id=ident, tool="fio", driver=on[0] if len(on) == 1 else "", targets=on)
        self.document.apply(InsertItem(bed.workloads, workload, owner=ident, text=f"Add workload {ident}"))
        self.selection.set([ident])
        self.docks["properties"].show()
        self.docks["properties"].raise_()
        return ident

    def edit_configurations(self) -> bool:
        from widgets.configurations_dialog import ConfigurationsDialog
        return bool(exec_once(ConfigurationsDialog(self.document, self)))

    def edit_preferences(self) -> bool:
        from widgets.preferences_dialog import PreferencesDialog
        return bool(exec_once(PreferencesDialog(self)))

    def open_paths(self, host: str, volume: str = "") -> None:
        """The path view of a host (and volume), in front."""
        dock = self.docks["paths"]
        dock.show()
        dock.raise_()
        self.paths.show_for(host, volume)

    def _show_paths(self, shown: Any) -> None:
        if shown is None:
            self.canvas.clear_paths()
        else:
            self.canvas.show_paths(*shown)

    def _reveal_paths(self) -> None:
        self.tabs.setCurrentWidget(self.canvas)
        self.canvas.reveal_paths()

    def show_restored(self) -> None:
        """Show at the last session's geometry, or maximised the first time."""
        window_state.show_restored(self)

    def _handler(self, dotted: str) -> Callable[[], Any]:
        def run(*_: Any) -> Any:
            target: Any = self
            for part in dotted.split("."):
                target = getattr(target, part)
            return target()
        return run

    # ------------------------------------------------------------------ documents
    def open_initial(self, path: str | None = None, progress: Any = None) -> bool:
        """Open `path`, offer crash recovery, or show the default example (`progress`: the
        start-up splash, widgets/open_progress.py)."""
        return self.files.open_initial(path, progress)

    def open_path(self, path: Any) -> bool:
        return self.files.open_path(path)

    def import_hosts(self) -> bool:
        from widgets.import_dialog import import_dialog
        return import_dialog(self)

    def draft_from_lab(self) -> bool:
        from widgets.draft_from_lab import draft_from_lab
        return draft_from_lab(self)

    def update_title(self) -> None:
        doc = self.document
        name = doc.path.name if doc.path else "unsaved"
        # [*] is where Qt draws the modified marker
        self.setWindowTitle(f"{doc.title} — {name}[*] — {APP_NAME}")
        self.setWindowModified(doc.dirty)

    def closeEvent(self, event: Any) -> None:
        if self.files.confirm_discard("quitting"):
            self.files.shutdown()
            if getattr(self, "lab_drafter", None) is not None:
                self.lab_drafter.shutdown()
            # worker threads must be done before the widgets they report to are destroyed
            for attr, *_ in PANELS:
                # a later page never built has nothing to stop
                page = self.__dict__.get(f"_{attr}_page") if attr in self._later else getattr(self, attr)
                getattr(page, "shutdown", lambda: None)()
            self.document.validation.shutdown()
            self.page_docks.drawing_layout()
            window_state.remember(self)
            event.accept()
        else:
            event.ignore()
