//! The golden model's side of a run with several QP pairs: N pairs of
//! model QPs over the same two links, `proto::loopback::pairs` (the
//! loopback runner, which `Scenario::run` uses with one pair). Re-exported here,
//! where `SystemConfig::run_golden` builds the pairs of a run.

pub use proto::loopback::pairs::{run_pairs, GoldenError, PairSpec};
