//! Payload push cache: the payload of a small WRITE (at most one 64-byte
//! beat) that a driver pushes through the push window
//! (`contract::regmap::push`) before its doorbell, kept by its QP, IOVA and
//! length, answers the TX path's payload read of exactly that from the
//! card instead of the host (a PCIe round trip saved per small post). It
//! sits between the TX path's payload read port and the DMA read arbiter;
//! the TX path does not know it is there. See `docs/hw/payload_push.md`.
//!
//! * A read request whose QP (the TX path's `qp` beside the request), IOVA
//!   and length a valid entry holds is a **hit** when no read this block
//!   forwarded is still outstanding (so the answer cannot pass an earlier
//!   read's beats) and the previous hit's beat has been taken: the request
//!   is taken at once, the entry's payload is the one response beat (the
//!   request's tag, the length's lanes, `last`) from the next cycle, and
//!   the entry is freed (consumed).
//! * Any other request is **forwarded** unchanged; in the cycle after,
//!   every entry of the forwarded read's QP is freed (dropped). The TX path
//!   reads a QP's packets in order, so a pushed message's own read is the
//!   last read of its QP that can find its entry: an entry left behind by
//!   a forwarded read could answer a later message from the same buffer
//!   with this one's bytes.
//! * A push of the key an entry already holds refills that entry; any
//!   other push fills the oldest entry (round robin). Either drops the
//!   payload the entry held, if it still held one. A push whose length is
//!   not 1 to 64 bytes fills nothing (counted as a drop).
//! * A send-context write (config table 1: a QP reset) clears the cache
//!   and the staged words: a QP in error never reads its pushed payloads,
//!   and is reset before it sends again.

use rust_hdl::prelude::*;

use crate::bus::{ConfigSink, DmaReadInitiator, DmaReadTarget};
use crate::contract_rows::TableId;
use crate::desc_push::WORD_BITS;
use crate::param::Param;
use crate::push_cache::{PushAnswer, PushEntries, PushStaging};
use contract::config::table;
use contract::regmap::push;

/// Bits of an entry's key: the IOVA (63-0), the length (79-64) and the QP
/// (87-80), compared whole with the request's.
pub const KEY_BITS: usize = 64 + 16 + 8;
/// Bit offset of the QP in a key (the kernel writes it as the literal 80).
const KEY_QP: usize = 80;
const _: () = assert!(KEY_QP + 8 == KEY_BITS);
/// The payload words' block of the window: words 32-47, the index's bits
/// 5-4 = 2 (the kernel compares with the parameter below).
const _: () = assert!(push::PAYLOAD / 4 == 2 << 4 && push::PAYLOAD_WORDS == 16);

#[derive(LogicBlock, Default)]
pub struct PayloadPushCache {
    pub clock: Signal<In, Clock>,
    /// A word written to the push window (the CSR's registered decode):
    /// `push_word` = (address - window) / 4, `push_data` the word.
    pub push_valid: Signal<In, Bit>,
    pub push_word: Signal<In, Bits<WORD_BITS>>,
    pub push_data: Signal<In, Bits<32>>,
    /// Shared config port: a table-1 (send context) row clears the cache.
    pub cfg: ConfigSink,
    /// The TX path's payload read port (this block serves it) and the QP
    /// of the packet whose payload the request reads (valid with it).
    pub s: DmaReadTarget,
    pub s_qp: Signal<In, Bits<8>>,
    /// Toward the DMA read arbiter: the reads that miss.
    pub m: DmaReadInitiator,
    /// Pulse: a read was answered from the cache.
    pub cnt_consumed: Signal<Out, Bit>,
    /// Pulse: one or more payloads were dropped unused this cycle, or a
    /// push was refused.
    pub cnt_dropped: Signal<Out, Bit>,
    // ---- Parts (`hw::push_cache`).
    staging: PushStaging,
    entries: PushEntries<KEY_BITS>,
    answer: PushAnswer,
    // ---- Named values (Verilog localparams).
    t_sq_ctx: TableId<{ table::SQ_CTX }>,
    /// Window words: the payload's block (index bits 5-4), its IOVA (low,
    /// high) and its key (commit).
    p_words_payload: Param<2, { (push::PAYLOAD as u64 / 4) >> 4 }>,
    p_word_iova_lo: Param<WORD_BITS, { push::PAYLOAD_IOVA_LO as u64 / 4 }>,
    p_word_iova_hi: Param<WORD_BITS, { push::PAYLOAD_IOVA_HI as u64 / 4 }>,
    p_word_key: Param<WORD_BITS, { push::PAYLOAD_KEY as u64 / 4 }>,
    /// The largest length a push carries (one beat), and the beat's lanes.
    p_max_len: Param<16, { push::PAYLOAD_MAX as u64 }>,
    p_lanes: Param<7, { push::PAYLOAD_MAX as u64 }>,
    /// Every byte lane of a beat.
    p_all_lanes: Param<64, { u64::MAX }>,
    // ---- The staged payload's IOVA.
    st_iova_lo: DFF<Bits<32>>,
    st_iova_hi: DFF<Bits<32>>,
    /// The read forwarded in the last cycle's QP (its drop check runs on
    /// this register and `answer.fwd_valid`).
    fwd_qp: DFF<Bits<8>>,
    // ---- Combinational.
    /// The request's length's low 7 bits (1 to 64 on a hit: the key's),
    /// and the shift that leaves that many lanes of `p_all_lanes`.
    req_len: Signal<Local, Bits<7>>,
    req_shift: Signal<Local, Bits<7>>,
    commit: Signal<Local, Bit>,
    /// The committing push's length is 1 to 64 bytes: it fills an entry.
    commit_ok: Signal<Local, Bit>,
    /// A send-context row: clears the entries and the staging.
    clear: Signal<Local, Bit>,
}

