"""Tests for flux_conformance.reference.rset (RFC 20 R): decoding, encoding, set operations, error reporting."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import case_inputs

from flux_conformance.reference import _rset_algebra, _rset_model, _rset_rlite, rset
from flux_conformance.reference.errors import InvalidError, LimitError
from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.operations import run


def r_doc(
    rlite: list[tuple[str, dict[str, str]]], nodelist: list[str], **execution: Any
) -> dict[str, Any]:
    ex: dict[str, Any] = {
        "R_lite": [{"rank": r, "children": c} for r, c in rlite],
        "nodelist": nodelist,
    }
    ex.update(execution)
    return {"version": 1, "execution": ex}


# RFC 20's example R, as the suite encodes it (verbatim).
#: The edition before RFC 14 f04092b and RFC 20 8da980e.
OLD = "2025-07-31"

EXAMPLE_DOC: dict[str, Any] = case_inputs("rfc20/R.validate.yaml", "R.validate.rfc-example")[
    "R.validate.rfc-example"
]


def test_example_decodes_to_four_ranks() -> None:
    rows = rset.decode(EXAMPLE_DOC)
    assert [r["rank"] for r in rows] == [19, 20, 21, 22]
    assert [r["hostname"] for r in rows] == ["node186", "node187", "node188", "node189"]
    assert {(r["cores"], r["gpus"]) for r in rows} == {("0-47", "0-7")}


def test_reserved_key_draws_a_warning_naming_it() -> None:
    # nslots is defined since RFC 20 8da980e; before, the key was reserved.
    assert rset.validate(EXAMPLE_DOC) == []
    assert rset.validate(EXAMPLE_DOC, edition=OLD) == [
        "execution.nslots: key reserved for future extensions; ignored"
    ]


@pytest.mark.parametrize(
    ("nslots", "error"),
    [
        (0, InvalidError),
        (-1, InvalidError),
        (1.5, InvalidError),
        ("4", InvalidError),
        (True, InvalidError),
        (2**64, LimitError),
    ],
)
def test_nslots_is_an_integer_above_zero(nslots: object, error: type[Exception]) -> None:
    doc = r_doc([("0", {"core": "0"})], ["n0"])
    doc["execution"]["nslots"] = nslots
    with pytest.raises(error):
        rset.validate(doc)
    assert rset.validate(doc, edition=OLD) == [
        "execution.nslots: key reserved for future extensions; ignored"
    ]


def test_latest_edition_drops_attributes_and_opens_scheduling() -> None:
    doc = r_doc([("0", {"core": "0"})], ["n0"])
    with_attributes = {**doc, "attributes": {"system": {"scheduler": {"queue": "batch"}}}}
    assert rset.validate(with_attributes) == [
        "attributes: key reserved for future extensions; ignored"
    ]
    assert rset.validate(with_attributes, edition=OLD) == []
    opaque = {**doc, "scheduling": {"writer": "fluxion", "anything": [1, 2]}}
    assert rset.validate(opaque) == []
    with pytest.raises(InvalidError, match="scheduling needs a graph"):
        rset.validate(opaque, edition=OLD)
    with pytest.raises(InvalidError, match="writer must be a string"):
        rset.validate({**doc, "scheduling": {"writer": 5}})
    with pytest.raises(InvalidError, match="needs execution"):
        rset.validate({"version": 1, "scheduling": {"writer": "fluxion"}})


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (r_doc([("0-2", {"core": "0"})], ["n[0-1]"]), "nodelist names 2 hosts but R_lite has 3"),
        (
            r_doc([("0", {"core": "0-1"}), ("0", {"core": "1"})], ["n0"]),
            "execution.R_lite[1]: a rank listed by several entries has overlapping",
        ),
        (
            r_doc([("0", {"core": "0"})], ["n0"], properties={"a|b": "0"}),
            "execution.properties.a|b: property name 'a|b' contains |",
        ),
        (
            r_doc([("0", {"core": "0"})], ["n0"], properties={"ssd": "1"}),
            "property 'ssd' names ranks 1 that R_lite lacks",
        ),
        (
            r_doc([("0", {"core": "01"})], ["n0"]),
            "execution.R_lite[0].children.core: core is not a valid RFC 22 idset",
        ),
        (
            r_doc([("0", {"core": "0"})], ["n0"], starttime=5, expiration=5),
            "execution.expiration: expiration must be later than starttime",
        ),
        ({"version": True, "execution": {}}, "version: version must be the integer 1"),
    ],
)
def test_invalid_documents_name_the_place(doc: Any, message: str) -> None:
    with pytest.raises(InvalidError) as info:
        rset.validate(doc)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("times", "valid"),
    [
        ({"starttime": 0, "expiration": 0}, True),
        ({"starttime": 0.0, "expiration": 0.0}, True),
        ({"expiration": 0}, True),
        ({"starttime": 100, "expiration": 0}, False),
        ({"starttime": 0.5, "expiration": 0}, False),
        ({"starttime": 100, "expiration": 100.5}, True),
        ({"starttime": 100, "expiration": 50}, False),
    ],
)
def test_only_the_all_zero_pair_means_no_times(times: dict[str, float], valid: bool) -> None:
    # Before RFC 20 e775b80; since, any time of 0 means unset (so only 100 -> 50 is refused).
    doc = r_doc([("0", {"core": "0"})], ["n0"], **times)
    if valid:
        assert rset.validate(doc, edition=OLD) == []
    else:
        with pytest.raises(InvalidError):
            rset.validate(doc, edition=OLD)
    if times.get("expiration") == 50:
        with pytest.raises(InvalidError):
            rset.validate(doc)
    else:
        assert rset.validate(doc) == []


def test_huge_rank_is_a_limit_not_a_wrap() -> None:
    with pytest.raises(LimitError):
        rset.validate(r_doc([("18446744073709551616", {"core": "0"})], ["n0"]))


def test_graph_is_checked_structurally() -> None:
    meta = {
        "type": "node",
        "uuid": "u",
        "basename": "node",
        "name": "node0",
        "id": 0,
        "properties": {},
        "size": 1,
        "unit": "",
    }
    graph = {"nodes": [{"id": "a", "metadata": meta}], "edges": []}
    # Before RFC 20 e775b80 an R may be a graph alone, and the graph is RFC 20's JGF.
    assert rset.validate({"version": 1, "scheduling": {"graph": graph}}, edition=OLD) == []
    assert rset.decode({"version": 1, "scheduling": {"graph": graph}}, edition=OLD) == []
    edge = {"source": "a", "target": "b", "metadata": {"subsystem": "c", "relationship": "d"}}
    bad = {"version": 1, "scheduling": {"graph": {**graph, "edges": [edge]}}}
    with pytest.raises(InvalidError, match="edge target 'b' names no vertex"):
        rset.validate(bad, edition=OLD)
    # Since, the scheduling key belongs to the scheduler that wrote it: not checked.
    doc = r_doc([("0", {"core": "0"})], ["n0"])
    assert rset.validate({**doc, "scheduling": bad["scheduling"]}) == []


def test_large_homogeneous_r_stays_one_run() -> None:
    doc = r_doc([("0-16383", {"core": "0-63", "gpu": "0-3"})], ["node[0-16383]"])
    loaded, _ = rset.load(doc)
    assert len(loaded.runs) == 1
    assert len(loaded) == 16384
    assert rset.decode(doc)[-1]["hostname"] == "node16383"


def test_host_lookup_follows_rank_order() -> None:
    loaded, _ = rset.load(r_doc([("1,3,5-6", {"core": "0"})], ["node[3,1]", "node9", "node9"]))
    assert loaded.ranks_of_hosts(["node1"]) == IdSet.decode("3")
    assert loaded.ranks_of_hosts(["node9", "nosuch"]) == IdSet.decode("5-6")


def test_encode_accepts_both_input_forms() -> None:
    rows = [{"rank": 0, "hostname": "n0", "cores": "0"}]
    assert rset.encode(rows) == rset.encode({"ranks": rows})
    out = rset.encode({"ranks": rows, "starttime": 1, "expiration": 2.5})
    assert out["execution"]["starttime"] == 1
    assert out["execution"]["expiration"] == 2.5


@pytest.mark.parametrize(
    "value",
    [
        None,
        5,
        "x",
        {"ranks": "x"},
        {"a": 1},
        [{"rank": 0}],
        [{"rank": 0, "hostname": "n", "cores": 1}],
        {"ranks": [], "starttime": None},
        {"ranks": [], "expiration": None},
    ],
)
def test_encode_refuses_malformed_input_with_invalid(value: Any) -> None:
    with pytest.raises(InvalidError):
        run("R.encode", value)


@pytest.mark.parametrize("op", ["R.union", "R.diff", "R.intersect"])
@pytest.mark.parametrize(
    "value", [None, [], {"a": {}}, {"a": 1, "b": 2}, {"a": {}, "b": {}, "c": 0}]
)
def test_set_operations_refuse_malformed_input(op: str, value: Any) -> None:
    with pytest.raises(InvalidError):
        run(op, value)


@pytest.mark.parametrize(
    ("ranks", "other"),
    [
        ("0", "0"),  # runs of one rank each: the per-rank merge
        ("0,2", "1,2"),
        ("0-3", "2-3"),  # runs of several ranks: the run walk
        ("0-1", "1"),
    ],
)
def test_union_refuses_conflicting_host_names(ranks: str, other: str) -> None:
    hosts = {r: f"n{r}" for r in range(6)}
    a_ranks, b_ranks = IdSet.decode(ranks).to_list(), IdSet.decode(other).to_list()
    a = rset.load(r_doc([(ranks, {"core": "0"})], [",".join(hosts[r] for r in a_ranks)]))[0]
    b_hosts = [hosts[r] for r in b_ranks]
    b = rset.load(r_doc([(other, {"core": "1"})], [",".join(b_hosts)]))[0]
    assert rset.union(a, b).hostnames == tuple(hosts[r] for r in sorted({*a_ranks, *b_ranks}))
    b_hosts[-1] = "elsewhere"  # the last rank of b is shared with a in every pair
    b = rset.load(r_doc([(other, {"core": "1"})], [",".join(b_hosts)]))[0]
    with pytest.raises(InvalidError, match="different host names"):
        rset.union(a, b)


# -- properties: per-rank models ---------------------------------------------------------------

Model = dict[int, tuple[frozenset[int], frozenset[int], str, frozenset[str]]]

# Mostly small ids, sometimes around the limit of the bitset form of children.
_ids = st.frozensets(st.one_of(st.integers(0, 9), st.integers(4094, 4097)), max_size=6)
_names = st.sampled_from(["ssd", "gpu", "big", "x@y"])


@st.composite
def models(draw: st.DrawFn) -> Model:
    ranks = draw(st.frozensets(st.integers(0, 12), max_size=8))
    out: Model = {}
    for rank in sorted(ranks):
        cores = draw(_ids)
        gpus = draw(_ids)
        if not cores and not gpus:
            cores = frozenset({0})
        props = draw(st.frozensets(_names, max_size=3))
        out[rank] = (cores, gpus, f"h{rank}", props)
    return out


def to_rows(model: Model) -> list[dict[str, Any]]:
    return [
        {
            "rank": rank,
            "hostname": host,
            "cores": IdSet.from_ids(cores).encode(),
            "gpus": IdSet.from_ids(gpus).encode(),
            "properties": sorted(props),
        }
        for rank, (cores, gpus, host, props) in sorted(model.items())
    ]


@given(models())
def test_encode_then_decode_is_identity(model: Model) -> None:
    rows = to_rows(model)
    doc = rset.encode(rows)
    assert rset.validate(doc) == []
    assert rset.decode(doc) == rows


@given(models())
def test_split_entries_merge_back(model: Model) -> None:
    """Listing every rank's cores and GPUs in separate entries decodes to the same thing."""
    rows = to_rows(model)
    entries = []
    for row in rows:
        entries.append({"rank": str(row["rank"]), "children": {"core": row["cores"]}})
        if row["gpus"]:
            entries.append({"rank": str(row["rank"]), "children": {"core": "", "gpu": row["gpus"]}})
    doc = rset.encode(rows)
    doc["execution"]["R_lite"] = entries[::-1]
    assert rset.decode(doc) == rows


