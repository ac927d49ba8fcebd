"""lightrag: a PyTorch-style library to build and optimize LLM applications."""

__version__ = "0.2.0"
