"""An HTML appendix kept on disk all or nothing: written beside its target, read back and parsed
(html.parser) before it takes the target's name, never written through a symlink.

A browser shows whatever it is given, so a page cut short (a full disk, a crash mid-write) or
one whose elements do not close would be printed from without anyone noticing: the file is
declared written only once it has been read back whole from disk and its elements balance.
"""
from __future__ import annotations

import errno
import os
import tempfile
from html.parser import HTMLParser
from pathlib import Path

# elements that never have an end tag, and those whose end tag HTML lets a writer leave out
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_OPTIONAL_END = {"p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option", "colgroup"}


class _Balance(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, int]] = []
        self.problem: str | None = None
        self.closed_html = False

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag not in _VOID:
            self.open.append((tag, self.getpos()[0]))

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or self.problem:
            return
        while self.open and self.open[-1][0] != tag and self.open[-1][0] in _OPTIONAL_END:
            self.open.pop()
        if not self.open or self.open[-1][0] != tag:
            expected = f"</{self.open[-1][0]}> for the <{self.open[-1][0]}> of line {self.open[-1][1]}" \
                if self.open else "no end tag"
            self.problem = f"line {self.getpos()[0]}: </{tag}> where {expected} was due"
            return
        self.open.pop()
        if tag == "html":
            self.closed_html = True


def html_problem(text: str) -> str | None:
    """What keeps `text` from being a whole HTML page, with its line; None when it is one."""
    parser = _Balance()
    parser.feed(text)
    parser.close()
    if parser.problem:
        return parser.problem
    if not parser.closed_html:
        left = ", ".join(f"<{t}> of line {n}" for t, n in parser.open[-3:]) or "no <html>"
        return f"the page ends before </html> ({left} not closed)"
    return None


def write_html(target: str | os.PathLike, text: str) -> None:
    """Write the page to `target` all or nothing.  OSError, with nothing written, when `target` is
    a symlink or the page read back from disk is not a whole page."""
    target = Path(target)
    if os.path.islink(target):
        raise OSError(errno.ELOOP, f"{target} is a symbolic link: an export is not written through one "
                                   "(remove it or choose another name)")
    payload = text.encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        back = Path(tmp).read_bytes()
        if back != payload:
            raise OSError(errno.EIO, f"{target}: the page read back is not the page written "
                                     f"({len(back):,} of {len(payload):,} bytes); nothing was written")
        problem = html_problem(back.decode("utf-8"))
        if problem is not None:
            raise OSError(errno.EINVAL, f"{target}: the page would not be whole HTML ({problem}); nothing was written")
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
