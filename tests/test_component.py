"""Component: registration, traversal, modes, state, serialization and the printed tree."""

import asyncio

import pytest

from lightrag.core.component import Component, FunComponent, fun_to_component
from lightrag.core.parameter import Parameter
from lightrag.utils.registry import register


@register
class Leaf(Component):
    def __init__(self, factor: int = 2):
        super().__init__()
        self.factor = factor
        self.weight = Parameter(data="leaf prompt")

    def call(self, x):
        return x * self.factor

    def _extra_repr(self):
        return f"factor={self.factor}"


@register
class Middle(Component):
    def __init__(self):
        super().__init__()
        self.left = Leaf(2)
        self.right = Leaf(3)
        self.instruction = Parameter(data="be brief")

    def call(self, x):
        return self.left(x) + self.right(x)


@register
class Top(Component):
    def __init__(self):
        super().__init__()
        self.middle = Middle()

    def call(self, x):
        return self.middle(x) + 1


def test_call_dispatches_to_call_and_acall_runs_it():
    top = Top()
    assert top(1) == 6
    assert top.call(1) == 6
    assert asyncio.run(top.acall(1)) == 6


def test_missing_call_raises_named_error():
    class Empty(Component):
        pass

    with pytest.raises(NotImplementedError, match="Empty is missing the required 'call'"):
        Empty()(1)


def test_assigning_before_super_init_raises():
    class Bad(Component):
        def __init__(self):
            self.child = Leaf()
            super().__init__()

    with pytest.raises(AttributeError, match="before"):
        Bad()

    class BadParam(Component):
        def __init__(self):
            self.p = Parameter(data=1)
            super().__init__()

    with pytest.raises(AttributeError):
        BadParam()


def test_named_children_and_components_order():
    top = Top()
    assert [n for n, _ in top.named_children()] == ["middle"]
    names = [n for n, _ in top.named_components()]
    assert names == ["", "middle", "middle.left", "middle.right"]
    assert next(iter(top.named_components()))[1] is top
    assert list(top.middle.children()) == [top.middle.left, top.middle.right]


def test_shared_child_is_listed_once():
    class Shared(Component):
        def __init__(self):
            super().__init__()
            leaf = Leaf()
            self.a = leaf
            self.b = leaf

    shared = Shared()
    assert [n for n, _ in shared.named_children()] == ["a"]
    assert len(list(shared.named_components(remove_duplicate=False))) == 3


def test_named_parameters_dotted_and_recursive_flag():
    top = Top()
    names = [n for n, _ in top.named_parameters()]
    assert names == ["middle.instruction", "middle.left.weight", "middle.right.weight"]
    assert [n for n, _ in top.middle.named_parameters(recursive=False)] == ["instruction"]
    assert len(list(top.parameters())) == 3


def test_reassigning_attribute_unregisters():
    mid = Middle()
    mid.left = None
    assert mid.get_subcomponent("left") is None
    assert [n for n, _ in mid.named_children()] == ["right"]
    mid.right = "not a component"
    assert "right" not in mid._components
    del mid.instruction
    assert [n for n, _ in mid.named_parameters()] == []


def test_register_component_and_parameter_validation():
    comp = Component()
    comp.register_component("child", Leaf())
    assert comp.get_subcomponent("child") is comp.child
    with pytest.raises(KeyError):
        comp.register_component("a.b", Leaf())
    with pytest.raises(TypeError):
        comp.register_component("x", object())
    comp.register_parameter("p", Parameter(data="x"))
    assert dict(comp.named_parameters(recursive=False)) == {"p": comp.p}
    with pytest.raises(TypeError):
        comp.register_parameter("q", "not a parameter")


def test_train_eval_recursive():
    top = Top()
    assert not top.middle.left.training
    assert top.train() is top
    assert all(c.training for _, c in top.named_components())
    top.eval()
    assert not any(c.training for _, c in top.named_components())
    with pytest.raises(ValueError):
        top.train("yes")