def naive(model_a: Model, model_b: Model, op: str) -> Model:
    out: Model = {}
    for rank in sorted(set(model_a) | set(model_b)):
        a = model_a.get(rank)
        b = model_b.get(rank)
        if op == "union":
            if a and b:
                out[rank] = (a[0] | b[0], a[1] | b[1], a[2], a[3] | b[3])
            else:
                out[rank] = a or b  # type: ignore[assignment]
        elif op == "diff" and a:
            cores, gpus = (a[0] - b[0], a[1] - b[1]) if b else (a[0], a[1])
            if cores or gpus or not b:
                out[rank] = (cores, gpus, a[2], a[3])
        elif op == "intersect" and a and b:
            cores, gpus = a[0] & b[0], a[1] & b[1]
            if cores or gpus:
                out[rank] = (cores, gpus, a[2], a[3] | b[3])
    return out


@settings(max_examples=200)
@given(models(), models(), st.sampled_from(["union", "diff", "intersect"]))
def test_set_operations_match_a_per_rank_model(a: Model, b: Model, op: str) -> None:
    func = {"union": rset.union, "diff": rset.difference, "intersect": rset.intersection}[op]
    left = rset.from_ranks(to_rows(a))
    right = rset.from_ranks(to_rows(b))
    result = func(left, right).to_json()
    assert rset.validate(result) == []
    assert rset.decode(result) == to_rows(naive(a, b, op))


