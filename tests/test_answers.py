"""Answers a user can trust: quoted answers, checked generated answers, a plain-text context."""

import asyncio

import numpy as np
import pytest
from graph_fakes import extraction_reply

from lightrag.components.graph_rag import (
    Chunker,
    EntityExtractor,
    ExtractiveAnswerer,
    GraphRAG,
    HeuristicKeywordExtractor,
)
from lightrag.components.graph_rag.answer_candidates import opening_subject
from lightrag.components.graph_rag.grounding import check_answer, clean_markup
from lightrag.components.graph_rag.question_types import (
    asked_event,
    asked_nouns,
    asked_role,
    choice_options,
    question_type,
)
from lightrag.components.graph_rag.sentences import split_sentences
from lightrag.components.model_client import ScriptedClient
from lightrag.core import Embedder, Generator

CHUNKS = [
    {"chunk_id": "c1", "reference_id": "1",
     "content": "The Hobbit\nThe Hobbit is a fantasy novel written by J. R. R. Tolkien. "
                "It was published in 1937 by George Allen & Unwin."},
    {"chunk_id": "c2", "reference_id": "2",
     "content": "J. R. R. Tolkien\nTolkien was an English writer. He was born in Bloemfontein "
                "in 1892."},
    {"chunk_id": "c3", "reference_id": "3",
     "content": "Python\nPython is a programming language. Its first version was released in "
                "1991 by Guido van Rossum."},
]


def quote(question, chunks=CHUNKS, **kwargs):
    return ExtractiveAnswerer(**kwargs)(question, chunks)


async def alike(texts):
    """An embedder that finds every text as close in meaning as any other."""
    return np.ones((len(texts), 4), dtype=np.float32)


def passages(*contents):
    """Chunks of the given contents ("Heading\ntext"), referenced 1, 2, ... in order."""
    return [{"chunk_id": f"c{i}", "reference_id": str(i), "content": content}
            for i, content in enumerate(contents, start=1)]


def in_context(sentence, chunks=CHUNKS):
    return any(sentence in c["content"] for c in chunks)


def test_single_hop_answer_is_a_quoted_sentence_with_its_citation():
    answer = quote("When was The Hobbit published?")
    assert "It was published in 1937 by George Allen & Unwin. [1]" in answer.text
    assert all(in_context(s.text) for s in answer.sentences)


def test_two_hop_answer_follows_the_bridge_name_to_a_second_source():
    answer = quote("In which city was the author of The Hobbit born?")
    assert "Bloemfontein" in answer.text and "[2]" in answer.text
    assert all(in_context(s.text) for s in answer.sentences)
    assert {s.reference_id for s in answer.sentences} >= {"1", "2"}


def test_a_quote_that_answers_alone_is_not_followed_by_sentences_that_only_share_a_word():
    chunks = passages(
        "The Voyager missions\nVoyager 1 was launched in 1977. Its close look at Titan, the largest "
        "moon of Saturn, showed a thick nitrogen atmosphere.",
        "Cassini\nThe Cassini orbiter discovered plumes of water erupting from Enceladus, another "
        "moon of Saturn.")
    answer = quote("What did the Voyager missions discover about Saturn and its moon Titan?", chunks)
    assert "thick nitrogen atmosphere" in answer.text
    assert "Cassini" not in answer.text and "[2]" not in answer.text  # another mission
    # a hop through a name the first quote brings still follows it
    chunks[1]["content"] = ("Nitrogen\nNitrogen is the main gas of the atmosphere of Titan and of "
                            "the Earth.")
    assert "main gas" in quote("What did Voyager find about the atmosphere of Titan, and what is "
                               "that gas known for?", chunks).text


def test_the_next_sentence_of_the_passage_that_says_the_last_question_word_is_quoted():
    chunks = passages(
        "Huygens\nThe Huygens probe, built by the European Space Agency, landed on Titan in January "
        "2005. It was the first landing in the outer Solar System, and it found river channels on "
        "the surface of Titan.",
        "European Space Agency\nThe European Space Agency is based in Paris.")
    answer = quote("What did the Huygens probe find on Titan?", chunks)
    assert "it found river channels" in answer.text  # "found" is a form of "find"


