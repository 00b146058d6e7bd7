"""Shell quoting of bed values: a name never becomes code in any shell a methodology command runs in."""
from __future__ import annotations

import os
import shlex
import subprocess

import pytest

from topology import quoting

HOSTILE = [
    "x; rm -rf /",
    "$(reboot)",
    "`reboot`",
    "a'b",
    "'",
    "''",
    'say "hi"',
    "line one\nline two",
    "tab\there",
    "${IFS}$HOME",
    "$env:PATH",
    "%PATH%",
    "-rf",
    "* ? [a-z]",
    "~root",
    "a b  c",
    "",
    "\\",
    "back\\slash\\",
    "!history",
    "x && echo pwned > canary_and",
    "$(echo pwned > canary_subst)",
    "`echo pwned > canary_tick`",
    "'; echo pwned > canary_quote; '",
    "\u2019; Stop-Computer; \u2018",          # typographic quotes end a PowerShell string like '
    "\u201b\u201a'\u2018\u2019",
    "unicode: Zürich – 東京",
    "\x01\x7f",
]


# ------------------------------------------------------------------ POSIX shells

def _run_bash(script: str, cwd: str, empty_path: str) -> subprocess.CompletedProcess:
    # PATH points at an empty directory: only builtins run, so a quoting mistake cannot reach
    # rm, reboot or anything else; the canaries below are written with builtins (echo, >).
    return subprocess.run(["/bin/bash", "-c", script], cwd=cwd, env={"PATH": empty_path, "LC_ALL": "C.UTF-8"},
                          capture_output=True, timeout=20)


@pytest.mark.parametrize("value", HOSTILE)
def test_bash_quoted_value_prints_literally_and_runs_nothing(value, tmp_path):
    empty = tmp_path / "empty-path"
    empty.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    quoted = quoting.bash(value)
    proc = _run_bash("printf %s " + quoted, str(work), str(empty))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode("utf-8", "surrogateescape") == value
    assert list(work.iterdir()) == [], "the quoted value executed something"


def test_bash_quoted_value_is_one_word_even_next_to_text(tmp_path):
    empty = tmp_path / "e"
    empty.mkdir()
    value = "a b; echo pwned > canary"
    script = "printf '[%s]' --name=" + quoting.bash(value) + " " + quoting.bash(value) + ".json"
    proc = _run_bash(script, str(tmp_path), str(empty))
    assert proc.stdout.decode() == f"[--name={value}][{value}.json]"
    assert not (tmp_path / "canary").exists()


def test_bash_list_gives_one_word_per_item():
    items = ["a b", "$(x)", "c'd"]
    assert shlex.split(quoting.quote_list("bash", items)) == items


# ------------------------------------------------------------------ PowerShell
#
# There is no pwsh on this machine, so PowerShell quoting is checked at the protocol level,
# against the tokenizer rules of the PowerShell language specification (2.3.5.2, verbatim string
# literals): a verbatim string starts and ends with a single-quote-character, which is any of
# U+0027, U+2018, U+2019, U+201A, U+201B; two single-quote-characters in a row stand for one;
# every other character, including $, backtick, ; and newlines, is literal.

PS_QUOTES = "'\u2018\u2019\u201a\u201b"


def parse_verbatim(text: str, start: int = 0) -> tuple[str, int]:
    """Read the verbatim string that starts at text[start]; return (value, index after it)."""
    assert text[start] in PS_QUOTES, "a verbatim string starts with a single-quote-character"
    out = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch in PS_QUOTES:
            if i + 1 < len(text) and text[i + 1] in PS_QUOTES:
                out.append(ch)
                i += 2
                continue
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    raise AssertionError("the verbatim string is not closed")


@pytest.mark.parametrize("value", HOSTILE)
def test_powershell_quoting_is_one_verbatim_string_with_the_value(value):
    quoted = quoting.powershell(value)
    decoded, end = parse_verbatim(quoted)
    assert end == len(quoted), f"the string ends early, leaving {quoted[end:]!r} as code"
    assert decoded == value


def test_powershell_never_leaves_an_unescaped_single_quote():
    for value in HOSTILE:
        body = quoting.powershell(value)[1:-1]
        runs = [len(r) for r in __import__("re").findall(f"[{PS_QUOTES}]+", body)]
        assert all(n % 2 == 0 for n in runs), (value, body)


def test_naive_powershell_quoting_would_fail_this_check():
    """The check above can fail: doubling only U+0027 lets a typographic quote end the string."""
    value = "\u2019; Stop-Computer; \u2018"
    naive = "'" + value.replace("'", "''") + "'"
    _, end = parse_verbatim(naive)
    assert end < len(naive)


def test_powershell_list_is_one_array_argument():
    quoted = quoting.quote_list("powershell", ["a", "b'c"])
    first, end = parse_verbatim(quoted)
    assert quoted[end] == ","
    second, end2 = parse_verbatim(quoted, end + 1)
    assert (first, second, end2) == ("a", "b'c", len(quoted))


# ------------------------------------------------------------------ vendor CLIs

def parse_c_string(text: str) -> tuple[str, int]:
    assert text[0] == '"'
    out, i = [], 1
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            out.append(text[i + 1])
            i += 2
            continue
        if ch == '"':
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    raise AssertionError("not closed")


@pytest.mark.parametrize("value", HOSTILE)
def test_vendor_cli_quoting_is_one_string(value):
    quoted = quoting.vendor(value)
    decoded, end = parse_c_string(quoted)
    assert end == len(quoted)
    assert decoded == value.replace("\n", " ")
    assert "\n" not in quoted  # a line break would end the statement


def test_nul_cannot_be_quoted():
    for shell in quoting.SHELLS:
        with pytest.raises(ValueError):
            quoting.quote(shell, "a\x00b")


def test_unknown_shell_is_refused():
    with pytest.raises(ValueError, match="unknown shell"):
        quoting.quote("cmd", "x")


def test_bash_is_really_there():
    assert os.path.exists("/bin/bash")


def test_a_token_built_by_code_is_one_bash_word_and_bare_only_in_vendor_statements():
    """Tokens (`physicalDisks=(0,1 0,2)`, IP addresses) are bare in vendor statements, where the
    vendor language needs them so; a shell still gets exactly one word."""
    from topology.methodology import Val
    token = Val("(0,1 0,2)", kind="token")
    assert shlex.split(token.shell_text("bash")) == ["(0,1 0,2)"]
    assert token.shell_text("vendor-cli") == "(0,1 0,2)"
    assert token.shell_text("powershell") == "'(0,1 0,2)'"
