//! CSR block: the self-describing register map of [`crate::regmap`] behind
//! a simple AXI-Lite-like port (one write channel and one read channel,
//! both single-cycle, no backpressure). See `docs/hw/csr.md`.

use rust_hdl::prelude::*;

use crate::regmap::{self, build_id, rx_parser, ADDR_BITS};

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
    pub const FIXED: BuildInfo = BuildInfo { git_hash: 0x0123_4567_89ab_cdef, build_date: 0 };

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
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as u32)
            });
        BuildInfo { git_hash, build_date }
    }
}

/// The CSR block.
///
/// * Write: `wr_en` with `wr_addr` / `wr_data` in the same cycle; takes
///   effect at the clock edge.
/// * Read: `rd_en` with `rd_addr`; `rd_data` is valid (and `rd_valid` high)
///   in the next cycle. Unmapped addresses read 0.
/// * Counters: `rx_ok_inc` / `rx_drop_inc` pulse once per event.
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
    pub rx_ok_inc: Signal<In, Bit>,
    pub rx_drop_inc: Signal<In, Bit>,
    // Register-map constants (from `regmap`).
    a_b_type: Constant<Bits<ADDR_BITS>>,
    a_b_version: Constant<Bits<ADDR_BITS>>,
    a_b_next: Constant<Bits<ADDR_BITS>>,
    a_git_hi: Constant<Bits<ADDR_BITS>>,
    a_git_lo: Constant<Bits<ADDR_BITS>>,
    a_date: Constant<Bits<ADDR_BITS>>,
    a_scratch: Constant<Bits<ADDR_BITS>>,
    a_p_type: Constant<Bits<ADDR_BITS>>,
    a_p_version: Constant<Bits<ADDR_BITS>>,
    a_p_next: Constant<Bits<ADDR_BITS>>,
    a_p_ok: Constant<Bits<ADDR_BITS>>,
    a_p_drop: Constant<Bits<ADDR_BITS>>,
    a_p_ctrl: Constant<Bits<ADDR_BITS>>,
    v_b_type: Constant<Bits<32>>,
    v_b_version: Constant<Bits<32>>,
    v_b_next: Constant<Bits<32>>,
    v_git_hi: Constant<Bits<32>>,
    v_git_lo: Constant<Bits<32>>,
    v_date: Constant<Bits<32>>,
    v_p_type: Constant<Bits<32>>,
    v_p_version: Constant<Bits<32>>,
    v_p_next: Constant<Bits<32>>,
    scratch: DFF<Bits<32>>,
    rx_ok: DFF<Bits<32>>,
    rx_drop: DFF<Bits<32>>,
    rdata: DFF<Bits<32>>,
    rvalid: DFF<Bit>,
}

