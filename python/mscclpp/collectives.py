# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""Collective operations on GPU tensors: the C++ `mscclpp::collectives` (include/mscclpp/collectives.hpp).

`Collectives(communicator, config=Config())` is built by every rank together; its calls take torch tensors,
cupy arrays or any DLPack producer in this GPU's memory, read the element count and type from them, and
enqueue on `stream` (an int, a torch/cupy stream, or None for the current stream of the tensor's
framework). docs/python.md lists the calls and their counts."""

from ._mscclpp.collectives import (
    Algorithm,
    Collective,
    Collectives,
    Config,
    DataType,
    ReduceOp,
    data_type_size,
)

__all__ = ["Algorithm", "Collective", "Collectives", "Config", "DataType", "ReduceOp", "data_type_size"]
