//! Polynomial expressions: a tokenizer and a recursive-descent parser that expands the
//! expression into a sparse [`Polynomial`] (products and integer powers of sums are
//! multiplied out, like terms combined).
//!
//! Grammar (whitespace between tokens is ignored):
//! ```text
//! sum      := product (('+' | '-') product)*
//! product  := unary (('*' | '/') unary)*          '/' only by a constant
//! unary    := ('+' | '-') unary | power
//! power    := atom (('^' | '**') exponent)?      one exponent; x^2^3 is rejected
//! exponent := sign? INTEGER | '(' sign? INTEGER ')'
//! atom     := NUMBER | 'i' | 'I' | VARIABLE | '(' sum ')'
//! NUMBER   := digits ('.' digits?)? ([eE] [+-]? digits)? | '.' digits (...)?
//! VARIABLE := [A-Za-z_][A-Za-z0-9_]*  (not i, I, e, E)
//! ```
//! Errors carry the byte offset of the offending token within the expression.

use crate::system::{Polynomial, Term};
use num_complex::Complex64;
use std::collections::HashMap;

/// Largest number of terms an expanded expression may have.
pub const MAX_TERMS: usize = 1_000_000;
/// Largest number of term products one multiplication may form.
pub const MAX_PRODUCTS: usize = 20_000_000;
/// Largest exponent of one variable in a term, in magnitude (2^20): the mixed-cell code
/// lifts supports in exact integer arithmetic sized for it, and a degree this large is
/// already far beyond what path tracking can follow.
pub const MAX_EXPONENT: i64 = 1 << 20;
/// Deepest nesting of parentheses and unary signs: the parser recurses once per level
/// (about 1 KB of stack each), so a deeper expression would overflow the stack of a
/// 2 MiB thread instead of giving an error.
pub const MAX_DEPTH: usize = 500;

/// Names that cannot be variables: the imaginary unit and the exponent letters.
pub const RESERVED: [&str; 4] = ["i", "I", "e", "E"];

/// A parse failure at byte `offset` of the expression.
#[derive(Clone, Debug, PartialEq)]
pub struct ExprError {
    pub offset: usize,
    pub message: String,
}

fn err<T>(offset: usize, message: impl Into<String>) -> Result<T, ExprError> {
    Err(ExprError {
        offset,
        message: message.into(),
    })
}

/// True when `s` is an identifier `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    match cs.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Num(f64),
    Ident,
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    LParen,
    RParen,
    End,
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Kind,
    pos: usize,
    len: usize,
}

fn tokenize(src: &str) -> Result<Vec<Token>, ExprError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut p = 0;
    while p < b.len() {
        let c = b[p];
        if c.is_ascii_whitespace() {
            p += 1;
            continue;
        }
        let start = p;
        let kind = match c {
            b'+' => Kind::Plus,
            b'-' => Kind::Minus,
            b'/' => Kind::Slash,
            b'^' => Kind::Caret,
            b'(' => Kind::LParen,
            b')' => Kind::RParen,
            b'*' => {
                if b.get(p + 1) == Some(&b'*') {
                    p += 1;
                    Kind::Caret
                } else {
                    Kind::Star
                }
            }
            b'0'..=b'9' | b'.' => {
                let digits = |p: &mut usize| {
                    let s = *p;
                    while *p < b.len() && b[*p].is_ascii_digit() {
                        *p += 1;
                    }
                    *p - s
                };
                let mut nd = digits(&mut p);
                if p < b.len() && b[p] == b'.' {
                    p += 1;
                    nd += digits(&mut p);
                }
                if nd == 0 {
                    return err(start, "a number needs at least one digit");
                }
                if p < b.len() && (b[p] == b'e' || b[p] == b'E') {
                    let mut q = p + 1;
                    if q < b.len() && (b[q] == b'+' || b[q] == b'-') {
                        q += 1;
                    }
                    if q < b.len() && b[q].is_ascii_digit() {
                        p = q;
                        digits(&mut p);
                    } else {
                        return err(
                            p,
                            "malformed exponent in number (expected digits after 'e')",
                        );
                    }
                }
                let text = &src[start..p];
                let v: f64 = match text.parse() {
                    Ok(v) => v,
                    Err(_) => return err(start, format!("malformed number '{text}'")),
                };
                if !v.is_finite() {
                    return err(
                        start,
                        format!("non-finite coefficient '{text}' (outside the range of a double)"),
                    );
                }
                super::rounding::literal(text, v);
                out.push(Token {
                    kind: Kind::Num(v),
                    pos: start,
                    len: p - start,
                });
                continue;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while p < b.len() && (b[p].is_ascii_alphanumeric() || b[p] == b'_') {
                    p += 1;
                }
                out.push(Token {
                    kind: Kind::Ident,
                    pos: start,
                    len: p - start,
                });
                continue;
            }
            _ => {
                let ch = src[p..].chars().next().unwrap_or('?');
                return err(p, format!("unexpected character '{ch}'"));
            }
        };
        p += 1;
        out.push(Token {
            kind,
            pos: start,
            len: p - start,
        });
    }
    out.push(Token {
        kind: Kind::End,
        pos: src.len(),
        len: 0,
    });
    Ok(out)
}

