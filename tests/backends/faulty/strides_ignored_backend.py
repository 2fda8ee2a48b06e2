#!/usr/bin/env python3
"""The project's numpy client (clients/numpy_backend.py) with one planted bug: it declares
`strided_inputs` as the client does, but builds each strided input from its storage as if it were
dense and row-major, from the offset on (the strides are ignored), as a backend that assumes
contiguous buffers would. Everything else is the client's own code, so a campaign that finds this
backend wrong found it through the layouts alone.

Usage: strides_ignored_backend.py. Needs python3 with numpy.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "clients"))
import numpy_backend  # noqa: E402


def as_dense(base, shape, strides, writeable=False):
    del strides, writeable
    count = int(np.prod(shape, dtype=np.int64))
    return base[:count].reshape(shape)


numpy_backend.as_strided = as_dense
numpy_backend.serve(False)
