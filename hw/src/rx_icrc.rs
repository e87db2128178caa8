//! RX ICRC checker: the RoCEv2 invariant CRC of every frame on a 512-bit
//! AXI-Stream, checked one beat per cycle. The RX header parser
//! (`hw::rx_parser`) instantiates it on its own input stream and merges the
//! verdict into its priority encoder. See `docs/hw/rx_icrc.md`.
//!
//! How (the golden rule is `proto::wire::icrc::compute_icrc`, checked as
//! `parse_inner` does):
//! * The covered bytes run from 8 bytes before the IP header (they stand
//!   for the all-ones LRH) to the end of the UDP datagram *including* the
//!   4-byte trailer; the datagram end is the IP length (IPv4 total length,
//!   IPv6 40 + payload length), so Ethernet padding and hostile trailing
//!   bytes after it are not covered.
//! * Each beat is masked lane by lane (`IcrcLanes`, `ByteMask`): lanes
//!   before the covered range are zero (leading zeros leave state 0
//!   unchanged), the first four covered bytes are zero and the next four
//!   all-ones (the all-ones seed folded into the data: seed all-ones over
//!   `FF FF FF FF` equals state 0 over `00 00 00 00`), the variant fields
//!   are all-ones, and in the beat holding the last covered byte the lanes
//!   after it are zero. Every mask position is known from beat 0 (VLAN
//!   tag, EtherType, IHL, IP length); the UDP checksum and BTH byte 4 may
//!   fall into beat 1.
//! * The register runs `S = M_64 S ^ crc0(beat)` from state 0 over the
//!   covered beats (`hw::crc32::{CrcBlock, CrcAdvance<64>}`, the TX
//!   builder's leaves).
//! * A message followed by its own CRC leaves the constant
//!   `crc32::RESIDUE` in the register; the `pad = 63 - end lane` zero
//!   lanes after the trailer advance it to `M_pad RESIDUE` (a 64-entry
//!   table, `crc32::PaddedResidue`). So the check is one compare with a
//!   constant, with no trailer extraction and no variable advance (the TX
//!   builder's right-aligning shifter and `M_n` steps are not needed).
//!
//! Pipeline (the beat of a frame's `tlast` at cycle `t`):
//! * A (cycle `t`, from the ports): beat registered; on a frame's first
//!   beat the 802.1Q test, IPv4/IPv6 EtherType test, IHL and the IP length
//!   field (held for the rest of the frame).
//! * B: the frame position of the last covered byte (`end`, one adder) and
//!   of the UDP header.
//! * C: this beat against `end` (covered at all, the last covered one);
//!   the per-lane keep / all-ones / low-nibble masks.
//! * D: masked beat, `crc0` of it.
//! * E: `S = M_64 S ^ D` on covered beats; at the last covered beat the
//!   verdict `S == M_pad RESIDUE`, held to the frame's end.
//!
//! `out_valid` pulses and `out_ok` holds the verdict in cycle `t + 5`, the
//! cycle in which the parser's stage F reads its stage-E registers for the
//! same frame (the parser's record stays six cycles after `tlast`).
//!
//! The verdict is meaningful only for frames the parser's earlier checks
//! pass (an EtherType, IP header and IP length that fit the frame, UDP
//! length = IP payload length, room for BTH + ICRC); for the rest it is
//! some value, never a hang: the golden model checks the ICRC after them,
//! so the parser's priority encoder never looks at it.

use rust_hdl::prelude::*;

use crate::crc32::{CrcAdvance, CrcBlock, PaddedResidue};

/// Frame byte offset of the IP header (after the Ethernet header, 802.1Q
/// tag or not).
fn ip_start(vlan: bool) -> usize {
    if vlan {
        18
    } else {
        14
    }
}

/// Frame positions (in beat 0) of the IP header's variant bytes that the
/// ICRC covers as all-ones (IPv4: TOS, TTL, checksum; IPv6: traffic class
/// and flow label bytes 1-3, hop limit), and of the 4 bytes before the IP
/// header that stand for the second half of the all-ones LRH. IPv6 byte 0's
/// low nibble is [`nibble_lane`]'s.
fn fixed_ones(vlan: bool, is6: bool) -> Vec<usize> {
    let l = ip_start(vlan);
    let ip: &[usize] = if is6 { &[1, 2, 3, 7] } else { &[1, 8, 10, 11] };
    (l - 4..l).chain(ip.iter().map(|o| l + o)).collect()
}