def test_a_pronoun_quote_brings_the_sentence_before_only_when_that_says_who_it_is():
    chunks = passages(
        "The toolkit\nThe toolkit has many users. Code written for its old version runs on it. It "
        "opens its store in constant time.",
        "Voyager\nVoyager 1 flew past Saturn in 1980. Its close look at Titan showed a thick "
        "nitrogen atmosphere.")
    answer = quote("How does the store open in constant time?", chunks)
    # the nearest sentence that says who "It" is, over one that only says "it" again
    assert answer.text.startswith("The toolkit has many users. [1] It opens its store in constant time.")
    assert "runs on it" not in answer.text  # it says no more than "It" who "it" is
    answer = quote("What did the close look at Titan show?", chunks)
    assert answer.text.startswith("Voyager 1 flew past Saturn in 1980. [2] Its close look")


def test_a_context_sharing_no_word_with_the_question_answers_not_found():
    answer = asyncio.run(ExtractiveAnswerer().acall("What is the capital of France?", CHUNKS, embed=alike))
    assert answer.text.startswith("The retrieved context does not contain")
    assert not answer.sentences
    assert quote("Who wrote The Hobbit?").sentences  # one shared word is enough to quote


def test_quotes_about_none_of_the_names_the_question_names_answer_not_found():
    others = ["Marie Curie\nMarie Curie was a physicist who was born in Warsaw in 1867.",
              "Budapest\nBudapest is the capital of Hungary."]
    question = "In which city was the author of The Hobbit born?"
    answer = asyncio.run(ExtractiveAnswerer().acall(question, passages(*others), embed=alike))
    assert answer.text.startswith("The retrieved context does not contain")
    assert not answer.sentences  # not Curie's birth in Warsaw: it shares "born", "city"
    with_tolkien = passages(*(c["content"] for c in CHUNKS), *others)
    answer = asyncio.run(ExtractiveAnswerer().acall(question, with_tolkien, embed=alike))
    assert "Bloemfontein" in answer.text and "Warsaw" not in answer.text


def test_a_sentence_that_answers_every_word_is_not_preceded_by_another_subject():
    chunks = passages(
        "Apollo 11\nApollo 11 launched from the Kennedy Space Center in Florida on July 16, 1969, "
        "on a Saturn V rocket.",
        "The Voyager missions\nNASA launched Voyager 2 on August 20, 1977, and Voyager 1 on "
        "September 5, 1977, from Cape Canaveral in Florida.")
    answer = asyncio.run(ExtractiveAnswerer().acall("When was Voyager 1 launched?", chunks, embed=alike))
    assert answer.text.startswith("NASA launched Voyager 2")
    assert "Apollo" not in answer.text  # it covers no question word the first one left


def test_choice_question_is_decided_from_the_years_of_the_context():
    answer = quote("Which was released first, Python or The Hobbit?")
    assert answer.question_type == "choice" and answer.decided is True
    assert answer.text.startswith("The Hobbit")


def test_yes_no_question_says_when_the_context_does_not_decide():
    answer = quote("Is Python older than the Moon?")
    assert answer.question_type == "yes_no" and answer.decided is False
    assert "do not say yes or no" in answer.text


def test_no_context_says_so_instead_of_inventing():
    answer = quote("Who wrote Hamlet?", chunks=[])
    assert "does not contain" in answer.text and not answer.sentences


def test_ranking_by_meaning_uses_the_embedder_when_given():
    calls = []

    async def embed(texts):
        calls.append(len(texts))
        return np.array([[float("born" in t), 0.1] for t in texts])

    answer = asyncio.run(ExtractiveAnswerer(max_sentences=1).acall(
        "Where was Tolkien born?", CHUNKS, embed=embed))
    assert calls and "Bloemfontein" in answer.text


def test_sentences_are_verbatim_and_skip_headings_code_and_tables():
    text = "# Install\nRun the installer. Dr. Smith wrote it in 2020.\n```\n$ pip x\n```\n|---|---|"
    found = [s.text for s in split_sentences(text)]
    assert found == ["Run the installer.", "Dr. Smith wrote it in 2020."]
    assert split_sentences(text)[0].heading == "Install"


