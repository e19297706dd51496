#!/usr/bin/python3
"""Regenerates the CPU kernel goldens: tests/kernels/goldens/{manifest.json, *.npy}.

Every case names a kernel target, its arguments (tensors as .npy files, plus scalars, lists,
dtypes, strings) and the outputs NumPy computes for them, or the error the kernel must report.
Reference values are computed in float64 from the (already rounded) inputs and rounded once to
the output dtype, so a kernel computing in float32 agrees within the case's tolerance.

Arrays are stored in one flat .npy "pool" per dtype (bfloat16 as uint16 bit patterns in bf16.npy);
a tensor entry "pool:offset:d0,d1,..." names its pool, element offset and shape (no dims: 0-d). Tensor arguments may carry a "view":
transforms the C++ test applies to the stored array to get a strided input (permute, expand with
stride 0, slice with a step), the same transforms NumPy applies here.

Run: /usr/bin/python3 tests/kernels/make_goldens.py   (NumPy >= 1.24)
"""
import json
import math
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "goldens")
rng = np.random.default_rng(20240605)

F32_TOL = {"rtol": 1e-5, "atol": 1e-6}
F64_TOL = {"rtol": 1e-12, "atol": 1e-12}
F16_TOL = {"rtol": 2e-3, "atol": 1e-3}
BF16_TOL = {"rtol": 1.6e-2, "atol": 1e-2}
EXACT = {"rtol": 0.0, "atol": 0.0}

SHORT = {
    np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f16",
    np.dtype(np.int8): "i8", np.dtype(np.int16): "i16", np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64", np.dtype(np.uint8): "u8", np.dtype(np.bool_): "b8",
}


# ---------------------------------------------------------------------------------------------
# bfloat16 as float32 values on the bf16 grid, stored as uint16 bits.

def bf16_round(x):
    """float -> the nearest bfloat16 (ties to even), returned as float32."""
    f = np.asarray(x, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    nan = np.isnan(f)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32).copy()
    out[nan] = np.nan
    return out


def bf16_bits(x):
    f = bf16_round(x)
    return (f.view(np.uint32) >> 16).astype(np.uint16)


class BF16:
    """Marks an array (float32 values on the bf16 grid) as bfloat16."""

    def __init__(self, values):
        self.values = bf16_round(values)


def as_bf16(x):
    return BF16(x)


# ---------------------------------------------------------------------------------------------
# Cases.

# Arrays live in one flat .npy per dtype ("pools"); an entry names its pool, element offset and
# shape, and the C++ test views it in place (so inputs also carry a storage offset).
POOL_NAMES = {np.dtype(t): n for t, n in [(np.float32, "f32"), (np.float64, "f64"), (np.float16, "f16"),
                                           (np.uint16, "bf16"), (np.int8, "i8"), (np.int16, "i16"),
                                           (np.int32, "i32"), (np.int64, "i64"), (np.uint8, "u8"), (np.bool_, "b8")]}
pools = {}
stored = {}
cases = []


def store(array):
    """Appends `array` to the pool of its dtype (equal arrays are stored once); returns its entry."""
    array = np.asarray(array, order="C")  # (ascontiguousarray would turn 0-d into 1-d)
    key = (array.dtype.str, array.shape, array.tobytes())
    if key not in stored:
        pool = pools.setdefault(POOL_NAMES[array.dtype], [])
        offset = sum(a.size for a in pool)
        pool.append(array.reshape(-1))
        stored[key] = "%s:%d:%s" % (POOL_NAMES[array.dtype], offset, ",".join(str(n) for n in array.shape))
    return stored[key]


def tensor_entry(value):
    if isinstance(value, BF16):
        return {"tensor": store(bf16_bits(value.values))}
    return {"tensor": store(np.asarray(value))}


def logical(value):
    return value.values if isinstance(value, BF16) else value


class View:
    """A stored array and the transforms that make the kernel's (strided) input from it."""

    def __init__(self, base, *transforms):
        self.base = base
        self.transforms = list(transforms)

    def value(self):
        v = logical(self.base)
        for t in self.transforms:
            (kind, arg), = t.items()
            if kind == "permute":
                v = np.transpose(v, arg)
            elif kind == "expand":
                v = np.broadcast_to(v, arg)
            elif kind == "slice":
                dim, start, stop, step = arg
                index = [slice(None)] * v.ndim
                index[dim] = slice(start, stop, step)
                v = v[tuple(index)]
        return v


def arg_entry(name, value):
    if isinstance(value, View):
        entry = tensor_entry(value.base)
        entry["view"] = value.transforms
    elif isinstance(value, (np.ndarray, BF16)):
        entry = tensor_entry(value)
    elif isinstance(value, Arg):
        entry = dict(value.entry)
    else:
        raise TypeError(f"argument {name}: {type(value)}")
    entry["name"] = name
    return entry


class Arg:
    def __init__(self, **entry):
        self.entry = entry


def I(v):
    return Arg(int=int(v))


def F(v):
    v = float(v)
    return Arg(float=v if math.isfinite(v) else repr(v))  # JSON has no inf/nan: "inf", "-inf", "nan"


def B(v):
    return Arg(bool=bool(v))


def INTS(v):
    return Arg(ints=[int(x) for x in v])


def FLOATS(v):
    return Arg(floats=[float(x) for x in v])


def DT(short):
    return Arg(dtype=short)


def S(v):
    return Arg(str=v)


NONE = Arg(none=True)


def TS(*values):
    return Arg(tensors=[tensor_entry(v) for v in values])


def OTS(*values):
    return Arg(optional_tensors=[None if v is None else tensor_entry(v) for v in values])


def output_entry(value):
    if isinstance(value, np.generic):
        return tensor_entry(np.asarray(value))
    if isinstance(value, list):
        return {"tensors": [tensor_entry(v) for v in value]}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": value}
    return tensor_entry(value)


def default_tolerance(outputs):
    dtypes = set()
    for o in outputs:
        for v in (o if isinstance(o, list) else [o]):
            if isinstance(v, BF16):
                dtypes.add("bf16")
            elif isinstance(v, np.ndarray):
                dtypes.add(v.dtype)
    if "bf16" in dtypes:
        return BF16_TOL
    if np.dtype(np.float16) in dtypes:
        return F16_TOL
    if np.dtype(np.float32) in dtypes:
        return F32_TOL
    if np.dtype(np.float64) in dtypes:
        return F64_TOL
    return EXACT


PRODUCT_TARGETS = ("mm", "linear", "matmul", "conv", "attention")
SUM_TOL = {"rtol": 1e-5, "atol": 1e-5}  # float32 BLAS products: rounding grows with the summed terms


def case(name, target, args, outputs=None, error=None, tol=None):
    assert not any(c["name"] == name for c in cases), name
    entry = {"name": name, "target": target, "args": [arg_entry(k, v) for k, v in args]}
    if error is not None:
        entry["error"] = error
    else:
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        entry["outputs"] = [output_entry(o) for o in outputs]
        # The test's default tolerance follows the expected output's dtype (f32, f64, f16, bf16 as
        # the *_TOL constants here; others exact); only other tolerances are written.
        if tol is None and default_tolerance(outputs) is F32_TOL and any(w in target for w in PRODUCT_TARGETS):
            tol = SUM_TOL
        if tol is not None:
            entry.update(tol)
    cases.append(entry)


# ---------------------------------------------------------------------------------------------
# Helpers for references.

def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def randint(low, high, *shape, dtype=np.int64):
    return rng.integers(low, high, size=shape).astype(dtype)


def f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def like(x, ref):
    """Rounds a float64 result to the dtype of `ref` (an array or BF16)."""
    if isinstance(ref, BF16):
        return BF16(np.asarray(x, dtype=np.float64).astype(np.float32))
    return np.asarray(x, dtype=np.float64).astype(ref.dtype)


def d(x):
    return np.asarray(logical(x), dtype=np.float64)


erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def torch_argmax(x, axis=None, keepdims=False, minimum=False):
    """torch semantics: first occurrence; NaN is the extreme (first NaN); bool as ints."""
    x = np.asarray(x)
    if x.dtype == np.bool_:
        x = x.astype(np.int64)
    flat = axis is None
    v = x.reshape(-1) if flat else np.moveaxis(x, axis, -1)
    out_shape = v.shape[:-1]
    v2 = v.reshape(-1, v.shape[-1])
    result = np.empty(v2.shape[0], dtype=np.int64)
    for r in range(v2.shape[0]):
        row = v2[r]
        if row.dtype.kind == "f" and np.isnan(row).any():
            result[r] = int(np.argmax(np.isnan(row)))
        else:
            result[r] = int(np.argmin(row) if minimum else np.argmax(row))
    result = result.reshape(out_shape)
    if keepdims:
        result = np.ones([1] * x.ndim, dtype=np.int64) * result if flat else np.expand_dims(result, axis)
    return result


def take_along(x, idx, axis, keepdims):
    i = idx if keepdims else np.expand_dims(idx, axis)
    v = np.take_along_axis(x, i, axis)
    return v if keepdims else np.squeeze(v, axis)


def floor_div(a, b):
    return np.floor_divide(a, b)


def conv2d_ref(x, w, b, stride, pad_begin, pad_end, dilation, groups):
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + pad_begin[0] + pad_end[0], wd + pad_begin[1] + pad_end[1]))
    xp[:, :, pad_begin[0]:pad_begin[0] + h, pad_begin[1]:pad_begin[1] + wd] = x
    oh = (xp.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, oc, oh, ow))
    og = oc // groups
    for g in range(groups):
        for o in range(g * og, (g + 1) * og):
            for i in range(oh):
                for j in range(ow):
                    patch = xp[:, g * cg:(g + 1) * cg,
                               i * stride[0]:i * stride[0] + dilation[0] * (kh - 1) + 1:dilation[0],
                               j * stride[1]:j * stride[1] + dilation[1] * (kw - 1) + 1:dilation[1]]
                    out[:, o, i, j] = np.sum(patch * w[o], axis=(1, 2, 3))
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def pooled_size(size, k, p, s, dil, ceil_mode):
    num = size + 2 * p - dil * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def max_pool_ref(x, k, s, p, dil, ceil_mode):
    *lead, h, w = x.shape
    oh, ow = pooled_size(h, k[0], p[0], s[0], dil[0], ceil_mode), pooled_size(w, k[1], p[1], s[1], dil[1], ceil_mode)
    planes = x.reshape(-1, h, w)
    out = np.zeros((planes.shape[0], oh, ow))
    idx = np.zeros((planes.shape[0], oh, ow), dtype=np.int64)
    for q in range(planes.shape[0]):
        for i in range(oh):
            for j in range(ow):
                best, best_i = -np.inf, None
                for a in range(k[0]):
                    y = i * s[0] - p[0] + a * dil[0]
                    if y < 0 or y >= h:
                        continue
                    for b in range(k[1]):
                        xx = j * s[1] - p[1] + b * dil[1]
                        if xx < 0 or xx >= w:
                            continue
                        v = planes[q, y, xx]
                        if best_i is None:
                            best_i = y * w + xx
                        if v > best or np.isnan(v):
                            best, best_i = v, y * w + xx
                out[q, i, j], idx[q, i, j] = best, best_i
    return out.reshape(*lead, oh, ow), idx.reshape(*lead, oh, ow)


def avg_pool_ref(x, k, s, p, ceil_mode, include_pad, divisor):
    *lead, h, w = x.shape
    oh, ow = pooled_size(h, k[0], p[0], s[0], 1, ceil_mode), pooled_size(w, k[1], p[1], s[1], 1, ceil_mode)
    planes = x.reshape(-1, h, w)
    out = np.zeros((planes.shape[0], oh, ow))
    for i in range(oh):
        for j in range(ow):
            y0, x0 = i * s[0] - p[0], j * s[1] - p[1]
            y1, x1 = min(y0 + k[0], h + p[0]), min(x0 + k[1], w + p[1])
            pool = (y1 - y0) * (x1 - x0)
            y0, x0, y1, x1 = max(y0, 0), max(x0, 0), min(y1, h), min(x1, w)
            count = divisor if divisor else (pool if include_pad else (y1 - y0) * (x1 - x0))
            out[:, i, j] = planes[:, y0:y1, x0:x1].sum(axis=(1, 2)) / count
    return out.reshape(*lead, oh, ow)


def adaptive_avg_ref(x, oh, ow):
    *lead, h, w = x.shape
    planes = x.reshape(-1, h, w)
    out = np.zeros((planes.shape[0], oh, ow))
    for i in range(oh):
        y0, y1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            x0, x1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            out[:, i, j] = planes[:, y0:y1, x0:x1].mean(axis=(1, 2))
    return out.reshape(*lead, oh, ow)


