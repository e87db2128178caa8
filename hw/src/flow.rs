//! The RTL flow: emit Verilog with stable module names, lint it with
//! Verilator, synthesize it with Yosys for UltraScale+ and report resources.
//! `mrc rtl verilog|lint|synth` is a thin front end over these functions.

use std::path::{Path, PathBuf};
use std::process::Command;

use rust_hdl::prelude::*;

use crate::ack_gen::AckGen;
use crate::axil::AxiLiteSlave;
use crate::cc_gate::CcGate;
use crate::completion::CompletionTracker;
use crate::core::MrcCore;
use crate::csr::{BuildInfo, Csr};
use crate::desc_push::DescPushCache;
use crate::dma_arb::{DmaReadArb, DmaWriteArb};
use crate::dma_axi::DmaAxi;
use crate::ev_prober::EvProberFull;
use crate::ev_selector::EvSelectorFull;
use crate::fault_inject::FaultInject;
use crate::nscc::NsccUnit;
use crate::payload_push::PayloadPushCache;
use crate::requester::Requester;
use crate::retransmit::RetransmitEngine;
use crate::ring_writer::RingWriter;
use crate::rtt_est::RttEstimator;
use crate::rx_buffer::RxBuffer;
use crate::rx_icrc::RxIcrc;
use crate::rx_ingress::RxIngress;
use crate::rx_parser::RxParser;
use crate::rx_parser_mrc10::RxParserMrc10;
use crate::rx_path::RxPath;
use crate::sack_table::SackTable;
use crate::send_cq::SendCompletions;
use crate::tx_builder::TxBuilder;
use crate::tx_header_mrc10::TxHeaderMrc10;
use crate::tx_path::TxPath;

pub mod widen;