@settings(max_examples=100)
@given(models(), models(), st.sampled_from(["union", "diff", "intersect"]))
def test_set_operations_keep_runs_maximal_and_bitsets_true(a: Model, b: Model, op: str) -> None:
    """Results keep the model's invariant (no two touching runs with equal children), and the
    bitsets a result carries (kept from reading or computed) name exactly its ranks."""
    func = {"union": rset.union, "diff": rset.difference, "intersect": rset.intersection}[op]
    # Read from documents, so that the bitsets kept while checking properties are used.
    left = rset.load(rset.encode(to_rows(a)))[0]
    right = rset.load(rset.encode(to_rows(b)))[0]
    result = func(left, right)
    for (_, hi, before), (lo, _, after) in itertools.pairwise(result.runs):
        assert lo > hi + 1 or before != after
    expected = naive(a, b, op)
    assert result.rank_bits() == sum(1 << rank for rank in expected)
    for name in ("ssd", "gpu", "big", "x@y"):
        having = [rank for rank, (_, _, _, props) in expected.items() if name in props]
        assert result.property_bits(name) == sum(1 << rank for rank in having)


@given(st.lists(st.tuples(st.sampled_from("abc"), st.frozensets(st.integers(0, 30))), max_size=5))
def test_segments_agree_with_membership(layers: list[tuple[str, frozenset[int]]]) -> None:
    sets = [(key, IdSet.from_ids(ids)) for key, ids in layers]
    segments = _rset_model._segments(sets)
    covered: dict[int, tuple[str, ...]] = {}
    for lo, hi, keys in segments:
        for i in range(lo, hi + 1):
            covered[i] = keys
    expected = {
        i: tuple(key for key, ids in layers if i in ids)
        for i in set().union(*[s for _, s in layers])
    }
    assert covered == expected
    # Maximal: neighbouring segments differ or do not touch.
    for (_, hi, k1), (lo, _, k2) in itertools.pairwise(segments):
        assert lo > hi + 1 or k1 != k2


