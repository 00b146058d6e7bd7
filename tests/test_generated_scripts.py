"""Every script of every generated procedure parses and fits the machine it runs on: for each
example bed and for a small bed of every platform × version × transport
(topology.synthetic_platforms — a new platform is one more case there), PowerShell through
tree-sitter-powershell, bash through `bash -n` and shellcheck, and every PowerShell command
against the Windows version table.  No Windows machine runs here: the grammar and the table are
what stands between a template and a command for the wrong system."""
from __future__ import annotations

import pytest

from resources import example_names, example_path
from tests import script_checks
from topology.fileformat import load
from topology.methodology import generate, to_markdown
from topology.methodology.context import BedContext
from topology.synthetic_platforms import cases, platform_bed

CASES = cases()


@pytest.mark.parametrize("name", example_names())
def test_every_script_of_an_example_parses_and_fits_its_hosts_version(name):
    from topology.configurations import configured, procedures
    bed = load(example_path(name))
    made = procedures(bed)      # the bed's own procedure, or one per configuration
    scripts = [x for _, meth in made for x in script_checks.scripts_of(meth)]
    # every example has commands: issue 30's RHEV/Hyper-V bed too (its RHEL 6 host's IOMMU, virtual functions,
    # vdsm hook and vhost-net), though it states no address or guest OS
    assert scripts
    for config, meth in made:
        view = configured(bed, config) if config is not None else bed
        assert script_checks.problems(view, meth) == [], config


@pytest.mark.slow
@pytest.mark.parametrize("case, transport", CASES, ids=[f"{c.id}-{t}" for c, t in CASES])
def test_every_script_of_a_platform_bed_parses_and_fits_its_hosts_version(case, transport):
    bed = platform_bed(case, transport)
    meth = generate(bed)
    assert script_checks.problems(bed, meth) == []
    ctx = BedContext(bed)
    # an unnamed or unversioned system gets no command that needs a version
    for step in meth.steps():
        release = ctx.profile(step.target).release if ctx.server_or_vm(step.target) is not None else None
        if release is not None and not release.family:
            assert not step.automation, (step.number, step.template)


def test_the_first_example_on_2008_r2_has_no_2012_cmdlet_and_every_step_says_why_it_is_manual():
    bed = load(example_path("md3000i-hyperv-cluster"))
    meth = generate(bed)
    table = script_checks.windows_commands()
    newer = {name for name, r in table.items() if r.min is not None and r.min >= (2012, 0)}
    used = {n.lower() for s in script_checks.scripts_of(meth) if s.shell == "powershell"
            for n in script_checks.powershell_commands(s.text)}
    assert used and not used & newer, sorted(used & newer)
    text = to_markdown(meth)
    for cmdlet in ("Install-WindowsFeature", "Get-Disk", "New-VM", "New-VHD", "New-NetIPAddress",
                   "New-IscsiTargetPortal", "Enable-MSDSMAutomaticClaim"):
        assert cmdlet not in text
    assert "Add-WindowsFeature -Name Multipath-IO" in text and "iscsicli.exe QAddTargetPortal" in text


def test_the_version_table_is_checked_against_a_planted_mistake():
    """The table catches a 2012 cmdlet on 2008 R2 and a command it does not list."""
    from topology.methodology.steps import Command, Methodology, Section, Step
    bed = load(example_path("md3000i-hyperv-cluster"))
    step = Step("1.1", "t", "R710-1", [Command("powershell", "Get-Disk\nFrobnicate-Thing -Now", platform="windows")],
                manual=False, template="planted")
    meth = Methodology("planted", [Section("1", "s", [step])])
    found = script_checks.problems(bed, meth)
    assert any("Get-Disk needs Windows Server 2012, R710-1 runs Windows Server 2008 R2" in p for p in found)
    assert any("Frobnicate-Thing is not in windows-commands.yaml" in p for p in found)
    broken = Methodology("planted", [Section("1", "s", [Step("1.1", "t", "R710-1", [
        Command("powershell", "if ($x) { Write-Output 1", platform="windows")], manual=False, template="p")])])
    assert any("does not parse" in p or "line 1" in p for p in script_checks.problems(bed, broken))


def test_bash_checks_catch_a_planted_mistake():
    from topology.methodology.steps import Command, Methodology, Section, Step
    bed = load(example_path("md3000i-hyperv-cluster"))
    meth = Methodology("planted", [Section("1", "s", [Step("1.1", "t", "", [
        Command("bash", "if true; then echo x", platform="linux"),
        Command("bash", "rm -rf $DIR/x", platform="linux")], manual=False, template="p")])])
    found = script_checks.problems(bed, meth)
    assert any("bash -n" in p for p in found)
    assert any("SC2086" in p for p in found), found


def test_every_table_entry_is_a_version_the_templates_can_name():
    table = script_checks.windows_commands()
    assert len(table) > 50
    for name, r in table.items():
        assert r.min is None or r.min >= (2008, 0), name
        assert r.max is None or r.min is None or r.max >= r.min, name
