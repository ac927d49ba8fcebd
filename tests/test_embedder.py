import asyncio

import numpy as np
import pytest

from lightrag.components.model_client.scripted_client import ScriptedClient
from lightrag.core.embedder import BatchEmbedder, Embedder


def test_embeds_single_and_list():
    embedder = Embedder(model_client=ScriptedClient(embedding_dim=32), model_kwargs={"model": "x"})
    one = embedder("hello world")
    assert one.error is None and one.length == 1 and one.embedding_dim == 32
    assert one.input == ["hello world"]
    many = embedder(["a b", "c d", "e f"])
    assert [e.index for e in many.data] == [0, 1, 2]
    assert many.is_normalized


def test_similar_texts_have_similar_vectors():
    embedder = Embedder(model_client=ScriptedClient(embedding_dim=256))
    vecs = np.array([e.embedding for e in embedder(
        ["jupiter is the largest planet", "the largest planet is jupiter", "bananas are yellow"]
    ).data])
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]


def test_bad_input_type_raises():
    embedder = Embedder(model_client=ScriptedClient())
    with pytest.raises(TypeError, match="str or a sequence of str"):
        embedder(42)
    with pytest.raises(TypeError):
        embedder(["ok", 3])


def test_client_failure_raises_as_in_01():
    """lightrag 0.1's Embedder lets the model client's exception through (only a timeout is
    data: ``test_an_embedding_call_that_hangs_returns_a_timeout_error``)."""
    client = ScriptedClient()
    client.call = lambda api_kwargs=None, model_type=None: (_ for _ in ()).throw(RuntimeError("down"))
    with pytest.raises(RuntimeError, match="down"):
        Embedder(model_client=client)("x")

    async def failing(api_kwargs=None, model_type=None):
        raise ConnectionError("unreachable")

    client.acall = failing
    with pytest.raises(ConnectionError, match="unreachable"):
        asyncio.run(Embedder(model_client=client).acall("x"))


def test_batch_embedder_batches():
    client = ScriptedClient()
    batch = BatchEmbedder(Embedder(model_client=client), batch_size=2)
    outputs = batch([f"text {i}" for i in range(5)])
    assert [o.length for o in outputs] == [2, 2, 1]
    assert len(client.requests) == 3
    assert len(asyncio.run(batch.acall(["a", "b", "c"]))) == 2
    with pytest.raises(ValueError):
        BatchEmbedder(Embedder(model_client=client), batch_size=0)


def test_an_embedding_call_that_hangs_returns_a_timeout_error():
    import time as _time

    from lightrag.components.model_client import ScriptedClient
    from lightrag.core.embedder import Embedder

    class Slow(ScriptedClient):
        def call(self, api_kwargs=None, model_type=None):
            _time.sleep(2)
            return super().call(api_kwargs, model_type)

    started = _time.perf_counter()
    out = Embedder(model_client=Slow(), timeout=0.1)("text")
    assert _time.perf_counter() - started < 1.5
    assert out.error == "model call timed out after 0.1 s" and out.input == ["text"]
    assert Embedder(model_client=ScriptedClient())("text").error is None


def test_local_embedder_backend_from_config_and_bad_backend():
    """The backend is a config setting (no model is loaded to build the client)."""
    from lightrag.utils.config import new_component

    client = new_component({"component_name": "LocalEmbedderClient",
                            "component_config": {"model": "all-MiniLM-L6-v2", "backend": "onnx-int8"}})
    assert client.backend == "onnx-int8" and client.sync_client is None
    assert "backend='onnx-int8'" in repr(client)
    with pytest.raises(ValueError, match="unknown embedder backend 'onnx8'"):
        new_component({"component_name": "LocalEmbedderClient", "component_config": {"backend": "onnx8"}})


def test_onnx_backend_without_onnxruntime_warns_and_runs_torch(monkeypatch, caplog):
    from lightrag.components.model_client import local_embedder_client as module

    monkeypatch.setattr(module.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(module, "load_sentence_transformer", lambda model, device: ("torch", model))
    client = module.LocalEmbedderClient(backend="onnx-int8")
    with caplog.at_level("WARNING", logger=module.__name__):
        assert client.init_sync_client() == ("torch", "all-MiniLM-L6-v2")
    assert "needs onnxruntime" in caplog.text and "pip install" in caplog.text


def test_onnx_backend_that_cannot_export_warns_and_runs_torch(monkeypatch, caplog):
    from lightrag.components.model_client import local_embedder_client as module

    def unwritable(model, quantize, threads, runtime="onnxruntime"):
        raise PermissionError("[Errno 13] Permission denied: '/home/x/.cache/lightrag/onnx'")

    monkeypatch.setattr(module, "load_onnx_encoder", unwritable)
    monkeypatch.setattr(module, "load_sentence_transformer", lambda model, device: ("torch", model))
    with caplog.at_level("WARNING", logger=module.__name__):
        assert module.LocalEmbedderClient(backend="onnx").init_sync_client() == ("torch", "all-MiniLM-L6-v2")
    assert "Permission denied" in caplog.text
