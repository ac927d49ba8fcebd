"""Answers on passages shaped like the town-services corpus (benchmarks/data/town_services): a
public library's page whose opening sentence says where it is, council minutes with a vote line
per item. Each test failed before the change it guards."""

from quoted_answers import answer

from lightrag.components.graph_rag.question_types import has_candidate, words

LIBRARY = ("# Millbrook Public Library\n\nThe library is at Kiln Street 4, in the Harbour district. "
           "It moved into the old customs house in 1991.\n\n## Loans\n\nYou can borrow up to 15 "
           "items at a time. The loan period is four weeks, and a loan can be renewed once.\n\n"
           "## Our team\n\nThe library is run by head librarian Tomas Grell. He came to Millbrook "
           "in 2012.")
CITIZENS = ("# Citizens' Office\n\nThe Citizens' Office is on the ground floor of the Town Hall. "
            "Please book an appointment online.")


def test_runs_asks_what_run_by_says():
    """"runs" (four letters) was not stemmed, so "is run by" shared no verb with "Who runs the
    library?" and the passage's opening sentence was quoted."""
    text = answer("Who runs the public library?", LIBRARY, CITIZENS)
    assert text.startswith("The library is run by head librarian Tomas Grell")


def test_how_long_wants_a_number_with_a_unit_of_time_or_length():
    """"How long ..." took any number as its answer: "up to 15 items" passed for a duration."""
    question = words("How long may I keep a borrowed book?")
    assert has_candidate("The loan period is four weeks.", "number", question)
    assert not has_candidate("You can borrow up to 15 items at a time.", "number", question)
    assert has_candidate("The bridge is 1,200 m long.", "number", words("How long is the bridge?"))
    assert has_candidate("It has a 25-metre pool.", "number", words("How long is the pool?"))
    line = words("How long is the heritage line?")
    assert has_candidate("Our trains run for six and a half miles.", "number", line)
    assert has_candidate("The walk takes half an hour.", "number", line)
    old = words("How old was Tomas Grell when he came to Millbrook?")
    assert has_candidate("He came aged 41.", "number", old)
    assert has_candidate("He was 41 years old.", "number", old)
    assert not has_candidate("He came with 3 children.", "number", old)
    assert has_candidate("It has 3 floors.", "number", words("How many floors does it have?"))



MINUTES = ("# Council meeting, 3 April 2025\n\n## 1. Harbour lights\n\nCllr. Oduya proposed new "
           "lamps on the quay.\n\nVote: 8 in favour, 1 against. Carried.\n\n## 2. Dog park on the "
           "common\n\nCllr. Marek proposed a fenced dog park on the common, at a cost of €20,000.\n\n"
           "Vote: 3 in favour, 6 against. Rejected.")


def test_voted_asks_what_a_vote_line_says():
    """"voted" was stemmed to "vot" and "Vote" kept whole: the vote line shared no word with the
    question and only the proposal was quoted."""
    text = answer("How many councillors voted for the dog park?", MINUTES, CITIZENS)
    assert "Vote: 3 in favour" in text and "Vote: 8" not in text


def test_a_house_number_is_no_count():
    """"How many books does the library have?" took the "4" of "Kiln Street 4" for a count and
    quoted the address as the answer; the page gives no number of books."""
    question = words("How many books does the public library have?")
    assert not has_candidate("The library is at Kiln Street 4, in the Harbour district.", "number", question)
    assert not has_candidate("It lives at 221b Baker Street.", "number", question)
    assert has_candidate("It holds 40,000 books.", "number", question)
    text = answer("How many books does the public library have?", LIBRARY, CITIZENS)
    assert text.startswith("The quoted sentences do not give the number asked for")
