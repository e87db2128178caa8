//! CSR block: the NIC's control plane. The self-describing register map of
//! [`crate::regmap`] (build ID, counter bank, fault-injection registers,
//! config-table staging, doorbell window) behind a simple word port (one
//! write strobe and one read strobe, both single-cycle, no backpressure;
//! [`crate::axil::AxiLiteSlave`] puts AXI-Lite in front of it). See
//! `docs/hw/csr.md`.

use rust_hdl::prelude::*;

use crate::bus::ConfigSource;

use contract::regmap::{self, build_id, cfg, counters, doorbell, fault_inject, push, ADDR_BITS, COUNTERS, N_COUNTERS};

use crate::desc_push::WORD_BITS;

/// Bits of a counter slot number (`counters::MAX` = 48 slots).
pub const COUNTER_SEL_BITS: usize = 6;
const _: () = assert!(counters::MAX <= 1 << COUNTER_SEL_BITS);

/// Build identification baked into the bitstream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildInfo {
    /// First 16 hex digits of the git commit as a number.
    pub git_hash: u64,
    /// Build time, UNIX seconds.
    pub build_date: u32,
}

impl BuildInfo {
    /// A fixed value, for deterministic output (tests, reproducible builds).
    pub const FIXED: BuildInfo = BuildInfo {
        git_hash: 0x0123_4567_89ab_cdef,
        build_date: 0,
    };

    /// From `git rev-parse HEAD` (when available) and the current time, or
    /// `SOURCE_DATE_EPOCH` when set (reproducible builds).
    pub fn from_environment() -> BuildInfo {
        let git_hash = std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| u64::from_str_radix(String::from_utf8_lossy(&o.stdout).trim().get(..16)?, 16).ok())
            .unwrap_or(0);
        let build_date = std::env::var("SOURCE_DATE_EPOCH")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs() as u32)
            });
        BuildInfo { git_hash, build_date }
    }
}

/// Simulation state of a [`CounterBank`]: plain Rust data, invisible to
/// the Verilog generator (the leaf's Verilog declares its own registers).
#[derive(Clone, Debug, Default)]
pub struct BankState {
    counts: Vec<u32>,
    groups: Vec<u8>,
}

impl Logic for BankState {
    fn update(&mut self) {}
}

impl Block for BankState {
    fn connect_all(&mut self) {}
    fn update_all(&mut self) {}
    fn has_changed(&self) -> bool {
        false
    }
    fn accept(&self, _name: &str, _probe: &mut dyn Probe) {}
}

/// `N` 32-bit wrapping event counters: counter `i` counts the cycles with
/// `inc[i]` high and is cleared (clear wins over a same-cycle increment)
/// at an edge where `clear_groups` has the bit of its group. `rd_data` is
/// counter `rd_sel` (0 beyond `N`), combinationally. A leaf with its own
/// Verilog because the counter count and the group of each counter are
/// generation-time parameters (`#[hdl_gen]` cannot loop over fields).
#[derive(LogicBlock)]
pub struct CounterBank<const N: usize> {
    pub clock: Signal<In, Clock>,
    pub inc: Signal<In, Bits<N>>,
    pub clear_groups: Signal<In, Bits<8>>,
    pub rd_sel: Signal<In, Bits<COUNTER_SEL_BITS>>,
    pub rd_data: Signal<Out, Bits<32>>,
    state: BankState,
}

impl<const N: usize> CounterBank<N> {
    /// `groups[i]` is the clear group (0..8) of counter `i`.
    pub fn new(groups: &[u8]) -> Self {
        assert!(groups.len() == N && N <= counters::MAX && groups.iter().all(|&g| g < 8));
        CounterBank {
            clock: Default::default(),
            inc: Default::default(),
            clear_groups: Default::default(),
            rd_sel: Default::default(),
            rd_data: Default::default(),
            state: BankState {
                counts: vec![0; N],
                groups: groups.to_vec(),
            },
        }
    }
}

