"""The small corpora the tests share (import them; do not copy them into a test file).

* ``PLANETS``: eight one-sentence passages, one per planet, for retrievers and rerankers;
  ``BIGGEST`` asks for the Jupiter passage (``PLANETS[JUPITER]``), ``MARS`` is the red planet's.
* ``SPACE_DOCS``: five short documents (file name -> text) about space missions, for graph RAG;
  the capitalised names give the fake extraction model of ``graph_fakes.py`` entities and
  relations. ``space_docs(n)`` is the first ``n`` of them (the tests use 2, 3 or all 5).
"""

from typing import Dict

PLANETS = [
    "Mercury is the smallest planet and the closest to the Sun.",
    "Venus is the hottest planet, with a thick carbon dioxide atmosphere.",
    "Earth is the only planet known to support life.",
    "Mars is called the red planet because of iron oxide dust.",
    "Jupiter is the biggest planet in the solar system, a gas giant.",
    "Saturn is famous for its bright rings of ice and rock.",
    "Uranus rotates on its side and looks pale blue.",
    "Neptune is the windiest planet and the farthest from the Sun.",
]
BIGGEST = "which planet is the biggest?"
JUPITER, MARS = 4, 3

SPACE_DOCS = {
    "voyager.md": "NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter and Saturn. "
                  "Voyager 1 photographed Titan, the largest moon of Saturn.",
    "cassini.md": "The Cassini mission of NASA reached Saturn in 2004. The Huygens probe landed on "
                  "Titan in 2005. Cassini found plumes on Enceladus.",
    "apollo.md": "Apollo 11 landed on the Moon in 1969. Neil Armstrong and Buzz Aldrin walked on "
                 "the Moon. Michael Collins stayed in orbit.",
    "galileo.md": "Galileo Galilei observed the moons of Jupiter in 1610. The Galileo probe of NASA "
                  "orbited Jupiter and studied Io and Europa. Europa may hide an ocean.",
    "hubble.md": "The Hubble telescope of NASA and ESA was launched in 1990. Hubble photographed "
                 "Saturn and Jupiter. Edwin Hubble gave the telescope its name.",
}


def space_docs(n: int = 3) -> Dict[str, str]:
    """The first ``n`` documents of :data:`SPACE_DOCS` (a new dict: tests may change it)."""
    return dict(list(SPACE_DOCS.items())[:n])
