"""PySide6 asks of every module imported after it whether its source says "PySide6" (a module
that may choose `__feature__` options such as snake_case), through inspect.getsource: about
600 modules at a start, 0.16 s of its CPU (bench.canvas --cold-start-only).  The same question
is answered here from the module file's bytes; anything that is not a plain .py file goes to
PySide's own check.  The answer only matters to `from __feature__ import`, which this project
does not use."""
from __future__ import annotations

import sys
from types import ModuleType

import PySide6.QtCore  # noqa: F401  (installs the import hook this module speeds up)


def install() -> None:
    feature = sys.modules.get("PySide6.support.feature")
    check = getattr(feature, "_mod_uses_pyside", None)
    if check is None or getattr(check, "reads_bytes", False):
        return          # another PySide, or done already

    def uses_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            return bool(check(module))
        try:
            with open(path, "rb") as source:
                return b"PySide6" in source.read()
        except OSError:         # as inspect.getsource's "could not get source code"
            return False

    uses_pyside.reads_bytes = True      # type: ignore[attr-defined]
    feature._mod_uses_pyside = uses_pyside     # type: ignore[union-attr]