def test_headings_inside_a_chunk_are_not_quoted_and_head_what_follows():
    """A loader writes a document's headings as lines standing alone between blank lines: such a
    line is never quoted as a sentence (answers quoted "The extractive answerer's sentence
    prefilter (before / after)"), and the sentences after it carry it as their heading. List
    items, table rows and sentences are not headings."""
    text = ("Voyager 1\nIt flew past Saturn in 1980.\n\nThe golden record\n\nIt carries "
            "sounds of Earth.\n\n- The first list item\n- Another list item\n\n"
            "Destination: Saturn; Year: 1980\n\n## Cassini\nIt orbited Saturn.")
    found = [(s.text, s.heading) for s in split_sentences(text)]
    assert found == [("It flew past Saturn in 1980.", "Voyager 1"),
                     ("It carries sounds of Earth.", "The golden record"),
                     ("The first list item", "The golden record"),
                     ("Another list item", "The golden record"),
                     ("Destination: Saturn; Year: 1980", "The golden record"),
                     ("It orbited Saturn.", "Cassini")]


def test_a_paragraph_long_sentence_is_quoted_by_its_clauses():
    """A documentation run-on past the sentence cap is kept as verbatim runs of its
    semicolon-separated clauses (it used to vanish, and with it the paragraph that answered);
    a long run without a semicolon (a flattened table) is still dropped."""
    prose = ("What a writer of a large store pays (measured at 1M chunks): about 45 documents a "
             "second (each new row lands on its own page; so the rate halves); " + "x " * 150
             + "the log is copied back in the background; but a namespace that doubled has its "
             "file rebuilt in the commit that notices (" + "y " * 120 + ").")
    table = "Code Created Region " + "216 1947 Cleveland (October 1947), " * 25
    found = [s.text for s in split_sentences(prose + "\n" + table)]
    assert len(found) >= 2 and all(len(f) <= 600 and f in prose for f in found)
    assert found[0].startswith("What a writer of a large store pays") and found[0].endswith(";")
    assert "(each new row lands on its own page; so the rate halves)" in found[0]  # not cut inside ()
    assert found[-1].endswith("y ).")


def test_a_long_clause_inside_parentheses_is_quoted_by_its_inner_clauses():
    """A run-on whose only semicolon outside parentheses leaves a run past the cap is cut at its
    semicolons inside them too, so the clause that answers is quotable (it used to be dropped)."""
    prose = ("Citations are rows (a merge inserts them by key); the property keeps a window (all "
             "of them up to 512, in citation order; " + "w " * 150 + "; a hub's window is a "
             "row of its own, written only when it changes, " + "z " * 120 + ") and a count.")
    found = [s.text for s in split_sentences(prose)]
    assert all(len(f) <= 600 and f in prose for f in found)
    assert any(f.startswith("a hub's window is a row of its own") for f in found)


def overlapping_chunks(text, size, overlap):
    """``text`` cut as the chunker cuts a document: windows that share ``overlap`` characters."""
    return [text[i:i + size] for i in range(0, len(text) - overlap, size - overlap)]


def test_a_sentence_cut_at_a_chunk_end_is_quoted_whole_from_its_neighbour():
    text = ("Cassini orbited Saturn for thirteen years and sent back thousands of images. "
            "Its Huygens probe landed on Titan in January 2005 and found rivers of liquid methane "
            "flowing into lakes near the north pole. The orbiter ended its mission in Saturn's "
            "atmosphere in 2017.")
    cut = text.index("flowing")
    first, second = text[:cut], text[cut - 120:]
    assert not first.rstrip().endswith(".")  # the chunk ends mid-sentence
    for order in ([first, second], [second, first]):
        chunks = [{"chunk_id": f"c{i}", "reference_id": "1", "file_path": "cassini.md", "content": c}
                  for i, c in enumerate(order)]
        answer = quote("What did the Huygens probe find on Titan?", chunks)
        whole = ("Its Huygens probe landed on Titan in January 2005 and found rivers of liquid methane "
                 "flowing into lakes near the north pole.")
        quoted = {s.text: s.chunk_id for s in answer.sentences}
        assert quoted.get(whole) == f"c{order.index(first)}", answer.text  # whole, from where it starts
        assert answer.text.count("Huygens") == 1  # the neighbour's opening piece is not quoted again
    other = [{"chunk_id": "c0", "reference_id": "1", "file_path": "a.md", "content": first},
             {"chunk_id": "c1", "reference_id": "2", "file_path": "b.md", "content": second}]
    assert quote("What did the Huygens probe find on Titan?", other).sentences  # other files: not joined


