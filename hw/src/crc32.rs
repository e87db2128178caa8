//! CRC-32 (Ethernet / zlib polynomial, reflected) as linear maps over a
//! 512-bit beat, for the RoCEv2 ICRC. Shared leaves: the TX builder uses
//! them to generate the ICRC, the RX ICRC checker (`hw::rx_icrc`) to check
//! it.
//!
//! The CRC register without its initial value and final inversion is
//! linear over GF(2): processing the bytes `B` from state `S` gives
//! `M_n * S ^ crc0(B)`, where `n` is the byte count, `M_n` advances a
//! state over `n` zero bytes and `crc0` is the CRC from state 0. Two
//! facts make a wide engine cheap:
//! * leading zero bytes leave state 0 unchanged, so a partial last beat
//!   is hashed right-aligned (zeros in front) with the same 64-byte
//!   matrix as a full beat, and its state part is `M_n * S`;
//! * the all-ones initial value equals state 0 with the first four message
//!   bytes inverted.
//!
//! Bit order: byte lane `k` of a beat is bits `8k+7..8k` and is processed
//! first-lane-first, least significant bit first (the order of the
//! Ethernet FCS and the ICRC), so bit `j` of the beat is the `j`-th bit
//! fed to the register.
//!
//! Every leaf's simulation model runs the bit-serial register; its Verilog
//! is one XOR per output bit over the masks [`block_masks`] /
//! [`advance_masks`] derive from the same register (unit tests check the
//! masks against the register).

use rust_hdl::prelude::*;

/// The reflected CRC-32 polynomial.
pub const POLY: u32 = 0xEDB8_8320;

/// One bit into the register.
#[inline]
pub fn step_bit(state: u32, bit: bool) -> u32 {
    let fb = (state & 1) ^ u32::from(bit);
    (state >> 1) ^ if fb == 1 { POLY } else { 0 }
}

/// `M_n * state`: the register after `bytes` zero bytes.
pub fn advance(mut state: u32, bytes: usize) -> u32 {
    for _ in 0..8 * bytes {
        state = step_bit(state, false);
    }
    state
}

/// `crc0` of a 64-byte beat given as eight little-endian words (word `w`
/// holds lanes `8w..8w+7`).
pub fn block(words: &[u64; 8]) -> u32 {
    let mut s = 0u32;
    for w in words {
        for b in 0..64 {
            s = step_bit(s, (w >> b) & 1 == 1);
        }
    }
    s
}

/// For each output bit `i`, the beat bits whose XOR it is (as eight
/// 64-bit words): column `j` of the block matrix is `block(e_j)`.
pub fn block_masks() -> [[u64; 8]; 32] {
    let mut m = [[0u64; 8]; 32];
    for j in 0..512 {
        let mut e = [0u64; 8];
        e[j / 64] = 1 << (j % 64);
        let col = block(&e);
        for (i, row) in m.iter_mut().enumerate() {
            if (col >> i) & 1 == 1 {
                row[j / 64] |= 1 << (j % 64);
            }
        }
    }
    m
}

/// For each output bit `i`, the state bits whose XOR it is in `M_bytes`.
pub fn advance_masks(bytes: usize) -> [u32; 32] {
    let mut m = [0u32; 32];
    for j in 0..32 {
        let col = advance(1 << j, bytes);
        for (i, row) in m.iter_mut().enumerate() {
            if (col >> i) & 1 == 1 {
                *row |= 1 << j;
            }
        }
    }
    m
}

fn words_of(b: &Bits<512>) -> [u64; 8] {
    let mut w = [0u64; 8];
    for (k, x) in w.iter_mut().enumerate() {
        *x = b.get_bits::<64>(64 * k).to_u64();
    }
    w
}

/// `o = crc0(d)` over one 64-byte beat (no initial value, no inversion).
#[derive(LogicBlock, Default)]
pub struct CrcBlock {
    pub d: Signal<In, Bits<512>>,
    pub o: Signal<Out, Bits<32>>,
}

impl Logic for CrcBlock {
    fn update(&mut self) {
        self.o.next = u64::from(block(&words_of(&self.d.val()))).into();
    }
    fn connect(&mut self) {
        self.o.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from("always @(*) begin\n");
        for (i, row) in block_masks().iter().enumerate() {
            let hex: String = row.iter().rev().map(|w| format!("{w:016x}")).collect();
            s.push_str(&format!("   o[{i}] = ^(d & 512'h{hex});\n"));
        }
        s.push_str("end");
        Verilog::Custom(s)
    }
}

/// `o = M_K * i`: the register advanced over `K` zero bytes.
#[derive(LogicBlock, Default)]
pub struct CrcAdvance<const K: usize> {
    pub i: Signal<In, Bits<32>>,
    pub o: Signal<Out, Bits<32>>,
}

