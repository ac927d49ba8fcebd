"""Document loaders on real small files made here: PDF (hand-written), DOCX (zip + XML), HTML,
Markdown, text in several encodings, and binary / empty files."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from lightrag.components.loaders import (
    AutoLoader,
    DocumentLoadError,
    DocxLoader,
    HTMLLoader,
    MarkdownLoader,
    PDFLoader,
    TextLoader,
    load_document,
    load_documents,
    sniff_format,
)


def make_pdf(pages: list[str], title: str | None = None) -> bytes:
    """A valid PDF with one Helvetica text line per page (correct xref offsets)."""
    objects: list[bytes] = []
    n_pages = len(pages)
    page_ids = [4 + 2 * i for i in range(n_pages)]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{i} 0 R" for i in page_ids).encode()
    objects.append(b"<< /Type /Pages /Kids [" + kids + b"] /Count " + str(n_pages).encode() + b" >>")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
                       f"<< /Font << /F1 3 0 R >> >> /Contents {page_ids[i] + 1} 0 R >>".encode())
        objects.append(b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream
                       + b"\nendstream")
    info_id = None
    if title:
        objects.append(f"<< /Title ({title}) >>".encode())
        info_id = len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R"
    trailer += f" /Info {info_id} 0 R >>" if info_id else " >>"
    out += f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def make_docx(body_xml: str, title: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", f"<w:document {W}><w:body>{body_xml}</w:body></w:document>")
        if title:
            z.writestr("docProps/core.xml",
                       '<cp:coreProperties xmlns:cp="x" xmlns:dc="http://purl.org/dc/elements/1.1/">'
                       f"<dc:title>{title}</dc:title></cp:coreProperties>")
    return buffer.getvalue()


def para(text: str, style: str | None = None, item: bool = False) -> str:
    props = ""
    if style or item:
        props = "<w:pPr>" + (f'<w:pStyle w:val="{style}"/>' if style else "") + \
                ("<w:numPr><w:ilvl w:val=\"0\"/></w:numPr>" if item else "") + "</w:pPr>"
    return f"<w:p>{props}<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>"


DOCX_BODY = (para("Acme Robotics", "Heading1") + para("Acme Robotics builds warehouse robots in Lyon.")
             + para("Products", "Heading2") + para("Picker arm", item=True)
             + "<w:tbl><w:tr><w:tc>" + para("Model") + "</w:tc><w:tc>" + para("Speed")
             + "</w:tc></w:tr><w:tr><w:tc>" + para("PX-1") + "</w:tc><w:tc>" + para("2 m/s")
             + "</w:tc></w:tr></w:tbl>")

HTML_PAGE = """<!DOCTYPE html><html><head><title>Acme news</title>
<style>body {color: red}</style><script>var tracking = "secret";</script></head>
<body><header><a href="/">Home</a><a href="/jobs">Jobs</a></header>
<nav role="navigation"><ul><li>Menu item</li></ul></nav>
<main><article><h1>Acme opens a plant</h1><p>Acme Robotics opened a plant in <b>Lyon</b>.</p>
<table><tr><th>Year</th><th>Robots</th></tr><tr><td>2024</td><td>1200</td></tr></table>
</article></main><aside>Related links</aside><footer>Copyright Acme</footer></body></html>"""

MARKDOWN = """---
title: front matter is dropped
---
# Acme Robotics

