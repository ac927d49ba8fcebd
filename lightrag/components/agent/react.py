"""``ReActAgent``: answer a question step by step, calling tools (reason, act, observe).

At each step a planner :class:`~lightrag.core.generator.Generator` reads the question, the tools
and the steps so far, and answers with a JSON :class:`~lightrag.core.types.FunctionExpression`:
a ``thought`` and an ``action`` such as ``search(query='Titan')``. The action is parsed safely
(:mod:`lightrag.core.safe_eval`, never ``eval``) and run by a
:class:`~lightrag.core.tool_manager.ToolManager`; its result, or its error, is the step's
observation. The built-in ``finish(answer)`` ends the run; ``llm_tool(input)`` (optional)
lets the model answer from its own knowledge. A reply that cannot be read, an unknown tool or a
tool that raises becomes an observation the model sees on the next step, never an exception.

Each step is a :class:`~lightrag.core.types.StepOutput`; a whole run is an :class:`AgentRun`
that can be printed, saved with ``to_json`` and loaded with ``from_json``.

Example:
    >>> from lightrag.components.model_client import ScriptedClient
    >>> def multiply(a: int, b: int) -> int:
    ...     '''Multiply two integers.'''
    ...     return a * b
    >>> client = ScriptedClient(responses=[
    ...     '{"thought": "Multiply first.", "action": "multiply(a=6, b=7)"}',
    ...     '{"thought": "Done.", "action": "finish(answer=\\'42\\')"}',
    ... ])
    >>> agent = ReActAgent(tools=[multiply], model_client=client)
    >>> agent("What is 6 times 7?")
    '42'
    >>> [step.observation for step in agent.step_history]
    ['42', '42']
"""

import json
import logging
from collections.abc import Awaitable
from collections.abc import Generator as Loop
from typing import TYPE_CHECKING, Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from lightrag.components.agent.actions import action_json_schema, expression_from_reply
from lightrag.components.agent.prompts import (
    DEFAULT_REACT_AGENT_SYSTEM_PROMPT,
    DEFAULT_REACT_TEMPLATE,
    REACT_OUTPUT_FORMAT,
    REACT_TASK,
    finish,
    make_llm_tool,
)
from lightrag.components.agent.records import AgentRun, ReActStep, observation_text
from lightrag.components.output_parsers import JsonOutputParser
from lightrag.core.component import Component
from lightrag.core.func_tool import FunctionTool
from lightrag.core.generator import Generator
from lightrag.core.model_client import ModelClient
from lightrag.core.tokenizer import default_tokenizer
from lightrag.core.tool_manager import ToolManager
from lightrag.core.types import FunctionExpression, FunctionOutput, GeneratorOutput, StepOutput

if TYPE_CHECKING:
    from lightrag.components.memory import ConversationMemory

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_REACT_AGENT_SYSTEM_PROMPT", "AgentRun", "ReActAgent", "ReActStep"]

ToolLike = Union[FunctionTool, Callable[..., Any]]


def _clip(text: str, max_tokens: Optional[int]) -> str:
    if max_tokens is None:
        return text
    tokenizer = default_tokenizer()
    tokens = tokenizer.encode(text)
    return text if len(tokens) <= max_tokens else tokenizer.decode(tokens[:max_tokens]) + " …"


class _Call(NamedTuple):
    """A call the ReAct loop needs made: the sync and async ways to make it, and its arguments."""

    sync: Callable[..., Any]
    asynchronous: Callable[..., Awaitable[Any]]
    kwargs: Dict[str, Any]


def _advance(steps: Loop[_Call, Any, AgentRun], reply: Any) -> Tuple[Optional[_Call], Any]:
    """Send ``reply`` to the loop: ``(next call, None)``, or ``(None, the run)`` when it ends."""
    try:
        return steps.send(reply), None
    except StopIteration as stop:
        return None, stop.value


class _RunState:
    """What one run accumulates (kept off the agent, so concurrent runs do not mix)."""

    def __init__(self, input: str, prompt_kwargs: Dict[str, Any]) -> None:
        self.run = AgentRun(input=input)
        self.prompt_kwargs = prompt_kwargs
        self.last_good: Optional[str] = None