def sdpa_ref(q, k, v, mask=None, causal=False, scale=None, with_lse=False):
    L, S = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    bias = np.zeros((L, S))
    if causal:
        bias[np.triu(np.ones((L, S), dtype=bool), 1)] = -np.inf
    if mask is not None:
        bias = np.where(mask, 0.0, -np.inf) if mask.dtype == np.bool_ else bias + mask
    scores = q @ np.swapaxes(k, -1, -2) * scale + bias
    m = np.max(scores, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        e = np.exp(scores - m)
        p = e / e.sum(axis=-1, keepdims=True)
    p = np.where(np.isneginf(m), 0.0, p)  # rows masked entirely: zeros (safe softmax)
    if with_lse:
        with np.errstate(divide="ignore"):
            lse = np.where(np.isneginf(m[..., 0]), -np.inf, m[..., 0] + np.log(e.sum(axis=-1)))
        return p @ v, lse
    return p @ v


# ---------------------------------------------------------------------------------------------
# Element-wise binary.

def binary_cases():
    a, b = randn(3, 4), randn(4)
    case("add_f32_broadcast_alpha", "aten::add.Tensor", [("self", a), ("other", b), ("alpha", F(2.0))],
         f32(d(a) + 2 * d(b)))
    base, col = randn(4, 3), randn(3, 1)
    case("add_f32_noncontiguous", "aten::add.Tensor",
         [("self", View(base, {"permute": [1, 0]})), ("other", View(col, {"expand": [3, 4]}))],
         f32(d(base).T + d(col)))
    x = randint(-50, 50, 5, dtype=np.int32)
    case("add_i32_int_scalar", "aten::add.Tensor", [("self", x), ("other", I(3))], x + np.int32(3))
    x, y = randint(-100, 100, 2, 3), randint(-100, 100, 2, 3)
    case("add_i64_alpha", "aten::add.Tensor", [("self", x), ("other", y), ("alpha", I(3))], x + 3 * y)
    x = np.array([250, 251, 5], dtype=np.uint8)
    case("add_u8_wraps", "aten::add.Scalar", [("self", x), ("other", I(10))], (x.astype(np.int64) + 10).astype(np.uint8))
    p, q = np.array([True, False, True, False]), np.array([True, True, False, False])
    case("add_bool_is_or", "aten::add.Tensor", [("self", p), ("other", q)], p | q)
    x = randint(-5, 5, 4)
    case("add_i64_float_scalar_promotes_f32", "aten::add.Tensor", [("self", x), ("other", F(0.5))], f32(x + 0.5))
    h, g = randn(2, 3).astype(np.float16), randn(2, 3).astype(np.float16)
    case("add_f16", "aten::add.Tensor", [("self", h), ("other", g)], like(d(h) + d(g), h))
    hb, gb = as_bf16(randn(2, 3)), as_bf16(randn(3))
    case("add_bf16_broadcast", "aten::add.Tensor", [("self", hb), ("other", gb)], like(d(hb) + d(gb), hb))
    x = randint(-9, 9, 3, dtype=np.int32)
    case("add_i32_zero_dim_i64_stays_i32", "aten::add.Tensor", [("self", x), ("other", np.array(7, dtype=np.int64))],
         (x + 7).astype(np.int32))
    case("add_i32_zero_dim_f64_promotes_f64", "aten::add.Tensor",
         [("self", x), ("other", np.array(1.5, dtype=np.float64))], x + 1.5)
    y = randn(3)
    case("add_f32_zero_dim_f64_stays_f32", "aten::add.Tensor",
         [("self", y), ("other", np.array(0.25, dtype=np.float64))], f32(d(y) + 0.25))
    case("add_f16_float_scalar_stays_f16", "aten::add.Tensor", [("self", h), ("other", F(1.5))], like(d(h) + 1.5, h))
    e = np.zeros((0, 3), dtype=np.float32)
    case("add_empty", "aten::add.Tensor", [("self", e), ("other", randn(3))], np.zeros((0, 3), dtype=np.float32))
    s, t = np.array(1.25, dtype=np.float32), np.array(-3.5, dtype=np.float32)
    case("add_zero_dim", "aten::add.Tensor", [("self", s), ("other", t)], f32(d(s) + d(t)))
    case("add_shape_mismatch", "aten::add.Tensor", [("self", randn(3)), ("other", randn(4))], error="do not broadcast")
    case("add_int_float_alpha", "aten::add.Tensor", [("self", randint(0, 3, 2)), ("other", randint(0, 3, 2)),
                                                      ("alpha", F(0.5))], error="float alpha")

    a, b = randn(2, 3), randn(2, 1)
    case("sub_f32_broadcast", "aten::sub.Tensor", [("self", a), ("other", b)], f32(d(a) - d(b)))
    case("sub_scalar_alpha", "aten::sub.Scalar", [("self", a), ("other", F(1.5)), ("alpha", F(2.0))], f32(d(a) - 3.0))
    case("rsub_scalar", "aten::rsub.Scalar", [("self", a), ("other", I(2))], f32(2 - d(a)))
    case("rsub_tensor_alpha", "aten::rsub.Tensor", [("self", a), ("other", b), ("alpha", I(2))], f32(d(b) - 2 * d(a)))
    case("sub_bool_error", "aten::sub.Tensor", [("self", p), ("other", q)], error="bool")

    a, b = randn(2, 1, 3), randn(4, 1)
    case("mul_f32_broadcast_3d", "aten::mul.Tensor", [("self", a), ("other", b)], f32(d(a) * d(b)))
    case("mul_bool_is_and", "aten::mul.Tensor", [("self", p), ("other", q)], p & q)
    x = np.array([100, -100, 7], dtype=np.int8)
    case("mul_i8_wraps", "aten::mul.Scalar", [("self", x), ("other", I(3))], (x.astype(np.int64) * 3).astype(np.int8))
    x64 = randn(3, dtype=np.float64)
    case("mul_f64_scalar", "aten::mul.Tensor", [("self", x64), ("other", F(1.0 / 3.0))], x64 * (1.0 / 3.0))

    a, b = randn(3, 4), randn(3, 4)
    case("div_f32", "aten::div.Tensor", [("self", a), ("other", b)], f32(d(a) / d(b)))
    xi, yi = np.array([7, -7, 7, -7, 0, 9], dtype=np.int64), np.array([2, 2, -2, -2, 3, 4], dtype=np.int64)
    case("div_int_true_division_f32", "aten::div.Tensor", [("self", xi), ("other", yi)], f32(xi / yi))
    case("div_int_trunc", "aten::div.Tensor_mode", [("self", xi), ("other", yi), ("rounding_mode", S("trunc"))],
         np.trunc(xi / yi).astype(np.int64))
    case("div_int_floor", "aten::div.Tensor_mode", [("self", xi), ("other", yi), ("rounding_mode", S("floor"))],
         floor_div(xi, yi))
    case("div_mode_none_is_true", "aten::div.Tensor_mode", [("self", xi), ("other", yi), ("rounding_mode", NONE)],
         f32(xi / yi))
    xf, yf = np.array([7.5, -7.5, 7.5, -7.5, 1.0, -0.0], dtype=np.float32), np.array([2, 2, -2, -2, 3, 5], dtype=np.float32)
    case("div_f32_floor", "aten::div.Tensor_mode", [("self", xf), ("other", yf), ("rounding_mode", S("floor"))],
         floor_div(xf, yf))
    case("div_f32_trunc", "aten::div.Scalar_mode", [("self", xf), ("other", F(2.0)), ("rounding_mode", S("trunc"))],
         np.trunc(xf / np.float32(2)))
    z = np.array([1.0, -1.0, 0.0], dtype=np.float32)
    case("div_f32_by_zero_inf_nan", "aten::div.Scalar", [("self", z), ("other", F(0.0))],
         np.array([np.inf, -np.inf, np.nan], dtype=np.float32))
    case("div_int_by_zero_error", "aten::div.Tensor_mode",
         [("self", xi), ("other", np.zeros(6, dtype=np.int64)), ("rounding_mode", S("floor"))], error="division by zero")
    case("div_bad_rounding_mode", "aten::div.Tensor_mode", [("self", xf), ("other", yf), ("rounding_mode", S("round"))],
         error="rounding_mode")
    case("remainder_int_python_sign", "aten::remainder.Tensor", [("self", xi), ("other", yi)], np.remainder(xi, yi))
    case("remainder_f32_scalar", "aten::remainder.Scalar", [("self", xf), ("other", F(-2.0))],
         np.remainder(xf, np.float32(-2.0)))
    case("floor_divide_int", "aten::floor_divide.default", [("self", xi), ("other", yi)], floor_div(xi, yi))
    case("floor_divide_scalar_f32", "aten::floor_divide.Scalar", [("self", xf), ("other", F(-2.0))],
         floor_div(xf, np.float32(-2.0)))

    pos = np.abs(randn(2, 3)) + 0.1
    case("pow_tensor_scalar_square", "aten::pow.Tensor_Scalar", [("self", a), ("exponent", I(2))], f32(d(a) ** 2))
    case("pow_tensor_scalar_half", "aten::pow.Tensor_Scalar", [("self", pos), ("exponent", F(0.5))], f32(np.sqrt(d(pos))))
    ints = np.array([2, -3, 0, 5], dtype=np.int32)
    case("pow_int_int", "aten::pow.Tensor_Scalar", [("self", ints), ("exponent", I(3))], ints ** 3)
    case("pow_int_float_exponent_f32", "aten::pow.Tensor_Scalar", [("self", ints), ("exponent", F(2.0))],
         f32(ints.astype(np.float64) ** 2))
    case("pow_int_negative_exponent_error", "aten::pow.Tensor_Scalar", [("self", ints), ("exponent", I(-1))],
         error="negative")
    e3 = randn(3)
    case("pow_scalar_base", "aten::pow.Scalar", [("self", F(2.0)), ("exponent", e3)], f32(2.0 ** d(e3)))
    ex = randn(3)
    case("pow_tensor_tensor", "aten::pow.Tensor_Tensor", [("self", pos), ("exponent", ex)], f32(d(pos) ** d(ex)))

    m1 = np.array([1.0, np.nan, 3.0, -1.0], dtype=np.float32)
    m2 = np.array([2.0, 0.0, np.nan, -2.0], dtype=np.float32)
    case("maximum_nan_propagates", "aten::maximum.default", [("self", m1), ("other", m2)], np.maximum(m1, m2))
    case("minimum_nan_propagates", "aten::minimum.default", [("self", m1), ("other", m2)], np.minimum(m1, m2))
    case("max_other", "aten::max.other", [("self", m1), ("other", m2)], np.maximum(m1, m2))
    case("min_other", "aten::min.other", [("self", m1), ("other", m2)], np.minimum(m1, m2))
    i1, i2 = randint(-5, 5, 2, 3, dtype=np.int16), randint(-5, 5, 3, dtype=np.int16)
    case("maximum_i16_broadcast", "aten::maximum.default", [("self", i1), ("other", i2)], np.maximum(i1, i2))


# ---------------------------------------------------------------------------------------------
# Element-wise unary.

def unary_cases():
    x = randn(3, 5)
    pos = np.abs(randn(3, 5)) + 0.05
    float_ops = {
        "exp": (np.exp, x), "log": (np.log, pos), "log1p": (np.log1p, pos), "sqrt": (np.sqrt, pos),
        "rsqrt": (lambda v: 1 / np.sqrt(v), pos), "reciprocal": (lambda v: 1 / v, pos), "sigmoid": (sigmoid, x),
        "tanh": (np.tanh, x), "sin": (np.sin, x), "cos": (np.cos, x), "erf": (erf, x),
        "silu": (lambda v: v * sigmoid(v), x),
    }
    for name, (fn, inp) in float_ops.items():
        case(f"{name}_f32", f"aten::{name}.default", [("self", inp)], f32(fn(d(inp))))
    edge = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, np.nan, np.inf, -3.7, 3.2], dtype=np.float32)
    for name, fn in {"neg": np.negative, "abs": np.abs, "relu": lambda v: np.where(v > 0, v, np.where(np.isnan(v), v, 0)),
                     "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc}.items():
        case(f"{name}_f32_edges", f"aten::{name}.default", [("self", edge)], fn(edge).astype(np.float32))
    case("gelu_none_f32", "aten::gelu.default", [("self", x)], f32(gelu(d(x))))
    case("gelu_tanh_f32", "aten::gelu.default", [("self", x), ("approximate", S("tanh"))], f32(gelu_tanh(d(x))))
    case("gelu_bad_mode", "aten::gelu.default", [("self", x), ("approximate", S("erf"))], error="approximate")
    h = randn(2, 4).astype(np.float16)
    case("exp_f16", "aten::exp.default", [("self", h)], like(np.exp(d(h)), h))
    hb = as_bf16(randn(2, 4))
    case("gelu_bf16", "aten::gelu.default", [("self", hb)], like(gelu(d(hb)), hb))
    case("relu_bf16", "aten::relu.default", [("self", hb)], like(np.maximum(d(hb), 0), hb))
    x64 = randn(4, dtype=np.float64)
    case("tanh_f64", "aten::tanh.default", [("self", x64)], np.tanh(x64))
    ints = np.array([-3, 0, 7, np.iinfo(np.int32).min], dtype=np.int32)
    case("neg_i32_wraps", "aten::neg.default", [("self", ints)], -ints)
    i64 = np.array([-3, 0, 7, np.iinfo(np.int64).min], dtype=np.int64)
    case("abs_i64", "aten::abs.default", [("self", i64)], np.abs(i64))
    case("relu_i32", "aten::relu.default", [("self", ints)], np.maximum(ints, 0))
    case("exp_i64_promotes_f32", "aten::exp.default", [("self", np.array([0, 1, 2], dtype=np.int64))],
         f32(np.exp([0.0, 1.0, 2.0])))
    case("sqrt_bool_promotes_f32", "aten::sqrt.default", [("self", np.array([True, False]))],
         np.array([1.0, 0.0], dtype=np.float32))
    case("silu_int_error", "aten::silu.default", [("self", ints)], error="not supported")
    case("neg_bool_error", "aten::neg.default", [("self", np.array([True]))], error="not supported")
    base = randn(5, 3)
    case("exp_noncontiguous", "aten::exp.default", [("self", View(base, {"permute": [1, 0]}))], f32(np.exp(d(base).T)))
    case("exp_sliced_step", "aten::exp.default", [("self", View(base, {"slice": [0, 0, 5, 2]}))],
         f32(np.exp(d(base)[0:5:2])))
    case("exp_empty", "aten::exp.default", [("self", np.zeros((2, 0), dtype=np.float32))], np.zeros((2, 0), dtype=np.float32))
    case("exp_zero_dim", "aten::exp.default", [("self", np.array(0.5, dtype=np.float32))], f32(np.exp(0.5)))
    ln = np.array([0.0, 2.0, np.nan, -1.0], dtype=np.float32)
    case("logical_not_f32", "aten::logical_not.default", [("self", ln)], np.logical_not(ln))
    # torch's sign is (0 < x) - (x < 0): NaN and -0.0 give 0 (NumPy's sign gives NaN for NaN).
    torch_sign = lambda v: ((0 < v).astype(v.dtype) - (v < 0).astype(v.dtype)).astype(v.dtype)  # noqa: E731
    case("sign_f32_edges", "aten::sign.default", [("self", edge)], torch_sign(edge))
    case("sign_f16", "aten::sign.default", [("self", edge.astype(np.float16))], torch_sign(edge.astype(np.float16)))
    case("sign_i32", "aten::sign.default", [("self", ints)], torch_sign(ints))
    case("sign_bool_is_itself", "aten::sign.default", [("self", np.array([True, False]))], np.array([True, False]))
    case("sign_noncontiguous", "aten::sign.default", [("self", View(base, {"permute": [1, 0]}))], torch_sign(base.T))


# ---------------------------------------------------------------------------------------------
# Comparison and logical.

def comparison_cases():
    a = np.array([[1.0, np.nan, 3.0], [2.0, 2.0, -1.0]], dtype=np.float32)
    b = np.array([2.0, 2.0, np.nan], dtype=np.float32)
    for op, fn in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                   "gt": np.greater, "ge": np.greater_equal}.items():
        case(f"{op}_tensor_broadcast_nan", f"aten::{op}.Tensor", [("self", a), ("other", b)], fn(a, b))
    ints = np.array([1, 2, 3], dtype=np.int32)
    case("lt_int_float_scalar", "aten::lt.Scalar", [("self", ints), ("other", F(2.5))], ints < 2.5)
    case("eq_int_scalar", "aten::eq.Scalar", [("self", ints), ("other", I(2))], ints == 2)
    fl = np.array([1.0, np.nan, 2.0], dtype=np.float32)
    for op, fn in {"ne": np.not_equal, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}.items():
        case(f"{op}_scalar_nan", f"aten::{op}.Scalar", [("self", fl), ("other", F(1.0))], fn(fl, np.float32(1.0)))
    case("ge_u8_i8_promotes", "aten::ge.Tensor",
         [("self", np.array([200, 3], dtype=np.uint8)), ("other", np.array([-1, 3], dtype=np.int8))],
         np.array([True, True]))
    x, y = np.array([0.0, 1.5, -2.0, 0.0], dtype=np.float32), np.array([0, 0, 3, 7], dtype=np.int64)
    case("logical_and_mixed", "aten::logical_and.default", [("self", x), ("other", y)], np.logical_and(x, y))
    case("logical_or_mixed", "aten::logical_or.default", [("self", x), ("other", y)], np.logical_or(x, y))
    pb, qb = np.array([True, True, False, False]), np.array([[True, False, True, False]])
    ia, ib = np.array([12, -7, 255, 0], dtype=np.int32), np.array([10, 3, -1, 5], dtype=np.int64)
    for op, fn in {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}.items():
        case(f"bitwise_{op}_bool_broadcast", f"aten::bitwise_{op}.Tensor", [("self", pb), ("other", qb)], fn(pb, qb))
        case(f"dunder_{op}_int_promotes", f"aten::__{op}__.Tensor", [("self", ia), ("other", ib)],
             fn(ia.astype(np.int64), ib))
        case(f"bitwise_{op}_scalar", f"aten::bitwise_{op}.Scalar", [("self", ia), ("other", I(6))], fn(ia, np.int32(6)))
        case(f"dunder_{op}_scalar_bool", f"aten::__{op}__.Scalar", [("self", pb), ("other", B(True))], fn(pb, True))
    case("bitwise_not_int", "aten::bitwise_not.default", [("self", ia)], np.invert(ia))
    case("bitwise_not_bool", "aten::bitwise_not.default", [("self", pb)], np.invert(pb))
    case("bitwise_and_float_error", "aten::bitwise_and.Tensor", [("self", x), ("other", x)], error="integer or bool")
    case("logical_xor_mixed", "aten::logical_xor.default", [("self", x), ("other", y)], np.logical_xor(x, y))


# ---------------------------------------------------------------------------------------------
# Selection: where, masked_fill, tril/triu, clamp.

def selection_cases():
    cond = np.array([[True], [False]])
    a, b = randn(2, 3), randint(-3, 3, 3)
    case("where_broadcast_promotes", "aten::where.self", [("condition", cond), ("self", a), ("other", b)],
         f32(np.where(cond, d(a), b)))
    h = randn(2, 3).astype(np.float16)
    c2 = np.array([[True, False, True], [False, False, True]])
    case("where_scalar_other_f16", "aten::where.ScalarOther", [("condition", c2), ("self", h), ("other", F(0.0))],
         np.where(c2, h, np.float16(0)))
    case("where_scalar_self", "aten::where.ScalarSelf", [("condition", c2), ("self", I(2)), ("other", h)],
         np.where(c2, np.float16(2), h))
    case("where_scalars_i64", "aten::where.Scalar", [("condition", c2), ("self", I(1)), ("other", I(0))],
         np.where(c2, 1, 0).astype(np.int64))
    cu = np.array([1, 0, 2], dtype=np.uint8)
    sv = randn(3)
    case("where_uint8_condition", "aten::where.self",
         [("condition", cu), ("self", sv), ("other", np.zeros(3, np.float32))], np.where(cu != 0, sv, np.float32(0)))
    x = randn(2, 4)
    mask = np.array([True, False, False, True])
    case("masked_fill_scalar", "aten::masked_fill.Scalar", [("self", x), ("mask", mask), ("value", F(-np.inf))],
         np.where(mask, np.float32(-np.inf), x))
    xi = randint(0, 9, 2, 4, dtype=np.int32)
    case("masked_fill_tensor_keeps_dtype", "aten::masked_fill.Tensor",
         [("self", xi), ("mask", mask), ("value", np.array(7.9, dtype=np.float32))], np.where(mask, np.int32(7), xi))
    m = randn(2, 3, 4)
    case("tril_diag0", "aten::tril.default", [("self", m)], np.tril(m))
    case("tril_diag_neg1", "aten::tril.default", [("self", m), ("diagonal", I(-1))], np.tril(m, -1))
    case("triu_diag1", "aten::triu.default", [("self", m), ("diagonal", I(1))], np.triu(m, 1))
    cl = np.array([-2.0, -0.5, 0.0, 0.5, 2.0, np.nan], dtype=np.float32)
    case("clamp_scalars_nan", "aten::clamp.default", [("self", cl), ("min", F(-1.0)), ("max", F(1.0))],
         np.clip(cl, -1, 1))
    case("clamp_min_only", "aten::clamp.default", [("self", cl), ("min", F(0.0)), ("max", NONE)], np.maximum(cl, 0))
    case("clamp_min_above_max", "aten::clamp.default", [("self", cl), ("min", F(1.0)), ("max", F(-1.0))],
         np.where(np.isnan(cl), cl, np.float32(-1.0)))
    ci = np.array([-5, 0, 5], dtype=np.int64)
    case("clamp_int_float_bound_promotes", "aten::clamp.default", [("self", ci), ("min", F(-1.5)), ("max", NONE)],
         f32(np.maximum(ci, -1.5)))
    lo, hi = randn(3, 1) - 1, randn(4) + 1
    xc = randn(3, 4) * 2
    case("clamp_tensor_bounds", "aten::clamp.Tensor", [("self", xc), ("min", lo), ("max", hi)],
         f32(np.minimum(np.maximum(d(xc), d(lo)), d(hi))))
    case("clamp_min_scalar", "aten::clamp_min.default", [("self", xc), ("min", F(0.0))], np.maximum(xc, np.float32(0)))
    case("clamp_max_scalar", "aten::clamp_max.default", [("self", xc), ("max", F(0.5))], np.minimum(xc, np.float32(0.5)))
    case("clamp_min_tensor", "aten::clamp_min.Tensor", [("self", xc), ("min", lo)], f32(np.maximum(d(xc), d(lo))))
    case("clamp_max_tensor", "aten::clamp_max.Tensor", [("self", xc), ("max", hi)], f32(np.minimum(d(xc), d(hi))))
    case("clamp_no_bounds_error", "aten::clamp.default", [("self", xc)], error="at least one")


# ---------------------------------------------------------------------------------------------
# Copies and casts.

