//! Any byte string: parsing never panics, both parse entry points agree,
//! and whatever parses re-emits to a frame that parses to the same packet.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::wire::{emit_frame, parse_frame, parse_frame_bytes, parse_frame_headers, WireCounters};

fuzz_target!(|data: &[u8]| {
    let a = parse_frame(data);
    let b = parse_frame_bytes(bytes::Bytes::copy_from_slice(data));
    assert_eq!(a, b);
    let _ = parse_frame_headers(data);
    match a {
        Err(e) => WireCounters::default().count(&e),
        Ok((pkt, encap)) => {
            let mut out = Vec::new();
            emit_frame(&pkt, &encap, &mut out);
            assert_eq!(parse_frame(&out).as_ref().ok(), Some(&(pkt, encap)));
        }
    }
});
