"""YAML for Ansible: every string that comes from a bed is written `!unsafe`.

Ansible then never reads `{{ }}` or `{% %}` in it as a template; it reaches the module as the
bytes the bed holds.  Only text this exporter writes itself (vault variable names, register
names, conditions) is left for Ansible to template.
"""
from __future__ import annotations

import yaml


class Unsafe(str):
    """Bed text: dumped with the `!unsafe` tag."""


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data) -> bool:
        return True     # no &id001 anchors: every task reads on its own

    def increase_indent(self, flow: bool = False, indentless: bool = False):
        # lists indented under their key, as ansible-lint's yamllint rules expect
        return super().increase_indent(flow, False)


class Name(str):
    """Bed text in a task or play name: plain when it cannot hold a template (no `{`), else
    `!unsafe`.  ansible-lint matches names between two YAML parsers and gives up on tagged ones."""


LONGEST_BLOCK_LINE = 140


def _represent_unsafe(dumper: yaml.SafeDumper, value: Unsafe):
    # a script with a line too long for a block scalar is double-quoted: YAML folds it losslessly
    lines = value.split("\n")
    style = "|" if len(lines) > 1 and max(map(len, lines)) <= LONGEST_BLOCK_LINE else \
        '"' if max(map(len, lines)) > LONGEST_BLOCK_LINE else None
    return dumper.represent_scalar("!unsafe", str(value), style=style)


def _represent_name(dumper: yaml.SafeDumper, value: Name):
    if "{" in value:
        return _represent_unsafe(dumper, Unsafe(value))
    return dumper.represent_str(str(value))


_Dumper.add_representer(Unsafe, _represent_unsafe)
_Dumper.add_representer(Name, _represent_name)

# libyaml's emitter, for the files only ansible-playbook reads (the run engine's passes): the pure
# Python emitter looks at every character of a long script in Python (issue 33: 3 s of 50 hosts'
# chain scripts before each pass).  Same data and tags; its indentation is libyaml's, which
# ansible-lint's layout rules do not expect, so exports keep the Python one.
_FastDumper = None
if getattr(yaml, "__with_libyaml__", False):
    class _FastDumper(yaml.CSafeDumper):  # type: ignore[no-redef]
        def ignore_aliases(self, data) -> bool:
            return True

    _FastDumper.add_representer(Unsafe, _represent_unsafe)
    _FastDumper.add_representer(Name, _represent_name)


def data(value) -> Unsafe:
    return Unsafe(str(value))


NAME_LENGTH = 120      # a name fits on one line of 160 (ansible-lint); the prompt has the whole text


def name(value) -> Name:
    text = " ".join(str(value).split())
    return Name(text if len(text) <= NAME_LENGTH else text[:NAME_LENGTH - 1] + "…")


def unsafe_tree(value):
    """A module's arguments with every text marked as bed data (numbers and booleans stay)."""
    if isinstance(value, str):
        return Unsafe(value)
    if isinstance(value, list):
        return [unsafe_tree(v) for v in value]
    if isinstance(value, dict):
        return {k: unsafe_tree(v) for k, v in value.items()}
    return value


def dump(document, *, fast: bool = False) -> str:
    """`fast`: libyaml's emitter where it is built in (files no one lints: see _FastDumper)."""
    dumper = _FastDumper if fast and _FastDumper is not None else _Dumper
    return yaml.dump(document, Dumper=dumper, sort_keys=False, width=120, allow_unicode=True,
                     explicit_start=True)
