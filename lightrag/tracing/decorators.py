"""Class decorators that trace the Generators of a component: their prompts and their calls.

Both wrap the class's ``__init__``: once the original ``__init__`` has run, they find the
instance's Generator attributes (or the ``attributes`` named) and attach a logger, stored on the
instance, that names each generator after its attribute:

* :func:`trace_generator_states` logs each prompt to ``self.generator_logger``
  (a :class:`GeneratorStateLogger`, file ``<save_dir>/<project_name or class name>/
  generator_state_trace.json``);
* :func:`trace_generator_call` logs calls to ``self.generator_call_logger``
  (a :class:`GeneratorCallLogger`, files ``<save_dir>/<class name>/<attribute>_call.jsonl``),
  through the Generator's ``on_failure`` callback (``error_only=True``) or ``on_complete``.

Example:
    >>> import tempfile
    >>> from lightrag.components.model_client import ScriptedClient
    >>> from lightrag.core.component import Component
    >>> from lightrag.core.generator import Generator
    >>> traces = tempfile.mkdtemp()
    >>> @trace_generator_call(save_dir=traces, error_only=False)
    ... class QA(Component):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.llm = Generator(model_client=ScriptedClient(["4"]), template="{{q}}")
    ...     def call(self, q):
    ...         return self.llm(prompt_kwargs={"q": q}).data
    >>> qa = QA()
    >>> qa("2+2?")
    '4'
    >>> [r.output.data for r in qa.generator_call_logger.load("llm")]
    ['4']
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Dict, List, Optional, TypeVar

from lightrag.core.generator import Generator
from lightrag.tracing.call_logger import GeneratorCallLogger
from lightrag.tracing.state_logger import GeneratorStateLogger

__all__ = ["find_generators", "trace_generator_call", "trace_generator_states"]

log = logging.getLogger(__name__)

T = TypeVar("T", bound=type)


def find_generators(obj: Any, attributes: Optional[List[str]] = None) -> Dict[str, Generator]:
    """``{attribute name: Generator}`` for ``obj``.

    Without ``attributes``, every instance attribute holding a Generator, in assignment order.
    With ``attributes``, those named; one that is missing or not a Generator is skipped with a
    warning.

    Example:
        >>> from lightrag.components.model_client import ScriptedClient
        >>> class Holder:
        ...     def __init__(self):
        ...         self.gen = Generator(model_client=ScriptedClient())
        ...         self.other = 1
        >>> list(find_generators(Holder()))
        ['gen']
    """
    owner = type(obj).__name__
    if not attributes:
        instance_attributes = getattr(obj, "__dict__", {})
        return {name: v for name, v in instance_attributes.items() if isinstance(v, Generator)}
    found: Dict[str, Generator] = {}
    for name in attributes:
        value = getattr(obj, name, None)
        if value is None:
            log.warning("%s has no attribute %r: it is not traced", owner, name)
        elif not isinstance(value, Generator):
            log.warning(
                "%s.%s is a %s, not a Generator: it is not traced",
                owner,
                name,
                type(value).__name__,
            )
        else:
            found[name] = value
    return found


def _wrap_init(cls: T, after_init: Callable[[Any], None]) -> T:
    original_init = cls.__init__

    @functools.wraps(original_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        after_init(self)

    cls.__init__ = __init__  # type: ignore[misc]
    return cls


def trace_generator_states(
    attributes: Optional[List[str]] = None,
    save_dir: Optional[str] = "./traces/",
    project_name: Optional[str] = None,
    filename: Optional[str] = None,
) -> Callable[[T], T]:
    """Log the prompt of each Generator of a class's instances when they are created.

    A new record is written only when a prompt differs from the last one logged under its name,
    so the file keeps the history of prompt changes across runs. Call
    ``self.generator_logger.log_prompt(generator, name)`` to log a prompt changed later.

    Args:
        attributes: the Generator attributes to trace; all of them when None or empty.
        save_dir: the folder for traces.
        project_name: the sub-folder; the class name when None.
        filename: the file name; ``generator_state_trace.json`` when None.

    Example:
        >>> import tempfile
        >>> from lightrag.components.model_client import ScriptedClient
        >>> @trace_generator_states(save_dir=tempfile.mkdtemp())
        ... class Summarizer:
        ...     def __init__(self):
        ...         self.llm = Generator(model_client=ScriptedClient(), template="Sum up {{t}}")
        >>> s = Summarizer()
        >>> s.generator_logger.load()["llm"][0].prompt_states["data"]["template"]
        'Sum up {{t}}'
    """

    def decorator(cls: T) -> T:
        def after_init(self: Any) -> None:
            logger = getattr(self, "generator_logger", None)
            if not isinstance(logger, GeneratorStateLogger):
                logger = GeneratorStateLogger(
                    save_dir=save_dir, project_name=project_name or cls.__name__, filename=filename
                )
                self.generator_logger = logger
            for name, generator in find_generators(self, attributes).items():
                logger.log_prompt(generator, name)

        return _wrap_init(cls, after_init)

    return decorator


def trace_generator_call(
    attributes: Optional[List[str]] = None,
    save_dir: Optional[str] = "./traces/",
    error_only: bool = True,
) -> Callable[[T], T]:
    """Log the calls (``call``, ``acall`` and streams) of each Generator of a class's instances.

    Args:
        attributes: the Generator attributes to trace; all of them when None or empty.
        save_dir: the folder for traces; calls go to ``<save_dir>/<class name>/``.
        error_only: log only calls whose GeneratorOutput has an ``error`` (the default).

    To trace a library component you cannot edit, decorate a subclass of it
    (``@trace_generator_call()`` above ``class LoggedRetriever(LLMRetriever): pass``).

    Example:
        >>> import tempfile
        >>> from lightrag.components.model_client import ScriptedClient
        >>> @trace_generator_call(save_dir=tempfile.mkdtemp())
        ... class Flaky:
        ...     def __init__(self):
        ...         self.llm = Generator(model_client=ScriptedClient(["ok", TimeoutError("slow")]))
        >>> f = Flaky()
        >>> f.llm({"input_str": "a"}).error, f.llm({"input_str": "b"}).error
        (None, 'TimeoutError: slow')
        >>> [(r.prompt_kwargs, r.output.error) for r in f.generator_call_logger.load("llm")]
        [({'input_str': 'b'}, 'TimeoutError: slow')]
    """

    def decorator(cls: T) -> T:
        def after_init(self: Any) -> None:
            logger = getattr(self, "generator_call_logger", None)
            if not isinstance(logger, GeneratorCallLogger):
                logger = GeneratorCallLogger(save_dir=save_dir, project_name=cls.__name__)
                self.generator_call_logger = logger
            for name, generator in find_generators(self, attributes).items():
                logger.attach(generator, name, error_only=error_only)

        return _wrap_init(cls, after_init)

    return decorator
