//! Binding benchmark on the RX header parser (`mrc_rx_parser`): streams
//! the same frames through (1) our Verilator binding with the `tb` AXI-Stream
//! source, one FFI call per cycle, and (2) the library's plain C++ loop
//! (clock and eval only) for the same number of cycles, and prints both
//! rates and their ratio. With `--dump DIR` it also writes the Verilog
//! and the frames (`frames.hex`, one frame per line) for the cocotb run
//! of `bench/cocotb/` (`scripts/bench-cocotb.sh` runs both side by side).
//!
//! Usage: cargo run --release -p tb --example parser_bench -- [--frames N] [--dump DIR]

use std::time::Instant;

use hw::flow::emit_block;
use hw::rx_parser::RxParser;
use tb::axis::{AxisPorts, AxisSource};
use tb::rng::Rng;
use tb::stall::Stall;
use verilated::{build, default_cache_dir, BuildOptions, Model};

#[path = "shared/parser_frames.rs"]
mod parser_frames;
use parser_frames::frame;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let n: usize = arg("--frames").map_or(Ok(5000), |s| s.parse())?;
    let mut rng = Rng::new(1);
    let frames: Vec<Vec<u8>> = (0..n).map(|i| frame(i, &mut rng)).collect();
    let rtl = emit_block("mrc_rx_parser", &mut RxParser::default());
    if let Some(dir) = arg("--dump") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("mrc_rx_parser.v"), &rtl.verilog)?;
        let hex: String = frames
            .iter()
            .map(|f| f.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n")
            .collect();
        std::fs::write(dir.join("frames.hex"), hex)?;
    }
    let t = Instant::now();
    let built = build(
        &rtl.verilog,
        "mrc_rx_parser",
        &BuildOptions::default(),
        &default_cache_dir(),
    )?;
    eprintln!(
        "model ready in {:.1} s ({})",
        t.elapsed().as_secs_f64(),
        built.library.display()
    );
    let mut m = Model::load(&built)?;
    let mut src = AxisSource::new(AxisPorts::find(&m, "s_axis$")?, Stall::NEVER);
    for f in &frames {
        src.push(f.clone());
    }
    let (out_valid, out_drop, out_psn) = (m.port("out_valid")?, m.port("out_drop")?, m.port("out_psn")?);
    let (mut records, mut drops, mut psn_sum) = (0u64, 0u64, 0u64);
    // The inputs of every cycle are recorded (outside the timed loop's
    // work: a copy into a preallocated vector) for the C++ replay.
    let mut trace: Vec<u32> = Vec::with_capacity(m.input_words().len() * 8 * n);
    let t = Instant::now();
    while records < n as u64 {
        src.drive(&mut m, &mut rng);
        trace.extend_from_slice(m.input_words());
        m.step();
        src.observe(&m);
        if m.get_bit(out_valid) {
            records += 1;
            psn_sum += m.get(out_psn);
        }
        if m.get_bit(out_drop) {
            drops += 1;
            records += 1;
        }
        if m.cycles() > 100 * n as u64 + 1000 {
            return Err(format!("stuck: {records} records after {} cycles", m.cycles()).into());
        }
    }
    let bind_s = t.elapsed().as_secs_f64();
    let cycles = m.cycles();
    let mut native = Model::load(&built)?;
    let t = Instant::now();
    native.native_replay(&trace);
    let native_s = t.elapsed().as_secs_f64();
    // The same trace through the binding, with no testbench logic: the
    // FFI and port-copy cost alone.
    let mut rep = Model::load(&built)?;
    let w = rep.input_words().len();
    let t = Instant::now();
    for cyc in trace.chunks_exact(w) {
        rep.set_input_words(cyc);
        rep.step();
    }
    let rep_s = t.elapsed().as_secs_f64();
    eprintln!(
        "binding replay (no testbench logic): {:.0} cycles/s",
        cycles as f64 / rep_s
    );
    let mut idle = Model::load(&built)?;
    let t = Instant::now();
    idle.native_cycles(cycles);
    let idle_s = t.elapsed().as_secs_f64();
    let beats = src.beats_sent;
    println!(
        "{{\"design\":\"mrc_rx_parser\",\"frames\":{n},\"beats\":{beats},\"cycles\":{cycles},\"records\":{records},\"drops\":{drops},\"psn_sum\":{psn_sum},\"binding_s\":{bind_s:.4},\"binding_cycles_per_s\":{:.0},\"native_s\":{native_s:.4},\"native_cycles_per_s\":{:.0},\"binding_overhead\":{:.3},\"clock_only_cycles_per_s\":{:.0}}}",
        cycles as f64 / bind_s,
        cycles as f64 / native_s,
        bind_s / native_s - 1.0,
        cycles as f64 / idle_s
    );
    Ok(())
}
