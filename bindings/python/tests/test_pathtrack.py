"""Tests of the Python package: every entry point, checked against the mathematics
(residuals, known root counts, agreement between start systems)."""

import os

import numpy as np
import pytest

import pathtrack



def residual(equations, variables, x):
    """max |f_k(x)| over string equations, evaluated by Python itself."""
    env = {v: complex(z) for v, z in zip(variables, x)}
    return max(abs(eval(e.replace("^", "**"), {}, env)) for e in equations)


def test_katsura6_gives_64_solutions_as_a_complex_array():
    r = pathtrack.solve("katsura6", seed=1)
    sols = r.solutions()
    assert sols.dtype == np.complex128
    assert sols.shape == (64, 7)
    assert r.summary["nonsingular"] == 64
    assert r.summary["paths"] >= 64
    assert r.nonsingular().shape == (64, 7)
    assert r.singular().shape == (0, 7)
    # The real solutions are the rows with (numerically) zero imaginary part.
    real = r.real_solutions()
    assert real.shape[0] == r.summary["real"]
    assert np.all(np.abs(real.imag) < 1e-8)
    # Katsura's first equation: u0 + 2 Σ u_k = 1 at every solution.
    assert np.allclose(sols[:, 0] + 2 * sols[:, 1:].sum(axis=1), 1, atol=1e-10)
    # The 64 rows are distinct points.
    d = np.abs(sols[:, None, :] - sols[None, :, :]).max(axis=2)
    assert np.all(d[~np.eye(64, dtype=bool)] > 1e-6)


def test_same_seed_same_solutions_and_start_systems_agree():
    eqs = ["x^2 + y^2 - 5", "x*y - 2"]
    a = pathtrack.solve(eqs, seed=3, start="polyhedral")
    b = pathtrack.solve(eqs, seed=3, start="polyhedral")
    assert np.array_equal(a.solutions(), b.solutions())
    c = pathtrack.solve(eqs, seed=5, start="total-degree")
    key = lambda s: sorted((round(z.real, 8), round(z.imag, 8)) for z in s[:, 0])
    assert a.summary["nonsingular"] == c.summary["nonsingular"] == 4
    assert key(a.solutions()) == key(c.solutions())
    # (±1, ±2), (±2, ±1) with matching signs: all real.
    assert a.real_solutions().shape == (4, 2)
    for x in a.solutions():
        assert residual(eqs, a.variables, x) < 1e-10


def test_equation_strings_infer_variables_in_order_of_appearance():
    r = pathtrack.solve(["b - 2", "a^2 - b"])
    assert r.variables == ["b", "a"]
    assert r.solutions().shape == (2, 2)
    assert np.allclose(sorted(r.solutions()[:, 1].real), [-2 ** 0.5, 2 ** 0.5])


def test_sympy_system():
    sympy = pytest.importorskip("sympy")
    x, y, z = sympy.symbols("x y z")
    eqs = [x**2 + y**2 + z**2 - 1, x - y, sympy.Eq(z, 2 * x * y)]
    r = pathtrack.solve(eqs)
    assert r.variables == ["x", "y", "z"]
    # Bézout number 2·1·2 = 4, all reached: x = y, z = 2x², 2x² + 4x⁴ = 1.
    assert r.summary["nonsingular"] == 4
    for row in r.solutions():
        vals = {x: row[0], y: row[1], z: row[2]}
        for e in eqs:
            e = e.lhs - e.rhs if isinstance(e, sympy.Eq) else e
            assert abs(complex(e.subs(vals))) < 1e-10


def test_path_and_yaml_text_and_records(tmp_path):
    text = "variables: [x]\nequations:\n  - x^3 - 1\n"
    f = tmp_path / "cube.yaml"
    f.write_text(text)
    for system in (str(f), f, text):
        r = pathtrack.solve(system)
        assert r.solutions().shape == (3, 1)
        assert np.allclose(r.solutions()[:, 0] ** 3, 1)
    paths = r.paths()
    assert len(paths) == r.summary["paths"] == 3
    assert {p["status"] for p in paths} == {"nonsingular"}
    recs = r.solution_records()
    assert [rec["multiplicity"] for rec in recs] == [1, 1, 1]
    assert "3 paths" in repr(r)


