"""Answers on the packaged sample documents (what `lightrag demo` indexes), as a new user asks
them: a choice verdict quotes the dates that decide it, and a numbered name ("Voyager 1") is not
answered with its namesake's sentences ("Voyager 2 ...")."""

from pathlib import Path

import pytest

from lightrag.components.graph_rag import ExtractiveAnswerer
from lightrag.components.graph_rag.answer_namesakes import about_namesake, numbered

DOCS = {p.stem: p.read_text() for p in
        (Path(__file__).resolve().parents[1] / "lightrag" / "data" / "sample_docs").glob("*.md")}


def answer(question, *names):
    chunks = [{"chunk_id": f"c{i}", "reference_id": str(i), "content": DOCS[n]}
              for i, n in enumerate(names, start=1)]
    return ExtractiveAnswerer()(question, chunks).text


def test_a_choice_verdict_quotes_the_dates_it_read() -> None:
    text = answer("Which was launched first, Hubble or Webb?", "webb", "hubble")
    assert text.startswith("Hubble, according to the dates in the sources:")
    assert "launched in April 1990" in text and "December 25, 2021" in text
    assert text.index("April 1990") < text.index("2021")  # in the order of the options


@pytest.mark.parametrize("names", [("voyager",), ("voyager", "cassini"),
                                   ("voyager", "cassini", "apollo", "hubble", "webb")])
def test_a_numbered_name_is_not_answered_by_its_namesake(names) -> None:
    text = answer("Which moon did Voyager 1 photograph?", *names)
    assert text.startswith("Voyager 1 flew past Jupiter")
    assert "Titan, the largest moon of Saturn" in text
    assert "Voyager 2" not in text and "Great Dark Spot" not in text


def test_numbered_names() -> None:
    assert numbered("Did Apollo 11 land before Henry VIII died on 28 January 1547?") == {
        "apollo": "11", "henry": "VIII"}
    assert numbered("It launched on August 20, 1977.") == {}  # a month's day is no number
    assert about_namesake("Apollo 13 was aborted.", {"apollo": "11"})
    assert not about_namesake("Apollo 11 landed; Apollo 13 did not.", {"apollo": "11"})
    assert about_namesake("Voyager 10 is fiction.", {"voyager": "1"})  # 10 is not 1


def test_a_sentence_opening_with_an_identifier_is_a_sentence() -> None:
    """A Markdown loader drops inline code's backticks: "... criteria. `lightrag bench-prompts`
    runs ..." reached the splitter as "criteria. lightrag bench-prompts runs", one sentence, and
    the answer quoted both halves. Abbreviations and initialisms still do not end a sentence."""
    from lightrag.components.graph_rag.sentences import split_sentences

    def texts(text):
        return [s.text if hasattr(s, "text") else s for s in split_sentences(text)]

    assert texts("It lists the criteria. lightrag bench-prompts runs the variants.") == [
        "It lists the criteria.", "lightrag bench-prompts runs the variants."]
    for one in ("Bring tools, e.g. a hammer and nails.", "We met at 9 a.m. the next day.",
                "It costs approx. two dollars.", "Pi is 3.14 exactly."):
        assert texts(one) == [one]