impl Csr {
    pub fn new(build: BuildInfo) -> Csr {
        let a = |x: u16| Constant::new(Bits::<ADDR_BITS>::from(u64::from(x)));
        let v = |x: u32| Constant::new(Bits::<32>::from(u64::from(x)));
        let b = build_id::BASE;
        let p = rx_parser::BASE;
        Csr {
            clock: Default::default(),
            wr_en: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            rd_en: Default::default(),
            rd_addr: Default::default(),
            rd_data: Default::default(),
            rd_valid: Default::default(),
            rx_ok_inc: Default::default(),
            rx_drop_inc: Default::default(),
            a_b_type: a(b + regmap::HDR_TYPE),
            a_b_version: a(b + regmap::HDR_VERSION),
            a_b_next: a(b + regmap::HDR_NEXT),
            a_git_hi: a(b + build_id::GIT_HASH_HI),
            a_git_lo: a(b + build_id::GIT_HASH_LO),
            a_date: a(b + build_id::BUILD_DATE),
            a_scratch: a(b + build_id::SCRATCH),
            a_p_type: a(p + regmap::HDR_TYPE),
            a_p_version: a(p + regmap::HDR_VERSION),
            a_p_next: a(p + regmap::HDR_NEXT),
            a_p_ok: a(p + rx_parser::FRAMES_OK),
            a_p_drop: a(p + rx_parser::FRAMES_DROPPED),
            a_p_ctrl: a(p + rx_parser::CTRL),
            v_b_type: v(build_id::TYPE),
            v_b_version: v(build_id::VERSION),
            v_b_next: v(u32::from(regmap::next_of(0))),
            v_git_hi: v((build.git_hash >> 32) as u32),
            v_git_lo: v(build.git_hash as u32),
            v_date: v(build.build_date),
            v_p_type: v(rx_parser::TYPE),
            v_p_version: v(rx_parser::VERSION),
            v_p_next: v(u32::from(regmap::next_of(1))),
            scratch: Default::default(),
            rx_ok: Default::default(),
            rx_drop: Default::default(),
            rdata: Default::default(),
            rvalid: Default::default(),
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
        dff_setup!(self, clock, scratch, rx_ok, rx_drop, rdata, rvalid);
        // Counters (wrapping), cleared by CTRL bit 0.
        if self.rx_ok_inc.val() {
            self.rx_ok.d.next = self.rx_ok.q.val() + 1;
        }
        if self.rx_drop_inc.val() {
            self.rx_drop.d.next = self.rx_drop.q.val() + 1;
        }
        // Writes.
        if self.wr_en.val() {
            if self.wr_addr.val() == self.a_scratch.val() {
                self.scratch.d.next = self.wr_data.val();
            }
            if (self.wr_addr.val() == self.a_p_ctrl.val()) & self.wr_data.val().get_bit(0) {
                self.rx_ok.d.next = 0.into();
                self.rx_drop.d.next = 0.into();
            }
        }
        // Reads: registered, one cycle of latency.
        self.rvalid.d.next = self.rd_en.val();
        self.rdata.d.next = 0.into();
        if self.rd_en.val() {
            if self.rd_addr.val() == self.a_b_type.val() {
                self.rdata.d.next = self.v_b_type.val();
            }
            if self.rd_addr.val() == self.a_b_version.val() {
                self.rdata.d.next = self.v_b_version.val();
            }
            if self.rd_addr.val() == self.a_b_next.val() {
                self.rdata.d.next = self.v_b_next.val();
            }
            if self.rd_addr.val() == self.a_git_hi.val() {
                self.rdata.d.next = self.v_git_hi.val();
            }
            if self.rd_addr.val() == self.a_git_lo.val() {
                self.rdata.d.next = self.v_git_lo.val();
            }
            if self.rd_addr.val() == self.a_date.val() {
                self.rdata.d.next = self.v_date.val();
            }
            if self.rd_addr.val() == self.a_scratch.val() {
                self.rdata.d.next = self.scratch.q.val();
            }
            if self.rd_addr.val() == self.a_p_type.val() {
                self.rdata.d.next = self.v_p_type.val();
            }
            if self.rd_addr.val() == self.a_p_version.val() {
                self.rdata.d.next = self.v_p_version.val();
            }
            if self.rd_addr.val() == self.a_p_next.val() {
                self.rdata.d.next = self.v_p_next.val();
            }
            if self.rd_addr.val() == self.a_p_ok.val() {
                self.rdata.d.next = self.rx_ok.q.val();
            }
            if self.rd_addr.val() == self.a_p_drop.val() {
                self.rdata.d.next = self.rx_drop.q.val();
            }
        }
        self.rd_data.next = self.rdata.q.val();
        self.rd_valid.next = self.rvalid.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regmap::BLOCKS;

    type Tb = Csr;

    /// Read a word: present the address on a rising edge, sample after the
    /// next one.
    macro_rules! rd {
        ($sim:ident, $x:ident, $addr:expr) => {{
            $x.rd_en.next = true;
            $x.rd_addr.next = u64::from($addr).into();
            wait_clock_cycle!($sim, clock, $x);
            $x.rd_en.next = false;
            sim_assert!($sim, $x.rd_valid.val(), $x);
            $x.rd_data.val().index() as u32
        }};
    }

    #[test]
    fn walks_the_register_list_and_counts() {
        let build = BuildInfo { git_hash: 0xdead_beef_0bad_cafe, build_date: 1_700_000_000 };
        let mut uut = Csr::new(build);
        uut.connect_all();
        let mut sim = simple_sim!(Tb, clock, 100_000_000, sim, {
            let mut x = sim.init()?;
            wait_clock_true!(sim, clock, x);
            // Walk the list like a driver does.
            let mut addr: u32 = 0;
            let mut seen = 0;
            loop {
                let ty = rd!(sim, x, addr + u32::from(regmap::HDR_TYPE));
                let ver = rd!(sim, x, addr + u32::from(regmap::HDR_VERSION));
                let next = rd!(sim, x, addr + u32::from(regmap::HDR_NEXT));
                let b = &BLOCKS[seen];
                sim_assert_eq!(sim, u32::from(b.base), addr, x);
                sim_assert_eq!(sim, ty, b.block_type, x);
                sim_assert_eq!(sim, ver, b.version, x);
                seen += 1;
                if next == 0 {
                    break;
                }
                addr = next;
            }
            sim_assert_eq!(sim, seen, BLOCKS.len(), x);
            let hi = rd!(sim, x, build_id::GIT_HASH_HI);
            let lo = rd!(sim, x, build_id::GIT_HASH_LO);
            sim_assert_eq!(sim, (u64::from(hi) << 32) | u64::from(lo), 0xdead_beef_0bad_cafe_u64, x);
            let date = rd!(sim, x, build_id::BUILD_DATE);
            sim_assert_eq!(sim, date, 1_700_000_000, x);
            let unmapped = rd!(sim, x, 0x0ffcu16);
            sim_assert_eq!(sim, unmapped, 0, x);
            // Scratch register.
            x.wr_en.next = true;
            x.wr_addr.next = u64::from(build_id::SCRATCH).into();
            x.wr_data.next = 0x5a5a_1234u64.into();
            wait_clock_cycle!(sim, clock, x);
            x.wr_en.next = false;
            let s = rd!(sim, x, build_id::SCRATCH);
            sim_assert_eq!(sim, s, 0x5a5a_1234, x);
            // Counters: 3 ok, 2 dropped (one cycle with both).
            for (ok, drop) in [(true, false), (true, true), (true, false), (false, true)] {
                x.rx_ok_inc.next = ok;
                x.rx_drop_inc.next = drop;
                wait_clock_cycle!(sim, clock, x);
            }
            x.rx_ok_inc.next = false;
            x.rx_drop_inc.next = false;
            let ok = rd!(sim, x, rx_parser::BASE + rx_parser::FRAMES_OK);
            let dr = rd!(sim, x, rx_parser::BASE + rx_parser::FRAMES_DROPPED);
            sim_assert_eq!(sim, (ok, dr), (3, 2), x);
            // Clear.
            x.wr_en.next = true;
            x.wr_addr.next = u64::from(rx_parser::BASE + rx_parser::CTRL).into();
            x.wr_data.next = u64::from(rx_parser::CTRL_CLEAR).into();
            wait_clock_cycle!(sim, clock, x);
            x.wr_en.next = false;
            let ok = rd!(sim, x, rx_parser::BASE + rx_parser::FRAMES_OK);
            sim_assert_eq!(sim, ok, 0, x);
            sim.done(x)
        });
        sim.run(Box::new(uut), 100_000_000).unwrap();
    }
}
