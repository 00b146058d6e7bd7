"""Dependencies point one way: topology/ (the domain core) imports no Qt, no pyqtgraph,
no paramiko, no winrm and nothing from app/ or widgets/; app/ imports QtWidgets only in
its GUI entry point app/gui.py."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCKED = ("PySide6", "shiboken6", "pyqtgraph", "paramiko", "winrm", "app", "widgets")

_CHILD = textwrap.dedent("""
    import importlib, importlib.abc, json, pkgutil, sys
    BLOCKED = set(sys.argv[1].split(","))

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in BLOCKED:
                raise ImportError(f"layering: topology must not import {name}")
            return None

    sys.meta_path.insert(0, Block())
    import topology
    names = ["topology"]
    for info in pkgutil.walk_packages(topology.__path__, "topology."):
        importlib.import_module(info.name)
        names.append(info.name)
    leaked = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
    print(json.dumps({"imported": names, "leaked": leaked}))
""")


def test_topology_imports_without_qt_ssh_winrm_or_upper_layers():
    proc = subprocess.run([sys.executable, "-c", _CHILD, ",".join(BLOCKED)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["leaked"] == []
    expected = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                for p in (ROOT / "topology").rglob("*.py")}
    assert expected <= set(report["imported"]), expected - set(report["imported"])


def _qtwidgets_imports(path: Path) -> list[str]:
    """Import statements (and import_module("...QtWidgets") calls) naming QtWidgets."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            if getattr(func, "attr", getattr(func, "id", "")) in ("import_module", "__import__"):
                names = [str(node.args[0].value)]
        if any("QtWidgets" in n.split(".") for n in names):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_only_app_gui_imports_qtwidgets():
    sources = sorted((ROOT / "app").rglob("*.py"))
    assert ROOT / "app" / "gui.py" in sources
    assert _qtwidgets_imports(ROOT / "app" / "gui.py"), "the check itself should see app/gui.py's import"
    offenders = [hit for p in sources if p.name != "gui.py" or p.parent != ROOT / "app"
                 for hit in _qtwidgets_imports(p)]
    assert offenders == [], "only app/gui.py may import QtWidgets: " + ", ".join(offenders)


def _imported_modules(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return out


def test_rules_import_the_registry_and_context_never_the_runner():
    """No circle: the runner loads the rules; a rule (and what rules share) never loads the runner
    or the package that re-exports it."""
    base = ROOT / "topology" / "validation"
    shared = [base / "registry.py", base / "context.py", base / "rules" / "__init__.py"]
    rules = sorted((base / "rules").glob("*.py"))
    assert {"network.py", "paths.py", "storage.py", "capacity.py", "cluster.py", "workload.py"} <= {p.name for p in rules}
    for path in rules + shared:
        imported = _imported_modules(path)
        bad = sorted(m for m in imported if m in ("topology.validation", "topology.validation.runner")
                     or m.startswith("topology.validation.runner."))
        assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"
    for path in (ROOT / "topology" / "placement.py", ROOT / "topology" / "capacity.py"):
        assert not any(m.startswith("topology.validation") for m in _imported_modules(path)), \
            f"{path.name}: the shared math must not depend on the validator"