def test_chunks_of_a_long_document_are_read_as_one_text():
    from lightrag.components.graph_rag.sentences import continued_runs, joined_text, overlap_length

    text = " ".join(f"Sentence number {i} says something about topic {i % 7}." for i in range(200))
    chunks = overlapping_chunks(text, 900, 150)
    shuffled = chunks[::-1]
    runs = continued_runs(shuffled)
    assert len(runs) == 1 and joined_text(shuffled, runs[0]) == text
    assert overlap_length(chunks[0], chunks[2]) == 0


@pytest.mark.parametrize("question, kind", [
    ("When did Apollo 11 land?", "date"), ("How many moons has Mars?", "number"),
    ("Who wrote The Hobbit?", "name"), ("Is Paris in France?", "yes_no"),
    ("Which is older, the Eiffel Tower or Big Ben?", "choice"), ("Describe Paris.", "other")])
def test_question_types(question, kind):
    assert question_type(question) == kind


def test_choice_options():
    assert choice_options("Which is older, the Eiffel Tower or Big Ben?") == (
        "the Eiffel Tower", "Big Ben")


def test_generated_answer_markup_is_cleaned():
    raw = 'The answer is:\n<User>Lyon</User><user_id="2019"> is in France.\\u2014 ok\n```json\n'
    assert clean_markup(raw) == "Lyon is in France.\u2014 ok"
    assert clean_markup("Use `<div>` tags.") == "Use `<div>` tags."


def test_generated_answer_citations_and_support_are_checked():
    checked = check_answer(
        "Tolkien was born in Bloemfontein [2]. He landed on the Moon in 1969 [7].",
        [c["content"] for c in CHUNKS], {"1", "2", "3"}, drop_unsupported=True)
    assert checked.invalid_citations == ["7"]
    assert checked.unsupported == ["He landed on the Moon in 1969."]
    assert checked.text == "Tolkien was born in Bloemfontein [2]."


def make_rag(tmp_path, answerer):
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=256)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=extraction_reply)), max_gleaning=0),
        answer_generator=answerer, keyword_extractor=HeuristicKeywordExtractor(),
        chunker=Chunker(chunk_token_size=60, chunk_overlap_token_size=0),
        working_dir=str(tmp_path), cosine_threshold=0.0)


DOCS = {"hobbit.md": CHUNKS[0]["content"], "tolkien.md": CHUNKS[1]["content"]}


@pytest.mark.parametrize("mode", ["naive", "local", "hybrid", "mix", "ppr"])
def test_graph_rag_quotes_its_sources_in_every_mode(tmp_path, mode):
    rag = make_rag(tmp_path, ExtractiveAnswerer())
    rag.insert(list(DOCS.values()), file_paths=list(DOCS))
    result = rag.query("When was The Hobbit published?", mode=mode)
    info = result.raw_data["processing_info"]
    assert info["answerer"] == "extractive" and info["answer_sentences"]
    chunks = " ".join(c["content"] for c in result.raw_data["chunks"])
    assert all(s["text"] in chunks for s in info["answer_sentences"])
    cited = {r["reference_id"] for r in result.references}
    assert all(s["reference_id"] in cited for s in info["answer_sentences"])
    streamed = rag.query("When was The Hobbit published?", mode=mode, stream=True)
    assert "".join(streamed.response_iterator) == result.content


def test_generated_answer_reports_unsupported_sentences(tmp_path):
    answer = "The Hobbit was published in 1937 [1]. It sold a billion copies in 1950 [9]."
    rag = make_rag(tmp_path, Generator(model_client=ScriptedClient(responses=[answer], cycle=True)))
    rag.insert(list(DOCS.values()), file_paths=list(DOCS))
    result = rag.query("When was The Hobbit published?", mode="naive")
    info = result.raw_data["processing_info"]
    assert info["unsupported_sentences"] == ["It sold a billion copies in 1950."]
    assert info["invalid_citations"] == ["9"] and "[9]" not in result.content
    dropped = rag.query("When was The Hobbit published?", mode="naive", drop_unsupported=True)
    assert "billion" not in dropped.content and "1937" in dropped.content
    prompt = rag.query("When was The Hobbit published?", mode="naive", only_need_prompt=True)
    assert "```json" not in prompt.content and '{"reference_id"' not in prompt.content


