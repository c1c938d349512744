"""OCR: read the text of page images (scanned PDF pages, PNG/JPEG/TIFF files).

Two offline engines whose models install from a registry, chosen by ``OcrOptions.engine``:

- ``"rapidocr"``: RapidOCR (PaddleOCR models run by onnxruntime); its wheel ships the
  models, so ``pip install "hybrid-rag[ocr]"`` is all it needs.
- ``"tesseract"``: Tesseract through ``pytesseract``; needs the ``tesseract`` program and
  its language data (Debian/Ubuntu: ``apt-get install tesseract-ocr``).

``"auto"`` (the default) takes the first engine that is installed, in ``ENGINE_ORDER``;
`docs/benchmarks.md` ("OCR engines") has the measurements behind that order. OCR text is
NFKC-normalised (full-width punctuation and ``℃`` become ``:`` and ``°C``): it is what the
engine read, never a copy of characters stored in the file.
"""

from __future__ import annotations

import shutil
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from hybrid_rag.errors import ConfigurationError, OcrUnavailableError

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "ENGINE_ORDER",
    "INSTALL_HINT",
    "OcrEngine",
    "OcrOptions",
    "engine_for",
    "lines_from_boxes",
]

EngineName = Literal["auto", "rapidocr", "tesseract"]
ENGINE_ORDER: tuple[str, ...] = ("rapidocr", "tesseract")
"""The engines ``"auto"`` tries, best first (measured: `docs/benchmarks.md`, "OCR engines")."""
INSTALL_HINT = 'pip install "hybrid-rag[ocr]"'


@dataclass(frozen=True, slots=True, kw_only=True)
class OcrOptions:
    """How pages without a text layer are read.

    Attributes:
        enabled: ``False`` never runs OCR: pages without text stay empty (with a warning)
            and image files are refused.
        engine: ``"auto"`` (first installed of `ENGINE_ORDER`), ``"rapidocr"`` or
            ``"tesseract"``.
        min_chars: A PDF page whose text layer has fewer non-space characters than this,
            and that draws an image, is rendered and OCR'd; the OCR text replaces the
            layer only when it is longer.
        dpi: Resolution PDF pages are rendered at for OCR (the longest side is capped at
            ``max_pixels``).
        max_pixels: Longest side, in pixels, of a rendered page or of an image handed to
            the engine (larger images are scaled down).
        language: Tesseract language(s), e.g. ``"eng"`` or ``"eng+deu"``; RapidOCR's
            bundled models read Latin script and Chinese whatever this says.
    """

    enabled: bool = True
    engine: EngineName = "auto"
    min_chars: int = 50
    dpi: int = 200
    max_pixels: int = 3000
    language: str = "eng"

    def __post_init__(self) -> None:
        if self.engine not in ("auto", *ENGINE_ORDER):
            raise ConfigurationError(
                f"unknown OCR engine {self.engine!r}; use 'auto', 'rapidocr' or 'tesseract'"
            )
        if self.min_chars < 0 or not 30 <= self.dpi <= 1200 or self.max_pixels < 256:
            raise ConfigurationError(
                "OCR options out of range: min_chars >= 0, 30 <= dpi <= 1200, max_pixels >= 256"
            )


class OcrEngine(Protocol):
    """Reads the text of one image, lines in reading order separated by newlines."""

    name: str

    def read(self, image: Image) -> str:
        """The text on ``image`` (``""`` when there is none)."""
        ...


# --- RapidOCR ---------------------------------------------------------------------------


class RapidOcrEngine:
    """RapidOCR with its bundled models; one onnxruntime session set per process."""

    name = "rapidocr"

    def __init__(self) -> None:
        self._engine: Any = None
        self._lock = threading.Lock()

    def read(self, image: Image) -> str:
        import numpy as np

        with self._lock:  # one call at a time: the sessions are shared
            if self._engine is None:
                self._engine = _new_rapidocr()
            result = self._engine(np.asarray(image.convert("RGB")))
        boxes = getattr(result, "boxes", None)
        txts = getattr(result, "txts", None)
        if boxes is None or not txts:
            return ""
        spans = [
            (
                float(min(p[0] for p in b)),
                float(min(p[1] for p in b)),
                float(max(p[0] for p in b)),
                float(max(p[1] for p in b)),
                str(t),
            )
            for b, t in zip(boxes, txts, strict=True)
        ]
        return _nfkc(lines_from_boxes(spans))


