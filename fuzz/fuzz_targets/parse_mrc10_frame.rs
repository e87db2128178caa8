//! Any byte string through the MRC 1.0 frame parser: it never panics, an
//! error is one typed, countable kind, and whatever parses is a valid
//! packet that re-emits to a frame parsing to the same packet. The input
//! is tried as it is and resealed (IPv4 checksum and ICRC recomputed), so
//! mutations reach every header parser instead of stopping at the ICRC.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::wire::icrc::reseal_frame;
use proto::wire::mrc10::{emit_frame, parse_frame, parse_frame_headers, Profile};
use proto::wire::WireCounters;

fn check(frame: &[u8]) {
    let profile = Profile::DEFAULT;
    let full = parse_frame(frame, &profile);
    let _ = parse_frame_headers(frame, &profile);
    match full {
        Err(e) => {
            let mut c = WireCounters::default();
            c.count(&e);
            assert_eq!(c.total(), 1);
        }
        Ok((pkt, encap)) => {
            assert!(pkt.validate(&profile).is_ok(), "{pkt:?}");
            let mut out = Vec::new();
            emit_frame(&pkt, &encap, &profile, &mut out);
            assert_eq!(parse_frame(&out, &profile).as_ref().ok(), Some(&(pkt, encap)));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let mut sealed = data.to_vec();
    reseal_frame(&mut sealed);
    check(&sealed);
});