def test_insert_and_query_report_usage_by_model(tmp_path):
    rag = GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=64)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=extraction_reply),
            model_kwargs={"model": "extract-model"}), max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(responses=["It was 1937 [1]."],
                                                               cycle=True),
                                   model_kwargs={"model": "answer-model"}),
        keyword_extractor=HeuristicKeywordExtractor(),
        chunker=Chunker(chunk_token_size=60, chunk_overlap_token_size=0),
        working_dir=str(tmp_path), cosine_threshold=0.0)
    result = rag.insert(list(DOCS.values()), file_paths=list(DOCS))
    assert result.usage["extract-model"]["calls"] == result.chunks
    assert "answer-model" not in result.usage
    again = rag.insert(list(DOCS.values()), file_paths=list(DOCS))
    assert again.usage == {}  # nothing extracted: already indexed
    answer = rag.query("When was The Hobbit published?", mode="naive")
    assert answer.raw_data["processing_info"]["usage"]["answer-model"]["calls"] == 1


def test_a_sentence_naming_what_the_context_never_names_is_unsupported():
    context = ["Tobias Kern owns the Sallow Yard. Tobias Kern was born in Lisk in 1950."]
    checked = check_answer("The Sallow Yard is owned by Tobias Kern [1]. Kern was born on Mars [1].",
                           context, valid_references={"1"})
    assert checked.unsupported == [s for s in checked.sentences if "Mars" in s]
    assert checked.support[0] >= 0.6  # every name of the first sentence is in the context
    fine = check_answer("However, Tobias Kern was born in Lisk [1].", context, valid_references={"1"})
    assert fine.unsupported == []  # a capitalised first word is not a name


BRIDGES = passages(
    "The Brooklyn Bridge crosses the East River in New York City. It opened on May 24, 1883. "
    "John A. Roebling designed the bridge, but he died in 1869.",
    "Tower Bridge is a bascule bridge over the River Thames in London. It opened in 1894. "
    "The architect Horace Jones designed it together with the engineer John Wolfe Barry.",
    "Golden Gate Bridge\nThe Golden Gate Bridge spans the Golden Gate strait. It opened to traffic "
    "on May 27, 1937. Charles Ellis did much of the structural design.",
    "Akashi Kaikyo Bridge\nThe Akashi Kaikyo Bridge links Kobe and Awaji Island. An earthquake "
    "moved the two towers apart during construction.")


@pytest.mark.parametrize("question, answer, other", [
    ("Who designed Tower Bridge?", "Horace Jones", "Roebling"),
    ("When did the Golden Gate Bridge open?", "1937", "1883"),
    ("Who designed the Brooklyn Bridge?", "Roebling", "Horace Jones"),
])
def test_the_answer_is_about_what_the_question_names_not_a_look_alike_passage(question, answer, other):
    """Each passage has an "opened" and a "designed" sentence: the words match in every one, so
    the quote must come from the passage about the bridge the question names (its heading, or
    the passage's opening sentence when it has none)."""
    text = quote(question, BRIDGES).text
    assert answer in text and other not in text


def test_a_choice_is_decided_by_years_its_passages_give_under_a_pronoun():
    """"It opened in 1894." says Tower Bridge's year through its passage's opening sentence, and
    "the Brooklyn Bridge" in the question is the passage's "The Brooklyn Bridge"."""
    text = quote("Which opened first, Tower Bridge or the Golden Gate Bridge?", BRIDGES).text
    assert text.startswith("Tower Bridge, according to the dates in the sources")
    text = quote("Which opened later, the Brooklyn Bridge or the Golden Gate Bridge?", BRIDGES).text
    assert text.startswith("the Golden Gate Bridge, according to the dates in the sources")


