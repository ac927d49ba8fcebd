"""lightrag 0.1's module path of the state logger (defined in ``state_logger`` and ``records``).

Example:
    >>> from lightrag.tracing.generator_state_logger import GeneratorStateLogger
    >>> GeneratorStateLogger.__module__
    'lightrag.tracing.state_logger'
"""

from lightrag.tracing.records import GeneratorStatesRecord
from lightrag.tracing.state_logger import GeneratorStateLogger

__all__ = ["GeneratorStateLogger", "GeneratorStatesRecord"]
