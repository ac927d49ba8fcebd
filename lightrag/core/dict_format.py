"""Conversions between dicts and JSON / YAML text (YAML is always loaded safely).

Example:
    >>> from_dict_to_yaml({"b": 1, "a": [1, 2]}).splitlines()
    ['b: 1', 'a:', '- 1', '- 2']
    >>> from_json_to_dict('{"a": 1}')
    {'a': 1}
"""

from __future__ import annotations

import json
from typing import Any, Dict

import yaml

from lightrag.utils.safe_yaml import safe_load as bounded_yaml_load


def represent_ordereddict(dumper: yaml.Dumper, data: Dict[Any, Any]) -> yaml.MappingNode:
    """A PyYAML representer writing an ``OrderedDict`` as a plain mapping in its order."""
    value = [(dumper.represent_data(k), dumper.represent_data(v)) for k, v in data.items()]
    return yaml.MappingNode("tag:yaml.org,2002:map", value)


def from_dict_to_json(data: Dict[str, Any], sort_keys: bool = False) -> str:
    """``data`` as indented JSON; ``ValueError`` when it cannot be encoded."""
    try:
        return json.dumps(data, indent=4, sort_keys=sort_keys)
    except (TypeError, ValueError) as e:
        raise ValueError(f"Failed to convert dict to JSON: {e}") from e


def from_dict_to_yaml(data: Dict[str, Any], sort_keys: bool = False) -> str:
    """``data`` as block-style YAML; ``ValueError`` when it cannot be encoded."""
    try:
        return yaml.safe_dump(data, default_flow_style=False, sort_keys=sort_keys)
    except yaml.YAMLError as e:
        raise ValueError(f"Failed to convert dict to YAML: {e}") from e


def from_json_to_dict(json_str: str) -> Dict[str, Any]:
    """Parse JSON text; ``ValueError`` naming the problem when it is not JSON."""
    try:
        return json.loads(json_str)
    except json.JSONDecodeError as e:
        raise ValueError(f"Failed to convert JSON to dict: {e}") from e


def from_yaml_to_dict(yaml_str: str) -> Dict[str, Any]:
    """Parse YAML text with ``yaml.safe_load``; ``ValueError`` when it is not YAML."""
    try:
        return bounded_yaml_load(yaml_str)
    except yaml.YAMLError as e:
        raise ValueError(f"Failed to convert YAML to dict: {e}") from e
