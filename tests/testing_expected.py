"""assert_close failures and their exact messages, as torch 2.11 raises them.

Each case is code that test_testing.py runs with ``ac`` = ``assert_close``, ``T`` = ``tensor``
and ``E`` = ``empty`` on the test's device, ``M`` = cudalite, ``np`` = NumPy and ``Parameter``;
then the exception type and the message torch gives for the same code (run with
``M`` = torch, "torch." written "cudalite.").
"""

FAILURES = [
    (
        "ac(T([1.0, 2.0, 3.0]), T([1.0, 2.5, 3.0]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([1.0, 2.0, 3.0]), T([1.0, 4.0, 5.0]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 2 / 3 (66.7%)\n"
        "Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.5 at index (1,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([[1.0, 2.0], [3.0, 4.0]]), T([[1.0, 2.0], [3.0, 5.0]]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 4 (25.0%)\n"
        "Greatest absolute difference: 1.0 at index (1, 1) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1, 1) (up to 1.3e-06 "
        "allowed)",
    ),
    (
        "ac(T([10.0, 1.0, 3.0]), T([9.0, 0.5, 3.0]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 2 / 3 (66.7%)\n"
        "Greatest absolute difference: 1.0 at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 1.0 at index (1,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([1.0, 2.0], dtype=M.float64), T([1.0, 2.5], dtype=M.float64))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-07 allowed)\n"
        "Greatest relative difference: 0.2 at index (1,) (up to 1e-07 allowed)",
    ),
    (
        "ac(T([1.0, 2.0], dtype=M.float16), T([1.0, 2.01], dtype=M.float16))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.009765625 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.00485992431640625 at index (1,) (up to 0.001 allowed)",
    ),
    (
        "ac(T([1.0, 2.0], dtype=M.bfloat16), T([1.0, 2.1], dtype=M.bfloat16))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.09375 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.044677734375 at index (1,) (up to 0.016 allowed)",
    ),
    (
        "ac(T([1.0, 2.0]), T([1.0, 2.5]), rtol=0, atol=0)",
        AssertionError,
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (1,)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,)",
    ),
    (
        "ac(T([1.0, 2.0]), T([1.0, 2.5]), rtol=0, atol=1e-3)",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 0.001 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 0 allowed)",
    ),
    (
        "ac(T([1.0, 2.0]), T([1.0, 2.5]), rtol=0.1, atol=0.1)",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 0.1 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 0.1 allowed)",
    ),
    (
        "ac(T([1.0, 1.0]), T([0.0, 0.0]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 2 / 2 (100.0%)\n"
        "Greatest absolute difference: 1.0 at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: inf at index (0,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([5.0]), T([0.0]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 1 (100.0%)\n"
        "Greatest absolute difference: 5.0 at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: inf at index (0,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([float('nan'), 1.0]), T([1.0, float('nan')]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 2 / 2 (100.0%)\n"
        "Greatest absolute difference: nan at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: nan at index (0,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([float('nan'), 1.0]), T([float('nan'), 1.0]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: nan at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: nan at index (0,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([float('inf'), 1.0]), T([float('-inf'), 1.0]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: inf at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: nan at index (0,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([float('inf'), 1.0]), T([1.0, 1.0]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: inf at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: inf at index (0,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([1, 2, 3]), T([1, 2, 4]))",
        AssertionError,
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 1 at index (2,)\n"
        "Greatest relative difference: 0.25 at index (2,)",
    ),
    (
        "ac(T([1, 2, 3]), T([1, 2, 0]))",
        AssertionError,
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 3 at index (2,)\n"
        "Greatest relative difference: inf at index (2,)",
    ),
    (
        "ac(T([1, 2, 3]), T([1, 2, 4]), rtol=0.1, atol=0.1)",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 1 at index (2,) (up to 0.1 allowed)\n"
        "Greatest relative difference: 0.25 at index (2,) (up to 0.1 allowed)",
    ),
    (
        "ac(T([1, 2], dtype=M.int8), T([1, -120], dtype=M.int8))",
        AssertionError,
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 122 at index (1,)\n"
        "Greatest relative difference: 1.0166666507720947 at index (1,)",
    ),
    (
        "ac(T([1, 2], dtype=M.uint8), T([1, 200], dtype=M.uint8))",
        AssertionError,
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 198 at index (1,)\n"
        "Greatest relative difference: 0.9900000095367432 at index (1,)",
    ),
    (
        "ac(T([True, False]), T([True, True]))",
        AssertionError,
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 1 at index (1,)\n"
        "Greatest relative difference: 1.0 at index (1,)",
    ),
    (
        "ac(T([[1, 2, 3], [4, 5, 6]], dtype=M.int16), T([[1, 2, 3], [4, 5, 7]], dtype=M.int16))",
        AssertionError,
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 6 (16.7%)\n"
        "Greatest absolute difference: 1 at index (1, 2)\n"
        "Greatest relative difference: 0.1428571492433548 at index (1, 2)",
    ),
    (
        "ac(T([1.0, 2.0], requires_grad=True), T([1.0, 2.5]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T(1.0), T(1.5))",
        AssertionError,
        "Scalars are not close!\n\n"
        "Expected 1.5 but got 1.0.\n"
        "Absolute difference: 0.5 (up to 1e-05 allowed)\n"
        "Relative difference: 0.3333333333333333 (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T(float('nan')), T(float('nan')))",
        AssertionError,
        "Scalars are not close!\n\n"
        "Expected nan but got nan.\n"
        "Absolute difference: nan (up to 1e-05 allowed)\n"
        "Relative difference: nan (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T(True), T(False))",
        AssertionError,
        "Scalars are not equal!\n\n"
        "Expected False but got True.\n"
        "Absolute difference: 1\n"
        "Relative difference: inf",
    ),
    (
        "ac(T(1), T(3))",
        AssertionError,
        "Scalars are not equal!\n\n"
        "Expected 3 but got 1.\n"
        "Absolute difference: 2\n"
        "Relative difference: 0.6666666666666666",
    ),
    (
        "ac(T(2.0, requires_grad=True), T(0.0))",
        AssertionError,
        "Scalars are not close!\n\n"
        "Expected 0.0 but got 2.0.\n"
        "Absolute difference: 2.0 (up to 1e-05 allowed)\n"
        "Relative difference: inf (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([1.0, 2.0, 3.0]), T([1.0, 2.0, 3.0], dtype=M.float64))",
        AssertionError,
        "The values for attribute 'dtype' do not match: cudalite.float32 != cudalite.float64.",
    ),
    (
        "ac(T([1.0, 2.0]), T([1, 2]))",
        AssertionError,
        "The values for attribute 'dtype' do not match: cudalite.float32 != cudalite.int64.",
    ),
    (
        "ac(T([1.0, 2.0, 3.0]), T([1.0, 2.0]))",
        AssertionError,
        "The values for attribute 'shape' do not match: cudalite.Size([3]) != cudalite.Size([2]).",
    ),
    (
        "ac(T([[1.0, 2.0], [3.0, 4.0]]), T([[1.0, 2.0], [3.0, 4.0]]).t(), check_stride=True)",
        AssertionError,
        "The values for attribute 'stride()' do not match: (2, 1) != (1, 2).",
    ),
    (
        "ac(T([[1.0, 2.0], [3.0, 4.0]]), T([[1.0, 3.0], [2.0, 4.0]]).t(), check_stride=True)",
        AssertionError,
        "The values for attribute 'stride()' do not match: (2, 1) != (1, 2).",
    ),
    (
        "ac(E(0, 3), E(3, 0))",
        AssertionError,
        "The values for attribute 'shape' do not match: cudalite.Size([0, 3]) != "
        "cudalite.Size([3, 0]).",
    ),
    (
        "ac(T([1.0, 2.0, 3.0]), T([1.0, 2.1, 3.0], dtype=M.float64), check_dtype=False)",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.10000000000000009 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.04761904761904766 at index (1,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([1, 3]), T([1.0, 2.0]), check_dtype=False)",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 1.0 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.5 at index (1,) (up to 1.3e-06 allowed)",
    ),
    (
        "ac(T([1, 2], dtype=M.uint8), T([1, 3], dtype=M.int8), check_dtype=False)",
        AssertionError,
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 1 at index (1,)\n"
        "Greatest relative difference: 0.3333333432674408 at index (1,)",
    ),
    (
        "ac(T([1.0, 2.0], dtype=M.float16), T([1.0, 2.1]), check_dtype=False)",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.09999990463256836 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.04761900380253792 at index (1,) (up to 0.001 allowed)",
    ),
    (
        "ac(T([1.0]), T([1.0]), rtol=1e-3)",
        ValueError,
        "Both 'rtol' and 'atol' must be either specified or omitted, but got no atol.",
    ),
    (
        "ac(T([1.0]), T([1.0]), atol=1e-3)",
        ValueError,
        "Both 'rtol' and 'atol' must be either specified or omitted, but got no rtol.",
    ),
    (
        "ac(1.0, 1.0, atol=0.5)",
        ValueError,
        "Both 'rtol' and 'atol' must be either specified or omitted, but got no rtol.",
    ),
    (
        "ac([T([1.0]), 1.0], [T([1.0]), 1.0], rtol=1e-3, msg='custom')",
        ValueError,
        "Both 'rtol' and 'atol' must be either specified or omitted, but got no atol.\n\n"
        "The failure occurred for item [0]",
    ),
    (
        "ac([T([1.0]), T([2.0])], (T([1.0]), T([3.0])))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 1 (100.0%)\n"
        "Greatest absolute difference: 1.0 at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.3333333432674408 at index (0,) (up to 1.3e-06 allowed)\n\n"
        "The failure occurred for item [1]",
    ),
    (
        "ac([T(1.0)], (T(1.0), T(2.0)))",
        AssertionError,
        "The length of the sequences mismatch: 1 != 2",
    ),
    (
        "ac([T([1.0]), [1]], [T([1.0]), [1, 2]], msg='custom')",
        AssertionError,
        "The length of the sequences mismatch: 1 != 2\n\nThe failure occurred for item [1]",
    ),
    (
        "ac({'a': T([1.0]), 'b': 2}, {'a': T([1.0]), 'c': 2})",
        AssertionError,
        "The keys of the mappings do not match:\n"
        "Missing keys in the actual mapping: ['c']\n"
        "Additional keys in the actual mapping: ['b']",
    ),
    (
        "ac({'a': [T([1.0]), T([2.0])]}, {'a': [T([1.0]), T([2.5])]})",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 1 (100.0%)\n"
        "Greatest absolute difference: 0.5 at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (0,) (up to 1.3e-06 "
        "allowed)\n\n"
        "The failure occurred for item ['a'][1]",
    ),
    (
        "ac({'a': [T([1.0]), T([2.0])]}, {'a': [T([1.0]), T([2.5])]}, msg='custom')",
        AssertionError,
        "custom",
    ),
    (
        "ac({'a': [T([1.0]), T([2.0])]}, {'a': [T([1.0]), T([2.5])]}, msg=lambda m: f'<{m}>')",
        AssertionError,
        "<Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 1 (100.0%)\n"
        "Greatest absolute difference: 0.5 at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (0,) (up to 1.3e-06 "
        "allowed)\n\n"
        "The failure occurred for item ['a'][1]>",
    ),
    (
        "ac(T([1.0, 2.0, 3.0]), T([1.0, 4.0, 5.0]), msg=lambda m: f'Header\\n\\n{m}\\n\\nFooter')",
        AssertionError,
        "Header\n\n"
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 2 / 3 (66.7%)\n"
        "Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.5 at index (1,) (up to 1.3e-06 allowed)\n\n"
        "Footer",
    ),
    (
        "ac([T([1.0, 2.0]), T([1.0])], [T([1.0, 2.5]), T([1.0], dtype=M.float64)])",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 "
        "allowed)\n\n"
        "The failure occurred for item [0]",
    ),
    (
        "ac([1, 2], [1, 3])",
        AssertionError,
        "Scalars are not equal!\n\n"
        "Expected 3 but got 2.\n"
        "Absolute difference: 1\n"
        "Relative difference: 0.3333333333333333\n\n"
        "The failure occurred for item [1]",
    ),
    ("ac([[True]], [[False]])", AssertionError, "Booleans mismatch: True is not False"),
    ("ac([], [1])", AssertionError, "The length of the sequences mismatch: 0 != 1"),
    (
        "ac(T(1.0), 1.0)",
        TypeError,
        "No comparison pair was able to handle inputs of type <class 'cudalite.Tensor'> and "
        "<class 'float'>.",
    ),
    (
        "ac([T([1.0]), T([2.0])], [T([1.0]), 2.0])",
        TypeError,
        "No comparison pair was able to handle inputs of type <class 'cudalite.Tensor'> and "
        "<class 'float'>.\n\n"
        "The failure occurred for item [1]",
    ),
    (
        "ac(np.array([1.0, 2.0]), T([1.0, 2.0]))",
        TypeError,
        "No comparison pair was able to handle inputs of type <class 'numpy.ndarray'> and <class "
        "'cudalite.Tensor'>.",
    ),
    (
        "ac(T([1.0]), [1.0])",
        TypeError,
        "No comparison pair was able to handle inputs of type <class 'cudalite.Tensor'> and "
        "<class 'list'>.",
    ),
    (
        "ac('a', 'a')",
        TypeError,
        "No comparison pair was able to handle inputs of type <class 'str'> and <class 'str'>.",
    ),
    (
        "ac({1, 2}, {1, 2})",
        TypeError,
        "No comparison pair was able to handle inputs of type <class 'set'> and <class 'set'>.",
    ),
    (
        "ac(Parameter(T([1.0])), T([1.0]), allow_subclasses=False)",
        TypeError,
        "No comparison pair was able to handle inputs of type <class "
        "'cudalite.nn.parameter.Parameter'> and <class 'cudalite.Tensor'>.",
    ),
    (
        "ac(True, 1)",
        RuntimeError,
        "Originating a NumberPair() at item  with\n\n"
        "bool(): True\n\n"
        "and\n\n"
        "int(): 1\n\n"
        "resulted in the unexpected exception above. If you are a user and see this message "
        "during normal operation please file an issue at "
        "https://github.com/pytorch/pytorch/issues. If you are a developer and working on the "
        "comparison functions, please except the previous error and raise an expressive "
        "`ErrorMeta` instead.",
    ),
    ("ac(1, 1.0)", AssertionError, "The (d)types do not match: <class 'int'> != <class 'float'>."),
    (
        "ac(1, 1.5, check_dtype=False)",
        AssertionError,
        "Scalars are not close!\n\n"
        "Expected 1.5 but got 1.\n"
        "Absolute difference: 0.5 (up to 1e-07 allowed)\n"
        "Relative difference: 0.3333333333333333 (up to 1e-07 allowed)",
    ),
    (
        "ac(1.0, 1.5)",
        AssertionError,
        "Scalars are not close!\n\n"
        "Expected 1.5 but got 1.0.\n"
        "Absolute difference: 0.5 (up to 1e-07 allowed)\n"
        "Relative difference: 0.3333333333333333 (up to 1e-07 allowed)",
    ),
    (
        "ac(1.0, 0.0)",
        AssertionError,
        "Scalars are not close!\n\n"
        "Expected 0.0 but got 1.0.\n"
        "Absolute difference: 1.0 (up to 1e-07 allowed)\n"
        "Relative difference: inf (up to 1e-07 allowed)",
    ),
    (
        "ac(1e-9, 1e-10, rtol=0, atol=0)",
        AssertionError,
        "Scalars are not equal!\n\n"
        "Expected 1e-10 but got 1e-09.\n"
        "Absolute difference: 9.000000000000001e-10\n"
        "Relative difference: 9.0",
    ),
    (
        "ac(float('nan'), float('nan'))",
        AssertionError,
        "Scalars are not close!\n\n"
        "Expected nan but got nan.\n"
        "Absolute difference: nan (up to 1e-07 allowed)\n"
        "Relative difference: nan (up to 1e-07 allowed)",
    ),
    (
        "ac(float('inf'), float('-inf'))",
        AssertionError,
        "Scalars are not close!\n\n"
        "Expected -inf but got inf.\n"
        "Absolute difference: inf (up to 1e-07 allowed)\n"
        "Relative difference: nan (up to 1e-07 allowed)",
    ),
    (
        "ac(1 + 1j, 1 + 2j)",
        AssertionError,
        "Scalars are not close!\n\n"
        "Expected (1+2j) but got (1+1j).\n"
        "Absolute difference: 1.0 (up to 1e-07 allowed)\n"
        "Relative difference: 0.4472135954999579 (up to 1e-07 allowed)",
    ),
    ("ac(True, False)", AssertionError, "Booleans mismatch: True is not False"),
    ("ac(None, 1)", AssertionError, "None mismatch: None is not 1"),
    ("ac(np.bool_(True), False)", AssertionError, "Booleans mismatch: True is not False"),
    (
        "ac(np.float32(1.5), 1.0)",
        AssertionError,
        "Scalars are not close!\n\n"
        "Expected 1.0 but got 1.5.\n"
        "Absolute difference: 0.5 (up to 1e-07 allowed)\n"
        "Relative difference: 0.5 (up to 1e-07 allowed)",
    ),
    (
        "ac(np.int64(3), 2)",
        AssertionError,
        "Scalars are not equal!\n\n"
        "Expected 2 but got 3.\n"
        "Absolute difference: 1\n"
        "Relative difference: 0.5",
    ),
    ("ac(1, 2, msg='m')", AssertionError, "m"),
    (
        "ac(1, 1.0, msg=lambda m: m + '!')",
        AssertionError,
        "The (d)types do not match: <class 'int'> != <class 'float'>.!",
    ),
    (
        "ac([1], (1.0,), msg=lambda m: m + '!')",
        AssertionError,
        "The (d)types do not match: <class 'int'> != <class 'float'>.\n\n"
        "The failure occurred for item [0]!",
    ),
    (
        "ac(np.array([1.0, 2.0]), np.array([1.0, 2.5]))",
        AssertionError,
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-07 allowed)\n"
        "Greatest relative difference: 0.2 at index (1,) (up to 1e-07 allowed)",
    ),
    (
        "ac(np.array([1.0, 2.0]), np.array([1, 2]))",
        AssertionError,
        "The values for attribute 'dtype' do not match: cudalite.float64 != cudalite.int64.",
    ),
    (
        "ac(np.array([1, 2], dtype=np.int32), np.array([1, 5], dtype=np.int32))",
        AssertionError,
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 3 at index (1,)\n"
        "Greatest relative difference: 0.6000000238418579 at index (1,)",
    ),
    (
        "ac(np.array(3.0), np.array(4.0))",
        AssertionError,
        "Scalars are not close!\n\n"
        "Expected 4.0 but got 3.0.\n"
        "Absolute difference: 1.0 (up to 1e-07 allowed)\n"
        "Relative difference: 0.25 (up to 1e-07 allowed)",
    ),
]