def test_a_pronoun_quote_brings_the_nearest_sentence_that_says_who_over_repeated_pronouns():
    chunks = passages(
        "Priya Lindqvist is the Institute's electronics engineer. She joined in 2018 from a "
        "start-up. She designed the Bogwatch sensor, a solar-powered device.",
        "Bogwatch\nBogwatch is a sensor network project led by Tomasz Quillfeather.")
    answer = quote("Who designed the Bogwatch sensor?", chunks)
    assert answer.text.startswith("Priya Lindqvist is the Institute's electronics engineer. [1] "
                                  "She designed the Bogwatch sensor")


def test_a_quote_that_states_the_claim_with_a_negation_answers_no():
    chunks = passages("Peat-core archive\nThe archive was started in 2010. The archive was flooded "
                      "briefly in February 2020, but no cores were lost.")
    answer = quote("Was any peat core lost when the archive flooded in 2020?", chunks)
    assert answer.text.startswith("No: The archive was flooded briefly in February 2020")
    assert answer.decided


@pytest.mark.parametrize("question, nouns", [
    ("What is Mirela Dunstan's annual salary?", ["annual", "salary"]),
    ("Which telescope does the Institute use at the station?", ["telescope"]),
    ("What record label did she sign with?", ["record", "label"]),
    ("What is the capital of France?", ["capital"]),
    ("What is the name of the band?", []),  # says nothing about what is asked
    ("What country is Pellbury in?", []),  # the answer is a name ("Veltmoor"), not "country"
    ("When was the station opened?", []),
    ("What happened to the crew?", []),
    ("What did the Voyager missions find on Titan?", []),
])
def test_the_noun_a_question_asks_for(question, nouns):
    assert asked_nouns(question) == nouns


INSTITUTE = passages(
    "Mirela Dunstan\nAs of the 2024 annual report, Mirela Dunstan is chief executive. She had "
    "been chief operating officer since 2015.",
    "Priya Lindqvist\nPriya Lindqvist is the Institute's electronics engineer. In 2021 she "
    "received the Veltmoor Innovation Medal for the Bogwatch sensor.")


def test_an_answer_says_when_the_context_never_names_what_is_asked_and_shows_the_closest():
    answer = quote("What is Mirela Dunstan's annual salary?", INSTITUTE)
    assert answer.text.startswith('The retrieved context does not mention "salary"; the closest '
                                  "evidence: As of the 2024 annual report, Mirela Dunstan is chief")
    other = quote("When did Mirela Dunstan become chief operating officer?", INSTITUTE).text
    assert "since 2015" in other and "does not mention" not in other


def test_an_answer_in_other_words_than_the_question_is_still_quoted():
    answer = quote("What award did Priya Lindqvist receive in 2021?", INSTITUTE)
    assert "received the Veltmoor Innovation Medal for the Bogwatch sensor. [2]" in answer.text
    assert "does not mention \"award\"" in answer.text
    assert not quote("What medal did Priya Lindqvist receive?", INSTITUTE).text.startswith("The retrieved")


def test_a_role_named_by_its_noun_answers_a_question_asked_with_its_verb():
    chunks = passages(
        "Director\nIn 2017 Ravi Okonkwo-Hale became director. He led the Institute through the "
        "opening of the Loch Brannagh field station.",
        "Field station\nThe Loch Brannagh field station is the Institute's second site. The station "
        "manager is Oona Ferris, who has run it since it opened.")
    text = quote("Who manages the Loch Brannagh field station?", chunks).text
    assert "The station manager is Oona Ferris" in text and "Ravi" not in text


@pytest.fixture(scope="module")
def minilm():
    """The packaged MiniLM as the answerer's ``embed`` (async texts -> vectors)."""
    from lightrag.components.model_client import LocalEmbedderClient

    embedder = Embedder(model_client=LocalEmbedderClient(), model_kwargs={"model": "all-MiniLM-L6-v2"})

    async def embed(texts):
        return np.array([d.embedding for d in embedder(input=list(texts)).data], dtype=np.float32)
    return embed


