//! The saved GTKWave view of a traced core: the signals an FPGA engineer
//! looks at first, in named groups (host side, TX, RX, completions,
//! ACK / NACK both ways, retransmission, EV selection), defined once
//! here as [`CORE_VIEW`] and written as a `.gtkw` save file beside every
//! FST waveform [`crate::nic::Nic::trace`] opens, so `gtkwave out.a.gtkw`
//! opens the trace with the signals laid out. docs/cosim.md
//! ("Waveforms") says which group answers which scenario.
//!
//! Names. Verilator's FST puts the top module's ports under `TOP` and the
//! design under `TOP.mrc_core` (the top module's instance, named after
//! it); below that, one scope per Verilog instance, and every signal under
//! its Verilog name. GTKWave names a vector `NAME[msb:lsb]` and a single
//! bit `NAME`. All of this was read off a real trace (`mrc cosim
//! --trace`, `fst2vcd`), and the view was loaded in GTKWave 3.3.118.
//!
//! rust-hdl names the parent's copy of a child's port `child$port`
//! (`req$out_valid` beside the instance `req`). GTKWave 3.3 cannot load
//! such a signal from a save file: it orders an FST's signals by scope
//! (`req` and all below it, then `req$out_valid`), looks a saved name up
//! by binary search in whole-name order, where `$` sorts before `.`
//! (`req$out_valid` before `req.state$q`), misses, and drops the trace
//! silently (in our core it lost 115 of 145 signals). So the traced model
//! is built from [`traced_verilog`], where every internal `$` is `__`
//! (`_` sorts after `.`, and the two orders agree); the top module's
//! ports keep their names (`m_tx$tvalid`: the testbench finds them by
//! name, and no scope shares their prefix). In the view, `req__out_valid`
//! is the requester's `out_valid` as the top wires it, and
//! `req.state__q` the requester's state register. The unit tests check
//! every signal against that Verilog, scope by scope, width included,
//! and that no name in the view has a `$` GTKWave would trip on.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The FST scope of the core: Verilator's root `TOP`, then the top
/// module's instance, named after the module (`cosim::nic::build_core`
/// builds `mrc_core`).
pub const FST_CORE_SCOPE: &str = "TOP.mrc_core";

/// GTKWave's trace flags (`TR_*` in its `analyzer.h`), as the save file
/// writes them (`@` and the flags in hex before the traces they apply to).
mod flag {
    pub const HEX: u32 = 1 << 1;
    pub const DEC: u32 = 1 << 2;
    pub const BIN: u32 = 1 << 3;
    /// Values right-justified in the wave window (GTKWave's default).
    pub const RJUSTIFY: u32 = 1 << 5;
    /// A comment trace (no signal): a group's name line.
    pub const BLANK: u32 = 1 << 9;
    pub const GRP_BEGIN: u32 = 1 << 23;
    pub const GRP_END: u32 = 1 << 24;
}

/// How GTKWave shows a signal's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Radix {
    Bin,
    Hex,
    Dec,
}

impl Radix {
    fn flags(self) -> u32 {
        flag::RJUSTIFY
            | match self {
                Radix::Bin => flag::BIN,
                Radix::Hex => flag::HEX,
                Radix::Dec => flag::DEC,
            }
    }
}

/// One signal of a view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// Path below [`FST_CORE_SCOPE`]: instances joined by `.`, then the
    /// signal's name in [`traced_verilog`] (`retx__rtx_psn`, `retx.st__q`).
    pub path: &'static str,
    pub width: u32,
    pub radix: Radix,
}

/// A single-bit signal (valid, ready, last, flags).
const fn bit(path: &'static str) -> Probe {
    Probe {
        path,
        width: 1,
        radix: Radix::Bin,
    }
}

/// A vector shown in decimal (QPs, PSNs, lengths, states, kinds).
const fn dec(path: &'static str, width: u32) -> Probe {
    Probe {
        path,
        width,
        radix: Radix::Dec,
    }
}

