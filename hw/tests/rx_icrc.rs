//! The RX ICRC checker alone against the golden rule: frames of every
//! shape (IPv4 with and without options, IPv6, 802.1Q, one to 142 beats,
//! Ethernet padding and trailing bytes, partial last beats) and copies
//! with one flipped byte stream through the rust-hdl simulation back to
//! back, one-beat frames in consecutive cycles; the verdict for every frame
//! must equal `proto::wire::icrc::compute_icrc` over the frame's covered
//! bytes compared with its trailer, and must come 5 cycles after `tlast`.

use std::sync::{Arc, Mutex};

use hw::rx_icrc::RxIcrc;
use proto::wire::*;
use proto::Psn;
use rust_hdl::prelude::*;

use tb::{lockstep, lockstep_sim};

/// The frame of a WRITE (`opcode`) of `payload` bytes on EV `ev`.
fn write_frame(opcode: Opcode, payload: usize, ev: u32, encap: &Encap) -> Vec<u8> {
    let payload: Vec<u8> = (0..payload).map(|i| (i * 31 + 7) as u8).collect();
    let pkt = RocePacket::write(opcode, 0x12_3456, Psn::new(77), payload)
        .on_ev(ev)
        .with_reth(0x1000, 5)
        .with_imm(9);
    pkt.to_frame(encap).expect("a valid WRITE")
}

/// The golden verdict, straight from the rule: the covered bytes are the
/// IP header through the byte before the trailer, the trailer is the last
/// 4 bytes of the IP length; both from the frame's own length fields.
fn golden_ok(f: &[u8]) -> bool {
    let ip = if f[12..14] == [0x81, 0x00] { 18 } else { 14 };
    let is6 = f[ip - 2..ip] == [0x86, 0xDD];
    let (hl, len) = if is6 {
        (40, 40 + usize::from(u16::from_be_bytes([f[ip + 4], f[ip + 5]])))
    } else {
        (
            usize::from(f[ip] & 0x0F) * 4,
            usize::from(u16::from_be_bytes([f[ip + 2], f[ip + 3]])),
        )
    };
    let end = ip + len;
    let c = icrc::compute_icrc(&f[ip..end - 4], hl, is6);
    f[end - 4..end] == c.to_le_bytes()
}

/// Whether `f`'s length fields are sane (the parser's earlier checks pass),
/// so the verdict is meaningful.
fn checkable(f: &[u8]) -> bool {
    let ip = if f[12..14] == [0x81, 0x00] { 18 } else { 14 };
    let is6 = f[ip - 2..ip] == [0x86, 0xDD];
    if !is6 && f[ip - 2..ip] != [0x08, 0x00] {
        return false;
    }
    let (hl, len) = if is6 {
        (40, 40 + usize::from(u16::from_be_bytes([f[ip + 4], f[ip + 5]])))
    } else {
        (
            usize::from(f[ip] & 0x0F) * 4,
            usize::from(u16::from_be_bytes([f[ip + 2], f[ip + 3]])),
        )
    };
    hl >= 20 && len >= hl + 8 + 16 && ip + len <= f.len()
}

fn frames() -> Vec<Vec<u8>> {
    let v4 = Encap::test_v4();
    let v6 = Encap::test_v6();
    let vlan = |mut f: Vec<u8>| {
        f.splice(12..12, [0x81, 0x00, 0x00, 0x09]);
        f
    };
    let mut bases = Vec::new();
    // Every length from a one-beat frame to four beats, so the covered end
    // falls at every lane (and the trailer straddles beat boundaries).
    for pay in 0..200 {
        let op = [Opcode::WriteMiddle, Opcode::WriteOnly, Opcode::WriteLastImm][pay % 3];
        let enc = if pay % 2 == 0 { &v4 } else { &v6 };
        let mut f = write_frame(op, pay, pay as u32, enc);
        if pay % 5 == 0 {
            f = vlan(f);
        }
        if pay % 7 == 3 {
            f.extend((0..(pay % 90)).map(|i| i as u8 ^ 0x5A)); // padding / trailing bytes
        }
        bases.push(f);
    }
    // IPv4 options (IHL 15; the UDP checksum and BTH byte 4 in beat 1 when
    // tagged), fixed up like a sender would.
    for tagged in [false, true] {
        let mut f = write_frame(Opcode::WriteMiddle, 40, 1, &v4);
        if tagged {
            f = vlan(f);
        }
        let ip = if tagged { 18 } else { 14 };
        f.splice(ip + 20..ip + 20, [1u8; 40]);
        f[ip] = 0x4F;
        let total = u16::from_be_bytes([f[ip + 2], f[ip + 3]]) + 40;
        f[ip + 2..ip + 4].copy_from_slice(&total.to_be_bytes());
        let end = ip + usize::from(total);
        let c = icrc::compute_icrc(&f[ip..end - 4], 60, false);
        f[end - 4..end].copy_from_slice(&c.to_le_bytes());
        bases.push(f);
    }
    bases.push(write_frame(Opcode::WriteOnly, 9000, 3, &v4));
    bases.push(vlan(write_frame(Opcode::WriteOnlyImm, 8000, 4, &v6)));
    let mut out = Vec::new();
    let mut rng = tb::rng::Rng::from_state(0x2545_F491_4F6C_DD1D);
    for (i, f) in bases.iter().enumerate() {
        out.push(f.clone());
        // A flipped byte: every third frame, anywhere; jumbo frames too.
        if i % 3 == 0 || f.len() > 1000 {
            let mut g = f.clone();
            let at = rng.next_u64() as usize % g.len();
            g[at] ^= (rng.next_u64() as u8) | 1;
            out.push(g);
        }
    }
    out.retain(|f| checkable(f));
    out
}

