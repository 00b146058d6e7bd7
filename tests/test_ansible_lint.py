"""The exported files pass `ansible-playbook --syntax-check` and ansible-lint's production profile.

Collections cannot be downloaded here (no Galaxy), and the full `ansible` package (every
collection, several hundred MB) is too heavy for the test setup.  So: the Linux export, which
needs ansible-core only, is syntax-checked by ansible-playbook itself; the Windows export's
modules are checked against the modules the pinned collections really have, and ansible-lint
runs on it with those modules mocked (its own syntax check then passes; arguments of the
mocked modules are not checked).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.ansible import export, reach
from app.run.plan import run_steps
from tests.run_beds import with_a_formatted_volume, write_fio_bed
from topology.fileformat import load
from topology.methodology import generate

BIN = Path(sys.executable).parent
EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"

# modules of the collections requirements.yml asks for (ansible.windows 2.x, microsoft.ad 1.x),
# from their documentation; an export naming any other module of theirs is a typo
COLLECTION_MODULES = {
    "ansible.windows": {"win_acl", "win_certificate_store", "win_command", "win_copy", "win_dns_client",
                        "win_domain_membership", "win_dsc", "win_environment", "win_feature", "win_file",
                        "win_find", "win_get_url", "win_group", "win_group_membership", "win_hostname",
                        "win_optional_feature", "win_package", "win_path", "win_ping", "win_powershell",
                        "win_reboot", "win_reg_stat", "win_regedit", "win_service", "win_service_info",
                        "win_share", "win_shell", "win_stat", "win_tempfile", "win_template", "win_updates",
                        "win_uri", "win_user", "win_user_right", "win_wait_for", "win_whoami"},
    "microsoft.ad": {"computer", "domain", "domain_child", "domain_controller", "group", "membership",
                     "object", "object_info", "offline_join", "ou", "user"},
}


def _tool(name: str) -> Path:
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed in this environment (pip install -e .[test])")
    return path


def _linux_export(tmp_path: Path):
    bed_file = write_fio_bed(tmp_path / "bed.yaml", "client1", tmp_path / "c.dat",
                             {"transport": "ssh", "address": "192.0.2.10", "user": "root"})
    # with a LUN the client formats: the guarded format step, and the confirmation the export asks before it
    # (app/ansible/disk_writes.py)
    return _export(load(with_a_formatted_volume(bed_file)), tmp_path / "linux")


def _windows_export(tmp_path: Path):
    """The Hyper-V cluster example (domain controller, features, domain joins, iSCSI, cluster) on a
    Windows release ansible.windows manages, with the run section's restart."""
    text = (EXAMPLES / "md3000i-hyperv-cluster.yaml").read_text(encoding="utf-8")
    bed_file = tmp_path / "hyperv-2019.yaml"
    bed_file.write_text(text.replace("2008 R2", "2019").replace("2008 SP2", "2019"), encoding="utf-8")
    bed = load(bed_file)
    bed.run_plan.reboot, bed.run_plan.reset_steps = True, []
    return _export(bed, tmp_path / "windows")


def _export(bed, out: Path):
    reached = reach(bed)
    return export(bed, run_steps(generate(bed), reached.transports), out, reached)


def _tasks(result) -> list[dict]:
    """Every task of the export: in the plays and in the hosts' own task files."""
    tasks = [t for key in ("playbook", "measure") if key in result.paths
             for play in yaml.safe_load(result.paths[key].read_text().replace("!unsafe ", "")) for t in play["tasks"]]
    return tasks + [t for f in result.task_files for t in yaml.safe_load(f.read_text().replace("!unsafe ", ""))]


def _modules(result) -> set[str]:
    return {k for task in _tasks(result) for k in task if k.count(".") == 2}


def test_the_linux_export_passes_syntax_check_with_ansible_core_alone(tmp_path):
    result = _linux_export(tmp_path)
    assert yaml.safe_load(result.paths["requirements"].read_text()) == {"collections": []}
    modules = _modules(result)
    assert {"ansible.builtin.package", "ansible.builtin.fetch", "ansible.builtin.command",
            "ansible.builtin.assert"} <= modules
    assert "tb_require_blank" in result.paths["playbook"].read_text()      # the guarded format step is linted too
    r = subprocess.run([str(_tool("ansible-playbook")), "-i", str(result.paths["inventory"]), "--syntax-check",
                        str(result.paths["playbook"]), str(result.paths["measure"])],
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_windows_export_names_only_modules_its_requirements_provide(tmp_path):
    result = _windows_export(tmp_path)
    modules = _modules(result)
    wanted = {c["name"] for c in yaml.safe_load(result.paths["requirements"].read_text())["collections"]}
    assert {"ansible.windows.win_feature", "ansible.windows.win_service", "ansible.windows.win_reboot",
            "microsoft.ad.membership", "microsoft.ad.domain"} <= modules
    for m in modules - {m for m in modules if m.startswith("ansible.builtin.")}:
        collection, _, module = m.rpartition(".")
        assert collection in wanted, f"{m}: its collection is not in requirements.yml"
        assert module in COLLECTION_MODULES[collection], f"{m} is not a module of {collection}"
    text = result.paths["playbook"].read_text()
    assert "Get-Credential" not in text
    # module arguments keep their types; the secrets are vault variables, never prompts on the host
    assert not any("Get-Credential" in f.read_text() for f in result.task_files)
    promote = next(t["microsoft.ad.domain"] for t in _tasks(result) if "microsoft.ad.domain" in t)
    assert promote["install_dns"] is True and promote["reboot"] is True
    assert promote["safe_mode_password"] == "{{ testbed_safe_mode_password }}"


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("platform", ["linux", "windows"])
def test_the_export_passes_ansible_lint_production_profile(platform, tmp_path):
    lint = _tool("ansible-lint")
    result = _linux_export(tmp_path) if platform == "linux" else _windows_export(tmp_path)
    config = {"profile": "production", "offline": True}
    if platform == "windows":
        config["mock_modules"] = sorted(m for m in _modules(result) if not m.startswith("ansible.builtin."))
    cfg = tmp_path / "lint.yml"
    cfg.write_text(yaml.safe_dump(config))
    files = [str(result.paths[k]) for k in ("playbook", "measure") if k in result.paths]
    files += [str(f) for f in result.task_files]
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "NO_COLOR": "1", "ANSIBLE_LOCAL_TEMP": str(home / "tmp")}
    r = subprocess.run([str(lint), "-c", str(cfg), "-f", "json", *files], capture_output=True, text=True,
                       timeout=540, env=env, stdin=subprocess.DEVNULL, cwd=result.paths["playbook"].parent)
    found = json.loads(r.stdout or "[]")
    assert found == [] and r.returncode == 0, (json.dumps(found[:10], indent=1), r.stderr[-3000:])
    # nothing was skipped in the generated files to get there
    assert "noqa" not in "".join(Path(f).read_text() for f in files)
    assert not (result.paths["playbook"].parent / ".ansible-lint").exists()