def test_state_dict_round_trip_and_strict_errors():
    top = Top()
    state = top.state_values()
    assert all(isinstance(p, Parameter) for p in top.state_dict().values())
    assert {k: p.data for k, p in top.state_dict().items()} == state == {
        "middle.instruction": "be brief",
        "middle.left.weight": "leaf prompt",
        "middle.right.weight": "leaf prompt",
    }
    other = Top()
    state["middle.instruction"] = "be thorough"
    result = other.load_state_dict(state)
    assert other.middle.instruction.data == "be thorough"
    assert result.missing_keys == [] and result.unexpected_keys == []
    with pytest.raises(RuntimeError, match="unexpected keys"):
        other.load_state_dict({**state, "nope": 1})
    with pytest.raises(RuntimeError, match="missing keys"):
        other.load_state_dict({"middle.instruction": "x"})
    loose = other.load_state_dict({"middle.instruction": "y", "extra": 1}, strict=False)
    assert loose.unexpected_keys == ["extra"] and other.middle.instruction.data == "y"
    with pytest.raises(TypeError):
        other.load_state_dict({**state, "middle.instruction": 5})


def test_repr_is_torch_style_tree():
    assert repr(Top()) == (
        "Top(\n"
        "  (middle): Middle(\n"
        "    (left): Leaf(factor=2)\n"
        "    (right): Leaf(factor=3)\n"
        "  )\n"
        ")"
    )
    assert repr(Leaf()) == "Leaf(factor=2)"


def test_to_dict_from_dict_round_trip():
    top = Top()
    top.middle.instruction.update_value("changed")
    data = top.to_dict()
    assert data["type"] == "Top"
    rebuilt = Top.from_dict(data)
    assert rebuilt(1) == 6
    assert repr(rebuilt) == repr(top)
    assert rebuilt.state_values() == top.state_values()


def test_fun_component_and_decorator():
    add = FunComponent(lambda x: x + 1)
    assert add(1) == 2

    @fun_to_component
    def add_one(x):
        return x + 1

    assert type(add_one).__name__ == "AddOneComponent"
    assert add_one(1) == 2
    assert repr(add_one) == "AddOneComponent(fun_name=add_one)"

    @fun_to_component
    async def add_two(x):
        return x + 2

    assert asyncio.run(add_two.acall(1)) == 3


def test_custom_dunder_call_is_respected():
    class Custom(Component):
        def __call__(self, x):
            return ("custom", self.call(x))

        def call(self, x):
            return x

    class Child(Custom):
        def call(self, x):
            return x * 10

    assert Custom()(1) == ("custom", 1)
    assert Child()(1) == ("custom", 10)


def test_from_dict_with_unregistered_child_names_the_class():
    class Unregistered(Component):
        def call(self, x):
            return x

    holder = Component()
    holder.child = Unregistered()
    with pytest.raises(ValueError, match="Unregistered"):
        Component.from_dict(holder.to_dict())


def test_call_dispatches_at_call_time_so_patching_works():
    from unittest import mock

    class Echo(Component):
        def call(self, x):
            return x

    echo = Echo()
    with mock.patch.object(Echo, "call", return_value="patched"):
        assert echo(1) == "patched"
    assert echo(1) == 1
    echo.call = lambda x: x * 10
    assert echo(2) == 20


def test_pickling_helpers_round_trip(tmp_path):
    top = Top()
    top.middle.instruction.update_value("pickled")
    assert top.is_picklable()
    path = tmp_path / "top.pkl"
    top.pickle_to_file(str(path))
    rebuilt = Top.load_from_pickle(str(path))
    assert rebuilt.middle.instruction.data == "pickled" and rebuilt(1) == top(1)
    import pickle

    whole = tmp_path / "whole.pkl"
    whole.write_bytes(pickle.dumps(top))
    assert Component.load_state_pickle(str(whole)).middle.instruction.data == "pickled"


def test_inspect_signature_of_a_component_is_its_call():
    import inspect

    class Scale(Component):
        def __init__(self, factor: int = 2):
            super().__init__()
            self.factor = factor

        def call(self, x: int) -> int:
            return self.factor * x

    assert str(inspect.signature(Scale())) == "(x: int) -> int"
    assert str(inspect.signature(Scale)) == "(factor: int = 2)"