/// The identifiers of `src` that are not the imaginary unit, with their byte offsets,
/// in order of appearance (used to collect PHCpack's variables).
pub fn identifiers(src: &str) -> Result<Vec<(String, usize)>, ExprError> {
    Ok(tokenize(src)?
        .into_iter()
        .filter(|t| t.kind == Kind::Ident)
        .map(|t| (src[t.pos..t.pos + t.len].to_string(), t.pos))
        .filter(|(s, _)| s != "i" && s != "I")
        .collect())
}

/// Parses `src` into a polynomial in the variables `vars` (name → coordinate index,
/// `n` coordinates).
pub fn parse_expr(
    src: &str,
    vars: &HashMap<String, usize>,
    n: usize,
) -> Result<Polynomial, ExprError> {
    parse_expr_with(src, vars, n, &HashMap::new())
}

/// [`parse_expr`] where a name of `defs` stands for its polynomial (named constants and
/// Bertini's subfunctions: `g = x^2 + 1` makes `g^2` the expansion of `(x^2 + 1)^2`).
/// Variables take precedence over definitions of the same name.
pub fn parse_expr_with(
    src: &str,
    vars: &HashMap<String, usize>,
    n: usize,
    defs: &HashMap<String, Polynomial>,
) -> Result<Polynomial, ExprError> {
    super::rounding::start_expression();
    let toks = tokenize(src)?;
    if toks.len() == 1 {
        return err(0, "empty expression");
    }
    let mut p = Parser {
        src,
        toks,
        at: 0,
        vars,
        defs,
        n,
        depth: 0,
    };
    let terms = p.sum()?;
    let t = p.peek();
    match t.kind {
        Kind::End => Ok(Polynomial { terms }),
        Kind::RParen => err(t.pos, "unmatched ')'"),
        Kind::Num(_) | Kind::Ident | Kind::LParen => err(
            t.pos,
            format!(
                "missing operator before '{}' (implicit multiplication is not allowed; write '*')",
                p.text(t)
            ),
        ),
        _ => err(t.pos, format!("unexpected '{}'", p.text(t))),
    }
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    at: usize,
    vars: &'a HashMap<String, usize>,
    /// Named polynomials (see [`parse_expr_with`]).
    defs: &'a HashMap<String, Polynomial>,
    n: usize,
    /// Current nesting of [`Parser::unary`] calls (parentheses and signs).
    depth: usize,
}

type Terms = Vec<Term>;

