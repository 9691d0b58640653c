"""Which cells of an answer equal the reference's, decided a column at a time.

The comparator's rules (`harness.judge.cells`) applied to whole Arrow
columns at once: the engine's and the reference's rows aligned by the
hidden row id, each column gives a mask of the rows whose cell is not
*provably* equal. Provably equal is stricter than the rule, never looser:
NULL beside NULL, NaN beside NaN, equal exact values (integers of any width,
strings, booleans, dates, timestamps of one type, decimals of one type),
floats within `float_tolerance` of the reference's value and magnitude, by
the very arithmetic `cells_equal` does. What the masks cannot say (-0.0
beside 0.0, which is equal but noted; a NaN magnitude; a type not listed)
counts as differing or makes the answer one for the row-by-row comparator,
so a row the masks pass is one `cells_equal` passes with nothing to note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from reference_impl.float_error import FLOAT_ULPS

_TINY = 2.0**-1022  # `float_tolerance`'s least scale


def aligned(actual: pa.Table, reference: pa.Table, rowid: int) -> tuple[pa.Table, pa.Table, pa.Array] | None:
    """Both answers sorted by row id, with the indexes that sorted the
    reference (its magnitudes follow them), when they hold the very same row
    ids once each; else None (a row missing, extra or twice: the row-by-row
    comparator says which)."""
    if actual.num_rows != reference.num_rows:
        return None
    a_ids, e_ids = actual.column(rowid), reference.column(rowid)
    if not pa.types.is_integer(a_ids.type) or a_ids.null_count:
        return None
    a_order, e_order = pc.sort_indices(a_ids), pc.sort_indices(e_ids)
    a_sorted, e_sorted = a_ids.take(a_order), e_ids.take(e_order)
    if not _unique_sorted(e_sorted) or not pc.all(pc.equal(a_sorted.cast(e_sorted.type), e_sorted)).as_py():
        return None
    try:
        return takeable(actual).take(a_order), takeable(reference).take(e_order), e_order
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):  # a type Arrow cannot take rows of
        return None


def takeable(table: pa.Table) -> pa.Table:
    """String views (DataFusion's strings) as large strings: the same values,
    which Arrow can take rows of and compare."""
    for i, f in enumerate(table.schema):
        if pa.types.is_string_view(f.type):
            table = table.set_column(i, pa.field(f.name, pa.large_string(), f.nullable),
                                     table.column(i).cast(pa.large_string()))
    return table


def _unique_sorted(ids: pa.ChunkedArray) -> bool:
    ids = ids.combine_chunks()
    return len(ids) < 2 or pc.all(pc.less(ids.slice(0, len(ids) - 1), ids.slice(1))).as_py()


def differing(actual: pa.ChunkedArray, expected: pa.ChunkedArray,
              magnitudes: Sequence[float | None] | None) -> pa.Array | None:
    """Per row, True where the engine's cell is not provably equal to the
    reference's (see the module docstring); None for a pair of types this
    cannot judge. `magnitudes` are the reference's, in these rows' order."""
    a, e = actual.combine_chunks(), expected.combine_chunks()
    if pa.types.is_null(a.type) or pa.types.is_null(e.type):
        other = e if pa.types.is_null(a.type) else a
        return pc.is_valid(other)
    if pa.types.is_floating(a.type) and pa.types.is_floating(e.type):
        return _floats_differ(a, e, magnitudes, single=a.type.bit_width < 64 or e.type.bit_width < 64)
    exact = _comparable(a, e)
    if exact is None:
        return None
    a, e = exact
    both_null = pc.and_(pc.is_null(a), pc.is_null(e))
    return pc.invert(pc.or_(both_null, pc.fill_null(pc.equal(a, e), False)))


def _comparable(a: pa.Array, e: pa.Array) -> tuple[pa.Array, pa.Array] | None:
    """The two columns as one type whose equality is Python's (`cells_equal`'s
    last rule), else None."""
    if _is_exact(a.type) and _is_exact(e.type) and a.type != e.type:
        # HUGEINT is decimal128(38, 0): any width, any scale, one decimal type (a value it cannot hold: None)
        scale = max(getattr(t, "scale", 0) for t in (a.type, e.type))
        try:
            return a.cast(pa.decimal128(38, scale)), e.cast(pa.decimal128(38, scale))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
    if _is_text(a.type) and _is_text(e.type):
        return a.cast(pa.large_string()), e.cast(pa.large_string())
    simple = (pa.types.is_integer, pa.types.is_boolean, pa.types.is_date32, pa.types.is_decimal, _naive_timestamp)
    if a.type == e.type and any(check(a.type) for check in simple):
        return a, e
    return None


def _is_exact(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_decimal(t)


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _naive_timestamp(t: pa.DataType) -> bool:
    return pa.types.is_timestamp(t) and t.tz is None


def _floats_differ(a: pa.Array, e: pa.Array, magnitudes: Sequence[float | None] | None,
                   single: bool) -> pa.Array | None:
    a, e = a.cast(pa.float64()), e.cast(pa.float64())
    mags = pa.array([0.0] * len(e) if magnitudes is None else magnitudes, pa.float64()).fill_null(0.0)
    if pc.any(pc.is_nan(mags)).as_py():
        return None  # `magnitude or 0.0` and max() with a NaN: left to the row-by-row rule
    eps = 2.0**-23 if single else 2.0**-52
    scale = pc.max_element_wise(pc.abs(e), mags, pa.scalar(_TINY))
    tolerance = pc.multiply(scale, pa.scalar(FLOAT_ULPS * eps))  # float_tolerance: FLOAT_ULPS * eps * scale
    finite = pc.and_(pc.is_finite(a), pc.is_finite(e))
    close = pc.and_(finite, pc.less_equal(pc.abs(pc.subtract(a, e)), tolerance))
    signed_zeros = pc.and_(pc.and_(pc.equal(a, 0.0), pc.equal(e, 0.0)),
                           pc.not_equal(a.view(pa.int64()), e.view(pa.int64())))
    close = pc.and_(close, pc.invert(signed_zeros))  # equal, but the slow path notes it
    same_infinity = pc.and_(pc.and_(pc.is_inf(a), pc.is_inf(e)), pc.equal(a, e))
    both_nan = pc.and_(pc.is_nan(a), pc.is_nan(e))
    equal = pc.fill_null(pc.or_(pc.or_(close, same_infinity), both_nan), False)
    both_null = pc.and_(pc.is_null(a), pc.is_null(e))
    return pc.invert(pc.or_(equal, both_null))


def column_masks(actual: pa.Table, reference: pa.Table, order: pa.Array, columns: Sequence[int],
                 magnitudes: Mapping[str, list] | None) -> dict[int, pa.Array] | None:
    """`differing` for each of `columns` of two aligned answers (`aligned`), or
    None when one column cannot be judged this way."""
    masks = {}
    names = reference.column_names
    for c in columns:
        mags = (magnitudes or {}).get(names[c])
        ordered = None if mags is None else pc.take(pa.array(mags, pa.float64()), order).to_pylist()
        mask = differing(actual.column(c), reference.column(c), ordered)
        if mask is None:
            return None
        masks[c] = mask
    return masks


def any_set(mask: pa.Array) -> bool:
    return bool(pc.any(mask).as_py())


def same_values(a: pa.Table, b: pa.Table, rowid: int) -> bool | None:
    """Whether two answers with row ids hold the same values (not types) row
    for row, matched by row id: exact numbers of any width alike, NaN equal
    to NaN, -0.0 to 0.0; None where a column's types are not ones this
    compares (the caller then compares Python values)."""
    if a.num_columns != b.num_columns:
        return False
    both = aligned(a, b, rowid)
    if both is None:
        return a.num_rows == b.num_rows and None  # other row ids: not the same rows
    mine, theirs, _ = both
    for c in range(a.num_columns):
        x, y = mine.column(c).combine_chunks(), theirs.column(c).combine_chunks()
        if pa.types.is_floating(x.type) and pa.types.is_floating(y.type):
            x, y = x.cast(pa.float64()), y.cast(pa.float64())
            equal = pc.or_(pc.fill_null(pc.equal(x, y), False), pc.fill_null(pc.and_(pc.is_nan(x), pc.is_nan(y)), False))
        else:
            pair = _comparable(x, y)
            if pair is None:
                return None
            equal = pc.fill_null(pc.equal(*pair), False)
        if not pc.all(pc.or_(equal, pc.and_(pc.is_null(x), pc.is_null(y)))).as_py():
            return False
    return True
