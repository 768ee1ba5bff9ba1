//! A family of polynomial systems `F(x; p)`: `n` equations in the unknowns `x ∈ C^n` whose
//! coefficients are polynomials in the parameters `p ∈ C^m`,
//!
//! `f_k(x; p) = Σ_a c_{k,a}(p) · x^a`,  `c_{k,a}(p) = Σ_b c_{k,a,b} · p^b`.
//!
//! It is read from a YAML file with a `parameters:` list (parameters stand wherever a
//! coefficient may, also inside products and powers: the parser expands the equations in the
//! unknowns and the parameters together, and [`Family::from_parsed`] splits every term
//! `c·x^a·p^b` into its monomial `x^a` and its coefficient's term `c·p^b`).
//!
//! A member of the family at given values is a plain [`System`] ([`Family::at`]); a path
//! `p(t)` between two members gives a homotopy in the τ-form every tracker reads
//! ([`Family::path_homotopy`]).

use crate::error::InputError;
use crate::homotopy::Homotopy;
use crate::system::{Polynomial, System, Term};
use num_complex::Complex64 as C64;
use std::path::Path;

/// One monomial `x^a` of an equation with its coefficient, a polynomial in the parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct FamilyTerm {
    /// `a ∈ Z^n`.
    pub exponents: Vec<i32>,
    /// `c_{k,a}(p)`: a polynomial in the `m` parameters (exponents of length `m`, ≥ 0).
    pub coeff: Polynomial,
}

/// A family of square systems with parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    pub name: String,
    pub description: String,
    /// The unknowns, in coordinate order.
    pub variables: Vec<String>,
    /// The parameters, in the order of every parameter vector.
    pub parameters: Vec<String>,
    /// Per equation, its monomials in first-appearance order (distinct exponents).
    pub equations: Vec<Vec<FamilyTerm>>,
}

impl Family {
    /// Number of unknowns (= equations).
    pub fn n(&self) -> usize {
        self.variables.len()
    }

    /// Number of parameters.
    pub fn m(&self) -> usize {
        self.parameters.len()
    }

    /// Splits a system parsed in the unknowns and the parameters together (each exponent
    /// vector: `n` entries for the unknowns, then `m` for the parameters; see
    /// [`crate::system::parse::yaml::parse_parametric`]). A negative power of a parameter is
    /// an error naming the equation: coefficients must be polynomials in the parameters.
    pub fn from_parsed(
        joint: System,
        parameters: Vec<String>,
        origin: &str,
    ) -> Result<Family, InputError> {
        let n = joint.n();
        let mut equations = Vec::with_capacity(n);
        for (k, f) in joint.equations.iter().enumerate() {
            let mut terms: Vec<(Vec<i32>, Vec<Term>)> = Vec::new();
            for t in &f.terms {
                let (a, b) = t.exponents.split_at(n);
                if let Some(j) = b.iter().position(|&e| e < 0) {
                    return Err(InputError::new(
                        origin,
                        format!(
                            "parameter '{}' has a negative power: coefficients must be \
                             polynomials in the parameters",
                            parameters[j]
                        ),
                    )
                    .equation(k + 1));
                }
                let term = Term {
                    coeff: t.coeff,
                    exponents: b.to_vec(),
                };
                match terms.iter_mut().find(|(e, _)| e == a) {
                    Some((_, ts)) => ts.push(term),
                    None => terms.push((a.to_vec(), vec![term])),
                }
            }
            equations.push(
                terms
                    .into_iter()
                    .map(|(exponents, ts)| FamilyTerm {
                        exponents,
                        coeff: Polynomial::from_terms(ts),
                    })
                    .collect(),
            );
        }
        Ok(Family {
            name: joint.name,
            description: joint.description,
            variables: joint.variables,
            parameters,
            equations,
        })
    }

