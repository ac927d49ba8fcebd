"""Choosing a loader by content and extension: ``sniff_format``, ``AutoLoader``,
``load_document`` and ``load_documents`` (files and folders, with the skipped files and why).

The content decides first, from magic bytes: ``%PDF-`` is a PDF, a ZIP with
``word/document.xml`` is a DOCX, known binary signatures (images, archives, executables, other
office files) and NUL-heavy bytes are ``binary``; an HTML document type or ``<html>`` tag at the
start is HTML. Text without such a sign goes by extension (``.md`` Markdown, ``.html`` HTML,
anything else plain text), so a PDF named ``notes.txt`` still loads as a PDF and a binary file
named ``.md`` is refused as binary.

Example:
    >>> sniff_format("report.txt", b"%PDF-1.7 ...")
    'pdf'
    >>> sniff_format("README", b"<!DOCTYPE html><html><body>Hi</body></html>")
    'html'
    >>> sniff_format("notes.md", b"# Title")
    'markdown'
    >>> sniff_format("photo.jpg", b"\\xff\\xd8\\xff\\xe0\\x00\\x10JFIF")
    'binary'
    >>> doc = load_document("hello.md", data=b"# Hello\\n\\nA *small* [page](x.html).")
    >>> doc.text, doc.meta_data["format"], doc.meta_data["file_path"]
    ('Hello\\n\\nA small page.', 'markdown', 'hello.md')
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple, Type, Union

from lightrag.components.loaders.base import (
    DocumentLoader,
    DocumentLoadError,
    looks_binary,
    read_source,
)
from lightrag.components.loaders.docx import DocxLoader, is_docx
from lightrag.components.loaders.html import HTMLLoader
from lightrag.components.loaders.markdown import MarkdownLoader
from lightrag.components.loaders.pdf import PDFLoader
from lightrag.components.loaders.text import TextLoader
from lightrag.core.types import Document
from lightrag.utils.registry import register

__all__ = ["AutoLoader", "LOADERS", "LoadReport", "load_document", "load_documents",
           "sniff_format"]

log = logging.getLogger(__name__)

PathLike = Union[str, Path]

LOADERS: Dict[str, Type[DocumentLoader]] = {
    "text": TextLoader, "markdown": MarkdownLoader, "html": HTMLLoader, "pdf": PDFLoader,
    "docx": DocxLoader,
}

_BINARY_MAGIC = (
    b"\x89PNG", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*", b"RIFF",
    b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"7z\xbc\xaf", b"Rar!", b"\x7fELF", b"MZ", b"\xca\xfe\xba\xbe",
    b"\xcf\xfa\xed\xfe", b"\xd0\xcf\x11\xe0", b"PK\x03\x04", b"PK\x05\x06", b"OggS", b"fLaC",
    b"ID3", b"\x00\x00\x00", b"SQLite format 3", b"\x28\xb5\x2f\xfd", b"wOFF", b"wOF2",
)
_BINARY_EXTENSIONS = {
    ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".webp", ".ico", ".zip", ".gz",
    ".tgz", ".bz2", ".xz", ".7z", ".rar", ".exe", ".dll", ".so", ".dylib", ".bin", ".o", ".a",
    ".pyc", ".class", ".jar", ".mp3", ".mp4", ".wav", ".ogg", ".flac", ".avi", ".mov", ".mkv",
    ".doc", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".sqlite", ".db", ".gguf", ".npy", ".pkl",
    ".parquet", ".woff", ".woff2", ".ttf", ".otf",
}
_BY_EXTENSION = {ext: name for name, cls in LOADERS.items() for ext in cls.extensions}


def sniff_format(path: PathLike, head: bytes) -> str:
    """The format of a file from its first bytes and its name (see the module doc).

    Returns one of ``pdf``, ``docx``, ``html``, ``markdown``, ``text`` or ``binary``.
    """
    suffix = Path(str(path)).suffix.lower()
    if head.startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(b"PK\x03\x04") and is_docx(head):
        return "docx"
    if any(head.startswith(magic) for magic in _BINARY_MAGIC) or looks_binary(head):
        return "binary"
    start = head[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if start.startswith((b"<!doctype html", b"<html")) or (
            suffix not in _BY_EXTENSION and start.startswith(b"<") and b"<body" in head[:4096].lower()):
        return "html"
    if suffix in _BINARY_EXTENSIONS:
        return "binary"
    return _BY_EXTENSION.get(suffix, "text")


@register
class AutoLoader(DocumentLoader):
    """Loads any supported file with the loader its content and extension call for.

    Args:
        encoding: passed to the text-based loaders (used when a file is not UTF-8).

    Example:
        >>> AutoLoader()("a.txt", data=b"plain words").meta_data["format"]
        'text'
    """

    format = "auto"

    def call(self, path: PathLike, data: Optional[bytes] = None) -> Document:
        raw = read_source(path, data)
        kind = sniff_format(path, raw[:8192] if not raw.startswith(b"PK\x03\x04") else raw)
        if kind == "binary":
            why = looks_binary(raw) or "a binary file signature"
            raise DocumentLoadError(path, "binary",
                                    f"binary file ({why}); supported: PDF, DOCX, HTML, Markdown, "
                                    "text")
        return LOADERS[kind](encoding=self.encoding)(path, data=raw)


def load_document(path: PathLike, data: Optional[bytes] = None,
                  encoding: Optional[str] = None) -> Document:
    """Load one file (or uploaded ``data`` named ``path``) as a Document.

    ``meta_data`` has ``file_path`` (``str(path)``, used in references) and ``format``, plus what
    the format offers (``title``, ``sections``, ``pages``, ``encoding``).

    Raises:
        FileNotFoundError: no such file.
        DocumentLoadError: ``binary``, ``empty``, ``undecodable``, ``encrypted``,
            ``unsupported`` or ``missing-extra`` (its ``reason``).
    """
    return AutoLoader(encoding=encoding)(path, data=data)


@dataclass
class LoadReport:
    """What :func:`load_documents` loaded and what it skipped, with the reason of each skip."""

    documents: List[Document] = field(default_factory=list)
    skipped: List[Tuple[str, str, str]] = field(default_factory=list)  # (path, reason, message)

    def skipped_by_reason(self) -> Dict[str, int]:
        counts: Dict[str, int] = {}
        for _, reason, _ in self.skipped:
            counts[reason] = counts.get(reason, 0) + 1
        return counts


def _walk(paths: Iterable[PathLike]) -> Tuple[List[Path], List[Path]]:
    """``(files to load, links in a folder that lead outside it)``: a folder is read as what it
    holds, so a link to a file elsewhere (``notes.txt -> ~/.ssh/id_rsa``) is not followed."""
    files: List[Path] = []
    outside: List[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            root = path.resolve()
            for p in sorted(path.rglob("*")):
                if not p.is_file() or any(part.startswith(".") for part in p.relative_to(path).parts):
                    continue
                (files if p.resolve().is_relative_to(root) else outside).append(p)
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return files, outside


def load_documents(paths: Iterable[PathLike], encoding: Optional[str] = None) -> LoadReport:
    """Load files and folders (recursively; hidden files and folders are left out).

    Files that cannot be loaded are not errors: they are listed in ``LoadReport.skipped`` as
    ``(path, reason, message)``, links inside a folder to files outside it too (reason
    ``"outside"``: not followed). A missing path raises ``FileNotFoundError``.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "a.md").write_text("# A\\n\\nAlice.")
        >>> _ = (folder / "empty.txt").write_text("")
        >>> report = load_documents([folder])
        >>> [d.text for d in report.documents], [r for _, r, _ in report.skipped]
        (['A\\n\\nAlice.'], ['empty'])
    """
    report = LoadReport()
    loader = AutoLoader(encoding=encoding)
    files, outside = _walk(paths)
    for link in outside:
        log.warning("skipped %s: a link to a file outside the folder", link)
        report.skipped.append((str(link), "outside", "a link to a file outside the folder"))
    for file in files:
        try:
            report.documents.append(loader(file))
        except DocumentLoadError as e:
            log.info("skipped %s: %s", file, e.detail)
            report.skipped.append((str(file), e.reason, e.detail))
        except OSError as e:
            report.skipped.append((str(file), "unreadable", str(e)))
    return report
