//! Conveniences for the tests and benches that run the golden model
//! (cargo feature `test-support`, enabled by the dev-dependencies that need
//! it): QPs brought up at time zero that panic, naming the refused setup,
//! instead of returning an error, and the EV values tests spray on.

use crate::model::ev::EvSetConfig;
use crate::model::{CreateQp, QpSetup};
use crate::time::Instant;

/// First EV value of [`ev_values`] (a UDP source port in the dynamic range).
pub const TEST_EV_BASE: u32 = 0xC000;

/// `n` consecutive EV values from [`TEST_EV_BASE`].
pub fn ev_values(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| TEST_EV_BASE + i).collect()
}

/// An EV set of `n` consecutive values, the rest defaults.
pub fn ev_set(n: usize) -> EvSetConfig {
    EvSetConfig {
        evs: ev_values(n),
        ..EvSetConfig::default()
    }
}

/// A QP brought to RTS at time zero.
pub fn ready<Q: CreateQp>(setup: &QpSetup) -> Q {
    setup
        .bring_up(Instant::ZERO)
        .unwrap_or_else(|e| panic!("QP setup refused ({e}): {setup:?}"))
}

/// A QP brought to RTR at time zero (a responder only).
pub fn receiver<Q: CreateQp>(setup: &QpSetup) -> Q {
    setup
        .bring_up_receiver(Instant::ZERO)
        .unwrap_or_else(|e| panic!("QP setup refused ({e}): {setup:?}"))
}

/// `setup`'s QP and its mirror, both brought to RTS at time zero.
pub fn connected<Q: CreateQp>(setup: &QpSetup) -> (Q, Q) {
    (ready(setup), ready(&setup.mirrored()))
}
