"""Whether worker processes can be spawned without re-running the user's script.

``spawn`` workers import the parent's ``__main__`` file (as ``__mp_main__``): code under
``if __name__ == "__main__":`` does not run again, everything else does. So processes are
safe when there is no main file (Jupyter, ``python -c``, a REPL) or when the call comes
from inside that guard; an unguarded script gets threads instead of being run twice.
"""

from __future__ import annotations

import ast
import functools
import sys
import threading
from types import FrameType

__all__ = ["spawn_is_safe"]


def spawn_is_safe() -> bool:
    """True when spawned workers would not re-execute the caller's top-level code."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not path:
        return True
    frame = _main_module_frame(main.__dict__)
    if frame is None:
        return True
    return any(start <= frame.f_lineno <= end for start, end in _guards(path))


def _main_module_frame(namespace: dict[str, object]) -> FrameType | None:
    """The ``<module>`` frame of ``__main__`` on the main thread's stack, if any."""
    frame: FrameType | None = sys._current_frames().get(threading.main_thread().ident or 0)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is namespace:
            return frame
        frame = frame.f_back
    return None


@functools.lru_cache(maxsize=8)
def _guards(path: str) -> tuple[tuple[int, int], ...]:
    """Line ranges of top-level ``if __name__ == "__main__":`` blocks in ``path``."""
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return ()
    return tuple(
        (node.lineno, node.end_lineno or node.lineno)
        for node in tree.body
        if isinstance(node, ast.If) and _is_main_test(node.test)
    )


def _is_main_test(test: ast.expr) -> bool:
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    names = {ast.unparse(test.left), ast.unparse(test.comparators[0])}
    return names == {"__name__", "'__main__'"} and isinstance(test.ops[0], ast.Eq)
