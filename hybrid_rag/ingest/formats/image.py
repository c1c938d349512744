"""Image documents (PNG, JPEG, TIFF, ...): every frame read by OCR, one page per frame.

Needs Pillow and an OCR engine (``pip install "hybrid-rag[ocr]"``). The EXIF orientation
is applied; images larger than ``OcrOptions.max_pixels`` on their longest side are scaled
down first. Every page carries ``ocr=True``.
"""

from __future__ import annotations

import io
from typing import Any

from hybrid_rag.errors import DocumentError, OcrUnavailableError
from hybrid_rag.ingest.formats.ocr import INSTALL_HINT, OcrOptions, engine_for
from hybrid_rag.models import Page

__all__ = ["IMAGE_SUFFIXES", "image_pages"]

IMAGE_SUFFIXES: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".bmp": "image/bmp",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
"""Image file suffixes read by OCR, mapped to their media type."""
_MAX_FRAMES = 500


def image_pages(data: bytes, name: str, *, ocr: OcrOptions) -> tuple[list[Page], list[str]]:
    """One OCR'd page per frame of an image file, and the warnings.

    Raises:
        OcrUnavailableError: OCR is off, or no engine (or Pillow) is installed.
        DocumentError: Not an image Pillow can read, or a damaged one.
    """
    if not ocr.enabled:
        raise OcrUnavailableError(f"{name}: an image is read only by OCR, and OCR is off")
    try:
        engine = engine_for(ocr)
        from PIL import Image, ImageOps, ImageSequence
    except (OcrUnavailableError, ImportError) as exc:
        raise OcrUnavailableError(
            f"{name}: an image document is read by OCR; {exc}"
            if isinstance(exc, OcrUnavailableError)
            else f"{name}: reading images needs Pillow: {INSTALL_HINT}"
        ) from None
    try:
        with Image.open(io.BytesIO(data)) as im:
            frames = [_prepared(ImageOps, f, ocr.max_pixels) for f in _frames(ImageSequence, im)]
    except Exception as exc:  # UnidentifiedImageError, truncated data, decompression bombs
        raise DocumentError(f"{name}: not a readable image ({type(exc).__name__}: {exc})") from None
    warnings: list[str] = []
    pages = [Page(number=i, text=engine.read(f), ocr=True) for i, f in enumerate(frames, 1)]
    warnings.append(
        f"{name}: an image, read by OCR ({engine.name}): its text and quotes are read, not copied"
    )
    return pages, warnings


def _frames(sequence: Any, image: Any) -> list[Any]:
    frames = []
    for i, frame in enumerate(sequence.Iterator(image)):
        if i >= _MAX_FRAMES:
            break
        frames.append(frame.copy())
    return frames


def _prepared(ops: Any, frame: Any, max_pixels: int) -> Any:
    """The frame upright, in greyscale, no larger than ``max_pixels`` on its longest side."""
    frame = ops.exif_transpose(frame).convert("L")
    longest = max(frame.size)
    if longest > max_pixels:
        scale = max_pixels / longest
        frame = frame.resize((max(1, int(frame.width * scale)), max(1, int(frame.height * scale))))
    return frame
