"""The template language: what a step's text and commands are written in, parsed into named nodes.

    {port.ip}              a value (`ValueRef`); in a command it is quoted for the command's shell
    {? , MTU {port.mtu} ?} an optional part (`OptionalPart`): dropped when a value inside is missing
    {@reset}, {@a|b:last}  the number of the first (last) step made from template step `reset` (`StepNumber`)
    {{  }}                 literal braces (part of a `Literal`)

`topology.methodology.render` fills a parsed `Template` with an item's values.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from topology.errors import BedFileError, Problem


class TemplateError(BedFileError):
    """A step template could not be used: every problem with its file and line."""

    def __init__(self, problems: list[Problem], filename: str = ""):
        super().__init__(problems, filename)


def template_error(path: Path | str, line: int | None, message: str, hint: str = "") -> TemplateError:
    return TemplateError([Problem(message, hint, line)], str(path))


@dataclass(slots=True)
class Literal:
    text: str


@dataclass(slots=True)
class ValueRef:
    name: str


@dataclass(slots=True)
class OptionalPart:
    parts: tuple
    required: tuple[str, ...] = ()    # the value names directly inside (not in nested optional parts)
    plan: tuple = field(init=False, repr=False, compare=False)   # `fill_plan(parts)`

    def __post_init__(self) -> None:
        self.plan = fill_plan(self.parts)


@dataclass(slots=True)
class StepNumber:
    step_ids: tuple[str, ...]         # the first of these that produced a step
    last: bool
    # step numbers are known only once a whole section is laid out: rendering leaves this mark,
    # which generation replaces (NUL cannot come from a template or a rendered value)
    placeholder: str = field(init=False)

    def __post_init__(self) -> None:
        self.placeholder = f"\x00{'|'.join(self.step_ids)}{':last' if self.last else ''}\x00"


STEP_NUMBER_MARK = re.compile("\x00([^\x00:]+)(:last)?\x00")   # a placeholder: step ids, ":last"


Node = Literal | ValueRef | OptionalPart | StepNumber


def fill_plan(parts: tuple) -> tuple:
    """The parts as rendering walks them: literal text (and step-number marks) as plain strings,
    neighbours joined; value references and optional parts as they are."""
    plan: list = []
    for p in parts:
        text = p.text if isinstance(p, Literal) else p.placeholder if isinstance(p, StepNumber) else None
        if text is None:
            plan.append(p)
        elif plan and isinstance(plan[-1], str):
            plan[-1] += text
        else:
            plan.append(text)
    return tuple(plan)


@dataclass
class Template:
    """A parsed template string and the line it starts on."""
    parts: tuple[Node, ...]
    line: int
    plan: tuple = field(init=False, repr=False, compare=False)   # `fill_plan(parts)`

    def __post_init__(self) -> None:
        self.plan = fill_plan(self.parts)

    def names(self) -> Iterator[str]:
        """Every value name, optional parts included."""
        return (n.name for n in _walk(self.parts) if isinstance(n, ValueRef))

    def step_refs(self) -> Iterator[StepNumber]:
        return (n for n in _walk(self.parts) if isinstance(n, StepNumber))


def _walk(parts: tuple) -> Iterator[Node]:
    for p in parts:
        yield p
        if isinstance(p, OptionalPart):
            yield from _walk(p.parts)


_VALUE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[^{}]+)+$")
_STEP_NUMBER = re.compile(r"^@([\w-]+(?:\|[\w-]+)*)(:last)?$")


def parse_template(text: str, line: int, where: str, path: Path, command: bool) -> Template:
    """Parse `{name}`, `{? ... ?}`, `{@step}`, `{{`, `}}`; errors name the line the problem is on."""
    stack: list[list] = [[]]
    buf: list[str] = []
    i, n = 0, len(text)

    def here(k: int) -> int:
        return line + text.count("\n", 0, k)

    def flush() -> None:
        if buf:
            stack[-1].append(Literal("".join(buf)))
            buf.clear()

    while i < n:
        ch = text[i]
        two = text[i:i + 2]
        if two == "{{":
            buf.append("{")
            i += 2
        elif two == "}}" and not (len(stack) > 1 and text[i - 1:i] == "?"):
            buf.append("}")
            i += 2
        elif two == "{?":
            flush()
            stack.append([])
            i += 2
        elif two == "?}" and len(stack) > 1:
            flush()
            inner = stack.pop()
            stack[-1].append(OptionalPart(tuple(inner), tuple(p.name for p in inner if isinstance(p, ValueRef))))
            i += 2
        elif ch == "{":
            end = text.find("}", i + 1)
            if end < 0:
                raise template_error(path, here(i), f"{where}: '{{' is not closed",
                                      "write {name} for a value, or {{ for a literal brace")
            name = text[i + 1:end].strip()
            flush()
            m = _STEP_NUMBER.match(name)
            if m:
                if command:
                    raise template_error(path, here(i), f"{where}: step references ({{{name}}}) belong in the text",
                                          "refer to step numbers in the step text only")
                stack[-1].append(StepNumber(tuple(m.group(1).split("|")), bool(m.group(2))))
            elif _VALUE_NAME.match(name):
                if command:
                    before, after = text[i - 1:i], text[end + 1:end + 2]
                    if before in ("'", '"') or after in ("'", '"'):
                        raise template_error(
                            path, here(i), f"{where}: placeholder {{{name}}} is written inside quotes",
                            "leave placeholders unquoted in commands: the generator quotes every value for its shell")
                stack[-1].append(ValueRef(name))
            else:
                raise template_error(path, here(i), f"{where}: {{{name}}} is not a value name",
                                      "value names look like {port.ip}; write {{ and }} for literal braces")
            i = end + 1
        elif ch == "}":
            raise template_error(path, here(i), f"{where}: a lone '}}'", "write }} for a literal brace")
        else:
            buf.append(ch)
            i += 1
    flush()
    if len(stack) > 1:
        raise template_error(path, here(n), f"{where}: an optional part '{{?' is not closed with '?}}'")
    return Template(tuple(stack[0]), line)