impl<const N: usize> Logic for CounterBank<N> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let inc = self.inc.val();
            let clr = self.clear_groups.val();
            let st = &mut self.state;
            for i in 0..N {
                if clr.get_bit(usize::from(st.groups[i])) {
                    st.counts[i] = 0;
                } else if inc.get_bit(i) {
                    st.counts[i] = st.counts[i].wrapping_add(1);
                }
            }
        }
        let sel = self.rd_sel.val().index();
        self.rd_data.next = u64::from(self.state.counts.get(sel).copied().unwrap_or(0)).into();
    }
    fn connect(&mut self) {
        self.rd_data.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::new();
        for i in 0..N {
            s.push_str(&format!("reg [31:0] cnt_{i};\ninitial cnt_{i} = 32'd0;\n"));
        }
        s.push_str("always @(posedge clock) begin\n");
        for (i, g) in self.state.groups.iter().enumerate() {
            s.push_str(&format!(
                "   if (clear_groups[{g}]) cnt_{i} <= 32'd0;\n   else if (inc[{i}]) cnt_{i} <= cnt_{i} + 32'd1;\n"
            ));
        }
        s.push_str("end\nalways @(*) begin\n   case (rd_sel)\n");
        for i in 0..N {
            s.push_str(&format!("      {COUNTER_SEL_BITS}'d{i}: rd_data = cnt_{i};\n"));
        }
        s.push_str("      default: rd_data = 32'd0;\n   endcase\nend");
        Verilog::Custom(s)
    }
}

