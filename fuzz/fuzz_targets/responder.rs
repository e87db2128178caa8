//! Hostile frames against a live MRC queue pair and a live RC queue pair:
//! valid, mutated-and-resealed, corrupted, truncated and raw frames, with
//! time passing. Every dropped frame must be typed and counted once and
//! change no state; nothing may panic; everything the QP sends must stay
//! well-formed. The first input byte picks the transport.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::hostile::Rig;
use proto::model::Transport;

fuzz_target!(|data: &[u8]| {
    let Some((&which, ops)) = data.split_first() else {
        return;
    };
    let transport = if which & 1 == 0 { Transport::Mrc } else { Transport::Rc };
    if let Err(v) = Rig::new(transport).run(ops) {
        panic!("{transport:?}: {}", v.0);
    }
});
