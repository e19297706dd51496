# Type stubs of the nrt package (the extension module nrt._nrt and nrt._torch_export).
import os
import sys
from typing import Any, Literal, Mapping, Optional, TextIO, Union

import numpy

PathLike = Union[str, "os.PathLike[str]"]
Source = Union[PathLike, bytes, bytearray, memoryview]
Format = Literal["nrt", "nrt.json", "pt2", "torch.json"]

__version__: str

class Error(Exception):
    """An nrt error with a stable code (docs/ERRORS.md)."""

    code: str  # "NRT-E101"
    name: str  # "IoOpen"
    message: str  # the text naming the place (file, node, value, byte offset)

class InvalidArgumentError(Error, ValueError):
    """NRT-E104: the caller passed an invalid argument."""

class Digests:
    algorithm: str
    structure: str
    weights: str
    full: str

class Program:
    @property
    def entry_points(self) -> list[str]: ...
    def verify(self, *, deep: bool = False) -> None: ...
    def hash(self, *, algo: Literal["xxh3", "sha256"] = "xxh3", threads: int = 0) -> Digests: ...
    def info(self) -> dict[str, Any]: ...
    def save(self, path: PathLike, *, format: Optional[Format] = None) -> None: ...
    def text(self, *, graph: Optional[str] = None) -> str: ...
    def print(self, *, graph: Optional[str] = None, file: Optional[TextIO] = None) -> None: ...

class Diff:
    @property
    def same(self) -> bool: ...
    def __bool__(self) -> bool: ...
    def as_dict(self) -> dict[str, Any]: ...

class Runner:
    def __init__(
        self,
        program: Program,
        *,
        graph: Optional[str] = None,
        threads: int = 1,
        kernel_libraries: list[str] = ...,
        device: str = "cpu",
    ) -> None: ...
    def __call__(self, **inputs: Any) -> dict[str, Any]: ...
    @property
    def inputs(self) -> list[dict[str, Any]]: ...

def load(
    source: Source,
    *,
    verify: Union[bool, Literal["deep"]] = True,
    format: Optional[Format] = None,
    model: Optional[str] = None,
) -> Program: ...
def diff(a: Union[Program, Source], b: Union[Program, Source]) -> Diff: ...
def convert(
    src: PathLike, dst: PathLike, *, from_format: Optional[Format] = None, to_format: Optional[Format] = None
) -> None: ...
def shard(program: Program, plan: Union[Mapping[str, Any], str, PathLike]) -> Program: ...
def from_exported_program(ep: Any, *, verify: Union[bool, Literal["deep"]] = True) -> Program: ...
