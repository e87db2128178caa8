//! DMA adapter: the core's transaction-level DMA read/write interface
//! (byte address, byte length, first byte in lane 0) to an AXI4 master
//! with a 512-bit data bus, as the PCIe DMA IP's AXI slave bridge takes it
//! (XDMA in AXI-bridge mode, `S_AXI_B`). See `docs/hw/dma_axi.md`.
//!
//! AXI side: bursts are INCR, 64-byte beats, start at the 64-byte-aligned
//! beat holding the first byte and never cross a 4 KiB page (AXI4 rule),
//! so a request becomes one burst per page it touches. Read data are
//! realigned (the byte at `addr` moves to lane 0) by a byte funnel shifter
//! over two consecutive AXI beats; write data are shifted the other way and
//! masked with `wstrb`. A single AXI ID is used, so read data come back in
//! request order and a FIFO of request descriptors is enough to realign
//! them while further reads are issued.

use rust_hdl::prelude::*;

use crate::bus::{DmaReadTarget, DmaWriteTarget};

/// Read descriptors queued between the AR issue and the R realigner:
/// reads in flight at once.
pub const RD_QUEUE: usize = 8;

/// Descriptor bit layout (tag | offset | last-beat bytes - 1 | AXI beats |
/// output beats), also used by the test to explain its coverage.
pub mod desc {
    pub const TAG: usize = 0;
    pub const OFF: usize = 8;
    pub const LASTN: usize = 14;
    pub const NIN: usize = 20;
    pub const NOUT: usize = 31;
    pub const BITS: usize = 42;
}

/// The bytes of a 512-bit word, lane 0 first.
pub fn to_bytes(b: Bits<512>) -> [u8; 64] {
    let mut o = [0u8; 64];
    for (w, chunk) in o.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&b.get_bits::<64>(64 * w).to_u64().to_le_bytes());
    }
    o
}

/// A 512-bit word from its bytes, lane 0 first.
pub fn from_bytes(v: &[u8; 64]) -> Bits<512> {
    let mut b = Bits::<512>::default();
    for (w, chunk) in v.chunks(8).enumerate() {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        b = b | (Bits::<512>::from(x) << (64 * w as u64));
    }
    b
}

/// The adapter. Ports are grouped as in the shared DMA convention (core
/// side) and AXI4 (IP side: ID 0, AxSIZE 64 bytes and AxBURST INCR are
/// constants the board top ties off).
#[derive(LogicBlock)]
pub struct DmaAxi {
    pub clock: Signal<In, Clock>,
    // Core side: DMA read request / response.
    pub dma_rd: DmaReadTarget,
    // Core side: DMA write request and data.
    pub dma_wr: DmaWriteTarget,
    // AXI4 master: read address / data.
    pub m_axi_araddr: Signal<Out, Bits<64>>,
    pub m_axi_arlen: Signal<Out, Bits<8>>,
    pub m_axi_arvalid: Signal<Out, Bit>,
    pub m_axi_arready: Signal<In, Bit>,
    pub m_axi_rdata: Signal<In, Bits<512>>,
    pub m_axi_rresp: Signal<In, Bits<2>>,
    pub m_axi_rlast: Signal<In, Bit>,
    pub m_axi_rvalid: Signal<In, Bit>,
    pub m_axi_rready: Signal<Out, Bit>,
    // AXI4 master: write address / data / response.
    pub m_axi_awaddr: Signal<Out, Bits<64>>,
    pub m_axi_awlen: Signal<Out, Bits<8>>,
    pub m_axi_awvalid: Signal<Out, Bit>,
    pub m_axi_awready: Signal<In, Bit>,
    pub m_axi_wdata: Signal<Out, Bits<512>>,
    pub m_axi_wstrb: Signal<Out, Bits<64>>,
    pub m_axi_wlast: Signal<Out, Bit>,
    pub m_axi_wvalid: Signal<Out, Bit>,
    pub m_axi_wready: Signal<In, Bit>,
    pub m_axi_bresp: Signal<In, Bits<2>>,
    pub m_axi_bvalid: Signal<In, Bit>,
    pub m_axi_bready: Signal<Out, Bit>,
    // Counters (one-cycle pulses).
    pub cnt_rd_zero_len: Signal<Out, Bit>,
    pub cnt_wr_zero_len: Signal<Out, Bit>,
    pub cnt_wr_bad_last: Signal<Out, Bit>,
    pub cnt_rd_err: Signal<Out, Bit>,
    pub cnt_wr_err: Signal<Out, Bit>,

