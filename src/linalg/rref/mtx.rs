//! Matrix Market I/O (NIST format, <https://math.nist.gov/MatrixMarket/formats.html>):
//! `array` and `coordinate` layouts; `integer`, `real`, `complex` and `pattern` fields;
//! `general`, `symmetric`, `skew-symmetric` and `hermitian` symmetry. Integers are kept
//! as text until the target field is known, so that `--prime P` reduces integers of any
//! size exactly.

use super::dense::Matrix;
use super::field::{Zp32, Zp64};
use crate::error::InputError;
use num_complex::Complex64;
use std::io::Write;

/// Largest dense size accepted (rows · cols), 2^28 entries (2 GiB of f64).
pub const MAX_ENTRIES: usize = 1 << 28;

/// The value type declared in the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MtxField {
    Integer,
    Real,
    Complex,
    Pattern,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Symmetry {
    General,
    Symmetric,
    Skew,
    Hermitian,
}

/// One stored value.
#[derive(Clone, Debug, PartialEq)]
pub enum MtxValue {
    /// Decimal integer text (optional sign, digits).
    Int(String),
    Real(f64),
    Complex(f64, f64),
}

/// A parsed Matrix Market file: all entries (symmetry already expanded), 0-based.
#[derive(Clone, Debug)]
pub struct MtxData {
    pub file: String,
    pub field: MtxField,
    pub rows: usize,
    pub cols: usize,
    pub entries: Vec<(usize, usize, MtxValue)>,
    /// The line (1-based) of the file each entry of `entries` was read from.
    pub lines: Vec<usize>,
}

fn err(file: &str, line: usize, col: usize, msg: impl Into<String>) -> InputError {
    InputError::new(file, msg).at(line, col)
}

/// Tokens of a line with their 1-based columns.
fn tokens(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in line.char_indices() {
        if ch.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s + 1, &line[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s + 1, &line[s..]));
    }
    out
}

fn is_int_text(s: &str) -> bool {
    let d = s.strip_prefix(['+', '-']).unwrap_or(s);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
}

