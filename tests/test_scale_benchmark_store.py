"""benchmarks/scale.py measures stores as built: a store that took other documents is refused
(it inserts slower than its size says, and the growth ratio against it is wrong), and
``--hold-cache`` locks a store's files in memory and lets them go."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import scale  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> str:
    workdir, row = scale.ensure_store(200, str(tmp_path_factory.mktemp("scale")), rebuild=False)
    assert row["chunks"] == 200 and scale.chunks_stored(workdir) == 200
    return str(Path(workdir).parent)


def test_a_store_as_built_is_probed(built: str) -> None:
    workdir, row = scale.ensure_store(200, built, rebuild=False)
    assert row["n_chunks"] == 200 and scale.chunks_stored(workdir) == 200


def test_a_store_with_documents_inserted_by_hand_is_refused(built: str, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "n200"
    shutil.copytree(Path(built) / "n200", copy)
    corpus = scale.Corpus.of_store(str(copy))
    rag = scale.make_rag(str(copy), corpus.dim)
    rag.insert([corpus.chunk_text(200 + 4 * k) for k in range(3)], ids=[f"by-hand-{k}" for k in range(3)])
    rag.index.db.close()
    assert scale.chunks_stored(str(copy)) == 203
    with pytest.raises(SystemExit, match="holds 203 chunks, not 200"):
        scale.ensure_store(200, str(tmp_path), rebuild=False)


def test_held_files_are_locked_and_released(built: str) -> None:
    held = scale.HeldFiles([str(Path(built) / "n200")])
    try:
        assert held.locked_mb > 0
    finally:
        held.release()
    held.release()  # twice: nothing left to release


def test_the_same_documents_go_into_every_store(built: str, tmp_path: Path) -> None:
    """``--same-documents``: each store also takes the other sizes' next documents, and a
    larger corpus's documents name more distinct entities per batch (why they differ)."""
    import shutil

    scale.ensure_store(400, built, rebuild=False)
    copies = []
    for n in (200, 400):
        shutil.copytree(Path(built) / f"n{n}", tmp_path / f"n{n}")
        copies.append(str(tmp_path / f"n{n}"))
    small, large = scale.probe_writes(copies, 10, same_documents=True)
    for row in (small, large):
        assert set(row["same_documents"]) == {"200", "400"}
        assert all(r["insert_docs_per_s"] > 0 for r in row["same_documents"].values())
    assert small["insert_docs_per_s"] == small["same_documents"]["200"]["insert_docs_per_s"]
    assert scale.chunks_stored(copies[0]) == 200 + 2 * 10 - scale.DELETES  # one chunk a document
    sized = [row | {"n_chunks": n, "entities": 1, "relations": 1} for row, n in ((small, 200), (large, 400))]
    assert "the same documents (the 200-chunk corpus's)" in scale.table(sized)

