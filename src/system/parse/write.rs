//! Writing polynomials in the expression syntax of a format: the power operator, the
//! imaginary unit and the notation of real numbers differ, the rest is shared.
//!
//! A term is `coefficient*x^a*y^b`; a coefficient of ±1 before a monomial is left out, a
//! real one is written with its sign as the operator before the term, a purely imaginary
//! one as `c*I`, and a complex one as `(re + im*I)`. Negative exponents are parenthesized,
//! `x^(-2)`. Every number reads back to the same double: [`exact`] writes integers below
//! 10^15 as integers and every other value with 17 significant digits, [`shortest`] the
//! shortest decimal that reads back (the YAML writer's choice).

use crate::system::Polynomial;

/// How a format writes a polynomial.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// The power operator: `^` or `**`.
    pub power: &'static str,
    /// The imaginary unit: `i` or `I`.
    pub imaginary: &'static str,
    /// The text of a non-negative double.
    pub real: fn(f64) -> String,
}

/// `v` as an integer when it is one below 10^15 in magnitude, else in scientific notation
/// with 17 significant digits (`1.1000000000000001e0`, `2.4999999999999999e-17`), which
/// reads back to exactly `v` in any correctly rounding reader. The exponent has no `+`
/// sign: Bertini's parser refuses `e+00`.
pub fn exact(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v}")
    } else {
        format!("{v:.16e}")
    }
}

/// The shortest decimal that reads back to exactly `v` (integers without a fraction).
pub fn shortest(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v}")
    } else {
        format!("{v:?}")
    }
}

/// `p` in `style`, with `vars` naming the exponent columns; `0` for the zero polynomial.
pub fn poly(p: &Polynomial, vars: &[String], style: &Style) -> String {
    if p.terms.is_empty() {
        return "0".to_string();
    }
    let real = style.real;
    let im = style.imaginary;
    let pw = style.power;
    let mut s = String::new();
    for (k, t) in p.terms.iter().enumerate() {
        let mut factors: Vec<String> = Vec::new();
        for (j, &a) in t.exponents.iter().enumerate() {
            match a {
                0 => {}
                1 => factors.push(vars[j].clone()),
                a if a < 0 => factors.push(format!("{}{pw}({a})", vars[j])),
                a => factors.push(format!("{}{pw}{a}", vars[j])),
            }
        }
        let c = t.coeff;
        let (neg, coef) = if c.im == 0.0 {
            let mag = c.re.abs();
            if mag == 1.0 && !factors.is_empty() {
                (c.re < 0.0, None)
            } else {
                (c.re < 0.0, Some(real(mag)))
            }
        } else if c.re == 0.0 {
            (c.im < 0.0, Some(format!("{}*{im}", real(c.im.abs()))))
        } else {
            let sign = if c.im < 0.0 { '-' } else { '+' };
            let re = if c.re < 0.0 {
                format!("-{}", real(-c.re))
            } else {
                real(c.re)
            };
            (
                false,
                Some(format!("({re} {sign} {}*{im})", real(c.im.abs()))),
            )
        };
        match (k, neg) {
            (0, true) => s.push('-'),
            (0, false) => {}
            (_, true) => s.push_str(" - "),
            (_, false) => s.push_str(" + "),
        }
        let mut parts = Vec::with_capacity(factors.len() + 1);
        if let Some(c) = coef {
            parts.push(c);
        }
        parts.extend(factors);
        s.push_str(&parts.join("*"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_numbers_read_back() {
        for v in [
            0.1,
            1.1,
            0.51234,
            1.0 / 3.0,
            5e-324,
            f64::MAX,
            1e15,
            123456789012345.0,
            2.5e-17,
        ] {
            let s = exact(v);
            assert_eq!(s.parse::<f64>().unwrap(), v, "{s}");
        }
        assert_eq!(exact(2.0), "2");
        assert_eq!(exact(1.1), "1.1000000000000001e0");
        assert_eq!(exact(2.5e-17), "2.4999999999999999e-17");
        assert_eq!(shortest(1.1), "1.1");
    }
}
