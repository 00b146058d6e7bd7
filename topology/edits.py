"""Reversible edits of a bed: the substance of every undoable command, and `Refused`, the
reason an edit could not be built.

An edit changes the model and can take the change back exactly.  The GUI wraps each
edit in one QUndoCommand (app/document.py); the edits themselves know nothing of Qt,
so the same undo/redo logic is tested without a display.  Edits hold references to the
model objects they change: undo puts back the very same objects, so anything that
refers to them (an id held by a canvas item, a selection) stays valid.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


class Edit:
    text: str = ""

    def apply(self) -> None:
        raise NotImplementedError

    def revert(self) -> None:
        raise NotImplementedError

    def touched(self) -> set[str]:
        """Ids of the components whose drawing or validation this edit affects."""
        return set()

    def plain_fields(self) -> frozenset[str] | None:
        """The names of the fields this edit sets, when all it does is set fields of objects already
        in the bed from one plain value (text, number, flag, nothing) to another: a view can then
        tell from the names alone whether what it draws keeps its shape (which components there
        are, what each is attached to) instead of comparing the whole bed.  None: it may do more."""
        return None


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float))


def _ident(obj: Any) -> str | None:
    return getattr(obj, "id", None) or getattr(obj, "name", None)


@dataclass
class SetField(Edit):
    """Set one attribute of one model object."""
    obj: Any
    attr: str
    new: Any
    text: str = ""
    owner: str = ""               # component id shown as touched (default: the object's own id)
    old: Any = field(default=None, init=False)
    _done: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        if not hasattr(self.obj, self.attr):
            raise AttributeError(f"{type(self.obj).__name__} has no field {self.attr!r}")
        self.old = getattr(self.obj, self.attr)
        self.text = self.text or f"Set {self.attr}"

    def apply(self) -> None:
        setattr(self.obj, self.attr, self.new)

    def revert(self) -> None:
        setattr(self.obj, self.attr, self.old)

    def touched(self) -> set[str]:
        ident = self.owner or _ident(self.obj)
        return {ident} if ident else set()

    def plain_fields(self) -> frozenset[str] | None:
        return frozenset((self.attr,)) if _plain(self.old) and _plain(self.new) else None


@dataclass
class InsertItem(Edit):
    """Insert an object into a list of the model (append when index is None)."""
    container: list
    item: Any
    index: int | None = None
    text: str = ""
    owner: str = ""

    def __post_init__(self) -> None:
        self.text = self.text or f"Add {_ident(self.item) or type(self.item).__name__}"

    def apply(self) -> None:
        if self.index is None:
            self.index = len(self.container)
        self.container.insert(self.index, self.item)

    def revert(self) -> None:
        del self.container[self._position()]

    def _position(self) -> int:
        # where it was put, unless later edits moved it: a compound of n inserts undoes in O(n)
        if self.index is not None and 0 <= self.index < len(self.container) \
                and self.container[self.index] is self.item:
            return self.index
        for i, x in enumerate(self.container):
            if x is self.item:
                return i
        raise ValueError("the inserted item is no longer in its list")

    def touched(self) -> set[str]:
        return {x for x in (self.owner, _ident(self.item)) if x}


@dataclass
class RemoveItem(Edit):
    """Remove an object from a list of the model; undo puts it back at the same place."""
    container: list
    item: Any
    text: str = ""
    owner: str = ""
    index: int = field(default=-1, init=False)

    def __post_init__(self) -> None:
        self.text = self.text or f"Remove {_ident(self.item) or type(self.item).__name__}"

    def apply(self) -> None:
        for i, x in enumerate(self.container):
            if x is self.item:
                self.index = i
                del self.container[i]
                return
        raise ValueError("the item to remove is not in its list")

    def revert(self) -> None:
        self.container.insert(self.index, self.item)

    def touched(self) -> set[str]:
        return {x for x in (self.owner, _ident(self.item)) if x}


@dataclass
class Compound(Edit):
    """Several edits as one step (a move of 100 items, a delete with its links)."""
    edits: list[Edit]
    text: str = ""

    def apply(self) -> None:
        done = []
        try:
            for e in self.edits:
                e.apply()
                done.append(e)
        except Exception:
            for e in reversed(done):
                e.revert()
            raise

    def revert(self) -> None:
        for e in reversed(self.edits):
            e.revert()

    def touched(self) -> set[str]:
        out: set[str] = set()
        for e in self.edits:
            out |= e.touched()
        return out

    def plain_fields(self) -> frozenset[str] | None:
        out: frozenset[str] = frozenset()
        for e in self.edits:
            names = e.plain_fields()
            if names is None:
                return None
            out |= names
        return out


class Labelled(Edit):
    """An edit under the name the undo menu shows, touching the components the views must redraw."""

    def __init__(self, edit: Edit, text: str, touched: Iterable[str]):
        self.edit = edit
        self.text = text
        self._touched = set(touched)

    def apply(self) -> None:
        self.edit.apply()

    def revert(self) -> None:
        self.edit.revert()

    def touched(self) -> set[str]:
        return set(self._touched)

    def plain_fields(self) -> frozenset[str] | None:
        return self.edit.plain_fields()


class Touch(Edit):
    """Changes nothing; names components that must redraw (the far end of a new link)."""

    def __init__(self, ids: Iterable[str]):
        self.ids = set(ids)

    def apply(self) -> None:
        pass

    def revert(self) -> None:
        pass

    def touched(self) -> set[str]:
        return set(self.ids)


class Refused(ValueError):
    """The user asked for something the bed cannot take; the message says why, in plain words."""
