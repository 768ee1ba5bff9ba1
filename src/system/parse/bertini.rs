//! Bertini's input file:
//! ```text
//! CONFIG                      % optional; its settings are Bertini's and are skipped
//!   TRACKTYPE: 0;
//! END;
//! INPUT                       % the keyword is optional when there is no CONFIG
//!   variable_group x, y;
//!   function f1, f2;
//!   constant a;
//!   a = 1.5 + 2*I;            % constants: expressions in numbers, I, Pi, other constants
//!   g = x^2 + 1;              % a name assigned without a declaration is a subfunction
//!   f1 = g^2 - a*y;
//!   f2 = x - y;
//! END;
//! ```
//! Statements end with `;`; `%` starts a comment to the end of the line. The unknowns are
//! those of the `variable_group` declarations, in order (several groups are joined into
//! one list of affine variables); the equations are the `function` names, in the order of
//! their declaration, each assigned once. Constants and subfunctions may be assigned in any
//! order and refer to each other (not circularly); each use stands for its expanded
//! polynomial. `I` is the imaginary unit, `Pi` is π. Projective variables
//! (`hom_variable_group`), user-defined homotopies (`variable`, `pathvariable`,
//! `parameter`), random constants and non-polynomial functions are refused with a message
//! saying so. [`to_bertini`] writes this format.

use super::{
    blank_comments, check_variable_name, default_name, expr, line_col, parse_polys, write,
};
use crate::error::InputError;
use crate::system::{Polynomial, System, Term};
use num_complex::Complex64;
use std::collections::HashMap;

/// The words that open a Bertini input file (after comments).
const OPENING_WORDS: [&str; 13] = [
    "CONFIG",
    "INPUT",
    "variable_group",
    "hom_variable_group",
    "function",
    "constant",
    "subfunction",
    "variable",
    "pathvariable",
    "parameter",
    "random",
    "random_real",
    "definedSubfunction",
];

/// Names Bertini reserves: the constants and the functions of its grammar.
const RESERVED: [&str; 10] = [
    "I", "Pi", "sin", "cos", "tan", "exp", "log", "sqrt", "abs", "END",
];

/// True when the first word outside `%` comments opens a Bertini file (`CONFIG`, `INPUT`,
/// `variable_group`, `function`, …) and is not a YAML key (followed by `:`).
pub fn looks_like_bertini(text: &str) -> bool {
    let t = blank_comments(text, '%');
    let body = t.trim_start();
    let end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    let word = &body[..end];
    OPENING_WORDS.contains(&word) && !body[end..].trim_start().starts_with(':')
}

/// One `;`-ended statement: its text (comments blanked) and byte offset in the file.
#[derive(Clone, Copy)]
struct Stmt<'a> {
    at: usize,
    text: &'a str,
}

impl<'a> Stmt<'a> {
    /// The leading identifier and the text after it, with their offsets.
    fn head(&self) -> (&'a str, usize) {
        let lead = self.text.len() - self.text.trim_start().len();
        let rest = &self.text[lead..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (&rest[..end], self.at + lead + end)
    }
}

/// The statements of `t` from byte `from`, up to and excluding the one that is `END`
/// (or to the end of the text); returns them and the offset after that `END;`.
fn statements(t: &str, from: usize) -> (Vec<Stmt<'_>>, Option<usize>) {
    let mut out = Vec::new();
    let mut s = from;
    loop {
        let (text, next) = match t[s..].find(';') {
            Some(q) => (&t[s..s + q], Some(s + q + 1)),
            None => (&t[s..], None),
        };
        if text.trim() == "END" {
            return (out, next.or(Some(t.len())));
        }
        if !text.trim().is_empty() || next.is_some() {
            out.push(Stmt { at: s, text });
        }
        match next {
            Some(n) => s = n,
            None => return (out, None),
        }
    }
}

/// A name given a value by `NAME = expression;`.
struct Assignment<'a> {
    name_at: usize,
    expr_at: usize,
    expr: &'a str,
}

/// What a name was declared as.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Variable,
    Function,
    Constant,
    Subfunction,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Variable => "variable",
            Kind::Function => "function",
            Kind::Constant => "constant",
            Kind::Subfunction => "subfunction",
        }
    }
}

