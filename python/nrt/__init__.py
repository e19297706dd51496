"""nrt: verified PyTorch-exported programs from Python.

Open any program nrt reads (``.nrt``, ``.nrt.json``, torch.export ``.pt2``, ExportedProgram JSON),
verify, hash, inspect, diff, convert and shard it, and run it on the CPU::

    import nrt
    program = nrt.load("model.pt2")
    program.save("model.nrt")                 # atomic
    print(program.hash().full)                # the digest `nrt-inspect hash` prints
    runner = nrt.Runner(program)
    outputs = runner(x=numpy_array)           # {name: numpy.ndarray}

Errors are ``nrt.Error`` with a stable ``.code`` ("NRT-E101", docs/ERRORS.md). See docs/PYTHON.md.
"""

from nrt._nrt import (  # noqa: F401  (the package's API)
    Diff,
    Digests,
    Error,
    InvalidArgumentError,
    Program,
    Runner,
    convert,
    diff,
    load,
    shard,
)
from nrt._torch_export import from_exported_program  # noqa: F401

__version__ = "0.1.0"

__all__ = [
    "Diff",
    "Digests",
    "Error",
    "InvalidArgumentError",
    "Program",
    "Runner",
    "convert",
    "diff",
    "from_exported_program",
    "load",
    "shard",
]
