//! Bounded random hostile input against both transports (the CI half of the
//! fuzz target `fuzz/fuzz_targets/responder.rs`): random operation strings
//! of valid, mutated-and-resealed, corrupted, truncated and raw frames.

use proto::hostile::Rig;
use proto::model::Transport;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn run(transport: Transport, inputs: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5EED);
    let mut total = proto::hostile::HostileStats::default();
    for i in 0..inputs {
        let mut input = vec![0u8; rng.gen_range(16..600)];
        rng.fill_bytes(&mut input);
        let mut rig = Rig::new(transport);
        assert!(rig.templates() > 4, "rig has templates");
        let s = rig
            .run(&input)
            .unwrap_or_else(|v| panic!("{transport:?} input {i}: {}\n{input:02x?}", v.0));
        total.frames += s.frames;
        total.accepted += s.accepted;
        total.dropped += s.dropped;
        total.sent += s.sent;
    }
    // The generator must reach both outcomes, or the test proves nothing.
    assert!(total.accepted > 100 && total.dropped > 1000, "{transport:?}: {total:?}");
}

#[test]
fn mrc_survives_hostile_frames() {
    run(Transport::Mrc, 400);
}

#[test]
fn rc_survives_hostile_frames() {
    run(Transport::Rc, 400);
}