@pytest.mark.slow
def test_a_plain_text_passage_is_about_what_its_opening_sentence_names(minilm):
    chunks = passages(
        "The Loch field station is the Institute's second site. It was built with a grant from "
        "the Northern Waters Trust. It has a wet laboratory.",
        "The Harbour Trust is a charity in Pellbury. It is chaired by Tom Reed.",
        "The Northern Waters Trust is a charitable foundation based in Aberlin. It has supported "
        "wetland science since 2011. It is chaired by Margaret Ellory.")
    text = ExtractiveAnswerer()("Who chairs the organisation that funded the Loch field station?",
                                chunks, embed=minilm).text
    assert "It is chaired by Margaret Ellory. [3]" in text and "Tom Reed" not in text


@pytest.mark.parametrize("opening, subject", [
    ("The Northern Waters Trust is a charitable foundation.", "The Northern Waters Trust"),
    ("Agnes Quillfeather founded the Institute in 2009.", "Agnes Quillfeather"),
    ("It was built in 1990.", ""),
    ("In September 2017 the board appointed a director.", ""),
])
def test_what_a_passage_without_a_heading_is_about(opening, subject):
    assert opening_subject(opening) == subject


def test_a_context_that_never_names_what_the_question_asks_about_says_so():
    chunks = passages("Brooklyn Bridge\nThe Brooklyn Bridge crosses the East River. It opened on "
                      "May 24, 1883.")
    answer = quote("When did the Forth Bridge open?", chunks)
    assert answer.text.startswith("The retrieved context does not contain a sentence that answers")
    assert "Forth Bridge" in answer.text and not answer.sentences


def test_a_name_written_without_its_accents_is_the_same_name():
    chunks = passages("Akashi Kaikyō Bridge\nThe Akashi Kaikyō Bridge links Kobe and Awaji Island. "
                      "It opened in April 1998.",
                      "Brooklyn Bridge\nThe Brooklyn Bridge opened on May 24, 1883.")
    assert "It opened in April 1998. [1]" in quote("When did the Akashi Kaikyo Bridge open?", chunks).text
    assert "1998" in quote("When did the Akashi Kaikyō Bridge open?", chunks).text


def test_a_sentence_opening_with_a_pronoun_does_not_say_who_the_next_pronoun_means():
    chunks = passages("Céleste Marchetti\nCéleste Marchetti was an architect from Lunde Cove. Her "
                      "best-known work is the Ellery Lighthouse. She also designed Skarvik Town Hall.")
    text = quote("Who designed Skarvik Town Hall?", chunks).text
    assert text.startswith("Céleste Marchetti was an architect from Lunde Cove. [1] She also designed")


def test_a_hop_goes_on_in_the_passage_of_the_subject_a_quote_brought():
    chunks = passages(
        "Céleste Marchetti\nCéleste Marchetti was an architect. Her best-known work is the Ellery "
        "Lighthouse. She was born in Lunde Cove, where her father kept the inn.",
        "Skarvik\nSkarvik is the second-largest town of the archipelago, with a shipyard.")
    text = quote("In which town was the architect of the Ellery Lighthouse born?", chunks).text
    assert "She was born in Lunde Cove" in text


def test_a_name_said_in_other_order_is_named():
    chunks = passages("Lunde Cove\nLunde Cove is a village known for its Lantern Festival. The "
                      "festival was first held in 1921.")
    assert "1921" in quote("In which year was the Lantern Festival of Lunde Cove first held?", chunks).text


def test_which_is_older_compares_the_years_things_began_not_any_year_near_their_names():
    chunks = passages(
        "Agathe Corvane\nAgathe Corvane was a shipbuilder and the founder of Corvane Shipworks. "
        "She was born in 1839 in Hålvik.",
        "Corvane Shipworks\nCorvane Shipworks was a yard in Skarvik. It was founded in 1871 by "
        "Agathe Corvane. It built the tender Vigil in 1889.",
        "Archipelago Savings Bank\nThe Archipelago Savings Bank was established in 1866 by merchants.")
    text = quote("Which is older, Corvane Shipworks or the Archipelago Savings Bank?", chunks).text
    assert text.startswith("the Archipelago Savings Bank, according to the dates in the sources")


