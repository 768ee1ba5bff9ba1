//! Shared row-reduction engine (CPU backend): reduced row echelon form over Z/p
//! (`u32` and `u64` words), `f64` and complex `f64`, and from the one echelonize core:
//! rank, determinant, inverse, solve, null space, rank factorization. Matrix Market I/O
//! for the `pathtrack rref` command. See docs/rref.md.

pub mod bench;
pub mod cuda;
pub mod cuda_gen;
pub mod cuda_lu;
pub mod dense;
pub mod dependent;
pub mod echelon;
pub mod field;
pub mod mtx;
pub mod multi;
pub mod ops;

pub use dense::Matrix;
pub use dependent::dependent_equations;
pub use echelon::{echelonize, Echelon, EchelonOptions, Parallelism, Tolerance};
pub use field::{is_prime_u64, Field, Zp32, Zp64, C64, F64};
pub use ops::{det, inverse, null_space, rank, rank_factorization, rref, solve, Solution};