def copy_cases():
    x = np.array([-2.7, -0.5, 0.0, 0.4, 1.5, 300.2], dtype=np.float32)
    case("to_copy_f32_to_f16", "aten::_to_copy.default", [("self", x), ("dtype", DT("f16"))], x.astype(np.float16))
    case("to_copy_f32_to_i32_truncates", "aten::_to_copy.default", [("self", x), ("dtype", DT("i32"))],
         np.trunc(x).astype(np.int32))
    case("to_copy_f32_to_bool", "aten::_to_copy.default", [("self", x), ("dtype", DT("b8"))], x != 0)
    case("to_copy_f32_to_bf16", "aten::_to_copy.default", [("self", x), ("dtype", DT("bf16"))], BF16(x))
    case("to_copy_bool_to_f32", "aten::_to_copy.default", [("self", np.array([True, False])), ("dtype", DT("f32"))],
         np.array([1.0, 0.0], dtype=np.float32))
    i = np.array([-1, 256, 300], dtype=np.int64)
    case("to_copy_i64_to_u8_wraps", "aten::_to_copy.default", [("self", i), ("dtype", DT("u8"))], i.astype(np.uint8))
    case("to_copy_no_dtype_copies", "aten::_to_copy.default", [("self", x)], x)
    case("to_dtype_f64", "aten::to.dtype", [("self", x), ("dtype", DT("f64"))], x.astype(np.float64))
    case("to_dtype_layout", "aten::to.dtype_layout", [("self", x), ("dtype", DT("i16")), ("device", S("cpu"))],
         np.trunc(x).astype(np.int16))
    case("to_device_dtype", "aten::to.device", [("self", x), ("device", S("cpu")), ("dtype", DT("f16"))],
         x.astype(np.float16))
    case("to_other", "aten::to.other", [("self", x), ("other", np.zeros(1, np.int8))], np.trunc(x).astype(np.int8))
    case("lift_fresh_copy", "aten::lift_fresh_copy.default", [("self", x)], x)
    dst, src = randint(0, 5, 2, 3, dtype=np.int32), np.array([1.7, -2.2, 3.9], dtype=np.float32)
    case("copy_broadcasts_and_casts", "aten::copy.default", [("self", dst), ("src", src)],
         np.broadcast_to(np.trunc(src).astype(np.int32), (2, 3)))
    case("native_dropout_inference", "aten::native_dropout.default", [("input", x), ("p", F(0.2)), ("train", B(False))],
         (x, np.ones(x.shape, dtype=bool)))
    # Training draws from the run's seed (tests/executor/seeded_random_test); its argument errors here.
    case("native_dropout_training_bad_p", "aten::native_dropout.default",
         [("input", x), ("p", F(1.5)), ("train", B(True))], error="between 0 and 1")
    base = randn(3, 4)
    case("clone_noncontiguous", "aten::clone.default", [("self", View(base, {"permute": [1, 0]}))], base.T.copy())


# ---------------------------------------------------------------------------------------------
# Reductions.

def reduction_cases():
    x = randn(2, 3, 4)
    case("sum_all_f32", "aten::sum.default", [("self", x)], f32(d(x).sum()))
    case("sum_dims_keepdim", "aten::sum.dim_IntList", [("self", x), ("dim", INTS([0, 2])), ("keepdim", B(True))],
         f32(d(x).sum(axis=(0, 2), keepdims=True)))
    case("sum_negative_dim", "aten::sum.dim_IntList", [("self", x), ("dim", INTS([-1]))], f32(d(x).sum(axis=-1)))
    case("sum_dim_none_all", "aten::sum.dim_IntList", [("self", x), ("dim", NONE)], f32(d(x).sum()))
    xi = randint(-100, 100, 3, 5, dtype=np.int32)
    case("sum_i32_to_i64", "aten::sum.dim_IntList", [("self", xi), ("dim", INTS([1]))], xi.astype(np.int64).sum(axis=1))
    bools = rng.random((4, 3)) > 0.5
    case("sum_bool_counts", "aten::sum.default", [("self", bools)], np.int64(bools.sum()))
    case("sum_dtype_f64", "aten::sum.dim_IntList", [("self", x), ("dim", INTS([1])), ("dtype", DT("f64"))],
         d(x).sum(axis=1))
    norm = lambda v, o, axis=None, keepdims=False: np.linalg.norm(  # noqa: E731
        v.reshape(-1) if axis is None else v, ord=o, axis=axis, keepdims=keepdims)
    case("vector_norm_2_all", "aten::linalg_vector_norm.default", [("self", x)], f32(norm(d(x), 2)))
    case("vector_norm_1_dim_keepdim", "aten::linalg_vector_norm.default",
         [("self", x), ("ord", I(1)), ("dim", INTS([-1])), ("keepdim", B(True))], f32(norm(d(x), 1, -1, True)))
    case("vector_norm_3_5_dims", "aten::linalg_vector_norm.default", [("self", x), ("ord", F(3.5)), ("dim", INTS([0, 2]))],
         f32((np.abs(d(x)) ** 3.5).sum(axis=(0, 2)) ** (1 / 3.5)))
    zed = np.array([[1.0, np.nan, -3.0], [1.0, -3.0, 0.0]], np.float32)
    case("vector_norm_inf_nan", "aten::linalg_vector_norm.default", [("self", zed), ("ord", F(math.inf)), ("dim", INTS([1]))],
         np.array([np.nan, 3.0], np.float32))
    case("vector_norm_minus_inf", "aten::linalg_vector_norm.default",
         [("self", zed[1:]), ("ord", F(-math.inf)), ("dim", INTS([1]))], np.array([0.0], np.float32))
    case("vector_norm_0_counts_nan", "aten::linalg_vector_norm.default", [("self", zed), ("ord", I(0)), ("dim", INTS([1]))],
         np.array([3.0, 2.0], np.float32))
    case("vector_norm_minus_1_with_zero", "aten::linalg_vector_norm.default",
         [("self", zed[1:]), ("ord", I(-1)), ("dim", INTS([1]))], np.array([0.0], np.float32))
    case("vector_norm_empty_2_is_0", "aten::linalg_vector_norm.default",
         [("self", np.zeros((0, 3), np.float32)), ("dim", INTS([0]))], np.zeros(3, np.float32))
    case("vector_norm_empty_inf_error", "aten::linalg_vector_norm.default",
         [("self", np.zeros((0, 3), np.float32)), ("ord", F(math.inf)), ("dim", INTS([0]))], error="no identity")
    case("vector_norm_dtype_f64", "aten::linalg_vector_norm.default", [("self", x), ("dtype", DT("f64"))],
         norm(d(x), 2))
    case("vector_norm_int_error", "aten::linalg_vector_norm.default", [("self", xi)], error="floating")
    h = randn(4, 8).astype(np.float16)
    case("sum_f16", "aten::sum.dim_IntList", [("self", h), ("dim", INTS([1]))], like(d(h).sum(axis=1), h))
    case("sum_empty_is_zero", "aten::sum.dim_IntList", [("self", np.zeros((3, 0), np.float32)), ("dim", INTS([1]))],
         np.zeros(3, np.float32))
    z = np.array(2.5, dtype=np.float32)
    case("sum_zero_dim", "aten::sum.dim_IntList", [("self", z), ("dim", INTS([0]))], z)
    base = randn(4, 3)
    case("sum_noncontiguous", "aten::sum.dim_IntList", [("self", View(base, {"permute": [1, 0]})), ("dim", INTS([1]))],
         f32(d(base).T.sum(axis=1)))
    case("mean_dim", "aten::mean.dim", [("self", x), ("dim", INTS([1, -1])), ("keepdim", B(False))],
         f32(d(x).mean(axis=(1, 2))))
    case("mean_all", "aten::mean.default", [("self", x)], f32(d(x).mean()))
    case("mean_empty_nan", "aten::mean.dim", [("self", np.zeros((2, 0), np.float32)), ("dim", INTS([1]))],
         np.full(2, np.nan, np.float32))
    case("mean_int_error", "aten::mean.default", [("self", xi)], error="floating")
    case("mean_dim_repeated_error", "aten::mean.dim", [("self", x), ("dim", INTS([1, -2]))], error="twice")
    xn = randn(3, 4)
    xn[1, 2] = np.nan
    case("amax_keepdim_nan", "aten::amax.default", [("self", xn), ("dim", INTS([1])), ("keepdim", B(True))],
         np.max(xn, axis=1, keepdims=True))
    case("amin_all_empty_dims", "aten::amin.default", [("self", x)], np.min(x))
    ai = randint(-9, 9, 3, 4)
    case("amax_i64", "aten::amax.default", [("self", ai), ("dim", INTS([0]))], np.max(ai, axis=0))
    case("amax_bool", "aten::amax.default", [("self", bools), ("dim", INTS([1]))], np.max(bools, axis=1))
    case("max_all", "aten::max.default", [("self", xn)], np.float32(np.nan))
    case("min_all", "aten::min.default", [("self", ai)], np.min(ai))
    case("amax_empty_error", "aten::amax.default", [("self", np.zeros((2, 0), np.float32)), ("dim", INTS([1]))],
         error="empty")
    case("amax_dim_out_of_range", "aten::amax.default", [("self", x), ("dim", INTS([3]))], error="out of range")


def arg_reduction_cases():
    x = np.array([[1.0, 5.0, 5.0, 2.0], [3.0, np.nan, 7.0, np.nan], [0.0, -1.0, -1.0, 0.0]], dtype=np.float32)
    case("argmax_all", "aten::argmax.default", [("self", x[[0, 2]])], torch_argmax(x[[0, 2]]))
    case("argmax_all_nan", "aten::argmax.default", [("self", x)], torch_argmax(x))
    case("argmax_dim_ties_nan", "aten::argmax.default", [("self", x), ("dim", I(1))], torch_argmax(x, 1))
    case("argmin_dim_ties_nan", "aten::argmin.default", [("self", x), ("dim", I(-1)), ("keepdim", B(True))],
         torch_argmax(x, 1, True, minimum=True))
    case("argmax_dim0", "aten::argmax.default", [("self", x), ("dim", I(0))], torch_argmax(x, 0))
    case("argmax_none_keepdim", "aten::argmax.default", [("self", x[[0, 2]]), ("dim", NONE), ("keepdim", B(True))],
         torch_argmax(x[[0, 2]], None, True))
    bools = np.array([[False, True, True], [False, False, False], [True, False, True]])
    case("argmax_bool", "aten::argmax.default", [("self", bools), ("dim", I(1))], torch_argmax(bools, 1))
    case("argmin_bool", "aten::argmin.default", [("self", bools), ("dim", I(1))], torch_argmax(bools, 1, minimum=True))
    ints = np.array([[3, 9, 9], [-4, -4, 2]], dtype=np.int8)
    case("argmax_i8_ties", "aten::argmax.default", [("self", ints), ("dim", I(1))], torch_argmax(ints, 1))
    base = randn(4, 3)
    case("argmax_noncontiguous", "aten::argmax.default", [("self", View(base, {"permute": [1, 0]})), ("dim", I(1))],
         torch_argmax(base.T, 1))
    case("argmax_noncontiguous_all", "aten::argmax.default", [("self", View(base, {"permute": [1, 0]}))],
         torch_argmax(base.T))
    z = np.array(4.0, dtype=np.float32)
    case("argmax_zero_dim", "aten::argmax.default", [("self", z), ("dim", I(0))], np.int64(0))
    case("argmax_empty_error", "aten::argmax.default", [("self", np.zeros((0,), np.float32))], error="empty")
    idx = torch_argmax(x, 1)
    case("max_dim_values_indices", "aten::max.dim", [("self", x), ("dim", I(1))],
         (take_along(x, idx, 1, False), idx))
    idn = torch_argmax(x, 0, True, minimum=True)
    case("min_dim_keepdim", "aten::min.dim", [("self", x), ("dim", I(0)), ("keepdim", B(True))],
         (take_along(x, idn, 0, True), idn))
    bidx = torch_argmax(bools, 1)
    case("max_dim_bool", "aten::max.dim", [("self", bools), ("dim", I(1))], (take_along(bools, bidx, 1, False), bidx))


# ---------------------------------------------------------------------------------------------
# Softmax and normalisation.

def softmax_cases():
    x = randn(3, 5)
    case("softmax_internal_last", "aten::_softmax.default", [("self", x), ("dim", I(-1)), ("half_to_float", B(False))],
         f32(softmax(d(x), -1)))
    x3 = randn(2, 3, 4)
    case("softmax_inner_dim", "aten::softmax.int", [("self", x3), ("dim", I(1))], f32(softmax(d(x3), 1)))
    case("softmax_dtype_f64", "aten::softmax.int", [("self", x3), ("dim", I(0)), ("dtype", DT("f64"))], softmax(d(x3), 0))
    case("log_softmax_internal", "aten::_log_softmax.default", [("self", x), ("dim", I(1)), ("half_to_float", B(False))],
         f32(log_softmax(d(x), 1)))
    case("log_softmax_int", "aten::log_softmax.int", [("self", x3), ("dim", I(-1))], f32(log_softmax(d(x3), -1)))
    xm = randn(2, 4)
    xm[0, 1] = -np.inf
    case("softmax_with_neg_inf", "aten::_softmax.default", [("self", xm), ("dim", I(1)), ("half_to_float", B(False))],
         f32(softmax(d(xm), 1)))
    h = randn(2, 6).astype(np.float16)
    case("softmax_f16", "aten::_softmax.default", [("self", h), ("dim", I(1)), ("half_to_float", B(False))],
         like(softmax(d(h), 1), h))
    case("softmax_half_to_float", "aten::_softmax.default", [("self", h), ("dim", I(1)), ("half_to_float", B(True))],
         f32(softmax(d(h), 1)))
    hb = as_bf16(randn(3, 4))
    case("softmax_bf16", "aten::softmax.int", [("self", hb), ("dim", I(0))], like(softmax(d(hb), 0), hb))
    base = randn(5, 3)
    case("softmax_noncontiguous", "aten::softmax.int", [("self", View(base, {"permute": [1, 0]})), ("dim", I(1))],
         f32(softmax(d(base).T, 1)))
    case("softmax_empty", "aten::softmax.int", [("self", np.zeros((0, 4), np.float32)), ("dim", I(1))],
         np.zeros((0, 4), np.float32))
    xs = randn(3, 4)
    xs[1, :] = -np.inf
    safe = softmax(np.where(np.isneginf(d(xs)), -1e300, d(xs)), 1)
    safe[1, :] = 0.0
    case("safe_softmax_masked_row_zeros", "aten::_safe_softmax.default", [("self", xs), ("dim", I(-1))], f32(safe))
    ints = randint(0, 3, 4)
    case("softmax_int_input_with_dtype", "aten::softmax.int", [("self", ints), ("dim", I(0)), ("dtype", DT("f32"))],
         f32(softmax(ints.astype(np.float64), 0)))
    case("softmax_int_error", "aten::softmax.int", [("self", randint(0, 3, 4)), ("dim", I(0))], error="floating")


def normalization_cases():
    x, w, b = randn(2, 3, 8), randn(8), randn(8)
    mean = d(x).mean(axis=-1, keepdims=True)
    var = d(x).var(axis=-1, keepdims=True)
    rstd = 1 / np.sqrt(var + 1e-5)
    case("native_layer_norm", "aten::native_layer_norm.default",
         [("input", x), ("normalized_shape", INTS([8])), ("weight", w), ("bias", b), ("eps", F(1e-5))],
         (f32((d(x) - mean) * rstd * d(w) + d(b)), f32(mean), f32(rstd)))
    # group_norm: x [2, 3, 8] as 3 channels of 8 positions; groups of 1 and 3 channels.
    def group_norm_ref(v, groups, weight, bias, eps):
        n, c = v.shape[:2]
        g = d(v).reshape(n, groups, -1)
        m, var = g.mean(axis=2, keepdims=True), g.var(axis=2, keepdims=True)
        y = ((g - m) / np.sqrt(var + eps)).reshape(v.shape)
        shape = (1, c) + (1,) * (v.ndim - 2)
        if weight is not None:
            y = y * d(weight).reshape(shape)
        if bias is not None:
            y = y + d(bias).reshape(shape)
        return y, m.reshape(n, groups), 1 / np.sqrt(var.reshape(n, groups) + eps)
    cw, cb = w[:3].copy(), b[:3].copy()
    gy, gm, gr = group_norm_ref(x, 3, cw, cb, 1e-5)
    case("group_norm_per_channel", "aten::group_norm.default",
         [("input", x), ("num_groups", I(3)), ("weight", cw), ("bias", cb)], f32(gy))
    gy1, _, _ = group_norm_ref(x, 1, None, None, 1e-3)
    case("group_norm_one_group_no_affine", "aten::group_norm.default",
         [("input", x), ("num_groups", I(1)), ("weight", NONE), ("bias", NONE), ("eps", F(1e-3))], f32(gy1))
    x4 = x.reshape(2, 3, 2, 4)
    gy4, gm4, gr4 = group_norm_ref(x4, 3, cw, None, 1e-5)
    case("native_group_norm_4d", "aten::native_group_norm.default",
         [("input", x4), ("weight", cw), ("bias", NONE), ("N", I(2)), ("C", I(3)), ("HxW", I(8)), ("group", I(3)),
          ("eps", F(1e-5))], (f32(gy4), f32(gm4), f32(gr4)))
    case("group_norm_groups_error", "aten::group_norm.default", [("input", x), ("num_groups", I(2))],
         error="must divide")
    # _weight_norm: v * g / ||v|| over every dim but `dim` (-1: all of v).
    gk = np.ascontiguousarray(x[0, :, :1].reshape(1, 3, 1))
    case("weight_norm_dim1", "aten::_weight_norm.default", [("v", x), ("g", gk), ("dim", I(1))],
         f32(d(x) * d(gk) / np.sqrt((d(x) ** 2).sum(axis=(0, 2), keepdims=True))))
    g0 = np.ascontiguousarray(x[:, :1, :1])
    case("weight_norm_dim0_default", "aten::_weight_norm.default", [("v", x), ("g", g0)],
         f32(d(x) * d(g0) / np.sqrt((d(x) ** 2).sum(axis=(1, 2), keepdims=True))))
    case("weight_norm_all", "aten::_weight_norm.default", [("v", x), ("g", np.array(2.0, np.float32)), ("dim", I(-1))],
         f32(d(x) * 2.0 / np.sqrt((d(x) ** 2).sum())))
    case("weight_norm_g_shape_error", "aten::_weight_norm.default", [("v", x), ("g", gk), ("dim", I(0))],
         error="one value per index")
    x2 = randn(3, 2, 5)
    m2 = d(x2).reshape(3, -1).mean(axis=1).reshape(3, 1, 1)
    v2 = d(x2).reshape(3, -1).var(axis=1).reshape(3, 1, 1)
    case("layer_norm_two_dims_no_affine", "aten::layer_norm.default",
         [("input", x2), ("normalized_shape", INTS([2, 5])), ("weight", NONE), ("bias", NONE), ("eps", F(1e-3))],
         f32((d(x2) - m2) / np.sqrt(v2 + 1e-3)))
    h, hw = randn(4, 6).astype(np.float16), randn(6).astype(np.float16)
    mh, vh = d(h).mean(axis=-1, keepdims=True), d(h).var(axis=-1, keepdims=True)
    case("layer_norm_f16", "aten::layer_norm.default", [("input", h), ("normalized_shape", INTS([6])), ("weight", hw)],
         like((d(h) - mh) / np.sqrt(vh + 1e-5) * d(hw), h))
    case("layer_norm_shape_error", "aten::layer_norm.default", [("input", x), ("normalized_shape", INTS([4]))],
         error="normalized_shape")
    ms = (d(x) ** 2).mean(axis=-1, keepdims=True)
    case("rms_norm_weight_eps", "aten::rms_norm.default",
         [("input", x), ("normalized_shape", INTS([8])), ("weight", w), ("eps", F(1e-6))],
         f32(d(x) / np.sqrt(ms + 1e-6) * d(w)))
    eps32 = float(np.finfo(np.float32).eps)
    case("rms_norm_default_eps", "aten::rms_norm.default", [("input", x), ("normalized_shape", INTS([8]))],
         f32(d(x) / np.sqrt(ms + eps32)))
    xb = randn(2, 3, 4, 5)
    rm, rv, bw, bb = randn(3), np.abs(randn(3)) + 0.5, randn(3), randn(3)
    ref = (d(xb) - d(rm).reshape(1, 3, 1, 1)) / np.sqrt(d(rv).reshape(1, 3, 1, 1) + 1e-5) * d(bw).reshape(1, 3, 1, 1) \
        + d(bb).reshape(1, 3, 1, 1)
    empty = np.zeros((0,), np.float32)
    case("batch_norm_no_training", "aten::_native_batch_norm_legit_no_training.default",
         [("input", xb), ("weight", bw), ("bias", bb), ("running_mean", rm), ("running_var", rv), ("momentum", F(0.1)),
          ("eps", F(1e-5))], (f32(ref), empty, empty))
    x3 = randn(4, 3)
    ref3 = (d(x3) - d(rm)) / np.sqrt(d(rv) + 1e-3)
    case("batch_norm_default_2d_no_affine", "aten::batch_norm.default",
         [("input", x3), ("weight", NONE), ("bias", NONE), ("running_mean", rm), ("running_var", rv),
          ("training", B(False)), ("momentum", F(0.1)), ("eps", F(1e-3)), ("cudnn_enabled", B(False))], f32(ref3))
    case("batch_norm_training_error", "aten::batch_norm.default",
         [("input", x3), ("weight", NONE), ("bias", NONE), ("running_mean", rm), ("running_var", rv),
          ("training", B(True)), ("momentum", F(0.1)), ("eps", F(1e-3)), ("cudnn_enabled", B(False))],
         error="training")


