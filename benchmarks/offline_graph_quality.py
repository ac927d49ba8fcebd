"""How clean is the offline (spaCy) graph of a real folder of documents?

Loads every supported file under a folder (text, Markdown, HTML, PDF: the library's loaders),
chunks it as ``GraphRAG`` does (1,200 tokens, 100 overlap), runs ``SpacyEntityExtractor`` on the
chunks (no embedding, no store) and merges names as the merger does. Reports, for the extractor
as configured now and for the settings of the previous release (``--compare-legacy``):

- **junk names**: the share of entity names that a judge independent of the extractor's own
  filter calls code, shell, markup, path or table fragments (any of ``$ { } < > | \\ = ; ` _ /``,
  a leading ``-`` or ``.``, fewer letters than other characters, or ``://``; a bare year such
  as ``1977`` is a date, not junk);
- **top-20 hubs**: the names with the most distinct relation partners;
- **relations per chunk**: mean and max.

Usage (any folder; the folder used in docs/benchmarks.md is a sample of /usr/share/doc)::

    .venv/bin/python benchmarks/offline_graph_quality.py /usr/share/doc --max-files 55 \\
        --compare-legacy
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightrag.components.graph_rag import SpacyEntityExtractor  # noqa: E402
from lightrag.components.graph_rag.chunking import Chunker  # noqa: E402
from lightrag.components.loaders import load_document  # noqa: E402

LEGACY = {"relation_window": None, "max_relations_per_chunk": None,
          "single_noun_concepts": True, "relate_single_nouns": True, "clean_names": False}
SUFFIXES = {".md", ".markdown", ".txt", ".html", ".htm", ".rst", ".pdf", ""}
_JUNK_CHARS = re.compile(r"[${}<>|\\=;`_/]|://|^[-.]")


def judged_junk(name: str) -> bool:
    """The benchmark's own judge of a junk name (deliberately not the extractor's rule)."""
    if re.fullmatch(r"1\d{3}|20\d{2}", name):  # a year: a date entity, not junk
        return False
    visible = [c for c in name if not c.isspace()]
    letters = sum(c.isalpha() for c in visible)
    return bool(_JUNK_CHARS.search(name)) or letters < len(visible) - letters


def pick_files(folder: Path, limit: int, seed: int) -> List[Path]:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()
                   and (p.suffix.lower() in SUFFIXES or p.name.startswith("README"))
                   and 500 < p.stat().st_size < 200_000 and p.name not in ("copyright",))
    random.Random(seed).shuffle(files)
    return sorted(files[:limit])


def load_chunks(files: List[Path]) -> List[Tuple[str, str]]:
    chunker = Chunker(chunk_token_size=1200, chunk_overlap_token_size=100)
    chunks: List[Tuple[str, str]] = []
    for path in files:
        try:
            doc = load_document(str(path))
        except Exception as e:  # noqa: BLE001 - a benchmark skips unreadable files
            print(f"  skipped {path}: {e}")
            continue
        for chunk_id, chunk in chunker.call(str(path), doc.text, str(path)).items():
            chunks.append((chunk.content, chunk_id))
    return chunks


def measure(extractor: SpacyEntityExtractor, chunks: List[Tuple[str, str]]) -> Dict[str, Any]:
    started = time.perf_counter()
    results = extractor.extract_many(chunks)
    seconds = time.perf_counter() - started
    names = {e.entity_name for r in results for e in r.entities}
    partners: Dict[str, set] = defaultdict(set)
    for r in results:
        for rel in r.relations:
            partners[rel.src_id].add(rel.tgt_id)
            partners[rel.tgt_id].add(rel.src_id)
    per_chunk = [len(r.relations) for r in results]
    junk = sorted(n for n in names if judged_junk(n))
    hubs = sorted(partners.items(), key=lambda kv: -len(kv[1]))[:20]
    return {"entities": len(names), "junk": len(junk), "junk_share": len(junk) / max(1, len(names)),
            "junk_sample": junk[:12], "hubs": [(n, len(p)) for n, p in hubs],
            "relations": sum(per_chunk), "relations_mean": statistics.fmean(per_chunk or [0]),
            "relations_max": max(per_chunk or [0]), "seconds": seconds}


def report(label: str, stats: Dict[str, Any]) -> None:
    print(f"\n## {label}")
    print(f"entities {stats['entities']}, junk {stats['junk']} ({100 * stats['junk_share']:.1f}%), "
          f"relations {stats['relations']} (per chunk mean {stats['relations_mean']:.1f}, "
          f"max {stats['relations_max']}), {stats['seconds']:.1f} s")
    print("junk sample:", ", ".join(repr(n) for n in stats["junk_sample"]))
    print("top-20 hubs:", ", ".join(f"{n} ({d})" for n, d in stats["hubs"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--max-files", type=int, default=55)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare-legacy", action="store_true",
                        help="also measure the previous release's settings")
    args = parser.parse_args()
    files = pick_files(args.folder, args.max_files, args.seed)
    chunks = load_chunks(files)
    print(f"{len(files)} files, {len(chunks)} chunks from {args.folder}")
    if args.compare_legacy:
        report("previous settings " + str(LEGACY), measure(SpacyEntityExtractor(**LEGACY), chunks))
    report("current defaults", measure(SpacyEntityExtractor(), chunks))


if __name__ == "__main__":
    main()
