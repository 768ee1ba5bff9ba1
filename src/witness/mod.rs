//! Positive-dimensional solution sets: witness sets by dimension, the numerical irreducible
//! decomposition, membership tests, and the squaring-up of overdetermined systems
//! (docs/witness.md).
//!
//! A witness set of the pure `d`-dimensional part `Z_d` of `V(F)` is `(R, L, W)`: a
//! randomization `R` of `F` to `n − d` equations, `d` random affine hyperplanes `L`, and the
//! `deg Z_d` points `W = Z_d ∩ V(L)` ([`slices`]). Everything here is built from two
//! operations: solving the square system `[R·F; L]` ([`crate::solver::solve`]: any start
//! system, any backend) and moving the slices of a witness set ([`moving`]: a homotopy
//! tracked by the same tracker and backend).
//!
//! - [`sets`]: witness sets for every dimension, top-down; points of `[R·F; L]` that fail
//!   `F = 0` or lie on a component of larger dimension (homotopy membership) are dropped.
//! - [`decompose`]: monodromy loops group the points of `W`, the linear trace test certifies
//!   each group as an irreducible component.
//! - [`membership`]: whether a point lies on `Z_d` (and on which component).
//! - [`excess`]: `solve` on an overdetermined system.

pub mod cascade;
pub mod compute;
pub mod decompose;
pub mod excess;
pub mod file;
pub mod label;
pub mod membership;
pub mod moving;
pub mod sets;
pub mod slices;

use rand::SeedableRng;

/// The independent random streams of one seed: each purpose draws from its own, so that a
/// change in one (another dimension computed, one loop more) leaves the others' draws alone.
#[derive(Clone, Copy, Debug)]
pub enum Stream {
    /// `solve`'s randomization of an overdetermined system.
    Squaring,
    /// The randomization and slices of dimension `d`.
    Slices(usize),
    /// The monodromy loops and trace test of dimension `d`.
    Decompose(usize),
    /// The slices of a membership test.
    Membership,
    /// The embedding of the cascade (randomization, slices, multipliers).
    Cascade,
}

/// The generator of `stream` for `seed` (ChaCha8, one stream number per purpose).
pub fn rng(seed: u64, stream: Stream) -> rand_chacha::ChaCha8Rng {
    let id = match stream {
        Stream::Squaring => 1,
        Stream::Membership => 2,
        Stream::Cascade => 3,
        Stream::Slices(d) => 1000 + d as u64,
        Stream::Decompose(d) => 1_000_000 + d as u64,
    };
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    r.set_stream(id);
    r
}

/// The witness set of the pure `dimension`-dimensional part of `V(F)`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WitnessSet {
    pub dimension: usize,
    /// `R` (`n − dimension` rows).
    pub randomization: slices::Randomization,
    /// `L` (`dimension` hyperplanes).
    pub slices: slices::Slices,
    /// The witness points (affine coordinates), one per point of `Z_d ∩ V(L)`.
    pub points: Vec<Vec<num_complex::Complex64>>,
    /// The number of paths of `[R·F; L]` that ended at each point: 1 on a generically reduced
    /// component, its multiplicity on a nonreduced one (for a generic homotopy).
    pub multiplicities: Vec<usize>,
}

impl WitnessSet {
    /// `deg Z_d`: the number of witness points.
    pub fn degree(&self) -> usize {
        self.points.len()
    }
}