class ReActAgent(Component):
    """A ReAct agent: plan with an LLM, act with tools, observe, until ``finish``.

    Args:
        tools: functions (sync or async) or :class:`FunctionTool` s; each is described to the
            model by its name, signature and docstring.
        max_steps: the most planner calls in one run.
        add_llm_as_fallback: add ``llm_tool(input)``, which asks the model directly.
        examples: :class:`FunctionExpression` s (or JSON strings) shown as example replies.
        model_client: the planner's model client (also used by ``llm_tool``).
        model_kwargs: request arguments. With a ``LocalLLMClient`` the reply is constrained to
            :func:`action_json_schema` unless ``json_schema`` is given.
        template: a Jinja2 prompt; it receives ``task_desc_str``, ``tools`` (descriptions),
            ``output_format_str``, ``examples_str``, ``input_str``, ``steps_str``,
            ``step_history`` (the StepOutputs) and any ``prompt_kwargs`` of the call.
        memory: a memory component (``ConversationMemory``, ``SummaryMemory``): its turns are
            sent as chat history and each run's question and answer are added to it (not
            when the model could not be called).
        max_observation_tokens: observations longer than this are clipped in the prompt.
        require_observation: refuse ``finish`` (as an error observation) until another tool has
            returned a result; with a ``LocalLLMClient`` the schema does not even offer it
            before then. Keeps small models from answering from memory at step 1.

    ``call`` (also ``agent(...)``) returns the answer, as lightrag 0.1 did; :meth:`run` returns
    the whole :class:`AgentRun`. The last run is also kept as ``agent.last_run`` and its steps
    as ``agent.step_history``.

    Example:
        >>> from lightrag.components.model_client import ScriptedClient
        >>> client = ScriptedClient(responses=['not json', '{"action": "finish(answer=\\'ok\\')"}'])
        >>> run = ReActAgent(model_client=client, add_llm_as_fallback=False).run("Say ok.")
        >>> run.answer, run.stopped_reason, len(run.steps)
        ('ok', 'finish', 2)
        >>> run.steps[0].observation.startswith("Error: could not read an action")
        True
    """

    def __init__(
        self,
        tools: Optional[Sequence[ToolLike]] = None,
        max_steps: int = 10,
        add_llm_as_fallback: bool = True,
        examples: Optional[Sequence[Union[FunctionExpression, str]]] = None,
        *,
        model_client: ModelClient,
        model_kwargs: Optional[Dict[str, Any]] = None,
        template: Optional[str] = None,
        memory: Optional["ConversationMemory"] = None,
        max_observation_tokens: Optional[int] = 1000,
        require_observation: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive int, got {max_steps!r}")
        self.max_steps = max_steps
        self.add_llm_as_fallback = add_llm_as_fallback
        self.max_observation_tokens = max_observation_tokens
        self.require_observation = require_observation
        self.examples = list(examples or [])
        model_kwargs = dict(model_kwargs or {})
        self.tool_manager = ToolManager(tools)
        names = [tool.definition.func_name for tool in self.tool_manager.tools]
        llm_tool_generator = None
        if add_llm_as_fallback and "llm_tool" not in names:
            fallback_kwargs = {k: v for k, v in model_kwargs.items() if k != "json_schema"}
            llm_tool_generator = Generator(
                model_client=model_client, model_kwargs=fallback_kwargs, name="llm_tool"
            )
            self.tool_manager.add_tool(make_llm_tool(llm_tool_generator))
        if "finish" not in names:
            self.tool_manager.add_tool(finish)
        definitions = [tool.definition for tool in self.tool_manager.tools]
        if require_observation and len(definitions) < 2:
            raise ValueError("require_observation needs at least one tool besides finish")
        self._early_schema: Optional[Dict[str, Any]] = None
        if type(model_client).__name__ == "LocalLLMClient" and "json_schema" not in model_kwargs:
            model_kwargs["json_schema"] = action_json_schema(definitions)
            if require_observation:
                self._early_schema = action_json_schema(
                    [d for d in definitions if d.func_name != "finish"]
                )
        self.planner = Generator(
            model_client=model_client,
            model_kwargs=model_kwargs,
            template=template or DEFAULT_REACT_TEMPLATE,
            prompt_kwargs={
                "task_desc_str": REACT_TASK,
                "output_format_str": REACT_OUTPUT_FORMAT,
                "examples_str": self._examples_str(),
                # preset too, so planner.print_prompt() works with no arguments (as in 0.1)
                "tools": [d.func_desc for d in definitions],
            },
            output_processors=JsonOutputParser(FunctionExpression),
            name="react_planner",
        )
        self._examples_in_output_format()
        self.llm_tool_generator = llm_tool_generator
        self.memory = memory
        self.step_history: List[StepOutput] = []
        self.last_run: Optional[AgentRun] = None

    def _after_from_dict(self) -> None:
        """The ``llm_tool`` fallback is a closure, which is not saved: made again from its
        generator (a tool of the user's that was a lambda or closure stays unsaved)."""
        if self.__dict__.get("llm_tool_generator") is None:
            return
        for tool in self.tool_manager.tools:
            if tool.definition.func_name == "llm_tool" and tool.fn is None:
                tool.fn = make_llm_tool(self.llm_tool_generator)

    def reset(self) -> None:
        """Forget the last run's steps (lightrag 0.1 name); runs start afresh anyway."""
        self.step_history = []
        self.last_run = None

    # ------------------------------------------------------------------ prompt
    @property
    def tool_names(self) -> List[str]:
        """The names of the tools the model may call, ``finish`` included."""
        return [tool.definition.func_name for tool in self.tool_manager.tools]

    def _examples_in_output_format(self) -> None:
        """A template written for 0.1 has no ``examples_str`` (0.1 put the examples inside
        ``output_format_str``): there the examples go after the output format, as in 0.1."""
        variables = self.planner.prompt.prompt_variables
        if not self.examples or "examples_str" in variables:
            return
        if "output_format_str" not in variables:
            log.warning("ReActAgent: the template has neither examples_str nor output_format_str; "
                        "the %d examples are not shown to the model", len(self.examples))
            return
        self.planner.prompt.prompt_kwargs["output_format_str"] = (
            f"{REACT_OUTPUT_FORMAT}\nExamples:\n{self._examples_str()}")

    @property
    def _examples(self) -> List[FunctionExpression]:
        """0.1's list: the given examples, then the ``finish`` example 0.1 always added."""
        finish_example = FunctionExpression.from_function(
            finish, thought="I have finished the task.", answer="final answer: 'answer'"
        )
        return [*self.examples, finish_example]

    def _examples_str(self) -> str:
        rendered = []
        for example in self.examples:
            if isinstance(example, FunctionExpression):
                rendered.append(json.dumps(example.to_dict(), ensure_ascii=False))
            else:
                rendered.append(str(example))
        return "\n".join(rendered)

    def _steps_str(self, steps: List[StepOutput]) -> str:
        blocks = []
        for step in steps:
            action = step.action
            lines = [f"Step {step.step}"]
            if action is not None and action.thought:
                lines.append(f"Thought: {action.thought}")
            lines.append(f"Action: {action.action if action is not None else '(none)'}")
            lines.append(f"Observation: {_clip(step.observation or '', self.max_observation_tokens)}")
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    def _prompt_kwargs(self, state: _RunState) -> Dict[str, Any]:
        return {
            "tools": [tool.definition.func_desc for tool in self.tool_manager.tools],
            **state.prompt_kwargs,
            "input_str": state.run.input,
            "steps_str": self._steps_str(state.run.steps),
            "step_history": list(state.run.steps),
        }

    # ---------------------------------------------------------------- stepping
    def _record(
        self,
        state: _RunState,
        number: int,
        expression: Optional[FunctionExpression],
        result: Optional[FunctionOutput],
        problem: str,
        raw: Any,
    ) -> bool:
        """Add the step to the run; True when the run is over."""
        run = state.run
        if expression is None or result is None:
            excerpt = " ".join(str(raw or "").split())[:80]
            observation = (
                f"Error: could not read an action from your reply {excerpt!r} ({problem}). "
                'Reply with one JSON object: {"thought": ..., "action": ...}.'
            )
            run.steps.append(ReActStep(step=number, action=expression, observation=observation))
            return False
        function = result.parsed_input
        finished = function is not None and function.name == "finish" and result.error is None
        if finished and self.require_observation and state.last_good is None:
            finished = False
            observation = (
                "Error: finish refused: no tool has returned a result yet. "
                "Look the facts up with a tool first."
            )
        elif result.error is not None:
            error = result.error
            observation = error if error.startswith("Error") else f"Error: {error}"
        else:
            observation = observation_text(result.output)
            state.last_good = observation
        run.steps.append(
            ReActStep(step=number, action=expression, function=function, observation=observation)
        )
        log.info("step %d: %s -> %s", number, expression.action, observation[:200])
        if finished:
            run.answer, run.stopped_reason = result.output, "finish"
        return finished

    def _step_model_kwargs(
        self, state: _RunState, model_kwargs: Optional[Dict[str, Any]]
    ) -> Optional[Dict[str, Any]]:
        """Before the first observation, the schema without finish (``require_observation``)."""
        if self._early_schema is None or state.last_good is not None:
            return model_kwargs
        if model_kwargs and "json_schema" in model_kwargs:
            return model_kwargs
        return {**(model_kwargs or {}), "json_schema": self._early_schema}

    def _model_failed(self, state: _RunState, number: int, output: GeneratorOutput) -> bool:
        if output.error is None or output.raw_response is not None:
            return False
        state.run.steps.append(ReActStep(step=number, observation=f"Error: {output.error}"))
        state.run.stopped_reason = "model_error"
        state.run.answer = f"No answer: the model could not be called ({output.error})."
        log.warning("ReActAgent: model call failed at step %d: %s", number, output.error)
        return True

    def _start(
        self, input: str, prompt_kwargs: Optional[Dict[str, Any]], promt_kwargs: Optional[Dict[str, Any]]
    ) -> _RunState:
        state = _RunState(str(input), {**(promt_kwargs or {}), **(prompt_kwargs or {})})
        self.step_history = state.run.steps
        return state

    def _end(self, state: _RunState) -> AgentRun:
        run = state.run
        if run.stopped_reason is None:
            run.stopped_reason = "max_steps"
            run.answer = state.last_good or (
                f"No answer: the agent stopped after {self.max_steps} steps without calling finish."
            )
            log.warning("ReActAgent: stopped after max_steps=%d without finish", self.max_steps)
        self.last_run = run
        return run

    def _steps(
        self,
        input: str,
        prompt_kwargs: Optional[Dict[str, Any]],
        model_kwargs: Optional[Dict[str, Any]],
        promt_kwargs: Optional[Dict[str, Any]],
    ) -> Loop[_Call, Any, AgentRun]:
        """The ReAct loop, written once for :meth:`run` and :meth:`arun`: it yields each call
        it needs made (memory, planner, tool) and is sent the result; it returns the run."""
        state = self._start(input, prompt_kwargs, promt_kwargs)
        conversation = None
        if self.memory is not None:
            conversation = yield _Call(self.memory.call, self.memory.acall, {})
        planner, tools = self.planner, self.tool_manager
        for number in range(1, self.max_steps + 1):
            output = yield _Call(planner.call, planner.acall, {
                "prompt_kwargs": self._prompt_kwargs(state),
                "model_kwargs": self._step_model_kwargs(state, model_kwargs),
                "conversation": conversation,
            })
            if self._model_failed(state, number, output):
                break
            expression, problem = expression_from_reply(output, self.tool_names)
            result = None
            if expression is not None:
                result = yield _Call(
                    tools.execute_func_expr, tools.execute_func_expr_async, {"expr": expression}
                )
            if self._record(state, number, expression, result, problem, output.raw_response):
                break
        run = self._end(state)
        if self.memory is not None and run.stopped_reason != "model_error":
            turn = {"user_query": run.input, "assistant_response": observation_text(run.answer)}
            yield _Call(self.memory.add, self.memory.aadd, turn)
        return run

    # ------------------------------------------------------------------ calling
    def run(
        self,
        input: str,
        prompt_kwargs: Optional[Dict[str, Any]] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        promt_kwargs: Optional[Dict[str, Any]] = None,
    ) -> AgentRun:
        """Run the ReAct loop on ``input``; returns the full :class:`AgentRun` (never raises
        because of the model or a tool). ``promt_kwargs`` is lightrag 0.1's spelling."""
        steps = self._steps(input, prompt_kwargs, model_kwargs, promt_kwargs)
        call, run = _advance(steps, None)
        while call is not None:
            call, run = _advance(steps, call.sync(**call.kwargs))
        return run

    async def arun(
        self,
        input: str,
        prompt_kwargs: Optional[Dict[str, Any]] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        promt_kwargs: Optional[Dict[str, Any]] = None,
    ) -> AgentRun:
        """Async :meth:`run`: the planner is awaited, async tools are awaited, sync ones run in
        worker threads."""
        steps = self._steps(input, prompt_kwargs, model_kwargs, promt_kwargs)
        call, run = _advance(steps, None)
        while call is not None:
            call, run = _advance(steps, await call.asynchronous(**call.kwargs))
        return run

    def call(
        self,
        input: str,
        prompt_kwargs: Optional[Dict[str, Any]] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        promt_kwargs: Optional[Dict[str, Any]] = None,
    ) -> Any:
        """Run the agent and return its answer (see :meth:`run` for the whole record)."""
        return self.run(input, prompt_kwargs, model_kwargs, promt_kwargs).answer

    async def acall(
        self,
        input: str,
        prompt_kwargs: Optional[Dict[str, Any]] = None,
        model_kwargs: Optional[Dict[str, Any]] = None,
        promt_kwargs: Optional[Dict[str, Any]] = None,
    ) -> Any:
        """Async :meth:`call`."""
        return (await self.arun(input, prompt_kwargs, model_kwargs, promt_kwargs)).answer

    def _extra_repr(self) -> str:
        extra = ", require_observation=True" if self.require_observation else ""
        return (
            f"max_steps={self.max_steps}, add_llm_as_fallback={self.add_llm_as_fallback}, "
            f"tools={self.tool_names}{extra}"
        )
