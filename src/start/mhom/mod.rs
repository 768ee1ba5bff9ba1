//! Multi-homogeneous start systems: variable partitions, their Bézout numbers
//! ([`bezout`]) and the linear-product start system (Wampler 1992; Sommese–Wampler,
//! *The Numerical Solution of Systems of Polynomials*, §8.4).
//!
//! For a partition into groups G_1..G_m of sizes k_j and degrees d_ij, equation i of the
//! start system is
//!
//! g_i(x) = Π_j Π_{l < d_ij} L_ijl(x_(G_j)),   L_ijl(y) = c_0 + Σ_{v ∈ G_j} c_v y_v,
//!
//! with random complex coefficients. A root picks one factor per equation such that exactly
//! k_j of the picked factors belong to group j; the k_j picked forms of group j then fix the
//! k_j variables of G_j by a k_j × k_j linear system. For generic coefficients every choice
//! gives one nonsingular root and distinct choices give distinct roots, so the number of
//! roots is Σ_σ Π_i d_(i,σ(i)) over the assignments σ of equations to groups with |σ⁻¹(j)| =
//! k_j: the m-hom Bézout number.

pub mod bezout;
pub mod homotopy;

pub use bezout::{best_partition, degree_matrix, mhom_bezout, DegreeTable};

use crate::error::{Error, Result};
use crate::system::System;
use nalgebra::{DMatrix, DVector};
use num_complex::Complex64;
use rand::Rng;

/// A partition of the variables (by index) into nonempty groups.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Partition {
    pub groups: Vec<Vec<usize>>,
}

impl Partition {
    /// Validates that `groups` partition 0..n.
    pub fn new(groups: Vec<Vec<usize>>, n: usize) -> Result<Partition> {
        let p = Partition { groups };
        p.check(n)?;
        Ok(p)
    }

    /// All variables in one group (total degree).
    pub fn one_hom(n: usize) -> Partition {
        Partition {
            groups: vec![(0..n).collect()],
        }
    }

    /// Every variable its own group.
    pub fn n_hom(n: usize) -> Partition {
        Partition {
            groups: (0..n).map(|v| vec![v]).collect(),
        }
    }

    /// Groups from labels `label[v] ∈ [0, m)` (every label used).
    pub fn from_labels(label: &[usize], m: usize) -> Partition {
        let mut groups = vec![Vec::new(); m];
        for (v, &g) in label.iter().enumerate() {
            groups[g].push(v);
        }
        groups.retain(|g| !g.is_empty());
        Partition { groups }
    }

    /// (label of each variable, number of groups).
    pub fn labels(&self, n: usize) -> (Vec<usize>, usize) {
        let mut label = vec![0; n];
        for (j, g) in self.groups.iter().enumerate() {
            for &v in g {
                if v < n {
                    label[v] = j;
                }
            }
        }
        (label, self.groups.len())
    }

    /// Group sizes k_j.
    pub fn sizes(&self) -> Vec<usize> {
        self.groups.iter().map(|g| g.len()).collect()
    }

    /// Checks that the groups are nonempty and cover 0..n exactly once.
    pub fn check(&self, n: usize) -> Result<()> {
        let mut seen = vec![None; n];
        for (j, g) in self.groups.iter().enumerate() {
            if g.is_empty() {
                return Err(Error::Usage(format!("partition: group {} is empty", j + 1)));
            }
            for &v in g {
                if v >= n {
                    return Err(Error::Usage(format!(
                        "partition: group {} names variable index {v}, the system has {n} variables",
                        j + 1
                    )));
                }
                if let Some(k) = seen[v] {
                    return Err(Error::Usage(format!(
                        "partition: variable index {v} is in groups {k} and {}",
                        j + 1
                    )));
                }
                seen[v] = Some(j + 1);
            }
        }
        if let Some(v) = seen.iter().position(|s| s.is_none()) {
            return Err(Error::Usage(format!(
                "partition: variable index {v} is in no group"
            )));
        }
        Ok(())
    }

