//! pathtrack: all isolated solutions of a polynomial system by homotopy continuation.
//!
//! Data flow (see docs/architecture.md):
//! `system` (parse) → `start` + `homotopy` (τ-form, Â, B_k) → `track` (batches of paths,
//! through a `backend`: CPU threads + GEMM, or CUDA) → `endgame` → `post` (classify,
//! deduplicate) → `report` (summary, JSON Lines).
//!
//! Library entry: [`solve`] or [`Solver`] ([`api`]), returning a [`SolveResult`].

pub mod api;
pub mod backend;
pub mod bench;
pub mod certify;
pub mod cli;
pub mod distributed;
pub mod endgame;
pub mod error;
pub mod eval;
pub mod gpu;
pub mod homotopy;
pub mod linalg;
pub mod params;
pub mod post;
pub mod report;
pub mod solver;
pub mod start;
pub mod system;
pub mod track;
pub mod witness;

pub use error::{Error, InputError, Result};
pub use num_complex::Complex64 as C64;

pub use api::{solve, BackendChoice, SolveOptions, SolveResult, Solver, StartKind};
pub use system::System;
