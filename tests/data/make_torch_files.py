"""Writes the torch 2.11 checkpoints that tests/test_serialization.py loads (not a test;
needs torch). Run with the reference interpreter from the repository root:

    $TORCH_PYTHON tests/data/make_torch_files.py

Each ``<name>.pt`` comes with its description in ``torch_files.json``: for every tensor its
type, dtype, shape, strides, storage offset, requires_grad, values and which storage it
views (tensors with the same ``storage`` number share one), for every container its kind and
items, so that the test checks cudalite's load against what torch itself wrote, without
importing torch.
"""

from __future__ import annotations

import collections
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def describe(obj, storages):
    """A JSON-able description of ``obj``; ``storages`` numbers the storages seen so far."""
    if isinstance(obj, torch.Tensor):
        storage = obj.untyped_storage()
        group = storages.setdefault(storage._cdata, len(storages))
        values = obj.detach()
        if values.dtype == torch.bfloat16:
            values = values.float()  # exact: every bfloat16 is a float32
        return {
            "tensor": type(obj).__name__,
            "dtype": str(obj.dtype).removeprefix("torch."),
            "shape": list(obj.shape),
            "stride": list(obj.stride()),
            "offset": obj.storage_offset(),
            "requires_grad": obj.requires_grad,
            "values": values.tolist(),
            "storage": group,
            "storage_nbytes": storage.nbytes(),
        }
    if isinstance(obj, torch.Size):
        return {"size": list(obj)}
    if isinstance(obj, torch.dtype):
        return {"dtype": str(obj).removeprefix("torch.")}
    if isinstance(obj, torch.device):
        return {"device": str(obj)}
    if isinstance(obj, dict):
        items = [[describe(k, storages), describe(v, storages)] for k, v in obj.items()]
        return {"dict": type(obj).__name__, "items": items}
    if isinstance(obj, (list, tuple)):
        return {type(obj).__name__: [describe(v, storages) for v in obj]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"value": obj}
    raise TypeError(f"cannot describe {type(obj)}")


def dtypes():
    floats = [0.0, -1.5, 2.25, 1e-3, 65504.0, -0.0, math.inf, -math.inf, math.nan]
    out = {
        "bool": torch.tensor([True, False, True]),
        "uint8": torch.tensor([0, 1, 127, 255], dtype=torch.uint8),
        "int8": torch.tensor([-128, -1, 0, 127], dtype=torch.int8),
        "int16": torch.tensor([-32768, -1, 0, 32767], dtype=torch.int16),
        "int32": torch.tensor([-(2**31), -1, 0, 2**31 - 1], dtype=torch.int32),
        "int64": torch.tensor([-(2**63), -1, 0, 2**63 - 1], dtype=torch.int64),
    }
    for dt in ("float16", "bfloat16", "float32", "float64"):
        out[dt] = torch.tensor(floats, dtype=getattr(torch, dt))
    out["float32_2d"] = torch.arange(6, dtype=torch.float32).reshape(2, 3) / 4
    return out


def views():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    other = torch.arange(10, dtype=torch.int64)
    return {
        "base": base,
        "slice": base[1:3, 2:5],  # offset 8, strides (6, 1)
        "transposed": base.t(),
        "stepped": base[::2, ::3],
        "row": base[2],
        "element": base[3, 4],  # 0-dim view
        "expanded": other[:1].expand(3, 4),  # stride 0
        "other_tail": other[7:],
        "permuted": torch.arange(24, dtype=torch.float64).reshape(2, 3, 4).permute(2, 0, 1),
        "scalar": torch.tensor(3.5),
        "empty": torch.zeros(0),
        "empty_2d": torch.ones(2, 0, 3, dtype=torch.int32),
        "bf16_view": torch.arange(8, dtype=torch.bfloat16)[2:6],
    }


def linear_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))


def optimizer_state():
    model = linear_model()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.ones(5, 3)).pow(2).sum().backward()
    opt.step()
    return opt.state_dict()


def parameters():
    torch.manual_seed(1)
    w = torch.nn.Parameter(torch.randn(2, 3))
    return {
        "weight": w,
        "frozen": torch.nn.Parameter(torch.ones(3), requires_grad=False),
        "leaf": torch.tensor([1.0, 2.0], requires_grad=True),
        "view_of_param": w.detach()[1],
        "int_param": torch.nn.Parameter(torch.arange(3), requires_grad=False),
    }


def nested():
    t = torch.arange(4, dtype=torch.int16)
    return {
        "ints": [0, -1, 2**40, -(2**70)],
        "floats": (0.5, -2.0, 1e300),
        "strings": ["", "ascii", "ünïcödé"],
        "none": None,
        "flags": [True, False],
        "nested": {"a": [t, (t[1:], {"deep": t[2]})], 3: "int key", (1, 2): "tuple key"},
        "ordered": collections.OrderedDict([("z", 1), ("a", t)]),
        "size": torch.Size([2, 3]),
        "dtype": torch.bfloat16,
        "device": torch.device("cuda", 1),
    }


def save_as_cuda(obj, path):
    """torch.save as if the tensors were on cuda:0 (CPU-only torch: only the tag changes)."""
    original = torch.serialization.location_tag
    torch.serialization.location_tag = lambda storage: "cuda:0"
    try:
        torch.save(obj, path)
    finally:
        torch.serialization.location_tag = original


def main():
    files = {
        "dtypes": dtypes(),
        "views": views(),
        "linear_state_dict": linear_model().state_dict(),
        "adam_state_dict": optimizer_state(),
        "parameters": parameters(),
        "nested": nested(),
        "single_tensor": torch.arange(5, dtype=torch.float32),
    }
    expected = {}
    for name, obj in files.items():
        torch.save(obj, os.path.join(HERE, f"{name}.pt"))
        expected[name] = describe(obj, {})
    cuda_obj = {"weight": torch.arange(6, dtype=torch.float32).reshape(2, 3)}
    save_as_cuda(cuda_obj, os.path.join(HERE, "cuda_tagged.pt"))
    expected["cuda_tagged"] = describe(cuda_obj, {})
    # What cudalite refuses: torch's legacy format, a whole module, dtypes it lacks.
    torch.save(
        torch.ones(2), os.path.join(HERE, "legacy_format.pt"), _use_new_zipfile_serialization=False
    )
    torch.save(linear_model(), os.path.join(HERE, "whole_module.pt"))
    for dt in ("complex64", "uint16"):  # dtypes cudalite does not have
        torch.save(torch.ones(2, dtype=getattr(torch, dt)), os.path.join(HERE, f"{dt}.pt"))
    storage = torch.arange(4, dtype=torch.uint8).untyped_storage()
    torch.save(storage, os.path.join(HERE, "untyped_storage.pt"))
    with open(os.path.join(HERE, "torch_files.json"), "w") as f:
        json.dump({"torch": torch.__version__, "files": expected}, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(expected) + 5} files with torch {torch.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