    /// Parses the CLI form `"{x y}{z}"` (names separated by spaces or commas) against the
    /// system's variable names. Errors name the column (1-based) and the cause: unknown,
    /// repeated or missing variables, empty groups, unbalanced braces, stray text.
    pub fn parse(text: &str, variables: &[String]) -> Result<Partition> {
        let err = |col: usize, msg: String| {
            Error::Usage(format!("--partition {text:?}: column {col}: {msg}"))
        };
        let chars: Vec<char> = text.chars().collect();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut where_: Vec<Option<usize>> = vec![None; variables.len()];
        let mut open: Option<usize> = None; // column of the open brace
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let col = i + 1;
            match c {
                c if c.is_whitespace() || c == ',' => i += 1,
                '{' => {
                    if let Some(o) = open {
                        return Err(err(
                            col,
                            format!("'{{' inside the group opened at column {o}"),
                        ));
                    }
                    open = Some(col);
                    groups.push(Vec::new());
                    i += 1;
                }
                '}' => {
                    let Some(o) = open else {
                        return Err(err(col, "'}' without a matching '{'".into()));
                    };
                    if groups.last().is_some_and(|g| g.is_empty()) {
                        return Err(err(o, "empty group".into()));
                    }
                    open = None;
                    i += 1;
                }
                _ => {
                    let start = i;
                    while i < chars.len()
                        && !chars[i].is_whitespace()
                        && !matches!(chars[i], ',' | '{' | '}')
                    {
                        i += 1;
                    }
                    let name: String = chars[start..i].iter().collect();
                    if open.is_none() {
                        return Err(err(
                            col,
                            format!("'{name}' is outside braces; write groups as {{x y}}{{z}}"),
                        ));
                    }
                    let Some(v) = variables.iter().position(|x| *x == name) else {
                        return Err(err(
                            col,
                            format!(
                                "unknown variable '{name}' (the system's variables are {})",
                                variables.join(", ")
                            ),
                        ));
                    };
                    let g = groups.len();
                    if let Some(prev) = where_[v] {
                        return Err(err(
                            col,
                            if prev == g {
                                format!("variable '{name}' repeated in group {g}")
                            } else {
                                format!("variable '{name}' is already in group {prev}")
                            },
                        ));
                    }
                    where_[v] = Some(g);
                    groups[g - 1].push(v);
                }
            }
        }
        if let Some(o) = open {
            return Err(err(o, "group not closed (missing '}')".into()));
        }
        if groups.is_empty() {
            return Err(Error::Usage(format!(
                "--partition {text:?}: no groups; write groups as {{x y}}{{z}}"
            )));
        }
        let missing: Vec<&str> = where_
            .iter()
            .enumerate()
            .filter(|(_, w)| w.is_none())
            .map(|(v, _)| variables[v].as_str())
            .collect();
        if !missing.is_empty() {
            return Err(Error::Usage(format!(
                "--partition {text:?}: variable{} {} in no group",
                if missing.len() > 1 { "s" } else { "" },
                missing.join(", ") + if missing.len() > 1 { " are" } else { " is" }
            )));
        }
        Ok(Partition { groups })
    }

    /// The CLI form, e.g. `{x y}{z}`.
    pub fn display(&self, variables: &[String]) -> String {
        self.groups
            .iter()
            .map(|g| {
                let names: Vec<&str> = g.iter().map(|&v| variables[v].as_str()).collect();
                format!("{{{}}}", names.join(" "))
            })
            .collect()
    }
}

/// Terms of the linear-product start system of `partition` once expanded: the product of
/// `d_ij` dense linear forms in the `g_j` variables of group j (and 1) has
/// `∏_j C(g_j + d_ij, d_ij)` monomials, summed over the equations `i` (saturating). This is
/// what every step of the m-hom homotopy evaluates besides the system's own terms.
pub fn start_terms(degrees: &[Vec<u32>], partition: &Partition) -> u128 {
    let sizes = partition.sizes();
    degrees
        .iter()
        .map(|row| {
            row.iter().zip(&sizes).fold(1u128, |acc, (&d, &g)| {
                acc.saturating_mul(monomials_up_to_degree(g as u128, d as u128))
            })
        })
        .fold(0u128, u128::saturating_add)
}

/// `C(g + d, d)`: the monomials of degree at most `d` in `g` variables (saturating).
fn monomials_up_to_degree(g: u128, d: u128) -> u128 {
    // C(g + k, k) = C(g + k − 1, k − 1) · (g + k) / k, exact at every step.
    (1..=d).fold(1u128, |c, k| c.saturating_mul(g + k) / k)
}

