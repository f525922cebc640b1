"""Model inputs: dependency distances on the tool's scale, block run-length folding, vocabularies."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ptxstatic.analysis.sequence import SeqItem
from ptxstatic.models.inference.encoding import DEFAULT_FIELDS, Vocabulary, fold_blocks, to_steps, writer_distances


def item(op: str, n_dst: int = 1, dist: int = 0) -> SeqItem:
    return SeqItem(op, "int", "", "s32", 1, 2, n_dst, False, dist, "arith" if dist else "none")


def test_writer_distance_counts_register_writers_and_honours_the_window() -> None:
    runs = [(item("mov"), 1), (item("st", n_dst=0), 1), (item("st", n_dst=0), 1), (item("add", dist=3), 1)]
    assert writer_distances(runs) == [0, 0, 0, 1]  # two stores between producer and consumer write nothing
    long = [(item("mov"), 1), (item("add"), 10), (item("sub", dist=11), 1)]
    assert writer_distances(long) == [0, 0, 0]  # the producer is 11 writers back: beyond the window of 9
    assert writer_distances([(item("mov"), 1), (item("add"), 8), (item("sub", dist=9), 1)])[-1] == 9


def test_loop_body_folds_into_one_copy_with_multiplied_counts() -> None:
    body = [item("ld"), item("fma", dist=1), item("st", n_dst=0, dist=1)]
    prologue, epilogue = [item("mov")], [item("add", dist=1)]
    expanded = prologue + body * 50 + epilogue
    steps = to_steps(expanded)
    assert [c for _, c in steps] == [1, 50, 50, 50, 1]
    assert to_steps([(prologue[0], 1), ([(b, 1) for b in body], 50), (epilogue[0], 1)]) == steps


@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=40), st.integers(1, 5))
def test_folding_preserves_the_expanded_sequence(keys: list[str], reps: int) -> None:
    steps = [((k,), 1) for k in keys] * reps
    folded = fold_blocks(steps)
    totals: dict[tuple[str, ...], int] = {}
    for key, count in folded:
        totals[key] = totals.get(key, 0) + count
    assert totals == {(k,): keys.count(k) * reps for k in set(keys)}
    assert len(folded) <= len(steps)


def test_unknown_values_map_to_the_reserved_index() -> None:
    vocab = Vocabulary.build([to_steps([item("add"), item("mul")])], DEFAULT_FIELDS)
    ids, counts = vocab.encode(to_steps([item("add"), item("ret", n_dst=0)]))
    assert ids[0].min() > 0 and ids[1][DEFAULT_FIELDS.index("opcode")] == 0
    assert counts.tolist() == [1.0, 1.0]
    assert vocab.unknown(to_steps([item("ret", n_dst=0)])) == {"opcode": ["ret"], "n_dst": ["0"]}
    assert Vocabulary.from_dict(vocab.to_dict()).values == vocab.values