def _new_rapidocr() -> Any:
    try:
        from rapidocr import RapidOCR
    except ImportError as exc:
        raise OcrUnavailableError(f"RapidOCR is not installed: {INSTALL_HINT}") from exc
    return RapidOCR(params={"Global.log_level": "error"})


def lines_from_boxes(spans: Sequence[tuple[float, float, float, float, str]]) -> str:
    """Text lines from detected boxes ``(x0, y0, x1, y1, text)`` in image coordinates.

    Boxes whose vertical centres lie within half a line height of a line's centre join
    that line, left to right, one space apart (a label and the value printed beside it
    end up on one line, as they are printed); a gap of more than one line height between
    lines becomes a blank line.
    """
    items = sorted((s for s in spans if s[4].strip()), key=lambda s: (s[1] + s[3]) / 2)
    lines: list[list[tuple[float, float, float, float, str]]] = []
    for s in items:
        centre, height = (s[1] + s[3]) / 2, max(s[3] - s[1], 1.0)
        if lines:
            last = lines[-1]
            lc = sum((b[1] + b[3]) / 2 for b in last) / len(last)
            lh = sum(b[3] - b[1] for b in last) / len(last)
            if abs(centre - lc) <= 0.5 * min(lh, height):
                last.append(s)
                continue
        lines.append([s])
    out: list[str] = []
    prev_bottom: float | None = None
    for line in lines:
        top = min(b[1] for b in line)
        height = sum(b[3] - b[1] for b in line) / len(line)
        if prev_bottom is not None and top - prev_bottom > height:
            out.append("")
        out.append(" ".join(b[4].strip() for b in sorted(line, key=lambda b: b[0])))
        prev_bottom = max(b[3] for b in line)
    return "\n".join(out)


# --- Tesseract --------------------------------------------------------------------------


class TesseractEngine:
    """Tesseract (page segmentation mode 3, automatic) through ``pytesseract``."""

    name = "tesseract"

    def __init__(self, language: str = "eng") -> None:
        self.language = language

    def read(self, image: Image) -> str:
        try:
            import pytesseract
        except ImportError as exc:
            raise OcrUnavailableError(f"pytesseract is not installed: {INSTALL_HINT}") from exc
        text = pytesseract.image_to_string(image, lang=self.language, config="--psm 3")
        lines = [ln.rstrip() for ln in str(text).replace("\x0c", "").splitlines()]
        return _nfkc("\n".join(lines).strip("\n"))


# --- choosing ---------------------------------------------------------------------------

_ENGINES: dict[tuple[str, str], OcrEngine] = {}
_ENGINES_LOCK = threading.Lock()


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or blocked installation counts as absent
        return False


def _installed(name: str) -> bool:
    """Whether engine ``name`` can run here (its modules, and Tesseract's program)."""
    if name == "rapidocr":
        return _importable("rapidocr") and _importable("onnxruntime")
    return _importable("pytesseract") and shutil.which("tesseract") is not None


def engine_for(options: OcrOptions) -> OcrEngine:
    """The engine ``options`` name (``"auto"``: the first installed), shared per process.

    Raises:
        OcrUnavailableError: The engine asked for (or, for ``"auto"``, every engine) is
            not installed; the message names the install line.
    """
    names = ENGINE_ORDER if options.engine == "auto" else (options.engine,)
    for name in names:
        if not _installed(name):
            continue
        key = (name, options.language if name == "tesseract" else "")
        with _ENGINES_LOCK:
            engine = _ENGINES.get(key)
            if engine is None:
                engine = RapidOcrEngine() if name == "rapidocr" else TesseractEngine(key[1])
                _ENGINES[key] = engine
        return engine
    if options.engine == "tesseract":
        raise OcrUnavailableError(
            "Tesseract OCR needs pytesseract and the tesseract program: pip install pytesseract"
            " and apt-get install tesseract-ocr (or brew install tesseract)"
        )
    raise OcrUnavailableError(f"reading scanned pages and images needs OCR: {INSTALL_HINT}")


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)
