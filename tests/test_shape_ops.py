"""tensor_split / hsplit / vsplit / dsplit / split_with_sizes / unsafe_*, tile, ravel, rot90,
fliplr / flipud, narrow_copy, resize, set_ / is_set_to / as_strided_, index_copy,
index_fill, index_put, masked_select / masked_scatter, take / put, take_along_dim,
fill_diagonal_, argwhere, nonzero_static, scatter_reduce, index_reduce, the *_scatter
embeddings, unique / unique_consecutive and the predicates against torch's outcomes
(data/shape_ops_expected.json, generated from shape_ops_cases.py by
gen_shape_ops_expected.py), and their gradients."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cudalite as C
from shape_ops_cases import CASES, inputs, outcome

EXPECTED = json.loads((Path(__file__).parent / "data" / "shape_ops_expected.json").read_text())


def _normalized(out):
    if out[0] == "err":  # cudalite's own types print as cudalite.X where torch's print torch.X
        out = (*out[:2], out[2].replace("cudalite.", "torch."))
    return json.loads(json.dumps(out))  # (as the expectations were stored)


@pytest.mark.parametrize("expr", CASES)
def test_outcome_matches_torch(expr, device):
    assert _normalized(outcome(C, inputs(C, device), expr)) == EXPECTED[expr]