Acme builds **robots**; see [the site](https://acme.example) and ![the logo](logo.png).

## Results

| Recall@2 | Recall@5 |
|---|---|
| 0.48 | 0.60 |

- first
- second
"""


# ----------------------------------------------------------------------------- formats
def test_pdf_text_pages_and_title():
    doc = PDFLoader()("report.pdf", data=make_pdf(["Alice met Bob in Paris.", "Page two text."],
                                                   title="Annual report"))
    assert "Alice met Bob in Paris." in doc.text and "Page two text." in doc.text
    assert "\f" in doc.text  # pages are kept apart for split_by="page"
    assert doc.meta_data == {"file_path": "report.pdf", "format": "pdf", "pages": 2,
                             "title": "Annual report"}


def test_pdf_without_text_layer_is_empty_and_garbage_is_unsupported():
    with pytest.raises(DocumentLoadError) as err:
        PDFLoader()("scan.pdf", data=make_pdf([""]))
    assert err.value.reason == "empty" and "OCR" in str(err.value)
    with pytest.raises(DocumentLoadError) as err:
        PDFLoader()("bad.pdf", data=b"%PDF-1.4\nnonsense")
    assert err.value.reason == "unsupported" and "bad.pdf" in str(err.value)


def test_docx_paragraphs_headings_lists_tables():
    doc = DocxLoader()("acme.docx", data=make_docx(DOCX_BODY, title="Acme profile"))
    assert doc.text.split("\n\n") == [
        "Acme Robotics", "Acme Robotics builds warehouse robots in Lyon.", "Products",
        "- Picker arm", "Model; Speed\nPX-1; 2 m/s"]
    assert doc.meta_data["title"] == "Acme profile"
    sections = doc.meta_data["sections"]
    assert [(s["level"], s["title"]) for s in sections] == [(1, "Acme Robotics"), (2, "Products")]
    assert all(doc.text[s["offset"]:].startswith(s["title"]) for s in sections)


def test_docx_that_is_not_a_word_file():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("other.txt", "x")
    with pytest.raises(DocumentLoadError) as err:
        DocxLoader()("x.docx", data=buffer.getvalue())
    assert err.value.reason == "unsupported"


def test_html_main_text_without_menus_scripts_or_footer():
    doc = HTMLLoader()("news.html", data=HTML_PAGE.encode())
    assert doc.text == ("Acme opens a plant\n\nAcme Robotics opened a plant in Lyon.\n\n"
                        "Year; Robots\n2024; 1200")
    for noise in ("Home", "Menu item", "tracking", "color", "Related", "Copyright"):
        assert noise not in doc.text
    assert doc.meta_data["title"] == "Acme news"
    assert doc.meta_data["sections"] == [{"level": 1, "title": "Acme opens a plant", "offset": 0}]


def test_html_declared_legacy_charset():
    page = '<html><head><meta charset="iso-8859-1"></head><body><p>Café São</p></body></html>'
    assert HTMLLoader()("p.html", data=page.encode("latin-1")).text == "Café São"


def test_markdown_stripped_with_headings_as_structure():
    doc = MarkdownLoader()("acme.md", data=MARKDOWN.encode())
    assert doc.text == ("Acme Robotics\n\nAcme builds robots; see the site and the logo.\n\n"
                        "Results\n\nRecall@2: 0.48; Recall@5: 0.60\n\n- first\n- second")
    for syntax in ("#", "|", "](", "**", "---"):
        assert syntax not in doc.text
    sections = doc.meta_data["sections"]
    assert [(s["level"], s["title"]) for s in sections] == [(1, "Acme Robotics"), (2, "Results")]
    assert all(doc.text[s["offset"]:].startswith(s["title"]) for s in sections)


def test_markdown_code_blocks_are_indented_code_that_answers_do_not_quote():
    """A code block's lines (a directory tree, a shell session) keep their text but are indented
    by four spaces, whatever their own indentation: an extractive answer quoted a line of a
    tree listing as a sentence of the documentation."""
    from lightrag.components.graph_rag.sentences import split_sentences

    md = ("# Layout\n\nThe store keeps one file per namespace.\n\n```\nlightrag/\n"
          "  storage/   the backends (one file: a row beside its node's), graph (each\n```\n\n"
          "    indented code; too\n\nAfter the block, prose again.\n")
    text = MarkdownLoader()("layout.md", data=md.encode()).text
    assert "    lightrag/\n      storage/   the backends" in text
    assert "\n    indented code; too" in text
    assert [s.text for s in split_sentences(text)] == ["The store keeps one file per namespace.",
                                                        "After the block, prose again."]


def test_markdown_run_in_heading_stays_with_its_sentence():
    """A bold lead-in ending with a full stop would be a sentence of its own once the markup is
    gone ("The way to grow."), quoted as a fragment by extractive answers; it is joined to the
    sentence it introduces. Bold elsewhere and lead-ins without a full stop are kept as written."""
    md = ("**The way to grow.** One machine: the default store.\n\n- *Note.* Lists too.\n\n"
          "A **bold.** word.\n\n**Tip:** as written.\n\n**Alone.**\n")
    text = MarkdownLoader()("g.md", data=md.encode()).text
    assert text.split("\n\n") == ["The way to grow — One machine: the default store.",
                                    "- Note — Lists too.", "A bold. word.", "Tip: as written.",
                                    "Alone."]


def test_markdown_run_in_heading_with_code_in_it():
    text = MarkdownLoader()("g.md", data=b"**`ppr` mode.** Personalized PageRank over the graph.\n").text
    assert text.strip() == "ppr mode — Personalized PageRank over the graph."


# ----------------------------------------------------------------------------- text decoding
@pytest.mark.parametrize("encoded, encoding", [
    ("Zoë naïve café".encode(), "utf-8"),
    ("Zoë naïve café".encode("utf-8-sig"), "utf-8-sig"),
    ("Zoë naïve café".encode("utf-16"), "utf-16"),
])
def test_text_unicode_with_and_without_bom(encoded, encoding):
    doc = TextLoader()("t.txt", data=encoded)
    assert doc.text == "Zoë naïve café" and doc.meta_data["encoding"] == encoding


def test_text_legacy_encoding_given_or_detected():
    legacy = ("Le café de la gare est ouvert. Zoë et Noël y déjeunent à midi, "
              "près de la fenêtre.").encode("cp1252")
    assert TextLoader(encoding="cp1252")("old.txt", data=legacy).text.startswith("Le café")
    detected = TextLoader()("old.txt", data=legacy)  # charset-normalizer (loaders extra)
    assert "café" in detected.text and "Noël" in detected.text
    with pytest.raises(DocumentLoadError) as err:
        TextLoader(encoding="ascii")("old.txt", data=legacy)
    assert err.value.reason == "undecodable" and "ascii" in str(err.value)


@pytest.mark.parametrize("text, encoding", [
    ("The Café Marée in Lisk serves crème brûlée to ferry passengers every morning.", "latin_1"),
    ("Die Straße führt über die Brücke zum großen Schloß.", "cp1252"),
    ("Привет, как дела? Это длинный русский текст о погоде и жизни.", "cp1251"),
    ("Příliš žluťoučký kůň úpěl ďábelské ódy. Čeština je krásná.", "cp1250"),
])
def test_short_legacy_texts_are_read_in_the_encoding_they_were_written_in(text, encoding):
    doc = TextLoader()("old.txt", data=text.encode(encoding))  # detected: no encoding given
    assert doc.text == text


def test_an_ambiguous_detection_is_a_warning_naming_the_encoding(caplog):
    with caplog.at_level("WARNING", logger="lightrag.components.loaders.base"):
        doc = TextLoader()("menu.txt", data="Crème brûlée at the Café.".encode("latin_1"))
    assert doc.text == "Crème brûlée at the Café."
    assert "menu.txt" in caplog.text and "cp1252" in caplog.text and "--encoding" in caplog.text


def test_binary_and_empty_files_are_refused_with_reasons():
    with pytest.raises(DocumentLoadError) as err:
        TextLoader()("blob.txt", data=b"\x00\x01\x02\x03 data")
    assert err.value.reason == "binary"
    with pytest.raises(DocumentLoadError) as err:
        TextLoader()("blank.txt", data=b"  \n\n ")
    assert err.value.reason == "empty" and str(err.value) == "blank.txt: empty file"


# ----------------------------------------------------------------------------- choosing a loader
def test_sniff_by_content_first_then_extension():
    assert sniff_format("a.txt", make_pdf(["x"])) == "pdf"
    assert sniff_format("a.bin", make_docx(para("x"))) == "docx"
    assert sniff_format("page", b"  <!doctype html><p>x") == "html"
    assert sniff_format("a.md", b"\x89PNG\r\n\x1a\n") == "binary"
    assert sniff_format("a.png", b"looks like text") == "binary"
    assert sniff_format("notes.markdown", b"# T") == "markdown"
    assert sniff_format("notes", b"just words") == "text"


def test_auto_loader_misnamed_pdf_and_binary(tmp_path: Path):
    misnamed = tmp_path / "really_a_pdf.txt"
    misnamed.write_bytes(make_pdf(["Hidden PDF text."]))
    doc = AutoLoader()(misnamed)
    assert doc.meta_data["format"] == "pdf" and doc.text == "Hidden PDF text."
    assert doc.meta_data["file_path"] == str(misnamed)
    image = tmp_path / "logo.md"
    image.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(DocumentLoadError) as err:
        load_document(image)
    assert err.value.reason == "binary"
    with pytest.raises(FileNotFoundError):
        load_document(tmp_path / "missing.pdf")


def test_load_documents_folder_reports_every_skip(tmp_path: Path):
    (tmp_path / "a.pdf").write_bytes(make_pdf(["Alice founded Acme."]))
    (tmp_path / "b.docx").write_bytes(make_docx(para("Bob joined Acme.")))
    (tmp_path / "c.html").write_text("<html><body><nav>Menu</nav><p>Carol left Acme.</p></body></html>")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.md").write_text("# Dave\n\nDave runs [Acme](x).")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / "bad.txt").write_bytes("Déjà vu ".encode("cp1252") + b"\x81\x8d\x8f\x90\x9d" * 3)
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.txt").write_text("ignored")
    report = load_documents([tmp_path])
    texts = {Path(d.meta_data["file_path"]).name: d.text for d in report.documents}
    assert texts["a.pdf"] == "Alice founded Acme."
    assert texts["b.docx"] == "Bob joined Acme."
    assert texts["c.html"] == "Carol left Acme."
    assert texts["d.md"] == "Dave\n\nDave runs Acme."
    assert "x.txt" not in texts
    reasons = {Path(p).name: r for p, r, _ in report.skipped}
    assert reasons["empty.txt"] == "empty" and reasons["img.png"] == "binary"
    assert set(reasons) <= {"empty.txt", "img.png", "bad.txt"}
    assert report.skipped_by_reason()["binary"] >= 1
