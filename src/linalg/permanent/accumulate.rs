//! Summation of the 2^(n−1) signed products of a Gray-code permanent.
//!
//! Three accumulators, selected by [`Accumulation`]:
//! - `Plain`: recursive summation, error ≤ (N−1)·u·Σ|t_k| for N terms (Higham, *Accuracy and
//!   Stability of Numerical Algorithms*, §4.2).
//! - `Kahan`: compensated summation (Kahan 1965), error ≤ (2u + O(N u²))·Σ|t_k|.
//! - `DoubleDouble`: the sum is kept as an unevaluated pair `hi + lo` updated by Knuth's
//!   TwoSum (error-free transformation), i.e. a double-double accumulator with a double
//!   addend; error ≤ (2u + O(N u²))·Σ|t_k| as well, but the compensation never loses the
//!   low part of large cancellations.
//!
//! Complex values are accumulated componentwise. Every accumulator reports its state as a
//! pair `(hi, lo)` so that chunk sums can be combined in the same arithmetic.

/// How the terms of the permanent sum are accumulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Accumulation {
    /// Recursive summation in f64.
    #[default]
    Plain,
    /// Kahan compensated summation.
    Kahan,
    /// Double-double accumulator (TwoSum).
    DoubleDouble,
}

/// Knuth's TwoSum: `s + e == a + b` exactly, `s = fl(a + b)`.
#[inline(always)]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// A running real sum.
pub trait Accumulator: Copy + Default + Send {
    /// The same accumulator on 4 and 8 independent lanes (structure of arrays, so the
    /// kernels' per-lane updates compile to SIMD instructions).
    type Lanes4: LaneAccumulator<4>;
    type Lanes8: LaneAccumulator<8>;
    fn add(&mut self, x: f64);
    /// The state as an unevaluated sum `hi + lo`.
    fn parts(&self) -> (f64, f64);
    /// Adds another accumulator's state (used to combine chunk sums in chunk order).
    #[inline(always)]
    fn add_parts(&mut self, (hi, lo): (f64, f64)) {
        self.add(hi);
        self.add(lo);
    }
    #[inline(always)]
    fn value(&self) -> f64 {
        let (hi, lo) = self.parts();
        hi + lo
    }
}

/// Recursive summation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Plain(pub f64);

impl Accumulator for Plain {
    type Lanes4 = PlainLanes<4>;
    type Lanes8 = PlainLanes<8>;
    #[inline(always)]
    fn add(&mut self, x: f64) {
        self.0 += x;
    }
    #[inline(always)]
    fn parts(&self) -> (f64, f64) {
        (self.0, 0.0)
    }
}

/// Kahan's compensated summation: `sum − c` approximates the exact sum.
#[derive(Clone, Copy, Debug, Default)]
pub struct Kahan {
    sum: f64,
    c: f64,
}

impl Accumulator for Kahan {
    type Lanes4 = KahanLanes<4>;
    type Lanes8 = KahanLanes<8>;
    #[inline(always)]
    fn add(&mut self, x: f64) {
        let y = x - self.c;
        let t = self.sum + y;
        self.c = (t - self.sum) - y;
        self.sum = t;
    }
    #[inline(always)]
    fn parts(&self) -> (f64, f64) {
        (self.sum, -self.c)
    }
}

/// Double-double accumulator: `hi + lo` with `lo` collecting the TwoSum errors.
#[derive(Clone, Copy, Debug, Default)]
pub struct DoubleDouble {
    hi: f64,
    lo: f64,
}

impl Accumulator for DoubleDouble {
    type Lanes4 = DoubleDoubleLanes<4>;
    type Lanes8 = DoubleDoubleLanes<8>;
    #[inline(always)]
    fn add(&mut self, x: f64) {
        let (s, e) = two_sum(self.hi, x);
        let lo = self.lo + e;
        // Renormalize (FastTwoSum) so that |lo| stays below ulp(hi).
        let hi = s + lo;
        self.lo = lo - (hi - s);
        self.hi = hi;
    }
    #[inline(always)]
    fn parts(&self) -> (f64, f64) {
        (self.hi, self.lo)
    }
    #[inline(always)]
    fn add_parts(&mut self, (hi, lo): (f64, f64)) {
        // Double-double + double-double (sloppy add of Dekker/Bailey), exact in `hi`.
        let (s, e) = two_sum(self.hi, hi);
        let e = e + self.lo + lo;
        let h = s + e;
        self.lo = e - (h - s);
        self.hi = h;
    }
}