# ---------------------------------------------------------------------------------------------
# Linear algebra.

def linalg_cases():
    a, b = randn(3, 4), randn(4, 5)
    case("mm_f32", "aten::mm.default", [("self", a), ("mat2", b)], f32(d(a) @ d(b)))
    at, bt = randn(4, 3), randn(5, 4)
    case("mm_transposed_views", "aten::mm.default",
         [("self", View(at, {"permute": [1, 0]})), ("mat2", View(bt, {"permute": [1, 0]}))], f32(d(at).T @ d(bt).T))
    bs = randn(4, 10)
    case("mm_sliced_view", "aten::mm.default", [("self", a), ("mat2", View(bs, {"slice": [1, 0, 10, 2]}))],
         f32(d(a) @ d(bs)[:, ::2]))
    # Products of one row or one column run through gemv: every layout of the matrix operand, a
    # strided vector, beta != 0, and a zero-stride (expanded) vector that gemv cannot take.
    one = randn(1, 4)
    case("mm_one_row", "aten::mm.default", [("self", one), ("mat2", b)], f32(d(one) @ d(b)))
    case("mm_one_row_transposed_matrix", "aten::mm.default", [("self", one), ("mat2", View(bt, {"permute": [1, 0]}))],
         f32(d(one) @ d(bt).T))
    wide = randn(1, 8)
    case("mm_one_strided_row", "aten::mm.default", [("self", View(wide, {"slice": [1, 0, 8, 2]})), ("mat2", b)],
         f32(d(wide)[:, ::2] @ d(b)))
    col = randn(4, 1)
    case("mm_one_column", "aten::mm.default", [("self", a), ("mat2", col)], f32(d(a) @ d(col)))
    case("mm_one_column_transposed_matrix", "aten::mm.default", [("self", View(at, {"permute": [1, 0]})), ("mat2", col)],
         f32(d(at).T @ d(col)))
    e1 = randn(1, 1)
    case("mm_one_expanded_column", "aten::mm.default", [("self", a), ("mat2", View(e1, {"expand": [4, 1]}))],
         f32(d(a) @ np.broadcast_to(d(e1), (4, 1))))
    lin_w, lin_b = randn(6, 4), randn(6)
    case("linear_batch_one", "aten::linear.default", [("input", one), ("weight", lin_w), ("bias", lin_b)],
         f32(d(one) @ d(lin_w).T + d(lin_b)))
    bias_row = randn(1, 5)
    case("addmm_one_row_beta", "aten::addmm.default",
         [("self", bias_row), ("mat1", one), ("mat2", b), ("beta", F(0.5)), ("alpha", F(2.0))],
         f32(0.5 * d(bias_row) + 2.0 * (d(one) @ d(b))))
    row = randn(1, 4)
    case("mm_expanded_rows", "aten::mm.default", [("self", View(row, {"expand": [3, 4]})), ("mat2", b)],
         f32(np.broadcast_to(d(row), (3, 4)) @ d(b)))
    ia, ib = randint(-5, 5, 2, 3), randint(-5, 5, 3, 2)
    case("mm_i64", "aten::mm.default", [("self", ia), ("mat2", ib)], ia @ ib)
    ha, hb = randn(3, 4).astype(np.float16), randn(4, 2).astype(np.float16)
    case("mm_f16", "aten::mm.default", [("self", ha), ("mat2", hb)], like(d(ha) @ d(hb), ha))
    da, db = randn(2, 3, dtype=np.float64), randn(3, 2, dtype=np.float64)
    case("mm_f64", "aten::mm.default", [("self", da), ("mat2", db)], da @ db)
    case("mm_shape_error", "aten::mm.default", [("self", a), ("mat2", a)], error="cannot be multiplied")
    case("mm_dtype_error", "aten::mm.default", [("self", a), ("mat2", db)], error="dtype")
    case("mm_empty_k", "aten::mm.default", [("self", np.zeros((2, 0), np.float32)), ("mat2", np.zeros((0, 3), np.float32))],
         np.zeros((2, 3), np.float32))
    x, y = randn(2, 3, 4), randn(2, 4, 2)
    case("bmm_f32", "aten::bmm.default", [("self", x), ("mat2", y)], f32(d(x) @ d(y)))
    s, m1, m2 = randn(5), randn(3, 4), randn(4, 5)
    case("addmm_beta_alpha", "aten::addmm.default",
         [("self", s), ("mat1", m1), ("mat2", m2), ("beta", F(0.5)), ("alpha", F(2.0))],
         f32(0.5 * d(s) + 2.0 * d(m1) @ d(m2)))
    sn = np.full(5, np.nan, np.float32)
    case("addmm_beta_zero_ignores_nan", "aten::addmm.default",
         [("self", sn), ("mat1", m1), ("mat2", m2), ("beta", I(0))], f32(d(m1) @ d(m2)))
    si, i1, i2 = randint(-3, 3, 2, 1), randint(-3, 3, 2, 3), randint(-3, 3, 3, 2)
    case("addmm_i64", "aten::addmm.default", [("self", si), ("mat1", i1), ("mat2", i2), ("alpha", I(2))],
         si + 2 * (i1 @ i2))
    sb = np.ascontiguousarray(x[0, :, :2])  # [3, 2], broadcast over the batch
    case("baddbmm_beta_alpha", "aten::baddbmm.default",
         [("self", sb), ("batch1", x), ("batch2", y), ("beta", F(0.5)), ("alpha", F(2.0))],
         f32(0.5 * d(sb) + 2.0 * (d(x) @ d(y))))
    case("baddbmm_beta_zero_ignores_nan", "aten::baddbmm.default",
         [("self", np.full((3, 2), np.nan, np.float32)), ("batch1", x), ("batch2", y), ("beta", I(0))],
         f32(d(x) @ d(y)))
    case("baddbmm_transposed_batch", "aten::baddbmm.default",
         [("self", sb), ("batch1", View(np.ascontiguousarray(np.transpose(x, (0, 2, 1))), {"permute": [0, 2, 1]})),
          ("batch2", y)], f32(d(sb) + d(x) @ d(y)))
    bi1, bi2 = np.stack([i1, -i1]), np.stack([i2, i2])
    case("baddbmm_i64", "aten::baddbmm.default", [("self", si), ("batch1", bi1), ("batch2", bi2), ("alpha", I(3))],
         si + 3 * (bi1 @ bi2))
    case("baddbmm_shape_error", "aten::baddbmm.default", [("self", sb), ("batch1", x), ("batch2", x)],
         error="cannot be multiplied")
    inp, w, bias = randn(2, 3, 4), randn(5, 4), randn(5)
    case("linear_3d_bias", "aten::linear.default", [("input", inp), ("weight", w), ("bias", bias)],
         f32(d(inp) @ d(w).T + d(bias)))
    v = randn(4)
    case("linear_1d_no_bias", "aten::linear.default", [("input", v), ("weight", w)], f32(d(w) @ d(v)))
    inb = randn(3, 2, 4)
    case("linear_noncontiguous_input", "aten::linear.default",
         [("input", View(inb, {"permute": [1, 0, 2]})), ("weight", w), ("bias", bias)],
         f32(np.transpose(d(inb), (1, 0, 2)) @ d(w).T + d(bias)))
    hbi, hbw = as_bf16(randn(3, 4)), as_bf16(randn(2, 4))
    case("linear_bf16", "aten::linear.default", [("input", hbi), ("weight", hbw)], like(d(hbi) @ d(hbw).T, hbi))
    p, q = randn(4), randn(4)
    case("matmul_dot", "aten::matmul.default", [("self", p), ("other", q)], f32(d(p) @ d(q)))
    case("matmul_vec_mat", "aten::matmul.default", [("self", p), ("other", b)], f32(d(p) @ d(b)))
    case("matmul_mat_vec", "aten::matmul.default", [("self", a), ("other", q)], f32(d(a) @ d(q)))
    ba, bb = randn(2, 1, 3, 4), randn(5, 4, 2)
    case("matmul_broadcast_batch", "aten::matmul.default", [("self", ba), ("other", bb)], f32(d(ba) @ d(bb)))
    case("matmul_3d_2d_folds", "aten::matmul.default", [("self", x), ("other", b)], f32(d(x) @ d(b)))
    bm = randn(3, 4, 2)
    case("matmul_vec_batched", "aten::matmul.default", [("self", p), ("other", bm)], f32(d(p) @ d(bm)))


# ---------------------------------------------------------------------------------------------
# Shapes and views.

def view_cases():
    x = randn(2, 3, 4)
    case("view_infer", "aten::view.default", [("self", x), ("size", INTS([4, -1]))], x.reshape(4, -1))
    base = randn(3, 4)
    case("view_incompatible_error", "aten::view.default",
         [("self", View(base, {"permute": [1, 0]})), ("size", INTS([12]))], error="reshape")
    case("view_bad_numel_error", "aten::view.default", [("self", x), ("size", INTS([5, -1]))], error="invalid")
    case("reshape_copies_noncontiguous", "aten::reshape.default",
         [("self", View(base, {"permute": [1, 0]})), ("shape", INTS([2, 6]))], base.T.reshape(2, 6))
    case("reshape_views_split_dim", "aten::reshape.default",
         [("self", View(x, {"permute": [1, 0, 2]})), ("shape", INTS([3, 2, 2, 2]))],
         np.transpose(x, (1, 0, 2)).reshape(3, 2, 2, 2))
    case("unsafe_view", "aten::_unsafe_view.default", [("self", x), ("size", INTS([6, 4]))], x.reshape(6, 4))
    case("view_zero_dim_to_1", "aten::view.default", [("self", np.array(3.0, np.float32)), ("size", INTS([1, 1]))],
         np.full((1, 1), 3.0, np.float32))
    case("permute_negative", "aten::permute.default", [("self", x), ("dims", INTS([-1, 0, 1]))], np.transpose(x, (2, 0, 1)))
    case("permute_repeat_error", "aten::permute.default", [("self", x), ("dims", INTS([0, 0, 1]))], error="repeat")
    case("transpose_int", "aten::transpose.int", [("self", x), ("dim0", I(0)), ("dim1", I(-1))], np.swapaxes(x, 0, -1))
    case("t_2d", "aten::t.default", [("self", base)], base.T)
    case("swapaxes", "aten::swapaxes.default", [("self", x), ("axis0", I(-1)), ("axis1", I(0))], np.swapaxes(x, -1, 0))
    case("swapaxes_out_of_range", "aten::swapaxes.default", [("self", x), ("axis0", I(3)), ("axis1", I(0))],
         error="out of range")
    case("numpy_T_2d", "aten::numpy_T.default", [("self", base)], base.T)
    case("numpy_T_3d_reverses_all", "aten::numpy_T.default", [("self", x)], np.transpose(x, (2, 1, 0)))
    case("numpy_T_zero_dim", "aten::numpy_T.default", [("self", np.array(3.0, np.float32))], np.array(3.0, np.float32))
    case("diagonal_main", "aten::diagonal.default", [("self", base)], np.diagonal(base).copy())
    case("diagonal_offset_dims_3d", "aten::diagonal.default", [("self", x), ("offset", I(1)), ("dim1", I(2)), ("dim2", I(0))],
         np.diagonal(x, 1, 2, 0).copy())
    case("diagonal_negative_offset", "aten::diagonal.default", [("self", x), ("offset", I(-1)), ("dim1", I(-1)), ("dim2", I(1))],
         np.diagonal(x, -1, 2, 1).copy())
    case("diagonal_past_the_edge", "aten::diagonal.default", [("self", base), ("offset", I(1 << 62))], np.zeros(0, base.dtype))
    case("diagonal_same_dims_error", "aten::diagonal.default", [("self", base), ("dim1", I(1)), ("dim2", I(-1))],
         error="cannot be identical")
    v1 = randn(3)
    case("t_1d_identity", "aten::t.default", [("self", v1)], v1)
    col = randn(3, 1)
    case("expand_new_dims", "aten::expand.default", [("self", col), ("size", INTS([2, -1, 4]))],
         np.broadcast_to(col, (2, 3, 4)))
    case("expand_error", "aten::expand.default", [("self", base), ("size", INTS([3, 5]))], error="cannot expand")
    case("expand_as", "aten::expand_as.default", [("self", col), ("other", x)],
         np.broadcast_to(col, (2, 3, 4)))
    case("expand_as_error", "aten::expand_as.default", [("self", x), ("other", base)], error="fewer dimensions")
    case("view_as", "aten::view_as.default", [("self", x), ("other", randn(6, 4))], x.reshape(6, 4))
    case("view_as_itself", "aten::view_as.default", [("self", base), ("other", base)], base)
    case("view_as_bad_numel_error", "aten::view_as.default", [("self", x), ("other", randn(5, 5))], error="invalid")
    case("unsqueeze_negative", "aten::unsqueeze.default", [("self", base), ("dim", I(-1))], base[:, :, None])
    case("unsqueeze_front", "aten::unsqueeze.default", [("self", base), ("dim", I(0))], base[None])
    s = randn(1, 3, 1, 2)
    case("squeeze_all", "aten::squeeze.default", [("self", s)], np.squeeze(s))
    case("squeeze_dim_keeps_non1", "aten::squeeze.dim", [("self", s), ("dim", I(1))], s)
    case("squeeze_dims", "aten::squeeze.dims", [("self", s), ("dim", INTS([0, -2]))], s.reshape(3, 2))
    case("flatten_middle", "aten::flatten.using_ints", [("self", x), ("start_dim", I(1)), ("end_dim", I(-1))],
         x.reshape(2, 12))
    case("flatten_noncontiguous_copies", "aten::flatten.using_ints", [("self", View(base, {"permute": [1, 0]}))],
         base.T.reshape(-1))
    case("flatten_zero_dim", "aten::flatten.using_ints", [("self", np.array(2.0, np.float32))],
         np.array([2.0], np.float32))
    case("unflatten", "aten::unflatten.int", [("self", x), ("dim", I(-1)), ("sizes", INTS([2, -1]))],
         x.reshape(2, 3, 2, 2))
    long = randn(4, 10)
    case("slice_step", "aten::slice.Tensor", [("self", long), ("dim", I(1)), ("start", I(1)), ("end", I(9)), ("step", I(3))],
         long[:, 1:9:3])
    case("slice_negative_start_big_end", "aten::slice.Tensor",
         [("self", long), ("dim", I(-1)), ("start", I(-4)), ("end", I(2 ** 62))], long[:, -4:])
    case("slice_none_bounds", "aten::slice.Tensor", [("self", long), ("dim", I(0)), ("start", NONE), ("end", NONE)], long)
    case("slice_empty_range", "aten::slice.Tensor", [("self", long), ("dim", I(1)), ("start", I(7)), ("end", I(3))],
         long[:, 7:3])
    case("select_negative", "aten::select.int", [("self", x), ("dim", I(1)), ("index", I(-1))], x[:, -1])
    case("select_out_of_range", "aten::select.int", [("self", x), ("dim", I(1)), ("index", I(3))], error="out of range")
    case("narrow", "aten::narrow.default", [("self", long), ("dim", I(1)), ("start", I(2)), ("length", I(5))],
         long[:, 2:7])
    case("alias", "aten::alias.default", [("self", x)], x)
    case("detach", "aten::detach.default", [("self", x)], x)
    case("contiguous_of_transposed", "aten::contiguous.default", [("self", View(base, {"permute": [1, 0]}))], base.T)
    case("dropout_inference", "aten::dropout.default", [("input", x), ("p", F(0.5)), ("train", B(False))], x)


