"""Dependencies point one way: topology/ (the domain core) imports no Qt, no pyqtgraph,
no paramiko, no winrm and nothing from app/ or widgets/; app/ imports no widgets and
QtWidgets only in its GUI entry point app/gui.py; widgets/ reach transports and credentials
only through the run session (app/run/session.py).

The contracts are read statically from every import in every file, including imports
inside functions and `importlib.import_module("...")` calls, so a lazy import cannot hide a
violation; a planted violation proves the reader catches each form."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Contract:
    name: str
    layer: str                       # a top-level package: every .py file under it is checked
    forbidden: tuple[str, ...]       # module prefixes it must not import
    allowed_files: tuple[str, ...] = ()   # files (relative to ROOT) exempt from this contract


CONTRACTS = (
    Contract("the domain core imports no upper layer, no GUI and no remote-access library",
             "topology", ("app", "widgets", "PySide6", "shiboken6", "pyqtgraph", "paramiko",
                          "winrm", "keyring", "bench")),
    Contract("application services import no widgets", "app", ("widgets", "bench"),
             allowed_files=("app/gui.py",)),
    Contract("only the GUI entry point imports QtWidgets", "app", ("PySide6.QtWidgets",),
             allowed_files=("app/gui.py",)),
    Contract("widgets reach transports and credentials only through the run session",
             "widgets", ("app.remote", "paramiko", "winrm", "keyring", "bench")),
    Contract("shipped packages import no benchmark or test code", "app", ("bench", "tests")),
)


def imported_modules(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """Every module a file imports, with its line: `import a.b`, `from a import b` (as a and
    a.b), relative imports resolved against the file's package, and import_module calls."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = ".".join(path.relative_to(root).parent.parts)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                module = ".".join([*base, module] if module else base)
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            if getattr(func, "attr", getattr(func, "id", "")) in ("import_module", "__import__"):
                found.append((node.lineno, str(node.args[0].value)))
    return found


def _matches(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def violations(root: Path, contracts=CONTRACTS) -> list[str]:
    out = []
    for contract in contracts:
        for path in sorted((root / contract.layer).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel in contract.allowed_files:
                continue
            seen_lines: set[int] = set()
            for line, module in imported_modules(path, root):
                if line in seen_lines:
                    continue
                if any(_matches(module, p) for p in contract.forbidden):
                    seen_lines.add(line)
                    out.append(f"{rel}:{line}: imports {module} — {contract.name}")
    return sorted(out)


def test_every_layer_keeps_its_contracts():
    found = violations(ROOT)
    assert found == [], "layering violations:\n" + "\n".join(found)


def test_a_planted_violation_is_caught_in_every_form(tmp_path):
    (tmp_path / "topology").mkdir()
    (tmp_path / "topology" / "__init__.py").write_text("")
    (tmp_path / "topology" / "lazy.py").write_text(textwrap.dedent("""
        def later():
            import paramiko.client
            from PySide6 import QtCore
            from ..widgets import canvas
            importlib.import_module("winrm")
    """))
    (tmp_path / "widgets").mkdir()
    (tmp_path / "widgets" / "run_tab.py").write_text("from app.remote.ssh import SSHTransport\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "report.py").write_text("def f():\n    from PySide6.QtWidgets import QLabel\n")
    (tmp_path / "app" / "gui.py").write_text("from PySide6.QtWidgets import QApplication\n")
    found = violations(tmp_path)
    expected = ["topology/lazy.py:3: imports paramiko.client",
                "topology/lazy.py:4: imports PySide6",
                "topology/lazy.py:5: imports widgets",
                "topology/lazy.py:6: imports winrm",
                "widgets/run_tab.py:1: imports app.remote.ssh",
                "app/report.py:2: imports PySide6.QtWidgets"]
    for prefix in expected:
        assert any(v.startswith(prefix) for v in found), (prefix, found)
    assert not any(v.startswith("app/gui.py") for v in found), found


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
BLOCKED = ("PySide6", "shiboken6", "pyqtgraph", "paramiko", "winrm", "app", "widgets")


def test_topology_imports_without_qt_ssh_winrm_or_upper_layers():
    """The same contract at run time: every topology module imports with those blocked."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, ",".join(BLOCKED)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["leaked"] == []
    expected = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                for p in (ROOT / "topology").rglob("*.py")}
    assert expected <= set(report["imported"]), expected - set(report["imported"])


def test_rules_import_the_registry_and_context_never_the_runner():
    """No circle: the runner loads the rules; a rule (and what rules share) never loads the runner
    or the package that re-exports it; the shared math never depends on the validator."""
    base = ROOT / "topology" / "validation"
    shared = [base / "registry.py", base / "context.py", base / "rules" / "__init__.py"]
    rules = sorted((base / "rules").glob("*.py"))
    expected = {"network.py", "paths.py", "storage.py", "capacity.py", "cluster.py", "workload.py"}
    assert expected <= {p.name for p in rules}
    for path in rules + shared:
        imported = {m for _, m in imported_modules(path)}
        bad = sorted(m for m in imported if m in ("topology.validation", "topology.validation.runner")
                     or m.startswith("topology.validation.runner."))
        assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"
    for path in (ROOT / "topology" / "placement.py", ROOT / "topology" / "capacity.py"):
        assert not any(m.startswith("topology.validation") for _, m in imported_modules(path)), \
            f"{path.name}: the shared math must not depend on the validator"


def test_no_module_is_over_600_lines():
    long = [f"{p.relative_to(ROOT)}: {n} lines" for top in ("topology", "app", "widgets")
            for p in sorted((ROOT / top).rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600]
    assert long == [], "split these modules: " + ", ".join(long)
