//! AXI4-Lite slave in front of the CSR block's word port
//! ([`crate::csr::Csr`]: `wr_en/wr_addr/wr_data`, `rd_en/rd_addr` ->
//! `rd_data/rd_valid` one cycle later). 32-bit data, 16-bit byte
//! addresses, five channels with independent valid/ready. See
//! `docs/hw/axil.md`.
//!
//! * Write: AW and W are taken in any order (or together) into one-entry
//!   holding registers; when both are held and the two-entry B queue has
//!   room, the write goes to the CSR port and its B response is queued
//!   (valid from the next cycle). A holding register that issues takes
//!   the next half in the same cycle, so a master that keeps AW and W
//!   offered (as a PCIe bridge does with a multi-dword write) writes
//!   once per cycle.
//!   A write whose `wstrb` is not `0b1111` is not performed and answered
//!   `SLVERR` (every register is a whole word; a partial write would
//!   silently corrupt the other bytes or fire a strobe).
//! * Read: AR is taken when no read is in flight and R is empty; the CSR
//!   answers one cycle later and R holds the word until `rready`. Reads
//!   answer `OKAY`, unmapped addresses read 0 (the register map is
//!   self-describing: a driver never needs to probe a hole).

use rust_hdl::prelude::*;

use crate::bus::AxiLiteSubordinate;

use contract::regmap::ADDR_BITS;

/// `bresp` / `rresp` codes.
pub mod resp {
    pub const OKAY: u8 = 0;
    pub const SLVERR: u8 = 2;
}

#[derive(LogicBlock, Default)]
pub struct AxiLiteSlave {
    pub clock: Signal<In, Clock>,
    // AXI-Lite slave side.
    pub s_axil: AxiLiteSubordinate,
    // CSR word port (master side).
    pub wr_en: Signal<Out, Bit>,
    pub wr_addr: Signal<Out, Bits<ADDR_BITS>>,
    pub wr_data: Signal<Out, Bits<32>>,
    pub rd_en: Signal<Out, Bit>,
    pub rd_addr: Signal<Out, Bits<ADDR_BITS>>,
    pub rd_data: Signal<In, Bits<32>>,
    pub rd_valid: Signal<In, Bit>,
    /// The CSR cannot take a write now (a config row it holds waits for
    /// its block): the held write waits in AW/W, which back-pressures
    /// the host, instead of overwriting the row. Reads wait too.
    pub wr_hold: Signal<In, Bit>,
    aw_full: DFF<Bit>,
    aw_addr: DFF<Bits<ADDR_BITS>>,
    w_full: DFF<Bit>,
    w_data: DFF<Bits<32>>,
    w_strb: DFF<Bits<4>>,
    /// The B queue: the response offered (`b_valid`, `b_err`) and one
    /// behind it (`b2_*`), so that a write can issue while the previous
    /// one's response is offered.
    b_valid: DFF<Bit>,
    b_err: DFF<Bit>,
    b2_valid: DFF<Bit>,
    b2_err: DFF<Bit>,
    ar_busy: DFF<Bit>,
    r_valid: DFF<Bit>,
    r_data: DFF<Bits<32>>,
    issue: Signal<Local, Bit>,
    /// The offered B response is taken in this cycle.
    b_taken: Signal<Local, Bit>,
    /// AR can be taken this cycle.
    ar_free: Signal<Local, Bit>,
}

impl Logic for AxiLiteSlave {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, aw_full, aw_addr, w_full, w_data, w_strb, b_valid, b_err, b2_valid, b2_err, ar_busy, r_valid,
            r_data
        );
        // ---- Write path.
        // Both halves held and room in the B queue (its second entry
        // free): perform (or refuse) it. From registers and the CSR's
        // registered hold only, so the readies below have no path from a
        // valid.
        self.issue.next = self.aw_full.q.val() & self.w_full.q.val() & !self.b2_valid.q.val() & !self.wr_hold.val();
        self.wr_en.next = self.issue.val() & self.w_strb.q.val().all();
        self.wr_addr.next = self.aw_addr.q.val();
        self.wr_data.next = self.w_data.q.val();
        // A holding register is free, or frees in this cycle's issue.
        self.s_axil.awready.next = !self.aw_full.q.val() | self.issue.val();
        self.s_axil.wready.next = !self.w_full.q.val() | self.issue.val();
        if self.issue.val() {
            self.aw_full.d.next = false;
            self.w_full.d.next = false;
        }
        if self.s_axil.awvalid.val() & self.s_axil.awready.val() {
            self.aw_full.d.next = true;
            self.aw_addr.d.next = self.s_axil.awaddr.val();
        }
        if self.s_axil.wvalid.val() & self.s_axil.wready.val() {
            self.w_full.d.next = true;
            self.w_data.d.next = self.s_axil.wdata.val();
            self.w_strb.d.next = self.s_axil.wstrb.val();
        }
        // The B queue: the issued write's response joins behind the
        // offered one, or is offered itself when the queue is empty or
        // its head is taken now.
        self.b_taken.next = self.b_valid.q.val() & self.s_axil.bready.val();
        if self.b_taken.val() {
            self.b_valid.d.next = self.b2_valid.q.val();
            self.b_err.d.next = self.b2_err.q.val();
            self.b2_valid.d.next = false;
        }
        if self.issue.val() {
            if !self.b_valid.q.val() | (self.b_taken.val() & !self.b2_valid.q.val()) {
                self.b_valid.d.next = true;
                self.b_err.d.next = !self.w_strb.q.val().all();
            } else {
                self.b2_valid.d.next = true;
                self.b2_err.d.next = !self.w_strb.q.val().all();
            }
        }
        self.s_axil.bvalid.next = self.b_valid.q.val();
        self.s_axil.bresp.next = bit_cast::<2, 1>(self.b_err.q.val().into()) << 1;
        // ---- Read path.
        // A read waits behind a held write too, so that a read after a
        // config row (the driver's check that its rows arrived) sees the
        // row taken, as a read after posted writes does on PCIe.
        self.ar_free.next = !self.ar_busy.q.val() & !self.r_valid.q.val() & !self.wr_hold.val();
        self.s_axil.arready.next = self.ar_free.val();
        self.rd_en.next = self.s_axil.arvalid.val() & self.ar_free.val();
        self.rd_addr.next = self.s_axil.araddr.val();
        if self.s_axil.arvalid.val() & self.ar_free.val() {
            self.ar_busy.d.next = true;
        }
        if self.ar_busy.q.val() & self.rd_valid.val() {
            self.ar_busy.d.next = false;
            self.r_valid.d.next = true;
            self.r_data.d.next = self.rd_data.val();
        }
        if self.r_valid.q.val() & self.s_axil.rready.val() {
            self.r_valid.d.next = false;
        }
        self.s_axil.rvalid.next = self.r_valid.q.val();
        self.s_axil.rdata.next = self.r_data.q.val();
        self.s_axil.rresp.next = 0.into();
    }
}