def join_split_cases():
    a, b = randn(2, 3), randint(-3, 3, 2, 2)
    case("cat_promotes_dim1", "aten::cat.default", [("tensors", TS(a, b)), ("dim", I(1))],
         np.concatenate([a, b.astype(np.float32)], axis=1))
    c = randn(1, 3)
    case("cat_skips_legacy_empty", "aten::cat.default", [("tensors", TS(a, np.zeros((0,), np.float32), c))],
         np.concatenate([a, c]))
    case("concat_alias", "aten::concat.default", [("tensors", TS(a, c)), ("dim", I(0))], np.concatenate([a, c]))
    case("cat_negative_dim", "aten::cat.default", [("tensors", TS(a, a)), ("dim", I(-1))], np.concatenate([a, a], -1))
    case("cat_mismatch_error", "aten::cat.default", [("tensors", TS(a, randn(2, 4))), ("dim", I(0))], error="differ")
    case("stack_dim1", "aten::stack.default", [("tensors", TS(a, a * 2, a * 3)), ("dim", I(1))], np.stack([a, a * 2, a * 3], 1))
    case("stack_negative_dim", "aten::stack.default", [("tensors", TS(a, c.repeat(2, 0))), ("dim", I(-1))],
         np.stack([a, c.repeat(2, 0)], -1))
    x = randn(7, 2)
    case("split_uneven", "aten::split.Tensor", [("self", x), ("split_size", I(3))], [x[0:3], x[3:6], x[6:7]])
    case("split_with_sizes", "aten::split_with_sizes.default", [("self", x), ("split_sizes", INTS([2, 0, 5])), ("dim", I(0))],
         [x[0:2], x[2:2], x[2:7]])
    case("split_sizes", "aten::split.sizes", [("self", x), ("split_size", INTS([4, 3]))], [x[0:4], x[4:7]])
    case("split_with_sizes_error", "aten::split_with_sizes.default", [("self", x), ("split_sizes", INTS([2, 2]))],
         error="add up")
    y = randn(2, 5)
    case("chunk_dim1", "aten::chunk.default", [("self", y), ("chunks", I(3)), ("dim", I(1))], [y[:, 0:2], y[:, 2:4], y[:, 4:5]])
    case("unbind_dim1", "aten::unbind.int", [("self", y), ("dim", I(1))], [y[:, i] for i in range(5)])


# ---------------------------------------------------------------------------------------------
# Creation.

def creation_cases():
    case("zeros_default_f32", "aten::zeros.default", [("size", INTS([2, 3]))], np.zeros((2, 3), np.float32))
    case("ones_i32", "aten::ones.default", [("size", INTS([4])), ("dtype", DT("i32"))], np.ones(4, np.int32))
    case("full_int_fill_i64", "aten::full.default", [("size", INTS([2, 2])), ("fill_value", I(7))], np.full((2, 2), 7, np.int64))
    case("full_float_fill_f32", "aten::full.default", [("size", INTS([3])), ("fill_value", F(-1.5))],
         np.full(3, -1.5, np.float32))
    case("full_bool", "aten::full.default", [("size", INTS([2])), ("fill_value", B(True))], np.full(2, True))
    case("full_dtype_f16", "aten::full.default", [("size", INTS([2])), ("fill_value", F(0.1)), ("dtype", DT("f16"))],
         np.full(2, 0.1, np.float16))
    case("full_zero_dim", "aten::full.default", [("size", INTS([])), ("fill_value", I(3))], np.array(3, np.int64))
    case("zeros_negative_error", "aten::zeros.default", [("size", INTS([2, -1]))], error="negative")
    t = randint(0, 5, 2, 3, dtype=np.int16)
    case("zeros_like", "aten::zeros_like.default", [("self", t)], np.zeros((2, 3), np.int16))
    case("ones_like_dtype", "aten::ones_like.default", [("self", t), ("dtype", DT("f64"))], np.ones((2, 3), np.float64))
    case("full_like", "aten::full_like.default", [("self", t), ("fill_value", F(2.9))], np.full((2, 3), 2, np.int16))
    case("new_zeros", "aten::new_zeros.default", [("self", t), ("size", INTS([3]))], np.zeros(3, np.int16))
    case("new_ones_dtype", "aten::new_ones.default", [("self", t), ("size", INTS([1, 2])), ("dtype", DT("b8"))],
         np.ones((1, 2), bool))
    case("new_full", "aten::new_full.default", [("self", randn(2)), ("size", INTS([2])), ("fill_value", I(4))],
         np.full(2, 4, np.float32))
    case("arange_end", "aten::arange.default", [("end", I(5))], np.arange(5, dtype=np.int64))
    case("arange_start_end_float", "aten::arange.start", [("start", F(0.5)), ("end", F(3.0))],
         np.arange(0.5, 3.0, dtype=np.float64).astype(np.float32))
    case("arange_negative_step", "aten::arange.start_step", [("start", I(10)), ("end", I(1)), ("step", I(-3))],
         np.arange(10, 1, -3, dtype=np.int64))
    case("arange_dtype_f64", "aten::arange.start_step", [("start", I(0)), ("end", I(1)), ("step", F(0.25)),
                                                          ("dtype", DT("f64"))], np.arange(0, 1, 0.25))
    case("arange_empty", "aten::arange.start", [("start", I(3)), ("end", I(3))], np.zeros(0, np.int64))
    case("arange_bad_step", "aten::arange.start_step", [("start", I(0)), ("end", I(5)), ("step", I(-1))], error="sign")
    case("scalar_tensor", "aten::scalar_tensor.default", [("s", F(2.5))], np.array(2.5, np.float32))


# ---------------------------------------------------------------------------------------------
# Indexing.

def indexing_cases():
    w = randn(6, 3)
    idx = np.array([[0, 5], [2, 2]], dtype=np.int64)
    case("embedding_2d_indices", "aten::embedding.default", [("weight", w), ("indices", idx)], w[idx])
    case("embedding_i32_indices", "aten::embedding.default", [("weight", w), ("indices", idx.astype(np.int32)[0])], w[idx[0]])
    case("embedding_out_of_range", "aten::embedding.default", [("weight", w), ("indices", np.array([6]))],
         error="out of range")
    # The sharding pass's lookup into rows [2, 5) of a 6-row table: other rows read as zeros.
    shard = w[2:5]
    masked = np.where(((idx >= 2) & (idx < 5))[..., None], w[np.clip(idx, 0, 5)], 0).astype(np.float32)
    case("masked_embedding_shard", "nrt::masked_embedding.default",
         [("weight", shard), ("indices", idx), ("vocab_start", I(2)), ("vocab_size", I(6))], masked)
    case("masked_embedding_out_of_range", "nrt::masked_embedding.default",
         [("weight", shard), ("indices", np.array([6])), ("vocab_start", I(2)), ("vocab_size", I(6))],
         error="out of range")
    case("masked_embedding_not_a_shard", "nrt::masked_embedding.default",
         [("weight", w), ("indices", idx), ("vocab_start", I(2)), ("vocab_size", I(6))], error="not a shard")
    x = randn(3, 4)
    case("index_select_negative", "aten::index_select.default",
         [("self", x), ("dim", I(1)), ("index", np.array([3, -1, 0], dtype=np.int64))], x[:, [3, -1, 0]])
    case("index_select_noncontiguous", "aten::index_select.default",
         [("self", View(x, {"permute": [1, 0]})), ("dim", I(0)), ("index", np.array([2], dtype=np.int32))], x.T[[2]])
    case("index_select_error", "aten::index_select.default", [("self", x), ("dim", I(0)), ("index", np.array([3]))],
         error="out of range")
    gi = np.array([[0, 3], [1, 1], [2, 0]], dtype=np.int64)
    case("gather_dim1", "aten::gather.default", [("self", x), ("dim", I(1)), ("index", gi)], np.take_along_axis(x, gi, 1))
    g0 = np.array([[2, 0, 1, 0]], dtype=np.int64)
    case("gather_dim0_smaller_index", "aten::gather.default", [("self", x), ("dim", I(-2)), ("index", g0)],
         np.take_along_axis(x, g0, 0))
    case("gather_out_of_range", "aten::gather.default", [("self", x), ("dim", I(1)), ("index", gi + 2)],
         error="out of range")
    t3 = randn(3, 4, 5)
    i0 = np.array([2, 0], dtype=np.int64)
    case("index_tensor_first_dim", "aten::index.Tensor", [("self", t3), ("indices", OTS(i0))], t3[i0])
    i1, i2 = np.array([[1], [3]], dtype=np.int64), np.array([0, 4, -1], dtype=np.int64)
    case("index_tensor_adjacent_broadcast", "aten::index.Tensor", [("self", t3), ("indices", OTS(None, i1, i2))],
         t3[:, i1, i2])
    ia, ib = np.array([0, 2], dtype=np.int64), np.array([1, 3], dtype=np.int64)
    case("index_tensor_non_adjacent", "aten::index.Tensor", [("self", t3), ("indices", OTS(ia, None, ib))], t3[ia, :, ib])


# ---------------------------------------------------------------------------------------------
# Convolution, pooling, attention.

def conv_pool_cases():
    x, w, b = randn(2, 3, 7, 6), randn(4, 3, 3, 3), randn(4)
    case("convolution_stride_pad_bias", "aten::convolution.default",
         [("input", x), ("weight", w), ("bias", b), ("stride", INTS([2, 2])), ("padding", INTS([1, 1])),
          ("dilation", INTS([1, 1])), ("transposed", B(False)), ("output_padding", INTS([0, 0])), ("groups", I(1))],
         f32(conv2d_ref(d(x), d(w), d(b), (2, 2), (1, 1), (1, 1), (1, 1), 1)))
    xg, wg = randn(1, 4, 6, 6), randn(6, 2, 2, 3)
    case("convolution_groups_dilation", "aten::convolution.default",
         [("input", xg), ("weight", wg), ("bias", NONE), ("stride", INTS([1, 2])), ("padding", INTS([0, 1])),
          ("dilation", INTS([2, 1])), ("transposed", B(False)), ("output_padding", INTS([0, 0])), ("groups", I(2))],
         f32(conv2d_ref(d(xg), d(wg), None, (1, 2), (0, 1), (0, 1), (2, 1), 2)))
    w1 = randn(5, 3, 1, 1)
    case("convolution_1x1", "aten::convolution.default",
         [("input", x), ("weight", w1), ("bias", NONE), ("stride", INTS([1])), ("padding", INTS([0])),
          ("dilation", INTS([1])), ("transposed", B(False)), ("output_padding", INTS([0])), ("groups", I(1))],
         f32(conv2d_ref(d(x), d(w1), None, (1, 1), (0, 0), (0, 0), (1, 1), 1)))
    x1, k1, bb1 = randn(2, 3, 9), randn(2, 3, 3), randn(2)
    ref1 = conv2d_ref(d(x1)[:, :, None, :], d(k1)[:, :, None, :], d(bb1), (1, 2), (0, 1), (0, 1), (1, 1), 1)[:, :, 0, :]
    case("convolution_1d", "aten::convolution.default",
         [("input", x1), ("weight", k1), ("bias", bb1), ("stride", INTS([2])), ("padding", INTS([1])),
          ("dilation", INTS([1])), ("transposed", B(False)), ("output_padding", INTS([0])), ("groups", I(1))], f32(ref1))
    case("conv1d_default", "aten::conv1d.default",
         [("input", x1), ("weight", k1), ("bias", bb1), ("stride", INTS([2])), ("padding", INTS([1]))], f32(ref1))
    ref_same = conv2d_ref(d(x1)[:, :, None, :], d(k1)[:, :, None, :], None, (1, 1), (0, 2), (0, 2), (1, 2), 1)[:, :, 0, :]
    case("conv1d_padding_same_dilated", "aten::conv1d.padding",
         [("input", x1), ("weight", k1), ("bias", NONE), ("padding", S("same")), ("dilation", INTS([2]))], f32(ref_same))
    xu = randn(3, 5, 5)
    case("conv2d_unbatched", "aten::conv2d.default", [("input", xu), ("weight", w), ("bias", b), ("padding", INTS([1]))],
         f32(conv2d_ref(d(xu)[None], d(w), d(b), (1, 1), (1, 1), (1, 1), (1, 1), 1)[0]))
    we = randn(2, 3, 2, 4)
    case("conv2d_padding_same_even_kernel", "aten::conv2d.padding",
         [("input", x), ("weight", we), ("bias", NONE), ("padding", S("same"))],
         f32(conv2d_ref(d(x), d(we), None, (1, 1), (0, 1), (1, 2), (1, 1), 1)))
    xh, wh = randn(1, 2, 5, 5).astype(np.float16), randn(3, 2, 3, 3).astype(np.float16)
    case("conv2d_f16", "aten::conv2d.default", [("input", xh), ("weight", wh)],
         like(conv2d_ref(d(xh), d(wh), None, (1, 1), (0, 0), (0, 0), (1, 1), 1), xh))
    case("convolution_transposed_error", "aten::convolution.default",
         [("input", x), ("weight", w), ("bias", NONE), ("stride", INTS([1])), ("padding", INTS([0])),
          ("dilation", INTS([1])), ("transposed", B(True)), ("output_padding", INTS([0])), ("groups", I(1))],
         error="transposed")
    case("conv2d_channel_error", "aten::conv2d.default", [("input", x), ("weight", randn(4, 2, 3, 3))], error="do not fit")
    # Depthwise (one input channel per group) runs directly: padding, stride, dilation, a channel
    # multiplier, bias, 1-D, 3-D and a transposed input view.
    xd = randn(2, 4, 7, 9)
    wd = randn(4, 1, 3, 3)
    case("conv2d_depthwise_pad_stride", "aten::conv2d.default",
         [("input", xd), ("weight", wd), ("bias", b), ("stride", INTS([2, 1])), ("padding", INTS([1, 2])), ("groups", I(4))],
         f32(conv2d_ref(d(xd), d(wd), d(b), (2, 1), (1, 2), (1, 2), (1, 1), 4)))
    wm = randn(8, 1, 2, 3)
    case("conv2d_depthwise_multiplier_dilation", "aten::conv2d.default",
         [("input", View(xd, {"permute": [0, 1, 3, 2]})), ("weight", wm), ("bias", NONE), ("stride", INTS([1])),
          ("padding", INTS([2, 1])), ("dilation", INTS([2, 3])), ("groups", I(4))],
         f32(conv2d_ref(np.transpose(d(xd), (0, 1, 3, 2)), d(wm), None, (1, 1), (2, 1), (2, 1), (2, 3), 4)))
    case("conv2d_depthwise_pad_past_kernel", "aten::conv2d.default",
         [("input", xd[:, :, :2, :2]), ("weight", wd), ("padding", INTS([3])), ("stride", INTS([3])), ("groups", I(4))],
         f32(conv2d_ref(d(xd[:, :, :2, :2]), d(wd), None, (3, 3), (3, 3), (3, 3), (1, 1), 4)))
    x1d, w1d = randn(1, 3, 10), randn(3, 1, 4)
    case("conv1d_depthwise_same", "aten::conv1d.padding",
         [("input", x1d), ("weight", w1d), ("bias", NONE), ("padding", S("same")), ("groups", I(3))],
         f32(conv2d_ref(d(x1d)[:, :, None, :], d(w1d)[:, :, None, :], None, (1, 1), (0, 1), (0, 2), (1, 1), 3)[:, :, 0, :]))

    p = randn(2, 2, 7, 8)
    v, i = max_pool_ref(d(p), (3, 3), (2, 2), (1, 1), (1, 1), False)
    case("max_pool2d_pad", "aten::max_pool2d.default",
         [("self", p), ("kernel_size", INTS([3, 3])), ("stride", INTS([2, 2])), ("padding", INTS([1]))], f32(v))
    pn = p.copy()
    pn[0, 0, 1, 1] = np.nan
    pn[0, 0, 2, 2] = np.nan
    v, i = max_pool_ref(d(pn), (2, 3), (2, 2), (0, 1), (1, 1), True)
    case("max_pool2d_with_indices_ceil_nan", "aten::max_pool2d_with_indices.default",
         [("self", pn), ("kernel_size", INTS([2, 3])), ("stride", INTS([2, 2])), ("padding", INTS([0, 1])),
          ("dilation", INTS([1])), ("ceil_mode", B(True))], (f32(v), i))
    ties = np.zeros((1, 1, 4, 4), np.float32)
    v, i = max_pool_ref(d(ties), (2, 2), (2, 2), (0, 0), (1, 1), False)
    case("max_pool2d_with_indices_ties_first", "aten::max_pool2d_with_indices.default",
         [("self", ties), ("kernel_size", INTS([2])), ("stride", INTS([]))], (f32(v), i))
    v, _ = max_pool_ref(d(p[0]), (2, 2), (1, 1), (0, 0), (2, 2), False)
    case("max_pool2d_dilation_3d", "aten::max_pool2d.default",
         [("self", p[0]), ("kernel_size", INTS([2])), ("stride", INTS([1])), ("padding", INTS([0])),
          ("dilation", INTS([2]))], f32(v))
    case("max_pool2d_pad_error", "aten::max_pool2d.default",
         [("self", p), ("kernel_size", INTS([2])), ("padding", INTS([2]))], error="half")
    for name, ceil, inc, div in [("include_pad", False, True, None), ("exclude_pad_ceil", True, False, None),
                                 ("divisor", False, True, 5)]:
        args = [("self", p), ("kernel_size", INTS([3, 2])), ("stride", INTS([2, 3])), ("padding", INTS([1, 1])),
                ("ceil_mode", B(ceil)), ("count_include_pad", B(inc))]
        if div:
            args.append(("divisor_override", I(div)))
        case(f"avg_pool2d_{name}", "aten::avg_pool2d.default", args,
             f32(avg_pool_ref(d(p), (3, 2), (2, 3), (1, 1), ceil, inc, div)))
    case("adaptive_avg_pool2d", "aten::adaptive_avg_pool2d.default", [("self", p), ("output_size", INTS([3, 5]))],
         f32(adaptive_avg_ref(d(p), 3, 5)))
    case("adaptive_avg_pool2d_global_3d", "aten::_adaptive_avg_pool2d.default", [("self", p[1]), ("output_size", INTS([1]))],
         f32(adaptive_avg_ref(d(p[1]), 1, 1)))
    pb = as_bf16(randn(1, 2, 4, 4))
    case("adaptive_avg_pool2d_bf16", "aten::adaptive_avg_pool2d.default", [("self", pb), ("output_size", INTS([2, 2]))],
         like(adaptive_avg_ref(d(pb), 2, 2), pb))
    seq = np.ascontiguousarray(p.reshape(p.shape[0], p.shape[1], -1))  # [N, C, L]
    pool1d = lambda v, n: adaptive_avg_ref(v[..., None, :], 1, n)[..., 0, :]  # noqa: E731
    case("adaptive_avg_pool1d_uneven", "aten::adaptive_avg_pool1d.default", [("self", seq), ("output_size", INTS([7]))],
         f32(pool1d(d(seq), 7)))
    case("adaptive_avg_pool1d_global_2d", "aten::adaptive_avg_pool1d.default", [("self", seq[0]), ("output_size", INTS([1]))],
         f32(pool1d(d(seq[0]), 1)))
    case("adaptive_avg_pool1d_transposed", "aten::adaptive_avg_pool1d.default",
         [("self", View(np.ascontiguousarray(np.swapaxes(seq, 1, 2)), {"permute": [0, 2, 1]})), ("output_size", INTS([3]))],
         f32(pool1d(d(seq), 3)))
    case("adaptive_avg_pool1d_rank_error", "aten::adaptive_avg_pool1d.default", [("self", p), ("output_size", INTS([2]))],
         error="2-D or 3-D")