/// The CSR block.
///
/// * Write: `wr_en` with `wr_addr` / `wr_data` in the same cycle; takes
///   effect at the clock edge. Writes to read-only or unmapped addresses
///   are ignored.
/// * Read: `rd_en` with `rd_addr`; `rd_data` is valid (and `rd_valid` high)
///   in the next cycle. Unmapped addresses read 0.
/// * `cnt_inc[i]`: one pulse per event of `regmap::COUNTERS[i]`.
/// * Fault-injection settings (`fi_*`), the shared config port (`cfg_*`)
///   and doorbells (`db_*`) are registered outputs.
///
/// Register addresses appear as decimal literals in the two `match`es
/// (`#[hdl_gen]` takes no const paths, and a `match` becomes a parallel
/// `case`, where a chain of `if`s on `regmap` constants would become a
/// priority chain 40 muxes deep); the simulation test reads and writes
/// every register of `regmap::BLOCKS` through the port, so a literal that
/// disagrees with the map fails it.
#[derive(LogicBlock)]
pub struct Csr {
    pub clock: Signal<In, Clock>,
    pub wr_en: Signal<In, Bit>,
    pub wr_addr: Signal<In, Bits<ADDR_BITS>>,
    pub wr_data: Signal<In, Bits<32>>,
    pub rd_en: Signal<In, Bit>,
    pub rd_addr: Signal<In, Bits<ADDR_BITS>>,
    pub rd_data: Signal<Out, Bits<32>>,
    pub rd_valid: Signal<Out, Bit>,
    /// Counter increment pulses, bit `i` = `regmap::COUNTERS[i]`.
    pub cnt_inc: Signal<In, Bits<N_COUNTERS>>,
    /// `fault_inject.ctrl` bits 2-0 (random drop, EV drop, loopback).
    pub fi_ctrl: Signal<Out, Bits<3>>,
    pub fi_seed: Signal<Out, Bits<32>>,
    /// One pulse after every write of `fault_inject.seed`.
    pub fi_seed_load: Signal<Out, Bit>,
    pub fi_drop_prob: Signal<Out, Bits<17>>,
    pub fi_ev_en: Signal<Out, Bits<4>>,
    pub fi_ev_match0: Signal<Out, Bits<32>>,
    pub fi_ev_match1: Signal<Out, Bits<32>>,
    pub fi_ev_match2: Signal<Out, Bits<32>>,
    pub fi_ev_match3: Signal<Out, Bits<32>>,
    /// Shared config port: one row per pulse.
    pub cfg: ConfigSource,
    /// The blocks can take the row now. A row written while they cannot
    /// waits in the CSR (`cfg.valid` low) and holds every further write
    /// (`wr_hold`) until they can: a row is never lost or overwritten.
    pub cfg_ready: Signal<In, Bit>,
    /// A config row is waiting: the AXI-Lite slave performs no write.
    pub wr_hold: Signal<Out, Bit>,
    /// Doorbell pulses.
    pub db_valid: Signal<Out, Bit>,
    pub db_qp: Signal<Out, Bits<8>>,
    pub db_value: Signal<Out, Bits<32>>,
    /// Push-window word writes (`hw::desc_push`): the word's index in the
    /// window and its value, one pulse per write.
    pub push_valid: Signal<Out, Bit>,
    pub push_word: Signal<Out, Bits<WORD_BITS>>,
    pub push_data: Signal<Out, Bits<32>>,
    // Read-only values (from `regmap` and `BuildInfo`).
    v_b_type: Constant<Bits<32>>,
    v_b_version: Constant<Bits<32>>,
    v_b_next: Constant<Bits<32>>,
    v_git_hi: Constant<Bits<32>>,
    v_git_lo: Constant<Bits<32>>,
    v_date: Constant<Bits<32>>,
    v_c_type: Constant<Bits<32>>,
    v_c_version: Constant<Bits<32>>,
    v_c_next: Constant<Bits<32>>,
    v_c_num: Constant<Bits<32>>,
    v_f_type: Constant<Bits<32>>,
    v_f_version: Constant<Bits<32>>,
    v_f_next: Constant<Bits<32>>,
    v_t_type: Constant<Bits<32>>,
    v_t_version: Constant<Bits<32>>,
    v_t_next: Constant<Bits<32>>,
    v_d_type: Constant<Bits<32>>,
    v_d_version: Constant<Bits<32>>,
    v_d_next: Constant<Bits<32>>,
    v_d_window: Constant<Bits<32>>,
    v_d_qps: Constant<Bits<32>>,
    v_p_type: Constant<Bits<32>>,
    v_p_version: Constant<Bits<32>>,
    v_p_next: Constant<Bits<32>>,
    v_p_window: Constant<Bits<32>>,
    v_p_size: Constant<Bits<32>>,
    v_p_entries: Constant<Bits<32>>,
    v_p_payload_entries: Constant<Bits<32>>,
    /// Counter slot of a read address (`(address - counters.base - FIRST) / 4`).
    cnt_sel: Signal<Local, Bits<COUNTER_SEL_BITS>>,
    /// Slot of counter 0 among the word addresses of the counter block.
    p_first_slot: Constant<Bits<COUNTER_SEL_BITS>>,
    scratch: DFF<Bits<32>>,
    fi_ctrl_r: DFF<Bits<3>>,
    fi_seed_r: DFF<Bits<32>>,
    fi_seed_load_r: DFF<Bit>,
    fi_prob_r: DFF<Bits<17>>,
    fi_ev_en_r: DFF<Bits<4>>,
    fi_m0: DFF<Bits<32>>,
    fi_m1: DFF<Bits<32>>,
    fi_m2: DFF<Bits<32>>,
    fi_m3: DFF<Bits<32>>,
    cfg_table_r: DFF<Bits<4>>,
    cfg_index_r: DFF<Bits<16>>,
    cfg_d0: DFF<Bits<32>>,
    cfg_d1: DFF<Bits<32>>,
    cfg_d2: DFF<Bits<32>>,
    cfg_d3: DFF<Bits<32>>,
    cfg_d4: DFF<Bits<32>>,
    cfg_d5: DFF<Bits<32>>,
    cfg_d6: DFF<Bits<32>>,
    cfg_d7: DFF<Bits<32>>,
    cfg_go: DFF<Bit>,
    cfg_count: DFF<Bits<16>>,
    db_valid_r: DFF<Bit>,
    db_qp_r: DFF<Bits<8>>,
    db_value_r: DFF<Bits<32>>,
    push_valid_r: DFF<Bit>,
    push_word_r: DFF<Bits<WORD_BITS>>,
    push_data_r: DFF<Bits<32>>,
    rdata: DFF<Bits<32>>,
    rvalid: DFF<Bit>,
    bank: CounterBank<N_COUNTERS>,
}