def _moved(model: Model, by: int) -> Model:
    return {rank + by: (c, g, f"h{rank + by}", p) for rank, (c, g, _h, p) in model.items()}


@settings(max_examples=100)
@given(models(), models(), st.sampled_from(["union", "diff", "intersect"]))
def test_set_operations_on_huge_ranks(a: Model, b: Model, op: str) -> None:
    # Ranks near 2**64 must be as exact as small ones (no bitset, no per-rank table).
    a, b = _moved(a, 2**40), _moved(b, 2**40)
    func = {"union": rset.union, "diff": rset.difference, "intersect": rset.intersection}[op]
    result = func(rset.from_ranks(to_rows(a)), rset.from_ranks(to_rows(b))).to_json()
    assert rset.decode(result) == to_rows(naive(a, b, op))


def test_scattered_ranks_and_properties_decode_per_rank() -> None:
    # Many runs and property intervals (the bulk and bitset paths), checked rank by rank.
    ranks = [r for r in range(3000) if r % 3 and r % 7]
    cores = {r: f"{r % 5}-{r % 5 + 1 + r % 3}" for r in ranks}
    props = {"odd": [r for r in ranks if r % 2], "tens": [r for r in ranks if r % 10 < 4]}
    doc = r_doc(
        [(str(r), {"core": cores[r]}) for r in ranks],
        ["n[" + IdSet.from_ids(ranks).encode() + "]"],
        properties={name: IdSet.from_ids(ids).encode() for name, ids in props.items()},
    )
    rows = rset.decode(doc)
    assert [row["rank"] for row in rows] == ranks
    assert all(row["cores"] == cores[row["rank"]] for row in rows)
    assert all(row["hostname"] == f"n{row['rank']}" for row in rows)
    assert all(
        row["properties"] == [n for n in sorted(props) if row["rank"] in props[n]] for row in rows
    )
    half = rset.load(doc)[0]
    odd = rset.from_ranks([row for row in rows if row["rank"] % 2])
    assert rset.decode(rset.difference(half, odd).to_json()) == [
        r for r in rows if not r["rank"] % 2
    ]


