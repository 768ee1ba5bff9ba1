"""pathtrack: all isolated solutions of a polynomial system by homotopy continuation.

    >>> import pathtrack
    >>> r = pathtrack.solve(["x^2 - 1", "y^2 - 4"])
    >>> r.solutions().shape
    (4, 2)

A system is given as

* a path to a system file (YAML, PHCpack, Bertini or Hom4PS format, detected from the
  content), or a benchmark family name such as ``"katsura6"``;
* the text of such a file;
* a list of equations: strings (``"x^2 + y - 1"``; ``^`` or ``**`` for powers) or sympy
  expressions (an ``Eq(lhs, rhs)`` stands for ``lhs - rhs``), with ``variables`` given or
  inferred (strings: in order of first appearance; sympy: sorted by name).

A system with parameters (a YAML file or text with a ``parameters:`` list) is solved at
given values with ``solve(system, params=...)``; ``track_parameters`` carries the solutions
of one member to another by the parameter homotopy. ``witness_sets`` gives the witness
sets of a system with any number of equations, dimension by dimension.

Bad input raises ``ValueError`` with the parser's message (file, line:column, equation).
Solves release the GIL and run on a thread of their own; Ctrl-C stops a solve at the next
path that ends and raises ``KeyboardInterrupt``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native

__all__ = [
    "solve",
    "track_parameters",
    "witness_sets",
    "count",
    "generate",
    "convert",
    "rref",
    "parse",
    "Result",
    "WitnessSet",
    "System",
]

System = Union[str, "os.PathLike[str]", Sequence[Any]]


def _is_sympy(x: Any) -> bool:
    return type(x).__module__.startswith("sympy")


def _equation_text(eq: Any) -> str:
    """One equation as text: strings as they are, sympy via str() (Eq as lhs - rhs)."""
    if isinstance(eq, str):
        return eq
    if _is_sympy(eq):
        lhs, rhs = getattr(eq, "lhs", None), getattr(eq, "rhs", None)
        if lhs is not None and rhs is not None:
            return "(%s) - (%s)" % (lhs, rhs)
        return str(eq)
    if isinstance(eq, (int, float)):
        return repr(eq)
    raise TypeError(
        "an equation must be a string or a sympy expression, not %s" % type(eq).__name__
    )


def _source(
    system: System, variables: Optional[Sequence[Any]] = None
) -> Tuple[str, str, str]:
    """(source, kind, origin) for the native module: kind "path" (file or family name) or
    "text" (file contents, named origin in errors)."""
    if isinstance(system, os.PathLike):
        return os.fspath(system), "path", os.fspath(system)
    if isinstance(system, str):
        if variables is not None:
            raise TypeError("variables= goes with a list of equations, not a file or text")
        if os.path.exists(system):
            return system, "path", system
        if "\n" in system or ":" in system or ";" in system or "{" in system:
            return system, "text", "<string>"
        return system, "path", system
    if _is_sympy(system):
        system = [system]
    if isinstance(system, (list, tuple)):
        eqs = [_equation_text(e) for e in system]
        if not eqs:
            raise ValueError("<equations>: no equations")
        if variables is None:
            if all(_is_sympy(e) for e in system):
                names = set()
                for e in system:
                    names.update(str(s) for s in e.free_symbols)
                variables = sorted(names)
            else:
                variables = _native.infer_variables(eqs)
        names = [str(v) for v in variables]
        lines = ["name: equations", "variables: %s" % json.dumps(names), "equations:"]
        lines += ["  - %s" % json.dumps(e) for e in eqs]
        return "\n".join(lines) + "\n", "text", "<equations>"
    raise TypeError(
        "a system is a path, a family name, the text of a system file, or a list of "
        "equations; not %s" % type(system).__name__
    )


class Result:
    """A finished solve.

    ``summary`` is a dict: the counts (``paths``, ``nonsingular``, ``singular``, ``real``,
    ``at_infinity``, ``failed``), the root counts, the start system and the timings, as
    ``pathtrack solve --json`` prints them. Solutions are the distinct finite ones; each
    method returns a complex array of shape (number of solutions, number of variables)
    with columns in the order of ``variables``.
    """

    def __init__(self, native: Any) -> None:
        self._native = native
        self.summary: Dict[str, Any] = json.loads(native.summary_json())
        self.variables: List[str] = list(native.variables())

    def _array(self, which: str) -> np.ndarray:
        data, rows = self._native.solutions(which)
        a = np.frombuffer(data, dtype=np.complex128).copy()
        return a.reshape(rows, len(self.variables))

    def solutions(self) -> np.ndarray:
        """The distinct finite solutions, nonsingular and singular."""
        return self._array("all")

    def real_solutions(self) -> np.ndarray:
        """The distinct solutions that are real (imaginary parts at rounding level)."""
        return self._array("real")

    def nonsingular(self) -> np.ndarray:
        """The distinct solutions with a well-conditioned Jacobian."""
        return self._array("nonsingular")

    def singular(self) -> np.ndarray:
        """The distinct singular solutions (multiple roots, positive-dimensional parts)."""
        return self._array("singular")

    def solution_records(self) -> List[Dict[str, Any]]:
        """One dict per distinct solution, in the order of ``solutions()``: status,
        multiplicity, coordinates (as [re, im] pairs), real, rank, condition, residual,
        paths, winding_numbers."""
        return json.loads(self._native.solution_records_json())

    def paths(self) -> List[Dict[str, Any]]:
        """One record per tracked path (its final endpoint), as the lines of
        ``pathtrack solve -o``: path, status, coordinates, residual, condition, steps, …"""
        return json.loads(self._native.paths_json())

    def __repr__(self) -> str:
        s = self.summary
        return (
            "<pathtrack.Result %s: %d paths, %d nonsingular, %d singular, %d real, "
            "%d at infinity, %d failed>"
            % (
                s.get("system"),
                s["paths"],
                s["nonsingular"],
                s["singular"],
                s["real"],
                s["at_infinity"],
                s["failed"],
            )
        )


def solve(
    system: System,
    *,
    variables: Optional[Sequence[Any]] = None,
    start: str = "auto",
    backend: str = "auto",
    seed: int = 1,
    threads: int = 0,
    torus: bool = False,
    partition: Optional[str] = None,
    paths: Optional[Iterable[int]] = None,
    device: int = 0,
    keep_paths: bool = True,
    params: Optional[Params] = None,
) -> Result:
    """Solves a polynomial system; returns a :class:`Result`.

    start: "auto", "polyhedral", "total-degree" or "mhom". backend: "auto", "cpu" or
    "cuda". seed: every random choice; the same seed gives the same solutions. threads:
    CPU threads (0: all cores). torus: polyhedral start for solutions in (C*)^n only.
    partition: the m-hom variable partition, e.g. "{x y}{z}". paths: track only these
    path indices. device: the GPU. keep_paths: keep every path's endpoint for
    ``Result.paths()``. params: for a system with parameters, the member to solve: a dict
    {name: value} or the values in the order of the system's ``parameters`` (as
    ``pathtrack solve --params``); ``Result.summary`` then carries ``parameter_names`` and
    ``parameters``.
    """
    source, kind, origin = _source(system, variables)
    if params is not None:
        if torus or partition is not None or paths is not None:
            raise ValueError("torus, partition and paths are not available with params")
        names = _native.family_names(source, kind, origin)[1]
        p = _parameter_values(params, names, "params")
        native = _native.solve_member(
            source,
            kind,
            origin,
            p,
            start=start,
            backend=backend,
            seed=int(seed),
            threads=int(threads),
            device=int(device),
            keep_paths=bool(keep_paths),
        )
        return _with_parameters(Result(native), names, p)
    native = _native.solve(
        source,
        kind,
        origin,
        start=start,
        backend=backend,
        seed=int(seed),
        threads=int(threads),
        torus=bool(torus),
        partition=partition,
        paths=None if paths is None else [int(p) for p in paths],
        device=int(device),
        keep_paths=bool(keep_paths),
    )
    return Result(native)


Params = Union[Dict[str, complex], Sequence[complex]]


def _parameter_values(values: Params, names: List[str], what: str) -> List[Tuple[float, float]]:
    """The values of ``names`` as (re, im) pairs, from a dict or a sequence in order."""
    if isinstance(values, dict):
        unknown = [k for k in values if k not in names]
        missing = [n for n in names if n not in values]
        if unknown or missing:
            raise ValueError(
                "%s: the parameters are %s; %s"
                % (
                    what,
                    ", ".join(names),
                    "; ".join(
                        m
                        for m in (
                            "unknown: %s" % ", ".join(map(str, unknown)) if unknown else "",
                            "missing: %s" % ", ".join(missing) if missing else "",
                        )
                        if m
                    ),
                )
            )
        values = [values[n] for n in names]
    out = [complex(v) for v in values]
    if len(out) != len(names):
        raise ValueError(
            "%s: %d values given; the parameters are %s" % (what, len(out), ", ".join(names))
        )
    return [(z.real, z.imag) for z in out]


def _with_parameters(r: Result, names: List[str], p: List[Tuple[float, float]]) -> Result:
    r.summary["parameter_names"] = list(names)
    r.summary["parameters"] = {n: [re, im] for n, (re, im) in zip(names, p)}
    return r


def track_parameters(
    system: System,
    start_solutions: Any,
    start_params: Params,
    target_params: Params,
    *,
    backend: str = "auto",
    seed: int = 1,
    threads: int = 0,
    device: int = 0,
    keep_paths: bool = True,
) -> Result:
    """Tracks ``start_solutions`` (a complex array, one row per solution of the member at
    ``start_params``) to the member at ``target_params`` by the parameter homotopy, as
    ``pathtrack solve --from S --params P`` does; returns a :class:`Result` whose path i
    starts at row i. The values are dicts {name: value} or sequences in the order of the
    system's ``parameters``; the seed draws the homotopy's random gamma.
    """
    source, kind, origin = _source(system)
    names = _native.family_names(source, kind, origin)[1]
    starts = np.asarray(start_solutions, dtype=np.complex128)
    if starts.ndim == 1:
        starts = starts.reshape(1, -1)
    if starts.ndim != 2:
        raise ValueError("start_solutions: a 2-d array (one row per solution), not %d-d" % starts.ndim)
    rows = [[(z.real, z.imag) for z in row] for row in starts.tolist()]
    p0 = _parameter_values(start_params, names, "start_params")
    p1 = _parameter_values(target_params, names, "target_params")
    native = _native.track_parameters(
        source,
        kind,
        origin,
        rows,
        p0,
        p1,
        backend=backend,
        seed=int(seed),
        threads=int(threads),
        device=int(device),
        keep_paths=bool(keep_paths),
    )
    r = _with_parameters(Result(native), names, p1)
    r.summary["start_parameters"] = {n: [re, im] for n, (re, im) in zip(names, p0)}
    return r


class WitnessSet:
    """The witness set of the dimension-``dimension`` part of a system's solution set:
    ``points`` (a complex array, one row per witness point; their number is the degree),
    ``multiplicities`` (paths that ended at each point) and ``report`` (paths tracked,
    finite solutions, excess, points on higher dimensions, seconds).
    """

    def __init__(
        self, dimension: int, points: np.ndarray, multiplicities: List[int], report: Dict[str, Any]
    ) -> None:
        self.dimension = dimension
        self.points = points
        self.multiplicities = multiplicities
        self.report = report

    @property
    def degree(self) -> int:
        """The number of witness points: the degree of the dimension-``dimension`` part."""
        return int(self.points.shape[0])

    def __repr__(self) -> str:
        return "<pathtrack.WitnessSet dimension %d, degree %d>" % (self.dimension, self.degree)


def witness_sets(
    system: System,
    *,
    variables: Optional[Sequence[Any]] = None,
    dimension: int = 0,
    top_dimension: Optional[int] = None,
    start: str = "auto",
    backend: str = "auto",
    seed: int = 1,
    threads: int = 0,
    device: int = 0,
) -> List[WitnessSet]:
    """The witness sets of ``system`` (any number of equations) from ``top_dimension``
    (default: variables - 1) down to ``dimension``, as ``pathtrack witness`` computes them
    (docs/witness.md): a list of :class:`WitnessSet`, highest dimension first, one per
    dimension (a set of degree 0 where the solution set has no part of that dimension).
    """
    source, kind, origin = _source(system, variables)
    reports, n, sets = _native.witness_sets(
        source,
        kind,
        origin,
        lowest=int(dimension),
        top=None if top_dimension is None else int(top_dimension),
        start=start,
        backend=backend,
        seed=int(seed),
        threads=int(threads),
        device=int(device),
    )
    by_dimension = {r["dimension"]: r for r in json.loads(reports)}
    out = []
    for d, data, rows, mult in sets:
        pts = np.frombuffer(data, dtype=np.complex128).copy().reshape(rows, n)
        out.append(WitnessSet(d, pts, list(mult), by_dimension.get(d, {})))
    return out


def count(
    system: System,
    *,
    variables: Optional[Sequence[Any]] = None,
    seed: int = 1,
    threads: int = 0,
    partition: Optional[str] = None,
) -> Dict[str, Any]:
    """Root counts without tracking: total_degree, mixed_volume, stable_mixed_volume,
    mixed_cells and stable_mixed_cells (the cells of the torus and of the stable lifting),
    mhom_bezout and its partition (as ``pathtrack count --json``)."""
    source, kind, origin = _source(system, variables)
    return json.loads(
        _native.count(
            source, kind, origin, seed=int(seed), threads=int(threads), partition=partition
        )
    )


def generate(family: str, n: int, path: Optional[Union[str, "os.PathLike[str]"]] = None) -> str:
    """A member of a benchmark family (cyclic, katsura, noon, eco, chandra, reimer) as
    YAML text; also written to ``path`` when given."""
    text = _native.generate(family, int(n))
    if path is not None:
        with open(path, "w") as f:
            f.write(text)
    return text


def convert(
    system: System, to: str, *, variables: Optional[Sequence[Any]] = None
) -> str:
    """A system as the text of a file in format ``to``: "yaml", "phc", "bertini" or
    "hom4ps"."""
    source, kind, origin = _source(system, variables)
    return _native.convert(source, kind, origin, to)


def parse(
    system: System, *, variables: Optional[Sequence[Any]] = None
) -> Dict[str, Any]:
    """Parses a system without solving it: {"name", "variables", "equations"} (the number
    of equations); raises ``ValueError`` with the parser's message on bad input."""
    source, kind, origin = _source(system, variables)
    name, names, n = _native.parse(source, kind, origin)
    return {"name": name, "variables": names, "equations": n}