def attention_cases():
    q, k, v = randn(2, 3, 4, 8), randn(2, 3, 5, 8), randn(2, 3, 5, 6)
    case("sdpa_basic", "aten::scaled_dot_product_attention.default", [("query", q), ("key", k), ("value", v)],
         f32(sdpa_ref(d(q), d(k), d(v))))
    case("sdpa_causal_scale", "aten::scaled_dot_product_attention.default",
         [("query", q), ("key", k), ("value", v), ("is_causal", B(True)), ("scale", F(0.3))],
         f32(sdpa_ref(d(q), d(k), d(v), causal=True, scale=0.3)))
    bm = rng.random((4, 5)) > 0.3
    bm[2, :] = False  # a row with nothing to attend to gives zeros
    case("sdpa_bool_mask_full_row", "aten::scaled_dot_product_attention.default",
         [("query", q), ("key", k), ("value", v), ("attn_mask", bm)], f32(sdpa_ref(d(q), d(k), d(v), mask=bm)))
    fm = randn(1, 3, 4, 5)
    case("sdpa_float_mask", "aten::scaled_dot_product_attention.default",
         [("query", q), ("key", k), ("value", v), ("attn_mask", fm)], f32(sdpa_ref(d(q), d(k), d(v), mask=d(fm))))
    qg, kg, vg = randn(1, 4, 3, 8), randn(1, 2, 5, 8), randn(1, 2, 5, 8)
    case("sdpa_gqa", "aten::scaled_dot_product_attention.default",
         [("query", qg), ("key", kg), ("value", vg), ("enable_gqa", B(True))],
         f32(sdpa_ref(d(qg), np.repeat(d(kg), 2, axis=1), np.repeat(d(vg), 2, axis=1))))
    kb = randn(3, 5, 8)
    qb = randn(4, 3, 8)
    case("sdpa_noncontiguous_query", "aten::scaled_dot_product_attention.default",
         [("query", View(qb, {"permute": [1, 0, 2]})), ("key", kb), ("value", kb)],
         f32(sdpa_ref(np.transpose(d(qb), (1, 0, 2)), d(kb), d(kb))))
    qh, kh, vh = (randn(1, 2, 3, 4).astype(np.float16) for _ in range(3))
    case("sdpa_f16", "aten::scaled_dot_product_attention.default", [("query", qh), ("key", kh), ("value", vh)],
         like(sdpa_ref(d(qh), d(kh), d(vh)), qh))
    out, lse = sdpa_ref(d(q), d(k), d(v), causal=True, with_lse=True)
    case("flash_attention_for_cpu_causal_lse", "aten::_scaled_dot_product_flash_attention_for_cpu.default",
         [("query", q), ("key", k), ("value", v), ("dropout_p", F(0.0)), ("is_causal", B(True))], (f32(out), f32(lse)))
    out, lse = sdpa_ref(d(q), d(k), d(v), mask=bm, scale=0.5, with_lse=True)
    case("flash_attention_for_cpu_mask_scale", "aten::_scaled_dot_product_flash_attention_for_cpu.default",
         [("query", q), ("key", k), ("value", v), ("attn_mask", bm), ("scale", F(0.5))], (f32(out), f32(lse)))
    case("sdpa_dropout_error", "aten::scaled_dot_product_attention.default",
         [("query", q), ("key", k), ("value", v), ("dropout_p", F(0.1))], error="dropout")
    case("sdpa_causal_and_mask_error", "aten::scaled_dot_product_attention.default",
         [("query", q), ("key", k), ("value", v), ("attn_mask", bm), ("is_causal", B(True))], error="both")


# ---------------------------------------------------------------------------------------------
# Symbolic values and lists.