def test_singular_solutions_are_separated():
    # x² = 0, y − 1 = 0: one double root.
    r = pathtrack.solve(["x^2", "y - 1"], start="total-degree")
    assert r.nonsingular().shape == (0, 2)
    assert r.singular().shape == (1, 2)
    assert abs(r.singular()[0, 1] - 1) < 1e-8


def test_bad_input_raises_the_parsers_message():
    with pytest.raises(ValueError) as e:
        pathtrack.solve(["x^2 +* 1"])
    assert "equation 1" in str(e.value)
    with pytest.raises(ValueError) as e:
        pathtrack.solve("variables: [x]\nequations: [\"x^2 + y\"]\n")
    msg = str(e.value)
    assert "<string>:2:" in msg and "y" in msg
    with pytest.raises(ValueError, match="cannot read file"):
        pathtrack.solve("no_such_system_file.yaml")
    with pytest.raises(ValueError, match="start must be one of"):
        pathtrack.solve(["x - 1"], start="nonsense")
    with pytest.raises(TypeError):
        pathtrack.solve(42)


def test_count():
    c = pathtrack.count("katsura6")
    # 64 solutions in C^7; the mixed volume counts those in the torus (C*)^7 only.
    assert c["total_degree"] == 64 and c["stable_mixed_volume"] == 64
    assert c["mixed_volume"] <= 64
    c = pathtrack.count(["x*y - 1", "x^2 + y^2 - 4"])
    # Bézout 4; the mixed volume of {xy, 1} and {x², y², 1} is 4 as well.
    assert c["total_degree"] == 4 and c["mixed_volume"] == 4


def test_generate_and_convert(tmp_path):
    text = pathtrack.generate("cyclic", 5, path=tmp_path / "c5.yaml")
    assert (tmp_path / "c5.yaml").read_text() == text
    assert pathtrack.parse(text)["variables"] == ["x1", "x2", "x3", "x4", "x5"]
    assert pathtrack.count(text)["mixed_volume"] == 70
    for fmt in ("phc", "bertini", "hom4ps", "yaml"):
        other = pathtrack.convert(text, fmt)
        assert pathtrack.count(other)["mixed_volume"] == 70
    with pytest.raises(ValueError):
        pathtrack.generate("nosuchfamily", 3)


def test_rref_over_floats_complex_and_zp():
    rng = np.random.default_rng(1)
    b = rng.standard_normal((4, 2))
    a = np.hstack([b, b @ rng.standard_normal((2, 3))])  # rank 2, 4 × 5
    r, piv = pathtrack.rref(a)
    assert piv == [0, 1]
    assert np.allclose(r[:2, :2], np.eye(2)) and np.allclose(r[2:], 0)
    # Same row space: the RREF's rows solve for the rows of a.
    assert np.allclose(a @ np.linalg.pinv(r[:2]) @ r[:2], a)
    c = a + 1j * np.roll(a, 1, axis=0)
    rc, pivc = pathtrack.rref(c)
    assert rc.dtype == np.complex128 and pivc == list(range(len(pivc)))
    assert len(pivc) == np.linalg.matrix_rank(c)
    m = np.array([[2, 4, 1], [1, 2, 3], [3, 6, 4]])  # row 3 = row 1 + row 2
    rz, pz = pathtrack.rref(m, prime=7)
    assert pz == [0, 2]
    assert rz.tolist() == [[1, 2, 0], [0, 0, 1], [0, 0, 0]]
    with pytest.raises(ValueError):
        pathtrack.rref(m, prime=8)


