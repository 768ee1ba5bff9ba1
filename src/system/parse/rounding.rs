//! Coefficients a double cannot hold: integer literals above 2^53 that are not doubles
//! (`8752948036761600001`), and integer or rational arithmetic while expanding whose exact
//! result is not a double (`(x − 1)^60`'s binomial coefficients, `x/3`). The parser keeps
//! doubles; these roundings are reported instead of passing silently: one warning per
//! equation, naming the equation and the first coefficient or operation rounded
//! ([`coefficient_warnings`]; `solve` prints them on stderr and puts them in the summary's
//! `warnings`).
//!
//! Decimal literals (`0.1`) are read as the nearest double, as by every solver working in
//! double precision, and are not reported; nor is arithmetic on them. Detection is exact:
//! an integer literal is compared with its double as big integers; a sum `a + b` of
//! integer-valued doubles is exact when the TwoSum error `(a − (s − b')) + (b − b')`,
//! `b' = s − a`, is 0, a product when `fma(a, b, −a·b) = 0`, a quotient when
//! `fma(q, b, −a) = 0` (Knuth; Dekker).

use super::super::System;
use num_bigint::BigInt;
use num_traits::FromPrimitive;
use std::cell::RefCell;
use std::sync::Mutex;

thread_local! {
    /// The first rounding seen while parsing the current expression, and how many.
    static SEEN: RefCell<(Option<String>, usize)> = const { RefCell::new((None, 0)) };
    /// `(equation, note)` of the system being parsed.
    static EQUATIONS: RefCell<Vec<(usize, String)>> = const { RefCell::new(Vec::new()) };
}

/// Warnings of the systems parsed in this process, by [`fingerprint`].
static REGISTRY: Mutex<Vec<(u64, Vec<String>)>> = Mutex::new(Vec::new());

fn note(msg: impl FnOnce() -> String) {
    SEEN.with(|s| {
        let mut s = s.borrow_mut();
        if s.0.is_none() {
            s.0 = Some(msg());
        }
        s.1 += 1;
    });
}

/// Forgets what the previous expression noted (at the start of an expression).
pub(crate) fn start_expression() {
    SEEN.with(|s| *s.borrow_mut() = (None, 0));
}

/// Records what the expression just parsed noted, as equation `k` (1-based).
pub(crate) fn end_equation(k: usize) {
    let seen = SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()));
    if let (Some(first), count) = seen {
        let more = match count {
            1 => String::new(),
            c => format!(
                " ({} more rounding{})",
                c - 1,
                if c == 2 { "" } else { "s" }
            ),
        };
        EQUATIONS.with(|e| e.borrow_mut().push((k, format!("{first}{more}"))));
    }
}

/// Forgets the notes of a system whose parse failed or begins.
pub(crate) fn start_system() {
    EQUATIONS.with(|e| e.borrow_mut().clear());
    start_expression();
}

/// Registers the notes of the system just parsed from `origin` under `system`.
pub(crate) fn end_system(system: &System, origin: &str) {
    let notes = EQUATIONS.with(|e| std::mem::take(&mut *e.borrow_mut()));
    if notes.is_empty() {
        return;
    }
    let warnings = notes
        .into_iter()
        .map(|(k, n)| {
            format!("{origin}, equation {k}: {n}; the system solved has the rounded coefficient")
        })
        .collect();
    let mut r = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    let f = fingerprint(system);
    r.retain(|(g, _)| *g != f);
    r.push((f, warnings));
}

/// The rounding warnings of `system` (as parsed: the same variables and coefficients), one
/// per equation concerned; empty for a system parsed without rounding or not parsed here.
pub fn coefficient_warnings(system: &System) -> Vec<String> {
    let f = fingerprint(system);
    let r = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    r.iter()
        .find(|(g, _)| *g == f)
        .map(|(_, w)| w.clone())
        .unwrap_or_default()
}

/// A hash of the variables and every term (exponents, coefficient bits).
fn fingerprint(system: &System) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    system.variables.hash(&mut h);
    for f in &system.equations {
        f.terms.len().hash(&mut h);
        for t in &f.terms {
            t.exponents.hash(&mut h);
            t.coeff.re.to_bits().hash(&mut h);
            t.coeff.im.to_bits().hash(&mut h);
        }
    }
    h.finish()
}

