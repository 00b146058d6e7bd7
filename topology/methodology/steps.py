"""What a methodology is made of: numbered sections of steps, each step with its commands."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Command:
    """One automation for a step.  `script` is ready to run: every bed value in it is quoted
    for `shell`.  `target` overrides the step's target when one step runs on several hosts."""
    shell: str                      # "powershell" | "bash" | "vendor-cli"
    script: str
    verify: str | None = None       # read-only check that the step took effect
    platform: str = ""              # "windows" | "linux" | "esxi" | "array"
    note: str = ""                  # e.g. how to run a vendor CLI script, syntax caveats
    target: str = ""                # "" = the step's target
    invoke: str | None = None       # vendor-cli: bash command running the statements file "$STATEMENTS"
    ansible: dict | None = None     # the Ansible module doing the same: {module, args, become[, creates]}


@dataclass
class Step:
    number: str                     # "3.12"
    text: str                       # prose with the bed's values; missing ones as «missing: name»
    target: str = ""                # component id the step is done on ("" = not tied to one)
    automation: list[Command] = field(default_factory=list)
    manual: bool = True             # no automation: a person does it
    sources: dict[str, str] = field(default_factory=dict)   # shown value -> "COMPONENT.field"
    unresolved: list[str] = field(default_factory=list)     # value names the bed lacks
    template: str = ""              # "windows/network.yaml#port": where the step came from
    not_stated: list[str] = field(default_factory=list)     # values the source does not state: done by hand
    notes: list[str] = field(default_factory=list)          # "ID: note" of components the step first uses
    manual_reason: str = ""         # why a step with a template for other platforms is done by hand
    platform: str = ""              # the machine's platform as the templates saw it: "Windows Server 2008 R2"
    table: tuple[list[str], list[list[str]]] | None = None   # (header, rows): a step with one row per item
    machine: dict | None = None     # the machine it runs on: family, distro, version, hypervisor, transports
    values: dict = field(default_factory=dict)   # value name -> the Val it showed (text, source field)
    destructive: bool = False       # writes to a block device: guarded, and a run asks before it
    devices: list[str] = field(default_factory=list)   # destructive: the disks it writes to, by identity
    # the run section: where in the test the step is (configuration, phase, scenario, level, repetition)
    position: dict | None = None
    heading: str = ""               # printed above the step where a part of the test begins

    @property
    def runnable(self) -> bool:
        """Automated and complete: a step with missing values is never run."""
        return bool(self.automation) and not self.unresolved


@dataclass
class Section:
    number: str                     # "3"
    title: str
    steps: list[Step] = field(default_factory=list)
    key: str = ""                   # "network", "storage" ... (stable, for filters)


@dataclass
class Methodology:
    bed_name: str
    sections: list[Section] = field(default_factory=list)
    findings_summary: list[str] = field(default_factory=list)   # one line per open error or warning
    errors: int = 0                 # open errors and warnings, as the Validation panel counts them
    warnings: int = 0
    incomplete_note: str = ""       # the steps that lack values, when some do
    validation_failed: str = ""     # why the bed could not be validated, when it could not

    def banner(self) -> str:
        """The headline above the procedure: problems only when the validator finds errors."""
        if self.validation_failed:
            return self.validation_failed
        if self.errors:
            return (f"The bed has problems: {self.errors} error(s) and {self.warnings} warning(s). The procedure "
                    "below was generated anyway.")
        if self.warnings:
            return f"Validation: no errors, {self.warnings} warning(s)."
        return ""

    def steps(self) -> Iterator[Step]:
        for s in self.sections:
            yield from s.steps


# The order a lab builds a bed in; titles can be replaced by a template's `title:`.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("hardware", "Installing the hardware (blade chassis)"),
    ("infrastructure", "Installing and configuring the infrastructure servers"),
    ("hosts", "Installing and configuring the servers"),
    ("network", "Setting up the network adapters"),
    ("switches", "Configuring the switches"),
    ("storage", "Configuring the storage"),
    ("connectivity", "Connecting the hosts to the storage (discovery, sessions, multipath)"),
    ("cluster", "Configuring the cluster"),
    ("vms", "Creating and configuring the virtual machines"),
    ("workloads", "Installing and configuring the workloads"),
    ("run", "Running the test"),
)
SECTION_KEYS = tuple(k for k, _ in SECTIONS)
