"""ansible-playbook's `-e` arguments, kept out of every file a run writes when they may hold a
secret (`-e ansible_become_password=...`).

An inline argument whose variable names look like a secret's (password, token, key, vault ...),
or whose names cannot be read, is *withheld*: ansible-playbook reads it from a file in a
private temporary folder (0700, in memory where /dev/shm is) that is removed when the pass ends
or its driver dies, so the run folder's ansible-runner files (`env/cmdline`, `artifacts/*/command`)
name only that file; run.json keeps the other arguments for a resume and only the names of the
withheld ones, which a resume must be given again.  An `@file` argument is a path and is kept.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import yaml

SECRET_NAME = re.compile(r"pass|secret|token|key|credential|vault|private|auth|community|cert", re.I)
MAX_INLINE = 1 << 20        # an -e argument longer than this is not read for names: withheld


def _names(arg: str) -> list[str] | None:
    """The variables an inline -e argument sets, nested keys included; None when it cannot be read."""
    text = arg.strip()
    if len(text) > MAX_INLINE:
        return None
    if text.startswith(("{", "[")):
        try:
            data = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError, ValueError):
            return None
        names: list[str] = []
        todo = [data]
        while todo:
            item = todo.pop()
            if isinstance(item, dict):
                names += [str(k) for k in item]
                todo += list(item.values())
            elif isinstance(item, list):
                todo += item
        return names if isinstance(data, dict) else None
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    if not words or any("=" not in w or not w.split("=", 1)[0] for w in words):
        return None
    return [w.split("=", 1)[0] for w in words]


def withheld_names(arg: str) -> list[str]:
    """Why an -e argument is withheld: the names that look like secrets (or a description of an
    argument that cannot be read); [] when it may be kept."""
    if arg.startswith("@"):
        return []
    names = _names(arg)
    if names is None:
        return ["an -e argument that is not NAME=VALUE pairs or a mapping"]
    return [n for n in names if SECRET_NAME.search(n)]


def for_resume(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the arguments a run keeps in run.json, the names of those it withholds)."""
    kept, withheld = [], []
    for arg in args:
        names = withheld_names(arg)
        if names:
            withheld += [n for n in names if n not in withheld]
        else:
            kept.append(arg)
    return kept, withheld


def _as_yaml(arg: str) -> str:
    """The argument as an extra-vars file; one that is neither pairs nor a mapping as given (so
    that ansible-playbook, not this program, says what is wrong with it)."""
    if arg.strip().startswith(("{", "[")) or _names(arg) is None:
        return arg
    return yaml.safe_dump(dict(w.split("=", 1) for w in shlex.split(arg)), default_flow_style=False)


class SecretVars:
    """The command-line words for ansible-playbook: withheld arguments as `@file` in a private
    temporary folder, the others as given.  `folder` is None when nothing was withheld."""

    def __init__(self, args: Sequence[str]):
        self.folder: Path | None = None
        self.words: list[str] = []
        for n, arg in enumerate(args):
            if not withheld_names(arg):
                self.words += ["-e", arg]
                continue
            if self.folder is None:
                shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
                self.folder = Path(tempfile.mkdtemp(prefix="testbed-studio-vars-", dir=shm))
            path = self.folder / f"{n}.yml"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(_as_yaml(arg))
            self.words += ["-e", f"@{path}"]

    def remove(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