/// Parses a Bertini input file; `origin` names the file in errors.
pub fn parse(text: &str, origin: &str) -> Result<System, InputError> {
    let at = |off: usize, msg: String| {
        let (l, c) = line_col(text, off);
        InputError::new(origin, msg).at(l, c)
    };
    let t = blank_comments(text, '%');
    let t = t.as_str();
    let mut s = t.len() - t.trim_start().len();
    // CONFIG … END; is skipped.
    if t[s..].starts_with("CONFIG") {
        let (_, after) = statements(t, s + "CONFIG".len());
        s = match after {
            Some(a) => a,
            None => return Err(at(s, "the CONFIG section has no closing 'END;'".into())),
        };
        s += t[s..].len() - t[s..].trim_start().len();
        if !t[s..].starts_with("INPUT") {
            return Err(at(
                s,
                "expected 'INPUT' after the CONFIG section's 'END;'".into(),
            ));
        }
    }
    if t[s..].starts_with("INPUT")
        && !t[s + 5..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    {
        s += "INPUT".len();
    }
    let (stmts, after) = statements(t, s);
    if let Some(a) = after {
        if let Some(p) = t[a..].find(|c: char| !c.is_whitespace()) {
            return Err(at(a + p, "text after the INPUT section's 'END;'".into()));
        }
    }

    let mut kinds: HashMap<&str, (Kind, usize)> = HashMap::new();
    let mut variables: Vec<(&str, usize)> = Vec::new();
    let mut functions: Vec<(&str, usize)> = Vec::new();
    let mut assigned: HashMap<&str, Assignment> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for st in &stmts {
        let (word, word_end) = st.head();
        let rest_at = word_end;
        let rest = &t[rest_at..st.at + st.text.len()];
        let word_at = word_end - word.len();
        if word.is_empty() {
            let lead = st.text.len() - st.text.trim_start().len();
            let what = st.text.trim();
            return Err(at(
                st.at + lead,
                if what.is_empty() {
                    "empty statement (a ';' too many)".into()
                } else {
                    format!(
                        "expected a declaration or NAME = expression, found '{}'",
                        first_chars(what)
                    )
                },
            ));
        }
        let kind = match word {
            "variable_group" => Some(Kind::Variable),
            "function" => Some(Kind::Function),
            "constant" => Some(Kind::Constant),
            "subfunction" => Some(Kind::Subfunction),
            _ => None,
        };
        if let Some(kind) = kind {
            for (name, p) in name_list(rest, rest_at).map_err(|(p, m)| at(p, m))? {
                check_name(name, kind).map_err(|m| at(p, m))?;
                if let Some(&(k0, p0)) = kinds.get(name) {
                    let (l0, _) = line_col(text, p0);
                    return Err(at(
                        p,
                        format!(
                            "'{name}' is declared twice (as a {} on line {l0})",
                            k0.word()
                        ),
                    ));
                }
                kinds.insert(name, (kind, p));
                match kind {
                    Kind::Variable => variables.push((name, p)),
                    Kind::Function => functions.push((name, p)),
                    _ => {}
                }
            }
            continue;
        }
        let refusal = match word {
            "hom_variable_group" => Some(
                "hom_variable_group (projective variables) is not supported: pathtrack solves \
                 affine systems; set one variable to 1 and declare the others with variable_group",
            ),
            "variable" | "pathvariable" | "parameter" => Some(
                "user-defined homotopies (variable, pathvariable, parameter) are not supported; \
                 declare the unknowns with variable_group",
            ),
            "random" | "random_real" => {
                Some("random constants are not supported: declare a constant and give it a value")
            }
            "definedSubfunction" => Some("definedSubfunction is not supported"),
            "CONFIG" | "INPUT" => Some("CONFIG must come first, then INPUT"),
            _ => None,
        };
        if let Some(why) = refusal {
            return Err(at(word_at, why.into()));
        }
        // NAME = expression
        let eq = rest.trim_start();
        let Some(expr_src) = eq.strip_prefix('=') else {
            return Err(at(
                word_at,
                format!(
                    "'{word}' is not a declaration (variable_group, function, constant, \
                     subfunction) and no '=' follows it"
                ),
            ));
        };
        let expr_at = rest_at + (rest.len() - eq.len()) + 1;
        if let Some(a0) = assigned.get(word) {
            let (l0, _) = line_col(text, a0.name_at);
            return Err(at(
                word_at,
                format!("'{word}' is assigned twice (first on line {l0})"),
            ));
        }
        match kinds.get(word) {
            Some((Kind::Variable, _)) => {
                return Err(at(
                    word_at,
                    format!("'{word}' is a variable and cannot be assigned"),
                ))
            }
            None => check_name(word, Kind::Subfunction).map_err(|m| at(word_at, m))?,
            _ => {}
        }
        assigned.insert(
            word,
            Assignment {
                name_at: word_at,
                expr_at,
                expr: expr_src,
            },
        );
        order.push(word);
    }

    if variables.is_empty() {
        return Err(InputError::new(
            origin,
            "no variables: declare them with 'variable_group x, y;'",
        ));
    }
    if functions.is_empty() {
        return Err(InputError::new(
            origin,
            "no functions: declare them with 'function f1, f2;' and assign each",
        ));
    }
    if functions.len() != variables.len() {
        return Err(at(
            functions[0].1,
            format!(
                "system is not square: {} functions in {} variables",
                functions.len(),
                variables.len()
            ),
        ));
    }
    let mut declared: Vec<(&str, Kind, usize)> =
        kinds.iter().map(|(&name, &(k, p))| (name, k, p)).collect();
    declared.sort_by_key(|&(_, _, p)| p);
    for (name, kind, p) in declared {
        if kind != Kind::Variable && !assigned.contains_key(name) {
            return Err(at(
                p,
                format!("{} '{name}' is declared but never assigned", kind.word()),
            ));
        }
    }

    let names: Vec<String> = variables.iter().map(|(v, _)| v.to_string()).collect();
    let index: HashMap<String, usize> = names
        .iter()
        .enumerate()
        .map(|(j, v)| (v.clone(), j))
        .collect();
    let n = names.len();
    // Constants and subfunctions, each after those it uses.
    let mut defs: HashMap<String, Polynomial> = HashMap::new();
    defs.insert(
        "Pi".into(),
        Polynomial {
            terms: vec![Term {
                coeff: Complex64::new(std::f64::consts::PI, 0.0),
                exponents: vec![0; n],
            }],
        },
    );
    let is_def = |name: &str| {
        assigned.contains_key(name) && !matches!(kinds.get(name), Some((Kind::Function, _)))
    };
    for &root in &order {
        if !is_def(root) || defs.contains_key(root) {
            continue;
        }
        // Depth-first on an explicit stack (long chains of subfunctions are common).
        let mut stack: Vec<(&str, bool)> = vec![(root, false)];
        let mut on_path: Vec<&str> = Vec::new();
        while let Some((name, expanded)) = stack.pop() {
            if defs.contains_key(name) {
                continue;
            }
            let a = &assigned[name];
            if expanded {
                on_path.pop();
                let p = expr::parse_expr_with(a.expr, &index, n, &defs)
                    .map_err(|e| at(a.expr_at + e.offset, format!("in '{name}': {}", e.message)))?;
                if matches!(kinds.get(name), Some((Kind::Constant, _)))
                    && p.terms.iter().any(|t| t.exponents.iter().any(|&e| e != 0))
                {
                    let lead = a.expr.len() - a.expr.trim_start().len();
                    return Err(at(
                        a.expr_at + lead,
                        format!("constant '{name}' depends on the variables"),
                    ));
                }
                defs.insert(name.to_string(), p);
                continue;
            }
            if on_path.contains(&name) {
                let start = on_path.iter().position(|&x| x == name).unwrap_or(0);
                let mut cycle: Vec<&str> = on_path[start..].to_vec();
                cycle.push(name);
                return Err(at(
                    a.name_at,
                    format!(
                        "'{name}' is defined in terms of itself ({})",
                        cycle.join(" -> ")
                    ),
                ));
            }
            on_path.push(name);
            stack.push((name, true));
            let ids = expr::identifiers(a.expr).map_err(|e| at(a.expr_at + e.offset, e.message))?;
            for (id, p) in ids {
                if index.contains_key(&id) || defs.contains_key(&id) {
                    continue;
                }
                match assigned.get_key_value(id.as_str()) {
                    Some((&key, _)) if is_def(key) => {
                        if on_path.contains(&key) {
                            let start = on_path.iter().position(|&x| x == key).unwrap_or(0);
                            let mut cycle: Vec<&str> = on_path[start..].to_vec();
                            cycle.push(key);
                            return Err(at(
                                a.expr_at + p,
                                format!(
                                    "'{key}' is defined in terms of itself ({})",
                                    cycle.join(" -> ")
                                ),
                            ));
                        }
                        stack.push((key, false));
                    }
                    Some(_) => {
                        return Err(at(
                            a.expr_at + p,
                            format!(
                                "'{id}' is a function; functions cannot be used in expressions"
                            ),
                        ))
                    }
                    None => {}
                }
            }
        }
    }
    let fsrc: Vec<(usize, &str)> = functions
        .iter()
        .map(|(f, _)| {
            let a = &assigned[f];
            (a.expr_at, a.expr)
        })
        .collect();
    let equations = parse_polys(&fsrc, &index, &defs, &at)?;
    Ok(System {
        name: default_name(origin),
        description: "read from Bertini format".to_string(),
        variables: names,
        equations,
    })
}

/// The first characters of `s`, for messages.
fn first_chars(s: &str) -> String {
    let mut out: String = s.chars().take(30).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// The comma-separated names of a declaration, with their offsets (`at` is the offset of
/// `rest`).
fn name_list(rest: &str, at: usize) -> Result<Vec<(&str, usize)>, (usize, String)> {
    let mut out = Vec::new();
    let mut s = 0;
    for piece in rest.split(',') {
        let lead = piece.len() - piece.trim_start().len();
        let name = piece.trim();
        let p = at + s + lead;
        if name.is_empty() {
            return Err((p, "expected a name in the declaration's list".into()));
        }
        if !expr::is_identifier(name) {
            return Err((
                p,
                format!(
                    "'{}' is not a name (a letter or '_' followed by letters, digits or '_')",
                    first_chars(name)
                ),
            ));
        }
        out.push((name, p));
        s += piece.len() + 1;
    }
    Ok(out)
}

/// Checks a declared or assigned name against the reserved words.
fn check_name(name: &str, kind: Kind) -> Result<(), String> {
    if RESERVED.contains(&name) {
        return Err(format!(
            "'{name}' is reserved in Bertini's format (I, Pi and the function names)"
        ));
    }
    if kind == Kind::Variable {
        check_variable_name(name)?;
    } else if expr::RESERVED.contains(&name) {
        return Err(format!(
            "'{name}' is reserved (the imaginary unit or the exponent letter of numbers)"
        ));
    }
    Ok(())
}

/// `sys` as a Bertini input file: a `CONFIG` section with `TRACKTYPE: 0;` (isolated
/// solutions), then `INPUT` with one `variable_group` in the order of `sys.variables`, the
/// functions `f1, f2, …` (another prefix when a variable has such a name) and their
/// definitions with `^` and `I`, coefficients written exactly ([`write::exact`]). Reading
/// it back gives `sys` with the same variable order; an error when a variable has a name
/// Bertini reserves (`Pi`, `sin`, …).
pub fn to_bertini(sys: &System) -> Result<String, String> {
    for v in &sys.variables {
        if RESERVED.contains(&v.as_str()) {
            return Err(format!(
                "variable '{v}' has a name that Bertini reserves (I, Pi and its function names); rename it"
            ));
        }
    }
    let style = write::Style {
        power: "^",
        imaginary: "I",
        real: write::exact,
    };
    let taken = |p: &str| {
        sys.variables.iter().any(|v| {
            v.strip_prefix(p)
                .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    let mut prefix = "f".to_string();
    while taken(&prefix) {
        prefix.push('_');
    }
    let fnames: Vec<String> = (1..=sys.equations.len())
        .map(|k| format!("{prefix}{k}"))
        .collect();
    let mut out = String::new();
    let one_line = |s: &str| s.replace(['\n', '\r'], " ");
    out.push_str(&format!(
        "% {} (written by pathtrack)\n",
        one_line(&sys.name)
    ));
    if !sys.description.is_empty() {
        out.push_str(&format!("% {}\n", one_line(&sys.description)));
    }
    out.push_str("CONFIG\n  TRACKTYPE: 0;\nEND;\nINPUT\n");
    out.push_str(&format!("  variable_group {};\n", sys.variables.join(", ")));
    out.push_str(&format!("  function {};\n", fnames.join(", ")));
    for (f, p) in fnames.iter().zip(&sys.equations) {
        out.push_str(&format!(
            "  {f} = {};\n",
            write::poly(p, &sys.variables, &style)
        ));
    }
    out.push_str("END;\n");
    Ok(out)
}