/// A vector shown in hex (addresses, opcodes, keeps, bitmaps, EV values).
const fn hex(path: &'static str, width: u32) -> Probe {
    Probe {
        path,
        width,
        radix: Radix::Hex,
    }
}

/// A named group of signals (a GTKWave group, open when the view loads).
#[derive(Clone, Copy, Debug)]
pub struct Group {
    pub name: &'static str,
    pub probes: &'static [Probe],
}

/// A saved view: groups in display order.
#[derive(Clone, Copy, Debug)]
pub struct View {
    pub groups: &'static [Group],
}

/// Doorbells, the requester's descriptor fetch and the core's DMA read
/// port (descriptor fetches and the TX path's payload reads, by tag).
const HOST: Group = Group {
    name: "Host: doorbells, descriptor fetch, DMA reads",
    probes: &[
        bit("csr__db_valid"),
        dec("csr__db_qp", 8),
        dec("csr__db_value", 32),
        // `ReqState` in hw::requester (Idle 0, Request 3, Decode 5, ...).
        dec("req.state__q", 4),
        bit("dma_rd$req$valid"),
        bit("dma_rd$req$ready"),
        hex("dma_rd$req$addr", 64),
        dec("dma_rd$req$len", 16),
        hex("dma_rd$req$tag", 8),
        bit("dma_rd$rsp$valid"),
        bit("dma_rd$rsp$ready"),
        bit("dma_rd$rsp$last"),
        hex("dma_rd$rsp$tag", 8),
    ],
};

/// A packet from the requester's record through CC admission, the TX
/// path and the builder to the MAC TX stream.
const TX: Group = Group {
    name: "TX: requester, CC gate, TX path, builder, MAC TX",
    probes: &[
        bit("req__out_valid"),
        bit("req__out_ready"),
        dec("req__out_qp", 8),
        dec("req__out_psn", 24),
        hex("req__out_opcode", 8),
        bit("req__out_retransmit"),
        dec("req__out_len", 16),
        // `hw::core::admit` (idle, asked, pass, held).
        dec("adm__q", 2),
        bit("cc__out_valid"),
        bit("cc__out_ok"),
        dec("cc__out_cwnd", 32),
        dec("cc__out_inflight", 32),
        // The data sequencer's state (hw::tx_path).
        dec("txpath.d_state__q", 3),
        bit("txb__req_valid"),
        bit("txb__req_ready"),
        hex("txb__req_opcode", 8),
        dec("txb__req_psn", 24),
        hex("txb__req_ev", 32),
        dec("txb__req_payload_len", 16),
        bit("m_tx$tvalid"),
        bit("m_tx$tready"),
        bit("m_tx$tlast"),
        hex("m_tx$tkeep", 64),
    ],
};

/// A frame from the MAC RX stream through the parser, the SACK table's
/// verdict and the RX buffer's placement command to its DMA write.
const RX: Group = Group {
    name: "RX: MAC RX, parser, SACK verdict, placement",
    probes: &[
        bit("s_rx$tvalid"),
        bit("s_rx$tready"),
        bit("s_rx$tlast"),
        hex("s_rx$tkeep", 64),
        bit("parser__out_valid"),
        bit("parser__out_drop"),
        dec("parser__out_reason", 5),
        hex("parser__out_opcode", 8),
        dec("parser__out_dest_qp", 24),
        dec("parser__out_psn", 24),
        hex("parser__out_ev", 32),
        // The RX path's state (hw::rx_path).
        dec("rxpath.st__q", 4),
        bit("sack__out_valid"),
        // `hw::sack_table::verdict` (new 1, duplicate 2, out of window 3).
        dec("sack__out_verdict", 2),
        dec("sack__out_expected", 24),
        bit("rxbuf__cmd_valid"),
        bit("rxbuf__cmd_ready"),
        bit("rxbuf__cmd_place"),
        hex("rxbuf__cmd_addr", 64),
        dec("rxbuf__cmd_len", 18),
        bit("rxbuf__dma_wr__req__valid"),
        bit("rxbuf__dma_wr__req__ready"),
        hex("rxbuf__dma_wr__req__addr", 64),
        dec("rxbuf__dma_wr__req__len", 16),
    ],
};

