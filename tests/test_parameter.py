import pytest

from lightrag.core.parameter import Parameter, ParameterType


def test_update_value_type_checked():
    p = Parameter(data="a")
    p.update_value("b")
    assert p.data == "b"
    with pytest.raises(TypeError, match="expects str"):
        p.update_value(3)
    empty = Parameter()
    empty.update_value([1])
    assert empty.data == [1]


def test_propose_step_revert():
    p = Parameter(data="v1", param_type="demos")
    assert p.param_type is ParameterType.DEMOS
    p.propose_data("v2")
    assert p.data == "v2" and p.proposing
    with pytest.raises(RuntimeError):
        p.propose_data("v3")
    p.revert_data()
    assert p.data == "v1" and not p.proposing
    p.propose_data("v2")
    p.step_data()
    assert p.data == "v2"
    p.revert_data()
    assert p.data == "v2"


def test_to_from_dict_and_repr():
    p = Parameter(data="x", requires_opt=False, role_desc="system prompt", name="sys")
    assert Parameter.from_dict(p.to_dict()) == p
    assert repr(p) == "Parameter: x"
