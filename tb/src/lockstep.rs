//! Lockstep check of a block's emitted Verilog against its rust-hdl
//! simulation.
//!
//! Why: rust-hdl's simulation runs the Rust model of a block, not the
//! Verilog it emits, and the two can differ (docs/hw/README.md "Tests":
//! inline narrow arithmetic is evaluated at the wider width of a compare
//! in the Verilog, and rust-hdl does not). The block tests compare the
//! rust-hdl simulation with the golden model; this module carries that
//! comparison over to the Verilog. The test's simulation is recorded at
//! every rising clock edge: every input port, as the testbench drove it
//! (stalls included), and every output port. The emitted Verilog, built
//! with Verilator (the `verilated` binding, the pinned release), is then
//! driven with the recorded inputs, one `Model::step` per edge, and each
//! of its outputs must equal the simulation's in every cycle. So every
//! decision the test checked against the golden model, and every other
//! output bit, is the same in the Verilog.
//!
//! Use: [`lockstep_sim!`](crate::lockstep_sim) in place of rust-hdl's
//! `simple_sim!` (same arguments plus a [`Recording`]), then
//! [`Recording::check_verilog`] after the run, with the block's Verilog.
//! On a mismatch the replay is repeated with an FST waveform, whose path
//! is in the panic message.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rust_hdl::prelude::*;
use verilated::{build, default_cache_dir, BuildOptions, Model, PortId};

// For `lockstep_sim!`, so the test need not name them.
#[doc(hidden)]
pub use rust_hdl::prelude::{Sim, Simulation};

/// One top-level port of the block, as rust-hdl names it (the Verilog
/// port of the same name).
#[derive(Clone, Debug)]
pub struct Port {
    pub name: String,
    pub width: usize,
    pub input: bool,
    /// Offset of its value in a frame, in 64-bit words.
    offset: usize,
}

impl Port {
    fn words(&self) -> usize {
        self.width.div_ceil(64)
    }
}

#[derive(Default)]
struct Trace {
    ports: Vec<Port>,
    /// One frame per rising edge: every port's value, LSB word first.
    frames: Vec<Vec<u64>>,
}

/// Collects the top's ports (scope depth 1) and their values.
struct PortProbe {
    depth: usize,
    namespace: Vec<String>,
    /// (name, width, input, value words)
    seen: Vec<(String, usize, bool, Vec<u64>)>,
}

impl Probe for PortProbe {
    fn visit_start_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.depth += 1;
    }
    fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.depth -= 1;
    }
    fn visit_start_namespace(&mut self, name: &str, _node: &dyn Block) {
        if self.depth == 1 {
            self.namespace.push(name.to_string());
        }
    }
    fn visit_end_namespace(&mut self, _name: &str, _node: &dyn Block) {
        if self.depth == 1 {
            self.namespace.pop();
        }
    }
    fn visit_atom(&mut self, name: &str, signal: &dyn Atom) {
        if self.depth != 1 {
            return;
        }
        let input = match signal.kind() {
            AtomKind::InputParameter => true,
            AtomKind::OutputParameter | AtomKind::OutputPassthrough => false,
            _ => return,
        };
        let mut full = self.namespace.clone();
        full.push(name.to_string());
        let name = full.join("$");
        if name == "clock" {
            return;
        }
        let width = signal.bits();
        let mut words = vec![0u64; width.div_ceil(64)];
        let mut bits = Vec::with_capacity(width);
        if let Err(what) = lsb_first(&signal.vcd(), &mut bits) {
            panic!("lockstep: port `{name}` holds {what}; only Bits, bool and LogicStruct ports are supported");
        }
        assert_eq!(bits.len(), width, "lockstep: port `{name}`: value width");
        for (i, _) in bits.iter().enumerate().filter(|(_, b)| **b) {
            words[i / 64] |= 1 << (i % 64);
        }
        self.seen.push((name, width, input, words));
    }
}

