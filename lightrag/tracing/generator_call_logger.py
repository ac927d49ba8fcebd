"""lightrag 0.1's module path of the call logger (defined in ``call_logger`` and ``records``).

Example:
    >>> from lightrag.tracing.generator_call_logger import GeneratorCallLogger
    >>> GeneratorCallLogger.__module__
    'lightrag.tracing.call_logger'
"""

from lightrag.tracing.call_logger import GeneratorCallLogger
from lightrag.tracing.records import GeneratorCallRecord

__all__ = ["GeneratorCallLogger", "GeneratorCallRecord"]
