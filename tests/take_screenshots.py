"""Screenshots of the designer at 1920×1080 and 1366×768 (offscreen by default), for a person to
look at: `python tests/take_screenshots.py [OUT_DIR]` writes build/screenshots/*.png.

Each size shows the default example with a server selected, the context menu of a device,
the Find bar with a match, the palette armed, the storage tab and the example gallery."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TESTBED_STUDIO_STATE_DIR", tempfile.mkdtemp(prefix="testbed-screens-"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

SIZES = ((1920, 1080), (1366, 768))


def settle(app: QApplication, rounds: int = 20) -> None:
    for _ in range(rounds):
        app.processEvents()


def shoot(out: Path) -> list[Path]:
    import resources
    from widgets.context_menus import canvas_menu
    from widgets.example_gallery import ExampleGallery
    from widgets.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    written = []
    for w_px, h_px in SIZES:
        tag = f"{w_px}x{h_px}"
        window = MainWindow()
        window.setGeometry(0, 0, w_px, h_px)
        window.show()
        window.open_path(resources.example_path(resources.DEFAULT_EXAMPLE))
        window.document.validation.wait()
        settle(app)
        window.canvas.fit()
        window.selection.set(["MD3000i"])
        settle(app)

        def grab(name: str, widget=None, tag=tag, window=window) -> None:
            settle(app)
            path = out / f"{tag}-{name}.png"
            (widget or window).grab().save(str(path))
            written.append(path)
        grab("selected-array")
        window.selection.set(["R710-1"])
        grab("selected-server")
        canvas = window.canvas
        item = canvas.devices["R710-1"]
        pos = canvas.mapFromScene(item.sceneBoundingRect().center())
        menu = canvas_menu(canvas, pos)
        menu.popup(canvas.viewport().mapToGlobal(pos))
        settle(app)
        grab("device-menu", menu)
        menu.close()
        window.find_bar.open_bar()
        window.find_bar.field.setText("192.168.130")
        window.find_bar.go(1)
        grab("find")
        window.find_bar.close_bar()
        window.palette.item_for("server:hypervisor")
        window.docks["palette"].raise_()
        window.palette._clicked(window.palette.item_for("server:hypervisor"))
        grab("palette-armed")
        canvas.disarm()
        canvas.say("Link not made: R710-1:SAN1 is already cabled to PC5448-1:1", refusal=True)
        grab("refusal")
        window.tabs.setCurrentWidget(window.storage)
        grab("storage")
        window.tabs.setCurrentWidget(window.canvas)
        window.docks["tree"].raise_()
        window.docks["tree"].widget().filter.setText("R710")
        window.docks["tree"].widget().apply()
        grab("tree-filter")
        gallery = ExampleGallery(window)
        gallery.show()
        grab("example-gallery", gallery)
        gallery.close()
        window.document.undo_stack.clear()
        window.close()
    QTimer.singleShot(0, app.quit)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build/screenshots")
    target.mkdir(parents=True, exist_ok=True)
    for p in shoot(target):
        print(p)
