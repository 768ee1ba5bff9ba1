//! Certifying many points: the Krawczyk test on each (on the CPU: rayon's current pool, one
//! point per task; on a GPU: [`super::cuda::GpuCertifier`], behind [`BatchCertifier`]), then
//! the proven counts of distinct and real roots, on the host.

use super::dd_krawczyk::DdSystem;
use super::distinct::count_distinct;
use super::eval::IntervalSystem;
use super::krawczyk::{certify_point, Certificate};
use crate::error::Result;
use crate::system::System;
use num_complex::Complex64 as C64;
use rayon::prelude::*;
use serde::Serialize;

/// The certification counts of a set of approximate solutions (docs/output.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CertifySummary {
    /// Points whose box around them provably holds exactly one root.
    pub certified: u64,
    /// Distinct roots among them, proven (a lower bound when `certified_unresolved > 0`).
    pub certified_distinct: u64,
    /// Of those, roots proven real.
    pub certified_real: u64,
    /// Groups of certified points whose boxes overlap without a proof that they hold one
    /// root (each counted once in `certified_distinct`).
    #[serde(skip_serializing_if = "is_zero")]
    pub certified_unresolved: u64,
    /// Of the certified points, those proven by the double-double test (the double one
    /// having failed).
    #[serde(skip_serializing_if = "is_zero")]
    pub certified_double_double: u64,
    /// Points tested and not certified (set by the caller, who knows which were tested:
    /// [`CertifySummary::with_tested`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub uncertified: u64,
}

impl CertifySummary {
    /// The counts with `uncertified = tested − certified`.
    pub fn with_tested(self, tested: u64) -> CertifySummary {
        CertifySummary {
            uncertified: tested.saturating_sub(self.certified),
            ..self
        }
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// A system ready for certification (its interval forms built once).
pub struct Certifier<'a> {
    system: &'a System,
    isys: IntervalSystem,
    dd: DdSystem,
}

impl<'a> Certifier<'a> {
    pub fn new(system: &'a System) -> Certifier<'a> {
        Certifier {
            system,
            isys: IntervalSystem::new(system),
            dd: DdSystem::new(system),
        }
    }

    /// The Krawczyk test at one point: in double precision ([`certify_point`]), and where
    /// that fails, with a double-double centre ([`DdSystem::certify`]).
    pub fn certify(&self, x: &[C64]) -> Option<Certificate> {
        self.certify_double(x).or_else(|| self.certify_dd(x))
    }

    /// The double-precision test alone (what the device kernel computes).
    pub fn certify_double(&self, x: &[C64]) -> Option<Certificate> {
        certify_point(self.system, &self.isys, x)
    }

    /// The double-double test alone.
    pub fn certify_dd(&self, x: &[C64]) -> Option<Certificate> {
        self.dd.certify(x)
    }

    /// Why a point that neither test certified is undecided ([`DdSystem::undecided_reason`]).
    pub fn undecided_reason(&self, x: &[C64]) -> &'static str {
        self.dd.undecided_reason(x)
    }

    /// The test at each point, in parallel; `None` points (not finite, not nonsingular:
    /// not tried) and failed tests give `None`.
    pub fn certify_all(&self, points: &[Option<Vec<C64>>]) -> Vec<Option<Certificate>> {
        points
            .par_iter()
            .map(|x| x.as_ref().and_then(|x| self.certify(x)))
            .collect()
    }
}

/// Where a batch of points is certified: the host's cores ([`Certifier`]) or a device
/// ([`super::cuda::GpuCertifier`], which a backend offers through
/// [`crate::backend::Backend::certifier`]). Both give the same certificates, up to the
/// rounding of the approximate inverse and of the interval bounds (docs/certification.md).
pub trait BatchCertifier: Send {
    /// "cpu" or "cuda".
    fn name(&self) -> String;
    /// The Krawczyk test at each point; `None` points are not tried.
    fn certify_batch(&mut self, points: &[Option<Vec<C64>>]) -> Result<Vec<Option<Certificate>>>;
}

impl BatchCertifier for Certifier<'_> {
    fn name(&self) -> String {
        "cpu".into()
    }

    fn certify_batch(&mut self, points: &[Option<Vec<C64>>]) -> Result<Vec<Option<Certificate>>> {
        Ok(self.certify_all(points))
    }
}

/// The counts of a set of certificates (failed tests as `None`).
pub fn summarize<'c>(certs: impl IntoIterator<Item = Option<&'c Certificate>>) -> CertifySummary {
    let ok: Vec<&Certificate> = certs.into_iter().flatten().collect();
    let d = count_distinct(&ok);
    CertifySummary {
        certified: ok.len() as u64,
        certified_distinct: d.roots,
        certified_real: d.real,
        certified_unresolved: d.unresolved,
        certified_double_double: ok.iter().filter(|c| c.double_double).count() as u64,
        uncertified: 0,
    }
}

/// Certifies `points` of `system` and counts (see [`Certifier::certify_all`], [`summarize`]).
pub fn certify_points(
    system: &System,
    points: &[Option<Vec<C64>>],
) -> (Vec<Option<Certificate>>, CertifySummary) {
    let certs = Certifier::new(system).certify_all(points);
    let summary = summarize(certs.iter().map(|c| c.as_ref()));
    (certs, summary)
}
