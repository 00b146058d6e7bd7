"""Runs the decision part of a PowerShell guard without PowerShell.

There is no PowerShell on this machine, so the guards in resources/templates/guards/*.ps1 are
written in a small subset of the language (functions, if/elseif/else, foreach, hashtables,
arrays, -f, -match, -join, string methods, a few read-only cmdlets) and this module executes
that subset from the tree tree-sitter-powershell parses.  Anything outside the subset raises
`Unsupported`, so a guard cannot silently drift into constructs whose semantics are not modelled
here.  The semantics follow PowerShell's where the guards depend on them: comparison operators
are case-insensitive and convert the right operand to the left operand's type; an array on the
left of a comparison filters; a function's output is every value its statements write,
enumerated, and a variable assigned from it holds $null, the single value, or an array;
variables are looked up through the callers' scopes (dynamic scoping); `throw` stops the run.

Language version: with `version=2` (Windows Server 2008 R2's PowerShell 2.0) the constructs of
PowerShell 3.0 and later that the guards could be tempted to use raise `Unsupported`: member
enumeration over an array, `-in`/`-notin`, `[pscustomobject]`, `[ordered]`, `::new()`,
`.Where()`/`.ForEach()`, ConvertFrom-Json and the CIM cmdlets.
"""
from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import tree_sitter_powershell as tsp
from tree_sitter import Language, Node, Parser

_PARSER = Parser(Language(tsp.language()))

# wrapper rules of the grammar: a node of these types with one named child and nothing else is that child
_WRAPPERS = {"pipeline", "pipeline_chain", "logical_expression", "bitwise_expression", "comparison_expression",
             "additive_expression", "multiplicative_expression", "format_expression", "range_expression",
             "array_literal_expression", "unary_expression", "left_assignment_expression", "member_name",
             "statement_list", "script_block_body", "argument_expression", "logical_argument_expression",
             "bitwise_argument_expression", "comparison_argument_expression", "additive_argument_expression",
             "multiplicative_argument_expression", "format_argument_expression", "range_argument_expression",
             "string_literal", "integer_literal", "type_spec", "type_name", "assignement_operator"}
_PS3_WORDS = re.compile(r"\[pscustomobject\]|\[ordered\]|::new\(|\.Where\(|\.ForEach\(|ConvertFrom-Json|"
                        r"Get-CimInstance|-in\b|-notin\b", re.I)


class Unsupported(Exception):
    """A construct outside the subset (or outside the language version) the guards may use."""


class PsThrow(Exception):
    """A `throw` in the script: the guard refused."""


class _Return(Exception):
    def __init__(self, values: list):
        self.values = values


class PsHash(dict):
    """A hashtable or an object from JSON: keys compare case-insensitively, as in PowerShell."""

    def __init__(self, items=()):
        super().__init__()
        for k, v in (items.items() if isinstance(items, dict) else items):
            self[k] = v

    def _key(self, k):
        for have in self.keys():
            if isinstance(have, str) and isinstance(k, str) and have.lower() == k.lower():
                return have
        return k

    def get_ci(self, k):
        return dict.get(self, self._key(k))

    def set_ci(self, k, v):
        dict.__setitem__(self, self._key(k), v)


def from_json(value: Any) -> Any:
    """JSON (ConvertTo-Json output) as the objects PowerShell would hold."""
    if isinstance(value, dict):
        return PsHash((k, from_json(v)) for k, v in value.items())
    if isinstance(value, list):
        return [from_json(v) for v in value]
    return value


