"""lightrag: a PyTorch-style library to build and optimize LLM applications.

Import what you need from the subpackages, as in lightrag 0.1::

    from lightrag.core import Component, Generator, DataClass
    from lightrag.components.model_client import OpenAIClient, GroqAPIClient
"""

import logging

__version__ = "0.2.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())
