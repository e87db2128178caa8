//! The RTL flow: emit Verilog with stable module names, lint it with
//! Verilator, synthesize it with Yosys for UltraScale+ and report resources.
//! `mrc rtl verilog|lint|synth` is a thin front end over these functions.

use std::path::{Path, PathBuf};
use std::process::Command;

use rust_hdl::prelude::*;

use crate::core::MrcCore;
use crate::csr::{BuildInfo, Csr};
use crate::ev_selector::EvSelectorFull;
use crate::rx_buffer::RxBuffer;
use crate::rx_parser::RxParser;
use crate::sack_table::SackTable;

/// A tool invocation failed.
#[derive(Debug, thiserror::Error)]
pub enum FlowError {
    #[error("`{tool}` not found on PATH: install it (scripts/deps.sh installs verilator and yosys)")]
    ToolMissing { tool: &'static str },
    #[error("`{tool}` failed on {block} ({status}):\n{stderr}")]
    ToolFailed { tool: &'static str, block: String, status: String, stderr: String },
    #[error("cannot parse `{tool}` output for {block}: {what}")]
    Parse { tool: &'static str, block: String, what: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Verilator warning classes waived by `lint`, with the reason. Anything
/// else fails the lint. (UNOPTFLAT, which toolchain.md lists, does not
/// appear under `--lint-only` with Verilator 5.006 on these blocks, so it
/// is not waived.)
pub const LINT_WAIVERS: &[(&str, &str)] = &[
    ("WIDTH", "rust-hdl's bit_cast and arithmetic emit width-mismatched expressions by design (it masks instead of narrowing; `+ 1` on an N-bit value is a 32-bit literal)"),
    ("DECLFILENAME", "one file per block holds the block's top and every submodule rust-hdl generated for it (one module per instance)"),
    ("UNUSED", "the parser's 1024-bit header windows are read only at the bytes that hold fields (the rest is payload or beyond the last header); Verilator 5 reports it as UNUSEDSIGNAL"),
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
    BlockRtl { name, verilog: rename_modules(&raw, name) }
}

fn rename_token(tok: &str, name: &str) -> Option<String> {
    let rest = tok.strip_prefix("top")?;
    if !(rest.is_empty() || rest.starts_with('$')) || !rest.chars().all(|c| c == '$' || c == '_' || c.is_ascii_alphanumeric()) {
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
        emit_block("mrc_core", &mut MrcCore::new(build)),
        emit_block("mrc_ev_selector", &mut EvSelectorFull::default()),
        emit_block("mrc_sack_table", &mut SackTable::default()),
        emit_block("mrc_rx_buffer", &mut RxBuffer::default()),
    ]
}

/// Write `<name>.v` for each block into `dir`; return the paths.
pub fn write_verilog(dir: &Path, blocks: &[BlockRtl]) -> Result<Vec<PathBuf>, FlowError> {
    std::fs::create_dir_all(dir).map_err(|source| FlowError::Io { path: dir.into(), source })?;
    let mut paths = Vec::new();
    for b in blocks {
        let p = dir.join(format!("{}.v", b.name));
        std::fs::write(&p, &b.verilog).map_err(|source| FlowError::Io { path: p.clone(), source })?;
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
        _ => FlowError::Io { path: tool.into(), source: e },
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
        return Err(FlowError::ToolFailed { tool, block: block.into(), status: out.status.to_string(), stderr: msg });
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

/// `verilator --lint-only -Wall` (with [`LINT_WAIVERS`]) on each block's
/// file in `dir`. Any remaining warning or error fails with Verilator's
/// output.
pub fn lint(dir: &Path, blocks: &[BlockRtl]) -> Result<(), FlowError> {
    for b in blocks {
        let file = dir.join(format!("{}.v", b.name));
        run_tool("verilator", b.name, Command::new("verilator").args(lint_args(&file, b.name)))?;
    }
    Ok(())
}

/// Resource estimate of one block from Yosys `synth_xilinx -family xcup`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SynthStats {
    pub block: String,
    /// LUT1..LUT6.
    pub lut: u64,
    /// FDRE/FDSE/FDCE/FDPE.
    pub ff: u64,
    /// Distributed-RAM primitives (RAM32M, RAM64M, RAM*X1*).
    pub lutram: u64,
    /// Block RAM in RAMB36 units (a RAMB18 counts 0.5).
    pub bram36: f64,
    pub uram: u64,
    pub dsp: u64,
    /// Carry cells (Yosys 0.23 maps xcup adders to CARRY4, not CARRY8).
    pub carry: u64,
    /// Longest combinational path in cells (`ltp -noff` after deleting the
    /// flip-flop and memory primitives: `-noff` only knows Yosys' internal FF
    /// types, not FDRE, and knows nothing of RAMB/URAM/LUTRAM cells, so
    /// without the delete the path runs through registers and RAMs). Counts
    /// LUTs, MUXF7/F8 and CARRY4 cells: an upper bound on LUT levels.
    pub logic_depth: u64,
    /// LUT cells on that path (the "LUT levels" metric; the other
    /// cells on it are CARRY4 and MUXF7/F8).
    pub lut_levels: u64,
    /// Every cell type with its count, as Yosys printed them.
    pub cells: Vec<(String, u64)>,
}

/// The Yosys script `synth` runs.
pub fn synth_script(file: &Path, top: &str) -> String {
    format!(
        "read_verilog {}; synth_xilinx -family xcup -flatten -noiopad -top {top}; stat; delete t:FDRE t:FDSE t:FDCE t:FDPE t:RAMB36E2 t:RAMB18E2 t:URAM288 t:RAM*; select -list t:LUT1 t:LUT2 t:LUT3 t:LUT4 t:LUT5 t:LUT6; ltp -noff",
        file.display()
    )
}

/// Parse Yosys' `stat` and `ltp` output.
pub fn parse_yosys(block: &str, log: &str) -> Result<SynthStats, FlowError> {
    let mut s = SynthStats { block: block.into(), ..Default::default() };
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
            c if c.starts_with("RAM32") || c.starts_with("RAM64") || c.starts_with("RAM128") || c.starts_with("RAM256") => s.lutram += n,
            c if c.starts_with("RAMB36") => s.bram36 += n as f64,
            c if c.starts_with("RAMB18") => s.bram36 += 0.5 * n as f64,
            c if c.starts_with("URAM") => s.uram += n,
            c if c.starts_with("DSP") => s.dsp += n,
            c if c.starts_with("CARRY") => s.carry += n,
            _ => {}
        }
    }
    let ltp = log.rfind(&format!("Longest topological path in {block} (")).ok_or_else(|| FlowError::Parse {
        tool: "yosys",
        block: block.into(),
        what: "no `Longest topological path` in ltp output".into(),
    })?;
    let len = log[ltp..]
        .split("length=")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|n| n.trim().parse::<u64>().ok())
        .ok_or_else(|| FlowError::Parse { tool: "yosys", block: block.into(), what: "ltp length".into() })?;
    // `ltp` reports the number of cells on the path.
    s.logic_depth = len;
    // LUT cells (from `select -list`) on the path's `(via CELL)` hops.
    let prefix = format!("{block}/");
    let luts: std::collections::HashSet<&str> = log.lines().filter_map(|l| l.strip_prefix(&prefix)).collect();
    s.lut_levels = log[ltp..]
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.rsplit_once("(via ").map(|(_, c)| c.trim_end_matches(')')))
        .filter(|c| luts.contains(c))
        .count() as u64;
    Ok(s)
}

/// Synthesize each block's file in `dir` with Yosys.
pub fn synth(dir: &Path, blocks: &[BlockRtl]) -> Result<Vec<SynthStats>, FlowError> {
    let mut all = Vec::new();
    for b in blocks {
        let file = dir.join(format!("{}.v", b.name));
        let (log, _) = run_tool("yosys", b.name, Command::new("yosys").arg("-p").arg(synth_script(&file, b.name)))?;
        let logfile = dir.join(format!("{}.yosys.log", b.name));
        std::fs::write(&logfile, &log).map_err(|source| FlowError::Io { path: logfile, source })?;
        all.push(parse_yosys(b.name, &log)?);
    }
    Ok(all)
}

/// The resource report as markdown.
pub fn report_markdown(stats: &[SynthStats]) -> String {
    let mut s = String::from(
        "| block | LUT | FF | LUTRAM | BRAM (36k) | URAM | DSP | CARRY | longest path (cells) | LUTs on it |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for b in stats {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            b.block, b.lut, b.ff, b.lutram, b.bram36, b.uram, b.dsp, b.carry, b.logic_depth, b.lut_levels
        ));
    }
    s
}

/// Write `synth.json` and `synth.md` into `dir`.
pub fn write_report(dir: &Path, stats: &[SynthStats]) -> Result<(PathBuf, PathBuf), FlowError> {
    let j = dir.join("synth.json");
    let m = dir.join("synth.md");
    let json = serde_json::to_string_pretty(stats).expect("stats serialize");
    std::fs::write(&j, json + "\n").map_err(|source| FlowError::Io { path: j.clone(), source })?;
    let md = format!(
        "# Yosys 0.23 `synth_xilinx -family xcup` estimates\n\nEstimates only (Vivado gives the real figures).\n\n{}",
        report_markdown(stats)
    );
    std::fs::write(&m, md).map_err(|source| FlowError::Io { path: m.clone(), source })?;
    Ok((j, m))
}
