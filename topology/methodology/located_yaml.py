"""Template files read as YAML that remembers lines: every mapping knows the line of each of its keys,
so a problem found long after parsing still names the line a template author must fix."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from topology.methodology.template_syntax import template_error


class LocatedDict(dict):
    line: int = 0
    key_line: dict
    key_style: dict


class LocatedList(list):
    line: int = 0


def read_located_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise template_error(path, None, f"cannot read the template: {exc}") from None
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        # an unclosed bracket or quote is found only where the file ends: name the line it opened on
        mark = exc.context_mark or exc.problem_mark
        where = ""
        if exc.context_mark and exc.problem_mark and exc.problem_mark.line != exc.context_mark.line:
            where = f" (noticed on line {exc.problem_mark.line + 1})"
        what = f"{exc.context}, {exc.problem}" if exc.context else f"{exc.problem or exc}"
        raise template_error(path, mark.line + 1 if mark else None, f"not valid YAML: {what}{where}") from None
    except yaml.YAMLError as exc:
        raise template_error(path, None, f"not valid YAML: {exc}") from None
    if root is None:
        raise template_error(path, 1, "the template is empty", "a template has `section:` and `steps:`")

    def conv(node: yaml.Node) -> Any:
        if isinstance(node, yaml.MappingNode):
            d = LocatedDict()
            d.line = node.start_mark.line + 1
            d.key_line, d.key_style = {}, {}
            for k, v in node.value:
                if not isinstance(k, yaml.ScalarNode):
                    raise template_error(path, k.start_mark.line + 1, "a key must be plain text")
                key = k.value
                if key in d:
                    raise template_error(path, k.start_mark.line + 1, f"key {key!r} appears twice")
                d[key] = conv(v)
                # a block scalar's text starts on the line after its indicator
                d.key_line[key] = v.start_mark.line + 1 + (1 if getattr(v, "style", None) in ("|", ">") else 0)
                d.key_style[key] = getattr(v, "style", None)
            return d
        if isinstance(node, yaml.SequenceNode):
            lst = LocatedList(conv(x) for x in node.value)
            lst.line = node.start_mark.line + 1
            return lst
        assert isinstance(node, yaml.ScalarNode)  # composing yields mappings, sequences and scalars only
        value = node.value
        if node.tag.endswith(":bool") and node.style is None:
            return {"true": True, "false": False}.get(value.lower(), value)
        if node.tag.endswith(":int") and node.style is None:
            try:
                return int(value)
            except ValueError:
                return value
        return value
    return conv(root)

