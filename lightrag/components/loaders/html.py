"""``HTMLLoader``: the main text of a web page (stdlib ``html.parser``, no extra needed).

What is dropped: ``script``, ``style``, ``noscript``, ``template``, ``svg``, ``head`` (the
``<title>`` goes to ``meta_data["title"]``), navigation and page furniture (``nav``, ``header``,
``footer``, ``aside``, ``form``, ``menu``, ``dialog``, ``button``, elements with
``role="navigation|banner|contentinfo|menu|search"``, ``hidden`` or ``aria-hidden="true"``).
When the page has a ``<main>`` (or ``role="main"``) only its text is kept, else its
``<article>`` elements, else the whole ``<body>``. Block elements (paragraphs, headings, list
items, table rows, ...) end lines; headings are listed in ``meta_data["sections"]``; table cells
are joined with ``"; "``.

Example:
    >>> page = b"<html><head><title>Acme</title><script>x=1</script></head><body>" \\
    ...        b"<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>" \\
    ...        b"<main><h1>Acme Robotics</h1><p>Acme builds <b>robots</b>.</p></main>" \\
    ...        b"<footer>(c) 2024</footer></body></html>"
    >>> doc = HTMLLoader()("acme.html", data=page)
    >>> print(doc.text)
    Acme Robotics
    <BLANKLINE>
    Acme builds robots.
    >>> doc.meta_data["title"]
    'Acme'
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any, Dict, List, Optional, Tuple

from lightrag.components.loaders.base import DocumentLoader, decode_text
from lightrag.utils.registry import register

__all__ = ["HTMLLoader", "html_to_text"]

SKIP_TAGS = {"script", "style", "noscript", "template", "svg", "head", "nav", "header", "footer",
             "aside", "form", "menu", "dialog", "button", "select", "iframe", "object", "canvas"}
SKIP_ROLES = {"navigation", "banner", "contentinfo", "menu", "menubar", "search", "complementary"}
BLOCK_TAGS = {"p", "div", "section", "article", "main", "li", "dt", "dd", "blockquote", "pre",
              "tr", "table", "ul", "ol", "dl", "figure", "figcaption", "address", "hr", "br",
              "h1", "h2", "h3", "h4", "h5", "h6", "caption", "details", "summary", "body"}
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
             "source", "track", "wbr"}
_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_.:-]+)", re.IGNORECASE)
_SPACES = re.compile(r"[ \t\f\v\u00a0]+")
_SOFT, _PARA = "\x1e", "\x1d"  # a line end, a paragraph end (collapsed by _clean)
_BREAKS = re.compile(r"[ \t]*[\x1d\x1e][\x1d\x1e \t\n]*")


class _Extractor(HTMLParser):
    """Collects text per region: ``main``, ``article`` and ``body``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: List[Tuple[str, bool]] = []  # (tag, starts a skipped subtree)
        self.skip_depth = 0
        self.pre_depth = 0
        self.main_depth = 0
        self.article_depth = 0
        self.regions: Dict[str, List[str]] = {"main": [], "article": [], "body": []}
        self.sections: Dict[str, List[Tuple[int, str]]] = {"main": [], "article": [], "body": []}
        self.heading: Optional[Tuple[int, List[str]]] = None
        self.title: List[str] = []
        self.in_title = False
        self.cell_open = False

    def _targets(self) -> List[str]:
        names = ["body"]
        if self.main_depth:
            names.append("main")
        if self.article_depth:
            names.append("article")
        return names

    def _emit(self, text: str) -> None:
        for name in self._targets():
            self.regions[name].append(text)

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in VOID_TAGS:
            if not self.skip_depth:
                self._void(tag, attrs)
            return
        attributes = {k.lower(): (v or "") for k, v in attrs}
        skip = (tag in SKIP_TAGS or attributes.get("role", "").lower() in SKIP_ROLES
                or "hidden" in attributes or attributes.get("aria-hidden", "").lower() == "true")
        self.stack.append((tag, skip))
        if skip:
            self.skip_depth += 1
        if self.skip_depth:
            return
        if tag == "main" or attributes.get("role", "").lower() == "main":
            self.main_depth += 1
            self.stack[-1] = (tag, False)
            self.stack.append(("\x00main", False))
        self._open(tag)

    def _void(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        """A ``<br>``/``<hr>`` ends the line; an ``<img>`` stands for its alt text."""
        if tag in ("br", "hr"):
            self._emit(_SOFT)
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt:
                self._emit(f" {alt} ")

    def _open(self, tag: str) -> None:
        """What a tag that is not skipped starts: a region, a cell, a heading, a block."""
        if tag == "article":
            self.article_depth += 1
        if tag == "pre":
            self.pre_depth += 1
        if tag in ("td", "th"):
            if self.cell_open:
                self._emit("; ")
            self.cell_open = True
        if tag in HEADINGS:
            self.heading = (int(tag[1]), [])
            self._emit(_PARA)
        elif tag in BLOCK_TAGS:
            self._emit(_SOFT)
        if tag == "tr":
            self.cell_open = False
        if tag == "li":
            self._emit("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in VOID_TAGS or not any(t == tag for t, _ in self.stack):
            return
        while self.stack:
            name, skip = self.stack.pop()
            if name == "\x00main":
                self.main_depth -= 1
                continue
            if skip:
                self.skip_depth -= 1
            elif not self.skip_depth:
                self._close(name)
            if name == tag:
                break

    def _close(self, tag: str) -> None:
        if tag == "article":
            self.article_depth -= 1
            self._emit(_PARA)
        if tag == "pre":
            self.pre_depth -= 1
        if tag in HEADINGS and self.heading is not None:
            level, parts = self.heading
            title = _SPACES.sub(" ", "".join(parts)).strip()
            if title:
                for name in self._targets():
                    self.sections[name].append((level, title))
            self.heading = None
            self._emit(_PARA)
        elif tag in ("p", "table", "ul", "ol", "dl", "blockquote", "pre", "figure"):
            self._emit(_PARA)
        elif tag in BLOCK_TAGS:
            self._emit(_SOFT)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.skip_depth or not data:
            return
        if not self.pre_depth:
            data = _SPACES.sub(" ", data.replace("\n", " "))
        if self.heading is not None:
            self.heading[1].append(data)
        self._emit(data)


def _clean(text: str) -> str:
    text = _BREAKS.sub(lambda m: "\n\n" if _PARA in m.group() else "\n", text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    out: List[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    return "\n".join(out).strip()


def html_to_text(html: str) -> Tuple[str, Dict[str, Any]]:
    """``(main text, {"title", "sections", "region"})`` of an HTML string (see the module doc).

    Example:
        >>> html_to_text("<ul><li>one</li><li>two</li></ul>")[0]
        '- one\\n- two'
    """
    parser = _Extractor()
    parser.feed(html)
    parser.close()
    region = next((name for name in ("main", "article", "body")
                   if _clean("".join(parser.regions[name]))), "body")
    text = _clean("".join(parser.regions[region]))
    sections: List[Dict[str, Any]] = []
    cursor = 0
    for level, title in parser.sections[region]:
        found = text.find(title, cursor)
        if found >= 0:
            cursor = found + len(title)
        sections.append({"level": level, "title": title, "offset": found})
    title = _SPACES.sub(" ", "".join(parser.title)).strip() or None
    return text, {"title": title, "sections": sections, "region": region}


def _declared_charset(data: bytes) -> Optional[str]:
    match = _CHARSET.search(data[:4096])
    return match.group(1).decode("ascii", "replace") if match else None


@register
class HTMLLoader(DocumentLoader):
    """An HTML page's main text (see the module doc); the page's ``<meta charset>`` is used when
    the bytes are not UTF-8 and no ``encoding`` is given."""

    format = "html"
    extensions = (".html", ".htm", ".xhtml")

    def extract(self, data: bytes, file_path: str) -> Tuple[str, Dict[str, Any]]:
        source, encoding = decode_text(data, self.encoding or _declared_charset(data), file_path)
        text, meta = html_to_text(source)
        return text, {"encoding": encoding, **meta}
