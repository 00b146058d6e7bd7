"""The programs a step's bash script calls, for the pre-flight check.

A heuristic read of the script, not a shell parser: the first word of each simple command,
skipping builtins, keywords, `sudo`-style prefixes and variable assignments.  What it
understands, because templates are written that way:

* `apt-get install -y x || dnf install -y x`: either program will do.  A branch that runs no
  program (`|| true`, `|| exit 1`) is error handling, not an alternative;
* `if command -v apt-get ...; then ...; elif command -v dnf ...`: the script picks among the
  programs it probes (`command -v`, `which`, `type`, `hash`) itself, so one of them is enough;
* a single-quoted word is data (a bed value, vendor statements): nothing in it is a command.

A need is a tuple of alternatives, each a tuple of programs that must all be there.
"""
from __future__ import annotations

import re

Need = tuple[tuple[str, ...], ...]

_BUILTINS = frozenset("""
if then else elif fi for while until do done case esac in function select time
echo printf cd test [ [[ true false exit return export local read set unset shift eval
exec source . trap wait kill command type hash alias ulimit umask let declare printf
pushd popd break continue getopts nohup sudo env xargs { } ! ( ) : which""".split())
# words that start a command without being its program
_PREFIXES = frozenset("nohup sudo exec env time ! if then else elif do while until { (".split())
_SINGLE_QUOTED = re.compile(r"'[^']*'")
# arithmetic, `$(( n + 1 ))` and `(( n < 3 ))`: names in it are variables, not programs
_ARITHMETIC = re.compile(r"\$?\(\((?:[^()]|\([^()]*\))*\)\)")
# separators between command lists: ; newline, a background & (not && nor a redirection's >&),
# subshells and command substitutions
_LIST_SEPARATORS = re.compile(r";|(?<![&>|<])&(?![&>])|\(|\)|\$\(|`")
_PIPELINE_SEPARATORS = re.compile(r"&&|\|(?!\|)")
_PROBE = re.compile(r"(?:\bcommand\s+-v|\bwhich|\btype(?:\s+-[a-zA-Z]+)?|\bhash)\s+([A-Za-z0-9_][A-Za-z0-9_.+-]*)")
_PROGRAM = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# a guard library in front of a step that writes to a disk (`topology.methodology.guards`): its
# functions and case labels are no programs; the programs it calls are declared with it
_GUARD = re.compile(r"^# --- Testbed Studio guard \(([a-z-]+)[^\n]*\n.*?^# --- end of guard$", re.S | re.M)


def _guard_needs(m: re.Match) -> str:
    from topology.methodology.guards import GUARD_TOOLS
    return "\n".join(GUARD_TOOLS.get(m.group(1), ()))


def tool_needs(script: str, shell: str) -> list[Need]:
    """What the script needs on its host, each need a choice of alternatives."""
    if shell not in ("bash", "sh"):
        return []
    defined: set[str] = set()

    def guard(m: re.Match) -> str:
        defined.update(re.findall(r"(?m)^([A-Za-z_][A-Za-z0-9_]*)\(\)\s*\{", m.group(0)))
        return _guard_needs(m)
    script = _GUARD.sub(guard, script)
    script = _SINGLE_QUOTED.sub("''", script).replace("\\\n", " ")
    script = _ARITHMETIC.sub("true", script)
    probed = list(dict.fromkeys(_PROBE.findall(script)))
    needs: list[Need] = []
    for line in script.splitlines():
        line = re.sub(r"(^|\s)#.*", "", line)
        for chain in _LIST_SEPARATORS.split(line):
            branches = [tools for branch in chain.split("||") if (tools := _programs(branch))]
            if len(branches) == 1:
                needs += [((tool,),) for tool in branches[0]]
            elif branches:
                needs.append(tuple(branches))
    if probed:
        # the script chooses among the programs it probes: any one of them will do
        needs = [need for need in needs if not any(t in probed for alt in need for t in alt)]
        needs.append(tuple((p,) for p in probed))
    needs = [need for need in needs if not all(t in defined for alt in need for t in alt)]
    unique: dict[Need, None] = dict.fromkeys(needs)
    return list(unique)


def unmet(needs: list[Need], missing: set[str]) -> list[Need]:
    """The needs no alternative of which is fully installed."""
    return [need for need in needs if not any(all(t not in missing for t in alt) for alt in need)]


def describe_unmet(needs: list[Need]) -> str:
    """'not installed: fio; none of apt-get, dnf is installed (a step needs one of them)'."""
    single = [" + ".join(need[0]) for need in needs if len(need) == 1]
    parts = [f"not installed: {', '.join(single)}"] if single else []
    parts += ["none of " + ", ".join(" + ".join(alt) for alt in need) + " is installed (a step needs one of them)"
              for need in needs if len(need) > 1]
    return "; ".join(parts)


def _programs(command_list: str) -> tuple[str, ...]:
    """The programs a pipeline or `&&` chain starts, in order."""
    out: list[str] = []
    for part in _PIPELINE_SEPARATORS.split(command_list):
        words = part.split()
        while words and (words[0] in _PREFIXES or _ASSIGNMENT.match(words[0])):
            words = words[1:]
        if not words:
            continue
        word = words[0]
        if word in _BUILTINS or not _PROGRAM.match(word):
            continue
        out.append(word)
    return tuple(dict.fromkeys(out))