impl Parser<'_> {
    fn peek(&self) -> Token {
        self.toks[self.at]
    }
    fn next(&mut self) -> Token {
        let t = self.toks[self.at];
        if t.kind != Kind::End {
            self.at += 1;
        }
        t
    }
    fn text(&self, t: Token) -> &str {
        &self.src[t.pos..t.pos + t.len]
    }

    fn sum(&mut self) -> Result<Terms, ExprError> {
        let mut acc = SumAccumulator::new(self.product()?);
        loop {
            let t = self.peek();
            match t.kind {
                Kind::Plus | Kind::Minus => {
                    self.next();
                    let rhs = self.product()?;
                    acc.add(rhs, t.kind == Kind::Minus, t.pos)?;
                }
                _ => return Ok(acc.finish()),
            }
        }
    }

    fn product(&mut self) -> Result<Terms, ExprError> {
        let mut acc = self.unary()?;
        loop {
            let t = self.peek();
            match t.kind {
                Kind::Star => {
                    self.next();
                    let rhs = self.unary()?;
                    acc = mul(&acc, &rhs, t.pos)?;
                }
                Kind::Slash => {
                    self.next();
                    let rhs_pos = self.peek().pos;
                    let rhs = self.unary()?;
                    acc = div(acc, &rhs, t.pos, rhs_pos)?;
                }
                _ => return Ok(acc),
            }
        }
    }

    fn unary(&mut self) -> Result<Terms, ExprError> {
        if self.depth >= MAX_DEPTH {
            return err(
                self.peek().pos,
                format!("expression nested too deeply (more than {MAX_DEPTH} levels of parentheses and signs)"),
            );
        }
        self.depth += 1;
        let v = self.unary_inner();
        self.depth -= 1;
        v
    }

    fn unary_inner(&mut self) -> Result<Terms, ExprError> {
        match self.peek().kind {
            Kind::Minus => {
                self.next();
                let mut v = self.unary()?;
                negate(&mut v);
                Ok(v)
            }
            Kind::Plus => {
                self.next();
                self.unary()
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<Terms, ExprError> {
        let base_pos = self.peek().pos;
        let base = self.atom()?;
        let t = self.peek();
        if t.kind != Kind::Caret {
            return Ok(base);
        }
        self.next();
        let k = self.exponent()?;
        let v = pow(&base, k, t.pos, base_pos, self.n)?;
        let t2 = self.peek();
        if t2.kind == Kind::Caret {
            return err(
                t2.pos,
                "chained exponent is ambiguous; use parentheses, e.g. (x^2)^3",
            );
        }
        Ok(v)
    }

    fn exponent(&mut self) -> Result<i64, ExprError> {
        let open = self.peek();
        let paren = open.kind == Kind::LParen;
        if paren {
            self.next();
        }
        let mut sign = 1i64;
        loop {
            match self.peek().kind {
                Kind::Minus => sign = -sign,
                Kind::Plus => {}
                _ => break,
            }
            self.next();
        }
        let t = self.next();
        let k = match t.kind {
            Kind::Num(v) => {
                if v.fract() != 0.0 {
                    return err(
                        t.pos,
                        format!(
                            "non-integer exponent '{}': not a polynomial (exponents must be integers)",
                            self.text(t)
                        ),
                    );
                }
                if v.abs() > MAX_EXPONENT as f64 {
                    return err(
                        t.pos,
                        format!(
                            "exponent '{}' is too large (the limit is 2^20 = {MAX_EXPONENT})",
                            self.text(t)
                        ),
                    );
                }
                sign * v as i64
            }
            Kind::Ident => {
                return err(
                    t.pos,
                    format!(
                        "exponent '{}' is not an integer constant: not a polynomial",
                        self.text(t)
                    ),
                )
            }
            Kind::LParen => {
                return err(
                    t.pos,
                    "an exponent must be an integer literal such as 3 or (-2)",
                )
            }
            Kind::End => return err(t.pos, "unexpected end of expression: expected an exponent"),
            _ => {
                return err(
                    t.pos,
                    format!("expected an integer exponent, found '{}'", self.text(t)),
                )
            }
        };
        if paren {
            let c = self.next();
            if c.kind != Kind::RParen {
                return err(
                    c.pos,
                    "an exponent must be an integer literal such as 3 or (-2)",
                );
            }
        }
        Ok(k)
    }

    fn atom(&mut self) -> Result<Terms, ExprError> {
        let t = self.next();
        match t.kind {
            Kind::Num(v) => Ok(constant(Complex64::new(v, 0.0), self.n)),
            Kind::Ident => {
                let name = self.text(t);
                if name == "i" || name == "I" {
                    return Ok(constant(Complex64::new(0.0, 1.0), self.n));
                }
                if let Some(&j) = self.vars.get(name) {
                    let mut e = vec![0; self.n];
                    e[j] = 1;
                    return Ok(vec![Term {
                        coeff: Complex64::new(1.0, 0.0),
                        exponents: e,
                    }]);
                }
                if let Some(p) = self.defs.get(name) {
                    return Ok(p.terms.clone());
                }
                let lower = name.to_ascii_lowercase();
                if lower == "nan" || lower == "inf" || lower == "infinity" {
                    return err(t.pos, format!("non-finite coefficient '{name}'"));
                }
                if name == "e" || name == "E" {
                    return err(
                        t.pos,
                        format!("'{name}' is not a number or a variable (write 1e5, not e5; the constant e is not supported)"),
                    );
                }
                if self.peek().kind == Kind::LParen {
                    return err(
                        t.pos,
                        format!("'{name}(…)': functions (sin, exp, sqrt, …) are not polynomial; only + - * / ^ are allowed"),
                    );
                }
                err(t.pos, format!("unknown variable '{name}'"))
            }
            Kind::LParen => {
                let v = self.sum()?;
                let c = self.peek();
                if c.kind != Kind::RParen {
                    if c.kind == Kind::End {
                        return err(t.pos, "unclosed '(' (missing ')')");
                    }
                    return err(
                        c.pos,
                        format!("expected ')' or an operator, found '{}'", self.text(c)),
                    );
                }
                self.next();
                Ok(v)
            }
            Kind::End => err(t.pos, "unexpected end of expression: expected an operand"),
            Kind::RParen => err(t.pos, "unexpected ')': expected an operand"),
            _ => err(
                t.pos,
                format!("unexpected '{}': expected an operand", self.text(t)),
            ),
        }
    }
}

fn constant(c: Complex64, n: usize) -> Terms {
    if c == Complex64::new(0.0, 0.0) {
        return Vec::new();
    }
    vec![Term {
        coeff: c,
        exponents: vec![0; n],
    }]
}

/// The running value of `a ± b ± c …`: each operand's terms are added in time linear in
/// the operand (an index from exponent vector to term), so a sum of N terms costs O(N),
/// not O(N²) as recombining the whole sum after each operand did. The result is the same
/// as combining after every operand: terms in order of first appearance, a term that
/// cancels to exactly 0 is dropped (and goes to the end if it comes back).
struct SumAccumulator {
    terms: Terms,
    /// Index of each live exponent vector in `terms`.
    index: HashMap<Vec<i32>, usize>,
    /// Terms whose coefficient is exactly 0 (dropped by `finish`).
    zeros: usize,
}

impl SumAccumulator {
    fn new(first: Terms) -> Self {
        let mut acc = SumAccumulator {
            terms: Vec::with_capacity(first.len()),
            index: HashMap::with_capacity(first.len()),
            zeros: 0,
        };
        for t in first {
            acc.add_term(t);
        }
        acc
    }

    fn add_term(&mut self, t: Term) {
        let zero = Complex64::new(0.0, 0.0);
        match self.index.get(&t.exponents) {
            Some(&k) => {
                add_checked(&mut self.terms[k].coeff, t.coeff);
                if self.terms[k].coeff == zero {
                    self.index.remove(&t.exponents);
                    self.zeros += 1;
                }
            }
            None if t.coeff == zero => {}
            None => {
                self.index.insert(t.exponents.clone(), self.terms.len());
                self.terms.push(t);
            }
        }
    }

    /// Adds (or subtracts) `rhs`; errors as [`check_size`] and [`check_finite`] at `pos`.
    fn add(&mut self, rhs: Terms, subtract: bool, pos: usize) -> Result<(), ExprError> {
        let touched: Vec<Vec<i32>> = rhs.iter().map(|t| t.exponents.clone()).collect();
        for mut t in rhs {
            if subtract {
                t.coeff = -t.coeff;
            }
            self.add_term(t);
        }
        if self.terms.len() - self.zeros > MAX_TERMS {
            return err(
                pos,
                format!("expansion too large: more than {MAX_TERMS} terms"),
            );
        }
        for e in &touched {
            if let Some(&k) = self.index.get(e) {
                let c = self.terms[k].coeff;
                if !c.re.is_finite() || !c.im.is_finite() {
                    return err(pos, "non-finite coefficient (overflow while expanding)");
                }
            }
        }
        // Keep the dropped terms from piling up (x - x + x - x …).
        if self.zeros > 1024 && self.zeros * 2 > self.terms.len() {
            let zero = Complex64::new(0.0, 0.0);
            self.terms.retain(|t| t.coeff != zero);
            self.zeros = 0;
            self.index = self
                .terms
                .iter()
                .enumerate()
                .map(|(k, t)| (t.exponents.clone(), k))
                .collect();
        }
        Ok(())
    }

    fn finish(mut self) -> Terms {
        if self.zeros > 0 {
            let zero = Complex64::new(0.0, 0.0);
            self.terms.retain(|t| t.coeff != zero);
        }
        self.terms
    }
}

/// Like terms combined, in order of first appearance, zeros dropped (as
/// [`Polynomial::from_terms`]), with the sums checked for rounding.
fn combine(t: Terms) -> Terms {
    let mut out: Terms = Vec::with_capacity(t.len());
    let mut index: HashMap<Vec<i32>, usize> = HashMap::with_capacity(t.len());
    for term in t {
        match index.get(&term.exponents) {
            Some(&k) => add_checked(&mut out[k].coeff, term.coeff),
            None => {
                index.insert(term.exponents.clone(), out.len());
                out.push(term);
            }
        }
    }
    out.retain(|t| t.coeff != Complex64::new(0.0, 0.0));
    out
}

/// `*acc += c`, reporting integer sums a double cannot hold ([`super::rounding`]).
fn add_checked(acc: &mut Complex64, c: Complex64) {
    let old = *acc;
    *acc += c;
    super::rounding::sum(old.re, c.re, acc.re);
    super::rounding::sum(old.im, c.im, acc.im);
}

fn negate(t: &mut Terms) {
    for x in t {
        x.coeff = -x.coeff;
    }
}

fn check_size(t: &Terms, pos: usize) -> Result<(), ExprError> {
    if t.len() > MAX_TERMS {
        return err(
            pos,
            format!("expansion too large: more than {MAX_TERMS} terms"),
        );
    }
    Ok(())
}

fn check_finite(t: &Terms, pos: usize) -> Result<(), ExprError> {
    if t.iter()
        .any(|x| !x.coeff.re.is_finite() || !x.coeff.im.is_finite())
    {
        return err(pos, "non-finite coefficient (overflow while expanding)");
    }
    Ok(())
}

fn is_constant(t: &Terms) -> bool {
    t.is_empty() || (t.len() == 1 && t[0].exponents.iter().all(|&a| a == 0))
}

/// Complex product; exact when either factor is real (no rounding from zero parts).
/// Integer products a double cannot hold are reported ([`super::rounding`]).
fn cmul(a: Complex64, b: Complex64) -> Complex64 {
    let p = if b.im == 0.0 {
        Complex64::new(a.re * b.re, a.im * b.re)
    } else if a.im == 0.0 {
        Complex64::new(a.re * b.re, a.re * b.im)
    } else {
        a * b
    };
    super::rounding::complex_product(a, b, p);
    p
}

/// Complex quotient; exact (correctly rounded per part) when the divisor is real.
/// Quotients of integers a double cannot hold are reported ([`super::rounding`]).
fn cdiv(a: Complex64, b: Complex64) -> Complex64 {
    if b.im == 0.0 {
        let q = Complex64::new(a.re / b.re, a.im / b.re);
        super::rounding::quotient(a.re, b.re, q.re);
        super::rounding::quotient(a.im, b.re, q.im);
        q
    } else {
        a / b
    }
}

/// The error of an expanded exponent `v` above [`MAX_EXPONENT`].
fn exponent_limit(v: i64) -> String {
    format!("exponent {v} of a variable is too large after expanding (the limit is 2^20 = {MAX_EXPONENT})")
}

fn mul(a: &Terms, b: &Terms, pos: usize) -> Result<Terms, ExprError> {
    if a.len().saturating_mul(b.len()) > MAX_PRODUCTS {
        return err(
            pos,
            format!(
                "expansion too large: a product of {} by {} terms",
                a.len(),
                b.len()
            ),
        );
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            let mut e = x.exponents.clone();
            for (ej, &bj) in e.iter_mut().zip(&y.exponents) {
                let v = *ej as i64 + bj as i64;
                if v.abs() > MAX_EXPONENT {
                    return err(pos, exponent_limit(v));
                }
                *ej = v as i32;
            }
            out.push(Term {
                coeff: cmul(x.coeff, y.coeff),
                exponents: e,
            });
        }
    }
    let out = combine(out);
    check_size(&out, pos)?;
    check_finite(&out, pos)?;
    Ok(out)
}

fn div(a: Terms, b: &Terms, pos: usize, rhs_pos: usize) -> Result<Terms, ExprError> {
    if !is_constant(b) {
        return err(
            rhs_pos,
            "division by a non-constant expression: not a polynomial (only division by a constant is allowed)",
        );
    }
    if b.is_empty() {
        return err(pos, "division by zero");
    }
    let c = b[0].coeff;
    let out: Terms = a
        .into_iter()
        .map(|t| Term {
            coeff: cdiv(t.coeff, c),
            exponents: t.exponents,
        })
        .collect();
    let out = combine(out);
    check_finite(&out, pos)?;
    Ok(out)
}

fn pow(base: &Terms, k: i64, pos: usize, base_pos: usize, n: usize) -> Result<Terms, ExprError> {
    if k == 0 {
        return Ok(constant(Complex64::new(1.0, 0.0), n));
    }
    if base.is_empty() {
        if k < 0 {
            return err(pos, "division by zero (negative power of zero)");
        }
        return Ok(Vec::new());
    }
    if base.len() == 1 {
        // A monomial: c^k x^(k a), Laurent when k < 0.
        let t = &base[0];
        let mut e = Vec::with_capacity(n);
        for &a in &t.exponents {
            let v = (a as i64) * k;
            if v.abs() > MAX_EXPONENT {
                return err(pos, exponent_limit(v));
            }
            e.push(v as i32);
        }
        let mut c = Complex64::new(1.0, 0.0);
        let mut b = t.coeff;
        let mut m = k.unsigned_abs();
        while m > 0 {
            if m & 1 == 1 {
                c = cmul(c, b);
            }
            m >>= 1;
            if m > 0 {
                b = cmul(b, b);
            }
        }
        if k < 0 {
            c = cdiv(Complex64::new(1.0, 0.0), c);
        }
        let out = combine(vec![Term {
            coeff: c,
            exponents: e,
        }]);
        check_finite(&out, pos)?;
        return Ok(out);
    }
    if k < 0 {
        return err(
            base_pos,
            "negative power of a sum: not a polynomial (only monomials may have negative exponents)",
        );
    }
    // Binary exponentiation; each multiplication checks the size bounds.
    let mut result: Option<Terms> = None;
    let mut b = base.clone();
    let mut m = k as u64;
    while m > 0 {
        if m & 1 == 1 {
            result = Some(match result {
                None => b.clone(),
                Some(r) => mul(&r, &b, pos)?,
            });
        }
        m >>= 1;
        if m > 0 {
            b = mul(&b, &b, pos)?;
        }
    }
    Ok(result.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(names: &[&str]) -> HashMap<String, usize> {
        names
            .iter()
            .enumerate()
            .map(|(k, s)| (s.to_string(), k))
            .collect()
    }

    #[test]
    fn binomial_expansion_matches_pascal() {
        let v = vars(&["x", "y"]);
        let p = parse_expr("(x+y)^6", &v, 2).unwrap();
        assert_eq!(p.terms.len(), 7);
        for t in &p.terms {
            let a = t.exponents[0] as u64;
            let binom = (1..=a).fold(1u64, |acc, j| acc * (7 - j) / j);
            assert_eq!(t.coeff, Complex64::new(binom as f64, 0.0), "{t:?}");
        }
    }

    #[test]
    fn numbers_and_imaginary_unit() {
        let v = vars(&["x"]);
        let p = parse_expr("1.5E-3*x + 2e4 + (1+2*I)*i", &v, 1).unwrap();
        let c: HashMap<Vec<i32>, Complex64> = p
            .terms
            .iter()
            .map(|t| (t.exponents.clone(), t.coeff))
            .collect();
        assert_eq!(c[&vec![1]], Complex64::new(1.5e-3, 0.0));
        assert_eq!(c[&vec![0]], Complex64::new(2e4 - 2.0, 1.0));
    }

    #[test]
    fn laurent_monomial_and_rejections() {
        let v = vars(&["x", "y"]);
        let p = parse_expr("(2*x*y^2)^-2", &v, 2).unwrap();
        assert_eq!(p.terms.len(), 1);
        assert_eq!(p.terms[0].exponents, vec![-2, -4]);
        assert_eq!(p.terms[0].coeff, Complex64::new(0.25, 0.0));
        assert!(parse_expr("(x+y)^-1", &v, 2)
            .unwrap_err()
            .message
            .contains("not a polynomial"));
        assert!(parse_expr("1/x", &v, 2)
            .unwrap_err()
            .message
            .contains("not a polynomial"));
        assert!(parse_expr("x^1.5", &v, 2)
            .unwrap_err()
            .message
            .contains("non-integer"));
        assert_eq!(parse_expr("x*+", &v, 2).unwrap_err().offset, 3);
        assert!(parse_expr("2x", &v, 2)
            .unwrap_err()
            .message
            .contains("implicit"));
        assert!(parse_expr("(x+y+1)^100000", &v, 2)
            .unwrap_err()
            .message
            .contains("too large"));
    }
}
