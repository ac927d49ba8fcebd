"""Red team 6: a ``.docx`` or PDF that expands hugely is refused or read in bounded memory by the
loader itself (``lightrag index`` reads files in its own process, unlike the server).

A 79 KB ``.docx`` of 64 MB of empty paragraphs cost ~900 MB and 8 s; a 47 KB PDF whose content
stream inflates to 32 MB cost 4 s and 400 MB before pypdf gave up.
"""

from __future__ import annotations

import io
import time
import tracemalloc
import zipfile

import pytest
from pdf_files import pdf_of

from lightrag.components.loaders import docx as docx_loader
from lightrag.components.loaders import load_document
from lightrag.components.loaders.base import DocumentLoadError

HEAD = b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
TAIL = b"</w:body></w:document>"


def _docx(body: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", HEAD + body + TAIL)
    return buffer.getvalue()


def test_docx_bomb_is_refused_by_its_ratio_naming_the_file():
    data = _docx(b"<w:p/>" * 2_000_000)  # 12 MB of XML in ~18 KB
    started = time.monotonic()
    with pytest.raises(DocumentLoadError) as caught:
        load_document("bomb.docx", data=data)
    assert time.monotonic() - started < 1.0
    assert str(caught.value).startswith("bomb.docx: word/document.xml expands")
    assert "zip bomb" in str(caught.value)


def _peak_bytes(data: bytes, name: str) -> int:
    tracemalloc.start()
    try:
        try:
            docx_loader.DocxLoader().extract(data, name)
        except DocumentLoadError:
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_docx_is_parsed_as_a_stream_in_bounded_memory():
    # 3.6 MB of XML (under the ratio check's 4 MB floor) in 600,000 elements: the whole tree
    # (the old loader) held ~70 MB; the stream holds 1 MB of bytes and one paragraph
    data = _docx(b"<w:p/>" * 600_000)
    assert _peak_bytes(data, "empty.docx") < 8 * 1024 * 1024


def test_docx_text_is_read_as_a_stream():
    body = b"".join(b"<w:p><w:r><w:t>Paragraph %d about Acme robots.</w:t></w:r></w:p>" % i
                    for i in range(60_000))
    doc = load_document("big.docx", data=_docx(body))
    assert doc.text.startswith("Paragraph 0 about Acme robots.\n\nParagraph 1 ")
    assert doc.text.endswith("Paragraph 59999 about Acme robots.")
    assert doc.text.count("\n\n") == 59_999


def test_docx_with_too_many_tags_is_refused(monkeypatch):
    monkeypatch.setattr(docx_loader, "MAX_TAGS", 10_000)
    data = _docx(b"<w:p><w:r><w:t>x</w:t></w:r></w:p>" * 5_000)
    with pytest.raises(DocumentLoadError, match=r"tags\.docx: word/document.xml holds over 10000"):
        load_document("tags.docx", data=data)


def test_docx_text_is_capped(monkeypatch, caplog):
    monkeypatch.setattr(docx_loader, "MAX_TEXT_CHARS", 1_000)
    data = _docx(b"".join(b"<w:p><w:r><w:t>word %d</w:t></w:r></w:p>" % i for i in range(5_000)))
    with caplog.at_level("WARNING"):
        doc = load_document("long.docx", data=data)
    assert len(doc.text) <= 1_000
    assert "only the first 1000 characters" in caplog.text


def test_docx_structure_still_read():
    body = (b'<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Acme</w:t></w:r></w:p>'
            b"<w:p/><w:tbl><w:tr><w:tc><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc>"
            b"<w:tc><w:p><w:r><w:t>b</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"
            b"<w:sdt><w:sdtContent><w:p><w:r><w:t>inside</w:t></w:r></w:p></w:sdtContent></w:sdt>")
    doc = load_document("s.docx", data=_docx(body))
    assert doc.text == "Acme\n\na; b\n\ninside"
    assert doc.meta_data["sections"] == [{"level": 1, "title": "Acme", "offset": 0}]


def test_pdf_bomb_is_refused_quickly():
    pytest.importorskip("pypdf")
    data = pdf_of(b"BT /F1 12 Tf 72 720 Td " + b"(ab) Tj " * 4_000_000 + b"ET")  # 32 MB inflated
    started = time.monotonic()
    with pytest.raises(DocumentLoadError, match=r"^bomb\.pdf: a PDF stream past the reader's limits"):
        load_document("bomb.pdf", data=data)
    assert time.monotonic() - started < 2.0


def test_pdf_text_still_read():
    pytest.importorskip("pypdf")
    doc = load_document("ok.pdf", data=pdf_of(b"BT /F1 12 Tf 72 720 Td (Acme builds robots.) Tj ET"))
    assert doc.text == "Acme builds robots."


def test_pdf_string_bomb_is_refused_quickly():
    pytest.importorskip("pypdf")
    data = pdf_of(b"BT /F1 12 Tf 72 720 Td (" + b"a" * 15_000_000 + b") Tj ET")  # 15 KB
    started = time.monotonic()  # it cost 10 s and 824 MB under pypdf's own limits
    with pytest.raises(DocumentLoadError, match=r"^s\.pdf: a PDF stream past the reader's limits"):
        load_document("s.pdf", data=data)
    assert time.monotonic() - started < 2.0


def test_a_pdf_page_past_the_limits_is_skipped_and_the_others_read(caplog):
    pytest.importorskip("pypdf")
    text = b"BT /F1 12 Tf 72 720 Td (Acme builds robots.) Tj ET"
    drawing = b"0 0 m " + b"1 1 l " * 1_200_000 + b"S"  # 2.4 MB of path operators
    with caplog.at_level("WARNING"):
        doc = load_document("mixed.pdf", data=pdf_of(text, drawing, text))
    assert doc.text == "Acme builds robots.\n\f\nAcme builds robots."
    assert doc.meta_data["pages"] == 3 and doc.meta_data["skipped_pages"] == [2]
    assert "mixed.pdf: page(s) 2 skipped" in caplog.text
    with pytest.raises(DocumentLoadError, match="past the reader's limits"):
        load_document("drawings.pdf", data=pdf_of(text, *[drawing] * 3))