/// The beat-0 lane whose low nibble is all-ones (IPv6 traffic class high
/// nibble; the version nibble stays).
fn nibble_lane(vlan: bool) -> usize {
    ip_start(vlan)
}

/// Offsets from the UDP header of the all-ones bytes after the IP header:
/// the UDP checksum and BTH byte 4 (FECN, BECN, reserved).
const UDP_ONES: [usize; 3] = [6, 7, 12];

/// Per-lane masks of one beat: `keep` (the byte enters as it is), `ones`
/// (the byte is 0xFF), `nibble` (the byte's low nibble is all-ones). A lane
/// with neither `keep` nor `ones` enters as zero.
///
/// Inputs: `beat0`/`beat1` (the beat is the frame's first / second),
/// `vlan`, `is6`, `udp` (frame position of the UDP header, < 128), `last`
/// (the beat holds the last covered byte) and `end_lane` (its lane).
#[derive(LogicBlock, Default)]
pub struct IcrcLanes {
    pub beat0: Signal<In, Bit>,
    pub beat1: Signal<In, Bit>,
    pub vlan: Signal<In, Bit>,
    pub is6: Signal<In, Bit>,
    pub udp: Signal<In, Bits<7>>,
    pub last: Signal<In, Bit>,
    pub end_lane: Signal<In, Bits<6>>,
    pub keep: Signal<Out, Bits<64>>,
    pub ones: Signal<Out, Bits<64>>,
    pub nibble: Signal<Out, Bits<64>>,
}

impl IcrcLanes {
    /// The leaf's function: `(keep, ones, nibble)` as lane bitmaps. The
    /// Verilog is generated from the same position sets.
    #[allow(clippy::too_many_arguments)]
    pub fn lanes(
        beat0: bool,
        beat1: bool,
        vlan: bool,
        is6: bool,
        udp: usize,
        last: bool,
        end_lane: usize,
    ) -> (u64, u64, u64) {
        let (mut keep, mut ones, mut nibble) = (0u64, 0u64, 0u64);
        for k in 0..64 {
            let cut = last && k > end_lane;
            let before_ip = beat0 && k < ip_start(vlan) - 4;
            let fixed = beat0 && fixed_ones(vlan, is6).contains(&k);
            let udp_hit = UDP_ONES
                .iter()
                .any(|o| (beat0 && udp + o == k) || (beat1 && udp + o == 64 + k));
            if !cut && !before_ip {
                keep |= 1 << k;
            }
            if !cut && (fixed || udp_hit) {
                ones |= 1 << k;
            }
            if !cut && beat0 && is6 && k == nibble_lane(vlan) {
                nibble |= 1 << k;
            }
        }
        (keep, ones, nibble)
    }
}