impl<const K: usize> Logic for CrcAdvance<K> {
    fn update(&mut self) {
        self.o.next = u64::from(advance(self.i.val().to_u64() as u32, K)).into();
    }
    fn connect(&mut self) {
        self.o.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from("always @(*) begin\n");
        for (b, row) in advance_masks(K).iter().enumerate() {
            s.push_str(&format!("   o[{b}] = ^(i & 32'h{row:08x});\n"));
        }
        s.push_str("end");
        Verilog::Custom(s)
    }
}

/// The register after a message followed by its own CRC (the all-ones
/// final inversion undone, stored least significant byte first, as the
/// ICRC and the Ethernet FCS are): the same for every message, so a
/// receiver checks a CRC by running its register over the message *and*
/// the trailer and comparing with this constant (the unit tests derive it
/// from the register).
pub const RESIDUE: u32 = 0xDEBB_20E3;

/// `o = M_pad * RESIDUE`: what the register holds after a checked message
/// and its trailer followed by `pad` zero bytes (0..63): the residue of a
/// message whose last beat is zero-filled after the trailer. A 64-entry
/// table; its Verilog is one 6-input function (one LUT) per output bit.
#[derive(LogicBlock, Default)]
pub struct PaddedResidue {
    pub pad: Signal<In, Bits<6>>,
    pub o: Signal<Out, Bits<32>>,
}

impl Logic for PaddedResidue {
    fn update(&mut self) {
        self.o.next = u64::from(advance(RESIDUE, self.pad.val().to_u64() as usize)).into();
    }
    fn connect(&mut self) {
        self.o.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from("always @(*) begin\n   case (pad)\n");
        for pad in 0..64 {
            s.push_str(&format!("      6'd{pad}: o = 32'h{:08x};\n", advance(RESIDUE, pad)));
        }
        s.push_str("      default: o = 32'h0;\n   endcase\nend");
        Verilog::Custom(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parity(x: u64) -> u32 {
        x.count_ones() & 1
    }

    #[test]
    fn crc32_check_value_through_the_linear_form() {
        // "123456789" with init all-ones and final inversion: invert the
        // first four bytes, hash right-aligned in one beat from state 0.
        let msg = b"123456789";
        let mut bytes = [0u8; 64];
        bytes[64 - msg.len()..].copy_from_slice(msg);
        for b in &mut bytes[64 - msg.len()..64 - msg.len() + 4] {
            *b ^= 0xFF;
        }
        let mut w = [0u64; 8];
        for (k, c) in bytes.chunks(8).enumerate() {
            w[k] = u64::from_le_bytes(c.try_into().unwrap());
        }
        assert_eq!(!block(&w), 0xCBF4_3926);
    }

    #[test]
    fn masks_equal_the_register() {
        let bm = block_masks();
        let mut rng = tb::rng::Rng::from_state(0x9E37_79B9_7F4A_7C15);
        for _ in 0..200 {
            let mut w = [0u64; 8];
            for x in &mut w {
                *x = rng.next_u64();
            }
            let by_mask: u32 = (0..32)
                .map(|i| (bm[i].iter().zip(&w).map(|(m, d)| parity(m & d)).sum::<u32>() & 1) << i)
                .sum();
            assert_eq!(by_mask, block(&w));
        }
        for k in [1, 2, 4, 8, 16, 32, 64] {
            let am = advance_masks(k);
            for _ in 0..50 {
                let s = rng.next_u64() as u32;
                let by_mask: u32 = (0..32).map(|i| ((s & am[i]).count_ones() & 1) << i).sum();
                assert_eq!(by_mask, advance(s, k));
            }
        }
    }

    /// A message (all-ones seed folded in as the first four bytes
    /// inverted), then its CRC stored least significant byte first: the
    /// register ends at `RESIDUE` whatever the message, and at a different
    /// value when any trailer bit is wrong.
    #[test]
    fn residue_of_message_and_trailer() {
        let mut rng = tb::rng::Rng::from_state(0x0123_4567_89AB_CDEF);
        for len in [4usize, 5, 9, 31, 64, 100] {
            let msg: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let run = |bytes: &[u8]| {
                let mut s = 0u32;
                for (i, b) in bytes.iter().enumerate() {
                    let b = if i < 4 { !b } else { *b };
                    for k in 0..8 {
                        s = step_bit(s, (b >> k) & 1 == 1);
                    }
                }
                s
            };
            let crc = !run(&msg);
            let mut framed = msg.clone();
            framed.extend_from_slice(&crc.to_le_bytes());
            assert_eq!(run(&framed), RESIDUE, "len {len}");
            // Zero bytes after the trailer advance the residue.
            for pad in [1usize, 7, 63] {
                let mut padded = framed.clone();
                padded.extend(std::iter::repeat_n(0, pad));
                assert_eq!(run(&padded), advance(RESIDUE, pad));
            }
            for bit in 0..32 {
                let mut bad = framed.clone();
                bad[len + bit / 8] ^= 1 << (bit % 8);
                assert_ne!(run(&bad), RESIDUE);
            }
        }
    }
}
