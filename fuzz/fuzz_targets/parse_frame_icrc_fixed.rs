//! Like `parse_frame`, but the input's ICRC (and IPv4 header checksum) are
//! recomputed first, so mutations reach the transport parser instead of
//! stopping at `BadIcrc`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::wire::{emit_frame, icrc, parse_frame};

fuzz_target!(|data: &[u8]| {
    let mut f = data.to_vec();
    icrc::reseal_frame(&mut f);
    if let Ok((pkt, encap)) = parse_frame(&f) {
        let mut out = Vec::new();
        emit_frame(&pkt, &encap, &mut out);
        assert_eq!(parse_frame(&out).as_ref().ok(), Some(&(pkt, encap)));
    }
});