impl Logic for IcrcLanes {
    fn update(&mut self) {
        let (keep, ones, nibble) = IcrcLanes::lanes(
            self.beat0.val(),
            self.beat1.val(),
            self.vlan.val(),
            self.is6.val(),
            self.udp.val().to_u64() as usize,
            self.last.val(),
            self.end_lane.val().to_u64() as usize,
        );
        self.keep.next = keep.into();
        self.ones.next = ones.into();
        self.nibble.next = nibble.into();
    }
    fn connect(&mut self) {
        self.keep.connect();
        self.ones.connect();
        self.nibble.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from("always @(*) begin\n");
        for k in 0..64usize {
            let cut = if k == 0 {
                "1'b0".to_string()
            } else {
                format!("(last & (end_lane < 6'd{k}))")
            };
            // Lanes before the covered range: below 10 always, 10-13 with a tag.
            let before_ip = match k {
                _ if k < ip_start(false) - 4 => "beat0".to_string(),
                _ if k < ip_start(true) - 4 => "(beat0 & vlan)".to_string(),
                _ => "1'b0".to_string(),
            };
            let mut hits = Vec::new();
            for vlan in [false, true] {
                for is6 in [false, true] {
                    if fixed_ones(vlan, is6).contains(&k) {
                        hits.push(format!(
                            "(beat0 & {}vlan & {}is6)",
                            if vlan { "" } else { "~" },
                            if is6 { "" } else { "~" }
                        ));
                    }
                }
            }
            for o in UDP_ONES {
                if k >= o {
                    hits.push(format!("(beat0 & (udp == 7'd{}))", k - o));
                }
                hits.push(format!("(beat1 & (udp == 7'd{}))", 64 + k - o));
            }
            let nib: Vec<String> = [false, true]
                .iter()
                .filter(|&&vlan| nibble_lane(vlan) == k)
                .map(|&vlan| format!("(beat0 & is6 & {}vlan)", if vlan { "" } else { "~" }))
                .collect();
            let nib = if nib.is_empty() {
                "1'b0".to_string()
            } else {
                nib.join(" | ")
            };
            s.push_str(&format!("   keep[{k}] = ~{cut} & ~{before_ip};\n"));
            s.push_str(&format!("   ones[{k}] = ~{cut} & ({});\n", hits.join(" | ")));
            s.push_str(&format!("   nibble[{k}] = ~{cut} & ({nib});\n"));
        }
        s.push_str("end");
        Verilog::Custom(s)
    }
}

/// Applies lane masks to a beat: byte `k` of `o` is byte `k` of `d` where
/// `keep[k]`, else zero; then ORed with 0xFF where `ones[k]` and with 0x0F
/// where `nibble[k]`.
#[derive(LogicBlock, Default)]
pub struct ByteMask {
    pub d: Signal<In, Bits<512>>,
    pub keep: Signal<In, Bits<64>>,
    pub ones: Signal<In, Bits<64>>,
    pub nibble: Signal<In, Bits<64>>,
    pub o: Signal<Out, Bits<512>>,
}

impl Logic for ByteMask {
    fn update(&mut self) {
        let (keep, ones, nibble) = (
            self.keep.val().to_u64(),
            self.ones.val().to_u64(),
            self.nibble.val().to_u64(),
        );
        let d = self.d.val();
        let mut o = Bits::<512>::default();
        for k in 0..64 {
            let mut b = if keep >> k & 1 == 1 {
                d.get_bits::<8>(8 * k).to_u64()
            } else {
                0
            };
            if ones >> k & 1 == 1 {
                b |= 0xFF;
            }
            if nibble >> k & 1 == 1 {
                b |= 0x0F;
            }
            o.set_bits::<8>(8 * k, b.into());
        }
        self.o.next = o;
    }
    fn connect(&mut self) {
        self.o.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from("always @(*) begin\n");
        for k in 0..64 {
            let (hi, lo) = (8 * k + 7, 8 * k);
            s.push_str(&format!(
                "   o[{hi}:{lo}] = (d[{hi}:{lo}] & {{8{{keep[{k}]}}}}) | {{8{{ones[{k}]}}}} | {{4'b0, {{4{{nibble[{k}]}}}}}};\n"
            ));
        }
        s.push_str("end");
        Verilog::Custom(s)
    }
}

