"""The extractive answer's cost and first quote: few sentences embedded, the answer leads."""

import asyncio

import numpy as np
import pytest

from lightrag.components.graph_rag import ExtractiveAnswerer
from lightrag.components.graph_rag.answer_words import phrase_share, phrases, stems
from lightrag.components.graph_rag.sentence_prefilter import Lexical, keep_best

FILLER = [f"Filler topic {i} talks about gardening, cooking and weather in town {i}." for i in range(60)]


def padded_chunks(answer: str, answer_chunk: int = 5, chunks: int = 8) -> list:
    """Chunks of unrelated sentences, one chunk holding ``answer`` in its middle."""
    out = []
    for i in range(chunks):
        sentences = FILLER[i * 7:(i + 1) * 7]
        if i == answer_chunk:
            sentences = sentences[:3] + [answer] + sentences[3:]
        out.append({"chunk_id": f"c{i}", "reference_id": str(i + 1), "content": " ".join(sentences)})
    return out


class RecordingEmbedder:
    """A deterministic embedder (bag of hashed words) that records each call's batch size."""

    def __init__(self) -> None:
        self.batches: list = []
        self.texts: list = []

    async def __call__(self, texts):
        self.batches.append(len(texts))
        self.texts.append(list(texts))
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in stems(text):
                out[row, hash(word) % 64] += 1.0
        return out


def answer(question, chunks, embed=None, **kwargs):
    return asyncio.run(ExtractiveAnswerer(**kwargs).acall(question, chunks, embed=embed))


def test_keep_best_keeps_the_best_in_context_order_and_breaks_ties_by_place():
    items = [Lexical(0.2, 0, 0), Lexical(0.9, 3, 1), Lexical(0.5, 1, 2), Lexical(0.5, 0, 4)]
    assert keep_best(items, limit=2, rank_prior=0.0) == [1, 3]  # 0.5 tie: the earlier chunk
    assert keep_best(items, limit=None, rank_prior=0.0) == [0, 1, 2, 3]
    assert keep_best(items, limit=10, rank_prior=0.0) == [0, 1, 2, 3]
    # a strong prior for the chunk's rank: the 0.9 of the fourth chunk loses to a 0.5 of the first
    assert keep_best(items, limit=1, rank_prior=0.5) == [3]


def test_keep_best_refuses_a_negative_limit():
    with pytest.raises(ValueError, match="limit"):
        keep_best([Lexical(0.1, 0, 0)], limit=-1, rank_prior=0.0)


@pytest.mark.parametrize("name", ["max_embedded", "embed_chars"])
@pytest.mark.parametrize("bad", [0, -3, 2.5, "48"])
def test_the_embedding_limits_must_be_positive_integers_or_none(name, bad):
    with pytest.raises(ValueError, match=name):
        ExtractiveAnswerer(**{name: bad})


def test_a_long_sentence_is_embedded_cut_at_a_word_end():
    embed = RecordingEmbedder()
    long_sentence = "The Eiffel Tower was completed in 1889 " + "and admired by visitors " * 20 + "today."
    answer("When was the Eiffel Tower completed?", [{"content": long_sentence, "reference_id": "1"}],
           embed=embed, embed_chars=60)
    embedded = embed.texts[0][0]
    assert len(embedded) <= 60 and long_sentence.startswith(embedded) and not embedded.endswith(" ")


def test_phrases_are_adjacent_question_words():
    assert phrases("What does lightrag check do?") == {("lightrag", "check")}
    question = phrases("What does lightrag check do?")
    assert phrase_share(phrases("Run lightrag check on the store."), question) == 1.0
    assert phrase_share(phrases("lightrag can check it"), question) == 0.0


def test_no_more_sentences_are_embedded_than_the_cap_however_long_the_context():
    embed = RecordingEmbedder()
    chunks = padded_chunks("The Eiffel Tower was completed in 1889 for the World's Fair.")
    result = answer("When was the Eiffel Tower completed?", chunks, embed=embed, max_embedded=8)
    assert "1889" in result.text
    assert max(embed.batches) <= 8
    total = sum(len(c["content"].split(". ")) for c in chunks)
    assert total > 50  # the context holds far more sentences than were embedded


def test_without_a_cap_every_sentence_is_embedded():
    embed = RecordingEmbedder()
    chunks = padded_chunks("The Eiffel Tower was completed in 1889 for the World's Fair.")
    answer("When was the Eiffel Tower completed?", chunks, embed=embed, max_embedded=None)
    assert max(embed.batches) == 57  # 8 chunks of 7 filler sentences, and the answer


def test_the_prefilter_keeps_the_sentence_holding_the_question_phrase():
    distractors = [f"The lightrag command {i} can check option {i} and more." for i in range(20)]
    target = "Running lightrag check lists every broken invariant of the store."
    opening = "Commands of the tool, one by one."
    chunks = [{"chunk_id": "a", "reference_id": "1", "content": " ".join([opening, *distractors[:10]])},
              {"chunk_id": "b", "reference_id": "2",
               "content": " ".join([opening, *distractors[10:], target])}]
    embed = RecordingEmbedder()
    result = answer("What does lightrag check do?", chunks, embed=embed, max_embedded=1)
    assert embed.texts[0] == [target]  # the one sentence embedded
    assert result.sentences[0].text == target


def test_a_second_answer_on_the_same_context_embeds_no_sentence_again():
    embed = RecordingEmbedder()
    answerer = ExtractiveAnswerer(max_embedded=8)
    chunks = padded_chunks("The Eiffel Tower was completed in 1889 for the World's Fair.")
    first = asyncio.run(answerer.acall("When was the Eiffel Tower completed?", chunks, embed=embed))
    calls = len(embed.batches)
    again = asyncio.run(answerer.acall("When was the Eiffel Tower completed?", chunks, embed=embed))
    assert again.text == first.text
    assert all(size == 1 for size in embed.batches[calls:])  # only the question, no sentence


MISSIONS = [
    {"chunk_id": "g", "reference_id": "1",
     "content": "The Galileo mission\nNASA launched Galileo in October 1989 from the Kennedy Space "
                "Center. Galileo reached Jupiter in 1995. Its close look at Io, the volcanic moon "
                "of Jupiter, showed lava lakes and plumes of sulfur."},
    {"chunk_id": "j", "reference_id": "2",
     "content": "The Juno mission\nThe Juno orbiter studied the clouds of Jupiter and discovered "
                "cyclones at the poles. NASA ended the Juno prime mission in 2021 at the Kennedy "
                "Space Center after its last orbit."},
]


def test_an_untyped_question_is_answered_first_by_the_sentence_naming_its_subjects():
    result = answer("What did the Galileo mission discover about Jupiter and its moon Io?", MISSIONS,
                    embed=RecordingEmbedder())
    texts = [s.text for s in result.sentences]
    io = "Its close look at Io, the volcanic moon of Jupiter, showed lava lakes and plumes of sulfur."
    assert io in texts[:2]  # after the sentence that says who "Its" is, at most
    assert texts[0] in ("Galileo reached Jupiter in 1995.", io)
    assert "Juno" not in texts[0]
    assert result.text.startswith(texts[0])


def test_a_list_item_is_quoted_without_its_marker_and_verbatim():
    from lightrag.components.graph_rag.sentences import split_sentences

    item = "each commit is atomic, and lightrag check lists any broken invariant;"
    chunk = f"Storage\n- {item}\n2. Run it again."
    texts = [s.text for s in split_sentences(chunk)]
    assert texts == [item, "Run it again."]
    assert all(t in chunk for t in texts)