def test_guide_python_block_prints_what_it_says(monkeypatch, capsys):
    """docs/guide.md's Python block runs from the repository root and prints what its
    comments say."""
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    text = open(os.path.join(root, "docs", "guide.md")).read()
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    expected = [
        line.split("#", 1)[1].strip()
        for line in block.splitlines()
        if line.startswith("print(") and "#" in line
    ]
    monkeypatch.chdir(root)
    exec(compile(block, "docs/guide.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed == expected


def test_solve_releases_the_gil():
    """Another Python thread runs while a solve is under way."""
    import threading

    done = []
    t = threading.Thread(target=lambda: done.append(pathtrack.solve("katsura8", threads=1)))
    t.start()
    spins = 0
    while t.is_alive():
        spins += 1
    t.join()
    assert done[0].summary["nonsingular"] == 256
    # Holding the GIL through the solve would leave this loop a handful of turns.
    assert spins > 10000, spins


def test_ctrl_c_interrupts_a_solve():
    """SIGINT during a solve raises KeyboardInterrupt in the caller, soon, not at the end."""
    import signal
    import subprocess
    import sys

    code = (
        "import signal, sys, pathtrack\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "print('go', flush=True)\n"
        "try:\n"
        "    r = pathtrack.solve('katsura12', start='total-degree', threads=1, backend='cpu')\n"
        "    print('finished', r.summary['paths'])\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "go"
    import time

    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    assert out.strip() == "interrupted"


def test_mhom_partition():
    """A 2-homogeneous system: the partition {x}{y} gives m-hom Bézout 2 < total degree 4,
    and the two solutions of x*y = 1, x = 2*y."""
    r = pathtrack.solve(["x*y - 1", "x - 2*y"], start="mhom", partition="{x}{y}")
    assert r.summary["root_counts"]["mhom_bezout"] == 2
    assert r.summary["paths"] == 2
    assert np.allclose(sorted(r.solutions()[:, 1].real), [-(0.5 ** 0.5), 0.5 ** 0.5])
    with pytest.raises(ValueError):
        pathtrack.solve(["x*y - 1", "x - 2*y"], start="mhom", partition="{x}{z}")


ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
KATSURA3_PARAMS = os.path.join(ROOT, "systems", "families", "katsura3_params.yaml")
KATSURA3_NAMES = ["c0", "b0", "c1", "b1", "c2", "b2", "c3"]
KATSURA3_EQUATIONS = [
    "u0 + 2*u1 + 2*u2 + 2*u3 - c0",
    "u0^2 + 2*u1^2 + 2*u2^2 + 2*u3^2 - b0*u0 + c1",
    "2*u0*u1 + 2*u1*u2 + 2*u2*u3 - b1*u1 + c2",
    "2*u0*u2 + u1^2 + 2*u1*u3 - b2*u2 + c3",
]


def family_residual(x, params):
    """max |f_k(x; p)| of katsura3_params, evaluated by Python itself."""
    env = {v: complex(z) for v, z in zip(["u0", "u1", "u2", "u3"], x)}
    env.update({n: complex(v) for n, v in zip(KATSURA3_NAMES, params)})
    return max(abs(eval(e.replace("^", "**"), {}, env)) for e in KATSURA3_EQUATIONS)


def test_a_parameter_homotopy_agrees_with_solving_the_target_directly():
    # A generic complex member: 2^3 = 8 solutions.
    p0 = {n: complex(0.3 + 0.1 * k, -0.7 + 0.2 * k) for k, n in enumerate(KATSURA3_NAMES)}
    a = pathtrack.solve(KATSURA3_PARAMS, params=p0, seed=2, backend="cpu")
    assert a.summary["nonsingular"] == 8
    assert a.summary["parameter_names"] == KATSURA3_NAMES
    assert a.summary["parameters"]["b1"] == [p0["b1"].real, p0["b1"].imag]
    for x in a.solutions():
        assert family_residual(x, [p0[n] for n in KATSURA3_NAMES]) < 1e-10
    # To katsura3 itself (c0 = 1, b_m = 1, c_m+1 = 0), given as a list in order.
    p1 = [1, 1, 0, 1, 0, 1, 0]
    t = pathtrack.track_parameters(KATSURA3_PARAMS, a.nonsingular(), p0, p1, seed=3, backend="cpu")
    assert t.summary["start"] == "parameter"
    assert t.summary["paths"] == 8
    assert t.nonsingular().shape == (8, 4)
    assert t.summary["start_parameters"]["c0"] == [p0["c0"].real, p0["c0"].imag]
    for x in t.solutions():
        assert family_residual(x, p1) < 1e-10
    # The same 8 points as a direct solve of that member, and as the katsura3 family
    # member (its variables are u0..u3 too).
    d = pathtrack.solve(KATSURA3_PARAMS, params=p1, seed=1, backend="cpu")
    k = pathtrack.solve("katsura3", seed=1, backend="cpu")
    assert k.variables == t.variables
    for other in (d, k):
        s = other.solutions()
        assert s.shape == (8, 4)
        dist = np.abs(t.solutions()[:, None, :] - s[None, :, :]).max(axis=2)
        assert np.all(dist.min(axis=1) < 1e-8)
        assert np.all(dist.min(axis=0) < 1e-8)
    # Path i starts at row i: row 2 alone, with the same seed (the same gamma), ends where
    # path 2 ended.
    one = pathtrack.track_parameters(
        KATSURA3_PARAMS, a.nonsingular()[2], p0, p1, seed=3, backend="cpu"
    )
    assert one.summary["paths"] == 1 and one.paths()[0]["path"] == 0
    end = lambda rec: np.array([complex(re, im) for re, im in rec["coordinates"]])
    assert np.abs(end(t.paths()[2]) - end(one.paths()[0])).max() < 1e-8


def test_bad_parameters_raise_value_errors_naming_the_cause():
    with pytest.raises(ValueError, match="missing: b0"):
        pathtrack.solve(KATSURA3_PARAMS, params={n: 1 for n in KATSURA3_NAMES if n != "b0"})
    with pytest.raises(ValueError, match="unknown: q"):
        pathtrack.solve(KATSURA3_PARAMS, params=dict({n: 1 for n in KATSURA3_NAMES}, q=2))
    with pytest.raises(ValueError, match="3 values given"):
        pathtrack.solve(KATSURA3_PARAMS, params=[1, 2, 3])
    with pytest.raises(ValueError, match="no parameters"):
        pathtrack.solve("katsura5", params=[1])
    with pytest.raises(ValueError, match="no parameters"):
        pathtrack.solve(["x^2 - 1"], params=[1])
    with pytest.raises(ValueError, match="3 coordinates"):
        pathtrack.track_parameters(
            KATSURA3_PARAMS, np.ones((2, 3)), [1] * 7, [2] * 7, backend="cpu"
        )


def test_witness_sets_by_dimension():
    # x z = y z = 0: the plane z = 0 (dimension 2, degree 1) and the line x = y = 0
    # (dimension 1, degree 1).
    sets = pathtrack.witness_sets(["x*z", "y*z"], variables=["x", "y", "z"], backend="cpu")
    assert [(w.dimension, w.degree) for w in sets] == [(2, 1), (1, 1)]
    plane, line = sets
    assert plane.points.shape == (1, 3) and plane.points.dtype == np.complex128
    assert abs(plane.points[0, 2]) < 1e-10
    assert np.abs(line.points[0, :2]).max() < 1e-10 and abs(line.points[0, 2]) > 1e-6
    assert plane.report["degree"] == 1
    # The twisted cubic from three quadrics: a curve of degree 3, nothing else.
    eqs = ["y - x^2", "z - x*y", "x*z - y^2"]
    cubic = pathtrack.witness_sets(eqs, variables=["x", "y", "z"], backend="cpu", seed=4)
    assert [(w.dimension, w.degree) for w in cubic] == [(2, 0), (1, 3), (0, 0)]
    assert cubic[0].points.shape == (0, 3)
    pts = cubic[1].points
    for x in pts:
        assert residual(eqs, ["x", "y", "z"], x) < 1e-10
    d = np.abs(pts[:, None, :] - pts[None, :, :]).max(axis=2)
    assert np.all(d[~np.eye(3, dtype=bool)] > 1e-6)
    assert cubic[1].multiplicities == [1, 1, 1]


def test_type_stubs_and_docstrings_cover_the_api():
    """Every public function and class has a docstring (System is a type alias); the stub of the native module declares exactly
    what the module exports, and the package ships its py.typed marker."""
    import ast
    import inspect

    import pathtrack._native as native

    for name in pathtrack.__all__:
        obj = getattr(pathtrack, name)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        assert inspect.getdoc(obj), f"pathtrack.{name} has no docstring"
        if inspect.isclass(obj):
            for m, f in vars(obj).items():
                if not m.startswith("_") and callable(f):
                    assert inspect.getdoc(f), f"pathtrack.{name}.{m} has no docstring"
    package = os.path.dirname(pathtrack.__file__)
    assert os.path.exists(os.path.join(package, "py.typed"))
    with open(os.path.join(package, "_native.pyi")) as f:
        stub = ast.parse(f.read())
    declared = set()
    for node in stub.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            declared.add(node.target.id)
    exported = {x for x in dir(native) if not x.startswith("_")}
    assert declared == exported, (declared ^ exported)