    /// Reads a family from a YAML file (see [`crate::system::parse::yaml`]). Any other format
    /// is read as a system without parameters. `Ok(None)`: the file has no parameters.
    pub fn load(path: &Path) -> Result<Option<Family>, InputError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| InputError::new(&origin, format!("cannot read file: {e}")))?;
        Family::parse(&text, &origin)
    }

    /// [`Family::load`] from text.
    pub fn parse(text: &str, origin: &str) -> Result<Option<Family>, InputError> {
        use crate::system::parse::{detect, yaml, Format};
        if detect(text) != Format::Yaml {
            return Ok(None);
        }
        let (joint, parameters) = yaml::parse_parametric(text, origin)?;
        if parameters.is_empty() {
            return Ok(None);
        }
        Family::from_parsed(joint, parameters, origin).map(Some)
    }

    /// The coefficient `c(p)` of one monomial.
    fn coeff_at(c: &Polynomial, p: &[C64]) -> C64 {
        c.eval(p)
    }

    /// The member of the family at the parameter values `p`. An error when an equation
    /// vanishes identically there.
    pub fn at(&self, p: &[C64]) -> Result<System, String> {
        assert_eq!(p.len(), self.m());
        let mut equations = Vec::with_capacity(self.n());
        for (k, eq) in self.equations.iter().enumerate() {
            let f = Polynomial::from_terms(eq.iter().map(|t| Term {
                coeff: Family::coeff_at(&t.coeff, p),
                exponents: t.exponents.clone(),
            }));
            if f.terms.is_empty() {
                return Err(format!(
                    "equation {} vanishes identically at these parameter values",
                    k + 1
                ));
            }
            equations.push(f);
        }
        Ok(System {
            name: self.name.clone(),
            description: self.description.clone(),
            variables: self.variables.clone(),
            equations,
        })
    }

    /// The parameter homotopy along `p(t) = p0 + s(t)·(p1 − p0)`, `s(t) = t + γ·t·(1 − t)`
    /// (`s(0) = 0`, `s(1) = 1`), in τ-form (`t = e^τ`): every coefficient `c_{k,a}(p(t))` is
    /// a polynomial in `t`, and its power `t^j` becomes a column of lift `j`. For a random
    /// complex `γ` the path bends off the segment into the complex plane of the line through
    /// `p0` and `p1`, where the members with fewer (or singular) solutions lie at finitely
    /// many points that it misses with probability one (the γ-trick): so also between real
    /// parameter points, where the straight segment may cross them.
    pub fn path_homotopy(&self, p0: &[C64], p1: &[C64], gamma: C64) -> Homotopy {
        let one = C64::new(1.0, 0.0);
        // p_j(t) = u_j + v_j t + w_j t², coefficients in t.
        let lines: Vec<[C64; 3]> = p0
            .iter()
            .zip(p1)
            .map(|(&a, &b)| {
                let d = b - a;
                [a, (one + gamma) * d, -gamma * d]
            })
            .collect();
        let mut powers = PowerCache::new(lines);
        let eqs = self
            .equations
            .iter()
            .map(|eq| {
                let mut terms = Vec::new();
                for ft in eq {
                    let mut in_t: Vec<C64> = Vec::new();
                    for ct in &ft.coeff.terms {
                        let poly = powers.monomial(&ct.exponents);
                        if in_t.len() < poly.len() {
                            in_t.resize(poly.len(), C64::new(0.0, 0.0));
                        }
                        for (acc, c) in in_t.iter_mut().zip(&poly) {
                            *acc += ct.coeff * c;
                        }
                    }
                    for (j, c) in in_t.into_iter().enumerate() {
                        if c != C64::new(0.0, 0.0) {
                            terms.push((c, ft.exponents.clone(), j as f64));
                        }
                    }
                }
                terms
            })
            .collect();
        Homotopy::from_affine_terms(self.n(), eqs)
    }

    /// Whether every coefficient has degree at most one in the parameters (`F(x; p) =
    /// A(x)·p + b(x)`), so that for a fixed `x` the parameters solve linear equations
    /// ([`Family::linear_in_parameters_at`]).
    pub fn is_affine_in_parameters(&self) -> bool {
        self.equations
            .iter()
            .flatten()
            .flat_map(|t| &t.coeff.terms)
            .all(|t| t.exponents.iter().sum::<i32>() <= 1)
    }

    /// For a family affine in the parameters, `A(x)` (`n × m`, row-major) and `b(x)` with
    /// `F(x; p) = A(x)·p + b(x)`.
    pub fn linear_in_parameters_at(&self, x: &[C64]) -> (Vec<C64>, Vec<C64>) {
        let (n, m) = (self.n(), self.m());
        let mut a = vec![C64::new(0.0, 0.0); n * m];
        let mut b = vec![C64::new(0.0, 0.0); n];
        for (k, eq) in self.equations.iter().enumerate() {
            for ft in eq {
                let mut mono = C64::new(1.0, 0.0);
                for (xi, &e) in x.iter().zip(&ft.exponents) {
                    mono *= xi.powi(e);
                }
                for ct in &ft.coeff.terms {
                    match ct.exponents.iter().position(|&e| e == 1) {
                        Some(j) => a[k * m + j] += ct.coeff * mono,
                        None => b[k] += ct.coeff * mono,
                    }
                }
            }
        }
        (a, b)
    }
}

/// Powers of the parameter lines `p_j(t)` as coefficient vectors in `t`, computed once.
struct PowerCache {
    lines: Vec<[C64; 3]>,
    /// `powers[j][e]`: the coefficients of `p_j(t)^e`.
    powers: Vec<Vec<Vec<C64>>>,
}

impl PowerCache {
    fn new(lines: Vec<[C64; 3]>) -> Self {
        let powers = lines
            .iter()
            .map(|_| vec![vec![C64::new(1.0, 0.0)]])
            .collect();
        PowerCache { lines, powers }
    }

    fn power(&mut self, j: usize, e: usize) -> &[C64] {
        while self.powers[j].len() <= e {
            let last = self.powers[j].last().expect("p^0 is there").clone();
            let next = mul(&last, &self.lines[j]);
            self.powers[j].push(next);
        }
        &self.powers[j][e]
    }

