"""The compiled module (cudalite._C) as a shared object among the process's other libraries."""

import shutil
import subprocess
import sys

import pytest

import cudalite._C as C


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF symbol tables")
@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_module_exports_no_unique_symbols():
    # GNU-unique symbols (the locale facets' ids of a statically linked libstdc++) would bind
    # the process's shared libstdc++ to this module's copies, and a library loaded later
    # (torch, imported after cudalite) would crash at its first use of a locale
    # (CMakeLists.txt: --exclude-libs, hidden visibility).
    out = subprocess.run(
        ["nm", "-D", "--defined-only", C.__file__], capture_output=True, text=True, check=True
    ).stdout
    symbols = [line.split() for line in out.splitlines() if line.strip()]
    assert any(s[-1] == "PyInit__C" for s in symbols)
    assert [s for s in symbols if len(s) == 3 and s[1] == "u"] == []
    # Everything else is local (csrc/bindings/exports.map): inline functions of libstdc++'s
    # headers are GNU-unique with std::'s default visibility, whatever -fvisibility says.
    linker = {"_init", "_fini", "_edata", "_end", "__bss_start"}
    assert {s[-1] for s in symbols} - linker == {"PyInit__C"}
