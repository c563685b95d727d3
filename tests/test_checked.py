"""Argument errors (python/cudalite/_checked.py, Note [Argument errors]): a call that fails is
checked against torch's signatures, and arguments that fit none raise torch's TypeError (or
its RuntimeError for a dimension name); other errors stand. Messages are torch 2.11's."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import warnings

import pytest

import cudalite as C
from conftest import exact
from cudalite import _checked


def err(exc, msg):
    return pytest.raises(exc, match=exact(msg))


@pytest.fixture
def x(device):
    return C.arange(6.0, device=device).reshape(2, 3)


def test_wrong_argument_types_raise_torchs_type_error(x):
    with err(TypeError, "dot(): argument 'tensor' (position 1) must be Tensor, not int"):
        x.dot(5)
    with err(TypeError, "allclose(): argument 'other' (position 1) must be Tensor, not int"):
        x.allclose(5)
    with err(TypeError, "allclose(): argument 'other' (position 2) must be Tensor, not str"):
        C.allclose(x, "a")
    with err(TypeError, "add(): argument 'other' (position 2) must be Tensor, not str"):
        C.add(x, "a")
    with err(TypeError, "matmul(): argument 'other' (position 1) must be Tensor, not list"):
        x.matmul([1, 2])
    with err(
        TypeError,
        "sum() received an invalid combination of arguments - got (float), but expected one of:",
    ):
        x.sum(1.5)
    with err(
        TypeError,
        "max() received an invalid combination of arguments - got (keepdim=str, dim=int, ), "
        "but expected one of:",
    ):
        x.max(dim=0, keepdim="x")
    with err(TypeError, "expected Tensor as element 1 in argument 0, but got int"):
        C.cat([x, 1])


def test_dimension_names_raise_torchs_runtime_error(x):
    with err(RuntimeError, "Name 'a' not found in Tensor[None, None]."):
        x.sum("a")
    with err(RuntimeError, "Name 'a' not found in Tensor[None, None]."):
        x.sum(dim="a")
    with err(RuntimeError, "Name 'x' not found in Tensor[None, None]."):
        C.cat([x], dim="x")
    with err(RuntimeError, "Name 'a' not found in Tensor[None, None]."):
        x.softmax("a")
    with err(
        RuntimeError,
        "all: You passed a dimname (string) to this op in place of a dimension index but it "
        "does not yet support this behavior. Please pass a dimension index to work around this.",
    ):
        x.all("a")
    with err(RuntimeError, "Please look up dimensions by name, got: name = None."):
        x.max(None)


def test_other_errors_stand(x):
    # The arguments fit a signature: the op's own error, not a TypeError.
    with pytest.raises(RuntimeError, match="size of tensor a"):
        x.add(C.ones(4, device=x.device))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sum(5)
    # Arguments that fit no signature never reach the function: torch's TypeError.
    with err(TypeError, "asarray(): argument 'dtype' must be torch.dtype, not str"):
        C.asarray([1], dtype="float")


def test_arguments_that_used_to_crash_the_process(x):
    """A tensor of several elements, or an object whose __index__ raises, as a size or a
    number: a TypeError (or the object's own error), never a crash."""
    with pytest.raises(TypeError):
        x.all(C.ones(2, 3))
    with pytest.raises(TypeError):
        C.zeros(C.ones(2))

    class BadIndex:
        def __index__(self):
            raise ValueError("no index here")

    with pytest.raises(TypeError, match="zeros()"):
        C.zeros(BadIndex())
    with err(TypeError, "add(): argument 'other' (position 1) must be Tensor, not BadIndex"):
        x.add(BadIndex())
    assert x.sum().item() == 15.0  # the process and the tensor are fine


def test_wrappers_look_like_the_functions():
    f = C.Tensor.matmul
    assert f.__name__ == "matmul" and f.__wrapped__ is not None
    assert (
        inspect.signature(C.allclose).parameters.keys()
        == inspect.signature(C.allclose.__wrapped__).parameters.keys()
    )
    assert C.allclose.__doc__ == C.allclose.__wrapped__.__doc__
    a = C.ones(2)
    assert C.Tensor.dot(a, a).item() == 2.0  # called on the class
    bound = a.dot
    assert bound(a).item() == 2.0  # and bound


def test_warnings_point_at_the_callers_line():
    """The wrapper is a C callable: a warning raised inside a wrapped function with
    stacklevel=2 still names the caller (here the read-only NumPy array warning)."""
    code = (
        "import warnings, numpy as np, cudalite as C\n"
        "warnings.simplefilter('always')\n"
        "a = np.ones(3)\n"
        "a.flags.writeable = False\n"
        "C.as_tensor(a)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stderr.startswith("<string>:5: UserWarning"), r.stderr


def test_the_signature_table_covers_the_common_methods():
    index = _checked.signature_index()
    for name in ("sum", "add", "matmul", "view", "reshape", "cat", "where", "to"):
        assert name in index["methods"] or name in index["functions"]
    # It is read lazily: every signature compiles (an unknown type is a ValueError).
    from cudalite import _arg_parser

    data = _checked._signature_data()
    # The index (the table's first line, read at import) names exactly the functions and
    # methods with a signature that takes arguments.
    for kind in ("methods", "functions"):
        takes = {n for n, sigs in data[kind].items() if any(not s.endswith("()") for s in sigs)}
        assert index[kind] == takes
        assert data["index"][kind].split() == sorted(takes)
    assert data["method_texts"].keys() <= data["methods"].keys()
    for table in (data["methods"], data["functions"]):
        for sigs in table.values():
            parser = _arg_parser.Parser(*sigs)
            assert parser.n_signatures == len(sigs)
    with pytest.raises(ValueError, match="unknown parameter type 'Tensr'"):
        _arg_parser.Parser("f(Tensr x)")


CASES = [
    ("x.sum(1.5)", "sum() received an invalid combination of arguments - got (float), but"),
    (
        "x.max(dim=0, keepdim='x')",
        "max() received an invalid combination of arguments - got (keepdim=str, dim=int, ), but",
    ),
    ("x.add(x, alpha='x')", "add(): argument 'alpha' must be Number, not str"),
    ("x.sum('a')", "Name 'a' not found in Tensor[None, None]."),
]


def _messages():
    x = C.ones(2, 3)
    out = []
    for code, _ in CASES:
        try:
            eval(code, {"x": x})
            out.append("no error")
        except Exception as e:
            out.append(str(e))
    return out


def test_messages_with_autograd_armed_and_not():
    """Once a tensor requires grad, autograd's recording methods wrap the methods (Note
    [Arming]): the messages name the arguments as the caller wrote them either way."""
    code = (
        "import cudalite as C, json\n"
        "from test_checked import _messages\n"
        "print(json.dumps(_messages()))\n"
    )
    import json
    import os

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=here, env=env
    )
    unarmed = json.loads(r.stdout)
    C.ones(1, requires_grad=True)  # arms autograd in this process
    armed = _messages()
    for (code, want), a, b in zip(CASES, unarmed, armed, strict=True):
        assert a.startswith(want), (code, a)
        assert b.startswith(want), (code, b)


def test_numpy_keyword_names(x):
    """torch's parser takes axis / keepdims / x / x2 for dim / keepdim / input / other."""
    assert x.sum(axis=0).tolist() == x.sum(dim=0).tolist()
    assert C.sum(x, axis=1).tolist() == [3.0, 12.0]
    assert x.mean(axis=1, keepdims=True).shape == (2, 1)
    assert x.max(axis=1).indices.tolist() == [2, 2]
    assert x.softmax(axis=1).shape == (2, 3)
    assert C.add(x1=x, x2=x).tolist() == (2 * x).tolist()
    with err(
        TypeError,
        "sum() received an invalid combination of arguments - got (foo=int, axis=int, ), but "
        "expected one of:",
    ):
        x.sum(axis=0, foo=1)
    with pytest.raises(TypeError):
        x.sum(0, axis=0)  # the dim twice


def test_semantic_errors_torch_raises(x):
    """Calls torch refuses that cudalite used to accept."""
    with err(TypeError, 'flip() missing 1 required positional arguments: "dims"'):
        x.flip()
    with err(TypeError, 'flip() missing 1 required positional arguments: "dims"'):
        C.flip(x)
    assert x.flip(()).tolist() == x.tolist()
    with err(RuntimeError, "The `+` operator, on a bool tensor is not supported."):
        _ = +(x > 0)
    with err(RuntimeError, "cannot register a hook on a tensor that doesn't require gradient"):
        x.register_post_accumulate_grad_hook(lambda t: None)
    i = C.arange(3, device=x.device)
    kernel = "host_softmax" if x.is_cuda else "softmax_lastdim_kernel_impl"
    with err(NotImplementedError, f"\"{kernel}\" not implemented for 'Long'"):
        i.softmax(0)
    kernel = "host_softmax" if x.is_cuda else "log_softmax_lastdim_kernel_impl"
    with err(NotImplementedError, f"\"{kernel}\" not implemented for 'Long'"):
        C.log_softmax(i, 0)
    assert i.softmax(0, dtype=C.float32).shape == (3,)


def test_flags_must_be_bools_and_dims_ints(x):
    """torch's parser takes only True/False for a bool and no bool for an int."""
    with err(
        TypeError,
        "sum() received an invalid combination of arguments - got (int, float), but expected "
        "one of:",
    ):
        x.sum(0, 1.5)
    with err(TypeError, "argmax(): argument 'keepdim' (position 2) must be bool, not float"):
        x.argmax(0, 1.5)
    with err(TypeError, "amax(): argument 'keepdim' (position 2) must be bool, not float"):
        x.amax(0, 1.5)
    with err(
        TypeError,
        "max() received an invalid combination of arguments - got (bool), but expected one of:",
    ):
        x.max(True)
    assert x.max(0, True).values.shape == (1, 3)
    with err(TypeError, "float() takes 1 positional argument but 2 were given"):
        x.float(None)  # memory_format is keyword-only


def test_size_and_stride_arguments(x):
    with err(
        TypeError,
        "size() received an invalid combination of arguments - got (float), but expected one of:",
    ):
        x.size(1.5)
    with err(
        TypeError,
        "stride() received an invalid combination of arguments - got (list), but expected one of:",
    ):
        x.stride([1])
    with err(RuntimeError, "Name 'a' not found in Tensor[None, None]."):
        x.size("a")
    assert x.size(-1) == 3 and x.stride(0) == 3


def test_pybind_methods_word_errors_as_torch(x):
    """The C++ methods' own argument errors (pybind11's list of C++ types) become torch's."""
    with err(TypeError, "unsqueeze(): argument 'dim' (position 1) must be int, not str"):
        x.unsqueeze("a")
    with err(TypeError, "flatten(): argument 'start_dim' (position 1) must be int, not float"):
        x.flatten(1.5)
    with err(
        TypeError,
        "transpose() received an invalid combination of arguments - got (int), but expected "
        "one of:",
    ):
        x.transpose(0)
    with err(
        TypeError,
        "expand(): argument 'size' failed to unpack the object at pos 2 with error \"type must "
        'be tuple of ints,but got str"',
    ):
        x.expand(2, "a")
    with err(
        TypeError,
        "view(): argument 'size' failed to unpack the object at pos 2 with error \"type must be "
        'tuple of ints,but got float"',
    ):
        x.view(2, 1.5)
    assert x.transpose(0, 1).shape == (3, 2) and x.unsqueeze(0).shape == (1, 2, 3)


def test_a_list_shape_that_does_not_fit(x):
    # The signature check reads a list as a shape, not as a dtype (a list cannot be hashed).
    with err(RuntimeError, "shape '[0, 1]' is invalid for input of size 6"):
        x.view([0, 1])


def test_objects_that_break_checks_fit_nothing(x):
    """An argument whose comparisons raise is simply not of the type checked for."""

    class Weird:
        def __eq__(self, other):
            raise ValueError("no comparing")

        __hash__ = None

    with err(TypeError, "dot(): argument 'tensor' (position 1) must be Tensor, not Weird"):
        x.reshape(-1).dot(Weird())
    with pytest.raises(TypeError, match=r"^sum\(\) received an invalid combination"):
        x.sum(Weird())


def test_calls_torch_accepts(x):
    """Overloads found missing by comparing with torch's signatures."""
    y = C.zeros(2, 3, device=x.device)
    assert y.copy_(1.5).tolist() == [[1.5] * 3] * 2  # copy_(Number)
    i8 = C.ones(2, dtype=C.int8, device=x.device)
    assert i8.copy_(300).tolist() == [44, 44]  # converted as a copy converts (torch: the same)
    with err(TypeError, "copy_(): argument 'other' (position 1) must be Tensor, not str"):
        y.copy_("a")
    with err(TypeError, "copy_(): argument 'non_blocking' (position 2) must be bool, not int"):
        y.copy_(x, 3)
    assert x.norm(None).item() == pytest.approx(x.norm().item())
    with err(RuntimeError, "linalg.matrix_norm: Order a not supported."):
        x.norm("a")
    assert x.broadcast_to(2, 3).shape == x.broadcast_to((2, 3)).shape == (2, 3)


def test_split_sizes_are_checked_as_torchs_split_with_sizes(x):
    with err(
        TypeError,
        "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not Tensor",
    ):
        x.split(C.ones(2, device=x.device))
    with err(
        TypeError,
        "split_with_sizes(): argument 'split_sizes' failed to unpack the object at pos 2 with "
        'error "type must be tuple of ints,but got str"',
    ):
        x.split([1, "a"])
    with err(
        TypeError,
        "split() received an invalid combination of arguments - got (Tensor, bool, int), but "
        "expected one of:",
    ):
        x.split(True)
    assert [t.shape for t in x.split((1, 1))] == [(1, 3), (1, 3)]


def test_flags_take_only_bools(x):
    with err(
        TypeError,
        "var() received an invalid combination of arguments - got (unbiased=int, ), but expected "
        "one of:",
    ):
        x.var(unbiased=1)
    with err(TypeError, "nonzero(): argument 'as_tuple' must be bool, not int"):
        x.nonzero(as_tuple=1)
    assert x.var(0, True, True).shape == (1, 3)
    if x.device.type == "cpu":
        with err(TypeError, "numpy(): argument 'force' must be bool, not int"):
            x.numpy(force=1)


def test_wrappers_print_and_pickle_like_functions():
    import functools
    import pickle

    assert repr(C.allclose).startswith("<function allclose at ")
    assert repr(C.Tensor.dim) == "<method 'dim' of 'Tensor' objects>"  # a C++ method
    assert repr(C.ones(2).dim).startswith("<bound method Tensor.dim of tensor(")
    assert pickle.loads(pickle.dumps(C.allclose)) is C.allclose
    assert pickle.loads(pickle.dumps(C.Tensor.matmul)) is C.Tensor.matmul
    clamp0 = pickle.loads(pickle.dumps(functools.partial(C.clamp, min=0)))
    assert clamp0(C.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]


def test_deprecated_scalar_first_overloads(x):
    """torch's deprecated argument orders (Note [Deprecated overloads]) compute what the new
    order does; arguments that fit neither get torch's errors, without the deprecated ones."""
    y = C.ones(2, 3, device=x.device)
    m, a, b = (C.full((2, 2), v, device=x.device) for v in (1.0, 2.0, 3.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert x.add(2, y).tolist() == (x + 2).tolist() == C.add(x, 2, y).tolist()
        assert x.sub(2, y).tolist() == (x - 2).tolist() == C.sub(x, 2, y).tolist()
        assert x.add(2, other=y).tolist() == (x + 2).tolist()
        assert C.add(x, 2, 3).tolist() == (x + 6).tolist() and x.sub_(1, 2) is x
        out = C.empty(2, 3, device=x.device)
        assert C.sub(x, 2, y, out=out) is out and out.tolist() == (x - 2).tolist()
        z = x.clone()
        assert z.add_(-0.5, y) is z and z.tolist() == (x - 0.5).tolist()
        assert C.addmm(2, m, 3, a, b).tolist() == [[38.0] * 2] * 2 == m.addmm(2, 3, a, b).tolist()
        assert C.addmm(2, m, a, b).tolist() == [[14.0] * 2] * 2 == m.addmm(2, a, b).tolist()
        w = C.ones(2, 3, device=x.device, requires_grad=True)
        x.add(3, w).sum().backward()
        assert w.grad.tolist() == [[3.0] * 3] * 2
        with pytest.raises(RuntimeError, match="must match the size of tensor b"):
            x.add(2, C.ones(4, device=x.device))
        with err(RuntimeError, "result type Float can't be cast to the desired output type Long"):
            C.ones(2, dtype=C.int64, device=x.device).add_(2, C.ones(2, device=x.device))
    with err(TypeError, "add() takes 1 positional argument but 2 were given"):
        x.add(2, "a")
    with err(TypeError, "sub() takes 1 positional argument but 2 were given"):
        x.sub(y, 2)
    with err(TypeError, "add() takes 2 positional arguments but 3 were given"):
        C.add(x, y, 2)
    with pytest.raises(TypeError, match=r"^add_\(\) received an invalid combination of arg"):
        x.add_()


def test_deprecated_overload_warns_once_as_torch():
    code = (
        "import warnings, cudalite as C\n"
        "warnings.simplefilter('always')\n"
        "x = C.ones(2)\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    x.add(2, x); x.sub_(2, x); C.add(x, 2, x)\n"
        "print(len(w), w[0].category.__name__, w[0].filename, repr(str(w[0].message)))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    msg = (
        "This overload of add is deprecated:\\n\\tadd(Number alpha, Tensor other)\\nConsider "
        "using one of the following signatures instead:\\n\\tadd(Tensor other, *, Number alpha "
        "= 1)"
    )
    assert r.stdout.strip() == f"1 UserWarning <string> '{msg}'"


def test_invalid_combination_lists_torchs_overloads(x, monkeypatch):
    """The whole "invalid combination" message: torch's texts of the overloads, and under
    those whose argument count fits, why they did not match (torch's matching, quirks
    included: csrc/bindings/arg_parser.cpp). Messages are torch 2.11's."""
    head = "received an invalid combination of arguments - got"
    with err(
        TypeError,
        f"sum() {head} (int, dim=int), but expected one of:\n"
        " * (*, torch.dtype dtype = None)\n"
        "      didn't match because some of the keywords were incorrect: dim\n"
        " * (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)\n"
        " * (tuple of names dim, bool keepdim = False, *, torch.dtype dtype = None)\n",
    ):
        x.sum(0, dim=0)
    with err(
        TypeError,
        f"view() {head} (shape=tuple, ), but expected one of:\n"
        " * (torch.dtype dtype)\n"
        "      didn't match because some of the keywords were incorrect: shape\n"
        " * (tuple of ints size)\n"
        "      didn't match because some of the keywords were incorrect: shape\n",
    ):
        x.view(shape=(6,))
    with err(
        TypeError,
        f"std() {head} (float), but expected one of:\n"
        " * (tuple of ints dim, bool unbiased = True, bool keepdim = False)\n"
        " * (tuple of ints dim = None, *, Number correction = None, bool keepdim = False)\n"
        " * (bool unbiased = True)\n"
        "      didn't match because some of the arguments have invalid types: (!float!)\n"
        " * (tuple of names dim, bool unbiased = True, bool keepdim = False)\n"
        " * (tuple of names dim, *, Number correction = None, bool keepdim = False)\n",
    ):
        x.std(1.5)
    with err(
        TypeError,
        f"clamp() {head} (str), but expected one of:\n"
        " * (Tensor min = None, Tensor max = None)\n"
        " * (Number min = None, Number max = None)\n",
    ):
        x.clamp("a")
    # One overload (the others deprecated, so hidden): torch's single-line forms.
    with err(
        TypeError,
        f"add() {head} (!int!, !Tensor!, !int!), but expected (Tensor other, *, Number alpha = 1)",
    ):
        x.add(2, x, 3)
    with err(
        TypeError,
        f"addmm() {head} (Tensor), but expected (Tensor mat1, Tensor mat2, *, Number beta = 1, "
        "Number alpha = 1)",
    ):
        x.addmm(x)
    unrecognized = "add() received an invalid combination of arguments - got unrecognized"
    with err(TypeError, f"{unrecognized} keyword arguments: alpha"):
        x.add(2, x, alpha=3)
    with err(TypeError, f"{unrecognized} keyword arguments: other, alpha"):
        x.add(x, alpha=2, other=x)
    # torch colours mismatches on terminals; cudalite marks them the same everywhere.
    with pytest.raises(TypeError, match=re.escape("got (!int!, ")):
        x.add(2, x, 3)


def test_tensor_sequences_are_tuples_or_lists(x):
    with err(
        TypeError, "stack(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"
    ):
        C.stack(x)
    with err(
        TypeError, "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not NoneType"
    ):
        C.cat(None)
    with err(
        TypeError,
        "stack(): argument 'tensors' (position 1) must be tuple of Tensors, not list_iterator",
    ):
        C.stack(iter([x, x]))
    assert C.cat((x,)).shape == (2, 3) and C.stack([x, x], 1).shape == (2, 2, 3)


def test_calls_torch_refuses(x):
    """Calls that cudalite used to accept or word its own way, as torch 2.11 refuses them."""
    combo = "() received an invalid combination of arguments - got ({}), but expected one of:"
    with pytest.raises(TypeError, match=exact("arange" + combo.format(""))):
        C.arange()
    assert C.arange(end=3).tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match=exact("normal" + combo.format("Tensor, float, float"))):
        C.normal(x, 1.5, 1.5)
    with pytest.raises(TypeError, match=exact("normal" + combo.format("Tensor, Tensor, str"))):
        C.normal(x, x, "a")
    with pytest.raises(TypeError, match=exact("where" + combo.format("Tensor, float"))):
        C.where(x > 0, 1.5)
    with pytest.raises(TypeError, match=exact("result_type" + combo.format("Tensor, str"))):
        C.result_type(x, "a")
    with err(RuntimeError, "Name 'a' not found in Tensor[None, None]."):
        x.squeeze("a")


def test_calls_are_parsed_on_the_way_in(x):
    """The entry matches a call against torch's signatures before the function runs (Note
    [Parsing at the entry]): a call that fits none is torch's TypeError, never run."""
    calls = []

    def fn(*args, **kwargs):
        calls.append((args, kwargs))
        return "ran"

    entry = C._C._Checked(fn, lambda exc, args, kwargs: None, None, ("f", "dot"))
    a, b = x[0], x[1]
    assert entry(a, b) == "ran"
    assert len(calls[-1][0]) == 2 and calls[-1][0][1] is b and calls[-1][1] == {}
    assert entry(a, tensor=b) == "ran"
    assert calls[-1][0][0] is a and list(calls[-1][1]) == ["tensor"]
    n = len(calls)
    with err(TypeError, "dot(): argument 'tensor' (position 2) must be Tensor, not int"):
        entry(x[0], 5)
    with err(TypeError, "dot() got an unexpected keyword argument 'other'"):
        entry(x[0], x[1], other=x[1])
    assert len(calls) == n
    # Calls checked after a failure instead: a keyword given None (forwarded defaults) and
    # NumPy's keyword names.
    assert entry(x[0], tensor=None) == "ran"
    assert entry(x[0], x2=x[1]) == "ran"
    # Methods: self is not among torch's parameters.
    method = C._C._Checked(fn, lambda exc, args, kwargs: None, None, ("m", "dot"))
    assert method(x[0], x[1]) == "ran"
    with err(TypeError, "dot(): argument 'tensor' (position 1) must be Tensor, not int"):
        method(x[0], 5)
    # The entry skips the matching for a call with the types of the last call that fit by
    # its types alone; a tensor where an int goes fits by its value, never cached.
    for _ in range(2):
        assert x.sum(C.tensor(0, device=x.device)).shape == (3,)
        with pytest.raises(TypeError, match=r"^sum\(\) received an invalid combination"):
            x.sum(C.tensor([0, 1], device=x.device))
    # A call cudalite's function used to accept, refused as torch refuses it.
    with err(TypeError, "argmax(): argument 'dim' (position 2) must be int, not Tensor"):
        C.argmax(x, x, keepdim=1)


def test_parsed_entries_pass_the_parsers_values(x):
    """An entry made with parsed=True calls its function with the values of the signature
    that fits (Note [Parsed calls]): converted (int lists as lists of ints, a NumPy integer
    or a 0-dim integer tensor as an int, Python types as dtypes), defaulted, positional
    parameters by position and keyword-only ones by keyword, whatever form the call took."""
    import numpy as np

    calls = []

    def fn(*args, **kwargs):
        calls.append((args, kwargs))
        return "ran"

    def entry(kind, name):
        return C._C._Checked(fn, lambda exc, args, kwargs: None, None, (kind, name), True)

    empty_strided = entry("f", "empty_strided")
    kw = {"dtype": None, "layout": None, "device": None, "pin_memory": False}
    assert empty_strided((2, np.int64(3)), stride=[C.tensor(1), 2], dtype=float) == "ran"
    args, kwargs = calls[-1]
    assert args == ([2, 3], [1, 2]) and all(type(v) is int for v in args[0] + args[1])
    assert kwargs == {**kw, "dtype": C.float64, "requires_grad": False}
    assert list(kwargs) == ["dtype", "layout", "device", "pin_memory", "requires_grad"]
    # int[] as the only positional parameter takes the ints as varargs too
    sum_to_size = entry("m", "sum_to_size")
    assert sum_to_size(x, 1, 3) == sum_to_size(x, (1, 3)) == sum_to_size(x, size=[1, 3])
    assert [c[0] for c in calls[-3:]] == [(x, [1, 3])] * 3
    # an overload with other parameter names: its values by keyword
    diagonal = entry("m", "diagonal")
    diagonal(x, dim2=0)
    assert calls[-1] == ((x, 0, 0, 0), {})
    diagonal(x, outdim="a", dim1="b", dim2="c")
    assert calls[-1] == ((x,), {"outdim": "a", "dim1": "b", "dim2": "c", "offset": 0})
    # a call that fits no signature is torch's error, and the function never runs
    n = len(calls)
    with err(TypeError, "unfold(): argument 'step' (position 3) must be int, not str"):
        entry("m", "unfold")(x, 0, 2, "a")
    with err(
        TypeError,
        "as_strided(): argument 'size' failed to unpack the object at pos 2 with error "
        '"type must be tuple of ints,but got str"',
    ):
        entry("m", "as_strided")(x, (2, "a"), (1,))
    assert len(calls) == n
    with pytest.raises(TypeError, match="parsed=True needs a key"):
        C._C._Checked(fn, lambda exc, args, kwargs: None, None, None, True)


def test_parsed_methods_take_every_form_of_a_call(x):
    """The methods that take the parser's values (``@parsed``) accept what torch's
    signatures accept, with autograd armed too (the recorder receives the same values)."""
    assert C.Tensor.unfold.__wrapped__._cl_parsed
    assert x.unfold(1, 2, 1).shape == x.unfold(dimension=1, size=2, step=1).shape == (2, 2, 2)
    assert x.unfold(C.tensor(1), size=2, step=1).shape == (2, 2, 2)
    assert x.movedim(0, 1).shape == C.movedim(x, [0], [1]).shape == (3, 2)
    assert x.moveaxis(source=(0, 1), destination=(1, 0)).shape == (3, 2)
    assert x.diagonal(offset=1).tolist() == C.diagonal(x, 1).tolist() == [1.0, 5.0]
    assert x.as_strided([2], [2], 1).tolist() == C.as_strided(x, (2,), (2,), 1).tolist()
    assert x.sum_to_size(1, 3).tolist() == x.sum_to_size((1, 3)).tolist() == [[3.0, 5.0, 7.0]]
    assert C.empty_strided((2, 3), (1, 2), device=x.device).stride() == (1, 2)
    assert x.new_empty_strided((2,), (3,), dtype=int).dtype == C.int64
    if x.device.type == "cpu":
        assert x.type_as(C.zeros(1, dtype=C.int32)).dtype == C.int32
    w = x.clone().requires_grad_()
    w.movedim(source=0, destination=1).unfold(0, 2, 1).diagonal(dim1=2).sum().backward()
    assert w.grad.shape == (2, 3)
    with err(RuntimeError, "Name 'c' not found in Tensor[None, None]."):
        w.diagonal(outdim="a", dim1="b", dim2="c")


def test_parameters_named_as_torchs_parser_names_them(x):
    """Where torch's type stubs name a parameter otherwise than its parser (tests/
    gen_signatures.py), the messages use the parser's name."""
    with err(
        TypeError, "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not str"
    ):
        x.requires_grad_("a")
    with err(TypeError, "numel(): argument 'input' (position 1) must be Tensor, not float"):
        C.numel(1.5)
    with err(TypeError, "roll(): argument 'dims' (position 2) must be tuple of ints, not str"):
        x.roll(0, "a")


def test_entry_accepts_what_torchs_overload_texts_accept():
    """Tensor.set_() with no argument is missing from torch's type stubs (the parser's
    signatures) but is one of torch's overloads: the parse on the way in lets it through,
    and a torch type the table lacks (torch.Storage) never ends the process."""
    import cudalite

    x = cudalite.ones(2)
    assert x.set_() is x and x.shape == (0,)
    with pytest.raises(TypeError, match="must be Storage or Tensor, not float"):
        cudalite.ones(2).set_(1.5)
