"""Keep numpy's OpenBLAS on one thread.

The recogniser multiplies small matrices (about 50 x 900 by 900 x 52) every frame. OpenBLAS splits such
products over all cores, and on a busy two-core machine the threads' hand-over costs ten times the product
itself. The reader is meant to run on one core, so it asks OpenBLAS for one thread. Best effort: where numpy
uses another BLAS, nothing is changed.
"""

from __future__ import annotations

import ctypes
import glob
import os
from functools import cache

import numpy as np

_SETTERS = (
    "scipy_openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)


@cache
def single_thread_blas() -> bool:
    """Set OpenBLAS (as bundled with numpy) to one thread; True if it was found."""
    libs_dir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    candidates = glob.glob(os.path.join(libs_dir, "*openblas*.so*")) + glob.glob(
        os.path.join(libs_dir, "*openblas*.dll")
    )
    for path in candidates:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(ctypes.c_int(1))
                return True
    return False
