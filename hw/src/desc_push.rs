//! Descriptor push cache: the descriptors a driver pushes through the
//! push window (`contract::regmap::push`) before its doorbell, kept by the
//! IOVA of their ring slot, answer the requester's one-descriptor read of
//! that slot from the card instead of the host (a PCIe round trip saved
//! per single post). It sits between the requester's descriptor read port
//! and the DMA read arbiter; the requester does not know it is there. See
//! `docs/hw/desc_push.md`.
//!
//! * A read request of one descriptor (64 bytes) whose slot a valid entry
//!   holds is a **hit** when no read this block forwarded is still
//!   outstanding (so the answer cannot pass an earlier read's beats) and
//!   the previous hit's beat has been taken: the request is taken at
//!   once, the entry's descriptor is the one response beat (the
//!   request's tag, `last`) from the next cycle, and the entry is freed
//!   (consumed).
//! * Any other request is **forwarded** unchanged; in the cycle after,
//!   every entry whose slot the read covers is freed (dropped): the host
//!   answers it, and an entry left behind would be stale the next time
//!   the ring passes the slot.
//! * A push of a slot an entry already holds refills that entry; any
//!   other push fills the oldest entry (round robin). Either drops the
//!   push the entry held, if it still held one.
//! * A send-context write (config table 1: a QP reset) clears the cache
//!   and the staged words.

use rust_hdl::prelude::*;

use crate::bus::{ConfigSink, DmaReadInitiator, DmaReadTarget};
use crate::contract_rows::TableId;
use crate::param::Param;
use crate::push_cache::{PushAnswer, PushEntries, PushStaging};
use contract::config::table;
use contract::layout::sqe;
use contract::regmap::push;

/// Entries of the cache (the regmap's `push.entries`).
pub const ENTRIES: usize = crate::push_cache::ENTRIES;
/// Bits of a descriptor slot's IOVA the cache keys on (63-6): slots are
/// `sqe::SIZE` = 64 bytes, aligned (the requester's `sq_base` check).
pub const SLOT_BITS: usize = 64 - SLOT_SHIFT;
/// log2 of the descriptor size (the kernel writes it as the literal 6:
/// a kernel cannot name a const in a bit offset).
const SLOT_SHIFT: usize = 6;
const _: () = assert!(1 << SLOT_SHIFT == sqe::SIZE);
/// Bits of the number of slots a forwarded read covers, `ceil(len / 64)`
/// for a 16-bit `len` (at most 1024).
const COVER_BITS: usize = 11;
/// Bits of the push window's word index (64 words of 4 bytes; this block
/// takes words 0-17, `hw::payload_push` words 32-50).
pub const WORD_BITS: usize = 6;
const _: () = assert!(1 << WORD_BITS == push::SIZE as usize / 4);
/// The descriptor words are the window's first 16: the index's bits 5-4
/// are 0 (the kernel compares with 0).
const _: () = assert!(push::DESC_WORDS == 16);

#[derive(LogicBlock, Default)]
pub struct DescPushCache {
    pub clock: Signal<In, Clock>,
    /// A word written to the push window (the CSR's registered decode):
    /// `push_word` = (address - window) / 4, `push_data` the word.
    pub push_valid: Signal<In, Bit>,
    pub push_word: Signal<In, Bits<WORD_BITS>>,
    pub push_data: Signal<In, Bits<32>>,
    /// Shared config port: a table-1 (send context) row clears the cache.
    pub cfg: ConfigSink,
    /// The requester's descriptor read port (this block serves it).
    pub s: DmaReadTarget,
    /// Toward the DMA read arbiter: the reads that miss.
    pub m: DmaReadInitiator,
    /// Pulse: a read was answered from the cache.
    pub cnt_consumed: Signal<Out, Bit>,
    /// Pulse: one or more entries were dropped unused this cycle.
    pub cnt_dropped: Signal<Out, Bit>,
    // ---- Parts (`hw::push_cache`).
    staging: PushStaging,
    entries: PushEntries<SLOT_BITS>,
    answer: PushAnswer,
    // ---- Named values (Verilog localparams).
    t_sq_ctx: TableId<{ table::SQ_CTX }>,
    /// Request length of one descriptor.
    p_one_desc: Param<16, { sqe::SIZE as u64 }>,
    /// Window words: the slot IOVA's low word, and the high word (commit).
    p_word_slot_lo: Param<WORD_BITS, { push::SLOT_LO as u64 / 4 }>,
    p_word_slot_hi: Param<WORD_BITS, { push::SLOT_HI as u64 / 4 }>,
    /// Bytes a descriptor covers minus one: rounds a read length up.
    p_round_up: Param<17, { sqe::SIZE as u64 - 1 }>,
    /// Every byte lane of a hit's beat is valid.
    p_all_lanes: Param<64, { u64::MAX }>,
    /// The staged slot IOVA's low word.
    st_slot_lo: DFF<Bits<32>>,
    /// The read forwarded in the last cycle: its first slot and how many
    /// it covers (the drop check runs on these and `answer.fwd_valid`).
    fwd_first: DFF<Bits<SLOT_BITS>>,
    fwd_cover: DFF<Bits<COVER_BITS>>,
    // ---- Combinational.
    req_slot: Signal<Local, Bits<SLOT_BITS>>,
    req_end: Signal<Local, Bits<17>>,
    commit: Signal<Local, Bit>,
    /// A send-context row: clears the entries and the staging.
    clear: Signal<Local, Bit>,
    /// Entry `i`'s slot minus the last forwarded read's first.
    d0: Signal<Local, Bits<SLOT_BITS>>,
    d1: Signal<Local, Bits<SLOT_BITS>>,
    d2: Signal<Local, Bits<SLOT_BITS>>,
    d3: Signal<Local, Bits<SLOT_BITS>>,
}