/// Receive completions (in order, from the completion tracker), send
/// completions, the CQ and EV-event ring writers and the core's DMA
/// write port (placement, CQEs and EV events share it).
const COMPLETIONS: Group = Group {
    name: "Completions: CQEs, EV events, DMA writes",
    probes: &[
        bit("rxpath__cq_valid"),
        hex("rxpath__cq_imm", 32),
        dec("rxpath__cq_len", 32),
        bit("sendcq__msg_valid"),
        hex("sendcq__msg_wr_id", 64),
        bit("sendcq__ack_valid"),
        dec("sendcq__ack_una", 24),
        bit("sendcq__cqe_valid"),
        bit("sendcq__cqe_ready"),
        bit("rxpath__cqe_valid"),
        bit("rxpath__cqe_ready"),
        bit("cq_rw__in_valid"),
        bit("cq_rw__in_ready"),
        dec("cq_rw__in_ring", 8),
        bit("cq_rw__dma_wr__req__valid"),
        hex("cq_rw__dma_wr__req__addr", 64),
        bit("ev_rw__in_valid"),
        bit("ev_rw__dma_wr__req__valid"),
        hex("ev_rw__dma_wr__req__addr", 64),
        bit("dma_wr$req$valid"),
        bit("dma_wr$req$ready"),
        hex("dma_wr$req$addr", 64),
        dec("dma_wr$req$len", 16),
        bit("dma_wr$beat$valid"),
        bit("dma_wr$beat$ready"),
        bit("dma_wr$beat$last"),
    ],
};

/// The receiver's acknowledgements: the ACK generator's SACK / NACK
/// records, the completion tracker's NAKs, the TX path's ACK sequencer.
const ACK_OUT: Group = Group {
    name: "ACK/NACK sent (receiver)",
    probes: &[
        bit("ackgen__tx_valid"),
        bit("ackgen__tx_ready"),
        dec("ackgen__tx_qp", 8),
        // `hw::ack_gen::kind` (SACK 1, NACK 2) and `nack` (trimmed 1,
        // out of window 2, remote access 3).
        dec("ackgen__tx_kind", 2),
        dec("ackgen__tx_nack_kind", 2),
        dec("ackgen__tx_nak_code", 5),
        dec("ackgen__tx_psn", 24),
        dec("ackgen__tx_cum", 24),
        dec("ackgen__tx_base", 24),
        hex("ackgen__tx_bitmap", 64),
        bit("compl__nack_valid"),
        dec("compl__nack_psn", 24),
        dec("compl__nack_code", 5),
        // The ACK sequencer's state (hw::tx_path).
        dec("txpath.a_state__q", 3),
    ],
};

/// The sender's side of acknowledgements: what the RX path hands the
/// retransmit engine, and the acknowledged PSN it reports.
const ACK_IN: Group = Group {
    name: "ACK/NACK received (sender)",
    probes: &[
        bit("rxpath__op_valid"),
        bit("rxpath__op_ready"),
        // `hw::retransmit::kind` (SACK 2, trim NACK 3, out-of-window NACK 4).
        dec("rxpath__op_kind", 3),
        dec("rxpath__op_psn", 24),
        dec("rxpath__op_ev", 7),
        dec("rxpath__op_base", 24),
        hex("rxpath__op_bitmap", 64),
        bit("retx__ack_valid"),
        dec("retx__ack_qp", 8),
        dec("retx__ack_una", 24),
    ],
};