/// The linear-product start system of a partition (see the module doc).
#[derive(Clone, Debug)]
pub struct LinearProductStart {
    n: usize,
    partition: Partition,
    /// d_ij.
    degrees: Vec<Vec<u32>>,
    /// `forms[i][j][l]` = [c_0, c_v for v in group j (in group order)].
    forms: Vec<Vec<Vec<Vec<Complex64>>>>,
    count: u128,
}

fn random_unit<R: Rng + ?Sized>(rng: &mut R) -> Complex64 {
    Complex64::from_polar(1.0, std::f64::consts::TAU * rng.random::<f64>())
}

impl LinearProductStart {
    /// Draws the random linear forms (coefficients uniform on the unit circle).
    pub fn new<R: Rng + ?Sized>(
        system: &System,
        partition: &Partition,
        rng: &mut R,
    ) -> Result<LinearProductStart> {
        let degrees = degree_matrix(system, partition)?;
        let count = bezout::mhom_bezout_from_degrees(&degrees, &partition.sizes())?;
        let count = bezout::to_u128(&count).ok_or_else(|| {
            Error::Usage(format!(
                "linear-product start system: {count} start points exceed u128"
            ))
        })?;
        let forms = degrees
            .iter()
            .map(|row| {
                row.iter()
                    .enumerate()
                    .map(|(j, &d)| {
                        (0..d)
                            .map(|_| {
                                (0..=partition.groups[j].len())
                                    .map(|_| random_unit(rng))
                                    .collect()
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        Ok(LinearProductStart {
            n: system.variables.len(),
            partition: partition.clone(),
            degrees,
            forms,
            count,
        })
    }

    /// Number of start points (= the m-hom Bézout number of the partition).
    pub fn count(&self) -> u128 {
        self.count
    }

    /// The degree matrix d_ij.
    pub fn degrees(&self) -> &[Vec<u32>] {
        &self.degrees
    }

    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    /// Value of one linear form at x.
    fn form(&self, i: usize, j: usize, l: usize, x: &[Complex64]) -> Complex64 {
        let c = &self.forms[i][j][l];
        self.partition.groups[j]
            .iter()
            .zip(&c[1..])
            .fold(c[0], |s, (&v, &cv)| s + cv * x[v])
    }

    /// G(x): the start system at x.
    pub fn eval(&self, x: &[Complex64]) -> Vec<Complex64> {
        (0..self.n)
            .map(|i| {
                let mut p = Complex64::new(1.0, 0.0);
                for (j, &d) in self.degrees[i].iter().enumerate() {
                    for l in 0..d as usize {
                        p *= self.form(i, j, l, x);
                    }
                }
                p
            })
            .collect()
    }

    /// The start system expanded into sparse polynomials (product of the linear forms of
    /// each equation), for the homotopy's evaluator.
    pub fn expand(&self) -> Vec<crate::system::Polynomial> {
        use crate::system::{Polynomial, Term};
        (0..self.n)
            .map(|i| {
                let mut p = Polynomial::from_terms([Term {
                    coeff: Complex64::new(1.0, 0.0),
                    exponents: vec![0; self.n],
                }]);
                for (j, &d) in self.degrees[i].iter().enumerate() {
                    for l in 0..d as usize {
                        let c = &self.forms[i][j][l];
                        let mut factor = vec![Term {
                            coeff: c[0],
                            exponents: vec![0; self.n],
                        }];
                        for (&v, &cv) in self.partition.groups[j].iter().zip(&c[1..]) {
                            let mut e = vec![0; self.n];
                            e[v] = 1;
                            factor.push(Term {
                                coeff: cv,
                                exponents: e,
                            });
                        }
                        let prod = p.terms.iter().flat_map(|a| {
                            factor.iter().map(move |b| Term {
                                coeff: a.coeff * b.coeff,
                                exponents: a
                                    .exponents
                                    .iter()
                                    .zip(&b.exponents)
                                    .map(|(x, y)| x + y)
                                    .collect(),
                            })
                        });
                        p = Polynomial::from_terms(prod.collect::<Vec<_>>());
                    }
                }
                p
            })
            .collect()
    }

    /// Π over the factors of equation i of (|c_0| + Σ |c_v x_v|): the scale of |g_i(x)|.
    pub fn abs_scale(&self, i: usize, x: &[Complex64]) -> f64 {
        let mut p = 1.0;
        for (j, &d) in self.degrees[i].iter().enumerate() {
            for l in 0..d as usize {
                let c = &self.forms[i][j][l];
                p *= self.partition.groups[j]
                    .iter()
                    .zip(&c[1..])
                    .fold(c[0].norm(), |s, (&v, cv)| s + cv.norm() * x[v].norm());
            }
        }
        p
    }

    /// All start points, generated lazily (assignments of equations to groups in
    /// lexicographic order, then the factor choices). A point whose linear system is
    /// singular (probability zero for random forms) is returned as NaNs.
    pub fn start_points(&self) -> StartPoints<'_> {
        let m = self.partition.groups.len();
        let mut remaining = self.partition.sizes();
        remaining.resize(m, 0);
        StartPoints {
            lp: self,
            sigma: vec![0; self.n],
            next_choice: vec![0; self.n],
            remaining,
            pos: 0,
            factor: vec![0; self.n],
            have: false,
            done: false,
        }
    }

    /// The start point for assignment `sigma` and factor choice `factor`.
    fn solve(&self, sigma: &[usize], factor: &[usize]) -> Vec<Complex64> {
        let mut x = vec![Complex64::new(f64::NAN, f64::NAN); self.n];
        for (j, group) in self.partition.groups.iter().enumerate() {
            let k = group.len();
            let rows: Vec<usize> = (0..self.n).filter(|&i| sigma[i] == j).collect();
            let a = DMatrix::from_fn(k, k, |r, c| self.forms[rows[r]][j][factor[rows[r]]][1 + c]);
            let b = DVector::from_fn(k, |r, _| -self.forms[rows[r]][j][factor[rows[r]]][0]);
            if let Some(y) = a.lu().solve(&b) {
                for (c, &v) in group.iter().enumerate() {
                    x[v] = y[c];
                }
            }
        }
        x
    }
}

/// Lazy iterator over the start points of a [`LinearProductStart`].
pub struct StartPoints<'a> {
    lp: &'a LinearProductStart,
    /// Group of each equation (valid below `pos`).
    sigma: Vec<usize>,
    next_choice: Vec<usize>,
    remaining: Vec<usize>,
    pos: usize,
    /// Factor index per equation, an odometer with radix d_(i,σ(i)).
    factor: Vec<usize>,
    /// `sigma`/`factor` hold a point not yet returned.
    have: bool,
    done: bool,
}

impl StartPoints<'_> {
    /// Advances to the next complete assignment σ with |σ⁻¹(j)| = k_j and d_(i,σ(i)) > 0
    /// (depth-first backtracking); false when there is none.
    fn next_assignment(&mut self) -> bool {
        let n = self.lp.n;
        let m = self.remaining.len();
        let d = &self.lp.degrees;
        if self.done {
            return false;
        }
        if self.pos == n {
            self.pos -= 1;
            self.remaining[self.sigma[self.pos]] += 1;
        }
        loop {
            let p = self.pos;
            let found = (self.next_choice[p]..m).find(|&g| self.remaining[g] > 0 && d[p][g] > 0);
            match found {
                Some(g) => {
                    self.sigma[p] = g;
                    self.remaining[g] -= 1;
                    self.next_choice[p] = g + 1;
                    self.pos += 1;
                    if self.pos == n {
                        return true;
                    }
                    self.next_choice[self.pos] = 0;
                }
                None => {
                    self.next_choice[p] = 0;
                    if p == 0 {
                        self.done = true;
                        return false;
                    }
                    self.pos -= 1;
                    self.remaining[self.sigma[self.pos]] += 1;
                }
            }
        }
    }

    /// Advances the factor odometer; false when it wraps around.
    fn next_factor(&mut self) -> bool {
        for i in (0..self.lp.n).rev() {
            let radix = self.lp.degrees[i][self.sigma[i]] as usize;
            if self.factor[i] + 1 < radix {
                self.factor[i] += 1;
                return true;
            }
            self.factor[i] = 0;
        }
        false
    }
}

impl Iterator for StartPoints<'_> {
    type Item = Vec<Complex64>;

    fn next(&mut self) -> Option<Vec<Complex64>> {
        if !self.have {
            if !self.next_assignment() {
                return None;
            }
            self.factor.iter_mut().for_each(|f| *f = 0);
            self.have = true;
        }
        let x = self.lp.solve(&self.sigma, &self.factor);
        if !self.next_factor() {
            self.have = false;
        }
        Some(x)
    }
}