/// Parses Matrix Market text; `file` names the source in errors.
pub fn parse(text: &str, file: &str) -> Result<MtxData, InputError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let (_, header) = lines
        .next()
        .ok_or_else(|| InputError::new(file, "empty file (expected a %%MatrixMarket header)"))?;
    let h = tokens(header);
    if h.is_empty() || !h[0].1.eq_ignore_ascii_case("%%MatrixMarket") {
        return Err(err(file, 1, 1, "missing '%%MatrixMarket' header"));
    }
    if h.len() != 5 {
        return Err(err(
            file,
            1,
            1,
            "header must read '%%MatrixMarket matrix <array|coordinate> <field> <symmetry>'",
        ));
    }
    let low = |k: usize| h[k].1.to_ascii_lowercase();
    if low(1) != "matrix" {
        return Err(err(
            file,
            1,
            h[1].0,
            format!("unsupported object '{}' (only 'matrix')", h[1].1),
        ));
    }
    let coordinate = match low(2).as_str() {
        "coordinate" => true,
        "array" => false,
        _ => {
            return Err(err(
                file,
                1,
                h[2].0,
                format!("unknown format '{}' (array or coordinate)", h[2].1),
            ))
        }
    };
    let field = match low(3).as_str() {
        "integer" => MtxField::Integer,
        "real" | "double" => MtxField::Real,
        "complex" => MtxField::Complex,
        "pattern" => MtxField::Pattern,
        _ => {
            return Err(err(
                file,
                1,
                h[3].0,
                format!(
                    "unknown field '{}' (integer, real, complex, pattern)",
                    h[3].1
                ),
            ))
        }
    };
    let sym = match low(4).as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::Skew,
        "hermitian" => Symmetry::Hermitian,
        _ => {
            return Err(err(
                file,
                1,
                h[4].0,
                format!("unknown symmetry '{}'", h[4].1),
            ))
        }
    };
    if field == MtxField::Pattern && !coordinate {
        return Err(err(
            file,
            1,
            h[3].0,
            "'pattern' is only allowed with 'coordinate'",
        ));
    }
    if sym == Symmetry::Hermitian && field != MtxField::Complex {
        return Err(err(
            file,
            1,
            h[4].0,
            "'hermitian' needs the 'complex' field",
        ));
    }
    let mut data = lines.filter(|(_, l)| {
        let t = l.trim_start();
        !t.is_empty() && !t.starts_with('%')
    });
    let (sl, size_line) = data
        .next()
        .ok_or_else(|| err(file, 1, 1, "missing size line"))?;
    let st = tokens(size_line);
    let want = if coordinate { 3 } else { 2 };
    if st.len() != want {
        return Err(err(
            file,
            sl,
            1,
            format!(
                "size line needs {want} integers ({})",
                if coordinate {
                    "rows cols entries"
                } else {
                    "rows cols"
                }
            ),
        ));
    }
    let num = |(c, s): (usize, &str)| {
        s.parse::<usize>()
            .map_err(|_| err(file, sl, c, format!("'{s}' is not a non-negative integer")))
    };
    let rows = num(st[0])?;
    let cols = num(st[1])?;
    if sym != Symmetry::General && rows != cols {
        return Err(err(
            file,
            sl,
            1,
            "a symmetric / skew-symmetric / hermitian matrix must be square",
        ));
    }
    if rows.checked_mul(cols).is_none_or(|x| x > MAX_ENTRIES) {
        return Err(err(
            file,
            sl,
            1,
            format!("matrix {rows} × {cols} too large for the dense engine"),
        ));
    }
    let nvals = match field {
        MtxField::Complex => 2,
        MtxField::Pattern => 0,
        _ => 1,
    };
    let parse_val = |ln: usize, toks: &[(usize, &str)]| -> Result<MtxValue, InputError> {
        let real = |(c, s): (usize, &str)| {
            s.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| err(file, ln, c, format!("'{s}' is not a finite real number")))
        };
        Ok(match field {
            MtxField::Integer => {
                let (c, s) = toks[0];
                if !is_int_text(s) {
                    return Err(err(
                        file,
                        ln,
                        c,
                        format!("'{s}' is not an integer (header says 'integer')"),
                    ));
                }
                MtxValue::Int(s.to_string())
            }
            MtxField::Real => MtxValue::Real(real(toks[0])?),
            MtxField::Complex => MtxValue::Complex(real(toks[0])?, real(toks[1])?),
            MtxField::Pattern => MtxValue::Int("1".into()),
        })
    };
    let mirror = |v: &MtxValue| -> MtxValue {
        match (sym, v) {
            (Symmetry::Skew, MtxValue::Int(s)) => MtxValue::Int(match s.strip_prefix('-') {
                Some(t) => t.to_string(),
                None => format!("-{}", s.strip_prefix('+').unwrap_or(s)),
            }),
            (Symmetry::Skew, MtxValue::Real(x)) => MtxValue::Real(-x),
            (Symmetry::Skew, MtxValue::Complex(a, b)) => MtxValue::Complex(-a, -b),
            (Symmetry::Hermitian, MtxValue::Complex(a, b)) => MtxValue::Complex(*a, -b),
            _ => v.clone(),
        }
    };
    let mut entries = Vec::new();
    let mut lines = Vec::new();
    let mut push = |i: usize, j: usize, v: MtxValue, ln: usize| -> Result<(), InputError> {
        if sym != Symmetry::General {
            if i < j {
                return Err(err(
                    file,
                    ln,
                    1,
                    format!(
                        "entry ({}, {}) above the diagonal in a {:?} file",
                        i + 1,
                        j + 1,
                        sym
                    )
                    .to_lowercase(),
                ));
            }
            if i == j && sym == Symmetry::Skew {
                return Err(err(file, ln, 1, "diagonal entry in a skew-symmetric file"));
            }
            if i != j {
                entries.push((j, i, mirror(&v)));
                lines.push(ln);
            }
        }
        entries.push((i, j, v));
        lines.push(ln);
        Ok(())
    };
    if coordinate {
        let nnz = num(st[2])?;
        let mut count = 0;
        for (ln, line) in data {
            let t = tokens(line);
            if t.len() != 2 + nvals {
                return Err(err(
                    file,
                    ln,
                    1,
                    format!(
                        "expected {} fields (row col{}), found {}",
                        2 + nvals,
                        ["", " value", " re im"][nvals],
                        t.len()
                    ),
                ));
            }
            let idx = |k: usize, bound: usize, what: &str| -> Result<usize, InputError> {
                let (c, s) = t[k];
                match s.parse::<usize>() {
                    Ok(v) if v >= 1 && v <= bound => Ok(v - 1),
                    _ => Err(err(
                        file,
                        ln,
                        c,
                        format!("{what} index '{s}' out of range 1..={bound}"),
                    )),
                }
            };
            let i = idx(0, rows, "row")?;
            let j = idx(1, cols, "column")?;
            let v = parse_val(ln, &t[2..])?;
            push(i, j, v, ln)?;
            count += 1;
            if count > nnz {
                return Err(err(
                    file,
                    ln,
                    1,
                    format!("more entries than the {nnz} declared"),
                ));
            }
        }
        if count < nnz {
            return Err(InputError::new(
                file,
                format!("{count} entries found, {nnz} declared"),
            ));
        }
    } else {
        // Column-major; symmetric kinds store the lower triangle (skew: strictly lower).
        let mut positions = Vec::new();
        for j in 0..cols {
            let start = match sym {
                Symmetry::General => 0,
                Symmetry::Skew => j + 1,
                _ => j,
            };
            for i in start..rows {
                positions.push((i, j));
            }
        }
        let mut k = 0;
        for (ln, line) in data {
            let t = tokens(line);
            if t.len() != nvals {
                return Err(err(
                    file,
                    ln,
                    1,
                    format!(
                        "expected {nvals} value field(s) per line, found {}",
                        t.len()
                    ),
                ));
            }
            if k >= positions.len() {
                return Err(err(
                    file,
                    ln,
                    1,
                    format!("more values than the {} expected", positions.len()),
                ));
            }
            let v = parse_val(ln, &t)?;
            let (i, j) = positions[k];
            push(i, j, v, ln)?;
            k += 1;
        }
        if k < positions.len() {
            return Err(InputError::new(
                file,
                format!("{k} values found, {} expected", positions.len()),
            ));
        }
    }
    Ok(MtxData {
        file: file.to_string(),
        field,
        rows,
        cols,
        entries,
        lines,
    })
}

