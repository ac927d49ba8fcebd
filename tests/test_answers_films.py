"""Answers on passages shaped like 2WikiMultiHopQA articles (benchmarks/data/films): titles
that hold "Last", lists of films with their years, in-laws, spouses, places and pronouns after
an opening phrase."""

import pytest

from lightrag.components.graph_rag import ExtractiveAnswerer
from lightrag.components.graph_rag.answer_verdicts import choice_verdict
from lightrag.components.graph_rag.answer_words import stems
from lightrag.components.graph_rag.question_types import asked_role, has_candidate


def quote(question, *contents):
    chunks = [{"chunk_id": f"c{i}", "reference_id": str(i), "content": content}
              for i, content in enumerate(contents, start=1)]
    return ExtractiveAnswerer()(question, chunks).text


FILMS = [("The Last Ferry to Dunmarra is a 1968 British drama film.", "The Last Ferry to Dunmarra"),
         ("Return to Pellona is a 1984 Italian drama film.", "Return to Pellona")]


def test_a_title_holding_last_does_not_turn_first_into_later():
    assert choice_verdict("Which film came out first, Return to Pellona or The Last Ferry to Dunmarra?",
                          FILMS) == "The Last Ferry to Dunmarra"
    assert choice_verdict("Which film came out later, Return to Pellona or The Last Ferry to Dunmarra?",
                          FILMS) == "Return to Pellona"


def test_a_list_of_films_gives_each_the_year_beside_its_name():
    sentences = [("Her films include The Glass Orchid (1963) and Red Kestrel (1975).", "Mirela Dragan"),
                 ("Harbour of Ashes is a 1972 Japanese drama film.", "Harbour of Ashes")]
    assert choice_verdict("Which film came out first, Red Kestrel or Harbour of Ashes?", sentences) == \
        "Harbour of Ashes"


def test_in_law_is_one_word():
    assert "law" not in stems("Who is Aurelio Vantelli's mother-in-law?")
    assert stems("the father of X") & stems("the son of Y")  # a parent and a child meet


@pytest.mark.parametrize("question, role", [
    ("Who was the spouse of Thomas Marsden?", ("Thomas Marsden", "spouse")),
    ("Who is the paternal grandfather of Aurelio Vantelli Jr.?", None),
    ("Who is the father of Ottavio Vantelli?", None),
])
def test_a_spouse_is_a_role_and_family_words_are_not(question, role):
    assert asked_role(question) == role


def test_another_persons_marriage_does_not_answer_who_the_spouse_is():
    text = quote("Who was the spouse of Thomas Marsden?",
                 "Thomas Marsden\nThomas Marsden (1931–1999) was an English composer. He wrote "
                 "the scores of nine films.",
                 "Helga Marsden\nHelga Marsden (1903–1971) was an English novelist. She married the "
                 "publisher Edmund Kerr in 1930.")
    assert text.startswith('The retrieved context does not mention "spouse" for Thomas Marsden;')


def test_a_month_is_not_a_name_and_where_asks_for_a_place():
    assert not has_candidate("She was born on 11 April 1930.", "name", set())
    text = quote("Where did Ottavio Vantelli die?",
                 "Ottavio Vantelli\nOttavio Vantelli (born 2 May 1889 – died 30 January 1960) was an "
                 "Italian stage actor. Ottavio Vantelli died in Florence in 1960.")
    assert "died in Florence" in text


def test_a_pronoun_after_an_opening_phrase_brings_who_it_means():
    text = quote("Who directed The Salt Widow?",
                 "Kenji Morisaki\nKenji Morisaki was a Japanese film director.\n\nMorisaki directed "
                 "twenty-six feature films. In 1966 he directed The Salt Widow, an adaptation of Helga "
                 "Marsden's novel.")
    assert text.startswith("Morisaki directed twenty-six feature films. [1] In 1966 he directed")
