//! Start systems: total degree, polyhedral, multi-homogeneous. Each produces a
//! [`crate::homotopy::Homotopy`] and a stream of start points.

pub mod mhom;
pub mod polyhedral;
pub mod total_degree;