/// W independent running sums (one per lane).
pub trait LaneAccumulator<const W: usize>: Copy + Send {
    fn new() -> Self;
    fn add(&mut self, x: &[f64; W]);
    /// Lane `t` as an unevaluated sum `hi + lo`.
    fn parts(&self, t: usize) -> (f64, f64);
}

/// [`Plain`] on W lanes.
#[derive(Clone, Copy, Debug)]
pub struct PlainLanes<const W: usize> {
    s: [f64; W],
}

// Indexed lane loops on purpose: they compile to SIMD instructions.
#[allow(clippy::needless_range_loop)]
impl<const W: usize> LaneAccumulator<W> for PlainLanes<W> {
    fn new() -> Self {
        PlainLanes { s: [0.0; W] }
    }
    #[inline(always)]
    fn add(&mut self, x: &[f64; W]) {
        for t in 0..W {
            self.s[t] += x[t];
        }
    }
    fn parts(&self, t: usize) -> (f64, f64) {
        (self.s[t], 0.0)
    }
}

/// [`Kahan`] on W lanes.
#[derive(Clone, Copy, Debug)]
pub struct KahanLanes<const W: usize> {
    sum: [f64; W],
    c: [f64; W],
}

// Indexed lane loops on purpose: they compile to SIMD instructions.
#[allow(clippy::needless_range_loop)]
impl<const W: usize> LaneAccumulator<W> for KahanLanes<W> {
    fn new() -> Self {
        KahanLanes {
            sum: [0.0; W],
            c: [0.0; W],
        }
    }
    #[inline(always)]
    fn add(&mut self, x: &[f64; W]) {
        for t in 0..W {
            let y = x[t] - self.c[t];
            let s = self.sum[t] + y;
            self.c[t] = (s - self.sum[t]) - y;
            self.sum[t] = s;
        }
    }
    fn parts(&self, t: usize) -> (f64, f64) {
        (self.sum[t], -self.c[t])
    }
}

/// [`DoubleDouble`] on W lanes.
#[derive(Clone, Copy, Debug)]
pub struct DoubleDoubleLanes<const W: usize> {
    hi: [f64; W],
    lo: [f64; W],
}

// Indexed lane loops on purpose: they compile to SIMD instructions.
#[allow(clippy::needless_range_loop)]
impl<const W: usize> LaneAccumulator<W> for DoubleDoubleLanes<W> {
    fn new() -> Self {
        DoubleDoubleLanes {
            hi: [0.0; W],
            lo: [0.0; W],
        }
    }
    #[inline(always)]
    fn add(&mut self, x: &[f64; W]) {
        for t in 0..W {
            let (s, e) = two_sum(self.hi[t], x[t]);
            let lo = self.lo[t] + e;
            let hi = s + lo;
            self.lo[t] = lo - (hi - s);
            self.hi[t] = hi;
        }
    }
    fn parts(&self, t: usize) -> (f64, f64) {
        (self.hi[t], self.lo[t])
    }
}

/// Sums `xs` in order with accumulator `A` (reference helper, also used for chunk sums).
pub fn sum_with<A: Accumulator>(xs: impl IntoIterator<Item = f64>) -> f64 {
    let mut a = A::default();
    for x in xs {
        a.add(x);
    }
    a.value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compensated_sums_recover_cancelled_low_parts() {
        // 1 + 1e-16 repeated: plain summation loses every 1e-16.
        let mut xs = vec![1.0];
        xs.extend(std::iter::repeat_n(1e-16, 10_000));
        xs.push(-1.0);
        let exact = 1e-12;
        assert_eq!(sum_with::<Plain>(xs.iter().copied()), 0.0);
        let k = sum_with::<Kahan>(xs.iter().copied());
        let d = sum_with::<DoubleDouble>(xs.iter().copied());
        // Kahan: within its bound 2u·Σ|x| (it cannot keep the low part through the final
        // cancellation); double-double keeps it (error ~ u·|sum| + N·u²·Σ|x|).
        let abs_sum: f64 = xs.iter().map(|x| x.abs()).sum();
        assert!(
            (k - exact).abs() <= 2.0 * f64::EPSILON / 2.0 * abs_sum,
            "kahan {k}"
        );
        assert!(
            (k - exact).abs() > 1e-20,
            "Kahan is not expected to be exact here: {k}"
        );
        assert!((d - exact).abs() < 1e-24, "dd {d}");
    }

    #[test]
    fn two_sum_is_error_free() {
        let (s, e) = two_sum(1.0, 1e-17);
        assert_eq!(s, 1.0);
        assert_eq!(e, 1e-17);
    }
}
