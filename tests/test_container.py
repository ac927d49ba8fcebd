import asyncio
from collections import OrderedDict

import pytest

from lightrag.core.component import Component, FunComponent
from lightrag.core.container import Sequential


def add(n):
    return FunComponent(lambda x: x + n)


class TwoArgs(Component):
    def call(self, a, b=0):
        return (a + b,), {"b": 100}


class AsyncDouble(Component):
    def call(self, x):
        return 2 * x

    async def acall(self, x):
        await asyncio.sleep(0)
        return 2 * x


def test_pipes_single_value():
    assert Sequential(add(1), add(10))(0) == 11


def test_named_ordered_dict_and_indexing():
    seq = Sequential(OrderedDict([("first", add(1)), ("second", add(2))]))
    assert [n for n, _ in seq.named_children()] == ["first", "second"]
    assert seq["second"] is seq[1] is seq[-1]
    sub = seq[0:1]
    assert isinstance(sub, Sequential) and len(sub) == 1
    with pytest.raises(IndexError):
        seq[5]


def test_mutation_rekeys():
    seq = Sequential(add(1), add(2), add(3))
    del seq[0]
    assert [n for n, _ in seq.named_children()] == ["0", "1"]
    assert seq(0) == 5
    seq.append(add(100)).insert(0, add(1000))
    assert seq(0) == 1105
    seq[0] = add(0)
    assert seq(0) == 105
    seq.extend([add(1)])
    assert len(seq) == 5 and list(iter(seq))[-1] is seq[4]


def test_add_only_sequential():
    joined = Sequential(add(1)) + Sequential(add(2))
    assert joined(0) == 3
    with pytest.raises(ValueError):
        Sequential(add(1)) + add(2)
    seq = Sequential(add(1))
    seq += Sequential(add(5))
    assert seq(0) == 6


def test_args_kwargs_passing():
    seq = Sequential(TwoArgs(), TwoArgs())
    assert seq(1, b=2) == 103


def test_acall_mixes_async_and_sync():
    seq = Sequential(AsyncDouble(), add(1), AsyncDouble())
    assert asyncio.run(seq.acall(3)) == 14


def test_repr_lists_children():
    assert repr(Sequential(AsyncDouble())) == "Sequential(\n  (0): AsyncDouble()\n)"
