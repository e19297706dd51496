"""nrt.from_exported_program: a live torch.export.ExportedProgram as an nrt.Program.

torch is imported only inside the function: nrt does not depend on torch. The program goes through
torch's own serializer (torch.export.save, the .pt2 archive) and nrt's .pt2 importer, so a live
program and a saved one meet exactly the same import and verification.
"""

import os
import tempfile


def from_exported_program(ep, *, verify=True):
    """Import a ``torch.export.ExportedProgram`` (weights included) and verify it.

    Raises TypeError for anything that is not an ExportedProgram, nrt.Error when torch's export uses
    something nrt cannot import (the error names it).
    """
    try:
        import torch.export
    except ImportError as e:  # pragma: no cover - torch is optional
        raise TypeError("nrt.from_exported_program needs torch (pip install torch)") from e
    if not isinstance(ep, torch.export.ExportedProgram):
        raise TypeError(f"expected a torch.export.ExportedProgram, got {type(ep).__name__}")
    from nrt._nrt import load

    with tempfile.TemporaryDirectory(prefix="nrt-export-") as directory:
        path = os.path.join(directory, "program.pt2")
        torch.export.save(ep, path)
        return load(path, verify=verify)
