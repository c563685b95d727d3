"""``nn.functional.affine_grid`` and ``grid_sample`` (spatial transformers): the sampling
grid of a batch of affine matrices, and the input sampled at a grid's points, bilinearly
(trilinearly for 5-D inputs) or at the nearest pixel, with torch's padding modes (zeros,
border, reflection) and ``align_corners``. Composed of tensor ops: the taps are gathered by
flat index and weighted, so autograd differentiates with respect to both the input and the
grid."""

from __future__ import annotations

import warnings

from cudalite import _C

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def _sizes(t):
    return "[" + ", ".join(str(n) for n in t.shape) + "]"


def _linspace(n, align_corners, like):
    """torch's linspace_from_neg_one: n points over [-1, 1], shrunk by (n - 1) / n without
    align_corners; one point is 0."""
    from cudalite import linspace, zeros

    if n <= 1:
        return zeros(1, dtype=like.dtype, device=like.device)
    r = linspace(-1, 1, n, dtype=like.dtype, device=like.device)
    return r if align_corners else r * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``) grid of the points ``theta @ [x, y, 1]``
    for the output ``size``; coordinates are normalised to [-1, 1]."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(
                "Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{given}. Got {theta.shape}."
            )
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(
                "Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{given}. Got {theta.shape}."
            )
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {given}."
        )
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    from cudalite import ones, stack

    nd = len(spatial)
    axes = [_linspace(n, align_corners, theta) for n in spatial]  # (D,) H, W
    shape = [int(n) for n in spatial]
    # base[..., 0] runs over W, base[..., 1] over H (, base[..., 2] over D), the last is 1
    comps = []
    for k in range(nd):
        ax = axes[nd - 1 - k]
        view = [1] * nd
        view[nd - 1 - k] = ax.numel()
        comps.append(ax.view(view).expand(shape))
    comps.append(ones(shape, dtype=theta.dtype, device=theta.device))
    base = stack(comps, -1).reshape(1, -1, nd + 1)
    if theta.size(0) != size[0]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{size[0]}, {nd + 1}] but got: [{theta.size(0)}, {theta.size(2)}]."
        )
    grid = base.matmul(theta.transpose(1, 2))  # (N, prod(spatial), nd)
    return grid.view([size[0]] + shape + [nd])


def _reflect(x, twice_low, twice_high):
    """torch's reflect_coordinates: ``x`` reflected into [low, high] (by its halves)."""
    if twice_low == twice_high:
        return x * 0
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    d = (x - lo).abs()
    extra = d.fmod(span)
    flips = (d / span).floor()
    even = flips.fmod(2) == 0
    return (extra + lo).where(even, span - extra + lo)


def _source(coord, size, padding_mode, align_corners):
    """A normalised coordinate as a pixel position, after the padding mode."""
    if align_corners:
        x = (coord + 1) / 2 * (size - 1)
    else:
        x = ((coord + 1) * size - 1) / 2
    if padding_mode == "border":
        x = x.clamp(0, size - 1)
    elif padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        x = x.clamp(0, size - 1)
    return x


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """``input`` ``(N, C, H, W)`` (or ``(N, C, D, H, W)``) sampled at ``grid``'s points
    ``(N, Ho, Wo, 2)`` (x, y in [-1, 1]); the result is ``(N, C, Ho, Wo)``."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if input.device != grid.device:
        raise RuntimeError(
            "grid_sampler(): expected input and grid to be on same device, but input is on "
            f"{input.device} and grid is on {grid.device}"
        )
    d = input.dim()
    if input.size(0) != grid.size(0):
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {_sizes(input)} and grid with sizes {_sizes(grid)}"
        )
    nd = d - 2
    if grid.size(-1) != nd:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {nd} in last dimension, but got grid "
            f"with sizes {_sizes(grid)}"
        )
    for i in range(2, d):
        if input.size(i) == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {_sizes(input)} with dimension {i} being empty"
            )
    if d != grid.dim() or d not in (4, 5):
        kind = "4D" if d == 4 else "5D"
        raise RuntimeError(
            f"grid_sampler(): expected {kind} input and grid with same number of dimensions, "
            f"but got input with sizes {_sizes(input)} and grid with sizes {_sizes(grid)}"
        )
    if mode == "bicubic":
        if nd == 3:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        raise NotImplementedError("grid_sample(mode='bicubic') is not supported by cudalite")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"grid_sampler_{nd}d_cpu\" not implemented for '{input.dtype._short_name}'"
        )
    if input.dtype is not grid.dtype:
        raise RuntimeError(
            f"expected scalar type {input.dtype._short_name} but found {grid.dtype._short_name}"
        )
    n, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])  # (D,) H, W
    out_sp = list(grid.shape[1:-1])
    # pixel positions per spatial dim, in (D,) H, W order; grid's last dim is x, y (, z)
    pos = [_source(grid[..., nd - 1 - k], sizes[k], padding_mode, align_corners) for k in range(nd)]
    flat_in = input.reshape(n, c, -1)
    m = 1
    for o in out_sp:
        m *= o

    def tap(coords):
        """The input at integer ``coords`` (0 outside the input), (N, C, *out)."""
        valid = None
        flat = None
        for k, x in enumerate(coords):
            ok = (x >= 0).logical_and(x <= sizes[k] - 1)
            valid = ok if valid is None else valid.logical_and(ok)
            xi = x.clamp(0, sizes[k] - 1).to(_C.int64)
            flat = xi if flat is None else flat * sizes[k] + xi
        idx = flat.reshape(n, 1, m).expand(n, c, m)
        vals = flat_in.gather(2, idx).reshape([n, c] + out_sp)
        return vals, valid

    if mode == "nearest":
        vals, valid = tap([x.round().detach() for x in pos])
        out = vals.masked_fill(valid.logical_not().unsqueeze(1), 0.0)
        if grid.requires_grad and _C._is_grad_enabled():
            out = out + grid.sum() * 0  # the grid's gradient is zero, as torch's
        return out
    lows = [x.floor().detach() for x in pos]
    fracs = [x - lo for x, lo in zip(pos, lows, strict=True)]
    out = None
    for corner in range(2**nd):
        coords, weight = [], None
        for k in range(nd):
            hi = (corner >> (nd - 1 - k)) & 1
            coords.append(lows[k] + hi)
            w = fracs[k] if hi else 1 - fracs[k]
            weight = w if weight is None else weight * w
        vals, valid = tap(coords)
        # a tap outside the input adds nothing (an exact +0, whatever the clamped value)
        term = (vals * weight.unsqueeze(1)).masked_fill(valid.logical_not().unsqueeze(1), 0.0)
        out = term if out is None else out + term
    return out