/// The retransmit engine: its operations (init, sent, SACK, NACKs), its
/// state, the retransmissions and RTOs it raises, and the clock its
/// timers run on.
const RETRANSMIT: Group = Group {
    name: "Retransmission and timers",
    probes: &[
        dec("now_ns", 32),
        // `EngineState` in hw::retransmit, numbered in declaration order (Idle 0, Load 1, ...).
        dec("retx.st__q", 5),
        bit("retx__op_valid"),
        bit("retx__op_ready"),
        dec("retx__op_kind", 3),
        dec("retx__op_qp", 8),
        dec("retx__op_psn", 24),
        bit("retx__rtx_valid"),
        bit("retx__rtx_ready"),
        dec("retx__rtx_qp", 8),
        dec("retx__rtx_psn", 24),
        dec("retx__rtx_ev", 7),
        // `RtxReason` (loss 0, trim 1, timeout 2, out of window 3, tail probe 4).
        dec("retx__rtx_reason", hw::retransmit::RTX_REASON_BITS as u32),
        bit("retx__rto_valid"),
        dec("retx__rto_qp", 8),
        bit("retx__err_valid"),
        dec("retx__err_psn", 24),
    ],
};

/// The EV selector: the TX path's choice of EV per packet, EVs marked bad
/// by the retransmit engine, the state changes reported to the host, and
/// the host's deny / allow writes.
const EV: Group = Group {
    name: "EV selection",
    probes: &[
        bit("evsel__sel_valid"),
        dec("evsel__sel_qp", 8),
        bit("evsel__rsp_valid"),
        dec("evsel__rsp_ev", 7),
        hex("evsel__rsp_value", 32),
        bit("evsel__rsp_none"),
        bit("evsel__mark_valid"),
        dec("evsel__mark_qp", 8),
        dec("evsel__mark_ev", 7),
        // `MarkReason` in hw::retransmit (loss 0, stall 1, timeout 2, skip 3).
        dec("retx__mark_reason", 2),
        bit("evsel__evt_valid"),
        dec("evsel__evt_qp", 8),
        dec("evsel__evt_ev", 7),
        // `hw::ev_selector::state` (contract::layout::EvNewState).
        dec("evsel__evt_from", 2),
        dec("evsel__evt_to", 2),
        bit("evsel__ctl_valid"),
        bit("evsel__ctl_allow"),
        hex("evsel__ctl_value", 32),
    ],
};

/// The view written beside every trace of the core.
pub const CORE_VIEW: View = View {
    groups: &[HOST, TX, RX, COMPLETIONS, ACK_OUT, ACK_IN, RETRANSMIT, EV],
};

impl Probe {
    /// The name GTKWave gives the signal in an FST from Verilator.
    pub fn gtkwave_name(&self) -> String {
        if self.width == 1 {
            format!("{FST_CORE_SCOPE}.{}", self.path)
        } else {
            format!("{FST_CORE_SCOPE}.{}[{}:0]", self.path, self.width - 1)
        }
    }
}

impl View {
    /// The GTKWave save file showing this view of `dumpfile`, saved as
    /// `savefile`. GTKWave opens `dumpfile` as written; when it is not
    /// there it looks for it at the same place relative to `savefile`'s
    /// actual location, so the two files can move together.
    pub fn gtkw(&self, dumpfile: &Path, savefile: &Path) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "[dumpfile] \"{}\"", dumpfile.display());
        let _ = writeln!(s, "[savefile] \"{}\"", savefile.display());
        let _ = writeln!(s, "[timestart] 0");
        // Wide enough for the longest names (`TOP.mrc_core.rxbuf__dma_wr__req__addr[63:0]`).
        let _ = writeln!(s, "[signals_width] 360");
        let _ = writeln!(s, "[sst_expanded] 1");
        for g in self.groups {
            let _ = writeln!(s, "@{:x}", flag::GRP_BEGIN | flag::BLANK);
            let _ = writeln!(s, "-{}", g.name);
            let mut last = None;
            for p in g.probes {
                let f = p.radix.flags();
                // GTKWave writes a flags line only when the flags change.
                if last != Some(f) {
                    let _ = writeln!(s, "@{f:x}");
                    last = Some(f);
                }
                let _ = writeln!(s, "{}", p.gtkwave_name());
            }
            let _ = writeln!(s, "@{:x}", flag::GRP_END | flag::BLANK);
            let _ = writeln!(s, "-{}", g.name);
        }
        s
    }
}

