"""``Prompt``: a Jinja2 template rendered with preset and per-call variables.

Templates render in the library's one sandbox (:mod:`lightrag.utils.sandbox`): a template may
read the variables it is given, never Python internals (``__class__``, ``__globals__``), and its
work is bounded; what the sandbox refuses raises
:class:`~lightrag.utils.sandbox.UnsafeTemplateError` (a ``ValueError``).
The environment uses ``StrictUndefined`` (a misspelt variable is an error, not an empty string);
every variable the template declares defaults to ``None`` so ``{% if var %}`` sections can be left
out. ``prompt_variables`` lists the template's variables in order of first appearance.
A value may be a :class:`~lightrag.core.parameter.Parameter`; its ``data`` is rendered.

Example:
    >>> p = Prompt(template="Hello, {{name}}!", prompt_kwargs={"name": "world"})
    >>> p()
    'Hello, world!'
    >>> p(name="you")
    'Hello, you!'
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Dict, List, Optional, TypeVar

import jinja2

from lightrag.core.component import Component
from lightrag.core.default_prompt_template import DEFAULT_LIGHTRAG_SYSTEM_PROMPT
from lightrag.core.parameter import Parameter
from lightrag.utils.sandbox import (
    UnsafeTemplateError,
    compile_template,
    get_template_sandbox,
    render_sandboxed,
)

T = TypeVar("T")  # 0.1 exported it from this module
log = logging.getLogger(__name__)


def get_jinja2_environment() -> jinja2.Environment:
    """The shared sandboxed environment every template renders in
    (:func:`lightrag.utils.sandbox.get_template_sandbox`)."""
    return get_template_sandbox()


def _compile(template: str) -> tuple[jinja2.Template, tuple[str, ...]]:
    compiled = compile_template(template)
    return compiled.template, compiled.variables


class Prompt(Component):
    """Render a Jinja2 ``template`` (default: the lightrag system prompt) with variables.

    Args:
        template: Jinja2 template text.
        prompt_kwargs: preset variables, overridden by those passed at call time.
    """

    def __init__(
        self, template: Optional[str] = None, prompt_kwargs: Optional[Dict[str, Any]] = None
    ) -> None:
        super().__init__()
        self.template = template if template is not None else DEFAULT_LIGHTRAG_SYSTEM_PROMPT
        self._template, variables = _compile(self.template)
        self.prompt_variables: List[str] = list(variables)
        self.prompt_kwargs: Dict[str, Any] = dict(prompt_kwargs or {})
        for key in self.prompt_kwargs:
            if key not in self.prompt_variables:
                log.warning("prompt_kwargs key %r is not a variable of the template", key)

    def update_prompt_kwargs(self, **kwargs: Any) -> None:
        """Change preset variables."""
        self.prompt_kwargs.update(kwargs)

    def get_prompt_variables(self) -> List[str]:
        return list(self.prompt_variables)

    def is_key_in_template(self, key: str) -> bool:
        return key in self.prompt_variables

    def compose_prompt_kwargs(self, **kwargs: Any) -> Dict[str, Any]:
        """All variables (None by default), then presets, then ``kwargs``; Parameters unwrapped."""
        composed: Dict[str, Any] = dict.fromkeys(self.prompt_variables)
        composed.update(self.prompt_kwargs)
        for key in kwargs:
            if key not in composed:
                log.debug("variable %r is not used by the template", key)
        composed.update(kwargs)
        return {k: v.data if isinstance(v, Parameter) else v for k, v in composed.items()}

    def call(self, **kwargs: Any) -> str:
        """Render the template."""
        try:
            return render_sandboxed(self._template, self.compose_prompt_kwargs(**kwargs))
        except UnsafeTemplateError as e:
            raise UnsafeTemplateError(f"Prompt rendering failed: {e}") from None
        except jinja2.UndefinedError as e:
            raise ValueError(f"Prompt rendering failed: {e.message}") from e
        except Exception as e:
            raise ValueError(f"Prompt rendering failed: {e}") from e

    async def acall(self, **kwargs: Any) -> str:
        return self.call(**kwargs)

    def print_prompt_template(self) -> str:
        """Print the template to stdout in lightrag 0.1's format and return it.

        Printing is this method's contract (like :func:`~lightrag.utils.logger.printc`).
        """
        sys.stdout.write(f"Template:\n-------\n{self.template}\n-------\n")
        return self.template

    def print_prompt(self, **kwargs: Any) -> str:
        """Render the prompt (presets and ``kwargs``), print it to stdout in lightrag 0.1's
        format and return it."""
        text = self.call(**kwargs)
        sys.stdout.write(f"Prompt:\n______________________\n{text}\n")
        return text

    def _after_from_dict(self) -> None:
        self._template, _ = _compile(self.template)

    _to_dict_exclude = ("_template",)

    def _extra_repr(self) -> str:
        parts = [f"template: {self.template}"]
        if self.prompt_kwargs:
            parts.append(f"prompt_kwargs: {self.prompt_kwargs}")
        parts.append(f"prompt_variables: {self.prompt_variables}")
        return ", ".join(parts)
