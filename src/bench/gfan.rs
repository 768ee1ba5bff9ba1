//! gfan (`gfan _mixedvolume`, version 0.6.2 from Debian) as a reference for `bench cells`:
//! the system's supports written in gfan's input format, its mixed volume read back.

use super::external::{run_timed, External};
use crate::system::System;
use std::path::Path;

/// gfan's input for the mixed volume of `sys`: `Q[x0,…]{f_0, …}` with every coefficient 1
/// (the mixed volume depends on the supports only) and each support translated into the
/// positive orthant (Laurent exponents; translation does not change the mixed volume).
/// The variable names have equal length (`x00, …, x11` from 11 variables on): gfan 0.6.2
/// reads `x10` as `x1` followed by `0` when `x1` is also a variable, and then reports a
/// mixed volume of 0 (measured on cyclic-11 and -12).
pub fn gfan_input(sys: &System) -> String {
    let n = sys.n();
    let width = n.saturating_sub(1).to_string().len();
    let vars: Vec<String> = (0..n).map(|i| format!("x{i:0width$}")).collect();
    let polys: Vec<String> = sys
        .equations
        .iter()
        .map(|p| {
            let low: Vec<i32> = (0..n)
                .map(|j| p.terms.iter().map(|t| t.exponents[j]).min().unwrap_or(0))
                .collect();
            let monos: Vec<String> = p
                .terms
                .iter()
                .map(|t| {
                    let factors: Vec<String> = t
                        .exponents
                        .iter()
                        .zip(&low)
                        .enumerate()
                        .filter(|(_, (e, l))| *e - *l > 0)
                        .map(|(j, (e, l))| match e - l {
                            1 => vars[j].clone(),
                            k => format!("{}^{k}", vars[j]),
                        })
                        .collect();
                    if factors.is_empty() {
                        "1".to_string()
                    } else {
                        factors.join("*")
                    }
                })
                .collect();
            monos.join("+")
        })
        .collect();
    format!("Q[{}]{{{}}}\n", vars.join(","), polys.join(","))
}

/// Runs `gfan _mixedvolume -j threads` on `sys` (stdin) and reads the mixed volume (the
/// last number it prints).
pub fn gfan_mixed_volume(
    gfan: &Path,
    sys: &System,
    threads: usize,
) -> std::result::Result<External, String> {
    let threads = threads.max(1).to_string();
    let out = run_timed(
        gfan,
        &["_mixedvolume", "-j", &threads],
        gfan_input(sys).as_bytes(),
        None,
    )?;
    let text = out.stdout.trim();
    let mixed_volume = text
        .split_whitespace()
        .last()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("gfan: no mixed volume in its output '{text}'"))?;
    Ok(External {
        mixed_volume,
        seconds: out.seconds,
        cpu_seconds: out.cpu_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::families::generate;

    #[test]
    fn gfan_input_is_the_positive_supports() {
        let sys = generate("cyclic", 3).unwrap();
        assert_eq!(
            gfan_input(&sys),
            "Q[x0,x1,x2]{x0+x1+x2,x0*x1+x0*x2+x1*x2,x0*x1*x2+1}\n"
        );
        // equal-length names from 11 variables on (gfan misreads `x10` next to `x1`)
        let s = gfan_input(&generate("cyclic", 11).unwrap());
        assert!(s.starts_with("Q[x00,x01,"), "{s}");
        assert!(s.contains("x00+x01+x02+"), "{s}");
        assert!(!s.contains("x1+"), "{s}");
    }
}