/// Reads and parses a Matrix Market file.
pub fn read(path: &std::path::Path) -> crate::Result<MtxData> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::Error::io(format!("reading {name}"), e))?;
    Ok(parse(&text, &name)?)
}

/// An integer's text reduced modulo p into [0, p).
fn int_mod(s: &str, p: u64) -> u64 {
    let (neg, d) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let mut r: u128 = 0;
    for b in d.bytes() {
        r = (r * 10 + (b - b'0') as u128) % p as u128;
    }
    let r = r as u64;
    if neg && r != 0 {
        p - r
    } else {
        r
    }
}

impl MtxData {
    fn need_integer(&self) -> Result<(), InputError> {
        match self.field {
            MtxField::Integer | MtxField::Pattern => Ok(()),
            _ => Err(InputError::new(
                &self.file,
                format!(
                    "--prime needs an integer (or pattern) matrix; this file is {:?}",
                    self.field
                )
                .to_lowercase(),
            )),
        }
    }
    fn fill<E: Copy>(&self, zero: E, conv: impl Fn(&MtxValue) -> E) -> Matrix<E> {
        let mut m = Matrix::filled(self.rows, self.cols, zero);
        for (i, j, v) in &self.entries {
            m.set(*i, *j, conv(v));
        }
        m
    }
    /// The matrix mod p (u32 words); real / complex input is an error.
    pub fn to_zp32(&self, f: &Zp32) -> Result<Matrix<u32>, InputError> {
        self.need_integer()?;
        let p = f.prime() as u64;
        Ok(self.fill(0u32, |v| match v {
            MtxValue::Int(s) => int_mod(s, p) as u32,
            _ => 0,
        }))
    }
    /// The matrix mod p (u64 words); real / complex input is an error.
    pub fn to_zp64(&self, f: &Zp64) -> Result<Matrix<u64>, InputError> {
        self.need_integer()?;
        let p = f.prime();
        Ok(self.fill(0u64, |v| match v {
            MtxValue::Int(s) => int_mod(s, p),
            _ => 0,
        }))
    }
    /// An integer entry that has no finite double (more than 308 digits), named by its
    /// line: reading it as a float would give inf and a wrong rank.
    fn check_ints_fit_f64(&self) -> Result<(), InputError> {
        for (k, (i, j, v)) in self.entries.iter().enumerate() {
            if let MtxValue::Int(s) = v {
                if !s.parse::<f64>().is_ok_and(f64::is_finite) {
                    let line = self.lines.get(k).copied().unwrap_or(0);
                    let digits = s.trim_start_matches(['+', '-']).len();
                    return Err(InputError::new(
                        &self.file,
                        format!(
                            "entry ({}, {}): the {digits}-digit integer is outside the range of a double; use --prime P to reduce it exactly",
                            i + 1,
                            j + 1
                        ),
                    )
                    .at(line, 1));
                }
            }
        }
        Ok(())
    }
    /// Real matrix (integers converted to the nearest f64); complex input and an integer
    /// beyond the double range are errors.
    pub fn to_f64(&self) -> Result<Matrix<f64>, InputError> {
        if self.field == MtxField::Complex {
            return Err(InputError::new(
                &self.file,
                "complex matrix cannot be read as real",
            ));
        }
        self.check_ints_fit_f64()?;
        Ok(self.fill(0.0, |v| match v {
            MtxValue::Int(s) => s.parse::<f64>().unwrap_or(f64::NAN),
            MtxValue::Real(x) => *x,
            MtxValue::Complex(a, _) => *a,
        }))
    }
    /// Complex matrix (any field); an integer beyond the double range is an error.
    pub fn to_c64(&self) -> Result<Matrix<Complex64>, InputError> {
        self.check_ints_fit_f64()?;
        Ok(self.fill(Complex64::new(0.0, 0.0), |v| match v {
            MtxValue::Int(s) => Complex64::new(s.parse::<f64>().unwrap_or(f64::NAN), 0.0),
            MtxValue::Real(x) => Complex64::new(*x, 0.0),
            MtxValue::Complex(a, b) => Complex64::new(*a, *b),
        }))
    }
}

/// Writes a dense matrix in `array general` layout (column-major). `field` is the
/// header's field word; `fmt` prints one entry (two numbers for complex).
pub fn write_array<E: Copy, W: Write>(
    w: &mut W,
    a: &Matrix<E>,
    field: &str,
    comment: &str,
    fmt: impl Fn(E) -> String,
) -> std::io::Result<()> {
    writeln!(w, "%%MatrixMarket matrix array {field} general")?;
    for line in comment.lines() {
        writeln!(w, "% {line}")?;
    }
    writeln!(w, "{} {}", a.rows, a.cols)?;
    for j in 0..a.cols {
        for i in 0..a.rows {
            writeln!(w, "{}", fmt(a.get(i, j)))?;
        }
    }
    Ok(())
}

/// Shortest round-trip text of an f64 (`-0` printed as `0`).
pub fn fmt_f64(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 {
        "0".to_string()
    } else if (1e-5..1e15).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}