    all_lanes: Constant<Bits<64>>,
    // Read address issue.
    rq0: DFF<Bits<42>>,
    rq1: DFF<Bits<42>>,
    rq2: DFF<Bits<42>>,
    rq3: DFF<Bits<42>>,
    rq4: DFF<Bits<42>>,
    rq5: DFF<Bits<42>>,
    rq6: DFF<Bits<42>>,
    rq7: DFF<Bits<42>>,
    rq_count: DFF<Bits<4>>,
    rq_push: Signal<Local, Bit>,
    rq_pop: Signal<Local, Bit>,
    rq_din: Signal<Local, Bits<42>>,
    rd_off: Signal<Local, Bits<6>>,
    rd_nin: Signal<Local, Bits<11>>,
    rd_sum: Signal<Local, Bits<17>>,
    rd_nout_sum: Signal<Local, Bits<17>>,
    rd_len_m1: Signal<Local, Bits<16>>,
    ar_pg_m1: Signal<Local, Bits<6>>,
    ar_busy: DFF<Bit>,
    ar_baddr: DFF<Bits<58>>,
    ar_rem_m1: DFF<Bits<11>>,
    ar_n_m1: Signal<Local, Bits<11>>,
    ar_final: Signal<Local, Bit>,
    rd_take: Signal<Local, Bit>,
    // Read realigner (head descriptor fields, state, output register).
    h_tag: Signal<Local, Bits<8>>,
    h_off: Signal<Local, Bits<6>>,
    h_nin: Signal<Local, Bits<11>>,
    h_nout: Signal<Local, Bits<11>>,
    r_fire: Signal<Local, Bit>,
    r_adv: Signal<Local, Bit>,
    r_emit: Signal<Local, Bit>,
    r_last: Signal<Local, Bit>,
    r_lo: Signal<Local, Bits<512>>,
    r_hi: Signal<Local, Bits<512>>,
    r_sh: Signal<Local, Bits<7>>,
    r_cat: Signal<Local, Bits<1024>>,
    r_shamt: Signal<Local, Bits<10>>,
    r_shifted: Signal<Local, Bits<1024>>,
    r_lastn_inv: Signal<Local, Bits<6>>,
    r_have_prev: DFF<Bit>,
    r_prev: DFF<Bits<512>>,
    r_in_cnt: DFF<Bits<11>>,
    r_out_cnt: DFF<Bits<11>>,
    o_valid: DFF<Bit>,
    o_data: DFF<Bits<512>>,
    o_keep: DFF<Bits<64>>,
    o_last: DFF<Bit>,
    o_tag: DFF<Bits<8>>,
    // Write address issue and data path.
    wr_off: Signal<Local, Bits<6>>,
    wr_sum: Signal<Local, Bits<17>>,
    wr_nout_sum: Signal<Local, Bits<17>>,
    wr_end_sum: Signal<Local, Bits<17>>,
    aw_pg_m1: Signal<Local, Bits<6>>,
    w_inv_off: Signal<Local, Bits<6>>,
    aw_busy: DFF<Bit>,
    aw_baddr: DFF<Bits<58>>,
    aw_rem_m1: DFF<Bits<11>>,
    aw_n_m1: Signal<Local, Bits<11>>,
    w_busy: DFF<Bit>,
    w_off: DFF<Bits<6>>,
    w_end: DFF<Bits<6>>,
    w_page: DFF<Bits<6>>,
    w_cnt: DFF<Bits<11>>,
    w_nin_m1: DFF<Bits<11>>,
    w_nout: DFF<Bits<11>>,
    w_prev: DFF<Bits<512>>,
    w_need_in: Signal<Local, Bit>,
    w_fire: Signal<Local, Bit>,
    w_lo: Signal<Local, Bits<512>>,
    w_hi: Signal<Local, Bits<512>>,
    w_sh: Signal<Local, Bits<7>>,
    w_cat: Signal<Local, Bits<1024>>,
    w_shamt: Signal<Local, Bits<10>>,
    w_shifted: Signal<Local, Bits<1024>>,
    w_end_inv: Signal<Local, Bits<6>>,
    w_first_strb: Signal<Local, Bits<64>>,
    w_last_strb: Signal<Local, Bits<64>>,
}