def to_string(v: Any) -> str:
    """PowerShell's string conversion (string expansion, -f, -join)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, list):
        return " ".join(to_string(x) for x in v)
    if isinstance(v, PsHash):
        return "System.Collections.Hashtable"
    return str(v)


def truthy(v: Any) -> bool:
    if isinstance(v, list):
        return truthy(v[0]) if len(v) == 1 else len(v) > 0
    if isinstance(v, str):
        return v != ""
    return bool(v) if v is not None else False


def _number(v: Any) -> int | float | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        t = v.strip()
        try:
            return int(t, 16) if t.lower().startswith("0x") else int(t)
        except ValueError:
            try:
                return float(t)
            except ValueError:
                return None
    if v is None:
        return 0
    return None


def _unwrap(node: Node) -> Node:
    while node.type in _WRAPPERS and node.named_child_count == 1 and node.child_count == 1:
        node = node.named_children[0]
    return node


class Interpreter:
    def __init__(self, commands: dict[str, Callable[..., Any]] | None = None, version: int = 5):
        self.commands = {k.lower(): v for k, v in (commands or {}).items()}
        self.version = version
        self.functions: dict[str, Node] = {}
        self.scopes: list[dict[str, Any]] = [{}]
        self.calls: list[str] = []     # every command invoked, in order
        self.src = b""

    # ------------------------------------------------------------------ entry points
    def run(self, source: str) -> list:
        """Executes `source` (function definitions and statements) and returns what it wrote."""
        if self.version < 3 and (m := _PS3_WORDS.search(source)):
            raise Unsupported(f"PowerShell 3.0 or later: {m.group(0)!r}")
        self.src = source.encode("utf-8")
        tree = _PARSER.parse(self.src)
        if tree.root_node.has_error:
            raise Unsupported("the script does not parse")
        return self._block(tree.root_node)

    def call(self, name: str, *args: Any) -> list:
        """Calls a function the script defined, with positional arguments; returns its output."""
        return self._invoke(name, list(args), {})

    def get(self, name: str) -> Any:
        return self._lookup(name)

    def set(self, name: str, value: Any) -> None:
        self.scopes[0][name.lower()] = value

    # ------------------------------------------------------------------ helpers
    def _text(self, n: Node) -> str:
        return self.src[n.start_byte:n.end_byte].decode("utf-8")

    def _lookup(self, name: str) -> Any:
        key = name.lower()
        if key == "null":
            return None
        if key in ("true", "false"):
            return key == "true"
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    def _assign_var(self, name: str, value: Any) -> None:
        self.scopes[-1][name.lower()] = value

    # ------------------------------------------------------------------ statements
    def _block(self, node: Node) -> list:
        out: list = []
        for child in node.named_children:
            out.extend(self._statement(child))
        return out

    def _statement(self, node: Node) -> list:
        t = node.type
        if t in ("statement_list", "script_block", "script_block_body", "program"):
            return self._block(node)
        if t in ("comment", "empty_statement"):
            return []
        if t == "function_statement":
            name = self._text(node.child_by_field_name("name") or
                              next(c for c in node.children if c.type == "function_name"))
            self.functions[name.lower()] = node
            return []
        if t == "if_statement":
            return self._if(node)
        if t == "foreach_statement":
            return self._foreach(node)
        if t == "flow_control_statement":
            return self._flow(node)
        if t == "statement_block":
            return self._block(node)
        node = _unwrap(node)
        if node.type == "assignment_expression":
            self._assignment(node)
            return []
        if node.type == "command":
            return self._command(node)
        if node.type == "pipeline" and node.child_count > 1:
            raise Unsupported(f"pipeline: {self._text(node)[:60]}")
        return self._emit(self._expr(node))

    @staticmethod
    def _emit(value: Any) -> list:
        return list(value) if isinstance(value, list) else [value]

    def _if(self, node: Node) -> list:
        kids = node.named_children
        cond, body = kids[0], kids[1]
        if truthy(self._value(cond)):
            return self._block(body)
        clauses = [c for k in kids[2:] for c in (k.named_children if k.type == "elseif_clauses" else [k])]
        for clause in clauses:
            if clause.type == "elseif_clause":
                c = clause.named_children
                if truthy(self._value(c[0])):
                    return self._block(c[1])
            elif clause.type == "else_clause":
                return self._block(clause.named_children[0])
            else:
                raise Unsupported(clause.type)
        return []

    def _foreach(self, node: Node) -> list:
        kids = node.named_children
        var, coll, body = kids[0], kids[1], kids[-1]
        items = self._value(coll)
        items = items if isinstance(items, list) else ([] if items is None else [items])
        out: list = []
        for item in items:
            self._assign_var(self._text(var)[1:], item)
            try:
                out.extend(self._block(body))
            except _Break:
                break
        return out

    def _flow(self, node: Node) -> list:
        word = node.children[0].type
        arg = node.named_children[0] if node.named_children else None
        if word == "return":
            raise _Return(self._emit(self._expr(_unwrap(arg))) if arg is not None else [])
        if word == "throw":
            raise PsThrow(to_string(self._value(arg)) if arg is not None else "ScriptHalted")
        if word == "break":
            raise _Break()
        raise Unsupported(word)

    def _assignment(self, node: Node) -> None:
        target = _unwrap(node.named_children[0])
        op = self._text(next(c for c in node.children if c.type == "assignement_operator"))
        value = self._value(node.named_children[-1])
        if op == "+=":
            value = self._add(self._expr(target), value)
        elif op != "=":
            raise Unsupported(op)
        if target.type == "variable":
            self._assign_var(self._text(target)[1:], value)
        elif target.type == "member_access":
            obj = self._expr(target.named_children[0])
            if not isinstance(obj, PsHash):
                raise Unsupported("a member assigned on something that is not a hashtable")
            obj.set_ci(self._text(target.named_children[-1]), value)
        else:
            raise Unsupported(f"assignment to {target.type}")

    def _value(self, node: Node) -> Any:
        """A pipeline or expression used as a value (an `if` condition, the right of `=`)."""
        node = _unwrap(node)
        if node.type == "command":
            return self._collect(self._command(node))
        return self._expr(node)

    @staticmethod
    def _collect(out: list) -> Any:
        return None if not out else out[0] if len(out) == 1 else out

    # ------------------------------------------------------------------ commands
    def _command(self, node: Node) -> list:
        name = self._text(next(c for c in node.children if c.type == "command_name"))
        positional: list = []
        named: dict[str, Any] = {}
        elems = next((c for c in node.children if c.type == "command_elements"), None)
        pending: str | None = None
        for e in (elems.named_children if elems is not None else []):
            if e.type == "command_argument_sep":
                continue
            if e.type == "command_parameter":
                if pending is not None:
                    named[pending] = True
                pending = self._text(e)[1:].rstrip(":").lower()
                continue
            value = self._text(e) if e.type == "generic_token" else self._expr(_unwrap(e))
            if pending is not None:
                named[pending] = value
                pending = None
            else:
                positional.append(value)
        if pending is not None:
            named[pending] = True
        return self._invoke(name, positional, named)

    def _invoke(self, name: str, positional: list, named: dict[str, Any]) -> list:
        self.calls.append(name)
        fn = self.functions.get(name.lower())
        if fn is not None:
            return self._call_function(fn, positional, named)
        builtin = self.commands.get(name.lower())
        if builtin is None:
            raise Unsupported(f"command {name!r} (not a function of the script and not provided)")
        names = {n.lower(): n for n in inspect.signature(builtin).parameters}
        out = builtin(*positional, **{names.get(k, k): v for k, v in named.items()})
        return [] if out is None else self._emit(out)

    def _call_function(self, fn: Node, positional: list, named: dict[str, Any]) -> list:
        params: list[tuple[str, str]] = []
        decl = next((c for c in fn.children if c.type == "function_parameter_declaration"), None)
        if decl is not None:
            plist = next((c for c in decl.named_children if c.type == "parameter_list"), None)
            for p in (plist.named_children if plist is not None else []):
                if p.type != "script_parameter":
                    continue
                var = next(c for c in p.named_children if c.type == "variable")
                cast = self._text(p).split("]")[0].lstrip("[").lower() if self._text(p).startswith("[") else ""
                params.append((self._text(var)[1:], cast))
        body = next((c for c in fn.children if c.type == "script_block"), None)
        if body is None:
            return []
        if any(c.type == "param_block" for c in body.named_children):
            raise Unsupported("param() blocks: declare parameters in the function's parentheses")
        scope: dict[str, Any] = {}
        for i, (pname, cast) in enumerate(params):
            v = named.pop(pname.lower(), positional[i] if i < len(positional) else None)
            scope[pname.lower()] = self._cast(cast, v) if cast else v
        if named:
            raise Unsupported(f"unknown parameters {sorted(named)}")
        self.scopes.append(scope)
        try:
            out = self._block(body)
        except _Return as r:
            out = r.values
        finally:
            self.scopes.pop()
        return out

    # ------------------------------------------------------------------ expressions
    def _expr(self, node: Node) -> Any:
        node = _unwrap(node)
        t = node.type
        if t == "variable":
            return self._lookup(self._text(node)[1:])
        if t in ("decimal_integer_literal", "hexadecimal_integer_literal"):
            return int(self._text(node), 0)
        if t == "real_literal":
            return float(self._text(node))
        if t == "verbatim_string_characters":
            return self._text(node)[1:-1].replace("''", "'")
        if t == "expandable_string_literal":
            return self._expand(node)
        if t == "parenthesized_expression":
            return self._value(node.named_children[0])
        if t == "sub_expression":
            return self._collect(self._block(node)) if node.named_children else None
        if t == "array_expression":
            return self._block(node) if node.named_children else []
        if t == "array_literal_expression":
            return [self._expr(c) for c in node.named_children]
        if t == "hash_literal_expression":
            h = PsHash()
            body = next((c for c in node.named_children if c.type == "hash_literal_body"), None)
            for entry in (body.named_children if body is not None else []):
                key, val = entry.named_children[0], entry.named_children[-1]
                h.set_ci(self._text(key).strip("'\""), self._value(val))
            return h
        if t == "member_access":
            return self._member(self._expr(node.named_children[0]), self._text(node.named_children[-1]))
        if t == "element_access":
            return self._index(self._expr(node.named_children[0]), self._expr(node.named_children[1]))
        if t == "invokation_expression":
            return self._method(node)
        if t == "cast_expression":
            typ = self._text(node.named_children[0]).strip("[]").lower()
            return self._cast(typ, self._expr(node.named_children[1]))
        if t == "expression_with_unary_operator":
            if node.child_count == 1:
                return self._expr(node.children[0])
            op = node.children[0].type.lower()
            v = self._expr(node.named_children[-1])
            if op in ("-not", "!"):
                return not truthy(v)
            if op == "-":
                return -(_number(v) or 0)
            raise Unsupported(op)
        if t == "logical_expression":
            left = self._expr(node.named_children[0])
            op = node.children[1].type.lower()
            if op == "-and":
                return truthy(left) and truthy(self._expr(node.named_children[1]))
            if op == "-or":
                return truthy(left) or truthy(self._expr(node.named_children[1]))
            raise Unsupported(op)
        if t == "comparison_expression":
            op = self._text(next(c for c in node.children if c.type == "comparison_operator")).lower()
            return self._compare(op, self._expr(node.named_children[0]), self._expr(node.named_children[-1]))
        if t == "format_expression":
            fmt = to_string(self._expr(node.named_children[0]))
            args = self._expr(node.named_children[-1])
            return self._format(fmt, args if isinstance(args, list) else [args])
        if t == "additive_expression":
            left, right = self._expr(node.named_children[0]), self._expr(node.named_children[1])
            if node.children[1].type == "+":
                return self._add(left, right)
            return (_number(left) or 0) - (_number(right) or 0)
        if t == "multiplicative_expression":
            left, right = _number(self._expr(node.named_children[0])), _number(self._expr(node.named_children[1]))
            op = node.children[1].type
            if op == "*":
                return left * right
            if op == "/":
                q = left / right
                return int(q) if q == int(q) else q
            raise Unsupported(op)
        if t == "command":
            return self._collect(self._command(node))
        raise Unsupported(f"{t}: {self._text(node)[:60]}")

    def _expand(self, node: Node) -> str:
        raw = self.src[node.start_byte + 1:node.end_byte - 1]
        base = node.start_byte + 1
        out, pos = [], 0
        parts = [c for c in node.named_children if c.type in ("variable", "sub_expression")]
        for part in parts:
            out.append(self._unescape(raw[pos:part.start_byte - base].decode("utf-8")))
            out.append(to_string(self._expr(part)))
            pos = part.end_byte - base
        out.append(self._unescape(raw[pos:].decode("utf-8")))
        return "".join(out)

    @staticmethod
    def _unescape(text: str) -> str:
        text = text.replace('""', '"')
        escapes = {"n": "\n", "r": "\r", "t": "\t", "0": "\0", "`": "`", '"': '"', "$": "$", "'": "'"}
        return re.sub(r"`(.)", lambda m: escapes.get(m.group(1), m.group(1)), text)

    def _member(self, obj: Any, name: str) -> Any:
        low = name.lower()
        if isinstance(obj, list):
            if low in ("count", "length"):
                return len(obj)
            if self.version < 3:
                raise Unsupported(f"member enumeration .{name} over an array needs PowerShell 3.0")
            return [self._member(x, name) for x in obj]
        if isinstance(obj, PsHash):
            if low == "count" and obj.get_ci("count") is None:
                return len(obj)
            return obj.get_ci(name)
        if isinstance(obj, str) and low == "length":
            return len(obj)
        if obj is None:
            return None
        if low == "count":
            return 1
        raise Unsupported(f"member .{name} of {type(obj).__name__}")

    @staticmethod
    def _index(obj: Any, key: Any) -> Any:
        if isinstance(obj, PsHash):
            return obj.get_ci(key)
        if isinstance(obj, list):
            i = int(_number(key) or 0)
            return obj[i] if -len(obj) <= i < len(obj) else None
        if isinstance(obj, str):
            i = int(_number(key) or 0)
            return obj[i] if -len(obj) <= i < len(obj) else None
        if obj is None:
            return None
        raise Unsupported(f"index into {type(obj).__name__}")

    def _method(self, node: Node) -> Any:
        target = self._expr(node.named_children[0])
        name = self._text(next(c for c in node.named_children[1:] if c.type in ("member_name", "simple_name")))
        arglist = next(c for c in node.children if c.type == "argument_list")
        args: list = []
        for a in arglist.named_children:
            a = _unwrap(a)
            if a.type == "argument_expression_list":
                args.extend(self._expr(x) for x in a.named_children)
            else:
                args.append(self._expr(a))
        if not isinstance(target, str):
            raise Unsupported(f"method .{name}() on {type(target).__name__}")
        low = name.lower()
        if low == "trim":
            return target.strip("".join(to_string(a) for a in args)) if args else target.strip()
        if low == "trimend":
            return target.rstrip("".join(to_string(a) for a in args)) if args else target.rstrip()
        if low == "tolowerinvariant" or low == "tolower":
            return target.lower()
        if low == "toupperinvariant" or low == "toupper":
            return target.upper()
        if low == "startswith":
            return target.startswith(to_string(args[0]))
        if low == "substring":
            start = int(_number(args[0]) or 0)
            if start > len(target):
                raise PsThrow("Exception calling \"Substring\": startIndex cannot be larger than length of string.")
            return target[start:start + int(_number(args[1]))] if len(args) > 1 else target[start:]
        if low == "split":
            return target.split(to_string(args[0]))
        if low == "replace":
            return target.replace(to_string(args[0]), to_string(args[1]))
        raise Unsupported(f"string method .{name}()")

    @staticmethod
    def _cast(typ: str, v: Any) -> Any:
        if typ in ("int", "int32", "int64", "long", "uint64"):
            n = _number(v)
            if n is None:
                raise PsThrow(f"Cannot convert value \"{to_string(v)}\" to type \"{typ}\".")
            return int(round(n))
        if typ == "string":
            return to_string(v)
        if typ == "bool":
            return truthy(v)
        raise Unsupported(f"cast [{typ}]")

    @staticmethod
    def _add(left: Any, right: Any) -> Any:
        if isinstance(left, list):
            return left + (right if isinstance(right, list) else [right])
        if left is None:
            return right
        if isinstance(left, str):
            return left + to_string(right)
        if isinstance(left, PsHash):
            raise Unsupported("hashtable addition")
        n = _number(right)
        if n is None:
            raise PsThrow(f"Cannot convert value \"{to_string(right)}\" to a number.")
        return left + n

    def _compare(self, op: str, left: Any, right: Any) -> Any:
        if op == "-join":
            items = left if isinstance(left, list) else ([] if left is None else [left])
            return to_string(right).join(to_string(x) for x in items)
        if op in ("-in", "-notin") and self.version < 3:
            raise Unsupported(f"{op} needs PowerShell 3.0")
        if isinstance(left, list):
            if op in ("-contains", "-notcontains"):
                has = any(self._compare("-eq", x, right) for x in left)
                return has if op == "-contains" else not has
            return [x for x in left if truthy(self._compare(op, x, right))]
        if op in ("-match", "-notmatch"):
            m = re.search(to_string(right), to_string(left), re.I)
            if m and op == "-match":
                self.scopes[-1]["matches"] = PsHash([(0, m.group(0))] + [(i, g) for i, g in enumerate(m.groups(), 1)
                                                                          if g is not None])
            return bool(m) if op == "-match" else not m
        if op in ("-like", "-notlike"):
            pat = "^" + re.escape(to_string(right)).replace(r"\*", ".*").replace(r"\?", ".") + "$"
            hit = re.match(pat, to_string(left), re.I) is not None
            return hit if op == "-like" else not hit
        if op in ("-eq", "-ne"):
            same = self._equal(left, right)
            return same if op == "-eq" else not same
        if op in ("-ceq", "-cne"):      # case-sensitive: a string equals only the same characters
            same = to_string(left) == to_string(right) if isinstance(left, str) else self._equal(left, right)
            return same if op == "-ceq" else not same
        if op in ("-lt", "-le", "-gt", "-ge"):
            if left is None or right is None:
                raise Unsupported(f"{op} with $null: state the value (a guard compares only what it collected)")
            if isinstance(left, str):
                a, b = left.lower(), to_string(right).lower()
            else:
                a, b = _number(left), _number(right)
                if b is None:
                    raise PsThrow(f"Cannot compare \"{to_string(left)}\" to \"{to_string(right)}\".")
            return {"-lt": a < b, "-le": a <= b, "-gt": a > b, "-ge": a >= b}[op]
        raise Unsupported(op)

    @staticmethod
    def _equal(left: Any, right: Any) -> bool:
        if left is None:
            return right is None
        if isinstance(left, str):
            return right is not None and left.lower() == to_string(right).lower()
        if isinstance(left, bool):
            return left == truthy(right)
        if isinstance(left, (int, float)):
            n = _number(right) if right is not None else None
            return n is not None and left == n
        return left is right

    @staticmethod
    def _format(fmt: str, args: list) -> str:
        def one(m: re.Match) -> str:
            if m.group(0) in ("{{", "}}"):
                return m.group(0)[0]
            i = int(m.group(1))
            if m.group(2):
                raise Unsupported(f"format specifier {m.group(0)}")
            if i >= len(args):
                raise PsThrow("Index (zero based) must be greater than or equal to zero and less than the size of "
                              "the argument list.")
            return to_string(args[i])
        return re.sub(r"\{\{|\}\}|\{(\d+)(,-?\d+|:[^}]*)?\}", one, fmt)


class _Break(Exception):
    pass