@pytest.mark.parametrize(
    "layout",
    ["one span", "one span past 2**16", "scattered", "scattered past 2**40"],
)
@pytest.mark.parametrize("density", [0.5, 0.01])
def test_scattered_properties_decode_per_rank(layout: str, density: float) -> None:
    # Dense properties take the rank x property table (read from bitsets, or from intervals
    # when the ranks are too sparse for bitsets), sparse ones the per-rank appends; long
    # lists are read straight into bitsets on one span as well as on scattered ranks.
    rng = random.Random(f"{layout} {density}")
    base = {"one span past 2**16": 70_000, "scattered past 2**40": 2**40}.get(layout, 0)
    if layout.startswith("one span"):
        ranks = list(range(base, base + 2000))
    else:
        ranks = sorted(rng.sample(range(base, base + 6000), 2000))
    props = {f"p{i}": [r for r in ranks if rng.random() < density] for i in range(64)}
    props = {name: ids for name, ids in props.items() if ids}
    doc = r_doc(
        [(IdSet.from_ids(ranks).encode(), {"core": "0-3"})],
        [f"n[{IdSet.from_ids(ranks).encode()}]"],
        properties={name: IdSet.from_ids(ids).encode() for name, ids in props.items()},
    )
    members = {name: set(ids) for name, ids in props.items()}
    want = [sorted(n for n in members if r in members[n]) for r in ranks]
    assert [row["properties"] for row in rset.decode(doc)] == want
    held = rset.load(doc)[0]
    assert [sorted(held.properties)] == [sorted(props)]
    assert all(held.property(n) == IdSet.from_ids(ids) for n, ids in props.items())


def test_a_property_naming_a_missing_rank_between_runs_is_refused() -> None:
    doc = r_doc([("0-3,5-9", {"core": "0"})], ["n[0-3,5-9]"], properties={"p": "1,3-5"})
    with pytest.raises(InvalidError, match="names ranks 4 that R_lite lacks"):
        rset.validate(doc)


def test_wide_property_blocks_decode_per_rank() -> None:
    # Few wide property intervals take the segment sweep, not the per-rank appends.
    doc = r_doc(
        [("0-511", {"core": "0-3"}), ("600-1111", {"core": "0-1"})],
        ["n[0-511,600-1111]"],
        properties={"a": "0-300", "b": "256-511,600-700", "c": "1000"},
    )
    rows = rset.decode(doc)
    want = {
        r: [n for n, lo, hi in (("a", 0, 300), ("b", 256, 700), ("c", 1000, 1000)) if lo <= r <= hi]
        for r in [*range(512), *range(600, 1112)]
    }
    assert {row["rank"]: row["properties"] for row in rows} == want
    rows[0]["properties"].append("mutated")
    assert rows[1]["properties"] == ["a"]  # every rank has its own list