impl Default for DmaAxi {
    fn default() -> Self {
        DmaAxi {
            clock: Default::default(),
            dma_rd: Default::default(),
            dma_wr: Default::default(),
            m_axi_araddr: Default::default(),
            m_axi_arlen: Default::default(),
            m_axi_arvalid: Default::default(),
            m_axi_arready: Default::default(),
            m_axi_rdata: Default::default(),
            m_axi_rresp: Default::default(),
            m_axi_rlast: Default::default(),
            m_axi_rvalid: Default::default(),
            m_axi_rready: Default::default(),
            m_axi_awaddr: Default::default(),
            m_axi_awlen: Default::default(),
            m_axi_awvalid: Default::default(),
            m_axi_awready: Default::default(),
            m_axi_wdata: Default::default(),
            m_axi_wstrb: Default::default(),
            m_axi_wlast: Default::default(),
            m_axi_wvalid: Default::default(),
            m_axi_wready: Default::default(),
            m_axi_bresp: Default::default(),
            m_axi_bvalid: Default::default(),
            m_axi_bready: Default::default(),
            cnt_rd_zero_len: Default::default(),
            cnt_wr_zero_len: Default::default(),
            cnt_wr_bad_last: Default::default(),
            cnt_rd_err: Default::default(),
            cnt_wr_err: Default::default(),
            all_lanes: Constant::new(u64::MAX.into()),
            rq0: Default::default(),
            rq1: Default::default(),
            rq2: Default::default(),
            rq3: Default::default(),
            rq4: Default::default(),
            rq5: Default::default(),
            rq6: Default::default(),
            rq7: Default::default(),
            rq_count: Default::default(),
            rq_push: Default::default(),
            rq_pop: Default::default(),
            rq_din: Default::default(),
            rd_off: Default::default(),
            rd_nin: Default::default(),
            rd_sum: Default::default(),
            rd_nout_sum: Default::default(),
            rd_len_m1: Default::default(),
            ar_pg_m1: Default::default(),
            ar_busy: Default::default(),
            ar_baddr: Default::default(),
            ar_rem_m1: Default::default(),
            ar_n_m1: Default::default(),
            ar_final: Default::default(),
            rd_take: Default::default(),
            h_tag: Default::default(),
            h_off: Default::default(),
            h_nin: Default::default(),
            h_nout: Default::default(),
            r_fire: Default::default(),
            r_adv: Default::default(),
            r_emit: Default::default(),
            r_last: Default::default(),
            r_lo: Default::default(),
            r_hi: Default::default(),
            r_sh: Default::default(),
            r_cat: Default::default(),
            r_shamt: Default::default(),
            r_shifted: Default::default(),
            r_lastn_inv: Default::default(),
            r_have_prev: Default::default(),
            r_prev: Default::default(),
            r_in_cnt: Default::default(),
            r_out_cnt: Default::default(),
            o_valid: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            o_tag: Default::default(),
            wr_off: Default::default(),
            wr_sum: Default::default(),
            wr_nout_sum: Default::default(),
            wr_end_sum: Default::default(),
            aw_pg_m1: Default::default(),
            w_inv_off: Default::default(),
            aw_busy: Default::default(),
            aw_baddr: Default::default(),
            aw_rem_m1: Default::default(),
            aw_n_m1: Default::default(),
            w_busy: Default::default(),
            w_off: Default::default(),
            w_end: Default::default(),
            w_page: Default::default(),
            w_cnt: Default::default(),
            w_nin_m1: Default::default(),
            w_nout: Default::default(),
            w_prev: Default::default(),
            w_need_in: Default::default(),
            w_fire: Default::default(),
            w_lo: Default::default(),
            w_hi: Default::default(),
            w_sh: Default::default(),
            w_cat: Default::default(),
            w_shamt: Default::default(),
            w_shifted: Default::default(),
            w_end_inv: Default::default(),
            w_first_strb: Default::default(),
            w_last_strb: Default::default(),
        }
    }
}

