"""pypdf's layout-mode text of a page from the content stream its plain reading parsed.

A page read both ways (plain text for quotes, layout mode for printed columns) would
have its content stream parsed twice: each of pypdf's readings builds its own
``ContentStream``. ``parsed_once`` pins one parsed stream on the page for both readings,
and ``layout_text`` runs pypdf's layout steps over that stream's operations, with the
defaults of ``PageObject.extract_text(extraction_mode="layout")``. Those steps are pypdf
internals: where they are missing or fail (another pypdf release), the public call runs
instead, so the text is pypdf's layout text either way; the tests compare the two on
real pages.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["layout_text", "parsed_once"]

_CONTENTS = "/Contents"


@contextmanager
def parsed_once(page: Any) -> Iterator[None]:
    """Within the block, both readings of ``page`` share one parsed content stream; the
    page's own ``/Contents`` entry is put back after it."""
    from pypdf.generic import ContentStream, NameObject

    try:
        original = _contents(page)
        pinned = None
        if original is not None:
            pinned = ContentStream(original.get_object(), page.pdf, "bytes")
    except Exception:  # unreadable contents: each reading meets (and reports) it itself
        pinned = None
    if pinned is None:
        yield
        return
    key = NameObject(_CONTENTS)
    page[key] = pinned
    try:
        yield
    finally:
        page[key] = original


def layout_text(page: Any) -> str:
    """``page.extract_text(extraction_mode="layout")``, from the pinned stream if any."""
    from pypdf.generic import ContentStream

    stream = _contents(page)
    if isinstance(stream, ContentStream):
        try:
            return _from_operations(page, stream)
        except Exception:  # pypdf's own call below decides (and raises its error)
            pass
    return str(page.extract_text(extraction_mode="layout"))


def _contents(page: Any) -> Any:
    """The page's ``/Contents`` entry as stored (an indirect reference is not resolved)."""
    return page.raw_get(_CONTENTS) if _CONTENTS in page else None


def _from_operations(page: Any, stream: Any) -> str:
    """The steps of pypdf's ``PageObject._layout_mode_text`` with its defaults."""
    from pypdf._text_extraction import _layout_mode

    fonts = page._layout_mode_fonts()
    groups = _layout_mode.text_show_operations(iter(stream.operations), fonts, True, None)
    if not groups:
        return ""
    lines = _layout_mode.y_coordinate_groups(groups, None)
    width = _layout_mode.fixed_char_width(groups, 1.25)
    return str(_layout_mode.fixed_width_page(lines, width, True, 1))
