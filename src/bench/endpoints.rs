//! The work on a path's end, timed alone: refinement at t = 1 (`bench refine`) and the
//! tally of distinct solutions and suspects from the endpoints (`bench tally`).

use super::system_by_name;
use crate::error::{Error, Result};
use crate::solver::rng_for;
use num_complex::Complex64 as C64;
use rand::Rng;

/// Refinement of endpoints at t = 1 (`post::Refiner::process`): microseconds per endpoint on
/// one thread, in all and by part (Newton in double, the condition number, the numerical
/// rank, the relative residual), for at most `count` endpoints placed at the nonsingular
/// solutions of `from` (a `solve -o` file of `name`), moved off them by a relative 1e-9 as a
/// tracker leaves them.
pub fn refine(name: &str, from: &std::path::Path, count: usize, seed: u64) -> Result<i32> {
    use crate::track::{PathEnd, TrackCode};
    let sys = system_by_name(name)?;
    let n = sys.n();
    let text = std::fs::read_to_string(from)
        .map_err(|e| Error::Usage(format!("bench refine: cannot read {}: {e}", from.display())))?;
    let mut rng = rng_for(seed);
    let mut ends = Vec::new();
    for line in text.lines() {
        if ends.len() >= count {
            break;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v.get("status").and_then(|s| s.as_str()) != Some("nonsingular") {
            continue;
        }
        let Some(c) = v.get("coordinates").and_then(|c| c.as_array()) else {
            continue;
        };
        let x: Vec<C64> = c
            .iter()
            .filter_map(|p| Some(C64::new(p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
            .collect();
        if x.len() != n {
            return Err(Error::Usage(format!(
                "bench refine: {} has {} coordinates per solution, {name} {n} variables",
                from.display(),
                x.len()
            )));
        }
        let mut y: Vec<C64> = x.into_iter().chain([C64::new(1.0, 0.0)]).collect();
        let s = y.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        y.iter_mut().for_each(|z| {
            *z = *z / s
                * (1.0 + 1e-9 * C64::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5))
        });
        ends.push(PathEnd::bare(ends.len() as u64, y, 0.0, TrackCode::Reached));
    }
    if ends.is_empty() {
        return Err(Error::Usage(format!(
            "bench refine: no nonsingular solutions in {}",
            from.display()
        )));
    }
    let refiner = crate::post::Refiner::new(&sys, 0.0);
    let per = |secs: f64| secs / ends.len() as f64 * 1e6;
    // CPU seconds of this process (one thread works): a loaded machine does not inflate them.
    let clock = || crate::report::usage::process_cpu_seconds().unwrap_or(f64::NAN);
    let start = clock();
    let nonsingular = ends
        .iter()
        .map(|e| refiner.process(e.clone()))
        .filter(|e| e.status == crate::post::Status::Nonsingular)
        .count();
    let process = per(clock() - start);
    let (newton, condition, rank) = refiner.time_parts(&ends, clock);
    let start = clock();
    let mut sink = 0.0;
    for e in &ends {
        let x: Vec<C64> = e.y[..n].iter().map(|z| z / e.y[n]).collect();
        sink += sys.relative_residual(&x);
    }
    let residual = per(clock() - start);
    println!("# pathtrack bench refine (one thread, CPU time in 10 ms ticks): µs per endpoint of Refiner::process, and its parts");
    println!(
        "{:<12} {:>4} {:>6} {:>10} {:>12} {:>10} {:>14} {:>12} {:>8}",
        "system",
        "n",
        "terms",
        "endpoints",
        "nonsingular",
        "process",
        "newton (double)",
        "condition",
        "rank"
    );
    println!(
        "{:<12} {:>4} {:>6} {:>10} {:>12} {:>10.1} {:>14.1} {:>12.1} {:>8.1}   residual {:.1} µs{}",
        name,
        n,
        sys.equations.iter().map(|f| f.terms.len()).sum::<usize>(),
        ends.len(),
        nonsingular,
        process,
        per(newton),
        per(condition),
        per(rank),
        residual,
        if sink.is_nan() {
            " (NaN residuals)"
        } else {
            ""
        }
    );
    Ok(0)
}

/// `Tally::solutions` and `Tally::suspects` (the summary's and every recovery round's
/// distinct solutions) on random endpoints (see `random_tally`), for every size and thread count.
pub fn tally(
    nonsingular: &[usize],
    singular: usize,
    threads: &[usize],
    n: usize,
    seed: u64,
) -> Result<i32> {
    println!("# Tally::solutions and ::suspects on random endpoints in C^{n}; suspects read the clusters that solutions computed");
    println!(
        "{:>8} {:>12} {:>10} {:>14} {:>10} {:>13} {:>9}",
        "threads",
        "nonsingular",
        "singular",
        "solutions (s)",
        "distinct",
        "suspects (s)",
        "suspects"
    );
    for &ns in nonsingular {
        for &t in threads {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| Error::Internal(format!("bench tally threads: {e}")))?;
            let tally = random_tally(ns, singular, n, seed);
            // As at the end of a solve: the counts cluster, the suspects read the clusters,
            // the solutions are moved out of the tally.
            let (t_solutions, distinct, t_suspects, suspects) = pool.install(|| {
                let clock = std::time::Instant::now();
                let c = tally.counts();
                let t_solutions = clock.elapsed().as_secs_f64();
                let clock = std::time::Instant::now();
                let suspects = tally.suspects().len();
                let t_suspects = clock.elapsed().as_secs_f64();
                let distinct = tally.into_solutions().len();
                assert_eq!(distinct as u64, c.nonsingular + c.singular);
                (t_solutions, distinct, t_suspects, suspects)
            });
            println!(
                "{:>8} {ns:>12} {singular:>10} {t_solutions:>14.3} {distinct:>10} {t_suspects:>13.3} {suspects:>9}",
                pool.current_num_threads()
            );
        }
    }
    Ok(0)
}

/// `nonsingular` random points in `[-2, 2]^{2n}` ⊂ C^n, every tenth reached by two paths, and
/// `singular` endpoints, every tenth of them on a nonsingular solution.
fn random_tally(nonsingular: usize, singular: usize, n: usize, seed: u64) -> crate::report::Tally {
    use crate::post::{Endpoint, Status};
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut point = || -> Vec<C64> {
        (0..n)
            .map(|_| {
                C64::new(
                    rng.random::<f64>() * 4.0 - 2.0,
                    rng.random::<f64>() * 4.0 - 2.0,
                )
            })
            .collect()
    };
    let endpoint = |path: u64, status: Status, x: Vec<C64>, condition: f64| Endpoint {
        coordinates: Some(x),
        residual: 1e-15,
        condition,
        ..Endpoint::new(path, status)
    };
    let mut tally = crate::report::Tally::default();
    let mut path = 0u64;
    let mut solutions = Vec::with_capacity(nonsingular);
    for i in 0..nonsingular {
        let x = point();
        let copies = if i % 10 == 0 { 2 } else { 1 };
        for _ in 0..copies {
            tally.add(&endpoint(path, Status::Nonsingular, x.clone(), 10.0));
            path += 1;
        }
        solutions.push(x);
    }
    for i in 0..singular {
        let x = if i % 10 == 0 && nonsingular > 0 {
            solutions[(i * 7919 + 1) % nonsingular].clone()
        } else {
            point()
        };
        tally.add(&endpoint(path, Status::Singular, x, 1e14));
        path += 1;
    }
    tally
}
