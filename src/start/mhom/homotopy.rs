//! `solve --start mhom`: the γ-trick homotopy `γ(1 − t)·G + t·F` from the linear-product
//! start system `G` of a variable partition (the best one found when none is given). The
//! number of paths is the multi-homogeneous Bézout number of the partition. Start equation
//! `k` is multiplied by the size of `f_k`'s coefficients ([`crate::start::start_scale`]), so
//! that scaling an equation scales its homotopy.

use super::{best_partition, LinearProductStart, Partition};
use crate::error::Result;
use crate::homotopy::Homotopy;
use crate::system::System;
use num_complex::Complex64 as C64;
use rand::Rng;

pub struct MhomStart {
    pub homotopy: Homotopy,
    pub start: LinearProductStart,
    pub gamma: C64,
}

impl MhomStart {
    pub fn new(
        system: &System,
        partition: Option<&Partition>,
        rng: &mut impl Rng,
    ) -> Result<MhomStart> {
        let partition = match partition {
            Some(p) => p.clone(),
            None => best_partition(system)?.0,
        };
        let start = LinearProductStart::new(system, &partition, rng)?;
        let gamma = C64::from_polar(1.0, rng.random::<f64>() * std::f64::consts::TAU);
        let homotopy = Homotopy::gamma_trick(
            system,
            &crate::start::scaled_start(system, start.expand()),
            gamma,
        );
        Ok(MhomStart {
            homotopy,
            start,
            gamma,
        })
    }

    /// Homogeneous coordinates `(x, 1)` of start point `x`.
    pub fn homogeneous(x: &[C64]) -> Vec<C64> {
        let mut y = x.to_vec();
        y.push(C64::new(1.0, 0.0));
        y
    }
}
