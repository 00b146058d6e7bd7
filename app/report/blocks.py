"""The appendix as blocks: headings, paragraphs, tables, steps, images, title, findings, contents.

Each block knows its HTML and Markdown and how it sits on a page (kept with the next
block, starting a page, space before it); the PDF paginator lays each one out on its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.report.html import esc, mark_missing, step_html, table_html
from app.report.markdown import md_cell, step_markdown, table_markdown
from app.report.tables.model import MISSING_MARK, Table
from topology.methodology.guards import GUARDS, GUARDS_TITLE, guard_library, guard_purpose, guards_in


@dataclass
class Block:
    keep_with_next: bool = False
    page_break: bool = False
    space_before_pt: float = 4.0

    def html(self) -> str:  # pragma: no cover - every block overrides
        raise NotImplementedError

    def markdown(self) -> str:  # pragma: no cover
        raise NotImplementedError


@dataclass
class Heading(Block):
    text: str = ""
    level: int = 1
    anchor: str = ""

    def __post_init__(self) -> None:
        self.keep_with_next = True
        self.page_break = self.page_break or self.level == 1
        self.space_before_pt = {1: 0.0, 2: 12.0}.get(self.level, 8.0)

    def html(self) -> str:
        return f'<h{self.level} id="{esc(self.anchor)}">{esc(self.text)}</h{self.level}>'

    def markdown(self) -> str:
        return f"{'#' * self.level} {self.text}"


@dataclass
class Para(Block):
    text: str = ""
    css: str = ""          # class: note, intro, small

    def html(self) -> str:
        cls = f' class="{self.css}"' if self.css else ""
        return f"<p{cls}>{mark_missing(esc(self.text))}</p>"

    def markdown(self) -> str:
        return f"*{self.text}*" if self.css == "note" else self.text


@dataclass
class TableBlock(Block):
    table: Table | None = None
    label: str = ""        # "Table A.1"

    def html(self) -> str:
        return table_html(self.table, self.label)

    def markdown(self) -> str:
        return table_markdown(self.table, self.label)


@dataclass
class StepsBlock(Block):
    """A run of methodology steps.  Printed as one document: hundreds of steps would
    otherwise cost a document each (half the time of a long appendix)."""
    steps: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.space_before_pt = 2.0

    def html(self) -> str:
        return "".join(step_html(s) for s in self.steps)

    def markdown(self) -> str:
        return "\n\n".join(step_markdown(s) for s in self.steps)


STEPS_PER_BLOCK = 40


@dataclass
class GuardBlock(Block):
    """A disk guard printed once for every step whose script folds it (topology.methodology.guards)."""
    name: str = ""

    def html(self) -> str:
        return (f'<p class="intro">{esc(guard_purpose(self.name))}</p>'
                f'<table class="code" width="100%" cellspacing="1" cellpadding="5" border="0" bgcolor="#c3c8cf">'
                f'<tr><td class="codebox"><pre>{esc(guard_library(self.name))}</pre></td></tr></table>')

    def markdown(self) -> str:
        lang = {"powershell": "powershell"}.get(GUARDS[self.name][0], "bash")
        return f"{guard_purpose(self.name)}\n\n```{lang}\n{guard_library(self.name)}\n```"


def guard_blocks(steps: list, level: int, anchor: str) -> list[Block]:
    """The guards the steps fold, each printed once, under one heading; nothing when none does."""
    names = guards_in(steps)
    if not names:
        return []
    blocks: list[Block] = [Heading(text=GUARDS_TITLE, level=level, anchor=anchor)]
    for name in names:
        blocks += [Heading(text=f"Disk guard {name}", level=level + 1, anchor=f"{anchor}-{name}"),
                   GuardBlock(name=name)]
    return blocks


def steps_blocks(steps: list) -> list[StepsBlock]:
    return [StepsBlock(steps=steps[i:i + STEPS_PER_BLOCK]) for i in range(0, len(steps), STEPS_PER_BLOCK)]


@dataclass
class ImageBlock(Block):
    caption: str = ""
    key: str = "diagram"
    chart: Any = None          # an app.metrics.report.Chart; None: the bed's diagram

    def html(self) -> str:     # the browser page embeds the image itself (see to_html)
        return f'<p class="caption">{esc(self.caption)}</p>'

    def markdown(self) -> str:
        return f"**{self.caption}**"


@dataclass
class TitleBlock(Block):
    title: str = ""
    subtitle: str = ""
    lines: list[tuple[str, str]] = field(default_factory=list)

    def html(self) -> str:
        rows = "".join(f'<tr><td class="tl">{esc(k)}</td><td class="tv">{esc(v)}</td></tr>' for k, v in self.lines)
        return (f'<p class="doctitle">{esc(self.title)}</p><p class="docsub">{esc(self.subtitle)}</p>'
                f'<table class="titleinfo" width="100%" cellspacing="0" cellpadding="2">{rows}</table>')

    def markdown(self) -> str:
        out = [f"# {self.title}", "", f"**{self.subtitle}**", ""]
        out += [f"- **{k}:** {v}" for k, v in self.lines]
        return "\n".join(out)


def _where(finding: Any) -> str:
    """'In scenario degraded: ' for a finding of a scenario ('In every configuration: ', 'In scenarios a,
    b: '); nothing for the reference configuration."""
    said = getattr(finding, "holds_in", "")
    if not said:
        scenario = getattr(finding, "scenario", None)
        said = f"scenario {scenario}" if scenario else ""
    return "" if not said or said == "the reference configuration" else f"In {said}: "


def _components(finding: Any) -> str:
    """The first four components, and how many more the finding names (a fact with 36 disks)."""
    subjects = list(finding.subjects)
    return ", ".join(subjects[:4]) + (f" and {len(subjects) - 4} more" if len(subjects) > 4 else "")


@dataclass
class FindingsBlock(Block):
    findings: list = field(default_factory=list)
    errors: int = 0
    warnings: int = 0
    accepted: int = 0
    limit: int = 40

    def _shown(self) -> list:
        return [f for f in self.findings if not f.accepted and f.severity in ("error", "warning")][: self.limit]

    def _headline(self) -> str:
        more = len([f for f in self.findings if not f.accepted and f.severity in ("error", "warning")]) - self.limit
        text = (f"Design review: this test bed has {self.errors} error(s) and {self.warnings} warning(s). "
                f"Values the bed does not give are marked {MISSING_MARK} or «missing» in the tables and steps below.")
        if more > 0:
            text += f" The first {self.limit} findings are listed; {more} more are not shown."
        if self.accepted:
            text += f" {self.accepted} finding(s) are accepted as documented exceptions."
        return text

    def html(self) -> str:
        rows = []
        for f in self._shown():
            cls = "sev-error" if f.severity == "error" else "sev-warning"
            rows.append(f'<tr><td class="{cls}">{esc(f.severity.upper())}</td><td>{esc(f.code)}</td>'
                        f'<td>{esc(_components(f))}</td><td>{esc(_where(f) + f.message)}</td></tr>')
        return ('<table class="alert" width="100%" cellspacing="1" cellpadding="6" bgcolor="#c94c4c">'
                f'<tr><td class="alertbox"><p class="alerthead">{esc(self._headline())}</p></td></tr></table>'
                f'<table class="grid small" width="100%" border="1" cellspacing="0" cellpadding="3">'
                f'<thead><tr><th width="11%">Severity</th><th width="10%">Code</th><th width="21%">Components</th>'
                f'<th width="58%">Finding</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')

    def markdown(self) -> str:
        out = [f"> **{self._headline()}**", "", "| Severity | Code | Components | Finding |", "|---|---|---|---|"]
        for f in self._shown():
            components = md_cell(_components(f))
            out.append(f"| {f.severity.upper()} | {f.code} | {components} | {md_cell(_where(f) + f.message)} |")
        return "\n".join(out)


@dataclass
class TocBlock(Block):
    entries: list[tuple[str, str]] = field(default_factory=list)   # (text, anchor)
    pages: dict[str, int] = field(default_factory=dict)             # anchor -> page, once paginated

    def html(self) -> str:
        rows = "".join(f'<tr><td class="toc"><a href="#{esc(a)}">{esc(t)}</a></td>'
                       f'<td class="tocpage" align="right">{self.pages.get(a, "") if self.pages else "000"}</td></tr>'
                       for t, a in self.entries)
        return (f'<p class="tochead">Contents</p><table class="tocs" width="100%" cellspacing="0" '
                f'cellpadding="2">{rows}</table>')

    def markdown(self) -> str:
        return "**Contents**\n\n" + "\n".join(f"- [{t}](#{a})" for t, a in self.entries)


@dataclass
class Appendix:
    bed: Any
    title: str
    blocks: list[Block]
    findings: list = field(default_factory=list)
    methodology: Any = None
    running_head: str = ""
