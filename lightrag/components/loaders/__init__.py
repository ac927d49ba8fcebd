"""Document loaders: PDF, DOCX, HTML, Markdown and plain text into :class:`Document` objects.

Each format has a :class:`DocumentLoader` Component; :func:`load_document` picks one by the
file's content (magic bytes) and extension, and :func:`load_documents` loads files and folders,
listing every skipped file with its reason (``binary``, ``empty``, ``undecodable``, ...).
PDF needs ``pypdf`` and Markdown ``markdown-it-py`` (the ``loaders`` extra); HTML, DOCX and text
need nothing beyond the core; ``charset-normalizer`` (same extra) detects legacy encodings.

Example:
    >>> from lightrag.components.loaders import load_document
    >>> doc = load_document("page.html", data=b"<html><body><nav>Menu</nav><p>Hello.</p></body></html>")
    >>> doc.text, doc.meta_data["file_path"]
    ('Hello.', 'page.html')
"""

from lightrag.components.loaders.auto import (
    LOADERS,
    AutoLoader,
    LoadReport,
    load_document,
    load_documents,
    sniff_format,
)
from lightrag.components.loaders.base import DocumentLoader, DocumentLoadError, decode_text
from lightrag.components.loaders.docx import DocxLoader
from lightrag.components.loaders.html import HTMLLoader
from lightrag.components.loaders.markdown import MarkdownLoader
from lightrag.components.loaders.pdf import PDFLoader
from lightrag.components.loaders.text import TextLoader

__all__ = [
    "AutoLoader",
    "DocumentLoadError",
    "DocumentLoader",
    "DocxLoader",
    "HTMLLoader",
    "LOADERS",
    "LoadReport",
    "MarkdownLoader",
    "PDFLoader",
    "TextLoader",
    "decode_text",
    "load_document",
    "load_documents",
    "sniff_format",
]
