"""Answers on passages shaped like the laboratories corpus (benchmarks/data/laboratories):
companies, scientists and discoveries with renames, nicknames, terms of office ("chief engineer
from 1921 to 1934", tables of directors), near-namesakes, and yes/no questions that compare two
facts ("Were both founders of A and B born in Germany?")."""

import pytest

from lightrag.components.graph_rag import ExtractiveAnswerer
from lightrag.components.graph_rag.answer_candidates import answer_candidates, other_names
from lightrag.components.graph_rag.answer_comparisons import comparison_verdict, parse_comparison
from lightrag.components.graph_rag.answer_periods import asked_year, period_fit
from lightrag.components.graph_rag.answer_verdicts import choice_verdict
from lightrag.components.graph_rag.question_types import asked_event, bridge_role

VEYRA = ("Veyra Instruments\nVeyra Instruments, known as Brannox Optical Works until 1931, is a "
         "Swedish maker of telescopes based in Tarnholm. The company was founded in 1898 by the "
         "optician Ludo Brannox.")
BRANNOX = ("Ludo Brannox\nLudo Brannox (1861–1930) was a German-born optician. He was born in "
           "Kessfeld, Germany. He founded Brannox Optical Works in 1898.")
ORRIN = ("Orrin Dynamics\nOrrin Dynamics is a German electrical engineering company headquartered "
         "in Alzwerth. It was founded in 1902 by the inventor Karl Mettler as the Mettler Dynamo "
         "Company.")
METTLER = ("Karl Mettler\nKarl Mettler (1858–1929) was a German inventor. He was born in Wendelheim, "
           "Germany.")
METTLER_JR = ("Karl Mettler Jr.\nKarl Mettler Jr. (1890–1966) was a German businessman, the son of "
              "the inventor Karl Mettler. He was born in Alzwerth.")
CALDER = ("Calder Chemical\nCalder Chemical is a British chemical company. It was founded in 1905 "
          "by Harriet Calder.")
HARRIET = ("Harriet Calder\nHarriet Calder (1869–1951) was an English chemist. She was born in "
           "Wexbury, England.")
KESSLER = ("Ida Kessler\nIda Kessler (1881–1957) was a Danish chemist, not to be confused with the "
           "mineralogist Ida Kestrel. She was born in Brendstrup, Denmark. She was the first "
           "director of the Morrow Laboratory, from 1920 to 1938.")
KESTREL = ("Ida Kestrel\nIda Kestrel (1885–1944) was a Norwegian mineralogist. She was born in "
           "Fjordby, Norway.")
ARNESEN = ("Paul Arnesen\nPaul Arnesen (1895–1970) was a Danish biochemist. He directed the Morrow "
           "Institute from 1938 to 1961.")
MORROW = ("Morrow Institute\nThe Morrow Institute is a chemistry research institute in Vesterhavn, "
          "Denmark. It was called the Morrow Laboratory until 1946.\n\n"  # its table, as loaded:
          "Director: Ida Kessler; From: 1920; To: 1938\nDirector: Paul Arnesen; From: 1938; To: 1961\n"
          "Director: Sofie Brandt; From: 1961; To: 1979")


def answer(question, *contents):
    chunks = [{"chunk_id": f"c{i}", "reference_id": str(i), "content": content}
              for i, content in enumerate(contents, start=1)]
    return ExtractiveAnswerer()(question, chunks).text


def sentences_of(*contents):
    """(text, heading) of each sentence of passages written "Heading\\nText"."""
    found = []
    for content in contents:
        heading, text = content.split("\n", 1)
        found += [(s.strip() + ".", heading) for s in text.split(". ") if s.strip()]
    return found


# ---------------------------------------------------------------- which came first
def test_the_comparing_word_first_is_not_the_event_compared():
    # "the first director ... from 1920" dated both Idas (one by name in the other's passage)
    sentences = sentences_of(KESSLER, KESTREL)
    assert choice_verdict("Who was born first, Ida Kestrel or Ida Kessler?", sentences) == "Ida Kessler"


def test_a_lifespan_after_a_name_dates_that_person_not_a_namesake_it_mentions():
    sentences = [("Ida Kessler (1881–1957) was a Danish chemist, not to be confused with the "
                  "mineralogist Ida Kestrel.", ""), ("Ida Kestrel (1885–1944) was a mineralogist.", "")]
    assert choice_verdict("Who was born first, Ida Kestrel or Ida Kessler?", sentences) == "Ida Kessler"
    assert choice_verdict("Who died later, Ida Kestrel or Ida Kessler?", sentences) == "Ida Kessler"


