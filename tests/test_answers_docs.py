"""Answers on documentation-shaped text (versions, fragments) and facts asked of one name."""

from lightrag.components.graph_rag import ExtractiveAnswerer
from lightrag.components.graph_rag.question_types import direct_subject, has_candidate
from lightrag.components.graph_rag.sentences import split_sentences


def quote(question, *contents):
    chunks = [{"chunk_id": f"c{i}", "reference_id": str(i), "content": content}
              for i, content in enumerate(contents, start=1)]
    return ExtractiveAnswerer()(question, chunks).text


def test_a_version_is_not_a_count():
    assert not has_candidate("Ray 2.60 enables token authentication.", "number", set())
    assert not has_candidate("Install version 1.4.2 first.", "number", set())
    assert has_candidate("It holds 2.5 million rows.", "number", set())
    text = quote("How much memory does the Ray head node need?",
                 "Ray ingestion\nRay 2.60 enables token authentication for ray start. Every node "
                 "needs the same Python version. Without pgvector the vectors are loaded into memory.")
    assert text.startswith("The quoted sentences do not give the number asked for;")


def test_a_where_question_without_a_place_says_place():
    text = quote("Where does the ferry company keep its archive?",
                 "Ferry company\nThe ferry company keeps its archive carefully. The archive holds "
                 "letters and logbooks.")
    assert text.startswith("The quoted sentences do not give the place asked for;")


def test_a_piece_cut_off_at_its_start_is_not_quoted():
    found = [s.text for s in split_sentences(", vectors, status and insert runner; all in one file. "
                                             "The store opens fast.")]
    assert found == ["The store opens fast."]


def test_a_fact_asked_of_one_name_comes_from_its_own_passage():
    assert direct_subject("In which town was Agathe Corvane born?") == "Agathe Corvane"
    assert direct_subject("In which town was the architect of the Ellery Lighthouse born?") == ""
    text = quote("In which town was Agathe Corvane born?",
                 "# Agathe Corvane (1839–1912)\n\nAgathe Corvane, born Agathe Lunn, was a shipbuilder. "
                 "She was born in 1839 in Halvik, the daughter of a sailmaker. In 1862 she married "
                 "Piet Corvane and moved to Skarvik.",
                 "# Matthias Corvane\n\nMatthias Corvane (1866–1931) was the second head of the yard. He "
                 "was born in Skarvik, the elder child of Piet and Agathe Corvane.")
    assert "She was born in 1839 in Halvik" in text and "Matthias" not in text


def test_a_how_to_question_may_quote_a_command_of_a_code_block():
    docs = ("# Export\n\nThe graph can be written to a file.\n\n```bash\n"
            "lightrag export kg.graphml   # format from the extension\n```\n\n"
            "Exports are always XML or JSON.")
    assert "`lightrag export kg.graphml   # format from the extension` [1]" in quote(
        "How do I export the graph to GraphML?", docs)
    assert "`" not in quote("What format do exports have?", docs)  # prose questions quote prose
    assert [s.text for s in split_sentences(docs)] == ["The graph can be written to a file.",
                                                       "Exports are always XML or JSON."]


def test_a_when_question_takes_the_fuller_of_two_dates():
    text = quote("When was the Veltmoor Hydrology Institute founded?",
                 "Agnes Quillfeather\nAgnes Quillfeather founded the Veltmoor Hydrology Institute in "
                 "2009 after twelve years as a lecturer.",
                 "The Veltmoor Hydrology Institute\nThe Veltmoor Hydrology Institute is a small research "
                 "organisation. It was founded in March 2009 in the town of Harrowgate Fen.")
    assert "It was founded in March 2009" in text