@pytest.mark.parametrize("question, event", [
    ("In which year did Henrik Sæther retire?", ("Henrik Sæther", "retire")),
    ("When was the Lantern Festival of Lunde Cove first held?", ("Lantern Festival of Lunde Cove", "held")),
    ("When did Mirela Dunstan become director?", None),  # "became", "was appointed" answer it
    ("When was the company that owns the Grey Pelican founded?", None),  # not the name's event
])
def test_the_event_a_when_question_asks_about(question, event):
    assert asked_event(question) == event


def test_a_when_question_whose_event_no_sentence_about_its_subject_says_is_hedged():
    chunks = passages("Skarvik Marine Works\nIn 1960 Reinholt handed over to Henrik Sæther, the "
                      "current managing director. Henrik Sæther was born in 1931.")
    text = quote("In which year did Henrik Sæther retire?", chunks).text
    assert text.startswith('The retrieved context does not mention "retire" for Henrik Sæther; the '
                           "closest evidence:")
    assert not quote("When was Henrik Sæther born?", chunks).text.startswith("The retrieved")


@pytest.mark.parametrize("question, role", [
    ("Who was the captain of the Grey Petrel?", ("Grey Petrel", "captain")),
    ("Who was the longest-serving master of the Grey Petrel?", ("Grey Petrel", "master")),
    ("Who runs Skarvik Marine Works today?", ("Skarvik Marine Works", "runs")),
    ("Who designed the Halvik Point Light?", ("Halvik Point Light", "designed")),
    ("Who is the son of Agathe Corvane?", None),  # "his son", "born to": too many ways
    ("Who founded the company that built the Grey Pelican?", None),  # not the name's role
    ("Who was born in Paris?", None),
])
def test_the_role_a_who_question_asks_about(question, role):
    assert asked_role(question) == role


def test_a_role_said_only_of_another_subject_is_hedged_not_given_as_the_answer():
    chunks = passages("The Grey Petrel\nThe Grey Petrel was a steam schooner launched in 1902. Her "
                      "longest-serving master was Eliska Varga.",
                      "The Grey Pelican\nThe Grey Pelican is a motor ferry launched in 1911. Her "
                      "first captain was Nils Ostergaard.")
    text = quote("Who was the captain of the Grey Petrel?", chunks).text
    assert text.startswith('The retrieved context does not mention "captain" for Grey Petrel;')
    assert quote("Who was the first captain of the Grey Pelican?", chunks).text == (
        "The Grey Pelican is a motor ferry launched in 1911. [2] Her first captain was Nils "
        "Ostergaard. [2]")


@pytest.mark.parametrize("question, source", [
    ("Who is the spouse of Lil Hardin?", "In 1924 Lil Hardin married Louis Armstrong."),
    ("When did Agathe Corvane die?", "Agathe Corvane retired in 1898; her death came in 1912."),
    ("Who leads the Lil Hardin Trust today?", "Ann Vell, the current head, leads the Lil Hardin Trust."),
])
def test_a_question_in_other_words_of_the_same_meaning_finds_its_sentence(question, source):
    chunks = passages("Marren Ferry Line\nThe Marren Ferry Line was founded in 1923 in Port Ellery. "
                      "Its ferries sail twice a day.",
                      f"Notes\nLil Hardin was a pianist from Memphis. Agathe Corvane built ships. {source}")
    assert source in quote(question, chunks).text


def test_the_noun_naming_the_kind_of_answer_is_said_by_a_place_after_in():
    chunks = passages("Marie Curie\nMarie Curie was a physicist who was born in Warsaw in 1867.",
                      "Warsaw\nWarsaw is the capital and largest city of Poland.")
    assert quote("In which city was Marie Curie born?", chunks).text == (
        "Marie Curie was a physicist who was born in Warsaw in 1867. [1]")


@pytest.mark.parametrize("question, source", [
    ("When did NASA's Apollo 11 land?", "Apollo 11 landed on the Moon in July 1969."),
    ("Who is JRR Tolkien?", "J. R. R. Tolkien was an English writer and philologist."),
    ("What did Ms. hooks write?", "The writer bell hooks wrote Ain't I a Woman in 1981."),
])
def test_possessives_honorifics_and_initials_do_not_make_a_named_subject_missing(question, source):
    text = quote(question, passages(f"Notes\n{source} It was widely read.")).text
    assert not text.startswith("The retrieved context") and source in text