/// Append a probed value's bits, least significant first: a vector is
/// reported most significant bit first; a `LogicStruct` is its fields in
/// declaration order, the first in the least significant bits (as its
/// Verilog port packs them). An undriven input (Z) reads 0, as in the
/// simulation.
fn lsb_first(v: &VCDValue, out: &mut Vec<bool>) -> Result<(), String> {
    match v {
        VCDValue::Single(b) => out.push(*b == vcd::Value::V1),
        VCDValue::Vector(bs) => out.extend(bs.iter().rev().map(|b| *b == vcd::Value::V1)),
        VCDValue::Composite(fields) => {
            for f in fields {
                lsb_first(f, out)?;
            }
        }
        VCDValue::String(s) => return Err(format!("an enum value ({s})")),
    }
    Ok(())
}

/// A recording of one rust-hdl simulation's ports, edge by edge.
#[derive(Clone, Default)]
pub struct Recording(Arc<Mutex<Trace>>);

impl Recording {
    pub fn new() -> Recording {
        Recording::default()
    }

    /// Record the ports' values now (called just before a rising edge,
    /// by `lockstep_sim!`'s clock).
    pub fn capture<B: Block>(&self, uut: &B) {
        let mut probe = PortProbe {
            depth: 0,
            namespace: Vec::new(),
            seen: Vec::new(),
        };
        uut.accept("top", &mut probe);
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if t.ports.is_empty() {
            let mut offset = 0;
            for (name, width, input, _) in &probe.seen {
                let p = Port {
                    name: name.clone(),
                    width: *width,
                    input: *input,
                    offset,
                };
                offset += p.words();
                t.ports.push(p);
            }
        }
        t.frames.push(probe.seen.into_iter().flat_map(|s| s.3).collect());
    }

    /// Replay the recorded inputs into the Verilog `emit` returns (module
    /// `top`, the block as it is emitted for synthesis) and compare every
    /// output in every cycle. Panics with the first mismatches and a
    /// waveform path; skips (with a message, before `emit` runs) only when
    /// Verilator is missing and `MRC_SKIP_EDA` is set.
    pub fn check_verilog(&self, top: &str, emit: impl FnOnce() -> String) {
        if verilated::skip_without_verilator(&format!("the Verilog lockstep of {top}")) {
            return;
        }
        let verilog = emit();
        let started = std::time::Instant::now();
        match self.compare_verilog(top, &verilog) {
            Ok(cycles) => eprintln!(
                "lockstep: {top} Verilog matched the rust-hdl simulation, every output for {cycles} cycles ({:?})",
                started.elapsed()
            ),
            Err(d) => panic!("{d}"),
        }
    }

    /// Replay the recorded inputs into `verilog` (module `top`) and
    /// compare every output in every cycle: the number of cycles, or the
    /// first mismatches with the path of an FST waveform of the Verilog
    /// up to them.
    pub fn compare_verilog(&self, top: &str, verilog: &str) -> Result<usize, String> {
        let t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        assert!(
            !t.frames.is_empty(),
            "lockstep: nothing recorded (was the simulation built with lockstep_sim!?)"
        );
        let mismatches = replay(&t, verilog, top, None, 8);
        let Some(first) = mismatches.first().map(|m| m.cycle) else {
            return Ok(t.frames.len());
        };
        // One file per test (tests run in parallel threads named after them).
        let test = std::thread::current().name().unwrap_or("main").replace("::", "-");
        let wave = wave_dir().join(format!("{top}-{test}-lockstep.fst"));
        let _ = std::fs::create_dir_all(wave.parent().unwrap());
        // The waveform run stops a few cycles after the first mismatch.
        let cut = Trace {
            ports: t.ports.clone(),
            frames: t.frames[..(first + 4).min(t.frames.len())].to_vec(),
        };
        replay(&cut, verilog, top, Some(&wave), 0);
        let lines: Vec<String> = mismatches.iter().map(|m| m.to_string()).collect();
        Err(format!(
            "lockstep: the emitted Verilog of {top} differs from its rust-hdl simulation ({} cycles recorded):\n{}\nwaveform of the Verilog up to cycle {}: {}",
            t.frames.len(),
            lines.join("\n"),
            first + 3,
            wave.display()
        ))
    }
}

/// Where mismatch waveforms go: `lockstep` beside the model cache
/// (`target/lockstep` by default).
fn wave_dir() -> PathBuf {
    default_cache_dir().with_file_name("lockstep")
}

