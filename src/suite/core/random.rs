//! The suite's own pseudo-random numbers, beside proptest's (see
//! [`generate`](super::generate)): plain, seeded sequences for the choices a check makes
//! itself (the stress rounds' costs and times, the generated concurrency scenarios), the same
//! on every run with the same seed ([`env::seed`](super::env::seed)).

/// One step of SplitMix64: a fast, well-mixed sequence from any seed.
pub fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xorshift64*, seeded from the suite's seed (a seed of `0` stays `0`: give it another).
#[derive(Clone, Debug)]
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// The next number below `n` (below 1 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}