/// The checker. Stream in on `s_*` (the parser's input; no back-pressure:
/// it takes a beat every cycle); five cycles after a frame's `tlast` beat
/// `out_valid` pulses with the verdict on `out_ok`.
#[derive(LogicBlock, Default)]
pub struct RxIcrc {
    pub clock: Signal<In, Clock>,
    pub s_tdata: Signal<In, Bits<512>>,
    pub s_tlast: Signal<In, Bit>,
    pub s_tvalid: Signal<In, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ok: Signal<Out, Bit>,
    // Stream state: beat index in the frame (saturating, so a hostile
    // endless frame cannot wrap back into the covered range) and whether
    // the next beat is a frame's first.
    beat: DFF<Bits<12>>,
    not_first: DFF<Bit>,
    // Stage A locals: frame bytes 12, 13, 16 and 17 (EtherType, tagged
    // EtherType).
    byte12: Signal<Local, Bits<8>>,
    byte13: Signal<Local, Bits<8>>,
    byte16: Signal<Local, Bits<8>>,
    byte17: Signal<Local, Bits<8>>,
    vlan_in: Signal<Local, Bit>,
    is6_in: Signal<Local, Bit>,
    // A: the beat, and the frame's facts (loaded on its first beat).
    a_data: DFF<Bits<512>>,
    a_v: DFF<Bit>,
    a_last: DFF<Bit>,
    a_beat: DFF<Bits<12>>,
    a_vlan: DFF<Bit>,
    a_is6: DFF<Bit>,
    a_ihl: DFF<Bits<4>>,
    a_len: DFF<Bits<16>>,
    // B locals and registers: the last covered byte's frame position, the
    // UDP header's.
    end_c: Signal<Local, Bits<17>>,
    b_data: DFF<Bits<512>>,
    b_v: DFF<Bit>,
    b_last: DFF<Bit>,
    b_beat: DFF<Bits<12>>,
    b_vlan: DFF<Bit>,
    b_is6: DFF<Bit>,
    b_end: DFF<Bits<17>>,
    b_udp: DFF<Bits<7>>,
    // C: covered / last covered beat, lane masks.
    end_beat: Signal<Local, Bits<12>>,
    is_final: Signal<Local, Bit>,
    lanes: IcrcLanes,
    c_data: DFF<Bits<512>>,
    c_v: DFF<Bit>,
    c_last: DFF<Bit>,
    c_first: DFF<Bit>,
    c_active: DFF<Bit>,
    c_final: DFF<Bit>,
    c_pad: DFF<Bits<6>>,
    c_keep: DFF<Bits<64>>,
    c_ones: DFF<Bits<64>>,
    c_nibble: DFF<Bits<64>>,
    // D: crc0 of the masked beat.
    mask: ByteMask,
    blk: CrcBlock,
    d_x: DFF<Bits<32>>,
    d_v: DFF<Bit>,
    d_last: DFF<Bit>,
    d_first: DFF<Bit>,
    d_active: DFF<Bit>,
    d_final: DFF<Bit>,
    d_pad: DFF<Bits<6>>,
    // E: the state loop and the verdict.
    m64: CrcAdvance<64>,
    residue: PaddedResidue,
    next_state: Signal<Local, Bits<32>>,
    state: DFF<Bits<32>>,
    ok: DFF<Bit>,
    e_v: DFF<Bit>,
}