fn to_bits512(chunk: &[u8]) -> Bits<512> {
    let mut b = Bits::<512>::default();
    for (k, w) in chunk.chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[..w.len()].copy_from_slice(w);
        b.set_bits::<64>(64 * k, u64::from_le_bytes(word).into());
    }
    b
}

#[test]
fn verdict_matches_golden_icrc() {
    let frames = frames();
    let want: Vec<bool> = frames.iter().map(|f| golden_ok(f)).collect();
    let bad = want.iter().filter(|&&ok| !ok).count();
    assert!(bad >= 40 && bad < want.len() / 2, "{bad} of {} frames bad", want.len());
    let got = Arc::new(Mutex::new(Vec::<(u64, bool)>::new()));
    let lasts = Arc::new(Mutex::new(Vec::<u64>::new()));
    let (g, l) = (got.clone(), lasts.clone());
    let fr = frames.clone();
    let mut uut = RxIcrc::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(RxIcrc, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        wait_clock_true!(sim, clock, x);
        let mut beats: Vec<Option<(Bits<512>, bool)>> = Vec::new();
        for (i, f) in fr.iter().enumerate() {
            let chunks: Vec<&[u8]> = f.chunks(64).collect();
            for (k, ch) in chunks.iter().enumerate() {
                beats.push(Some((to_bits512(ch), k + 1 == chunks.len())));
            }
            if i % 11 == 10 {
                beats.push(None);
            }
        }
        beats.extend([None; 6]);
        for (n, b) in beats.into_iter().enumerate() {
            let n = n as u64;
            match b {
                Some((d, last)) => {
                    x.s_tdata.next = d;
                    x.s_tlast.next = last;
                    x.s_tvalid.next = true;
                }
                None => {
                    // Garbage on an idle bus must not matter.
                    x.s_tdata.next = to_bits512(&[0xA5; 64]);
                    x.s_tlast.next = true;
                    x.s_tvalid.next = false;
                }
            }
            wait_clock_false!(sim, clock, x);
            if x.out_valid.val() {
                g.lock().unwrap().push((n, x.out_ok.val()));
            }
            if matches!(b, Some((_, true))) {
                l.lock().unwrap().push(n);
            }
            wait_clock_true!(sim, clock, x);
        }
        sim.done(x)
    });
    let t = std::time::Instant::now();
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_rx_icrc", || {
        hw::flow::emit_block("mrc_rx_icrc", &mut RxIcrc::default()).verilog
    });
    let got = got.lock().unwrap();
    let lasts = lasts.lock().unwrap();
    eprintln!(
        "{} frames ({bad} bad), {} cycles simulated in {:?}",
        frames.len(),
        lasts.last().unwrap() + 6,
        t.elapsed()
    );
    assert_eq!(got.len(), want.len(), "one verdict per frame");
    for (i, ((&(at, ok), &w), &last)) in got.iter().zip(&want).zip(lasts.iter()).enumerate() {
        assert_eq!(ok, w, "frame {i} ({} bytes)", frames[i].len());
        assert_eq!(at - last, 5, "frame {i}: verdict 5 cycles after tlast");
    }
}
