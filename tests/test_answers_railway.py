"""Answers on passages shaped like the railway corpus (benchmarks/data/railway): verdicts read
one sentence or the question's own event, and quotes that hold no answer say so."""

import pytest

from lightrag.components.graph_rag import ExtractiveAnswerer
from lightrag.components.graph_rag.answer_verdicts import choice_verdict
from lightrag.components.graph_rag.answer_words import stem
from lightrag.components.graph_rag.question_types import has_candidate


def quote(question, *contents):
    chunks = [{"chunk_id": f"c{i}", "reference_id": str(i), "content": content}
              for i, content in enumerate(contents, start=1)]
    return ExtractiveAnswerer()(question, chunks).text


def test_yes_needs_one_sentence_stating_the_claim_not_words_pooled_from_several():
    text = quote("Did Margery Quaile design the Anvil Viaduct?",
                 "Margery Quaile\nMargery Quaile was the locomotive superintendent of the railway. "
                 "She designed the Class K tank engines.",
                 "Anvil Viaduct\nThe Anvil Viaduct carries the railway across the River Loam. It "
                 "was designed by Josiah Threlkeld and opened in 1868.")
    assert not text.startswith("Yes")
    assert quote("Did Josiah Threlkeld design the Anvil Viaduct?",
                 "Anvil Viaduct\nThe Anvil Viaduct carries the railway across the River Loam. The "
                 "Anvil Viaduct was designed by Josiah Threlkeld.").startswith("Yes:")


def test_a_closing_question_compares_closings_not_openings():
    sentences = [("Pellow Works opened in 1874 to build and repair engines.", "Pellow Works"),
                 ("The works closed in 1959.", "Pellow Works"),
                 ("The Fenwyck branch opened in 1883.", "Fenwyck branch"),
                 ("The branch closed to passengers in 1931.", "Fenwyck branch")]
    assert choice_verdict("Which closed first, Pellow Works or the Fenwyck branch?", sentences) == \
        "the Fenwyck branch"
    assert choice_verdict("Which closed last, Pellow Works or the Fenwyck branch?", sentences) == \
        "Pellow Works"
    assert choice_verdict("Which opened first, Pellow Works or the Fenwyck branch?", sentences) == \
        "Pellow Works"


def test_options_that_name_an_event_of_a_thing_read_that_event():
    bogwatch = "bogwatch is a sensor network project."  # the passage's opening, folded
    sentences = [("It opened in June 2019 on the shore of the loch.", "The Loch Brannagh field station",
                  "the loch brannagh field station is the institute's second site."),
                 ("It began in April 2020 and is led by Tomasz Quillfeather.", "Bogwatch", bogwatch),
                 ("Bogwatch is a sensor network project.", "Bogwatch", bogwatch)]
    question = ("Which came first, the opening of the Loch Brannagh field station or the start "
                "of the Bogwatch project?")
    assert choice_verdict(question, sentences) == "the opening of the Loch Brannagh field station"


@pytest.mark.parametrize("a, b", [("close", "closed"), ("closes", "closing"), ("drove", "drive"),
                                  ("driver", "drives"), ("struck", "strike")])
def test_forms_of_one_verb_meet(a, b):
    assert stem(a) == stem(b)


@pytest.mark.parametrize("sentence, kind, holds", [
    ("Its first chief engineer designed its largest structure.", "name", False),
    ("It was designed by Josiah Threlkeld.", "name", True),
    ("The Class K were small 4-4-0 tank locomotives.", "number", False),
    ("The line opened to passengers on 14 May 1868.", "number", False),
    ("Engine No. 4 was withdrawn in 1950.", "number", False),
    ("No.: 8; Name: Hobby; Built: 1893; Withdrawn: 1955", "number", False),
    ("They were designed by M. Quaile, and six were built between 1890 and 1896.", "number", True),
    ("Six were built at Pellow Works.", "number", True),
    ("It carried 1,200 passengers a day.", "number", True),
])
def test_what_counts_as_a_name_or_a_number(sentence, kind, holds):
    assert has_candidate(sentence, kind, {"class", "locomotives", "built"}) is holds


def test_quotes_without_the_kind_of_answer_asked_for_are_evidence_not_the_answer():
    text = quote("Who designed the largest structure of the railway?",
                 "Oskerby station\nOskerby station was bought by the railway in 1872. Its waiting "
                 "room was rebuilt in brick.",
                 "Brevant Valley Railway\nThe railway opened in 1868. Its first chief engineer "
                 "designed its largest structure.")
    assert text.startswith("The quoted sentences do not give the name asked for; the closest evidence:")
    assert not quote("Who designed the Anvil Viaduct?",
                     "Anvil Viaduct\nThe Anvil Viaduct was designed by Josiah Threlkeld.").startswith(
        "The quoted")


def test_a_faq_question_line_heads_its_answer():
    from lightrag.components.graph_rag.sentences import split_sentences

    faq = ("# Visiting the railway\n\n**How long is the line?**\nOur trains run for six and a half "
           "miles. A return trip takes an hour.\n\nQ: Are dogs allowed?\nDogs on a lead are welcome.")
    found = [(s.heading, s.text) for s in split_sentences(faq)]
    assert found == [
        ("Visiting the railway: How long is the line?", "Our trains run for six and a half miles."),
        ("Visiting the railway: How long is the line?", "A return trip takes an hour."),
        ("Visiting the railway: Are dogs allowed?", "Dogs on a lead are welcome.")]
    assert quote("How long is the line?", faq).startswith("Our trains run for six and a half miles. [1]")
