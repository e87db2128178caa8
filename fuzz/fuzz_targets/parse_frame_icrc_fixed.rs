//! Like `parse_frame`, but the input's ICRC (and IPv4 header checksum) are
//! recomputed first, so mutations reach the transport parser instead of
//! stopping at `BadIcrc`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::wire::{emit_frame, icrc, parse_frame, Ipv4Packet};

fuzz_target!(|data: &[u8]| {
    let mut f = data.to_vec();
    let n = f.len();
    if n >= 14 + 20 + 4 {
        let is_v6 = f[12..14] == [0x86, 0xDD];
        if !is_v6 {
            Ipv4Packet::new_unchecked(&mut f[14..]).fill_checksum();
        }
        let hl = if is_v6 { 40 } else { usize::from(f[14] & 0x0F) * 4 };
        let c = icrc::compute_icrc(&f[14..n - 4], hl, is_v6);
        f[n - 4..].copy_from_slice(&c.to_le_bytes());
    }
    if let Ok((pkt, encap)) = parse_frame(&f) {
        let mut out = Vec::new();
        emit_frame(&pkt, &encap, &mut out);
        assert_eq!(parse_frame(&out).as_ref().ok(), Some(&(pkt, encap)));
    }
});