/// One output that differs.
#[derive(Debug)]
struct Mismatch {
    cycle: usize,
    port: String,
    simulation: Vec<u64>,
    verilog: Vec<u64>,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hex = |w: &[u64]| {
            w.iter()
                .rev()
                .map(|x| format!("{x:016x}"))
                .collect::<Vec<_>>()
                .join("_")
        };
        write!(
            f,
            "  cycle {}: `{}` rust-hdl {} Verilog {}",
            self.cycle,
            self.port,
            hex(&self.simulation),
            hex(&self.verilog)
        )
    }
}

fn to_bytes(words: &[u64], width: usize) -> Vec<u8> {
    let mut b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    b.truncate(width.div_ceil(8));
    b
}

fn from_bytes(bytes: &[u8], nwords: usize) -> Vec<u64> {
    let mut w = vec![0u64; nwords];
    for (i, b) in bytes.iter().enumerate() {
        w[i / 8] |= u64::from(*b) << (8 * (i % 8));
    }
    w
}

/// Drive the Verilog with the trace's inputs; return up to `limit`
/// mismatches (all of the first differing cycle's, then the earliest of
/// later cycles), none when `limit` is 0 (waveform run).
fn replay(t: &Trace, verilog: &str, top: &str, wave: Option<&std::path::Path>, limit: usize) -> Vec<Mismatch> {
    // A replay is short: the C++ build is most of its cost.
    let opts = BuildOptions {
        trace: wave.is_some(),
        quick_compile: true,
        ..BuildOptions::default()
    };
    let built =
        build(verilog, top, &opts, &default_cache_dir()).unwrap_or_else(|e| panic!("lockstep: building {top}: {e}"));
    let mut m = Model::load(&built).unwrap_or_else(|e| panic!("lockstep: loading {top}: {e}"));
    if let Some(w) = wave {
        m.trace(w).unwrap();
    }
    let ids: Vec<PortId> = t
        .ports
        .iter()
        .map(|p| {
            let id = m
                .port(&p.name)
                .unwrap_or_else(|e| panic!("lockstep: {top}: rust-hdl port `{}` not in the Verilog: {e}", p.name));
            let vw = m.spec().ports.iter().find(|s| s.name == p.name).map(|s| s.width);
            assert_eq!(vw, Some(p.width), "lockstep: {top}: width of port `{}`", p.name);
            id
        })
        .collect();
    let mut out = Vec::new();
    for (cycle, frame) in t.frames.iter().enumerate() {
        for (p, id) in t.ports.iter().zip(&ids).filter(|(p, _)| p.input) {
            m.set_bytes(*id, &to_bytes(&frame[p.offset..p.offset + p.words()], p.width));
        }
        m.step();
        if limit == 0 {
            continue;
        }
        for (p, id) in t.ports.iter().zip(&ids).filter(|(p, _)| !p.input) {
            let want = &frame[p.offset..p.offset + p.words()];
            let got = from_bytes(&m.get_bytes(*id), p.words());
            if got != want && out.len() < limit {
                out.push(Mismatch {
                    cycle,
                    port: p.name.clone(),
                    simulation: want.to_vec(),
                    verilog: got,
                });
            }
        }
    }
    out
}

/// rust-hdl's `simple_sim!` with a recording clock: `$rec` (a
/// [`Recording`](crate::lockstep::Recording)) captures every port just
/// before each rising edge of `clock`, which is when a Verilator
/// `Model::step` samples its outputs.
#[macro_export]
macro_rules! lockstep_sim {
    ($kind: ty, $clock: ident, $clock_speed_hz: expr, $rec: expr, $fixture: ident, $testbench: expr) => {{
        let mut sim = $crate::lockstep::Simulation::new();
        let half_period = 1_000_000_000_000 / (2 * $clock_speed_hz);
        let rec: $crate::lockstep::Recording = $rec.clone();
        sim.add_clock(half_period, move |x: &mut Box<$kind>| {
            if !x.$clock.val().clk {
                rec.capture(&**x);
            }
            x.$clock.next = !x.$clock.val()
        });
        sim.add_testbench(move |mut $fixture: $crate::lockstep::Sim<$kind>| $testbench);
        sim
    }};
}
