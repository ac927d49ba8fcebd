"""``MarkdownLoader``: Markdown stripped to plain text, headings kept as structure.

The file is parsed with ``markdown-it-py`` (CommonMark + tables; the ``loaders`` extra) and
rendered back as text: headings become lines of their own (no ``#``) and are listed with their
level and character offset in ``meta_data["sections"]``; links keep their text, images their alt
text; table rows become ``header: value; header: value`` lines (no ``|`` pipes); list items keep
a ``- `` bullet; code blocks keep their code, indented by four spaces as CommonMark writes an
indented code block (so that no line of code reads as prose: extractive answers do not quote
lines indented so, :func:`~lightrag.components.graph_rag.sentences.split_sentences`); inline HTML
and YAML front matter are dropped.

Example:
    >>> md = "# Acme Robotics\\n\\nSee [the site](https://acme.example).\\n\\n" \\
    ...      "| Metric | Value |\\n|---|---|\\n| Recall@2 | 0.48 |\\n"
    >>> doc = MarkdownLoader()("acme.md", data=md.encode())
    >>> print(doc.text)
    Acme Robotics
    <BLANKLINE>
    See the site.
    <BLANKLINE>
    Metric: Recall@2; Value: 0.48
    >>> doc.meta_data["sections"]
    [{'level': 1, 'title': 'Acme Robotics', 'offset': 0}]
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from lightrag.components.loaders.base import DocumentLoader, decode_text, missing_extra
from lightrag.utils.registry import register

__all__ = ["MarkdownLoader", "markdown_to_text"]

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*\n", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


CODE_INDENT = "    "  #: the prefix of each line of a code block in the text

_RUN_IN_END = re.compile(r"[.!?]\s*$")


def _run_in_heading(children: List[Any]) -> Optional[int]:
    """The index of the closing token of a paragraph's run-in heading (``**The way to grow.**
    Text...``, also with code in it: ``**`ppr` mode.** Text...``: a bold or italic lead-in ending
    with a full stop, followed by text), else None."""
    start = 1 if children and children[0].type == "text" and not children[0].content.strip() else 0
    if len(children) < start + 4 or children[start].type not in ("strong_open", "em_open"):
        return None
    closing = children[start].type.replace("_open", "_close")
    end = next((i for i in range(start + 1, len(children)) if children[i].type == closing), None)
    inner = children[start + 1:end] if end is not None else []
    if (not inner or any(c.type not in ("text", "code_inline") for c in inner)
            or not _RUN_IN_END.search(inner[-1].content) or end + 1 >= len(children)
            or children[end + 1].type != "text" or not children[end + 1].content.strip()):
        return None
    return end


def _inline_text(token: Any, paragraph: bool = False) -> str:
    """The text of an inline token. In a paragraph, a run-in heading is joined to the sentence it
    introduces with a dash ("The way to grow — One machine: ..."): split off at its full stop it
    would be a sentence of its own, which an extractive answer could quote as a fragment."""
    parts: List[str] = []
    children = list(token.children or [])
    run_in = _run_in_heading(children) if paragraph else None
    if run_in is not None:
        opened = next(i for i, c in enumerate(children) if c.type in ("strong_open", "em_open"))
        lead = "".join(c.content for c in children[opened + 1:run_in]).strip()
        parts.append(_RUN_IN_END.sub("", lead) + " —")
        children = children[run_in + 1:]
    for child in children:
        kind = child.type
        if kind in ("text", "code_inline"):
            parts.append(child.content)
        elif kind in ("softbreak",):
            parts.append(" ")
        elif kind == "hardbreak":
            parts.append("\n")
        elif kind == "image":
            parts.append(child.content or "")
        elif kind == "html_inline" and child.content.lower().startswith("<br"):
            parts.append("\n")
    return "".join(parts).strip()


class _Renderer:
    def __init__(self) -> None:
        self.out: List[str] = []
        self.sections: List[Dict[str, Any]] = []
        self.list_depth = 0
        self.item_start = False
        self.table: Optional[List[List[str]]] = None
        self.header: List[str] = []
        self.in_head = False
        self.heading: Optional[int] = None  # the level of the heading being read

    def block(self, text: str, blank: bool = True) -> None:
        if not text:
            return
        if self.item_start:
            text = "  " * (self.list_depth - 1) + "- " + text
            self.item_start = False
        elif self.list_depth:
            text = "  " * self.list_depth + text
        self.out.append(text + ("\n\n" if blank and not self.list_depth else "\n"))

    def render(self, tokens: List[Any]) -> str:
        for tok in tokens:
            if tok.type == "inline":
                self._inline(tok)
            else:
                handler = getattr(self, f"_on_{tok.type}", None)
                if handler is not None:
                    handler(tok)
        return "".join(self.out)

    def _inline(self, tok: Any) -> None:
        if self.table is not None:
            self.table[-1].append(_inline_text(tok))
        elif self.heading is not None:
            title = _inline_text(tok)
            if title:
                if self.out and not self.out[-1].endswith("\n\n"):
                    self.out.append("\n")
                self.sections.append({"level": self.heading, "title": title,
                                      "offset": len("".join(self.out).lstrip())})
                self.block(title)
        else:
            self.block(_inline_text(tok, paragraph=True))

    # One handler per block token type (``_on_<type>``); other tokens carry no text.
    def _on_heading_open(self, tok: Any) -> None:
        self.heading = int(tok.tag[1:])

    def _on_heading_close(self, tok: Any) -> None:
        self.heading = None

    def _on_bullet_list_open(self, tok: Any) -> None:
        self.list_depth += 1

    def _on_bullet_list_close(self, tok: Any) -> None:
        self.list_depth -= 1
        if not self.list_depth:
            self.out.append("\n")

    _on_ordered_list_open = _on_bullet_list_open
    _on_ordered_list_close = _on_bullet_list_close

    def _on_list_item_open(self, tok: Any) -> None:
        self.item_start = True

    def _on_fence(self, tok: Any) -> None:
        code = tok.content.rstrip("\n")
        self.block("\n".join(CODE_INDENT + line if line.strip() else "" for line in code.split("\n")))

    _on_code_block = _on_fence

    def _on_html_block(self, tok: Any) -> None:
        self.block(_TAG.sub(" ", tok.content).strip())

    def _on_table_open(self, tok: Any) -> None:
        self.table, self.header = [], []

    def _on_thead_open(self, tok: Any) -> None:
        self.in_head = True

    def _on_thead_close(self, tok: Any) -> None:
        self.in_head = False
        self.header = self.table.pop() if self.table else []

    def _on_tr_open(self, tok: Any) -> None:
        if self.table is not None:
            self.table.append([])

    def _on_table_close(self, tok: Any) -> None:
        self.block("\n".join(self._rows()))
        self.table = None

    def _rows(self) -> List[str]:
        rows = []
        for cells in self.table or []:
            if self.header and any(self.header):
                pairs = [f"{h}: {c}" if h else c for h, c in zip(self.header, cells) if c]
            else:
                pairs = [c for c in cells if c]
            if pairs:
                rows.append("; ".join(pairs))
        if not rows and self.header:
            rows.append("; ".join(h for h in self.header if h))
        return rows


def markdown_to_text(markdown: str) -> Tuple[str, List[Dict[str, Any]]]:
    """``(plain text, sections)`` for a Markdown string (see the module doc).

    Raises:
        ImportError: ``markdown-it-py`` (the ``loaders`` extra) is not installed.
    """
    from markdown_it import MarkdownIt

    body = _FRONT_MATTER.sub("", markdown, count=1)
    parser = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    renderer = _Renderer()
    text = renderer.render(parser.parse(body))
    return text.strip(), renderer.sections


@register
class MarkdownLoader(DocumentLoader):
    """Markdown to plain text with headings as structure (see the module doc)."""

    format = "markdown"
    extensions = (".md", ".markdown", ".mdown", ".mkd")

    def extract(self, data: bytes, file_path: str) -> Tuple[str, Dict[str, Any]]:
        source, encoding = decode_text(data, self.encoding, file_path)
        try:
            text, sections = markdown_to_text(source)
        except ImportError as e:
            raise missing_extra(file_path, "markdown-it-py", "Markdown") from e
        return text, {"encoding": encoding, "sections": sections,
                      "title": sections[0]["title"] if sections else None}
