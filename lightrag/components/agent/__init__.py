"""Agents and the tools they use.

* :class:`ReActAgent`: the ReAct loop (thought, action, observation) with ``finish`` and an
  optional ``llm_tool`` fallback; every run is an :class:`AgentRun` of ``StepOutput`` s.
* :func:`graph_rag_tools`: each graph-RAG query mode as a tool; :func:`retriever_tool`: any
  retriever as a tool.
* :func:`action_json_schema`: constrained decoding of actions for local models.

Example:
    >>> from lightrag.components.model_client import ScriptedClient
    >>> agent = ReActAgent(model_client=ScriptedClient(), add_llm_as_fallback=False)
    >>> agent.tool_names
    ['finish']
"""

from lightrag.components.agent.actions import action_json_schema, expression_from_reply
from lightrag.components.agent.prompts import (
    DEFAULT_REACT_AGENT_SYSTEM_PROMPT,
    DEFAULT_REACT_TEMPLATE,
)
from lightrag.components.agent.rag_tools import graph_rag_tools, retriever_tool
from lightrag.components.agent.react import AgentRun, ReActAgent, ReActStep

__all__ = [
    "DEFAULT_REACT_AGENT_SYSTEM_PROMPT",
    "DEFAULT_REACT_TEMPLATE",
    "AgentRun",
    "ReActAgent",
    "ReActStep",
    "action_json_schema",
    "expression_from_reply",
    "graph_rag_tools",
    "retriever_tool",
]