impl Csr {
    pub fn new(build: BuildInfo) -> Csr {
        let v = |x: u32| Constant::new(Bits::<32>::from(u64::from(x)));
        let next = |i: usize| v(u32::from(regmap::next_of(i)));
        let groups: Vec<u8> = COUNTERS.iter().map(|c| c.group).collect();
        // The list order the literals in `update` assume.
        let order: Vec<u16> = regmap::BLOCKS.iter().map(|b| b.base).collect();
        assert_eq!(
            order,
            [
                build_id::BASE,
                counters::BASE,
                fault_inject::BASE,
                cfg::BASE,
                doorbell::BASE,
                push::BASE
            ]
        );
        Csr {
            clock: Default::default(),
            wr_en: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            rd_en: Default::default(),
            rd_addr: Default::default(),
            rd_data: Default::default(),
            rd_valid: Default::default(),
            cnt_inc: Default::default(),
            fi_ctrl: Default::default(),
            fi_seed: Default::default(),
            fi_seed_load: Default::default(),
            fi_drop_prob: Default::default(),
            fi_ev_en: Default::default(),
            fi_ev_match0: Default::default(),
            fi_ev_match1: Default::default(),
            fi_ev_match2: Default::default(),
            fi_ev_match3: Default::default(),
            cfg: Default::default(),
            cfg_ready: Default::default(),
            wr_hold: Default::default(),
            db_valid: Default::default(),
            db_qp: Default::default(),
            db_value: Default::default(),
            push_valid: Default::default(),
            push_word: Default::default(),
            push_data: Default::default(),
            v_b_type: v(build_id::TYPE),
            v_b_version: v(build_id::VERSION),
            v_b_next: next(0),
            v_git_hi: v((build.git_hash >> 32) as u32),
            v_git_lo: v(build.git_hash as u32),
            v_date: v(build.build_date),
            v_c_type: v(counters::TYPE),
            v_c_version: v(counters::VERSION),
            v_c_next: next(1),
            v_c_num: v(N_COUNTERS as u32),
            v_f_type: v(fault_inject::TYPE),
            v_f_version: v(fault_inject::VERSION),
            v_f_next: next(2),
            v_t_type: v(cfg::TYPE),
            v_t_version: v(cfg::VERSION),
            v_t_next: next(3),
            v_d_type: v(doorbell::TYPE),
            v_d_version: v(doorbell::VERSION),
            v_d_next: next(4),
            v_d_window: v(u32::from(doorbell::WINDOW)),
            v_d_qps: v(doorbell::QPS),
            v_p_type: v(push::TYPE),
            v_p_version: v(push::VERSION),
            v_p_next: next(5),
            v_p_window: v(u32::from(push::WINDOW)),
            v_p_size: v(u32::from(push::SIZE)),
            v_p_entries: v(push::ENTRIES),
            v_p_payload_entries: v(push::PAYLOAD_ENTRIES),
            cnt_sel: Default::default(),
            p_first_slot: Constant::new(u64::from(counters::FIRST / 4).into()),
            scratch: Default::default(),
            fi_ctrl_r: Default::default(),
            fi_seed_r: Default::default(),
            fi_seed_load_r: Default::default(),
            fi_prob_r: Default::default(),
            fi_ev_en_r: Default::default(),
            fi_m0: Default::default(),
            fi_m1: Default::default(),
            fi_m2: Default::default(),
            fi_m3: Default::default(),
            cfg_table_r: Default::default(),
            cfg_index_r: Default::default(),
            cfg_d0: Default::default(),
            cfg_d1: Default::default(),
            cfg_d2: Default::default(),
            cfg_d3: Default::default(),
            cfg_d4: Default::default(),
            cfg_d5: Default::default(),
            cfg_d6: Default::default(),
            cfg_d7: Default::default(),
            cfg_go: Default::default(),
            cfg_count: Default::default(),
            db_valid_r: Default::default(),
            db_qp_r: Default::default(),
            db_value_r: Default::default(),
            push_valid_r: Default::default(),
            push_word_r: Default::default(),
            push_data_r: Default::default(),
            rdata: Default::default(),
            rvalid: Default::default(),
            bank: CounterBank::new(&groups),
        }
    }
}