fn is_integer(v: f64) -> bool {
    v.is_finite() && v.fract() == 0.0
}

fn big(v: f64) -> BigInt {
    BigInt::from_f64(v).unwrap_or_default()
}

/// An integer literal `text` (digits only) read as `v`.
pub(crate) fn literal(text: &str, v: f64) {
    if !text.bytes().all(|b| b.is_ascii_digit()) || v < 9007199254740992.0 {
        return; // below 2^53 every integer is a double
    }
    let exact = BigInt::parse_bytes(text.as_bytes(), 10).unwrap_or_default();
    if exact != big(v) {
        note(|| format!("the coefficient {exact} is not a double (read as {v:.0})"));
    }
}

/// `a + b = s` in double, for integer-valued `a`, `b`.
pub(crate) fn sum(a: f64, b: f64, s: f64) {
    if !is_integer(a) || !is_integer(b) {
        return;
    }
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    if e != 0.0 && s.is_finite() {
        note(|| {
            format!(
                "{} + {} = {} is not a double (rounded to {s:.0} while expanding)",
                big(a),
                big(b),
                big(a) + big(b)
            )
        });
    }
}

/// `a·b = p` in double, for integer-valued `a`, `b`.
pub(crate) fn product(a: f64, b: f64, p: f64) {
    if !is_integer(a) || !is_integer(b) || !p.is_finite() {
        return;
    }
    if a.mul_add(b, -p) != 0.0 {
        note(|| {
            format!(
                "{} × {} = {} is not a double (rounded to {p:.0} while expanding)",
                big(a),
                big(b),
                big(a) * big(b)
            )
        });
    }
}

/// `a/b = q` in double, for integer-valued `a`, `b`.
pub(crate) fn quotient(a: f64, b: f64, q: f64) {
    if !is_integer(a) || !is_integer(b) || b == 0.0 || !q.is_finite() {
        return;
    }
    if q.mul_add(b, -a) != 0.0 {
        note(|| {
            format!(
                "the rational coefficient {}/{} is not a double (rounded to {q:e})",
                big(a),
                big(b)
            )
        });
    }
}

/// The complex product `a·b` (as [`super::expr`] forms it: per part when a factor is
/// real), checked part by part.
pub(crate) fn complex_product(
    a: num_complex::Complex64,
    b: num_complex::Complex64,
    p: num_complex::Complex64,
) {
    if b.im == 0.0 {
        product(a.re, b.re, p.re);
        product(a.im, b.re, p.im);
    } else if a.im == 0.0 {
        product(a.re, b.re, p.re);
        product(a.re, b.im, p.im);
    } else {
        let (rr, ii, ri, ir) = (a.re * b.re, a.im * b.im, a.re * b.im, a.im * b.re);
        product(a.re, b.re, rr);
        product(a.im, b.im, ii);
        product(a.re, b.im, ri);
        product(a.im, b.re, ir);
        sum(rr, -ii, p.re);
        sum(ri, ir, p.im);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(f: impl FnOnce()) -> Option<String> {
        start_expression();
        f();
        SEEN.with(|s| s.borrow_mut().0.take())
    }

    #[test]
    fn exact_operations_are_not_noted() {
        assert!(first(|| literal("9007199254740993", 9007199254740992.0)).is_some());
        assert_eq!(
            first(|| literal("2432902008176640000", 2432902008176640000.0)),
            None
        );
        assert_eq!(first(|| literal("12", 12.0)), None);
        let big1 = 9007199254740992.0; // 2^53
        assert!(first(|| sum(big1, 1.0, big1 + 1.0)).is_some());
        assert_eq!(first(|| sum(big1, 2.0, big1 + 2.0)), None);
        assert!(first(|| product(3.0, 3002399751580331.0, 3.0 * 3002399751580331.0)).is_some());
        assert_eq!(first(|| product(3.0, 5.0, 15.0)), None);
        assert!(first(|| quotient(1.0, 3.0, 1.0 / 3.0)).is_some());
        assert_eq!(first(|| quotient(1.0, 4.0, 0.25)), None);
        // Decimal operands are not asked.
        assert_eq!(first(|| product(0.1, 0.3, 0.1 * 0.3)), None);
    }
}
