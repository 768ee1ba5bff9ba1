//! Dense linear algebra shared by the solver: small per-path solvers used by the tracker,
//! the row-reduction engine and the permanent engine.

pub mod dd_lu;
pub mod permanent;
pub mod rref;
pub mod small;
