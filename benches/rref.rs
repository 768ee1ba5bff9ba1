//! `cargo bench --bench rref`: reduced row echelon form of a random `n × n` matrix on one
//! thread, over Z/p (p = 2^31 − 1, u32 words), f64 and complex f64; each matrix is checked
//! to have full rank before it is timed (`pathtrack bench rref` for larger sizes and GPUs).

use pathtrack::bench::timing::Cases;
use pathtrack::linalg::rref::{
    echelonize, EchelonOptions, Field, Matrix, Parallelism, Zp32, C64, F64,
};
use pathtrack::Error;
use rand::{Rng, SeedableRng};

/// Times the RREF of `a` over `f` as the case `name`, after checking its rank is `n`.
fn case<F: Field>(cases: &Cases, name: &str, f: &F, a: &Matrix<F::Elem>) -> pathtrack::Result<()> {
    let opt = EchelonOptions {
        parallelism: Parallelism::None,
        ..Default::default()
    };
    let rank = echelonize(f, &mut a.clone(), &opt).rank;
    if rank != a.rows {
        return Err(Error::Internal(format!(
            "{name}: rank {rank} of a random matrix"
        )));
    }
    cases.run(name, || {
        echelonize(f, &mut a.clone(), &opt);
        Ok(())
    })
}

fn main() -> pathtrack::Result<()> {
    let cases =
        Cases::from_args("rref: reduced row echelon form of a random n × n matrix, one thread");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let p = 2_147_483_647u32;
    for n in [128, 256] {
        let a = Matrix::from_fn(n, n, |_, _| rng.random_range(0..p));
        case(
            &cases,
            &format!("rref Z/p n={n}"),
            &Zp32::new(p).map_err(Error::Internal)?,
            &a,
        )?;
        let a = Matrix::from_fn(n, n, |_, _| rng.random::<f64>() * 2.0 - 1.0);
        case(&cases, &format!("rref f64 n={n}"), &F64, &a)?;
        let a = Matrix::from_fn(n, n, |_, _| {
            num_complex::Complex64::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5)
        });
        case(&cases, &format!("rref c64 n={n}"), &C64, &a)?;
    }
    Ok(())
}
