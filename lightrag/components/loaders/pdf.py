"""``PDFLoader``: the text layer of a PDF, page by page, with ``pypdf`` (the ``loaders`` extra).

Pages are joined with a form feed (``\\f``), so ``TextSplitter(split_by="page")`` can cut on
them; ``meta_data`` has ``pages`` and the document ``title`` when the PDF has one. A PDF without
a text layer (scanned images) is refused as ``empty`` with a hint to OCR it first; an encrypted
PDF that an empty password does not open is refused as ``encrypted``.

A small PDF can hold compressed streams that inflate a thousandfold: ``pypdf`` reads under
:data:`PDF_LIMITS` (2 MB out of one compressed stream, 500,000 tokens in one page's content;
with pypdf 5 or later). A page past them is skipped (logged; ``meta_data["skipped_pages"]``);
the :data:`MAX_SKIPPED_PAGES`-th such page, or a file with no other text, is refused as
``unsupported`` naming the limit; pages after :data:`MAX_TEXT_CHARS` characters of text are
left out (logged).

Example:
    >>> from lightrag.components.loaders.pdf import PDFLoader
    >>> PDFLoader()("a.pdf", data=b"%PDF-1.4 not really")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    lightrag.components.loaders.base.DocumentLoadError: a.pdf: unreadable PDF: ...
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
from typing import Any, ContextManager, Dict, List, Tuple

from lightrag.components.loaders.base import (
    MAX_TEXT_CHARS,
    DocumentLoader,
    DocumentLoadError,
    missing_extra,
)
from lightrag.utils.registry import register

__all__ = ["MAX_SKIPPED_PAGES", "PDF_LIMITS", "PDFLoader"]

log = logging.getLogger(__name__)

_STREAM_BYTES = 2 * 1024 * 1024
#: ``pypdf`` configuration values read under (pypdf's defaults are 75 MB per stream, 2,000,000
#: tokens per content stream): a page of text has well under a megabyte of content, and pypdf
#: holds ~55 bytes per character of a text operand (a 15 KB PDF with one 15 MB string cost
#: 824 MB and 10 s)
PDF_LIMITS: Dict[str, int] = {
    "zlib_maximum_output_length": _STREAM_BYTES,
    "lzw_maximum_output_length": _STREAM_BYTES,
    "run_length_maximum_output_length": _STREAM_BYTES,
    "brotli_maximum_output_length": _STREAM_BYTES,
    "array_based_stream_maximum_output_length": _STREAM_BYTES,
    "stream_decoding_work_maximum_length": 4 * _STREAM_BYTES,
    "stream_parsing_work_maximum_count": 500_000,
}


#: pages past :data:`PDF_LIMITS` skipped (logged, listed in ``meta_data["skipped_pages"]``)
#: before the whole file is refused
MAX_SKIPPED_PAGES = 3


def _limits() -> ContextManager[Any]:
    """``pypdf.apply_configuration`` with the :data:`PDF_LIMITS` this pypdf knows (nothing to
    apply with a pypdf older than its configuration API)."""
    import pypdf

    apply = getattr(pypdf, "apply_configuration", None)
    config = getattr(pypdf, "Configuration", None)
    if apply is None or config is None:
        return contextlib.nullcontext()
    known = {f.name for f in dataclasses.fields(config)}
    return apply(**{k: v for k, v in PDF_LIMITS.items() if k in known})


def _pages_text(reader: Any, file_path: str, limit_error: type) -> Tuple[List[str], List[int]]:
    """The text of each page, up to :data:`MAX_TEXT_CHARS` characters in all, and the numbers of
    the pages skipped because they are past :data:`PDF_LIMITS` (a drawing's huge content
    stream). The :data:`MAX_SKIPPED_PAGES`-th such page, or a file whose every page is past
    them, raises ``limit_error``."""
    pages: List[str] = []
    skipped: List[int] = []
    total = 0
    for number, page in enumerate(reader.pages, 1):
        try:
            text = page.extract_text() or ""
        except limit_error as e:
            skipped.append(number)
            if len(skipped) >= MAX_SKIPPED_PAGES:
                raise
            last = e
            continue
        total += len(text)
        if total > MAX_TEXT_CHARS:
            log.warning("%s: only the first %d characters of text are read (up to page %d)",
                        file_path, MAX_TEXT_CHARS, number)
            pages.append(text[:max(0, len(text) - (total - MAX_TEXT_CHARS))])
            break
        pages.append(text)
    if skipped and not any(p.strip() for p in pages):
        raise last
    if skipped:
        log.warning("%s: page(s) %s skipped, past the reader's limits (%s)", file_path,
                    ", ".join(map(str, skipped)), last)
    return pages, skipped


@register
class PDFLoader(DocumentLoader):
    """The text of a PDF (see the module doc)."""

    format = "pdf"
    extensions = (".pdf",)

    def extract(self, data: bytes, file_path: str) -> Tuple[str, Dict[str, Any]]:
        try:
            from pypdf import PdfReader
            from pypdf.errors import PdfReadError
        except ImportError as e:
            raise missing_extra(file_path, "pypdf", "PDF") from e
        logging.getLogger("pypdf").setLevel(logging.ERROR)  # per-object warnings are noise here
        try:
            from pypdf.errors import LimitReachedError
        except ImportError:  # pypdf before 5
            LimitReachedError = PdfReadError  # noqa: N806
        try:
            with _limits():
                reader = PdfReader(io.BytesIO(data))
                if reader.is_encrypted and not reader.decrypt(""):
                    raise DocumentLoadError(
                        file_path, "encrypted",
                        "encrypted PDF (a password is needed); decrypt it first")
                pages, skipped = _pages_text(reader, file_path, LimitReachedError)
                title = (reader.metadata or {}).get("/Title") if reader.metadata else None
        except DocumentLoadError:
            raise
        except LimitReachedError as e:
            raise DocumentLoadError(
                file_path, "unsupported",
                f"a PDF stream past the reader's limits (a decompression bomb?): {e}") from e
        except PdfReadError as e:
            raise DocumentLoadError(file_path, "unsupported", f"unreadable PDF: {e}") from e
        except Exception as e:  # a corrupt file can fail anywhere inside pypdf's parser
            raise DocumentLoadError(file_path, "unsupported",
                                    f"unreadable PDF ({type(e).__name__}: {e})") from e
        if not any(p.strip() for p in pages):
            raise DocumentLoadError(
                file_path, "empty",
                f"no text layer in {len(pages)} PDF page(s) (a scan?): run OCR on it first")
        meta: Dict[str, Any] = {"pages": len(pages) + len(skipped),
                                "title": str(title) if title else None}
        if skipped:
            meta["skipped_pages"] = skipped
        return "\n\f\n".join(p.strip() for p in pages), meta
