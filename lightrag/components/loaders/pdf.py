"""``PDFLoader``: the text layer of a PDF, page by page, with ``pypdf`` (the ``loaders`` extra).

Pages are joined with a form feed (``\\f``), so ``TextSplitter(split_by="page")`` can cut on
them; ``meta_data`` has ``pages`` and the document ``title`` when the PDF has one. A PDF without
a text layer (scanned images) is refused as ``empty`` with a hint to OCR it first; an encrypted
PDF that an empty password does not open is refused as ``encrypted``.

Example:
    >>> from lightrag.components.loaders.pdf import PDFLoader
    >>> PDFLoader()("a.pdf", data=b"%PDF-1.4 not really")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    lightrag.components.loaders.base.DocumentLoadError: a.pdf: unreadable PDF: ...
"""

from __future__ import annotations

import io
import logging
from typing import Any, Dict, Tuple

from lightrag.components.loaders.base import DocumentLoader, DocumentLoadError, missing_extra
from lightrag.utils.registry import register

__all__ = ["PDFLoader"]

log = logging.getLogger(__name__)


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
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise DocumentLoadError(file_path, "encrypted",
                                        "encrypted PDF (a password is needed); decrypt it first")
            pages = [page.extract_text() or "" for page in reader.pages]
            title = (reader.metadata or {}).get("/Title") if reader.metadata else None
        except DocumentLoadError:
            raise
        except PdfReadError as e:
            raise DocumentLoadError(file_path, "unsupported", f"unreadable PDF: {e}") from e
        except Exception as e:  # a corrupt file can fail anywhere inside pypdf's parser
            raise DocumentLoadError(file_path, "unsupported",
                                    f"unreadable PDF ({type(e).__name__}: {e})") from e
        if not any(p.strip() for p in pages):
            raise DocumentLoadError(
                file_path, "empty",
                f"no text layer in {len(pages)} PDF page(s) (a scan?): run OCR on it first")
        return "\n\f\n".join(p.strip() for p in pages), {
            "pages": len(pages), "title": str(title) if title else None}