impl Default for Csr {
    fn default() -> Self {
        Csr::new(BuildInfo::FIXED)
    }
}

impl Logic for Csr {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            scratch,
            fi_ctrl_r,
            fi_seed_r,
            fi_seed_load_r,
            fi_prob_r,
            fi_ev_en_r,
            fi_m0,
            fi_m1,
            fi_m2,
            fi_m3,
            cfg_table_r,
            cfg_index_r,
            cfg_d0,
            cfg_d1,
            cfg_d2,
            cfg_d3,
            cfg_d4,
            cfg_d5,
            cfg_d6,
            cfg_d7,
            cfg_go,
            cfg_count,
            db_valid_r,
            db_qp_r,
            db_value_r,
            push_valid_r,
            push_word_r,
            push_data_r,
            rdata,
            rvalid
        );
        self.bank.clock.next = self.clock.val();
        self.bank.inc.next = self.cnt_inc.val();
        self.bank.clear_groups.next = 0.into();
        // Counter slots 0x140-0x1FC: word offset in the block minus FIRST / 4.
        self.cnt_sel.next = self.rd_addr.val().get_bits::<COUNTER_SEL_BITS>(2) - self.p_first_slot.val();
        self.bank.rd_sel.next = self.cnt_sel.val();
        // Pulses last one cycle.
        self.fi_seed_load_r.d.next = false;
        // A row not taken yet stays pending (`cfg_ready`).
        self.cfg_go.d.next = self.cfg_go.q.val() & !self.cfg_ready.val();
        self.db_valid_r.d.next = false;
        self.push_valid_r.d.next = false;
        if self.cfg_go.q.val() & self.cfg_ready.val() {
            self.cfg_count.d.next = self.cfg_count.q.val() + 1;
        }
        // Writes (addresses: see regmap.md).
        if self.wr_en.val() {
            match self.wr_addr.val().index() {
                24 => {
                    self.scratch.d.next = self.wr_data.val();
                }
                268 => {
                    self.bank.clear_groups.next = self.wr_data.val().get_bits::<8>(0);
                }
                524 => {
                    self.fi_ctrl_r.d.next = self.wr_data.val().get_bits::<3>(0);
                }
                528 => {
                    self.fi_seed_r.d.next = self.wr_data.val();
                    self.fi_seed_load_r.d.next = true;
                }
                532 => {
                    self.fi_prob_r.d.next = self.wr_data.val().get_bits::<17>(0);
                }
                536 => {
                    self.fi_ev_en_r.d.next = self.wr_data.val().get_bits::<4>(0);
                }
                540 => {
                    self.fi_m0.d.next = self.wr_data.val();
                }
                544 => {
                    self.fi_m1.d.next = self.wr_data.val();
                }
                548 => {
                    self.fi_m2.d.next = self.wr_data.val();
                }
                552 => {
                    self.fi_m3.d.next = self.wr_data.val();
                }
                780 => {
                    self.cfg_table_r.d.next = self.wr_data.val().get_bits::<4>(0);
                }
                784 => {
                    self.cfg_index_r.d.next = self.wr_data.val().get_bits::<16>(0);
                }
                788 => {
                    self.cfg_go.d.next = self.wr_data.val().get_bit(0);
                }
                800 => {
                    self.cfg_d0.d.next = self.wr_data.val();
                }
                804 => {
                    self.cfg_d1.d.next = self.wr_data.val();
                }
                808 => {
                    self.cfg_d2.d.next = self.wr_data.val();
                }
                812 => {
                    self.cfg_d3.d.next = self.wr_data.val();
                }
                816 => {
                    self.cfg_d4.d.next = self.wr_data.val();
                }
                820 => {
                    self.cfg_d5.d.next = self.wr_data.val();
                }
                824 => {
                    self.cfg_d6.d.next = self.wr_data.val();
                }
                828 => {
                    self.cfg_d7.d.next = self.wr_data.val();
                }
                _ => {
                    // Doorbell window 0x1000-0x13FC: address bits 15-10 = 4.
                    if self.wr_addr.val().get_bits::<6>(10) == 4 {
                        self.db_valid_r.d.next = true;
                        self.db_qp_r.d.next = self.wr_addr.val().get_bits::<8>(2);
                        self.db_value_r.d.next = self.wr_data.val();
                    }
                    // Push window 0x1400-0x14FC: address bits 15-8 = 0x14.
                    if self.wr_addr.val().get_bits::<8>(8) == 0x14 {
                        self.push_valid_r.d.next = true;
                        self.push_word_r.d.next = self.wr_addr.val().get_bits::<WORD_BITS>(2);
                        self.push_data_r.d.next = self.wr_data.val();
                    }
                }
            }
        }
        // Reads: registered, one cycle of latency.
        self.rvalid.d.next = self.rd_en.val();
        self.rdata.d.next = 0.into();
        if self.rd_en.val() {
            match self.rd_addr.val().index() {
                0 => {
                    self.rdata.d.next = self.v_b_type.val();
                }
                4 => {
                    self.rdata.d.next = self.v_b_version.val();
                }
                8 => {
                    self.rdata.d.next = self.v_b_next.val();
                }
                12 => {
                    self.rdata.d.next = self.v_git_hi.val();
                }
                16 => {
                    self.rdata.d.next = self.v_git_lo.val();
                }
                20 => {
                    self.rdata.d.next = self.v_date.val();
                }
                24 => {
                    self.rdata.d.next = self.scratch.q.val();
                }
                256 => {
                    self.rdata.d.next = self.v_c_type.val();
                }
                260 => {
                    self.rdata.d.next = self.v_c_version.val();
                }
                264 => {
                    self.rdata.d.next = self.v_c_next.val();
                }
                272 => {
                    self.rdata.d.next = self.v_c_num.val();
                }
                512 => {
                    self.rdata.d.next = self.v_f_type.val();
                }
                516 => {
                    self.rdata.d.next = self.v_f_version.val();
                }
                520 => {
                    self.rdata.d.next = self.v_f_next.val();
                }
                524 => {
                    self.rdata.d.next = bit_cast::<32, 3>(self.fi_ctrl_r.q.val());
                }
                528 => {
                    self.rdata.d.next = self.fi_seed_r.q.val();
                }
                532 => {
                    self.rdata.d.next = bit_cast::<32, 17>(self.fi_prob_r.q.val());
                }
                536 => {
                    self.rdata.d.next = bit_cast::<32, 4>(self.fi_ev_en_r.q.val());
                }
                540 => {
                    self.rdata.d.next = self.fi_m0.q.val();
                }
                544 => {
                    self.rdata.d.next = self.fi_m1.q.val();
                }
                548 => {
                    self.rdata.d.next = self.fi_m2.q.val();
                }
                552 => {
                    self.rdata.d.next = self.fi_m3.q.val();
                }
                768 => {
                    self.rdata.d.next = self.v_t_type.val();
                }
                772 => {
                    self.rdata.d.next = self.v_t_version.val();
                }
                776 => {
                    self.rdata.d.next = self.v_t_next.val();
                }
                780 => {
                    self.rdata.d.next = bit_cast::<32, 4>(self.cfg_table_r.q.val());
                }
                784 => {
                    self.rdata.d.next = bit_cast::<32, 16>(self.cfg_index_r.q.val());
                }
                792 => {
                    self.rdata.d.next = (bit_cast::<32, 16>(self.cfg_count.q.val()) << 16)
                        | bit_cast::<32, 1>(self.cfg_go.q.val().into())
                }
                800 => {
                    self.rdata.d.next = self.cfg_d0.q.val();
                }
                804 => {
                    self.rdata.d.next = self.cfg_d1.q.val();
                }
                808 => {
                    self.rdata.d.next = self.cfg_d2.q.val();
                }
                812 => {
                    self.rdata.d.next = self.cfg_d3.q.val();
                }
                816 => {
                    self.rdata.d.next = self.cfg_d4.q.val();
                }
                820 => {
                    self.rdata.d.next = self.cfg_d5.q.val();
                }
                824 => {
                    self.rdata.d.next = self.cfg_d6.q.val();
                }
                828 => {
                    self.rdata.d.next = self.cfg_d7.q.val();
                }
                1024 => {
                    self.rdata.d.next = self.v_d_type.val();
                }
                1028 => {
                    self.rdata.d.next = self.v_d_version.val();
                }
                1032 => {
                    self.rdata.d.next = self.v_d_next.val();
                }
                1036 => {
                    self.rdata.d.next = self.v_d_window.val();
                }
                1040 => {
                    self.rdata.d.next = self.v_d_qps.val();
                }
                1280 => {
                    self.rdata.d.next = self.v_p_type.val();
                }
                1284 => {
                    self.rdata.d.next = self.v_p_version.val();
                }
                1288 => {
                    self.rdata.d.next = self.v_p_next.val();
                }
                1292 => {
                    self.rdata.d.next = self.v_p_window.val();
                }
                1296 => {
                    self.rdata.d.next = self.v_p_size.val();
                }
                1300 => {
                    self.rdata.d.next = self.v_p_entries.val();
                }
                1304 => {
                    self.rdata.d.next = self.v_p_payload_entries.val();
                }
                _ => {
                    // Counter slots 0x140-0x1FC: address bits 15-8 = 1,
                    // bits 7-6 not 0.
                    if (self.rd_addr.val().get_bits::<8>(8) == 1) & self.rd_addr.val().get_bits::<2>(6).any() {
                        self.rdata.d.next = self.bank.rd_data.val();
                    }
                }
            }
        }
        self.rd_data.next = self.rdata.q.val();
        self.rd_valid.next = self.rvalid.q.val();
        self.fi_ctrl.next = self.fi_ctrl_r.q.val();
        self.fi_seed.next = self.fi_seed_r.q.val();
        self.fi_seed_load.next = self.fi_seed_load_r.q.val();
        self.fi_drop_prob.next = self.fi_prob_r.q.val();
        self.fi_ev_en.next = self.fi_ev_en_r.q.val();
        self.fi_ev_match0.next = self.fi_m0.q.val();
        self.fi_ev_match1.next = self.fi_m1.q.val();
        self.fi_ev_match2.next = self.fi_m2.q.val();
        self.fi_ev_match3.next = self.fi_m3.q.val();
        self.cfg.valid.next = self.cfg_go.q.val() & self.cfg_ready.val();
        self.wr_hold.next = self.cfg_go.q.val();
        self.cfg.table.next = self.cfg_table_r.q.val();
        self.cfg.index.next = self.cfg_index_r.q.val();
        self.cfg.data.next = bit_cast::<256, 32>(self.cfg_d0.q.val())
            | (bit_cast::<256, 32>(self.cfg_d1.q.val()) << 32)
            | (bit_cast::<256, 32>(self.cfg_d2.q.val()) << 64)
            | (bit_cast::<256, 32>(self.cfg_d3.q.val()) << 96)
            | (bit_cast::<256, 32>(self.cfg_d4.q.val()) << 128)
            | (bit_cast::<256, 32>(self.cfg_d5.q.val()) << 160)
            | (bit_cast::<256, 32>(self.cfg_d6.q.val()) << 192)
            | (bit_cast::<256, 32>(self.cfg_d7.q.val()) << 224);
        self.db_valid.next = self.db_valid_r.q.val();
        self.db_qp.next = self.db_qp_r.q.val();
        self.db_value.next = self.db_value_r.q.val();
        self.push_valid.next = self.push_valid_r.q.val();
        self.push_word.next = self.push_word_r.q.val();
        self.push_data.next = self.push_data_r.q.val();
    }
}