impl Logic for DmaAxi {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            ar_busy,
            ar_baddr,
            ar_rem_m1,
            r_have_prev,
            r_prev,
            r_in_cnt,
            r_out_cnt,
            o_valid,
            o_data,
            o_keep,
            o_last,
            o_tag,
            rq0,
            rq1,
            rq2,
            rq3,
            rq4,
            rq5,
            rq6,
            rq7,
            rq_count,
            aw_busy,
            aw_baddr,
            aw_rem_m1,
            w_busy,
            w_off,
            w_end,
            w_page,
            w_cnt,
            w_nin_m1,
            w_nout,
            w_prev
        );

        // ---- Read address issue ----
        // Beats left in the current 4 KiB page, minus one, is !baddr[5:0];
        // the burst is the smaller of that and what remains.
        // (Inverted into a 6-bit local first: `~` inside a wider Verilog
        // expression would invert the zero-extended bits too.)
        self.ar_pg_m1.next = !self.ar_baddr.q.val().get_bits::<6>(0);
        self.ar_n_m1.next = bit_cast::<11, 6>(self.ar_pg_m1.val());
        if self.ar_rem_m1.q.val() < self.ar_n_m1.val() {
            self.ar_n_m1.next = self.ar_rem_m1.q.val();
        }
        self.ar_final.next = self.ar_rem_m1.q.val() == self.ar_n_m1.val();
        self.m_axi_arvalid.next = self.ar_busy.q.val();
        self.m_axi_araddr.next = bit_cast::<64, 58>(self.ar_baddr.q.val()) << 6;
        self.m_axi_arlen.next = self.ar_n_m1.val().get_bits::<8>(0);
        if self.ar_busy.q.val() & self.m_axi_arready.val() {
            self.ar_baddr.d.next = self.ar_baddr.q.val() + bit_cast::<58, 11>(self.ar_n_m1.val()) + 1;
            self.ar_rem_m1.d.next = self.ar_rem_m1.q.val() - self.ar_n_m1.val() - 1;
            if self.ar_final.val() {
                self.ar_busy.d.next = false;
            }
        }
        // A new read is taken when the descriptor queue has room and the
        // issuer is idle or sending its last burst (one request per cycle
        // for single-burst reads).
        self.dma_rd.req.ready.next =
            (self.rq_count.q.val() != 8) & (!self.ar_busy.q.val() | (self.m_axi_arready.val() & self.ar_final.val()));
        self.rd_take.next = self.dma_rd.req.valid.val() & self.dma_rd.req.ready.val();
        self.rd_off.next = self.dma_rd.req.addr.val().get_bits::<6>(0);
        // (Sums go through locals: the Verilog cannot slice an expression.)
        self.rd_sum.next = bit_cast::<17, 16>(self.dma_rd.req.len.val()) + bit_cast::<17, 6>(self.rd_off.val()) + 63;
        self.rd_nin.next = self.rd_sum.val().get_bits::<11>(6);
        self.rd_nout_sum.next = bit_cast::<17, 16>(self.dma_rd.req.len.val()) + 63;
        self.rd_len_m1.next = self.dma_rd.req.len.val() - 1;
        self.rq_push.next = false;
        self.rq_din.next = bit_cast::<42, 8>(self.dma_rd.req.tag.val())
            | (bit_cast::<42, 6>(self.rd_off.val()) << 8)
            | (bit_cast::<42, 6>(self.rd_len_m1.val().get_bits::<6>(0)) << 14)
            | (bit_cast::<42, 11>(self.rd_nin.val()) << 20)
            | (bit_cast::<42, 11>(self.rd_nout_sum.val().get_bits::<11>(6)) << 31);
        self.cnt_rd_zero_len.next = false;
        if self.rd_take.val() {
            if self.dma_rd.req.len.val() == 0 {
                // Nothing to read: dropped and counted.
                self.cnt_rd_zero_len.next = true;
            } else {
                self.rq_push.next = true;
                self.ar_busy.d.next = true;
                self.ar_baddr.d.next = self.dma_rd.req.addr.val().get_bits::<58>(6);
                self.ar_rem_m1.d.next = self.rd_nin.val() - 1;
            }
        }

        // ---- Read data realigner ----
        self.h_tag.next = self.rq0.q.val().get_bits::<8>(0);
        self.h_off.next = self.rq0.q.val().get_bits::<6>(8);
        self.r_lastn_inv.next = !self.rq0.q.val().get_bits::<6>(14);
        self.h_nin.next = self.rq0.q.val().get_bits::<11>(20);
        self.h_nout.next = self.rq0.q.val().get_bits::<11>(31);
        // The output register can take a beat.
        self.r_adv.next = !self.o_valid.q.val() | self.dma_rd.rsp.ready.val();
        self.m_axi_rready.next = false;
        self.r_emit.next = false;
        self.r_lo.next = self.r_prev.q.val();
        self.r_hi.next = self.m_axi_rdata.val();
        self.r_sh.next = bit_cast::<7, 6>(self.h_off.val());
        if self.rq_count.q.val() != 0 {
            if self.h_off.val() == 0 {
                // Aligned: AXI beats pass straight through.
                self.r_lo.next = self.m_axi_rdata.val();
                self.m_axi_rready.next = self.r_adv.val();
                self.r_emit.next = self.m_axi_rvalid.val() & self.r_adv.val();
            } else if !self.r_have_prev.q.val() {
                // First AXI beat: only held, it completes no output beat.
                self.m_axi_rready.next = true;
            } else if self.r_in_cnt.q.val() == self.h_nin.val() {
                // All AXI beats in: the last output beat is the held one's tail.
                self.r_hi.next = 0.into();
                self.r_emit.next = self.r_adv.val();
            } else {
                self.m_axi_rready.next = self.r_adv.val();
                self.r_emit.next = self.m_axi_rvalid.val() & self.r_adv.val();
            }
        }
        // Byte funnel: ({hi, lo} >> 8 * sh)[511:0].
        self.r_cat.next = (bit_cast::<1024, 512>(self.r_hi.val()) << 512) | bit_cast::<1024, 512>(self.r_lo.val());
        self.r_shamt.next = bit_cast::<10, 7>(self.r_sh.val()) << 3;
        self.r_shifted.next = self.r_cat.val() >> self.r_shamt.val();
        self.r_fire.next = self.m_axi_rvalid.val() & self.m_axi_rready.val();
        self.cnt_rd_err.next = self.r_fire.val() & (self.m_axi_rresp.val() != 0);
        if self.r_fire.val() {
            self.r_prev.d.next = self.m_axi_rdata.val();
            self.r_have_prev.d.next = true;
            self.r_in_cnt.d.next = self.r_in_cnt.q.val() + 1;
        }
        self.r_last.next = self.r_out_cnt.q.val() == (self.h_nout.val() - 1);
        self.rq_pop.next = false;
        if self.r_adv.val() {
            self.o_valid.d.next = false;
        }
        if self.r_emit.val() {
            self.o_valid.d.next = true;
            self.o_data.d.next = self.r_shifted.val().get_bits::<512>(0);
            self.o_keep.d.next = self.all_lanes.val();
            if self.r_last.val() {
                self.o_keep.d.next = self.all_lanes.val() >> bit_cast::<64, 6>(self.r_lastn_inv.val());
            }
            self.o_last.d.next = self.r_last.val();
            self.o_tag.d.next = self.h_tag.val();
            self.r_out_cnt.d.next = self.r_out_cnt.q.val() + 1;
            if self.r_last.val() {
                self.rq_pop.next = true;
                self.r_have_prev.d.next = false;
                self.r_in_cnt.d.next = 0.into();
                self.r_out_cnt.d.next = 0.into();
            }
        }
        // Descriptor queue: a shift register, head in rq0 (registered).
        if self.rq_pop.val() {
            self.rq0.d.next = self.rq1.q.val();
            if self.rq_push.val() & (self.rq_count.q.val() == 1) {
                self.rq0.d.next = self.rq_din.val();
            }
        } else if self.rq_push.val() & (self.rq_count.q.val() == 0) {
            self.rq0.d.next = self.rq_din.val();
        }
        if self.rq_pop.val() {
            self.rq1.d.next = self.rq2.q.val();
            if self.rq_push.val() & (self.rq_count.q.val() == 2) {
                self.rq1.d.next = self.rq_din.val();
            }
        } else if self.rq_push.val() & (self.rq_count.q.val() == 1) {
            self.rq1.d.next = self.rq_din.val();
        }
        if self.rq_pop.val() {
            self.rq2.d.next = self.rq3.q.val();
            if self.rq_push.val() & (self.rq_count.q.val() == 3) {
                self.rq2.d.next = self.rq_din.val();
            }
        } else if self.rq_push.val() & (self.rq_count.q.val() == 2) {
            self.rq2.d.next = self.rq_din.val();
        }
        if self.rq_pop.val() {
            self.rq3.d.next = self.rq4.q.val();
            if self.rq_push.val() & (self.rq_count.q.val() == 4) {
                self.rq3.d.next = self.rq_din.val();
            }
        } else if self.rq_push.val() & (self.rq_count.q.val() == 3) {
            self.rq3.d.next = self.rq_din.val();
        }
        if self.rq_pop.val() {
            self.rq4.d.next = self.rq5.q.val();
            if self.rq_push.val() & (self.rq_count.q.val() == 5) {
                self.rq4.d.next = self.rq_din.val();
            }
        } else if self.rq_push.val() & (self.rq_count.q.val() == 4) {
            self.rq4.d.next = self.rq_din.val();
        }
        if self.rq_pop.val() {
            self.rq5.d.next = self.rq6.q.val();
            if self.rq_push.val() & (self.rq_count.q.val() == 6) {
                self.rq5.d.next = self.rq_din.val();
            }
        } else if self.rq_push.val() & (self.rq_count.q.val() == 5) {
            self.rq5.d.next = self.rq_din.val();
        }
        if self.rq_pop.val() {
            self.rq6.d.next = self.rq7.q.val();
            if self.rq_push.val() & (self.rq_count.q.val() == 7) {
                self.rq6.d.next = self.rq_din.val();
            }
        } else if self.rq_push.val() & (self.rq_count.q.val() == 6) {
            self.rq6.d.next = self.rq_din.val();
        }
        if self.rq_pop.val() {
            self.rq7.d.next = self.rq7.q.val();
            if self.rq_push.val() & (self.rq_count.q.val() == 8) {
                self.rq7.d.next = self.rq_din.val();
            }
        } else if self.rq_push.val() & (self.rq_count.q.val() == 7) {
            self.rq7.d.next = self.rq_din.val();
        }
        if self.rq_push.val() & !self.rq_pop.val() {
            self.rq_count.d.next = self.rq_count.q.val() + 1;
        } else if !self.rq_push.val() & self.rq_pop.val() {
            self.rq_count.d.next = self.rq_count.q.val() - 1;
        }
        self.dma_rd.rsp.valid.next = self.o_valid.q.val();
        self.dma_rd.rsp.data.next = self.o_data.q.val();
        self.dma_rd.rsp.keep.next = self.o_keep.q.val();
        self.dma_rd.rsp.last.next = self.o_last.q.val();
        self.dma_rd.rsp.tag.next = self.o_tag.q.val();

        // ---- Write address issue ----
        self.aw_pg_m1.next = !self.aw_baddr.q.val().get_bits::<6>(0);
        self.aw_n_m1.next = bit_cast::<11, 6>(self.aw_pg_m1.val());
        if self.aw_rem_m1.q.val() < self.aw_n_m1.val() {
            self.aw_n_m1.next = self.aw_rem_m1.q.val();
        }
        self.m_axi_awvalid.next = self.aw_busy.q.val();
        self.m_axi_awaddr.next = bit_cast::<64, 58>(self.aw_baddr.q.val()) << 6;
        self.m_axi_awlen.next = self.aw_n_m1.val().get_bits::<8>(0);
        if self.aw_busy.q.val() & self.m_axi_awready.val() {
            self.aw_baddr.d.next = self.aw_baddr.q.val() + bit_cast::<58, 11>(self.aw_n_m1.val()) + 1;
            self.aw_rem_m1.d.next = self.aw_rem_m1.q.val() - self.aw_n_m1.val() - 1;
            if self.aw_rem_m1.q.val() == self.aw_n_m1.val() {
                self.aw_busy.d.next = false;
            }
        }

        // ---- Write data: shift left by the offset, strobes, WLAST per burst ----
        self.w_need_in.next = self.w_cnt.q.val() < self.w_nout.q.val();
        self.w_lo.next = self.w_prev.q.val();
        self.w_hi.next = 0.into();
        if self.w_need_in.val() {
            self.w_hi.next = self.dma_wr.beat.data.val();
        }
        // 64 - offset (offset 0 selects `hi`, the input beat itself).
        self.w_inv_off.next = !self.w_off.q.val();
        self.w_sh.next = bit_cast::<7, 6>(self.w_inv_off.val()) + 1;
        self.w_cat.next = (bit_cast::<1024, 512>(self.w_hi.val()) << 512) | bit_cast::<1024, 512>(self.w_lo.val());
        self.w_shamt.next = bit_cast::<10, 7>(self.w_sh.val()) << 3;
        self.w_shifted.next = self.w_cat.val() >> self.w_shamt.val();
        self.w_end_inv.next = !self.w_end.q.val();
        self.w_first_strb.next = self.all_lanes.val() << bit_cast::<64, 6>(self.w_off.q.val());
        self.w_last_strb.next = self.all_lanes.val() >> bit_cast::<64, 6>(self.w_end_inv.val());
        self.m_axi_wdata.next = self.w_shifted.val().get_bits::<512>(0);
        self.m_axi_wstrb.next = self.all_lanes.val();
        if (self.w_cnt.q.val() == 0) & (self.w_cnt.q.val() == self.w_nin_m1.q.val()) {
            self.m_axi_wstrb.next = self.w_first_strb.val() & self.w_last_strb.val();
        } else if self.w_cnt.q.val() == 0 {
            self.m_axi_wstrb.next = self.w_first_strb.val();
        } else if self.w_cnt.q.val() == self.w_nin_m1.q.val() {
            self.m_axi_wstrb.next = self.w_last_strb.val();
        }
        self.m_axi_wlast.next = (self.w_cnt.q.val() == self.w_nin_m1.q.val()) | (self.w_page.q.val() == 63);
        self.m_axi_wvalid.next = self.w_busy.q.val() & (!self.w_need_in.val() | self.dma_wr.beat.valid.val());
        self.dma_wr.beat.ready.next = self.w_busy.q.val() & self.w_need_in.val() & self.m_axi_wready.val();
        self.w_fire.next = self.m_axi_wvalid.val() & self.m_axi_wready.val();
        self.cnt_wr_bad_last.next = false;
        if self.w_fire.val() {
            self.w_cnt.d.next = self.w_cnt.q.val() + 1;
            self.w_page.d.next = self.w_page.q.val() + 1;
            if self.w_need_in.val() {
                self.w_prev.d.next = self.dma_wr.beat.data.val();
                // The source's TLAST must close the request's last beat.
                self.cnt_wr_bad_last.next =
                    self.dma_wr.beat.last.val() != (self.w_cnt.q.val() == (self.w_nout.q.val() - 1));
            }
            if self.w_cnt.q.val() == self.w_nin_m1.q.val() {
                self.w_busy.d.next = false;
            }
        }
        self.m_axi_bready.next = true;
        self.cnt_wr_err.next = self.m_axi_bvalid.val() & (self.m_axi_bresp.val() != 0);

        // ---- Write request ----
        self.dma_wr.req.ready.next = !self.aw_busy.q.val() & !self.w_busy.q.val();
        self.wr_off.next = self.dma_wr.req.addr.val().get_bits::<6>(0);
        self.wr_sum.next = bit_cast::<17, 16>(self.dma_wr.req.len.val()) + bit_cast::<17, 6>(self.wr_off.val()) + 63;
        self.wr_nout_sum.next = bit_cast::<17, 16>(self.dma_wr.req.len.val()) + 63;
        self.wr_end_sum.next = bit_cast::<17, 16>(self.dma_wr.req.len.val()) + bit_cast::<17, 6>(self.wr_off.val()) - 1;
        self.cnt_wr_zero_len.next = false;
        if self.dma_wr.req.valid.val() & self.dma_wr.req.ready.val() {
            if self.dma_wr.req.len.val() == 0 {
                self.cnt_wr_zero_len.next = true;
            } else {
                self.aw_busy.d.next = true;
                self.w_busy.d.next = true;
                self.aw_baddr.d.next = self.dma_wr.req.addr.val().get_bits::<58>(6);
                self.aw_rem_m1.d.next = self.wr_sum.val().get_bits::<11>(6) - 1;
                self.w_nin_m1.d.next = self.wr_sum.val().get_bits::<11>(6) - 1;
                self.w_nout.d.next = self.wr_nout_sum.val().get_bits::<11>(6);
                self.w_off.d.next = self.wr_off.val();
                self.w_end.d.next = self.wr_end_sum.val().get_bits::<6>(0);
                self.w_page.d.next = self.dma_wr.req.addr.val().get_bits::<6>(6);
                self.w_cnt.d.next = 0.into();
                self.w_prev.d.next = 0.into();
            }
        }
    }
}
