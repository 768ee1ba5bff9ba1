//! Certification of approximate solutions: proofs, in interval arithmetic, that a box
//! around a computed point holds exactly one root of the system (the Krawczyk test), that
//! roots of different points are distinct, and that a root is real. docs/certification.md
//! states what is proved and why the arithmetic is sound.
//!
//! - [`interval`]: real intervals with outward rounding;
//! - [`complex`]: complex rectangles and boxes;
//! - [`eval`]: interval evaluation of `F` and its Jacobian;
//! - [`krawczyk`]: the test at one point (and the realness test);
//! - [`ball`]: balls with double-double midpoints, for `F` at a double-double point;
//! - [`dd_krawczyk`]: the test with a double-double centre, for the points the double test
//!   leaves undecided;
//! - [`distinct`]: proven counts of distinct and real roots;
//! - [`batch`]: many points in parallel, and the counts;
//! - [`packed`]: the system flattened for the device kernel (kernels/certify.cu), and the
//!   certificates read back from it;
//! - [`cuda`]: the same test as a batch on a CUDA GPU.

pub mod ball;
pub mod batch;
pub mod complex;
pub mod cuda;
pub mod dd_krawczyk;
pub mod distinct;
pub mod eval;
pub mod interval;
pub mod krawczyk;
pub mod packed;

pub use batch::{certify_points, summarize, BatchCertifier, Certifier, CertifySummary};
pub use krawczyk::Certificate;