# ---------------------------------------------------------------- a place asked of a life event
@pytest.mark.parametrize("question, event", [
    ("Where was Paul Arnesen born?", ("Paul Arnesen", "born")),
    ("In which town did Karl Mettler die?", ("Karl Mettler", "die")),
    ("Where is Tarnholm located?", None),  # sources say "a town in Y", not the verb
    ("Where was the founder of Orrin Dynamics born?", None),  # asked through another thing
])
def test_a_place_asked_of_a_life_event_names_its_subject(question, event):
    assert asked_event(question) == event


def test_another_persons_birthplace_does_not_answer_where_someone_was_born():
    text = answer("Where was Paul Arnesen born?", ARNESEN, KESSLER)
    assert text.startswith('The retrieved context does not mention "born" for Paul Arnesen')


# ---------------------------------------------------------------- who held a post when
def test_periods_hold_or_miss_a_year_and_a_lifespan_is_no_term():
    assert period_fit("Director: Paul Arnesen; From: 1938; To: 1961", 1950) is True
    assert period_fit("She was the first director, from 1920 to 1938.", 1950) is False
    assert period_fit("Paul Arnesen (1895–1970) was a Danish biochemist.", 1950) is None


def test_the_year_asked_is_the_questions_own_not_one_of_a_clause_about_something_else():
    assert asked_year("Who was the director of the Morrow Institute in 1950?", []) == 1950
    assert asked_year("Who was locomotive superintendent when the locomotive that returned to "
                      "steam in 1992 was built?", []) is None


def test_who_held_a_post_in_a_year_is_the_holder_whose_term_holds_it():
    # by the institute's old name, which her passage says: her term (1920-1938) misses 1950, and
    # the table under the new name ("It was called the Morrow Laboratory until 1946") is its own
    text = answer("Who was the director of the Morrow Laboratory in 1950?", KESSLER, MORROW, ARNESEN)
    assert "Paul Arnesen" in text.split("[")[0]  # the first quote names him
    assert "Ida Kessler" not in text.split("[")[0]


def test_who_held_a_post_when_an_event_happened_is_dated_by_the_event():
    question = "Who was chief engineer of Veyra Instruments when the Halvern Telescope was completed?"
    telescope = ("Halvern Telescope\nThe Halvern Telescope is a refracting telescope in Sweden. It was "
                 "built by Brannox Optical Works and completed in 1929.")
    chunks = [{"content": c, "reference_id": str(i)} for i, c in enumerate((telescope, KESSLER))]
    assert asked_year(question, answer_candidates(chunks)) == 1929
    text = answer(question, "Veyra Instruments\nChief engineer: Arvid Lund; From: 1898; To: 1921\n"
                  "Chief engineer: Emil Sandqvist; From: 1921; To: 1934\n"
                  "Chief engineer: Margit Olsen; From: 1934; To: 1952", telescope)
    assert "Emil Sandqvist" in text and "Margit Olsen" not in text


def test_no_holder_whose_term_misses_the_year_is_quoted_as_its_holder():
    text = answer("Who was the director of the Morrow Institute in 1990?", MORROW)
    assert not any(name in text for name in ("Ida Kessler", "Paul Arnesen", "Sofie Brandt"))


# ---------------------------------------------------------------- the role that leads on
def test_the_role_of_a_name_is_the_bridge_not_its_place():
    assert bridge_role("Where was the founder of Orrin Dynamics born?") == "founder"
    assert bridge_role("Where was the son of Karl Mettler born?") == ""
    text = answer("Where was the founder of Orrin Dynamics born?", METTLER_JR, ORRIN, METTLER)
    assert "Wendelheim" in text and "He was born in Alzwerth" not in text


VOSS = "Marta Voss\nMarta Voss (born 3 May 1980, Calderon) is a professional fencer."
CALDERON = "Calderon\nCalderon is the capital of the state of Tessaly and its largest city."
KBI = ("Tessaly Bureau of Investigation\nThe KBI maintains modern laboratories and is the primary "
       "statewide criminal investigation agency.")
FENCING = "Fencing\nFencing is a combat sport. Marta Voss won a silver medal in 2004."


def test_a_place_of_a_name_leads_on_to_what_holds_the_place():
    question = ("What is the acronym for the statewide criminal investigation agency, in the state "
                "that has the birthplace of Marta Voss as its capital?")
    assert bridge_role(question) == "" and bridge_role("Who was the mayor of the capital of Tessaly?") == ""
    for contents in ((VOSS, KBI, FENCING), (VOSS, CALDERON, KBI, FENCING)):
        text = answer(question, *contents)
        assert "Calderon" in text and "The KBI" in text and "silver medal" not in text


