"""``nn.functional.scaled_dot_product_attention``: on CUDA, float16 / bfloat16 inputs without a
mask or dropout run the fused kernel (FlashAttention-2, kernels/flash_attention.cu), recorded
as one ``ScaledDotProductFlashAttentionBackward0`` node; anything else is composed as torch's
math reference: ``softmax(q @ k.T * scale + bias) @ v`` with a causal or given mask folded
into ``bias``. As torch's math kernel, a query row whose every key is masked gives zeros (not
nan). docs/attention.md says which path runs when."""

from __future__ import annotations

import math

from cudalite import _C, _arg_parser
from cudalite._C import Tensor
from cudalite.autograd.graph import Node, edge, mark
from cudalite.backends.cuda import _sdp

__all__ = ["scaled_dot_product_attention"]

_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
}


def _cname(dt):
    return _NAMES.get(str(dt).rsplit(".", 1)[-1], str(dt))


def _check(query, key, value, attn_mask, dropout_p, is_causal):
    for name, pos, t in (("query", 1, query), ("key", 2, key), ("value", 3, value)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"scaled_dot_product_attention(): argument '{name}' (position {pos}) must be "
                f"Tensor, not {_arg_parser.tp_name(t)}"
            )
    if attn_mask is not None and not isinstance(attn_mask, Tensor):
        raise TypeError(
            "scaled_dot_product_attention(): argument 'attn_mask' (position 4) must be Tensor, "
            f"not {_arg_parser.tp_name(attn_mask)}"
        )
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cname(query.dtype)} key.dtype: {_cname(key.dtype)} and value.dtype: "
            f"{_cname(value.dtype)} instead."
        )
    if attn_mask is not None and attn_mask.dtype not in (_C.bool, query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_cname(attn_mask.dtype)} and  query.dtype: "
            f"{_cname(query.dtype)} instead."
        )
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} "
            "instead."
        )
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    if dropout_p < 0.0 or dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p:g}")


def _repeat_heads(t, groups):
    """Each of ``t``'s heads (dim -3) repeated ``groups`` times in a row (repeat_interleave)."""
    shape = list(t.shape)
    h = shape[-3]
    e = t.unsqueeze(-3).expand(*shape[:-2], groups, *shape[-2:])
    return e.reshape(*shape[:-3], h * groups, *shape[-2:])


def _causal_mask(L, S, device):
    """``True`` on and below the diagonal of an (L, S) matrix (top-left aligned, as
    ``ones(L, S).tril()``), from two aranges instead of tril."""
    from cudalite import arange

    rows = arange(L, device=device).unsqueeze(1)
    return rows >= arange(S, device=device)


# ---- the fused kernel ----

_FLASH_DTYPES = (_C.float16, _C.bfloat16)


def _use_flash(query, key, value, attn_mask, dropout_p):
    """Whether the fused kernel computes this call: CUDA float16 / bfloat16 (B, H, L, D)
    queries over (B, H, S, D) keys and values of the same head dim, no mask, no dropout, a
    head dim the kernel has (32, 64, 96, 128) and the flash backend enabled."""
    if attn_mask is not None or dropout_p > 0.0 or not query.is_cuda:
        return False
    if not _sdp._enabled["flash"] or query.dtype not in _FLASH_DTYPES:
        return False
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        return False
    qs, ks = query.shape, key.shape
    if ks[:2] != qs[:2] or value.shape != ks or ks[3] != qs[3] or qs[2] == 0 or ks[2] == 0:
        return False
    if not (key.is_cuda and value.is_cuda and key.device == query.device == value.device):
        return False
    return _C._flash_attention_supported(query.device.index, qs[3])


class ScaledDotProductFlashAttentionBackward0(Node):
    """The gradients of the three inputs from the fused backward kernel, which recomputes the
    attention weights from the saved log-sum-exp of each row."""

    __slots__ = ("query", "key", "value", "_result", "lse", "is_causal", "scale")
    _saved = ("query", "key", "value", "_result", "lse")

    def apply(self, g):
        dq, dk, dv = _C._flash_attention_backward(
            g, self.query, self.key, self.value, self._result, self.lse, self.is_causal, self.scale
        )
        n = self._next
        return (
            dq if n[0] is not None else None,
            dk if n[1] is not None else None,
            dv if n[2] is not None else None,
        )


def _flash(query, key, value, is_causal, scale):
    out, lse = _C._flash_attention_forward(query, key, value, is_causal, scale)
    if _C._is_grad_enabled() and (query._rg or key._rg or value._rg):
        node = ScaledDotProductFlashAttentionBackward0((edge(query), edge(key), edge(value)))
        node.query, node.key, node.value = query, key, value
        node.lse, node.is_causal, node.scale = lse, is_causal, scale
        node.result = out
        mark(out, node)
    return out


def _no_backend():
    """Every backend switched off (torch raises then); while any is on and the fused kernel
    does not apply, the composition runs."""
    return not any(_sdp._enabled.values())


def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
):
    """Attention of ``query`` (..., L, E) over ``key`` (..., S, E) and ``value``
    (..., S, Ev): ``softmax(query @ key.transpose(-2, -1) * scale + bias) @ value``, with
    ``scale = 1 / sqrt(E)`` by default. A bool ``attn_mask`` keeps the positions where it is
    True; a float one is added to the scores; ``is_causal`` masks keys after each query.
    ``enable_gqa`` repeats each key / value head over a group of query heads.
    ``dropout_p`` drops attention weights (always, as torch's function: pass 0.0 in eval)."""
    _check(query, key, value, attn_mask, dropout_p, is_causal)
    L, S = query.size(-2), key.size(-2)
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3:
        hq, hk = query.size(-3), key.size(-3)
        if hk != hq and hk and hq % hk == 0:
            key = _repeat_heads(key, hq // hk)
            value = _repeat_heads(value, hq // value.size(-3))
    scale_factor = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    if _use_flash(query, key, value, attn_mask, dropout_p):
        return _flash(query, key, value, bool(is_causal), float(scale_factor))
    if _no_backend():
        raise RuntimeError(
            "No viable backend for scaled_dot_product_attention was found. This is likely due "
            "to turning off both the math kernel and the fused kernels."
        )
    scores = query.matmul(key.transpose(-2, -1)) * scale_factor
    keep = None
    if is_causal:
        keep = _causal_mask(L, S, query.device)
    elif attn_mask is not None:
        if attn_mask.dtype is _C.bool:
            keep = attn_mask
        else:
            scores = scores + attn_mask
    if keep is not None:
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    # A causal mask leaves every row a key; with another mask a row may have none: its scores
    # become zeros (finite softmax and gradients) and its weights zeros.
    dead = None
    if attn_mask is not None:
        dead = scores.isneginf().all(-1, keepdim=True)
        scores = scores.masked_fill(dead, 0.0)
    attn = scores.softmax(-1)
    if dead is not None:
        attn = attn.masked_fill(dead, 0.0)
    if dropout_p > 0.0:
        from cudalite.nn.functional import dropout

        attn = dropout(attn, dropout_p, True)
    return attn.matmul(value)