/// A tool invocation failed.
#[derive(Debug, thiserror::Error)]
pub enum FlowError {
    #[error("`{tool}` not found on PATH: install it (scripts/deps.sh installs verilator and yosys)")]
    ToolMissing { tool: &'static str },
    #[error("`{tool}` failed on {block} ({status}):\n{stderr}")]
    ToolFailed {
        tool: &'static str,
        block: String,
        status: String,
        stderr: String,
    },
    #[error("cannot parse `{tool}` output for {block}: {what}")]
    Parse {
        tool: &'static str,
        block: String,
        what: String,
    },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// The width check ([`widen`]) found arithmetic that the emitted
    /// Verilog evaluates wider than rust-hdl, not in `WIDEN_WAIVERS`
    /// (block name, finding).
    #[error("{}", widen_message(findings))]
    Widening {
        findings: Vec<(String, widen::WidenFinding)>,
    },
}

fn widen_message(findings: &[(String, widen::WidenFinding)]) -> String {
    let mut m = format!(
        "width check: {} expression(s) evaluated wider in Verilog than in rust-hdl (narrow through an N-bit Local signal, or waive in hw::flow::widen::WIDEN_WAIVERS with a reason)",
        findings.len()
    );
    for (block, f) in findings {
        m.push_str(&format!("\n  {block}.v: {f}"));
    }
    m
}

/// Verilator warning classes waived by `lint`, with the reason. Anything
/// else fails the lint. The UNOPTFLAT waiver is backed by the
/// combinational-loop check of [`synth_script`].
pub const LINT_WAIVERS: &[(&str, &str)] = &[
    ("WIDTH", "rust-hdl's bit_cast and arithmetic emit width-mismatched expressions by design (it masks instead of narrowing; `+ 1` on an N-bit value is a 32-bit literal)"),
    ("DECLFILENAME", "one file per block holds the block's top and every submodule rust-hdl generated for it (one module per instance)"),
    ("UNUSED", "the parser's 1024-bit header windows and the fault-injection EV extractor's 512-bit beat are read only at the bytes that hold fields (the rest is payload or beyond the last header); Verilator 5 reports it as UNUSEDSIGNAL"),
    ("UNOPTFLAT", "rust-hdl emits one always @(*) block per module that assigns every child input and reads every child output, so in the top Verilator sees the children's ready/valid paths as one circular node (e.g. an arbiter's ready and its neighbour's valid); no bit-level loop exists: Yosys' `check -assert` in `mrc rtl synth` fails on a real combinational loop"),
];

/// One block's Verilog.
#[derive(Clone, Debug)]
pub struct BlockRtl {
    /// Verilog name of the block's top module (also the file stem).
    pub name: &'static str,
    pub verilog: String,
}

/// Verilog of `uut` with its top module renamed to `name` and every
/// generated submodule `top$a$b` renamed to `name__a__b` (legal, stable,
/// deterministic identifiers without `$`).
pub fn emit_block<U: Block>(name: &'static str, uut: &mut U) -> BlockRtl {
    uut.connect_all();
    let raw = generate_verilog(uut);
    BlockRtl {
        name,
        verilog: rename_modules(&raw, name),
    }
}

fn rename_token(tok: &str, name: &str) -> Option<String> {
    let rest = tok.strip_prefix("top")?;
    if !(rest.is_empty() || rest.starts_with('$'))
        || !rest.chars().all(|c| c == '$' || c == '_' || c.is_ascii_alphanumeric())
    {
        return None;
    }
    Some(format!("{name}{}", rest.replace('$', "__")))
}

fn rename_modules(v: &str, name: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for line in v.lines() {
        let indent = &line[..line.len() - line.trim_start().len()];
        let t = line.trim_start();
        let (kw, body) = match t.strip_prefix("module ") {
            Some(b) => ("module ", b),
            None => ("", t),
        };
        let end = body.find(['(', ' ', ';']).unwrap_or(body.len());
        match rename_token(&body[..end], name) {
            Some(n) => {
                out.push_str(indent);
                out.push_str(kw);
                out.push_str(&n);
                out.push_str(&body[end..]);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// Every block of the design, plus the top, in a fixed order.
pub fn blocks(build: BuildInfo) -> Vec<BlockRtl> {
    vec![
        emit_block("mrc_csr", &mut Csr::new(build)),
        emit_block("mrc_rx_parser", &mut RxParser::default()),
        emit_block("mrc_rx_icrc", &mut RxIcrc::default()),
        emit_block("mrc_core", &mut MrcCore::new(build)),
        emit_block("mrc_ev_selector", &mut EvSelectorFull::default()),
        emit_block("mrc_ev_prober", &mut EvProberFull::default()),
        emit_block("mrc_sack_table", &mut SackTable::default()),
        emit_block("mrc_dma_rd_arb", &mut DmaReadArb::default()),
        emit_block("mrc_dma_wr_arb", &mut DmaWriteArb::default()),
        emit_block("mrc_ring_writer", &mut RingWriter::default()),
        emit_block("mrc_tx_path", &mut TxPath::default()),
        emit_block("mrc_requester", &mut Requester::default()),
        emit_block("mrc_desc_push", &mut DescPushCache::default()),
        emit_block("mrc_payload_push", &mut PayloadPushCache::default()),
        emit_block("mrc_dma_axi", &mut DmaAxi::default()),
        emit_block("mrc_axil", &mut AxiLiteSlave::default()),
        emit_block("mrc_fault_inject", &mut FaultInject::default()),
        emit_block("mrc_tx_builder", &mut TxBuilder::default()),
        emit_block("mrc_rx_buffer", &mut RxBuffer::default()),
        emit_block("mrc_ack_gen", &mut AckGen::default()),
        emit_block("mrc_completion", &mut CompletionTracker::default()),
        emit_block("mrc_retransmit", &mut RetransmitEngine::default()),
        emit_block("mrc_cc_gate", &mut CcGate::default()),
        emit_block("mrc_nscc", &mut NsccUnit::default()),
        emit_block("mrc_rtt_est", &mut RttEstimator::default()),
        emit_block("mrc_rx_path", &mut RxPath::default()),
        emit_block("mrc_rx_ingress", &mut RxIngress::default()),
        emit_block("mrc_send_cq", &mut SendCompletions::default()),
        emit_block("mrc_rx_parser_mrc10", &mut RxParserMrc10::default()),
        emit_block("mrc_tx_header_mrc10", &mut TxHeaderMrc10::default()),
    ]
}

/// Write `<name>.v` for each block into `dir`; return the paths.
pub fn write_verilog(dir: &Path, blocks: &[BlockRtl]) -> Result<Vec<PathBuf>, FlowError> {
    std::fs::create_dir_all(dir).map_err(|source| FlowError::Io {
        path: dir.into(),
        source,
    })?;
    let mut paths = Vec::new();
    for b in blocks {
        let p = dir.join(format!("{}.v", b.name));
        std::fs::write(&p, &b.verilog).map_err(|source| FlowError::Io {
            path: p.clone(),
            source,
        })?;
        paths.push(p);
    }
    Ok(paths)
}

/// Whether `tool` runs.
pub fn tool_available(tool: &str) -> bool {
    Command::new(tool).arg("-V").output().is_ok()
}

pub fn run_tool(tool: &'static str, block: &str, cmd: &mut Command) -> Result<(String, String), FlowError> {
    let out = cmd.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => FlowError::ToolMissing { tool },
        _ => FlowError::Io {
            path: tool.into(),
            source: e,
        },
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        let mut msg = stderr;
        if msg.trim().is_empty() {
            // Yosys reports errors on stdout: keep its tail.
            let lines: Vec<&str> = stdout.lines().collect();
            msg = lines[lines.len().saturating_sub(30)..].join("\n");
        }
        return Err(FlowError::ToolFailed {
            tool,
            block: block.into(),
            status: out.status.to_string(),
            stderr: msg,
        });
    }
    Ok((stdout, stderr))
}

/// The Verilator command line `lint` runs on `file` (top module `top`).
pub fn lint_args(file: &Path, top: &str) -> Vec<String> {
    let mut a = vec!["--lint-only".to_string(), "-Wall".into()];
    a.extend(LINT_WAIVERS.iter().map(|(w, _)| format!("-Wno-{w}")));
    a.push("--top-module".into());
    a.push(top.into());
    a.push(file.display().to_string());
    a
}

/// The width check ([`widen`]) over `blocks`: any finding not waived in
/// [`widen::WIDEN_WAIVERS`] fails. (Waivers that match nothing are
/// reported by [`widen::check_blocks`]; `hw/tests/flow.rs` requires none
/// over the whole design.)
pub fn check_widths(blocks: &[BlockRtl]) -> Result<(), FlowError> {
    let (findings, _stale) = widen::check_blocks(blocks);
    if findings.is_empty() {
        Ok(())
    } else {
        Err(FlowError::Widening { findings })
    }
}

/// The width check ([`check_widths`]), then `verilator --lint-only -Wall`
/// (with [`LINT_WAIVERS`]) and Yosys's elaboration ([`elaborate_script`])
/// on each block's file in `dir`. Any finding, remaining warning or error
/// fails with its report.
pub fn lint(dir: &Path, blocks: &[BlockRtl]) -> Result<(), FlowError> {
    check_widths(blocks)?;
    for b in blocks {
        let file = dir.join(format!("{}.v", b.name));
        run_tool(
            "verilator",
            b.name,
            Command::new("verilator").args(lint_args(&file, b.name)),
        )?;
        run_tool(
            "yosys",
            b.name,
            Command::new("yosys")
                .arg("-q")
                .arg("-p")
                .arg(elaborate_script(&file, b.name)),
        )?;
    }
    Ok(())
}

/// The Yosys front end `lint` runs on `file` (top module `top`): read,
/// check the hierarchy, turn processes into logic. Verilator accepts
/// Verilog that Yosys, which the synthesis and the Alveo flow's budget
/// rely on, rejects (a part select of a part select of a signal, as
/// rust-hdl emits for a field's bits read straight off a struct-typed
/// port); this finds it in seconds, where the synthesis of the whole core
/// takes a quarter of an hour.
pub fn elaborate_script(file: &Path, top: &str) -> String {
    format!("read_verilog {}; hierarchy -check -top {top}; proc", file.display())
}

/// Resource estimate of one block from Yosys `synth_xilinx -family xcup`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SynthStats {
    pub block: String,
    /// LUT1..LUT6.
    pub lut: u64,
    /// FDRE/FDSE/FDCE/FDPE.
    pub ff: u64,
    /// LUTs used as memory (Vivado's "LUT as Memory"): distributed-RAM
    /// primitives (RAM32M, RAM64M, RAM*X1*) and shift registers (SRL16E,
    /// SRLC32E: Yosys packs a chain of plain delay flip-flops into one).
    pub lutram: u64,
    /// Block RAM in RAMB36 units (a RAMB18 counts 0.5).
    pub bram36: f64,
    pub uram: u64,
    pub dsp: u64,
    /// Carry cells (Yosys 0.23 maps xcup adders to CARRY4, not CARRY8).
    pub carry: u64,
    /// Longest register-to-register (or port) combinational path in cells:
    /// LUTs, INVs, MUXF7/F8/F9 and CARRY4 cells, each counted once.
    /// Computed by [`netlist_depth`] on the mapped netlist with the
    /// flip-flop and memory primitives removed.
    pub logic_depth: u64,
    /// The most LUT (and INV) cells on any register-to-register path: the
    /// issue's "LUT levels", exact (not the LUTs on the path with the most
    /// cells, which is what earlier versions of the flow reported).
    pub lut_levels: u64,
    /// The most CARRY4 cells on any register-to-register path (a 64-bit
    /// adder is 16 in series; Yosys 0.23 maps xcup adders to CARRY4).
    pub carry_levels: u64,
    /// The target figure: the most *equivalent* LUT levels on any path,
    /// counting a LUT 1, a MUXF7/F8/F9 1/4 and a CARRY4 1/8 (rounded up).
    /// See `docs/hw/README.md` ("Logic depth") for the reasoning.
    pub levels: u64,
    /// Composition of the path that sets `levels`: LUTs, MUXF cells and
    /// CARRY4 cells on it.
    pub levels_path: (u64, u64, u64),
    /// The cell names along the path that sets `levels` (source first).
    pub critical_path: Vec<String>,
    /// Path ends (registers', memories' and ports' inputs, by net name)
    /// deeper than [`LEVELS_TARGET`]: how much work the target still is,
    /// where `levels` shows only the worst.
    #[serde(default)]
    pub ends_over_target: u64,
    /// The deepest path ends, deepest first: (net, equivalent levels).
    #[serde(default)]
    pub deepest_ends: Vec<(String, f64)>,
    /// Every cell type with its count, as Yosys printed them.
    pub cells: Vec<(String, u64)>,
}

/// The Yosys script `synth` runs: synthesize, print the statistics, remove
/// the clocked primitives (flip-flops, block RAM, URAM, LUTRAM, SRL shift
/// registers: their outputs become path sources, their inputs path ends)
/// and write the netlist for [`netlist_depth`]. With the clocked cells gone
/// every remaining path is combinational, so `scc -expect 0` fails the run
/// on a real combinational loop (the check behind the `UNOPTFLAT` lint
/// waiver).
pub fn synth_script(file: &Path, top: &str) -> String {
    let json = file.with_extension("netlist.json");
    format!(
        "read_verilog {}; synth_xilinx -family xcup -flatten -noiopad -top {top}; stat; delete t:FDRE t:FDSE t:FDCE t:FDPE t:RAMB36E2 t:RAMB18E2 t:URAM288 t:RAM* t:SRL16E t:SRLC16E t:SRLC32E; scc -all_cell_types -expect 0; write_json {}",
        file.display(),
        json.display()
    )
}

/// Logic depth of a mapped netlist (Yosys `write_json`, registers and
/// memories already deleted), with the weights of [`SynthStats::levels`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Depth {
    pub cells: u64,
    pub luts: u64,
    pub carries: u64,
    pub levels: u64,
    pub levels_path: (u64, u64, u64),
    pub critical_path: Vec<String>,
    /// Every path end: a combinational cell's output net that no
    /// combinational cell reads (it goes to a register, a memory or a
    /// port), by its user-visible net name (`?` without one), with its
    /// deepest arrival in eighths of a level; deepest first.
    pub ends: Vec<(String, u64)>,
}

/// The depth target of the issue (docs/hw/README.md, "Logic depth"):
/// register to register in at most 8 equivalent LUT levels at 322 MHz.
pub const LEVELS_TARGET: u64 = 8;

/// How many path ends of the flow's report: the deepest, by name.
pub const DEEPEST_ENDS_SHOWN: usize = 12;

#[derive(Clone, Copy, PartialEq)]
enum CellKind {
    Lut,
    MuxF,
    Carry,
    Other,
}

/// Longest paths through the combinational cells of module `top` in a
/// Yosys JSON netlist. Every cell output is taken to depend on every cell
/// input (true for LUT, MUXF and CARRY4 up to the carry chain's internal
/// order, which only makes a CARRY4's `O` outputs one cell deeper than
/// they are). A combinational loop (none is expected) is cut where the
/// search meets it.
pub fn netlist_depth(json: &str, top: &str) -> Result<Depth, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let cells = v["modules"][top]["cells"]
        .as_object()
        .ok_or_else(|| format!("no module `{top}` with cells"))?;
    let mut names = Vec::new();
    let mut kinds = Vec::new();
    let mut inputs: Vec<Vec<u64>> = Vec::new();
    let mut driver = std::collections::HashMap::new();
    for (name, c) in cells {
        let ty = c["type"].as_str().unwrap_or("");
        let kind = match ty {
            t if t.starts_with("LUT") || t == "INV" => CellKind::Lut,
            t if t.starts_with("MUXF") => CellKind::MuxF,
            t if t.starts_with("CARRY") => CellKind::Carry,
            _ => CellKind::Other,
        };
        let idx = names.len();
        let dirs = c["port_directions"]
            .as_object()
            .ok_or_else(|| format!("cell {name} ({ty}) without port directions"))?;
        let conns = c["connections"]
            .as_object()
            .ok_or_else(|| format!("cell {name} without connections"))?;
        let mut ins = Vec::new();
        for (port, bits) in conns {
            let nets = bits.as_array().into_iter().flatten().filter_map(|b| b.as_u64());
            match dirs.get(port).and_then(|d| d.as_str()) {
                Some("output") => nets.for_each(|n| {
                    driver.insert(n, idx);
                }),
                _ => ins.extend(nets),
            }
        }
        // Name the cell by its type and first output net (see below).
        let out_net = conns
            .iter()
            .find(|(p, _)| dirs.get(p.as_str()).and_then(|d| d.as_str()) == Some("output"))
            .and_then(|(_, b)| b[0].as_u64());
        names.push((name.clone(), ty.to_string(), out_net));
        kinds.push(kind);
        inputs.push(ins);
    }
    // Readable net names (ABC's cell names say nothing): the shortest
    // user-visible name of each net.
    let mut net_name: std::collections::HashMap<u64, &str> = std::collections::HashMap::new();
    if let Some(nets) = v["modules"][top]["netnames"].as_object() {
        for (n, info) in nets {
            if info["hide_name"].as_u64() == Some(1) {
                continue;
            }
            for b in info["bits"].as_array().into_iter().flatten() {
                if let Some(b) = b.as_u64() {
                    let e = net_name.entry(b).or_insert(n.as_str());
                    if n.len() < e.len() {
                        *e = n.as_str();
                    }
                }
            }
        }
    }
    // A net with no user-visible name often keeps one Yosys made from the
    // Verilog operator that produced it (`$flatten\m10.$lt$/out/b.v:7815$3886.CO`):
    // the instance, the operator and the emitted line say where the path
    // runs, where ABC's own names say nothing.
    let mut net_source: std::collections::HashMap<u64, String> = std::collections::HashMap::new();
    if let Some(nets) = v["modules"][top]["netnames"].as_object() {
        for (n, info) in nets {
            let Some(src) = verilog_source_of(n) else { continue };
            for b in info["bits"].as_array().into_iter().flatten() {
                if let Some(b) = b.as_u64() {
                    net_source.entry(b).or_insert_with(|| src.clone());
                }
            }
        }
    }
    let names: Vec<String> = names
        .into_iter()
        .map(
            |(_, ty, out)| match (out.and_then(|o| net_name.get(&o)), out.and_then(|o| net_source.get(&o))) {
                (Some(net), _) => format!("{ty} -> {net}"),
                (None, Some(src)) => format!("{ty} ~ {src}"),
                (None, None) => ty,
            },
        )
        .collect();
    let preds: Vec<Vec<usize>> = inputs
        .iter()
        .map(|ins| {
            let mut p: Vec<usize> = ins.iter().filter_map(|n| driver.get(n).copied()).collect();
            p.sort_unstable();
            p.dedup();
            p
        })
        .collect();
    // Longest path under a weight per cell kind: (arrival, predecessor).
    let longest = |w: &dyn Fn(CellKind) -> u64| -> (Vec<u64>, Vec<Option<usize>>) {
        let n = names.len();
        let mut arr = vec![0u64; n];
        let mut from = vec![None; n];
        let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
        for root in 0..n {
            if state[root] != 0 {
                continue;
            }
            let mut stack = vec![(root, 0usize)];
            state[root] = 1;
            while let Some(&mut (c, ref mut i)) = stack.last_mut() {
                if *i < preds[c].len() {
                    let p = preds[c][*i];
                    *i += 1;
                    if state[p] == 0 {
                        state[p] = 1;
                        stack.push((p, 0));
                    }
                    continue;
                }
                let best = preds[c]
                    .iter()
                    .filter(|&&p| state[p] == 2)
                    .max_by_key(|&&p| arr[p])
                    .copied();
                arr[c] = w(kinds[c]) + best.map_or(0, |p| arr[p]);
                from[c] = best;
                state[c] = 2;
                stack.pop();
            }
        }
        (arr, from)
    };
    let max_of = |w: &dyn Fn(CellKind) -> u64| longest(w).0.into_iter().max().unwrap_or(0);
    let cells_n = max_of(&|k| u64::from(k != CellKind::Other));
    let luts = max_of(&|k| u64::from(k == CellKind::Lut));
    let carries = max_of(&|k| u64::from(k == CellKind::Carry));
    // Equivalent levels in eighths: LUT 8, MUXF 2, CARRY4 1.
    let (arr, from) = longest(&|k| match k {
        CellKind::Lut => 8,
        CellKind::MuxF => 2,
        CellKind::Carry => 1,
        CellKind::Other => 0,
    });
    // Path ends: nets driven by a combinational cell and read by none.
    let read: std::collections::HashSet<u64> = inputs
        .iter()
        .zip(&kinds)
        .filter(|(_, k)| **k != CellKind::Other)
        .flat_map(|(ins, _)| ins.iter().copied())
        .collect();
    let mut by_end: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for (net, &c) in &driver {
        if kinds[c] == CellKind::Other || read.contains(net) {
            continue;
        }
        let e = by_end.entry(net_name.get(net).copied().unwrap_or("?")).or_insert(0);
        *e = (*e).max(arr[c]);
    }
    let mut ends: Vec<(String, u64)> = by_end.into_iter().map(|(n, a)| (n.to_string(), a)).collect();
    ends.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut path = Vec::new();
    let mut path_cells = Vec::new();
    let mut at = (0..arr.len()).max_by_key(|&c| arr[c]);
    let mut comp = (0, 0, 0);
    while let Some(c) = at {
        match kinds[c] {
            CellKind::Lut => comp.0 += 1,
            CellKind::MuxF => comp.1 += 1,
            CellKind::Carry => comp.2 += 1,
            CellKind::Other => {}
        }
        path.push(names[c].clone());
        path_cells.push(c);
        at = from[c];
    }
    path.reverse();
    // Where the path starts: the named nets feeding its first cell.
    if let Some(first) = path_cells.last() {
        let src: Vec<&str> = inputs[*first]
            .iter()
            .filter(|n| !driver.contains_key(n))
            .filter_map(|n| net_name.get(n).copied())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .take(4)
            .collect();
        path.insert(0, format!("from {}", src.join(", ")));
    }
    let eighths = arr.iter().copied().max().unwrap_or(0);
    Ok(Depth {
        cells: cells_n,
        luts,
        carries,
        levels: eighths.div_ceil(8),
        levels_path: comp,
        critical_path: path,
        ends,
    })
}

/// Where a Yosys-generated net name says it came from: `$flatten\m10.$lt$/out/b.v:7815$3886.CO`
/// (an operator of instance `m10` at line 7815 of the emitted `b.v`) gives
/// `m10.$lt at b.v:7815`; a top-level `$add$/out/b.v:12$5.Y` gives `$add at b.v:12`.
/// `None` for names that carry no source line (ABC's, `$auto$...`).
fn verilog_source_of(name: &str) -> Option<String> {
    let rest = name.strip_prefix("$flatten\\").unwrap_or(name);
    let (head, tail) = rest.split_once(".v:")?;
    let line: String = tail.chars().take_while(char::is_ascii_digit).collect();
    if line.is_empty() {
        return None;
    }
    // `head` is `<instance>.$<op>$<path>/<file>` or `$<op>$<path>/<file>`.
    let op_at = head.find('$')?;
    let (instance, op_file) = head.split_at(op_at);
    let (op, file) = op_file[1..].split_once('$')?;
    let file = file.rsplit('/').next().unwrap_or(file);
    Some(format!("{instance}${op} at {file}.v:{line}"))
}

/// Parse Yosys' `stat` output (the depth comes from [`netlist_depth`]).
pub fn parse_yosys(block: &str, log: &str) -> Result<SynthStats, FlowError> {
    let mut s = SynthStats {
        block: block.into(),
        ..Default::default()
    };
    // The last "Number of cells" section is the final netlist's.
    let start = log.rfind("Number of cells:").ok_or_else(|| FlowError::Parse {
        tool: "yosys",
        block: block.into(),
        what: "no `Number of cells` in stat output".into(),
    })?;
    for line in log[start..].lines().skip(1) {
        let mut it = line.split_whitespace();
        let (Some(cell), Some(n), None) = (it.next(), it.next(), it.next()) else {
            if line.trim().is_empty() {
                continue;
            }
            break;
        };
        let Ok(n) = n.parse::<u64>() else { break };
        s.cells.push((cell.to_string(), n));
        match cell {
            c if c.starts_with("LUT") => s.lut += n,
            "FDRE" | "FDSE" | "FDCE" | "FDPE" => s.ff += n,
            c if c.starts_with("RAM32")
                || c.starts_with("RAM64")
                || c.starts_with("RAM128")
                || c.starts_with("RAM256") =>
            {
                s.lutram += n
            }
            c if c.starts_with("SRL") => s.lutram += n,
            c if c.starts_with("RAMB36") => s.bram36 += n as f64,
            c if c.starts_with("RAMB18") => s.bram36 += 0.5 * n as f64,
            c if c.starts_with("URAM") => s.uram += n,
            c if c.starts_with("DSP") => s.dsp += n,
            c if c.starts_with("CARRY") => s.carry += n,
            _ => {}
        }
    }
    Ok(s)
}

/// Synthesize each block's file in `dir` with Yosys.
pub fn synth(dir: &Path, blocks: &[BlockRtl]) -> Result<Vec<SynthStats>, FlowError> {
    let mut all = Vec::new();
    for b in blocks {
        let file = dir.join(format!("{}.v", b.name));
        let (log, _) = run_tool(
            "yosys",
            b.name,
            Command::new("yosys").arg("-p").arg(synth_script(&file, b.name)),
        )?;
        let logfile = dir.join(format!("{}.yosys.log", b.name));
        std::fs::write(&logfile, &log).map_err(|source| FlowError::Io { path: logfile, source })?;
        let mut s = parse_yosys(b.name, &log)?;
        let json_path = file.with_extension("netlist.json");
        let json = std::fs::read_to_string(&json_path).map_err(|source| FlowError::Io {
            path: json_path.clone(),
            source,
        })?;
        let d = netlist_depth(&json, b.name).map_err(|what| FlowError::Parse {
            tool: "yosys",
            block: b.name.into(),
            what,
        })?;
        s.logic_depth = d.cells;
        s.lut_levels = d.luts;
        s.carry_levels = d.carries;
        s.levels = d.levels;
        s.levels_path = d.levels_path;
        s.critical_path = d.critical_path;
        s.ends_over_target = d.ends.iter().filter(|(_, a)| *a > LEVELS_TARGET * 8).count() as u64;
        s.deepest_ends = d
            .ends
            .iter()
            .take(DEEPEST_ENDS_SHOWN)
            .map(|(n, a)| (n.clone(), *a as f64 / 8.0))
            .collect();
        all.push(s);
    }
    Ok(all)
}

/// The resource report as markdown.
pub fn report_markdown(stats: &[SynthStats]) -> String {
    let mut s = String::from(
        "| block | LUT | FF | LUTRAM | BRAM (36k) | URAM | DSP | CARRY4 | levels (LUT+MUXF/4+CARRY4/8) | that path: LUT/MUXF/CARRY4 | max LUT levels | max CARRY4 on a path | longest path (cells) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for b in stats {
        let (l, m, c) = b.levels_path;
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {l}/{m}/{c} | {} | {} | {} |\n",
            b.block,
            b.lut,
            b.ff,
            b.lutram,
            b.bram36,
            b.uram,
            b.dsp,
            b.carry,
            b.levels,
            b.lut_levels,
            b.carry_levels,
            b.logic_depth
        ));
    }
    for b in stats.iter().filter(|b| !b.deepest_ends.is_empty()) {
        let deepest: Vec<String> = b.deepest_ends.iter().map(|(n, l)| format!("`{n}` {l:.2}")).collect();
        s.push_str(&format!(
            "\n{}: {} path ends deeper than {LEVELS_TARGET} levels; the deepest: {}\n",
            b.block,
            b.ends_over_target,
            deepest.join(", ")
        ));
    }
    s
}

/// Write `synth.json` and `synth.md` into `dir`.
pub fn write_report(dir: &Path, stats: &[SynthStats]) -> Result<(PathBuf, PathBuf), FlowError> {
    let j = dir.join("synth.json");
    let m = dir.join("synth.md");
    let json = serde_json::to_string_pretty(stats).expect("stats serialize");
    std::fs::write(&j, json + "\n").map_err(|source| FlowError::Io {
        path: j.clone(),
        source,
    })?;
    let md = format!(
        "# Yosys 0.23 `synth_xilinx -family xcup` estimates\n\nEstimates only (Vivado gives the real figures).\n\n{}",
        report_markdown(stats)
    );
    std::fs::write(&m, md).map_err(|source| FlowError::Io {
        path: m.clone(),
        source,
    })?;
    Ok((j, m))
}