impl Logic for PayloadPushCache {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, st_iova_lo, st_iova_hi, fwd_qp);
        clock!(self, clock, staging, entries, answer);
        DmaReadTarget::link(&mut self.s, &mut self.answer.s);
        DmaReadInitiator::link(&mut self.m, &mut self.answer.m);
        // ---- Lookup of the TX path's read. (Offsets in a kernel are
        // literals: 64 = the length's, 80 = KEY_QP.)
        self.entries.req_key.next = bit_cast::<KEY_BITS, 64>(self.s.req.addr.val())
            | (bit_cast::<KEY_BITS, 16>(self.s.req.len.val()) << 64)
            | (bit_cast::<KEY_BITS, 8>(self.s_qp.val()) << 80);
        self.answer.found.next = self.entries.found.val();
        self.answer.found_data.next = self.entries.found_data.val();
        // A hit's lanes: its length's (the request's, equal to the key's).
        self.req_len.next = self.s.req.len.val().get_bits::<7>(0);
        self.req_shift.next = self.p_lanes.val() - self.req_len.val();
        self.answer.found_keep.next = self.p_all_lanes.val() >> self.req_shift.val();
        self.entries.consume.next = self.answer.take_hit.val();
        // The forwarded read's QP, for the drop check of the next cycle.
        self.fwd_qp.d.next = self.s_qp.val();
        // ---- Drops: entries of the last forwarded read's QP.
        self.entries.drop0.next = self.entries.valid0.val()
            & self.answer.fwd_valid.val()
            & (self.entries.key0.val().get_bits::<8>(80) == self.fwd_qp.q.val());
        self.entries.drop1.next = self.entries.valid1.val()
            & self.answer.fwd_valid.val()
            & (self.entries.key1.val().get_bits::<8>(80) == self.fwd_qp.q.val());
        self.entries.drop2.next = self.entries.valid2.val()
            & self.answer.fwd_valid.val()
            & (self.entries.key2.val().get_bits::<8>(80) == self.fwd_qp.q.val());
        self.entries.drop3.next = self.entries.valid3.val()
            & self.answer.fwd_valid.val()
            & (self.entries.key3.val().get_bits::<8>(80) == self.fwd_qp.q.val());
        // ---- Pushes: stage the words; the key word commits.
        self.staging.write.next =
            self.push_valid.val() & (self.push_word.val().get_bits::<2>(4) == self.p_words_payload.val());
        self.staging.word.next = self.push_word.val().get_bits::<4>(0);
        self.staging.data.next = self.push_data.val();
        if self.push_valid.val() & (self.push_word.val() == self.p_word_iova_lo.val()) {
            self.st_iova_lo.d.next = self.push_data.val();
        }
        if self.push_valid.val() & (self.push_word.val() == self.p_word_iova_hi.val()) {
            self.st_iova_hi.d.next = self.push_data.val();
        }
        self.commit.next = self.push_valid.val() & (self.push_word.val() == self.p_word_key.val());
        self.commit_ok.next = self.commit.val()
            & self.push_data.val().get_bits::<16>(0).any()
            & (self.push_data.val().get_bits::<16>(0) <= self.p_max_len.val());
        self.clear.next = self.cfg.valid.val() & (self.cfg.table.val() == self.t_sq_ctx.val());
        // Every staged word is zeroed by a commit (the next push writes
        // only its nonzero words) and by a send-context row: a push cut
        // off before its commit (a driver killed mid-push) leaves nothing
        // for the next one to inherit, since a driver writes that row
        // before it posts.
        self.staging.clear.next = self.commit.val() | self.clear.val();
        if self.commit.val() | self.clear.val() {
            self.st_iova_lo.d.next = 0.into();
            self.st_iova_hi.d.next = 0.into();
        }
        self.entries.commit.next = self.commit_ok.val();
        // The key word: the length in bits 15-0 (at most 64), the QP in
        // bits 23-16 (16 = push::PAYLOAD_KEY_QP_SHIFT).
        self.entries.commit_key.next = bit_cast::<KEY_BITS, 32>(self.st_iova_lo.q.val())
            | (bit_cast::<KEY_BITS, 32>(self.st_iova_hi.q.val()) << 32)
            | (bit_cast::<KEY_BITS, 16>(self.push_data.val().get_bits::<16>(0)) << 64)
            | (bit_cast::<KEY_BITS, 8>(self.push_data.val().get_bits::<8>(16)) << 80);
        self.entries.commit_data.next = self.staging.staged.val();
        self.entries.clear.next = self.clear.val();
        self.cnt_consumed.next = self.answer.take_hit.val();
        self.cnt_dropped.next = (self.commit.val() & !self.commit_ok.val()) | self.entries.dropped.val();
    }
}