/// The core's Verilog with every `$` inside an identifier written `__`,
/// except in the names of `top`'s ports (see the module doc: GTKWave 3.3
/// cannot find `child$port` names from a save file). System tasks
/// (`$display`) start with `$` and are no identifiers: they stay.
pub fn traced_verilog(verilog: &str, top: &str) -> String {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut ports: Vec<&str> = Vec::new();
    let mut in_top = false;
    let mut out = String::with_capacity(verilog.len() + verilog.len() / 16);
    for line in verilog.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("module ") {
            let name_end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
            in_top = &rest[..name_end] == top;
            if in_top {
                // `module mrc_core(clock,s_rx$tdata,...);`, one line.
                let list = rest[name_end..].trim_start_matches('(');
                let list = &list[..list.find(')').unwrap_or(list.len())];
                ports = list.split(',').map(str::trim).collect();
            }
        }
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c.is_ascii_alphabetic() || c == '_' || c == '$' {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if !is_ident(d) {
                        break;
                    }
                    end = j + d.len_utf8();
                    chars.next();
                }
                let tok = &line[i..end];
                // `.port(` in an instance names the child's port, renamed
                // in the child whatever the top's ports are called.
                let pin = out.ends_with('.');
                let keep = c == '$' || (in_top && !pin && ports.contains(&tok));
                if keep {
                    out.push_str(tok);
                } else {
                    out.push_str(&tok.replace('$', "__"));
                }
            } else {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// Where the view of the waveform `fst` goes: beside it, `.gtkw` for its
/// extension (`out.a.fst` -> `out.a.gtkw`).
pub fn gtkw_path(fst: &Path) -> PathBuf {
    fst.with_extension("gtkw")
}

/// Write [`CORE_VIEW`] of the waveform `fst` beside it; returns the save
/// file's path. Both paths in the file are absolute (GTKWave resolves a
/// relative dumpfile against its own working directory, not the save
/// file's).
pub fn write_core_view(fst: &Path) -> std::io::Result<PathBuf> {
    let fst = std::path::absolute(fst)?;
    let out = gtkw_path(&fst);
    std::fs::write(&out, CORE_VIEW.gtkw(&fst, &out))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::CORE_MODULE;
    use std::collections::{HashMap, HashSet};

    /// One Verilog module: its signals (name -> width) and its instances
    /// (instance name -> module name).
    #[derive(Default)]
    struct Module {
        signals: HashMap<String, u32>,
        instances: HashMap<String, String>,
        /// (module instantiated, port named by `.port(` there).
        pins: Vec<(String, String)>,
    }

    fn is_ident(c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_' || c == '$'
    }

    /// `[msb:lsb]` at the start of `s` (after blanks): its width and the rest.
    fn range(s: &str) -> (Option<u32>, &str) {
        let t = s.trim_start();
        let Some(r) = t.strip_prefix('[') else { return (None, t) };
        let (inner, rest) = r.split_once(']').expect("closed range");
        let (msb, lsb) = inner.split_once(':').expect("msb:lsb");
        let w = msb.trim().parse::<u32>().expect("msb") - lsb.trim().parse::<u32>().expect("lsb") + 1;
        (Some(w), rest.trim_start())
    }

    /// The modules of `hw`'s emitted Verilog, as `hw::flow::emit_block`
    /// writes it: one declaration per line (`input wire  [7:0] a;`,
    /// `reg  b;`, `wire [1:0] c = ...;`), one instance per
    /// `mrc_core__x name(` line.
    fn parse(verilog: &str, top: &str) -> HashMap<String, Module> {
        let mut modules = HashMap::new();
        let mut cur: Option<(String, Module)> = None;
        // The module of the instance whose `.port(...)` lines follow.
        let mut child: Option<String> = None;
        for line in verilog.lines() {
            let t = line.trim();
            if let Some(rest) = t.strip_prefix("module ") {
                let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
                cur = Some((name, Module::default()));
                continue;
            }
            if t.starts_with("endmodule") {
                let (name, m) = cur.take().expect("endmodule closes a module");
                modules.insert(name, m);
                continue;
            }
            let Some((_, m)) = cur.as_mut() else { continue };
            let mut rest = t;
            let mut decl = false;
            for kw in ["input", "output", "inout", "wire", "reg"] {
                if let Some(r) = rest.strip_prefix(kw) {
                    if r.starts_with([' ', '[']) {
                        rest = r.trim_start();
                        decl = true;
                    }
                }
            }
            if decl {
                let (w, rest) = range(rest);
                let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
                // A memory (`reg[15:0] mem[255:0];`) is no trace signal here.
                let is_memory = rest[name.len()..].trim_start().starts_with('[');
                if !name.is_empty() && !is_memory {
                    m.signals.insert(name, w.unwrap_or(1));
                }
                continue;
            }
            if t.starts_with(top) && t.ends_with('(') {
                let mut it = t.trim_end_matches('(').split_whitespace();
                if let (Some(module), Some(inst), None) = (it.next(), it.next(), it.next()) {
                    m.instances.insert(inst.to_string(), module.to_string());
                    child = Some(module.to_string());
                }
                continue;
            }
            if let (Some(module), Some(pin)) = (&child, t.strip_prefix('.')) {
                let name: String = pin.chars().take_while(|&c| is_ident(c)).collect();
                m.pins.push((module.clone(), name));
            }
            if t.starts_with(");") {
                child = None;
            }
        }
        modules
    }

    /// The width of `path` (below the top module `top`) in `modules`, or
    /// why it is not there.
    fn resolve(modules: &HashMap<String, Module>, top: &str, path: &str) -> Result<u32, String> {
        let mut module = top.to_string();
        let mut parts: Vec<&str> = path.split('.').collect();
        let signal = parts.pop().expect("a signal name");
        for inst in parts {
            let m = &modules[&module];
            module = m
                .instances
                .get(inst)
                .ok_or_else(|| format!("no instance `{inst}` in module `{module}`"))?
                .clone();
        }
        modules[&module]
            .signals
            .get(signal)
            .copied()
            .ok_or_else(|| format!("no signal `{signal}` in module `{module}`"))
    }

    /// Whether GTKWave 3.3 finds `path` (below `top`) from a save file: no
    /// scope on the path has a sibling `scope$...`, and the signal is no
    /// `instance$...` beside an instance of that name (the module doc).
    fn gtkwave_finds(modules: &HashMap<String, Module>, top: &str, path: &str) -> Result<(), String> {
        // Characters that sort before GTKWave's hierarchy delimiter.
        let before_dot = |c: char| c < '.';
        let mut module = top.to_string();
        let mut parts: Vec<&str> = path.split('.').collect();
        let signal = parts.pop().expect("a signal name");
        for inst in parts {
            let m = &modules[&module];
            if let Some(s) = m
                .signals
                .keys()
                .find(|s| s.strip_prefix(inst).is_some_and(|r| r.starts_with(before_dot)))
            {
                return Err(format!("`{s}` beside the scope `{inst}` in `{module}`"));
            }
            module = m.instances[inst].clone();
        }
        if let Some(k) = signal.find(before_dot) {
            if modules[&module].instances.contains_key(&signal[..k]) {
                return Err(format!("`{signal}` beside the scope `{}` in `{module}`", &signal[..k]));
            }
        }
        Ok(())
    }

    fn traced_modules() -> HashMap<String, Module> {
        let rtl = hw::flow::emit_block(CORE_MODULE, &mut hw::core::MrcCore::new(hw::csr::BuildInfo::FIXED));
        parse(&traced_verilog(&rtl.verilog, CORE_MODULE), CORE_MODULE)
    }

    /// Every signal of the view is in the Verilog the traced core is built
    /// from, at its path and with its width, and GTKWave can find it. A
    /// wrong name would make GTKWave drop the trace silently when it loads
    /// the view.
    #[test]
    fn every_signal_of_the_view_is_in_the_core() {
        let top = CORE_MODULE;
        // The scope the view names is the module `build_core` builds.
        assert_eq!(FST_CORE_SCOPE, format!("TOP.{top}"));
        let modules = traced_modules();
        // The parser sees the core: the top's ports, the blocks and their
        // registers (a parser that found nothing would fail every probe,
        // not pass them).
        assert_eq!(resolve(&modules, top, "m_tx$tdata"), Ok(512));
        assert_eq!(resolve(&modules, top, "req.state__q"), Ok(4));
        // Nothing at `TOP` (the top's ports) sorts between `mrc_core` and
        // what is below it.
        assert!(!modules[top].signals.keys().any(|s| s.starts_with(&format!("{top}$"))));
        let mut bad = Vec::new();
        for g in CORE_VIEW.groups {
            for p in g.probes {
                match resolve(&modules, top, p.path) {
                    Ok(w) if w == p.width => {}
                    Ok(w) => bad.push(format!("{}: {} bits in the view, {w} in the Verilog", p.path, p.width)),
                    Err(e) => bad.push(format!("{}: {e}", p.path)),
                }
                if let Err(e) = gtkwave_finds(&modules, top, p.path) {
                    bad.push(format!("{}: GTKWave cannot find it: {e}", p.path));
                }
            }
        }
        assert!(
            bad.is_empty(),
            "signals of CORE_VIEW not in mrc_core:\n  {}",
            bad.join("\n  ")
        );
    }

    /// The renaming: ports of the top keep `$`, everything else inside an
    /// identifier is `__`, system tasks stay, no two names become one;
    /// and it is what makes GTKWave find a child's port copy.
    #[test]
    fn traced_verilog_renames_internal_dollars_only() {
        let rtl = hw::flow::emit_block(CORE_MODULE, &mut hw::core::MrcCore::new(hw::csr::BuildInfo::FIXED));
        let before = parse(&rtl.verilog, CORE_MODULE);
        let after = traced_verilog(&rtl.verilog, CORE_MODULE);
        let after_modules = parse(&after, CORE_MODULE);
        assert_eq!(before.len(), after_modules.len());
        for (name, m) in &before {
            let n = &after_modules[&name.replace('$', "__")];
            assert_eq!(m.signals.len(), n.signals.len(), "module {name}: two names became one");
            assert_eq!(m.instances.len(), n.instances.len(), "module {name}");
        }
        // Every instance names ports its module has (what Verilator
        // checks: a top port's name is renamed where it names a child's).
        for (name, m) in &after_modules {
            assert!(!m.instances.is_empty() || m.pins.is_empty());
            for (child, pin) in &m.pins {
                assert!(
                    after_modules[child].signals.contains_key(pin),
                    "{name}: .{pin}( of {child}"
                );
            }
        }
        assert!(after_modules[CORE_MODULE].pins.len() > 100, "the pins are parsed");
        let top = &after_modules[CORE_MODULE];
        assert_eq!(top.signals.get("m_tx$tvalid"), Some(&1), "a port keeps its name");
        assert!(top.signals.contains_key("req__out_valid") && !top.signals.contains_key("req$out_valid"));
        assert_eq!(
            traced_verilog(
                "module t(a$b);\n  wire c$d = a$b; initial $display(c$d);\n  u x(.a$b(c$d));\nendmodule\n",
                "t"
            ),
            "module t(a$b);\n  wire c__d = a$b; initial $display(c__d);\n  u x(.a__b(c__d));\nendmodule\n"
        );
        // The check of `every_signal_of_the_view_is_in_the_core` fails on
        // the names as emitted.
        assert!(gtkwave_finds(&before, CORE_MODULE, "req$out_valid").is_err());
        assert!(gtkwave_finds(&before, CORE_MODULE, "req.state$q").is_err());
        assert!(gtkwave_finds(&after_modules, CORE_MODULE, "req__out_valid").is_ok());
    }

    #[test]
    fn groups_are_named_and_signals_unique() {
        let mut names = HashSet::new();
        let mut paths = HashSet::new();
        for g in CORE_VIEW.groups {
            assert!(!g.probes.is_empty(), "group `{}` is empty", g.name);
            assert!(names.insert(g.name), "group `{}` twice", g.name);
            for p in g.probes {
                assert!(paths.insert(p.path), "`{}` in two places", p.path);
                assert_eq!(
                    p.radix == Radix::Bin,
                    p.width == 1,
                    "{}: binary is for single bits",
                    p.path
                );
            }
        }
    }

    #[test]
    fn gtkw_names_the_dumpfile_and_brackets_every_group() {
        let text = CORE_VIEW.gtkw(Path::new("/w/out.a.fst"), Path::new("/w/out.a.gtkw"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "[dumpfile] \"/w/out.a.fst\"");
        assert_eq!(lines[1], "[savefile] \"/w/out.a.gtkw\"");
        assert!(lines.contains(&"[timestart] 0"));
        // Each group: begin marker, `-name`, its signals, end marker, `-name`.
        let begin = format!("@{:x}", flag::GRP_BEGIN | flag::BLANK);
        let end = format!("@{:x}", flag::GRP_END | flag::BLANK);
        assert_eq!(begin, "@800200");
        assert_eq!(end, "@1000200");
        let mut i = lines.iter().position(|l| l.starts_with('@')).expect("traces");
        for g in CORE_VIEW.groups {
            assert_eq!(lines[i], begin);
            assert_eq!(lines[i + 1], format!("-{}", g.name));
            i += 2;
            let mut signals = Vec::new();
            while lines[i] != end {
                if !lines[i].starts_with('@') {
                    signals.push(lines[i]);
                }
                i += 1;
            }
            assert_eq!(lines[i + 1], format!("-{}", g.name));
            i += 2;
            let want: Vec<String> = g.probes.iter().map(Probe::gtkwave_name).collect();
            assert_eq!(signals, want, "group `{}`", g.name);
        }
        assert_eq!(i, lines.len(), "nothing after the last group");
        // The name forms GTKWave uses for Verilator's FST.
        assert!(text.contains("\nTOP.mrc_core.m_tx$tvalid\n"));
        assert!(text.contains("\nTOP.mrc_core.retx__rtx_psn[23:0]\n"));
        assert!(text.contains("\nTOP.mrc_core.req.state__q[3:0]\n"));
        // Radix flags: binary for bits, hex for addresses.
        assert!(text.contains("\n@28\nTOP.mrc_core.csr__db_valid\n"));
        assert!(text.contains("\n@22\nTOP.mrc_core.dma_rd$req$addr[63:0]\n"));
    }

    #[test]
    fn the_view_goes_beside_the_trace() {
        assert_eq!(gtkw_path(Path::new("/w/out.a.fst")), Path::new("/w/out.a.gtkw"));
        let dir = std::env::temp_dir().join(format!("mrc-waves-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fst = dir.join("t.b.fst");
        let out = write_core_view(&fst).unwrap();
        assert_eq!(out, dir.join("t.b.gtkw"));
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.starts_with(&format!("[dumpfile] \"{}\"\n", fst.display())));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
