//! Witness sets for every dimension by the method the options name ([`Method`]): dimension
//! by dimension ([`super::sets`]) or by the cascade ([`super::cascade`]).

use super::cascade::cascade;
use super::sets::{by_dimension, DimensionReport, Method, WitnessOptions};
use super::WitnessSet;
use crate::backend::Backend;
use crate::error::Result;
use crate::system::System;

/// The witness sets of dimensions `top` down to `lowest`
/// ([`super::sets::dimension_range`]), highest first, each with its report, by
/// `opts.method`; `progress` hears each dimension as it starts.
pub fn witness_sets(
    system: &System,
    opts: &WitnessOptions,
    backend: &mut dyn Backend,
    progress: &mut dyn FnMut(usize),
) -> Result<(Vec<WitnessSet>, Vec<DimensionReport>)> {
    match opts.method {
        Method::Dimensions => by_dimension(system, opts, backend, progress),
        Method::Cascade => cascade(system, opts, backend, progress),
    }
}