# ---------------------------------------------------------------- two facts compared
def test_comparing_questions_are_read_side_by_side():
    assert parse_comparison("Were both founders of A Works and B Works born in Germany?").sides == (
        "the founder of A Works", "the founder of B Works")
    assert parse_comparison("Were Ida Kestrel and Ida Kessler born in the same country?").same == "country"
    assert parse_comparison("Was Ludo Brannox born before Karl Mettler?").order == "before"
    assert parse_comparison("Was Ludo Brannox born in Germany?") is None


def test_both_founders_born_in_a_country_is_decided_by_each_founders_birthplace():
    passages = (VEYRA, BRANNOX, ORRIN, METTLER, METTLER_JR, CALDER, HARRIET)
    assert answer("Were both founders of Veyra Instruments and Orrin Dynamics born in Germany?",
                  *passages).startswith("Yes:")
    assert answer("Were both founders of Veyra Instruments and Calder Chemical born in Germany?",
                  *passages).startswith("No:")


def test_a_town_without_its_country_does_not_decide_no():
    # "born in Kessfeld" alone says nothing of Germany: undecided, not "No"
    brannox = "Ludo Brannox\nLudo Brannox (1861–1930) was an optician. He was born in Kessfeld."
    text = answer("Were both founders of Veyra Instruments and Orrin Dynamics born in Germany?",
                  VEYRA, brannox, ORRIN, METTLER)
    assert not text.startswith(("Yes", "No"))


def test_same_country_reads_each_ones_own_sentence_not_a_namesakes():
    # Ida Kessler's passage mentions Ida Kestrel: her Denmark is not Kestrel's
    assert answer("Were Ida Kestrel and Ida Kessler born in the same country?",
                  KESSLER, KESTREL).startswith("No:")
    assert answer("Are Tarnholm and Alzwerth in the same country?",
                  "Tarnholm\nTarnholm is a harbour town in southern Sweden.",
                  "Alzwerth\nAlzwerth is a river port in western Germany.",
                  "Emil Sandqvist\nHe was born in Grennby, Sweden.", METTLER).startswith("No:")


def test_born_before_is_the_choice_of_who_was_born_first():
    assert answer("Was Ludo Brannox born before Karl Mettler?", BRANNOX, METTLER).startswith("No:")
    assert answer("Was Karl Mettler born before Ludo Brannox?", BRANNOX, METTLER).startswith("Yes:")


# ---------------------------------------------------------------- other names
def test_a_former_name_or_nickname_is_read_as_the_same_thing():
    chunks = [{"content": c, "reference_id": str(i)} for i, c in enumerate((VEYRA, ORRIN, MORROW, (
        "Harriet Calder\nHarriet Calder (1869–1951), nicknamed \"the Iron Countess\" by the press, "
        "was an English chemist.")))]
    assert set(other_names(answer_candidates(chunks))) == {
        ("veyra instruments", "brannox optical works"), ("orrin dynamics", "mettler dynamo company"),
        ("morrow institute", "morrow laboratory"), ("harriet calder", "iron countess")}


def test_a_later_term_is_not_outranked_by_a_holders_own_passage():
    text = answer("Who was the director of the Morrow Institute in 1965?", MORROW, ARNESEN)
    assert text.startswith("Director: Sofie Brandt")


# ---------------------------------------------------------------- a role's holder, or nothing
def test_someone_elses_birthplace_does_not_answer_where_the_founder_was_born():
    morrow = MORROW.replace("Denmark.", "Denmark. It was founded in 1920 with a bequest from the "
                            "merchant Anders Morrow.", 1)
    text = answer("Where was the founder of the Morrow Institute born?", morrow, KESSLER)
    assert text.startswith('The retrieved context does not mention "born" for the founder of the '
                           "Morrow Institute")


def test_a_region_is_no_country_so_two_regions_decide_nothing():
    # "Hordaland" and "Norway" may well be one country: no "No" from the comma alone
    text = answer("Were Ida Kestrel and Ida Kessler born in the same country?",
                  KESSLER.replace("Brendstrup, Denmark", "Bergen, Hordaland"), KESTREL)
    assert not text.startswith(("Yes", "No"))
    assert comparison_verdict(parse_comparison("Were A Works and B Works in the same country?"),
                              ["Wexbury, England", "London, United Kingdom"]) == "Yes"


def test_a_date_of_another_event_does_not_answer_when_a_described_thing_did_something():
    text = answer("In which year did the company that built the Halvern Telescope change its name?",
                  "Halvern Telescope\nThe Halvern Telescope is a telescope in Sweden. It was built by "
                  "Brannox Optical Works and completed in 1929.",
                  "Brannox Optical Works\nBrannox Optical Works is a Swedish maker of telescopes. It "
                  "was founded in 1898 by Ludo Brannox.")
    assert text.startswith('The retrieved context does not mention "change" for the company that built')