def _scattered_model(seed: int, span: tuple[int, int]) -> Model:
    """Hundreds of scattered ranks, each with its own cores, and properties of many intervals."""
    rng = random.Random(seed)
    out: Model = {}
    for rank in range(*span):
        if rng.random() < 0.6:
            cores = frozenset(c for c in range(12) if rng.random() < 0.5) or frozenset({0})
            gpus = frozenset({4095, 4096}) if rng.random() < 0.05 else frozenset()
            props = frozenset(n for n in ("ssd", "gpu", "big") if rng.random() < 0.4)
            out[rank] = (cores, gpus, f"h{rank}", props)
    return out


@pytest.mark.parametrize("op", ["union", "diff", "intersect"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_set_operations_on_scattered_allocations_match_a_per_rank_model(op: str, seed: int) -> None:
    # Properties of hundreds of intervals on each side take the bitset merges.
    a, b = _scattered_model(seed, (0, 900)), _scattered_model(seed + 100, (300, 1200))
    func = {"union": rset.union, "diff": rset.difference, "intersect": rset.intersection}[op]
    left = rset.load(rset.encode(to_rows(a)))[0]
    right = rset.load(rset.encode(to_rows(b)))[0]
    assert min(len(ids.intervals) for ids in left.properties.values()) > 64
    result = func(left, right).to_json()
    assert rset.decode(result) == to_rows(naive(a, b, op))


_plain_ranks = st.sampled_from(["0", "3", "7", "12", "03", "3,4", "", " 5", "9999999999999999999"])
_plain_cores = st.sampled_from(["0-3", "0,2-5", "1", "0,1", "[2]", "5000", "", "3-3", "x", "4,2"])


@st.composite
def plain_r_lites(draw: st.DrawFn) -> list[Any]:
    """R_lite arrays of one-rank entries, now and then bent out of the plain form."""
    entries: list[Any] = []
    ranks = draw(st.sets(st.integers(0, 40), max_size=10))
    if draw(st.booleans()):
        ranks |= set(range(3, 9))  # neighbours, some of them holding the same cores
    for rank in sorted(ranks):
        entry: Any = {"rank": str(rank), "children": {"core": draw(_plain_cores)}}
        entries.append(entry)
    if entries and draw(st.booleans()):
        i = draw(st.integers(0, len(entries) - 1))
        entries[i] = draw(
            st.sampled_from(
                [
                    {"rank": draw(_plain_ranks), "children": {"core": "0"}},
                    {"rank": "1", "children": {"core": "0", "gpu": "1"}},
                    {"rank": "1", "children": {"core": "0"}, "x": 1},
                    {"rank": 1, "children": {"core": "0"}},
                    {"rank": "1", "children": {"gpu": "0"}},
                    {"rank": "1", "children": "0"},
                    ["1", "0"],
                ]
            )
        )
    if len(entries) > 1 and draw(st.booleans()):
        entries.reverse()
    return entries


def _outcome(doc: dict[str, Any]) -> Any:
    try:
        # The runs too: both readers keep them maximal (neighbours with equal children joined).
        return rset.decode(doc), rset.validate(doc), rset.load(doc)[0].runs
    except (InvalidError, LimitError) as exc:
        return type(exc).__name__, str(exc)


@given(plain_r_lites())
def test_plain_r_lite_short_cut_reads_as_the_entry_reader(entries: list[Any]) -> None:
    count = len(entries)
    doc = r_doc([], [f"n[0-{count - 1}]"] if count else [])
    doc["execution"]["R_lite"] = entries
    quick = _outcome(doc)
    saved = _rset_rlite._read_plain
    try:
        _rset_rlite._read_plain = lambda _entries: None  # type: ignore[assignment]
        assert _outcome(doc) == quick
    finally:
        _rset_rlite._read_plain = saved  # type: ignore[assignment]


def test_plain_r_lite_short_cut_takes_a_fragmented_allocation() -> None:
    entries = [{"rank": str(r), "children": {"core": f"0-{r % 5 + 1},7"}} for r in range(0, 40, 3)]
    runs = _rset_rlite._read_plain(entries)
    assert runs is not None
    assert [(lo, hi, c.core_text()) for lo, hi, c in runs] == [
        (r, r, f"0-{r % 5 + 1},7") for r in range(0, 40, 3)
    ]
    for bent in ([*entries[1:], entries[0]], [{"rank": "1,2", "children": {"core": "0"}}]):
        assert _rset_rlite._read_plain(bent) is None


# -- when sets of ranks are int bitsets -----------------------------------------------------


@pytest.mark.parametrize(
    ("ranks", "bits"),
    [
        ("", True),  # no ranks
        ("0,65535", True),  # below the floor, however sparse
        ("0-69999", True),  # dense past the floor
        ("1000000-1032258", True),  # the largest rank just under 32 times the number of ranks
        ("1000000-1032257", False),  # one rank fewer: over the line
        ("4000000,4000003,4000006", False),  # a few ranks numbered in the millions
        (f"0-{_rset_model.BITSET_LIMIT}", False),  # dense, but past the limit
    ],
)
def test_bits_pay_on_dense_ranks_only(ranks: str, bits: bool) -> None:
    assert _rset_model.bits_pay(IdSet.decode(ranks)) is bits


def _sparse(first: int) -> dict[str, Any]:
    ranks = [first + 3 * i for i in range(200)]
    listed = ",".join(map(str, ranks))
    return {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": listed, "children": {"core": "0"}}],
            "nodelist": [f"n[{listed}]"],
            "properties": {"ssd": ",".join(map(str, ranks[::2]))},  # over 512 characters
        },
    }


def test_sparse_ranks_in_the_millions_stay_interval_lists() -> None:
    # 200 ranks up to 4,000,597 as bitsets would make each property a 4-million-bit int
    # (0.4.0 took seconds to decode such an R); as interval lists the answers are the same.
    far, near = rset.load(_sparse(4_000_000))[0], rset.load(_sparse(0))[0]
    assert not far.small
    assert near.small
    assert not isinstance(far.properties, _rset_model.PropertySets)
    assert isinstance(near.properties, _rset_model.PropertySets)
    assert far.property("ssd") == IdSet.from_ids(r + 4_000_000 for r in near.property("ssd"))
    assert [item["properties"] for item in rset.decode(_sparse(4_000_000))] == [
        item["properties"] for item in rset.decode(_sparse(0))
    ]


@st.composite
def run_models(draw: st.DrawFn) -> Model:
    """Ranks of few distinct children, so that runs of several ranks form beside single ones."""
    ranks = draw(st.frozensets(st.integers(0, 40), max_size=30))
    pool = [frozenset({0, 1}), frozenset({0, 1, 2, 3}), frozenset({4096})]
    out: Model = {}
    for rank in sorted(ranks):
        cores = draw(st.sampled_from(pool))
        out[rank] = (cores, frozenset(), f"h{rank}", draw(st.frozensets(_names, max_size=2)))
    return out


@settings(max_examples=150)
@given(run_models(), run_models(), st.sampled_from(["union", "diff", "intersect"]))
def test_rank_by_rank_combine_answers_as_the_run_walk(a: Model, b: Model, op: str) -> None:
    """The two ways of combining runs (per rank for short runs, a walk otherwise) give the
    same runs, host names and properties, and the per-rank model's answer."""
    func = {"union": rset.union, "diff": rset.difference, "intersect": rset.intersection}[op]
    left = rset.load(rset.encode(to_rows(a)))[0]
    right = rset.load(rset.encode(to_rows(b)))[0]
    results = []
    for ranks_per_run, many_runs in ((0, 0), (1 << 30, 0)):  # never per rank, always per rank
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(_rset_algebra, "_RANKS_PER_RUN", ranks_per_run)
            patch.setattr(_rset_algebra, "_MANY_RUNS", many_runs)
            results.append(func(left, right))
    walk, per_rank = results
    assert walk.runs == per_rank.runs
    assert walk.hostnames == per_rank.hostnames
    assert walk.to_json() == per_rank.to_json()
    assert rset.decode(per_rank.to_json()) == to_rows(naive(a, b, op))
