"""A process on a SQL store never imports NetworkX (~0.2 s of every ``lightrag query``), and the
NetworkX store is still there for whoever asks: by import, by registry name, by export.

Each case runs in a fresh interpreter: whether a module is imported is a property of a process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.subprocess]

TESTS = str(Path(__file__).parent)


def run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         check=False, cwd=TESTS)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_indexing_and_querying_a_sql_store_leaves_networkx_unimported(tmp_path):
    result = run(f"""
import json, sys
sys.path.insert(0, {TESTS!r})
from graph_fakes import fake_graph_rag
rag = fake_graph_rag({str(tmp_path)!r}, embedding_dim=32)
rag.insert(["Saturn has a moon named Titan. Cassini visited Saturn."], ids=["d1"])
answers = [rag.query("What orbits Saturn?", mode=m, only_need_context=True).content
           for m in ("naive", "local", "global", "hybrid", "mix", "ppr")]
print(json.dumps({{"networkx": "networkx" in sys.modules, "titan": all("Titan" in a for a in answers)}}))
""")
    assert result == {"networkx": False, "titan": True}


def test_the_networkx_store_is_found_by_import_by_name_and_exports_graphml(tmp_path):
    result = run(f"""
import json
from lightrag.utils.registry import EntityMapping
by_name = EntityMapping.get("NetworkXGraphStorage")
from lightrag.components.storage import NetworkXGraphStorage
g = by_name(namespace="kg", working_dir={str(tmp_path)!r})
g.upsert_edge("Titan", "Saturn", {{"weight": 1.0}})
g.index_done_callback()
print(json.dumps({{"same": by_name is NetworkXGraphStorage, "edges": g.get_node_edges("Saturn")}}))
""")
    assert result == {"same": True, "edges": [["Saturn", "Titan"]]}
    assert "<graphml" in (tmp_path / "graph_kg.graphml").read_text()
