"""The quoting answerer on passages given as text: the helper of the answer tests."""

from lightrag.components.graph_rag import ExtractiveAnswerer


def answer(question: str, *contents: str) -> str:
    """:class:`ExtractiveAnswerer`'s answer to ``question`` over ``contents``, each a passage
    cited as ``[1]``, ``[2]`` ... in order."""
    chunks = [{"content": c, "reference_id": str(i)} for i, c in enumerate(contents, 1)]
    return ExtractiveAnswerer()(question, chunks).text
