"""lightrag 0.1's ``core.functional`` names, re-exported from the modules that own each concept.

Data-class schemas live in :mod:`lightrag.core.type_schema`, text extraction and JSON/YAML repair
in :mod:`lightrag.core.text_extract`, the safe expression evaluator in
:mod:`lightrag.core.safe_eval`, vectors in :mod:`lightrag.core.vector_ops`, dict/JSON/YAML
conversions in :mod:`lightrag.core.dict_format`.

Example:
    >>> from lightrag.core.functional import extract_json_str, normalize_vector
    >>> extract_json_str('Sure: {"a": 1')
    '{"a": 1}'
    >>> normalize_vector([0.0, 2.0])
    [0.0, 1.0]
"""

from dataclasses import MISSING

from lightrag.core.base_data_class import custom_asdict
from lightrag.core.dict_format import (
    from_dict_to_json,
    from_dict_to_yaml,
    from_json_to_dict,
    from_yaml_to_dict,
    represent_ordereddict,
)
from lightrag.core.func_tool import (
    generate_function_call_expression_from_callable,
    generate_readable_key_for_function,
    get_fun_schema,
)
from lightrag.core.model_client import compose_model_kwargs
from lightrag.core.safe_eval import (
    SAFE_BUILTINS,
    evaluate_ast_node,
    parse_function_call_expr,
    sandbox_exec,
)
from lightrag.core.string_parser import (
    extract_first_boolean,
    extract_first_float,
    extract_first_int,
)
from lightrag.core.text_extract import (
    extract_function_expression,
    extract_json_str,
    extract_list_str,
    extract_yaml_str,
    fix_json_escaped_single_quotes,
    fix_json_missing_commas,
    parse_json_str_to_obj,
    parse_yaml_str_to_obj,
)
from lightrag.core.type_schema import (
    check_data_class_field_args_one,
    check_data_class_field_args_zero,
    convert_schema_to_signature,
    dataclass_obj_from_dict,
    extract_dataclass_type,
    get_dataclass_schema,
    get_enum_schema,
    get_type_schema,
    is_dataclass_instance,
    is_potential_dataclass,
    validate_data,
)
from lightrag.core.vector_ops import (
    VECTOR_TYPE,
    get_top_k_indices_scores,
    is_normalized,
    normalize_np_array,
    normalize_vector,
)

__all__ = [
    "MISSING", "SAFE_BUILTINS", "VECTOR_TYPE", "check_data_class_field_args_one",
    "check_data_class_field_args_zero", "compose_model_kwargs", "convert_schema_to_signature",
    "custom_asdict", "dataclass_obj_from_dict", "evaluate_ast_node", "extract_dataclass_type",
    "extract_first_boolean", "extract_first_float", "extract_first_int",
    "extract_function_expression", "extract_json_str", "extract_list_str", "extract_yaml_str",
    "fix_json_escaped_single_quotes", "fix_json_missing_commas", "from_dict_to_json",
    "from_dict_to_yaml", "from_json_to_dict", "from_yaml_to_dict",
    "generate_function_call_expression_from_callable", "generate_readable_key_for_function",
    "get_dataclass_schema", "get_enum_schema", "get_fun_schema", "get_top_k_indices_scores",
    "get_type_schema", "is_dataclass_instance", "is_normalized", "is_potential_dataclass",
    "normalize_np_array", "normalize_vector", "parse_function_call_expr", "parse_json_str_to_obj",
    "parse_yaml_str_to_obj", "represent_ordereddict", "sandbox_exec", "validate_data",
]  # fmt: skip