    /// The coefficients in `t` of `p(t)^b`.
    fn monomial(&mut self, b: &[i32]) -> Vec<C64> {
        let mut out = vec![C64::new(1.0, 0.0)];
        for (j, &e) in b.iter().enumerate() {
            if e > 0 {
                let pw = self.power(j, e as usize).to_vec();
                out = mul(&out, &pw);
            }
        }
        out
    }
}

/// Product of two polynomials in `t` given by their coefficients.
fn mul(a: &[C64], b: &[C64]) -> Vec<C64> {
    let mut out = vec![C64::new(0.0, 0.0); a.len() + b.len() - 1];
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOUR: &str = "variables: [x, y]\nparameters: [a, b]\nequations:\n  - \"(a*x + b)^2 - y\"\n  - \"x*y - a^2*b + 1\"\n";

    fn family() -> Family {
        Family::parse(FOUR, "f.yaml").unwrap().unwrap()
    }

    /// The specialised member evaluates like the expression with the values substituted.
    #[test]
    fn members_evaluate_like_the_expressions() {
        let f = family();
        assert_eq!(f.n(), 2);
        assert_eq!(f.m(), 2);
        let (a, b) = (C64::new(0.3, -1.2), C64::new(2.0, 0.5));
        let x = [C64::new(0.7, 0.1), C64::new(-1.1, 0.4)];
        let s = f.at(&[a, b]).unwrap();
        let want = [(a * x[0] + b).powi(2) - x[1], x[0] * x[1] - a * a * b + 1.0];
        for (got, want) in s.eval(&x).iter().zip(want) {
            assert!((got - want).norm() < 1e-14, "{got} {want}");
        }
    }

    /// At every t the path homotopy is the member at p(t) (checked through its direct
    /// evaluation at τ = log t), and at t = 1 the target.
    #[test]
    fn path_homotopy_is_the_member_along_the_path() {
        let f = family();
        let p0 = [C64::new(0.3, -1.2), C64::new(2.0, 0.5)];
        let p1 = [C64::new(-1.0, 0.0), C64::new(0.25, 3.0)];
        let gamma = C64::new(0.6, 0.8);
        let h = f.path_homotopy(&p0, &p1, gamma);
        let x = [C64::new(0.7, 0.1), C64::new(-1.1, 0.4)];
        let y = [x[0], x[1], C64::new(1.0, 0.0)];
        for t in [1e-3, 0.25, 0.5, 0.9, 1.0] {
            let s = t + gamma * t * (1.0 - t);
            let p: Vec<C64> = p0.iter().zip(&p1).map(|(a, b)| a + s * (b - a)).collect();
            let want = f.at(&p).unwrap().eval(&x);
            let rows = h.extended_jacobian_direct(&y, C64::new(f64::ln(t), 0.0));
            for (row, w) in rows.iter().zip(&want) {
                let got = row[h.nh() + 1];
                assert!(
                    (got - w).norm() < 1e-12 * (1.0 + w.norm()),
                    "t {t}: {got} {w}"
                );
            }
        }
    }

    #[test]
    fn negative_parameter_powers_and_name_clashes_are_errors() {
        let e = Family::parse(
            "variables: [x]\nparameters: [a]\nequations: [\"a^-1*x - 1\"]\n",
            "f.yaml",
        )
        .unwrap_err();
        assert_eq!(e.equation, Some(1));
        assert!(e.message.contains("negative power"), "{e}");
        let e = Family::parse(
            "variables: [x]\nparameters: [x]\nequations: [\"x - 1\"]\n",
            "f.yaml",
        )
        .unwrap_err();
        assert!(e.message.contains("both a variable and a parameter"), "{e}");
        let e = Family::parse(
            "variables: [x]\nparameters: [a]\nequations: [\"x - q\"]\n",
            "f.yaml",
        )
        .unwrap_err();
        assert!(e.message.contains("'q'"), "{e}");
        // the plain reader refuses a family, naming its parameters
        let e = crate::system::parse::parse_str(FOUR, "f.yaml").unwrap_err();
        assert!(e.message.contains("parameters (a, b)"), "{e}");
        assert_eq!(e.line, Some(2));
    }

    /// `A(x)·p + b(x)` reproduces the equations of a family affine in its parameters.
    #[test]
    fn linear_part_reproduces_the_equations() {
        let f = Family::parse(
            "variables: [x, y]\nparameters: [a, b, c]\nequations:\n  - \"a*x^2 + b*y + c\"\n  - \"x*y - (2+i)*a*y + 3\"\n",
            "f.yaml",
        )
        .unwrap()
        .unwrap();
        assert!(f.is_affine_in_parameters());
        assert!(!family().is_affine_in_parameters());
        let x = [C64::new(0.4, 0.2), C64::new(-0.3, 1.0)];
        let p = [C64::new(1.0, 2.0), C64::new(-0.5, 0.0), C64::new(0.1, -0.7)];
        let (a, b) = f.linear_in_parameters_at(&x);
        let want = f.at(&p).unwrap().eval(&x);
        for k in 0..2 {
            let got: C64 = (0..3).map(|j| a[k * 3 + j] * p[j]).sum::<C64>() + b[k];
            assert!((got - want[k]).norm() < 1e-14);
        }
    }
}
