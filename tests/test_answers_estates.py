"""Answers on passages shaped like the estates corpus (benchmarks/data/estates): country houses,
their architects and owners, biographies whose sentences open with "She", an FAQ whose answers
open with a bare "Yes.", and facts asked of one house that only another house's passage gives.
Each test failed before the change it guards."""

from quoted_answers import answer

CASTLEBROOK = ("Castlebrook Hall\nCastlebrook Hall stands on a low rise above the River Sallow. It "
               "was built between 1796 and 1801 for Sir Ambrose Thorncastle. The architect was "
               "Jonas Pellew.\n\nRooms: 42, including a library of about 6,000 volumes")
ASHGROVE = ("Ashgrove House\nAshgrove House stands at the end of a lime avenue near Kelby. It is a "
            "small villa famous for its water garden.")
TRUST = ("Harrowmere Heritage Trust\nThe Harrowmere Heritage Trust is a charity that cares for "
         "historic buildings. It was founded in 1951 by Margaret Ellery, a retired headmistress.")
AMBERLEY = ("Ruth Amberley\nRuth Amberley was born in Dunmoor in 1881, the daughter of a builder. "
            "She trained as an architect in London.")
GARROW = ("Clara Garrow\nClara Garrow was born in Dunmoor on 2 April 1820. She opened a school for "
          "girls in 1851. She was also active in the town. She campaigned for a public library. "
          "She never married. She died in Dunmoor in 1899.")
FAQ = ("Visitor questions\nCan I get a refund — Yes. To cancel a booking, email the bookings "
       "office at least 48 hours before your visit. The money is paid back within 10 working days.")


def test_started_asks_what_founded_says():
    text = answer("Who started the Harrowmere Heritage Trust?", TRUST, ASHGROVE)
    assert "Margaret Ellery" in text and "does not mention" not in text


def test_designed_asks_what_the_architect_says():
    assert "Jonas Pellew" in answer("Who designed Castlebrook Hall?", CASTLEBROOK, ASHGROVE)


def test_a_she_sentence_is_quoted_with_the_sentence_naming_her():
    """Every sentence before "She died in Dunmoor in 1899." opens with "She": quoted bare after
    Ruth Amberley's birth, it read as her death."""
    text = answer("When did Ruth Amberley die?", AMBERLEY, GARROW)
    if "She died in Dunmoor" in text:
        assert text.index("Clara Garrow was born") < text.index("She died in Dunmoor")


def test_a_bare_yes_is_followed_by_how():
    text = answer("How do I get a refund for my tickets?", FAQ, ASHGROVE)
    assert "48 hours" in text


def test_a_number_of_another_house_does_not_answer_for_this_one():
    text = answer("How many rooms does Ashgrove House have?", ASHGROVE, CASTLEBROOK)
    assert text.startswith("The quoted sentences do not give the number asked for")
    own = "Castlebrook Hall\nCastlebrook Hall has 42 rooms, including a library."
    assert answer("How many rooms does Castlebrook Hall have?", ASHGROVE, own).startswith(
        "Castlebrook Hall has 42 rooms")


def test_filler_words_are_not_the_thing_asked_for():
    """"How many rooms are there ...?" said the context does not mention "there", and "When did
    ... catch fire?" that it does not mention "catch", before quoting the answer."""
    own = "Castlebrook Hall\nCastlebrook Hall has 42 rooms, including a library."
    fire = ("The Castlebrook fire of 1917\nOn the night of 3 February 1917 a fire broke out in the "
            "kitchens of Castlebrook Hall.")
    rooms = answer("How many rooms are there in Castlebrook Hall?", own, ASHGROVE)
    assert "42 rooms" in rooms and "does not mention" not in rooms
    when = answer("When did Castlebrook Hall catch fire?", fire, ASHGROVE)
    assert "1917" in when and "does not mention" not in when


LARKHILL = ("Larkhill House\nLarkhill House lies a mile south of Oxley. It has been a hotel since "
            "1988. The house is privately owned and is not cared for by the Heritage Trust, but "
            "the hotel lets non-residents see the great hall by appointment.")


def test_a_negation_in_another_clause_does_not_answer_no():
    """"Is Larkhill House a hotel?" answered "No:" because the sentence that names the hotel
    says the house "is not cared for by the Heritage Trust"."""
    assert answer("Is Larkhill House a hotel?", LARKHILL).startswith("Yes: It has been a hotel since 1988.")
    assert answer("Is Larkhill House cared for by the Heritage Trust?", LARKHILL).startswith("No:")


def test_over_the_next_years_he_is_quoted_with_who_he_is():
    """"Over the next twenty years he designed ..." was quoted bare (only "In", "After", ...
    were read as an opening phrase before a pronoun)."""
    from lightrag.components.graph_rag.quote_order import leading_pronoun

    assert leading_pronoun("Over the next twenty years he designed several houses.") == "he"
    pellew = ("Jonas Pellew\nJonas Pellew was born in 1741 in Tregarrow. He trained as a carpenter. "
              "In 1770 he moved to Dunmoor. His first building was the Assembly Rooms. It made his "
              "name. Over the next twenty years he designed several country houses in the county.")
    text = answer("Who designed several country houses in the county?", pellew)
    assert "Jonas Pellew" in text and text.index("Jonas Pellew") < text.index("he designed")


def test_a_date_in_the_passage_that_names_the_subject_answers():
    """"In which year did Oldbrack and Fennick Vale become one town?" said the quotes "do not give
    the date asked for" before quoting "On 1 January 1971 the two were merged" (its sentence
    names neither place; the sentence before it, also quoted, names both)."""
    town = ("Brackenfold\nUntil 1971 there was no place called Brackenfold. The market town of "
            "Oldbrack lay on the north bank of the River Fold, and the village of Fennick Vale on "
            "the hills to the south. On 1 January 1971 the two became one town.")
    text = answer("In which year did Oldbrack and Fennick Vale become one town?", town)
    assert "1971" in text and "do not give" not in text
