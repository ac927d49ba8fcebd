"""Property-based tests (Hypothesis) of the untrusted-input parsers: the extraction parser, the
output parsers, config loading and QueryParam validation. Each property says what holds for
*any* input: no crash but the documented error, round trips, no secret survives redaction."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from lightrag.components.graph_rag.extraction_parser import (
    MAX_NAME_CHARS,
    parse_extraction_output,
    records_to_json,
    records_to_lines,
    truncation_reason,
)
from lightrag.components.graph_rag.schemas import EntityRecord, RelationRecord
from lightrag.components.output_parsers import (
    BooleanOutputParser,
    JsonOutputParser,
    ListOutputParser,
    YamlOutputParser,
)
from lightrag.core.base_data_class import DataClass
from lightrag.utils.config import ConfigError, build, load_config
from lightrag.utils.safe_yaml import YamlLimitError, safe_load
from lightrag.utils.secrets import REDACTED, find_secrets, redact

# Hypothesis keeps caches in ./.hypothesis by default; keep the working tree clean.
set_hypothesis_home_dir(str(Path(tempfile.gettempdir()) / "lightrag-hypothesis"))
FAST = settings(max_examples=60, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])

# ------------------------------------------------------------------ extraction parser
WORD = st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True)  # the parser folds full-width forms
NAME = st.lists(WORD, min_size=1, max_size=3).map(" ".join).map(str.title)
SENTENCE = st.lists(WORD, min_size=1, max_size=8).map(" ".join).map(lambda s: s + ".")
TYPE = st.sampled_from(["person", "organization", "location", "concept", "event"])
NOISE = st.lists(
    st.sampled_from(list("entity relation<|#|>DONE{}[]\"'`:,\n ()*-1.")
                    + ["<|#|>", "<|DONE|>", "entity", "relation", "\n", '{"entities": [']),
    max_size=120,
).map("".join)


@st.composite
def graphs(draw):
    names = draw(st.lists(NAME, min_size=1, max_size=6, unique_by=str.lower))
    entities = [EntityRecord(entity_name=n, entity_type=draw(TYPE), description=draw(SENTENCE))
                for n in names]  # fmt: skip
    relations = []
    if len(names) > 1:
        for a, b in draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names)), max_size=5)):
            if a != b:
                relations.append(RelationRecord(src_id=a, tgt_id=b, keywords="link",
                                                description=draw(SENTENCE)))  # fmt: skip
    return entities, relations


@FAST
@given(st.one_of(st.text(max_size=400), NOISE))
def test_extraction_parser_never_raises_and_returns_clean_records(text):
    entities, relations, problems = parse_extraction_output(text, "c1", "f.md")
    assert all(isinstance(p, str) for p in problems)
    for e in entities:
        assert e.entity_name and len(e.entity_name) <= MAX_NAME_CHARS and e.description
        assert e.source_id == "c1" and e.file_path == "f.md"
    for r in relations:
        assert r.src_id and r.tgt_id and r.src_id != r.tgt_id and r.description
    truncation_reason(text)  # never raises either


def _ours(names):
    return {n.lower() for n in names}


@FAST
@given(graphs(), st.booleans())
def test_extraction_round_trip_and_truncation(graph, use_json):
    entities, relations = graph
    text = records_to_json(entities, relations) if use_json else records_to_lines(entities, relations)
    got_e, got_r, _ = parse_extraction_output(text, "c1")
    assert _ours(e.entity_name for e in got_e) == _ours(e.entity_name for e in entities)
    assert {e.description for e in got_e} <= {e.description for e in entities}
    assert len(got_r) <= len(relations)
    assert truncation_reason(text) is None
    cut = text[: max(1, len(text) * 2 // 3)]  # a cut before the end marker / closing brackets
    if (use_json and not cut.rstrip().endswith("}")) or (not use_json and "<|DONE|>" not in cut):
        assert truncation_reason(cut) is not None


# ---------------------------------------------------------------------- output parsers
@dataclass
class Item(DataClass):
    name: str = field(metadata={"desc": "name"})
    count: int = field(default=0, metadata={"desc": "count"})


PRINTABLE = st.characters(blacklist_categories=("Cs", "Cc"))
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                         st.text(alphabet=PRINTABLE, max_size=20))  # fmt: skip
JSON_KEYS = st.from_regex(r"[a-z_]{1,8}", fullmatch=True)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(JSON_KEYS, inner, max_size=4)),  # fmt: skip
    max_leaves=12,
)
OBJECTS = st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), JSON_VALUES, min_size=1, max_size=5)


@FAST
@given(st.text(max_size=300))
def test_output_parsers_raise_only_value_error(text):
    for parser in (JsonOutputParser(Item), YamlOutputParser(Item), ListOutputParser(),
                   JsonOutputParser(Item, return_data_class=True)):  # fmt: skip
        try:
            parser(text)
        except ValueError:
            pass
    assert BooleanOutputParser()(text) in (True, False, None)


@FAST
@given(OBJECTS, st.sampled_from(["", "Here you go:\n", "<think>hmm {</think>"]))
def test_json_output_parser_round_trips_objects(obj, prefix):
    text = f"{prefix}```json\n{json.dumps(obj)}\n```"
    assert JsonOutputParser(Item)(text) == obj


@FAST
@given(st.lists(JSON_VALUES, min_size=1, max_size=6))
def test_list_output_parser_round_trips_lists(items):
    assert ListOutputParser()(json.dumps(items)) == items


@FAST
@given(st.from_regex(r"[A-Za-z][A-Za-z ]{0,20}", fullmatch=True), st.integers(0, 10**6))
def test_yaml_output_parser_round_trips_data_classes(name, count):
    assume(name.strip() == name and name.lower() not in ("yes", "no", "on", "off", "true", "false", "null"))
    text = "```yaml\n" + yaml.safe_dump({"name": name, "count": count}) + "```"
    assert YamlOutputParser(Item, return_data_class=True)(text) == Item(name=name, count=count)


# ------------------------------------------------------------------------ config loading
SECRET_KEYS = st.sampled_from(["api_key", "apikey", "apiKey", "token", "password", "Authorization",
                               "client_secret", "x-api-key", "secret"])  # fmt: skip
PLAIN_KEYS = st.sampled_from(["model", "top_k", "temperature", "max_tokens", "name", "url", "pad_token"])
SECRET_VALUES = st.from_regex(r"[A-Za-z0-9]{12,24}", fullmatch=True)


@st.composite
def configs_with_a_secret(draw):
    """A nested dict with one secret somewhere (by key, in headers or in a URL)."""
    value = draw(SECRET_VALUES)
    kind = draw(st.sampled_from(["key", "header", "url_user", "url_query"]))
    leaf = {
        "key": {draw(SECRET_KEYS): value},
        "header": {"extra_headers": {"Authorization": f"Bearer {value}", "Accept": "json"}},
        "url_user": {"base_url": f"https://user:{value}@example.com/v1"},
        "url_query": {"base_url": f"https://example.com/v1?api_key={value}&v=1"},
    }[kind]
    depth = draw(st.integers(0, 4))
    for _ in range(depth):
        wrapper = draw(st.sampled_from(["dict", "list"]))
        noise = {draw(PLAIN_KEYS): draw(JSON_SCALARS)}
        if wrapper == "dict":
            leaf = {**noise, draw(st.from_regex(r"[a-z]{3,8}", fullmatch=True)): leaf}
        else:
            leaf = [noise, leaf]
    return (leaf if isinstance(leaf, dict) else {"items": leaf}), value


@FAST
@given(configs_with_a_secret())
def test_secrets_found_at_any_depth_and_redaction_removes_them(case):
    config, value = case
    found = find_secrets(config)
    assert found, config
    cleaned = redact(config)
    assert find_secrets(cleaned) == []
    assert value not in json.dumps(cleaned)
    assert redact(cleaned) == cleaned  # idempotent
    with_root = {"component_name": "Sequential", "component_config": {"args": [], "extra": config}}
    try:
        build(with_root)
    except ConfigError as e:
        assert value not in str(e)
        assert e.path.startswith("component_config.extra")
    else:
        raise AssertionError("a config with a secret was built")


@FAST
@given(st.dictionaries(PLAIN_KEYS, JSON_SCALARS, max_size=5))
def test_plain_settings_have_no_secrets(config):
    assert find_secrets(config) == [] and redact(config) == config
    assert REDACTED not in json.dumps(redact(config))


@FAST
@given(st.text(max_size=300))
def test_load_config_raises_only_config_errors(text):
    try:
        loaded = load_config(text)
    except ConfigError:
        return
    except FileNotFoundError:  # a one-line text ending in .yaml is taken as a path
        assert text.strip().endswith((".yaml", ".yml"))
        return
    assert isinstance(loaded, dict)


@FAST
@given(st.integers(1, 6), st.integers(1, 12))
def test_alias_expansion_is_bounded(levels, fanout):
    lines = ["l0: &l0 [x]"] + [
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fanout)}]" for i in range(1, levels + 1)
    ]
    text = "\n".join(lines)
    try:
        loaded = safe_load(text, max_nodes=10_000)
    except YamlLimitError:
        assert fanout ** levels > 1_000 or levels * fanout > 1000
    else:
        assert isinstance(loaded, dict)


# --------------------------------------------------------------------------------- QueryParam
QUERY_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
    st.text(max_size=12), st.sampled_from(["local", "mix", "VECTOR", "RELEVANCE", "10", "-5"]),
    st.lists(st.one_of(st.text(max_size=5), st.integers()), max_size=3),
    st.lists(st.dictionaries(st.sampled_from(["role", "content"]),
                             st.one_of(st.text(max_size=5), st.integers()), max_size=2),
             max_size=2),  # fmt: skip
)


@FAST
@given(st.dictionaries(st.sampled_from([
    "mode", "only_need_context", "stream", "top_k", "chunk_top_k", "max_entity_tokens",
    "max_total_tokens", "hl_keywords", "conversation_history", "user_prompt", "response_type",
    "chunk_pick_method", "related_chunk_number", "chunk_merge_method"]), QUERY_VALUES, max_size=4))
def test_query_param_validates_every_field_by_name(kwargs):
    from lightrag.components.graph_rag.schemas import QueryParam

    try:
        param = QueryParam(**kwargs)
    except (TypeError, ValueError) as e:
        named = [name for name in kwargs if f"QueryParam.{name}" in str(e)]
        assert named, f"{e} does not name one of {sorted(kwargs)}"
        return
    assert param.top_k >= 1 and param.chunk_top_k >= 1
    for name in ("max_entity_tokens", "max_total_tokens"):
        value = getattr(param, name)
        assert value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1)
    assert all(isinstance(k, str) for k in param.hl_keywords)