impl Logic for RxIcrc {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, beat, not_first, a_data, a_v, a_last, a_beat, a_vlan, a_is6, a_ihl, a_len, b_data, b_v,
            b_last, b_beat, b_vlan, b_is6, b_end, b_udp, c_data, c_v, c_last, c_first, c_active, c_final, c_pad,
            c_keep, c_ones, c_nibble, d_x, d_v, d_last, d_first, d_active, d_final, d_pad, state, ok, e_v
        );
        // ==== Stream side: beat index (saturating at 4095).
        if self.s_tvalid.val() {
            if self.s_tlast.val() {
                self.beat.d.next = 0.into();
                self.not_first.d.next = false;
            } else {
                if self.beat.q.val() != 4095 {
                    self.beat.d.next = self.beat.q.val() + 1;
                }
                self.not_first.d.next = true;
            }
        }
        // ==== Stage A: the beat; on a first beat the Ethernet and IP facts.
        self.byte12.next = self.s_tdata.val().get_bits::<8>(96);
        self.byte13.next = self.s_tdata.val().get_bits::<8>(104);
        self.byte16.next = self.s_tdata.val().get_bits::<8>(128);
        self.byte17.next = self.s_tdata.val().get_bits::<8>(136);
        self.vlan_in.next = (self.byte12.val() == 0x81) & (self.byte13.val() == 0x00);
        self.is6_in.next = (self.byte12.val() == 0x86) & (self.byte13.val() == 0xDD);
        if self.vlan_in.val() {
            self.is6_in.next = (self.byte16.val() == 0x86) & (self.byte17.val() == 0xDD);
        }
        if self.s_tvalid.val() & !self.not_first.q.val() {
            self.a_vlan.d.next = self.vlan_in.val();
            self.a_is6.d.next = self.is6_in.val();
            // IHL: byte 14 (18 tagged), low nibble. IP length: IPv4 total
            // length at IP bytes 2-3, IPv6 payload length at 4-5.
            if self.vlan_in.val() {
                self.a_ihl.d.next = self.s_tdata.val().get_bits::<4>(144);
                if self.is6_in.val() {
                    self.a_len.d.next = (bit_cast::<16, 8>(self.s_tdata.val().get_bits::<8>(176)) << 8)
                        | bit_cast::<16, 8>(self.s_tdata.val().get_bits::<8>(184));
                } else {
                    self.a_len.d.next = (bit_cast::<16, 8>(self.s_tdata.val().get_bits::<8>(160)) << 8)
                        | bit_cast::<16, 8>(self.s_tdata.val().get_bits::<8>(168));
                }
            } else {
                self.a_ihl.d.next = self.s_tdata.val().get_bits::<4>(112);
                if self.is6_in.val() {
                    self.a_len.d.next = (bit_cast::<16, 8>(self.s_tdata.val().get_bits::<8>(144)) << 8)
                        | bit_cast::<16, 8>(self.s_tdata.val().get_bits::<8>(152));
                } else {
                    self.a_len.d.next = (bit_cast::<16, 8>(self.s_tdata.val().get_bits::<8>(128)) << 8)
                        | bit_cast::<16, 8>(self.s_tdata.val().get_bits::<8>(136));
                }
            }
        }
        self.a_data.d.next = self.s_tdata.val();
        self.a_v.d.next = self.s_tvalid.val();
        self.a_last.d.next = self.s_tlast.val();
        self.a_beat.d.next = self.beat.q.val();
        // ==== Stage B: the last covered byte (the trailer's last) is at
        // IP start + IP length - 1: IPv4 14 + total - 1, IPv6 14 + 40 +
        // payload - 1, four more with a tag. The UDP header follows the IP
        // header (IHL x 4, or 40).
        self.end_c.next = 13.into();
        if self.a_is6.q.val() {
            self.end_c.next = 53.into();
        }
        if self.a_vlan.q.val() {
            self.end_c.next = self.end_c.val() + 4;
        }
        self.b_end.d.next = bit_cast::<17, 16>(self.a_len.q.val()) + self.end_c.val();
        self.b_udp.d.next = (bit_cast::<7, 4>(self.a_ihl.q.val()) << 2) + 14;
        if self.a_is6.q.val() {
            self.b_udp.d.next = 54.into();
        }
        if self.a_vlan.q.val() {
            self.b_udp.d.next = (bit_cast::<7, 4>(self.a_ihl.q.val()) << 2) + 18;
            if self.a_is6.q.val() {
                self.b_udp.d.next = 58.into();
            }
        }
        self.b_data.d.next = self.a_data.q.val();
        self.b_v.d.next = self.a_v.q.val();
        self.b_last.d.next = self.a_last.q.val();
        self.b_beat.d.next = self.a_beat.q.val();
        self.b_vlan.d.next = self.a_vlan.q.val();
        self.b_is6.d.next = self.a_is6.q.val();
        // ==== Stage C: is this beat covered, is it the last covered one;
        // the lane masks. Zero lanes after the trailer: `pad` of them.
        self.end_beat.next = bit_cast::<12, 11>(self.b_end.q.val().get_bits::<11>(6));
        self.is_final.next = self.b_beat.q.val() == self.end_beat.val();
        self.lanes.beat0.next = self.b_beat.q.val() == 0;
        self.lanes.beat1.next = self.b_beat.q.val() == 1;
        self.lanes.vlan.next = self.b_vlan.q.val();
        self.lanes.is6.next = self.b_is6.q.val();
        self.lanes.udp.next = self.b_udp.q.val();
        self.lanes.last.next = self.is_final.val();
        self.lanes.end_lane.next = self.b_end.q.val().get_bits::<6>(0);
        self.c_keep.d.next = self.lanes.keep.val();
        self.c_ones.d.next = self.lanes.ones.val();
        self.c_nibble.d.next = self.lanes.nibble.val();
        self.c_active.d.next = self.b_beat.q.val() <= self.end_beat.val();
        self.c_final.d.next = self.is_final.val();
        self.c_first.d.next = self.b_beat.q.val() == 0;
        self.c_pad.d.next = !self.b_end.q.val().get_bits::<6>(0);
        self.c_data.d.next = self.b_data.q.val();
        self.c_v.d.next = self.b_v.q.val();
        self.c_last.d.next = self.b_last.q.val();
        // ==== Stage D: crc0 of the masked beat.
        self.mask.d.next = self.c_data.q.val();
        self.mask.keep.next = self.c_keep.q.val();
        self.mask.ones.next = self.c_ones.q.val();
        self.mask.nibble.next = self.c_nibble.q.val();
        self.blk.d.next = self.mask.o.val();
        self.d_x.d.next = self.blk.o.val();
        self.d_v.d.next = self.c_v.q.val();
        self.d_last.d.next = self.c_last.q.val();
        self.d_first.d.next = self.c_first.q.val();
        self.d_active.d.next = self.c_active.q.val();
        self.d_final.d.next = self.c_final.q.val();
        self.d_pad.d.next = self.c_pad.q.val();
        // ==== Stage E: S = M_64 S ^ D from state 0 at the first beat; at
        // the last covered beat compare with the padded residue and hold
        // the verdict to the frame's end (a frame whose covered range ends
        // before its last beat carries trailing bytes).
        self.m64.i.next = self.state.q.val();
        self.next_state.next = self.m64.o.val() ^ self.d_x.q.val();
        if self.d_first.q.val() {
            self.next_state.next = self.d_x.q.val();
        }
        self.residue.pad.next = self.d_pad.q.val();
        if self.d_v.q.val() {
            if self.d_active.q.val() {
                self.state.d.next = self.next_state.val();
            }
            if self.d_final.q.val() {
                self.ok.d.next = self.next_state.val() == self.residue.o.val();
            } else if self.d_first.q.val() {
                self.ok.d.next = false;
            }
        }
        self.e_v.d.next = self.d_v.q.val() & self.d_last.q.val();
        self.out_valid.next = self.e_v.q.val();
        self.out_ok.next = self.ok.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::IcrcLanes;

    /// Untagged IPv4 without options: beat 0 lanes 0-9 zero, 10-13 ones
    /// (the seed), TOS/TTL/checksum ones, UDP checksum (40, 41) and BTH
    /// byte 4 (46) ones; a last beat ending at lane 59 cuts lanes 60-63.
    #[test]
    fn lanes_of_an_untagged_ipv4_first_beat() {
        let (keep, ones, nibble) = IcrcLanes::lanes(true, false, false, false, 34, true, 59);
        let bits = |v: &[usize]| v.iter().fold(0u64, |a, &k| a | 1 << k);
        assert_eq!(keep, !bits(&(0..10).collect::<Vec<_>>()) & ((1 << 60) - 1));
        assert_eq!(ones, bits(&[10, 11, 12, 13, 15, 22, 24, 25, 40, 41, 46]));
        assert_eq!(nibble, 0);
    }

    /// Tagged IPv4 with 60-byte header: the UDP checksum (bytes 84, 85)
    /// and BTH byte 4 (90) land in beat 1.
    #[test]
    fn long_options_push_masks_into_beat_1() {
        let (keep, ones, nibble) = IcrcLanes::lanes(false, true, true, false, 78, false, 0);
        assert_eq!(keep, u64::MAX);
        assert_eq!(ones, 1 << 20 | 1 << 21 | 1 << 26);
        assert_eq!(nibble, 0);
        // Tagged IPv6: seed lanes 14-17, traffic class / flow label 19-21,
        // hop limit 25, the low nibble of lane 18; UDP (58) is in beat 0
        // but its checksum (64, 65) and BTH byte 4 (70) are in beat 1.
        let (_, ones6, nib6) = IcrcLanes::lanes(true, false, true, true, 58, false, 0);
        assert_eq!(nib6, 1 << 18);
        assert_eq!(
            ones6,
            [14, 15, 16, 17, 19, 20, 21, 25].iter().fold(0u64, |a, k| a | 1 << k)
        );
    }
}