def symbolic_cases():
    x = randn(2, 3, 4)
    case("sym_size_negative_dim", "aten::sym_size.int", [("self", x), ("dim", I(-2))], 3)
    case("sym_numel", "aten::sym_numel.default", [("self", x)], 24)
    case("local_scalar_dense_float", "aten::_local_scalar_dense.default", [("self", np.array([2.5], np.float32))], 2.5)
    case("item_int", "aten::item.default", [("self", np.array(-7, np.int16))], -7)
    case("item_bool", "aten::item.default", [("self", np.array(True))], True)
    case("item_two_elements_error", "aten::item.default", [("self", np.zeros(2, np.float32))], error="2 elements")
    case("sym_stride", "aten::sym_stride.int", [("self", View(x, {"permute": [2, 0, 1]})), ("dim", I(0))], 1)
    python_ops = {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "truediv": lambda a, b: a / b,
        "pow": lambda a, b: a ** b,
    }
    operands = [(7, 2), (-7, 2), (7, -2), (-7, -2), (-7.5, 2), (7.5, -2.0), (6, 3), (True, True), (2, -1), (-0.0, 5.0)]
    for op, fn in python_ops.items():
        for n, (a, b) in enumerate(operands):
            if op == "pow" and isinstance(a, float) and a < 0 and not float(b).is_integer():
                continue
            result = fn(a, b)
            args = [("a", I(a) if not isinstance(a, float) else F(a)), ("b", I(b) if not isinstance(b, float) else F(b))]
            if isinstance(a, bool):
                args = [("a", B(a)), ("b", B(b))]
            case(f"operator_{op}_{n}", f"_operator.{op}", args, result)
    for op in ["floordiv", "mod", "truediv"]:
        case(f"operator_{op}_by_zero", f"_operator.{op}", [("a", I(3)), ("b", I(0))], error="by zero")
    case("operator_mul_overflow", "_operator.mul", [("a", I(2 ** 62)), ("b", I(4))], error="overflow")
    for op, fn in {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
                   "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}.items():
        case(f"operator_{op}_int_float", f"_operator.{op}", [("a", I(3)), ("b", F(3.0))], fn(3, 3.0))
        case(f"operator_{op}_ints", f"_operator.{op}", [("a", I(2)), ("b", I(5))], fn(2, 5))
    case("operator_neg", "_operator.neg", [("a", I(5))], -5)
    case("operator_and_bools", "_operator.and_", [("a", B(True)), ("b", B(False))], False)
    case("operator_or_ints", "_operator.or_", [("a", I(5)), ("b", I(2))], 7)
    case("operator_not", "_operator.not_", [("a", I(0))], True)
    case("sym_max_int_float", "torch.sym_max", [("a", I(3)), ("b", F(2.5))], 3)
    case("sym_min_int_float", "torch.sym_min", [("a", I(3)), ("b", F(2.5))], 2.5)
    case("sym_float", "torch.sym_float", [("a", I(3))], 3.0)
    case("sym_not", "torch.sym_not", [("a", B(True))], False)
    case("sym_int_truncates", "torch.sym_int", [("a", F(-2.7))], -2)
    case("math_ceil", "math.ceil", [("x", F(2.1))], 3)
    case("math_floor_negative", "math.floor", [("x", F(-2.1))], -3)
    case("math_trunc", "math.trunc", [("x", F(-2.9))], -2)
    a, b = randn(2), randn(3)
    case("getitem_tensor_list_negative", "_operator.getitem", [("a", TS(a, b)), ("b", I(-1))], b)
    case("getitem_ints", "_operator.getitem", [("a", INTS([4, 5, 6])), ("b", I(1))], 5)
    case("getitem_out_of_range", "_operator.getitem", [("a", TS(a, b)), ("b", I(2))], error="out of range")
    case("assert_scalar_true", "aten::_assert_scalar.default", [("self", B(True)), ("assert_msg", S("ok"))], ())
    case("assert_scalar_false", "aten::_assert_scalar.default", [("self", I(0)), ("assert_msg", S("u0 > 1"))],
         error="u0 > 1")


# ---------------------------------------------------------------------------------------------
# Activations with parameters, scans, any/all, flip, fill (the op sweep of the model zoo).

def softplus_ref(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


def activation_cases():
    x = (randn(3, 7) * 4).astype(np.float32)
    x[0, :4] = [np.nan, -3.0, 3.0, 0.0]
    clip = lambda v, lo, hi: np.where(np.isnan(v), v, np.minimum(np.maximum(v, lo), hi))
    case("hardtanh_default", "aten::hardtanh.default", [("self", x)], f32(clip(d(x), -1, 1)))
    case("hardtanh_bounds", "aten::hardtanh.default", [("self", x), ("min_val", F(-0.5)), ("max_val", I(2))],
         f32(clip(d(x), -0.5, 2)))
    case("relu6_nan", "aten::relu6.default", [("self", x)], f32(clip(d(x), 0, 6)))
    case("hardsigmoid_f32", "aten::hardsigmoid.default", [("self", x)], f32(clip(d(x) / 6 + 0.5, 0, 1)))
    case("hardswish_f32", "aten::hardswish.default", [("self", x)], f32(d(x) * clip(d(x) + 3, 0, 6) / 6))
    case("mish_f32", "aten::mish.default", [("self", x)], f32(d(x) * np.tanh(softplus_ref(d(x)))))
    case("softplus_beta_threshold", "aten::softplus.default", [("self", x), ("beta", F(2.0)), ("threshold", F(1.0))],
         f32(softplus_ref(d(x), 2.0, 1.0)))
    case("leaky_relu_slope", "aten::leaky_relu.default", [("self", x), ("negative_slope", F(0.2))],
         f32(np.where(d(x) > 0, d(x), d(x) * 0.2)))
    case("elu_alpha", "aten::elu.default", [("self", x), ("alpha", F(0.5))],
         f32(np.where(d(x) > 0, d(x), 0.5 * (np.exp(d(x)) - 1))))
    base = randn(4, 3)
    case("hardswish_noncontiguous", "aten::hardswish.default", [("self", View(base, {"permute": [1, 0]}))],
         f32(d(base).T * clip(d(base).T + 3, 0, 6) / 6))
    case("hardsigmoid_empty", "aten::hardsigmoid.default", [("self", np.zeros((0, 3), np.float32))],
         np.zeros((0, 3), np.float32))
    case("hardswish_zero_dim", "aten::hardswish.default", [("self", np.array(1.0, np.float32))], np.float32(4 / 6))
    x64 = randn(5, dtype=np.float64)
    case("mish_f64", "aten::mish.default", [("self", x64)], x64 * np.tanh(softplus_ref(x64)))
    case("hardsigmoid_int_error", "aten::hardsigmoid.default", [("self", randint(0, 3, 4))], error="not supported")


def scan_cases():
    x = randn(3, 5)
    case("cumsum_dim1", "aten::cumsum.default", [("self", x), ("dim", I(1))], f32(np.cumsum(d(x), axis=1)))
    case("cumsum_negative_dim", "aten::cumsum.default", [("self", x), ("dim", I(-2))], f32(np.cumsum(d(x), axis=0)))
    xi = randint(-5, 5, 2, 6, dtype=np.int32)
    case("cumsum_i32_to_i64", "aten::cumsum.default", [("self", xi), ("dim", I(1))],
         np.cumsum(xi.astype(np.int64), axis=1))
    bools = rng.random((2, 5)) > 0.5
    case("cumsum_bool_counts", "aten::cumsum.default", [("self", bools), ("dim", I(1))],
         np.cumsum(bools.astype(np.int64), axis=1))
    case("cumsum_dtype_f64", "aten::cumsum.default", [("self", x), ("dim", I(0)), ("dtype", DT("f64"))],
         np.cumsum(d(x), axis=0))
    base = randn(5, 3)
    case("cumsum_noncontiguous", "aten::cumsum.default", [("self", View(base, {"permute": [1, 0]})), ("dim", I(1))],
         f32(np.cumsum(d(base).T, axis=1)))
    case("cumsum_zero_dim", "aten::cumsum.default", [("self", np.array(2.5, np.float32)), ("dim", I(0))],
         np.float32(2.5))
    case("cumsum_empty", "aten::cumsum.default", [("self", np.zeros((0, 4), np.float32)), ("dim", I(1))],
         np.zeros((0, 4), np.float32))
    xn = randn(2, 4)
    xn[0, 1] = np.nan
    case("cumprod_nan", "aten::cumprod.default", [("self", xn), ("dim", I(1))], f32(np.cumprod(d(xn), axis=1)))
    ci = randint(1, 4, 3, 4)
    case("cumprod_i64", "aten::cumprod.default", [("self", ci), ("dim", I(0))], np.cumprod(ci, axis=0))
    case("cumsum_dim_out_of_range", "aten::cumsum.default", [("self", x), ("dim", I(2))], error="out of range")
    case("diff_default", "aten::diff.default", [("self", x)], f32(np.diff(d(x))))
    case("diff_n2_dim0", "aten::diff.default", [("self", x), ("n", I(2)), ("dim", I(0))], f32(np.diff(d(x), n=2, axis=0)))
    pre, app = randn(3, 1), randn(3, 2)
    case("diff_prepend_append", "aten::diff.default",
         [("self", x), ("n", I(1)), ("dim", I(-1)), ("prepend", pre), ("append", app)],
         f32(np.diff(np.concatenate([d(pre), d(x), d(app)], axis=1))))
    case("diff_bool_is_xor", "aten::diff.default", [("self", bools)], np.diff(bools))
    ints = np.array([3, -7, np.iinfo(np.int64).max, 2], dtype=np.int64)
    case("diff_i64", "aten::diff.default", [("self", ints)], np.diff(ints))
    case("diff_n_exceeds_length", "aten::diff.default", [("self", x), ("n", I(7))], np.zeros((3, 0), np.float32))
    case("diff_zero_dim_error", "aten::diff.default", [("self", np.array(1.0, np.float32))], error="at least one")
    case("diff_prepend_shape_error", "aten::diff.default",
         [("self", x), ("n", I(1)), ("dim", I(1)), ("prepend", randn(2, 1))], error="must match")
    m = rng.random((3, 4)) > 0.6
    m[1] = False
    case("any_dim", "aten::any.dim", [("self", m), ("dim", I(1))], m.any(axis=1))
    case("any_dims_keepdim", "aten::any.dims", [("self", m), ("dim", INTS([0, 1])), ("keepdim", B(True))],
         m.any(axis=(0, 1), keepdims=True))
    case("any_all_default", "aten::any.default", [("self", m)], np.bool_(m.any()))
    case("all_dim_negative", "aten::all.dim", [("self", m), ("dim", I(-2))], m.all(axis=0))
    case("all_default", "aten::all.default", [("self", np.ones((2, 2), np.bool_))], np.bool_(True))
    fl = np.array([[0.0, np.nan], [0.0, 0.0]], dtype=np.float32)
    case("any_float_nan_is_true", "aten::any.dim", [("self", fl), ("dim", I(1))], np.array([True, False]))
    case("all_empty_is_true", "aten::all.dims", [("self", np.zeros((2, 0), np.float32)), ("dim", INTS([1]))],
         np.array([True, True]))
    case("any_empty_is_false", "aten::any.default", [("self", np.zeros((0,), np.int64))], np.bool_(False))
    u8 = np.array([0, 3, 0], dtype=np.uint8)
    case("any_u8_stays_u8", "aten::any.default", [("self", u8)], np.uint8(1))


def flip_fill_cases():
    x = randn(2, 3, 4)
    case("flip_two_dims", "aten::flip.default", [("self", x), ("dims", INTS([0, -1]))], np.flip(x, axis=(0, 2)))
    base = randn(4, 3)
    case("flip_noncontiguous", "aten::flip.default", [("self", View(base, {"permute": [1, 0]})), ("dims", INTS([1]))],
         np.flip(base.T, axis=1))
    case("flip_repeated_dim_error", "aten::flip.default", [("self", x), ("dims", INTS([1, -2]))], error="twice")
    case("fill_scalar", "aten::fill.Scalar", [("self", randint(0, 5, 2, 3, dtype=np.int32)), ("value", I(7))],
         np.full((2, 3), 7, np.int32))
    case("fill_tensor", "aten::fill.Tensor", [("self", x), ("value", np.array(1.5, np.float32))],
         np.full(x.shape, 1.5, np.float32))
    case("zero_f32", "aten::zero.default", [("self", x)], np.zeros(x.shape, np.float32))
    xi = randint(-5, 5, 2, 3, dtype=np.int32)
    case("type_as_int_to_f64", "aten::type_as.default", [("self", xi), ("other", randn(1, dtype=np.float64))],
         xi.astype(np.float64))
    r = randn(2, 3)
    case("repeat_leading_dims", "aten::repeat.default", [("self", r), ("repeats", INTS([2, 1, 3]))], np.tile(r, (2, 1, 3)))
    case("repeat_noncontiguous", "aten::repeat.default", [("self", View(base, {"permute": [1, 0]})), ("repeats", INTS([2, 2]))],
         np.tile(base.T, (2, 2)))
    case("repeat_zero", "aten::repeat.default", [("self", r), ("repeats", INTS([0, 2]))], np.zeros((0, 6), np.float32))
    case("repeat_too_few_error", "aten::repeat.default", [("self", r), ("repeats", INTS([2]))], error="fewer")
    case("repeat_interleave_dim", "aten::repeat_interleave.self_int", [("self", r), ("repeats", I(3)), ("dim", I(-1))],
         np.repeat(r, 3, axis=-1))
    case("repeat_interleave_flattened", "aten::repeat_interleave.self_int", [("self", r), ("repeats", I(2))],
         np.repeat(r, 2))
    case("repeat_interleave_noncontiguous_i64", "aten::repeat_interleave.self_int",
         [("self", View(np.arange(12, dtype=np.int64).reshape(3, 4), {"permute": [1, 0]})), ("repeats", I(2)), ("dim", I(0)),
          ("output_size", I(8))], np.repeat(np.arange(12, dtype=np.int64).reshape(3, 4).T, 2, axis=0))
    case("repeat_interleave_zero", "aten::repeat_interleave.self_int", [("self", r), ("repeats", I(0)), ("dim", I(0))],
         np.repeat(r, 0, axis=0))
    case("repeat_interleave_output_size_error", "aten::repeat_interleave.self_int",
         [("self", r), ("repeats", I(2)), ("dim", I(0)), ("output_size", I(5))], error="output_size")
    # histc, as torch counts (values from torch 2.15 for these inputs).
    hx = np.array([0.0, 1.0, 2.0, 2.0, 3.0, 10.0, -1.0, np.nan], np.float32)
    case("histc_range_ignores_outside_and_nan", "aten::histc.default",
         [("self", hx), ("bins", I(4)), ("min", I(0)), ("max", I(3))], np.array([1, 1, 2, 1], np.float32))
    case("histc_data_range", "aten::histc.default", [("self", hx[:6]), ("bins", I(5))], np.array([2, 3, 0, 0, 1], np.float32))
    case("histc_constant_data_widens", "aten::histc.default", [("self", np.array([2.0, 2.0], np.float32)), ("bins", I(3))],
         np.array([0, 2, 0], np.float32))
    case("histc_edges_in_float", "aten::histc.default",
         [("self", np.array([0.1, 0.2999999, 0.3], np.float32)), ("bins", I(3)), ("min", F(0.0)), ("max", F(0.3))],
         np.array([0, 1, 2], np.float32))
    case("histc_empty", "aten::histc.default", [("self", np.zeros(0, np.float32)), ("bins", I(3))], np.zeros(3, np.float32))
    case("histc_f64", "aten::histc.default", [("self", hx.astype(np.float64)[:6]), ("bins", I(2)), ("min", I(0)), ("max", I(4))],
         np.array([2, 3], np.float64))
    case("histc_nan_range_error", "aten::histc.default", [("self", hx), ("bins", I(4))], error="not finite")
    case("histc_bins_error", "aten::histc.default", [("self", hx), ("bins", I(0))], error="bins must be")
    case("histc_min_max_error", "aten::histc.default", [("self", hx), ("bins", I(3)), ("min", I(3)), ("max", I(0))],
         error="larger than min")
    case("histc_int_error", "aten::histc.default", [("self", np.array([1, 2], np.int64)), ("bins", I(3))],
         error="not supported")
    scatter_pad_cases()


def scatter_pad_cases():
    x = randn(4, 5)
    src = randn(4, 2)
    expected = x.copy()
    expected[:, 1:5:2] = src
    case("slice_scatter_step", "aten::slice_scatter.default",
         [("self", x), ("src", src), ("dim", I(1)), ("start", I(1)), ("end", I(5)), ("step", I(2))], expected)
    case("slice_scatter_shape_error", "aten::slice_scatter.default",
         [("self", x), ("src", randn(4, 3)), ("dim", I(1)), ("start", I(0)), ("end", I(2))], error="shape")
    row = randint(-3, 3, 5, dtype=np.int64)
    expected = x.copy()
    expected[-1] = row
    case("select_scatter_negative_index_converts", "aten::select_scatter.default",
         [("self", x), ("src", row), ("dim", I(0)), ("index", I(-1))], expected)
    case("select_scatter_index_error", "aten::select_scatter.default",
         [("self", x), ("src", randn(5)), ("dim", I(0)), ("index", I(4))], error="out of range")
    case("constant_pad_nd_two_dims", "aten::constant_pad_nd.default",
         [("self", x), ("pad", INTS([1, 2, 0, 1])), ("value", F(-1.5))],
         np.pad(x, ((0, 1), (1, 2)), constant_values=-1.5))
    case("constant_pad_nd_negative_crops", "aten::constant_pad_nd.default",
         [("self", x), ("pad", INTS([-1, 2]))], np.pad(x[:, 1:], ((0, 0), (0, 2))))
    case("constant_pad_nd_odd_error", "aten::constant_pad_nd.default", [("self", x), ("pad", INTS([1]))], error="even")
    img = randn(1, 2, 3, 4)
    for mode, np_mode in (("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")):
        case(f"pad_{mode}", "aten::pad.default", [("self", img), ("pad", INTS([2, 1, 1, 2])), ("mode", S(mode))],
             np.pad(img, ((0, 0), (0, 0), (1, 2), (2, 1)), mode=np_mode))
    case("pad_constant_value", "aten::pad.default",
         [("self", img), ("pad", INTS([1, 1])), ("mode", S("constant")), ("value", F(3.0))],
         np.pad(img, ((0, 0), (0, 0), (0, 0), (1, 1)), constant_values=3.0))
    case("pad_reflect_too_wide_error", "aten::pad.default", [("self", img), ("pad", INTS([4, 0])), ("mode", S("reflect"))],
         error="smaller")
    case("pad_mode_error", "aten::pad.default", [("self", img), ("pad", INTS([1, 1])), ("mode", S("mirror"))], error="mode")
    case("roll_dims", "aten::roll.default", [("self", x), ("shifts", INTS([1, -2])), ("dims", INTS([0, 1]))],
         np.roll(x, (1, -2), axis=(0, 1)))
    case("roll_flattened", "aten::roll.default", [("self", x), ("shifts", INTS([7]))], np.roll(x, 7))
    case("roll_noncontiguous", "aten::roll.default",
         [("self", View(x, {"permute": [1, 0]})), ("shifts", INTS([3])), ("dims", INTS([0]))], np.roll(x.T, 3, axis=0))
    a = np.array([5.5, -5.5, 3.0, -0.0, np.inf], dtype=np.float32)
    case("fmod_scalar_dividend_sign", "aten::fmod.Scalar", [("self", a), ("other", F(2.0))], np.fmod(a, np.float32(2.0)))
    ai = np.array([7, -7, 7, -7], dtype=np.int32)
    bi = np.array([3, 3, -3, -3], dtype=np.int32)
    case("fmod_tensor_int", "aten::fmod.Tensor", [("self", ai), ("other", bi)], np.fmod(ai, bi))
    case("fmod_int_zero_error", "aten::fmod.Tensor", [("self", ai), ("other", np.zeros(4, np.int32))], error="zero")
    # as_strided is relative to the storage, which here is the whole pool: only its bounds check is
    # a golden (kernel_behavior_test checks its values on a storage of its own).
    case("as_strided_out_of_storage_error", "aten::as_strided.default",
         [("self", randn(12)), ("size", INTS([1 << 30])), ("stride", INTS([1]))], error="reaches")


# ---------------------------------------------------------------------------------------------
# Recurrent layers: NumPy references of torch.nn's LSTM, GRU and RNN (gate orders i f g o and r z n).

def rnn_ref(kind, x, hx, params, layers, bidirectional, batch_first, has_biases):
    sig = lambda v: 1 / (1 + np.exp(-v))
    unbatched = x.ndim == 2
    x = d(x)
    if unbatched:
        x = x[:, None, :]
    elif batch_first:
        x = x.transpose(1, 0, 2)
    hx = [d(h) if not unbatched else d(h)[:, None, :] for h in hx]
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    T = x.shape[0]
    hy, cy = np.zeros_like(hx[0]), np.zeros_like(hx[0])
    inp = x
    for layer in range(layers):
        outs = []
        for di in range(dirs):
            p = [d(t) for t in params[per * (layer * dirs + di):per * (layer * dirs + di + 1)]]
            w_ih, w_hh = p[0], p[1]
            b_ih, b_hh = (p[2], p[3]) if has_biases else (0.0, 0.0)
            h = hx[0][layer * dirs + di]
            c = hx[1][layer * dirs + di] if kind == "lstm" else None
            out = [None] * T
            for step in range(T):
                t = step if di == 0 else T - 1 - step
                gx, gh = inp[t] @ w_ih.T + b_ih, h @ w_hh.T + b_hh
                H = h.shape[-1]
                if kind == "lstm":
                    g = gx + gh
                    i, f, gg, o = sig(g[:, :H]), sig(g[:, H:2 * H]), np.tanh(g[:, 2 * H:3 * H]), sig(g[:, 3 * H:])
                    c = f * c + i * gg
                    h = o * np.tanh(c)
                elif kind == "gru":
                    r, z = sig(gx[:, :H] + gh[:, :H]), sig(gx[:, H:2 * H] + gh[:, H:2 * H])
                    n = np.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
                    h = (1 - z) * n + z * h
                elif kind == "tanh":
                    h = np.tanh(gx + gh)
                else:
                    h = np.maximum(gx + gh, 0)
                out[t] = h
            outs.append(np.stack(out))
            hy[layer * dirs + di] = h
            if kind == "lstm":
                cy[layer * dirs + di] = c
        inp = np.concatenate(outs, axis=-1)
    out = inp
    if unbatched:
        out, hy, cy = out[:, 0], hy[:, 0], cy[:, 0]
    elif batch_first:
        out = out.transpose(1, 0, 2)
    return (f32(out), f32(hy), f32(cy)) if kind == "lstm" else (f32(out), f32(hy))


def rnn_params(kind, in_size, hidden, layers, dirs, has_biases):
    gates = {"lstm": 4, "gru": 3}.get(kind, 1)
    params = []
    for layer in range(layers):
        for _ in range(dirs):
            size = in_size if layer == 0 else hidden * dirs
            params += [randn(gates * hidden, size) * 0.5, randn(gates * hidden, hidden) * 0.5]
            if has_biases:
                params += [randn(gates * hidden) * 0.5, randn(gates * hidden) * 0.5]
    return params


def rnn_cases():
    configs = [  # name, kind, layers, bidirectional, batch_first, has_biases, unbatched
        ("lstm_2layer_bidir_batch_first", "lstm", 2, True, True, True, False),
        ("lstm_no_bias", "lstm", 1, False, False, False, False),
        ("gru_2layer_bidir", "gru", 2, True, False, True, False),
        ("gru_unbatched", "gru", 1, False, False, True, True),
        ("rnn_tanh_batch_first", "tanh", 2, False, True, True, False),
        ("rnn_relu_bidir_no_bias", "relu", 1, True, False, False, False),
    ]
    in_size, hidden, T, Bn = 3, 4, 5, 2
    for name, kind, layers, bidir, batch_first, has_biases, unbatched in configs:
        dirs = 2 if bidir else 1
        shape = (T, in_size) if unbatched else ((Bn, T, in_size) if batch_first else (T, Bn, in_size))
        x = randn(*shape)
        state = (layers * dirs, hidden) if unbatched else (layers * dirs, Bn, hidden)
        hx = [randn(*state) for _ in range(2 if kind == "lstm" else 1)]
        params = rnn_params(kind, in_size, hidden, layers, dirs, has_biases)
        target = {"lstm": "aten::lstm.input", "gru": "aten::gru.input", "tanh": "aten::rnn_tanh.input",
                  "relu": "aten::rnn_relu.input"}[kind]
        args = [("input", x), ("hx", TS(*hx) if kind == "lstm" else hx[0]), ("params", TS(*params)),
                ("has_biases", B(has_biases)), ("num_layers", I(layers)), ("dropout", F(0.0)), ("train", B(False)),
                ("bidirectional", B(bidir)), ("batch_first", B(batch_first))]
        case(name, target, args, rnn_ref(kind, x, hx, params, layers, bidir, batch_first, has_biases), tol=SUM_TOL)
    x = randn(T, Bn, in_size)
    params = rnn_params("gru", in_size, hidden, 1, 1, True)
    case("gru_state_shape_error", "aten::gru.input",
         [("input", x), ("hx", randn(2, Bn, hidden)), ("params", TS(*params)), ("has_biases", B(True)),
          ("num_layers", I(1)), ("dropout", F(0.0)), ("train", B(False)), ("bidirectional", B(False)),
          ("batch_first", B(False))], error="hidden state")
    case("gru_training_dropout_error", "aten::gru.input",
         [("input", x), ("hx", randn(1, Bn, hidden)), ("params", TS(*params)), ("has_biases", B(True)),
          ("num_layers", I(1)), ("dropout", F(0.5)), ("train", B(True)), ("bidirectional", B(False)),
          ("batch_first", B(False))], error="dropout")


# ---------------------------------------------------------------------------------------------
# Ordering: sort, topk (torch's order: NaN largest, equal values in index order).

def ordered_ref(x, axis, descending, k=None):
    """Values and int64 indices of each line of x along axis in torch's order, the first k."""
    moved = np.moveaxis(np.asarray(logical(x)), axis, -1)
    n = moved.shape[-1]
    k = n if k is None else k
    values = np.empty(moved.shape[:-1] + (k,), dtype=moved.dtype)
    indices = np.empty(moved.shape[:-1] + (k,), dtype=np.int64)
    for pos in np.ndindex(*moved.shape[:-1]):
        line = moved[pos]

        def key(i):
            v = line[i]
            nan = bool(np.isnan(v)) if np.issubdtype(line.dtype, np.floating) else False
            if descending:
                return (0 if nan else 1, 0.0 if nan else -float(v), i)
            return (1 if nan else 0, 0.0 if nan else float(v), i)

        order = sorted(range(n), key=key)[:k]
        values[pos] = line[order]
        indices[pos] = order
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


def ordering_cases():
    x = np.array([[3.0, np.nan, 1.0, 3.0, -2.0, 0.5], [np.nan, 2.0, 2.0, np.nan, -1.0, 7.0]], np.float32)
    for descending in (False, True):
        v, i = ordered_ref(x, 1, descending)
        case("sort_nan_ties_%s" % ("descending" if descending else "ascending"), "aten::sort.default",
             [("self", x), ("dim", I(-1)), ("descending", B(descending))], (v, i), tol=EXACT)
    v, i = ordered_ref(x, 0, False)
    case("sort_stable_dim0", "aten::sort.stable", [("self", x), ("stable", B(True)), ("dim", I(0))], (v, i), tol=EXACT)
    t = randint(-3, 3, 4, 5, dtype=np.int64)
    v, i = ordered_ref(t.T, 1, True)
    case("sort_int64_transposed_view", "aten::sort.default",
         [("self", View(t, {"permute": [1, 0]})), ("dim", I(1)), ("descending", B(True))], (v, i), tol=EXACT)
    r = randn(3, 7)
    for largest in (True, False):
        v, i = ordered_ref(r, 1, largest, 3)
        case("topk_%s" % ("largest" if largest else "smallest"), "aten::topk.default",
             [("self", r), ("k", I(3)), ("dim", I(-1)), ("largest", B(largest))], (v, i), tol=EXACT)
    v, i = ordered_ref(x, 1, True, 2)
    case("topk_nan_is_largest", "aten::topk.default", [("self", x), ("k", I(2))], (v, i), tol=EXACT)
    bf = as_bf16(randn(2, 6))
    v, i = ordered_ref(bf, 1, True, 4)
    case("topk_bf16", "aten::topk.default", [("self", bf), ("k", I(4))], (as_bf16(v), i), tol=EXACT)
    v, i = ordered_ref(r, 0, True, 0)
    case("topk_k_zero", "aten::topk.default", [("self", r), ("k", I(0)), ("dim", I(0))], (v, i), tol=EXACT)
    case("topk_k_too_large", "aten::topk.default", [("self", r), ("k", I(8))], error="out of range")


# ---------------------------------------------------------------------------------------------
# Bilinear resampling (torch's upsample_bilinear2d rule).

def bilinear_ref(x, out_h, out_w, align_corners, scale_h=None, scale_w=None):
    x = np.asarray(x, np.float64)
    H, W = x.shape[-2:]

    def taps(n_in, n_out, scale):
        if align_corners:
            step = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            step = 1.0 / scale if scale else n_in / n_out
        o = np.arange(n_out, dtype=np.float64)
        src = step * o if align_corners else np.maximum(step * (o + 0.5) - 0.5, 0.0)
        lo = np.floor(src).astype(np.int64)
        hi = np.where(lo < n_in - 1, lo + 1, lo)
        return lo, hi, src - lo

    y0, y1, wy = taps(H, out_h, scale_h)
    x0, x1, wx = taps(W, out_w, scale_w)
    top = x[..., y0, :][..., x0] * (1 - wx) + x[..., y0, :][..., x1] * wx
    bottom = x[..., y1, :][..., x0] * (1 - wx) + x[..., y1, :][..., x1] * wx
    return top * (1 - wy)[:, None] + bottom * wy[:, None]


def upsample_cases():
    x = randn(2, 3, 4, 5)
    for align in (False, True):
        case("upsample_bilinear2d_size_align_%s" % str(align).lower(), "aten::upsample_bilinear2d.vec",
             [("input", x), ("output_size", INTS([7, 10])), ("align_corners", B(align)), ("scale_factors", NONE)],
             f32(bilinear_ref(x, 7, 10, align)))
    case("upsample_bilinear2d_scale_factors", "aten::upsample_bilinear2d.vec",
         [("input", x), ("output_size", NONE), ("align_corners", B(False)), ("scale_factors", FLOATS([1.5, 0.7]))],
         f32(bilinear_ref(x, 6, 3, False, 1.5, 0.7)))
    case("upsample_bilinear2d_downsample", "aten::upsample_bilinear2d.vec",
         [("input", View(x, {"permute": [0, 1, 3, 2]})), ("output_size", INTS([2, 3])), ("align_corners", B(False)),
          ("scale_factors", NONE)],
         f32(bilinear_ref(np.transpose(x, (0, 1, 3, 2)), 2, 3, False)))
    xd = x.astype(np.float64)
    case("upsample_bilinear2d_default_f64_scales", "aten::upsample_bilinear2d.default",
         [("self", xd), ("output_size", INTS([8, 10])), ("align_corners", B(False)), ("scales_h", F(2.0)), ("scales_w", F(2.0))],
         bilinear_ref(xd, 8, 10, False, 2.0, 2.0))
    case("upsample_bilinear2d_rank_error", "aten::upsample_bilinear2d.vec",
         [("input", randn(3, 4, 5)), ("output_size", INTS([2, 2])), ("align_corners", B(False)), ("scale_factors", NONE)],
         error="4-D")
    case("upsample_bilinear2d_both_error", "aten::upsample_bilinear2d.vec",
         [("input", x), ("output_size", INTS([2, 2])), ("align_corners", B(False)), ("scale_factors", FLOATS([2.0, 2.0]))],
         error="not both")


# ---------------------------------------------------------------------------------------------
# Video and attention-style models: conv3d, adaptive_avg_pool3d, index_put, einsum.

def conv3d_ref(x, w, b, stride, pad, dilation, groups):
    """pad: per spatial dim, one amount for both sides or a (begin, end) pair."""
    oc, cg, kd, kh, kw = w.shape
    pairs = [p if isinstance(p, tuple) else (p, p) for p in pad]
    xp = np.pad(x, [(0, 0), (0, 0)] + pairs)
    od, oh, ow = ((xp.shape[2 + i] - dilation[i] * (w.shape[2 + i] - 1) - 1) // stride[i] + 1 for i in range(3))
    out = np.zeros((x.shape[0], oc, od, oh, ow))
    og = oc // groups
    for o in range(oc):
        g = o // og
        for z in range(od):
            for i in range(oh):
                for j in range(ow):
                    patch = xp[:, g * cg:(g + 1) * cg,
                               z * stride[0]:z * stride[0] + dilation[0] * (kd - 1) + 1:dilation[0],
                               i * stride[1]:i * stride[1] + dilation[1] * (kh - 1) + 1:dilation[1],
                               j * stride[2]:j * stride[2] + dilation[2] * (kw - 1) + 1:dilation[2]]
                    out[:, o, z, i, j] = np.sum(patch * w[o], axis=(1, 2, 3, 4))
    if b is not None:
        out += b.reshape(1, -1, 1, 1, 1)
    return out


def adaptive_avg3d_ref(x, od, oh, ow):
    *lead, D, H, W = x.shape
    vols = x.reshape(-1, D, H, W)
    out = np.zeros((vols.shape[0], od, oh, ow))
    win = lambda i, n, o: ((i * n) // o, -((-(i + 1) * n) // o))  # noqa: E731
    for z in range(od):
        z0, z1 = win(z, D, od)
        for i in range(oh):
            y0, y1 = win(i, H, oh)
            for j in range(ow):
                x0, x1 = win(j, W, ow)
                out[:, z, i, j] = vols[:, z0:z1, y0:y1, x0:x1].mean(axis=(1, 2, 3))
    return out.reshape(*lead, od, oh, ow)


def index_put_ref(x, indices, values, accumulate):
    """NumPy's advanced assignment: np.add.at counts duplicates; plain assignment keeps the last."""
    out = np.array(x, copy=True)
    key = tuple(slice(None) if i is None else i for i in indices)
    if accumulate:
        np.add.at(out, key, values)
    else:
        out[key] = values
    return out


def video_einsum_cases():
    x, w, b = randn(2, 3, 5, 6, 4), randn(4, 3, 3, 2, 3), randn(4)
    conv_args = lambda stride, pad, dil, groups: [("stride", INTS(stride)), ("padding", INTS(pad)),  # noqa: E731
                                                  ("dilation", INTS(dil)), ("groups", I(groups))]
    case("conv3d_stride_pad_bias", "aten::conv3d.default", [("input", x), ("weight", w), ("bias", b)] + conv_args([1, 2, 1], [1, 0, 1], [1], 1),
         f32(conv3d_ref(d(x), d(w), d(b), (1, 2, 1), (1, 0, 1), (1, 1, 1), 1)))
    xg, wg = randn(1, 4, 4, 5, 5), randn(6, 2, 2, 2, 2)
    case("conv3d_groups_dilation", "aten::conv3d.default", [("input", xg), ("weight", wg), ("bias", NONE)] + conv_args([1], [0], [1, 2, 2], 2),
         f32(conv3d_ref(d(xg), d(wg), None, (1, 1, 1), (0, 0, 0), (1, 2, 2), 2)))
    w1 = randn(5, 3, 1, 1, 1)
    case("convolution_3d_pointwise", "aten::convolution.default",
         [("input", x), ("weight", w1), ("bias", NONE), ("stride", INTS([1])), ("padding", INTS([0])), ("dilation", INTS([1])),
          ("transposed", B(False)), ("output_padding", INTS([0])), ("groups", I(1))],
         f32(conv3d_ref(d(x), d(w1), None, (1, 1, 1), (0, 0, 0), (1, 1, 1), 1)))
    case("conv3d_unbatched_transposed_view", "aten::conv3d.default",
         [("input", View(x[0], {"permute": [0, 1, 3, 2]})), ("weight", w), ("bias", b), ("padding", INTS([1]))],
         f32(conv3d_ref(d(np.transpose(x[0], (0, 1, 3, 2)))[None], d(w), d(b), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1)[0]))
    xd, wd = x.astype(np.float64), w.astype(np.float64)
    case("conv3d_f64", "aten::conv3d.default", [("input", xd), ("weight", wd), ("bias", NONE), ("stride", INTS([2]))],
         conv3d_ref(xd, wd, None, (2, 2, 2), (0, 0, 0), (1, 1, 1), 1), tol={"rtol": 1e-10, "atol": 1e-10})
    case("conv3d_padding_same_even_kernel", "aten::conv3d.padding", [("input", x), ("weight", w), ("bias", NONE), ("padding", S("same"))],
         f32(conv3d_ref(d(x), d(w), None, (1, 1, 1), ((1, 1), (0, 1), (1, 1)), (1, 1, 1), 1)))
    wd3 = randn(3, 1, 2, 3, 2)
    case("conv3d_depthwise", "aten::conv3d.default",
         [("input", x[:1]), ("weight", wd3), ("bias", NONE), ("stride", INTS([1, 2, 1])), ("padding", INTS([1])), ("groups", I(3))],
         f32(conv3d_ref(d(x[:1]), d(wd3), None, (1, 2, 1), (1, 1, 1), (1, 1, 1), 3)))
    case("conv3d_kernel_too_large", "aten::conv3d.default", [("input", x), ("weight", randn(2, 3, 6, 1, 1))],
         error="larger than")

    v = randn(2, 3, 5, 7, 6)
    case("adaptive_avg_pool3d_uneven", "aten::adaptive_avg_pool3d.default", [("self", v), ("output_size", INTS([2, 3, 4]))],
         f32(adaptive_avg3d_ref(d(v), 2, 3, 4)))
    case("adaptive_avg_pool3d_global_4d", "aten::_adaptive_avg_pool3d.default", [("self", v[0]), ("output_size", INTS([1]))],
         f32(adaptive_avg3d_ref(d(v[0]), 1, 1, 1)))
    case("adaptive_avg_pool3d_upsample_strided", "aten::adaptive_avg_pool3d.default",
         [("self", View(v, {"slice": [4, 0, 6, 2]})), ("output_size", INTS([7, 2, 5]))],
         f32(adaptive_avg3d_ref(d(v[..., ::2]), 7, 2, 5)))
    case("adaptive_avg_pool3d_rank_error", "aten::adaptive_avg_pool3d.default", [("self", v[0, 0]), ("output_size", INTS([1]))],
         error="4-D or 5-D")

    t = randn(4, 3, 5)
    rows = np.array([1, 3, 1, -1], dtype=np.int64)
    vals = randn(4, 5)
    case("index_put_accumulate_duplicates", "aten::index_put.default",
         [("self", t), ("indices", OTS(rows, np.array([0, 2, 0, 2], dtype=np.int64))), ("values", vals), ("accumulate", B(True))],
         index_put_ref(t, [rows, np.array([0, 2, 0, 2])], vals, True))
    case("index_put_broadcast_values_last_wins", "aten::index_put.default",
         [("self", t), ("indices", OTS(None, np.array([[2], [0]], dtype=np.int32), np.array([4, 1], dtype=np.int64))),
          ("values", np.array([7.0, -1.0], np.float32))],
         index_put_ref(t, [None, np.array([[2], [0]]), np.array([4, 1])], np.array([7.0, -1.0], np.float32), False))
    case("unsafe_index_put_non_adjacent", "aten::_unsafe_index_put.default",
         [("self", t), ("indices", OTS(np.array([0, 2], dtype=np.int64), None, np.array([1, 1], dtype=np.int64))),
          ("values", randn(2, 3)[:, :1] * 0 + np.float32(2.5)), ("accumulate", B(True))],
         index_put_ref(t, [np.array([0, 2]), None, np.array([1, 1])], np.full((2, 1), 2.5, np.float32), True))
    mask = t[:, :, 0] > 0
    case("index_put_bool_mask", "aten::index_put.default",
         [("self", t), ("indices", OTS(mask)), ("values", np.array([0.5], np.float32))],
         index_put_ref(t, [mask], np.float32(0.5), False))
    ti = randint(-5, 5, 3, 4, dtype=np.int64)
    vi = randint(-3, 3, 3, 4)
    case("index_put_int64_accumulate", "aten::index_put.default",
         [("self", ti), ("indices", OTS(np.array([2, 2, 0], dtype=np.int64))), ("values", vi), ("accumulate", B(True))],
         index_put_ref(ti, [np.array([2, 2, 0])], vi, True))
    tb = as_bf16(randn(3, 2))
    vb = as_bf16(randn(2))
    case("index_put_bf16", "aten::index_put.default", [("self", tb), ("indices", OTS(np.array([1], dtype=np.int64))), ("values", vb)],
         as_bf16(index_put_ref(logical(tb), [np.array([1])], logical(vb), False)))
    case("index_put_out_of_range", "aten::index_put.default",
         [("self", t), ("indices", OTS(np.array([4], dtype=np.int64))), ("values", vals[0])], error="out of range")
    case("index_put_values_shape_error", "aten::index_put.default",
         [("self", t), ("indices", OTS(np.array([1], dtype=np.int64))), ("values", randn(2, 3, 5))], error="do not broadcast")
    case("index_put_dtype_error", "aten::index_put.default",
         [("self", t), ("indices", OTS(np.array([1], dtype=np.int64))), ("values", vals[0].astype(np.float64))], error="one dtype")
    case("index_put_mask_shape_error", "aten::index_put.default",
         [("self", t), ("indices", OTS(np.ones((4, 2), np.bool_))), ("values", vals[0])], error="does not match")

    # transformers' grouped expert product: rows [offs[i-1], offs[i]) times weight[i], the rest 0.
    def grouped_ref(x, w, offs):
        out, start = np.zeros((x.shape[0], w.shape[2])), 0
        for e, end in enumerate(offs):
            out[start:end] = d(x[start:end]) @ d(w[e])
            start = end
        return out
    gx, gw = randn(9, 4), randn(3, 5, 4)
    offs = np.array([2, 2, 7], np.int32)
    case("grouped_mm_fallback_empty_group_tail_rows_zero", "transformers::grouped_mm_fallback.default",
         [("input", View(gx, {"slice": [0, 1, 9, 1]})), ("weight", View(gw, {"permute": [0, 2, 1]})), ("offs", offs)],
         f32(grouped_ref(gx[1:], np.transpose(gw, (0, 2, 1)), offs)), tol=SUM_TOL)
    case("grouped_mm_fallback_decreasing_offs_error", "transformers::grouped_mm_fallback.default",
         [("input", gx), ("weight", randn(3, 4, 5)), ("offs", np.array([3, 2, 9], np.int64))], error="non-decreasing")
    case("grouped_mm_fallback_shape_error", "transformers::grouped_mm_fallback.default",
         [("input", gx), ("weight", randn(2, 4, 5)), ("offs", offs)], error="are not")

    a, bm, c = randn(2, 3, 4), randn(4, 5), randn(2, 5, 3)
    sq = randn(3, 3)
    for name, eq, ops, ref_eq in [
        ("matmul", "ij,jk->ik", (a[0], bm), None),
        ("batched_ellipsis_implicit", "...ij,jk", (a, bm), None),
        ("ellipsis_summed", "...ij,jk->ik", (a, bm), None),
        ("spaces_and_batch", "bij , jk -> bik", (a, bm), None),
        ("three_operands", "bij,jk,bkl->bil", (a, bm, c), None),
        ("outer_implicit_upper_first", "Ab,aB", (randn(2, 3), randn(4, 5)), None),
        ("trace", "ii", (sq,), None),
        ("diagonal", "ii->i", (sq,), None),
        ("diagonal_3d", "iij->ji", (randn(3, 3, 2),), None),
        ("transpose", "ij->ji", (a[0],), None),
        ("sum_all", "ijk->", (a,), None),
        ("sum_one_side_label", "ij,jk->i", (a[0], bm), None),
        ("broadcast_size_one", "ij,ij->i", (randn(3, 1), randn(3, 4)), "ij,ij->i"),
        ("ellipsis_broadcast", "...,...->...", (randn(2, 1, 3), randn(4, 1)), None),
        ("attention_scores", "bhqd,bhkd->bhqk", (randn(2, 2, 3, 4), randn(2, 2, 5, 4)), None),
        ("hadamard_reduce", "bn,bn->b", (randn(3, 6), randn(3, 6)), None),
    ]:
        values = list(ops)
        if name == "broadcast_size_one":
            ref = np.einsum("ij,ij->i", *[np.broadcast_to(d(v), (3, 4)) for v in values])
        elif name == "ellipsis_broadcast":
            ref = d(values[0]) * d(values[1])
        elif name == "ellipsis_summed":  # torch sums ellipsis dims the output leaves out (NumPy refuses)
            ref = np.einsum("...ij,jk->...ik", *[d(v) for v in values]).sum(0)
        else:
            ref = np.einsum(eq.replace(" ", ""), *[d(v) for v in values])
        case("einsum_" + name, "aten::einsum.default", [("equation", S(eq)), ("tensors", TS(*ops))], f32(ref), tol=SUM_TOL)
    ai, bi = randint(-4, 4, 2, 3), randint(-4, 4, 3, 2)
    case("einsum_int64", "aten::einsum.default", [("equation", S("ij,jk->ik")), ("tensors", TS(ai, bi))], ai @ bi)
    ah = randn(2, 3).astype(np.float16)
    case("einsum_f16", "aten::einsum.default", [("equation", S("ij->j")), ("tensors", TS(ah))], like(d(ah).sum(0), ah))
    case("einsum_empty_contraction", "aten::einsum.default", [("equation", S("ij,jk->ik")), ("tensors", TS(randn(2, 0), randn(0, 3)))],
         np.zeros((2, 3), np.float32))
    for name, eq, ops, message in [
        ("operand_count_error", "ij->i", (randn(2, 3), randn(2)), "operands"),
        ("subscript_error", "i1", (randn(2),), "[a-zA-Z]"),
        ("repeated_output_error", "ij,jk->ikk", (a[0], bm), "more than once"),
        ("unknown_output_error", "ij,jk->iz", (a[0], bm), "does not appear"),
        ("diagonal_size_error", "ii->i", (randn(2, 3),), "don't match"),
        ("rank_error", "ijk", (randn(2, 3),), "do not match"),
        ("size_error", "ij,jk", (randn(2, 3), randn(4, 2)), "does not broadcast"),
        ("dtype_error", "ij,jk", (randn(2, 3), randn(3, 2, dtype=np.float64)), "one dtype"),
        ("bool_error", "i,i", (np.ones(2, np.bool_), np.ones(2, np.bool_)), "not supported"),
    ]:
        case("einsum_" + name, "aten::einsum.default", [("equation", S(eq)), ("tensors", TS(*ops))], error=message)


def main():
    np.seterr(all="ignore")
    binary_cases()
    unary_cases()
    comparison_cases()
    selection_cases()
    copy_cases()
    reduction_cases()
    arg_reduction_cases()
    softmax_cases()
    normalization_cases()
    linalg_cases()
    view_cases()
    join_split_cases()
    creation_cases()
    indexing_cases()
    conv_pool_cases()
    attention_cases()
    symbolic_cases()
    activation_cases()
    scan_cases()
    flip_fill_cases()
    rnn_cases()
    ordering_cases()
    upsample_cases()
    video_einsum_cases()
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for name, arrays in pools.items():
        np.save(os.path.join(OUT, name + ".npy"), np.concatenate(arrays))
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        # One case per line: small, and diffs stay readable.
        f.write('{"generator":"tests/kernels/make_goldens.py","numpy":"%s","cases":[\n' % np.__version__)
        f.write(",\n".join(json.dumps(c, separators=(",", ":"), allow_nan=False) for c in cases))
        f.write("\n]}\n")
    total = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f"{len(cases)} cases, {len(stored)} arrays in {len(pools)} pools, {total} bytes in {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