def rref(
    matrix: Any, *, prime: Optional[int] = None, tol: Optional[float] = None
) -> Tuple[np.ndarray, List[int]]:
    """Reduced row echelon form of a 2-D array and its pivot columns.

    Over Z/prime (prime < 2^63) when ``prime`` is given (integer entries; the result has
    entries in [0, prime)), else in float64 or complex128 arithmetic with partial pivoting
    and zero tolerance ``tol`` (default max(m, n)·eps·‖A‖∞ after row scaling)."""
    a = np.asarray(matrix)
    if a.ndim != 2:
        raise ValueError("rref needs a 2-D matrix, got %d dimension(s)" % a.ndim)
    rows, cols = a.shape
    if prime is not None:
        if not np.issubdtype(a.dtype, np.integer):
            raise ValueError("rref over Z/p needs integer entries, got %s" % a.dtype)
        flat = [int(v) % int(prime) for v in a.ravel()]
        data, pivots = _native.rref_zp(rows, cols, flat, int(prime))
        return np.array(data, dtype=np.uint64).reshape(rows, cols), list(pivots)
    if np.iscomplexobj(a):
        flat = np.ascontiguousarray(a, dtype=np.complex128).view(np.float64).ravel()
        data, pivots = _native.rref_c64(rows, cols, flat.tolist(), tol)
        out = np.array(data, dtype=np.float64).view(np.complex128).reshape(rows, cols)
        return out, list(pivots)
    flat = np.ascontiguousarray(a, dtype=np.float64).ravel()
    data, pivots = _native.rref_f64(rows, cols, flat.tolist(), tol)
    return np.array(data, dtype=np.float64).reshape(rows, cols), list(pivots)
