//! Path jumping in bands: where neighbouring paths are images of each other under a near
//! symmetry of the homotopy, a step too long for one is too long for all of them, and a
//! whole band of paths lands each on its neighbour's root, with the same small predictor
//! error (the step aliases by one period of the vector field). Only the band's ends show:
//! two paths share a root at one end, and a root is missing at the other.
//!
//! `x^d + x² − 1` from the total-degree start, seed 1: at d = 700 paths 84–433 each ended on
//! the root of its neighbour. A recovery round re-tracks the two paths that share a root;
//! the re-tracked one lands on its own root, which the next path of the band holds: that
//! path is *displaced*, and so on, one path per round, while the rounds last.
//!
//! After each round, the displaced paths (not re-tracked in it, now sharing their root with
//! a path that was) bring their `k` nearest paths by endpoint into the next round, `k`
//! doubling with each round that displaces a path, and rounds go on while some path is
//! displaced, up to [`MAX_CASCADE_ROUNDS`] beyond the usual ones: a band of `b` paths takes
//! about `log₂ b` rounds, each re-tracking at most twice the paths of the band.

use crate::report::Tally;
use std::collections::HashSet;

/// Rounds granted beyond `RECOVERY_ROUNDS + EXTRA_ROUNDS` while re-tracked paths displace
/// others (neighbours up to `2^16` paths away).
pub const MAX_CASCADE_ROUNDS: u8 = 16;

/// The state of a run's cascade of displaced paths across recovery rounds.
#[derive(Default)]
pub(super) struct Cascade {
    /// Rounds so far that displaced a path.
    rounds: u32,
    /// Paths brought into the next round as neighbours of displaced ones.
    next: Vec<u64>,
}

impl Cascade {
    /// After a round that re-tracked `round`: paths not among them that now share their
    /// nonsingular root with another path are displaced; their nearest paths by endpoint
    /// not yet re-tracked (`seen`) go to the next round. Returns whether any was displaced.
    pub(super) fn after_round(
        &mut self,
        tally: &Tally,
        round: &[u64],
        seen: &HashSet<u64>,
    ) -> bool {
        let tracked: HashSet<u64> = round.iter().copied().collect();
        let displaced: Vec<u64> = tally
            .suspects()
            .into_iter()
            .filter(|p| !tracked.contains(p) && tally.nonsingular_endpoint(*p).is_some())
            .collect();
        self.next.clear();
        if displaced.is_empty() || self.rounds >= MAX_CASCADE_ROUNDS as u32 {
            return false;
        }
        self.rounds += 1;
        let k = 1usize << self.rounds.min(30);
        let mut next: Vec<u64> = displaced
            .iter()
            .flat_map(|&p| tally.nearest_nonsingular(p, k, |q| !seen.contains(&q)))
            .collect();
        next.sort_unstable();
        next.dedup();
        self.next = next;
        true
    }

    /// Rounds so far that displaced a path (at most [`MAX_CASCADE_ROUNDS`]): the recovery
    /// rounds granted beyond the usual ones, which also hold back their tightening.
    pub(super) fn rounds(&self) -> u8 {
        self.rounds as u8
    }

    /// The neighbours to add to the next round's suspects.
    pub(super) fn take_next(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.next)
    }
}