impl Logic for DescPushCache {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, st_slot_lo, fwd_first, fwd_cover);
        clock!(self, clock, staging, entries, answer);
        DmaReadTarget::link(&mut self.s, &mut self.answer.s);
        DmaReadInitiator::link(&mut self.m, &mut self.answer.m);
        // ---- Lookup of the requester's read: one descriptor, a held slot.
        self.req_slot.next = self.s.req.addr.val().get_bits::<SLOT_BITS>(6);
        self.entries.req_key.next = self.req_slot.val();
        self.answer.found.next = (self.s.req.len.val() == self.p_one_desc.val()) & self.entries.found.val();
        self.answer.found_data.next = self.entries.found_data.val();
        self.answer.found_keep.next = self.p_all_lanes.val();
        self.entries.consume.next = self.answer.take_hit.val();
        // The forwarded read's slots, for the drop check of the next cycle.
        self.fwd_first.d.next = self.req_slot.val();
        self.req_end.next = bit_cast::<17, 16>(self.s.req.len.val()) + self.p_round_up.val();
        self.fwd_cover.d.next = self.req_end.val().get_bits::<COVER_BITS>(6);
        // ---- Drops: entries the last forwarded read covered (slot - first
        // < cover, modulo 2^58).
        self.d0.next = self.entries.key0.val() - self.fwd_first.q.val();
        self.d1.next = self.entries.key1.val() - self.fwd_first.q.val();
        self.d2.next = self.entries.key2.val() - self.fwd_first.q.val();
        self.d3.next = self.entries.key3.val() - self.fwd_first.q.val();
        self.entries.drop0.next = self.entries.valid0.val()
            & self.answer.fwd_valid.val()
            & (self.d0.val() < bit_cast::<SLOT_BITS, COVER_BITS>(self.fwd_cover.q.val()));
        self.entries.drop1.next = self.entries.valid1.val()
            & self.answer.fwd_valid.val()
            & (self.d1.val() < bit_cast::<SLOT_BITS, COVER_BITS>(self.fwd_cover.q.val()));
        self.entries.drop2.next = self.entries.valid2.val()
            & self.answer.fwd_valid.val()
            & (self.d2.val() < bit_cast::<SLOT_BITS, COVER_BITS>(self.fwd_cover.q.val()));
        self.entries.drop3.next = self.entries.valid3.val()
            & self.answer.fwd_valid.val()
            & (self.d3.val() < bit_cast::<SLOT_BITS, COVER_BITS>(self.fwd_cover.q.val()));
        // ---- Pushes: stage the words; the slot's high word commits.
        self.staging.write.next = self.push_valid.val() & !self.push_word.val().get_bits::<2>(4).any();
        self.staging.word.next = self.push_word.val().get_bits::<4>(0);
        self.staging.data.next = self.push_data.val();
        if self.push_valid.val() & (self.push_word.val() == self.p_word_slot_lo.val()) {
            self.st_slot_lo.d.next = self.push_data.val();
        }
        self.commit.next = self.push_valid.val() & (self.push_word.val() == self.p_word_slot_hi.val());
        self.clear.next = self.cfg.valid.val() & (self.cfg.table.val() == self.t_sq_ctx.val());
        // Every staged word is zeroed by a commit (the next push writes
        // only its nonzero words) and by a send-context row: a push cut
        // off before its commit (a driver killed mid-push) leaves nothing
        // for the next one to inherit, since a driver writes that row
        // before it posts.
        self.staging.clear.next = self.commit.val() | self.clear.val();
        if self.commit.val() | self.clear.val() {
            self.st_slot_lo.d.next = 0.into();
        }
        self.entries.commit.next = self.commit.val();
        // (Offsets in a kernel are literals: 6 = SLOT_SHIFT, 26 = 32 - 6.)
        self.entries.commit_key.next = (bit_cast::<SLOT_BITS, 32>(self.push_data.val()) << 26)
            | bit_cast::<SLOT_BITS, 26>(self.st_slot_lo.q.val().get_bits::<26>(6));
        self.entries.commit_data.next = self.staging.staged.val();
        self.entries.clear.next = self.clear.val();
        self.cnt_consumed.next = self.answer.take_hit.val();
        self.cnt_dropped.next = self.entries.dropped.val();
    }
}
