"""LocalDB: transformers, incremental updates, queries and pickle round trips."""

from dataclasses import dataclass

import pytest

from lightrag.core.component import Component
from lightrag.core.db import LocalDB


@dataclass
class Note:
    text: str
    tag: str = "misc"


class Upper(Component):
    """A 1:1 transformer: upper-cases strings."""

    def __init__(self, suffix: str = "") -> None:
        super().__init__()
        self.suffix = suffix
        self.calls = 0

    def call(self, items):
        self.calls += 1
        return [s.upper() + self.suffix for s in items]


class Words(Component):
    """A 1:n transformer: splits each string into words."""

    def call(self, items):
        return [w for s in items for w in s.split()]


def note_text(note: Note) -> str:
    return note.text


@pytest.fixture
def db():
    return LocalDB(name="notes", items=[Note("a b"), Note("c", tag="x")])


def test_init_and_fields():
    empty = LocalDB()
    assert empty.name is None and empty.items == [] and empty.length == 0
    assert empty.transformed_items == {} and empty.transformer_setups == {}
    assert empty.mapper_setups == {}
    items = [1, 2]
    db = LocalDB("n", items)
    items.append(3)
    assert db.items == [1, 2]
    assert LocalDB[int](name="typed").name == "typed"


def test_transform_with_map_fn(db):
    key = db.transform(Upper(), key="upper", map_fn=note_text)
    assert key == "upper"
    assert db.get_transformed_data("upper") == ["A B", "C"]
    assert db.get_transformer_keys() == ["upper"]
    assert db.mapper_setups["upper"] is note_text
    assert isinstance(db.transformer_setups["upper"], Upper)


def test_default_keys_are_unique(db):
    first = db.register_transformer(Upper(), map_fn=note_text)
    second = db.register_transformer(Upper(), map_fn=note_text)
    assert (first, second) == ("Upper", "Upper_1")
    with pytest.raises(ValueError, match="already registered"):
        db.register_transformer(Upper(), key="Upper")


def test_register_then_transform_by_key(db):
    key = db.register_transformer(Words(), key="words", map_fn=note_text)
    assert db.get_transformer_keys() == []
    db.transform(key=key)
    assert db.get_transformed_data("words") == ["a", "b", "c"]
    with pytest.raises(ValueError):
        db.transform(key="missing")
    with pytest.raises(ValueError):
        db.transform()


def test_transform_again_replaces_the_transformer(db):
    db.transform(Upper(), key="upper", map_fn=note_text)
    db.transform(Upper("!"), key="upper")
    assert db.get_transformed_data("upper") == ["A B!", "C!"]
    assert [name for name, _ in db.named_children()] == ["upper"]


def test_extend_appends_once(db):
    upper = Upper()
    db.transform(upper, key="upper", map_fn=note_text)
    db.transform(Words(), key="words", map_fn=note_text)
    db.extend([Note("d e"), Note("f")])
    assert [n.text for n in db.items] == ["a b", "c", "d e", "f"]
    assert db.length == 4
    assert db.get_transformed_data("upper") == ["A B", "C", "D E", "F"]
    assert db.get_transformed_data("words") == ["a", "b", "c", "d", "e", "f"]
    assert upper.calls == 2
    db.extend([Note("g")], apply_transformer=False)
    assert db.length == 5 and len(db.get_transformed_data("upper")) == 4


def test_add_and_delete_keep_alignment(db):
    db.transform(Upper(), key="upper", map_fn=note_text)
    db.add(Note("z"))
    db.add(Note("first"), index=0)
    assert db.get_transformed_data("upper") == ["FIRST", "A B", "C", "Z"]
    removed = db.delete(1)
    assert removed == Note("a b")
    assert db.get_transformed_data("upper") == ["FIRST", "C", "Z"]
    assert db.delete() == Note("z")
    assert [n.text for n in db.items] == ["first", "c"]
    assert db.get_transformed_data("upper") == ["FIRST", "C"]
    db.delete(0, remove_transformed=False)
    assert db.get_transformed_data("upper") == ["FIRST", "C"]
    db.add(Note("q"), apply_transformer=False)
    assert db.length == 2
    with pytest.raises(IndexError):
        LocalDB().delete()


def test_load_replaces_items_and_retransforms(db):
    db.transform(Upper(), key="upper", map_fn=note_text)
    db.load([Note("x"), Note("y")])
    assert db.get_transformed_data("upper") == ["X", "Y"]


def test_fetch_and_filters(db):
    db.transform(Words(), key="words", map_fn=note_text)
    assert db.fetch_items(lambda n: n.tag == "x") == [Note("c", tag="x")]
    assert db.fetch_transformed_items("words", lambda w: w != "b") == ["a", "c"]
    assert db.get_transformed_data("words", filter_fn=lambda w: w == "a") == ["a"]
    with pytest.raises(ValueError, match="No transformed data"):
        db.get_transformed_data("nope")
    with pytest.raises(ValueError):
        db.fetch_transformed_items("nope", bool)


def test_plain_function_transformer():
    db = LocalDB(items=[1, 2])
    key = db.transform(lambda xs: (x + 1 for x in xs), key="inc")
    assert db.get_transformed_data(key) == [2, 3]
    assert list(db.named_children()) == []
    with pytest.raises(TypeError):
        db.register_transformer(42)  # type: ignore[arg-type]


def test_reset(db):
    db.transform(Upper(), key="upper", map_fn=note_text)
    db.reset()
    assert db.items == [] and db.transformed_items == {}
    assert db.transformer_setups == {} and db.mapper_setups == {}
    assert list(db.named_children()) == []


def test_printed_tree(db):
    db.transform(Upper(), key="upper", map_fn=note_text)
    assert repr(db) == (
        "LocalDB(\n  name='notes', length=2, transformed={'upper': 2}\n  (upper): Upper()\n)"
    )
    db.transform(Words(), key="items", map_fn=note_text)
    assert "(transformer_items): Words()" in repr(db)


def test_save_and_load_round_trip(db, tmp_path):
    db.transform(Upper(), key="upper", map_fn=note_text)
    path = tmp_path / "sub" / "db.pkl"
    db.save_state(path)
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    restored = LocalDB.load_state(path)
    assert restored.name == "notes"
    assert restored.items == db.items
    assert restored.transformed_items == db.transformed_items
    assert restored.mapper_setups["upper"] is note_text
    assert repr(restored) == repr(db)
    restored.extend([Note("new")])
    assert restored.get_transformed_data("upper")[-1] == "NEW"
    assert restored.transformer_setups["upper"] is restored.upper


def test_save_unpicklable_and_load_wrong_type(db, tmp_path):
    db.transform(Upper(), key="upper", map_fn=lambda n: n.text)
    with pytest.raises(ValueError, match="cannot be pickled"):
        db.save_state(tmp_path / "db.pkl")
    assert not (tmp_path / "db.pkl").exists()
    from lightrag.utils.file_io import save_pickle

    save_pickle([1, 2], tmp_path / "list.pkl")
    with pytest.raises(TypeError, match="not a LocalDB"):
        LocalDB.load_state(tmp_path / "list.pkl")
