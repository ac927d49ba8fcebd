"""Sentence-transformers models run by ONNX Runtime or OpenVINO: the export (``export``) and the encoder
(``encoder``) behind ``LocalEmbedderClient(backend="onnx" | "onnx-int8" | "openvino")``."""

from lightrag.components.onnx_encoder.encoder import OnnxSentenceEncoder, check_mean_pooling_model
from lightrag.components.onnx_encoder.export import default_cache_dir, exported_model

__all__ = ["OnnxSentenceEncoder", "check_mean_pooling_model", "default_cache_dir", "exported_model"]
