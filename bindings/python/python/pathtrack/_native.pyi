"""Type stubs of pathtrack's Rust extension (used by pathtrack/__init__.py)."""

from typing import List, Optional, Tuple

INTERRUPTED: str

def infer_variables(equations: List[str]) -> List[str]: ...
def parse(source: str, kind: str, origin: str = ...) -> Tuple[str, List[str], int]: ...
def solve(
    source: str,
    kind: str,
    origin: str,
    *,
    start: str,
    backend: str,
    seed: int,
    threads: int,
    torus: bool,
    partition: Optional[str],
    paths: Optional[List[int]],
    device: int,
    keep_paths: bool,
) -> NativeResult: ...
def family_names(source: str, kind: str, origin: str) -> Tuple[List[str], List[str]]: ...
def solve_member(
    source: str,
    kind: str,
    origin: str,
    params: List[Tuple[float, float]],
    *,
    start: str,
    backend: str,
    seed: int,
    threads: int,
    device: int,
    keep_paths: bool,
) -> NativeResult: ...
def track_parameters(
    source: str,
    kind: str,
    origin: str,
    starts: List[List[Tuple[float, float]]],
    start_params: List[Tuple[float, float]],
    target_params: List[Tuple[float, float]],
    *,
    backend: str,
    seed: int,
    threads: int,
    device: int,
    keep_paths: bool,
) -> NativeResult: ...
def witness_sets(
    source: str,
    kind: str,
    origin: str,
    *,
    lowest: int,
    top: Optional[int],
    start: str,
    backend: str,
    seed: int,
    threads: int,
    device: int,
) -> Tuple[str, int, List[Tuple[int, bytes, int, List[int]]]]: ...
def count(
    source: str, kind: str, origin: str, *, seed: int, threads: int, partition: Optional[str]
) -> str: ...
def generate(family: str, n: int) -> str: ...
def convert(source: str, kind: str, origin: str, format: str) -> str: ...
def rref_f64(
    rows: int, cols: int, data: List[float], tol: Optional[float] = ...
) -> Tuple[List[float], List[int]]: ...
def rref_c64(
    rows: int, cols: int, data: List[float], tol: Optional[float] = ...
) -> Tuple[List[float], List[int]]: ...
def rref_zp(
    rows: int, cols: int, data: List[int], prime: int
) -> Tuple[List[int], List[int]]: ...

class NativeResult:
    def summary_json(self) -> str: ...
    def variables(self) -> List[str]: ...
    def solutions(self, which: str) -> Tuple[bytes, int]: ...
    def solution_records_json(self) -> str: ...
    def paths_json(self) -> str: ...
