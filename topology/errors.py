"""The project's own error type for anything wrong with a project file."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file: where, what, and how to fix it."""
    message: str
    hint: str = ""
    line: int | None = None      # 1-based
    column: int | None = None    # 1-based
    where: str = ""              # path inside the document, e.g. servers[2].cpu.sockets

    def format(self, filename: str = "") -> str:
        loc = filename or "<project>"
        if self.line is not None:
            loc += f":{self.line}"
            if self.column is not None:
                loc += f":{self.column}"
        text = f"{loc}: {self.message}"
        if self.where:
            text += f" (at {self.where})"
        if self.hint:
            text += f"\n    how to fix: {self.hint}"
        return text


class BedFileError(Exception):
    """A project file could not be read.  Carries every problem found, in file order."""

    def __init__(self, problems: list[Problem], filename: str = ""):
        self.problems = sorted(problems, key=lambda p: (p.line or 0, p.column or 0))
        self.filename = filename
        super().__init__(self.format())

    def format(self) -> str:
        shown = self.problems[:20]
        text = "\n".join(p.format(self.filename) for p in shown)
        if len(self.problems) > len(shown):
            text += f"\n... and {len(self.problems) - len(shown)} more problems"
        return text
