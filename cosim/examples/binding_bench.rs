//! The Verilator binding's per-cycle overhead (issue 5: <= 15% over a
//! plain C++ loop evaluating the same model), on three workloads side by
//! side in one run:
//!
//! * `parser`: the RX header parser (`mrc_rx_parser`) fed frames by the
//!   `tb` AXI-Stream source (the `parser_bench` stimulus);
//! * `core_idle`: the whole `MrcCore` under `cosim::nic::Nic`, nothing to do
//!   (the surroundings still toggle their random ready / valid stalls);
//! * `core_traffic`: the whole core in loopback, configured through
//!   AXI-Lite as `cosim/tests/core_tx.rs` does, moving one WRITE-IMM from
//!   host memory through TX, the fault-injection loopback, RX placement,
//!   the ACK and both completions (the run checks the placed bytes and
//!   the completion, so a broken run cannot pass as a fast one).
//!
//! Each workload is first run once with its inputs recorded
//! (`Model::record_inputs`). Then, `--reps` times, interleaved, on fresh
//! model instances and with the same seeds:
//!
//! * `tb`: the testbench run again (components + binding + model);
//! * `binding`: the recorded inputs stepped through the binding, one FFI
//!   call per cycle, no testbench logic (the binding's own cost);
//! * `native`: the recorded inputs replayed by the C++ loop inside the
//!   model's library (`Model::native_replay`): the yardstick.
//!
//! It prints, per workload, the median rates and the overhead ratios
//! (`time / native time - 1`: median, min and max over the repetitions),
//! and one JSON line per workload on stdout.
//!
//! Usage: cargo run --release -p tb --example binding_bench -- [--reps N]
//! [--frames N] [--idle-cycles N] [--message-kib N] [--only parser|core]

use std::time::Instant;

use contract::layout::{Completion, CqStatus, SqContext, SqDescriptor, SqOpcode};
use contract::regmap;
use cosim::nic::{build_core, Nic, ResponderParams, RetxParams, Stalls, Station};
use hw::flow::emit_block;
use hw::rx_parser::RxParser;
use tb::axis::{AxisPorts, AxisSource};
use tb::rng::Rng;
use tb::stall::Stall;
use verilated::{build, default_cache_dir, BuildOptions, Built, Model};

#[path = "shared/parser_frames.rs"]
mod parser_frames;

/// Seconds of CPU time this thread has used: the timer of every figure,
/// so that time the thread spends descheduled (the machine is shared) is
/// not counted as the binding's.
fn cpu_secs() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-pointer for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// A started CPU-time stopwatch.
struct Stopwatch(f64);

impl Stopwatch {
    fn start() -> Stopwatch {
        Stopwatch(cpu_secs())
    }
    fn secs(&self) -> f64 {
        cpu_secs() - self.0
    }
}

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

/// One testbench-driven run: seconds in the cycle loop (set-up excluded)
/// and the model it leaves.
type TbRun<'a> = dyn Fn(bool) -> BenchResult<(f64, RunEnd)> + 'a;

/// What a testbench run leaves for the comparison: its cycle count, the
/// inputs it recorded (empty unless recording) and its final outputs.
/// (A `Nic` owns its model and writes coverage on drop, so the model
/// itself is not moved out of it.)
struct RunEnd {
    cycles: u64,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
}

impl RunEnd {
    fn of(m: &mut Model) -> RunEnd {
        RunEnd {
            cycles: m.cycles(),
            inputs: m.take_recorded_inputs(),
            outputs: m.output_words().to_vec(),
        }
    }
}

fn parser_run(built: &Built, frames: &[Vec<u8>], record: bool) -> BenchResult<(f64, RunEnd)> {
    let mut m = Model::load(built)?;
    let mut rng = Rng::new(1);
    let mut src = AxisSource::new(AxisPorts::find(&m, "s_axis$")?, Stall::NEVER);
    for f in frames {
        src.push(f.clone());
    }
    let (out_valid, out_drop) = (m.port("out_valid")?, m.port("out_drop")?);
    if record {
        m.record_inputs();
    }
    let n = frames.len() as u64;
    let mut records = 0u64;
    let t = Stopwatch::start();
    while records < n {
        src.drive(&mut m, &mut rng);
        m.step();
        src.observe(&m);
        records += u64::from(m.get_bit(out_valid)) + u64::from(m.get_bit(out_drop));
        if m.cycles() > 100 * n + 1000 {
            return Err(format!("parser stuck: {records} records after {} cycles", m.cycles()).into());
        }
    }
    Ok((t.secs(), RunEnd::of(&mut m)))
}

fn core_idle_run(built: &Built, cycles: u64, record: bool) -> BenchResult<(f64, RunEnd)> {
    let mut nic = Nic::new(built, Stalls::default(), 3)?;
    if record {
        nic.model.record_inputs();
    }
    let t = Stopwatch::start();
    nic.run(cycles);
    Ok((t.secs(), RunEnd::of(&mut nic.model)))
}

const QP: u8 = 5;
const DEST_QP: u32 = 0x77;
const SQ_BASE: u64 = 0x1000_0000;
const SEND_CQ: u64 = 0x8000_0000;
const EVS: u16 = 8;

fn send_context(cq_index: u16, dest_qp: u32, start_psn: u32, sq_base: u64) -> SqContext {
    SqContext {
        sq_base,
        cq_index,
        addr_index: 3,
        dest_qp,
        start_psn,
        pkey: 0xFFFF,
        sq_log2_size: 4,
        log2_mtu: 10,
        ev_count: EVS as u8,
        enable: true,
        send_mpr_units: 2,
        ev_min_active: 1,
    }
}

/// Requester QP `QP` and responder QP `DEST_QP` on one NIC in loopback
/// (the configuration of `cosim/tests/core_tx.rs`'s loopback test, through
/// the same `cosim::nic` row helpers, row for row in the same order).
fn configure_loopback(nic: &mut Nic) {
    nic.set_cc(QP, 4096, 1 << 20, 256);
    let retx = RetxParams::SINGLE_CARD;
    nic.set_retransmit(QP, &retx, 15);
    nic.set_addresses(
        Station::v4(0x0200_0000_0001, 0x0A00_0001),
        3,
        Station::v4(0x0200_0000_0002, 0x0A00_0002),
    );
    nic.set_ev_ring(0x9000_0000, 8);
    nic.set_ev_set(QP, EVS, 0x1000);
    nic.set_cq_ring(0, SEND_CQ, 6);
    nic.start_send_qp(QP, &send_context(0, DEST_QP, 0, SQ_BASE));
    // Responder: ACK policy, memory registration, receive PSN, its CQ.
    nic.set_ack_params(4, 2000);
    nic.set_responder(&ResponderParams {
        qp: DEST_QP as u8,
        start_psn: 0,
        rkey: 0x1234,
        region_va: 0x5000_0000,
        region_len: 0x0200_0000,
        log2_mtu: 10,
    });
    nic.set_cq_ring(1, 0x8100_0000, 6);
    nic.start_send_qp(DEST_QP as u8, &send_context(1, u32::from(QP), 0, 0x1800_0000));
    nic.csr_write(
        regmap::fault_inject::BASE + regmap::fault_inject::CTRL,
        regmap::fault_inject::CTRL_LOOPBACK,
    );
}

fn core_traffic_run(built: &Built, message_kib: u32, record: bool) -> BenchResult<(f64, RunEnd)> {
    let mut nic = Nic::new(built, Stalls::default(), 11)?;
    if record {
        nic.model.record_inputs();
    }
    let wr = SqDescriptor {
        opcode: SqOpcode::WriteImm,
        signaled: true,
        length: message_kib * 1024,
        wr_id: 0x42,
        local_iova: 0x2000_0000,
        remote_va: 0x5000_0000,
        rkey: 0x1234,
        imm: 9,
    };
    nic.dma.mem.fill(SQ_BASE, &wr.encode()?);
    let payload: Vec<u8> = (0..wr.length).map(|k| (k % 251) as u8).collect();
    nic.dma.mem.fill(wr.local_iova, &payload);
    // Every cycle from reset is timed, configuration included (the
    // replays start from reset too); host memory is filled before.
    let t = Stopwatch::start();
    configure_loopback(&mut nic);
    nic.doorbell(QP, 1);
    let done = |nic: &Nic| Completion::decode(&nic.dma.mem.read_vec(SEND_CQ, 32)).is_ok_and(|c| c.phase);
    let mut cycles = 0u64;
    while !done(&nic) && cycles < 400_000 {
        nic.step();
        cycles += 1;
    }
    let secs = t.secs();
    let c = Completion::decode(&nic.dma.mem.read_vec(SEND_CQ, 32))?;
    if !c.phase || c.wr_id != 0x42 || c.status != CqStatus::Success {
        return Err(format!("core_traffic: no successful completion after {cycles} cycles: {c:?}").into());
    }
    if nic.dma.mem.read_vec(wr.remote_va, wr.length as usize) != payload {
        return Err("core_traffic: the message was not placed intact".into());
    }
    if !nic.dma.errors.is_empty() {
        return Err(format!("core_traffic: DMA protocol errors {:?}", nic.dma.errors).into());
    }
    Ok((secs, RunEnd::of(&mut nic.model)))
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let k = s.len() / 2;
    if s.len() % 2 == 1 {
        s[k]
    } else {
        (s[k - 1] + s[k]) / 2.0
    }
}

fn spread(v: &[f64]) -> (f64, f64) {
    (
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// Record once, then time `reps` interleaved repetitions of the three
/// ways of running the same cycles; print the summary and a JSON line.
fn bench(name: &str, built: &Built, reps: usize, tb_run: &TbRun) -> BenchResult<()> {
    let (_, recorded) = tb_run(true)?;
    let RunEnd {
        cycles,
        inputs: trace,
        outputs: want_outputs,
    } = recorded;
    let (mut tb_s, mut bind_s, mut native_s) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let (secs, end) = tb_run(false)?;
        if end.cycles != cycles {
            return Err(format!(
                "{name}: the testbench run took {} cycles, the recorded one {cycles}",
                end.cycles
            )
            .into());
        }
        tb_s.push(secs);

        let mut m = Model::load(built)?;
        let w = m.input_words().len();
        let t = Stopwatch::start();
        for inputs in trace.chunks_exact(w) {
            m.set_input_words(inputs);
            m.step();
        }
        bind_s.push(t.secs());
        // The replay must be the same activity: the same outputs at the end.
        if m.output_words() != want_outputs {
            return Err(format!("{name}: the binding replay ended with other outputs than the testbench run").into());
        }

        let mut m = Model::load(built)?;
        let t = Stopwatch::start();
        m.native_replay(&trace);
        native_s.push(t.secs());
    }
    let ratio = |xs: &[f64]| -> Vec<f64> { xs.iter().zip(&native_s).map(|(x, n)| x / n - 1.0).collect() };
    let (tb_over, bind_over) = (ratio(&tb_s), ratio(&bind_s));
    // The fastest repetition of each is the one the machine disturbed
    // least: the ratio of the minima is the second estimate.
    let fastest = |xs: &[f64]| xs.iter().copied().fold(f64::INFINITY, f64::min);
    let (tb_best, bind_best) = (
        fastest(&tb_s) / fastest(&native_s) - 1.0,
        fastest(&bind_s) / fastest(&native_s) - 1.0,
    );
    let rate = |xs: &[f64]| cycles as f64 / median(xs);
    let (tb_lo, tb_hi) = spread(&tb_over);
    let (b_lo, b_hi) = spread(&bind_over);
    let pct = |x: f64| 100.0 * x;
    eprintln!(
        "{name:>12}: {cycles} cycles x {reps}; cycles/s (median) tb {:.0}, binding {:.0}, native {:.0}; overhead (median [min..max], of minima) tb {:.1}% [{:.1}..{:.1}] {:.1}%, binding {:.1}% [{:.1}..{:.1}] {:.1}%",
        rate(&tb_s),
        rate(&bind_s),
        rate(&native_s),
        pct(median(&tb_over)),
        pct(tb_lo),
        pct(tb_hi),
        pct(tb_best),
        pct(median(&bind_over)),
        pct(b_lo),
        pct(b_hi),
        pct(bind_best)
    );
    println!(
        "{}",
        serde_json::json!({
            "workload": name,
            "verilator": verilated::verilator_release().or_else(|_| verilated::verilator_version())?,
            "cycles": cycles,
            "reps": reps,
            "timer": "thread CPU time",
            "tb_cycles_per_s": rate(&tb_s),
            "binding_cycles_per_s": rate(&bind_s),
            "native_cycles_per_s": rate(&native_s),
            "tb_overhead": { "median": median(&tb_over), "min": tb_lo, "max": tb_hi, "of_minima": tb_best },
            "binding_overhead": { "median": median(&bind_over), "min": b_lo, "max": b_hi, "of_minima": bind_best },
        })
    );
    Ok(())
}

fn main() -> BenchResult<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let reps: usize = arg("--reps").map_or(Ok(5), |s| s.parse())?;
    let frames_n: usize = arg("--frames").map_or(Ok(20_000), |s| s.parse())?;
    let idle_cycles: u64 = arg("--idle-cycles").map_or(Ok(20_000), |s| s.parse())?;
    let message_kib: u32 = arg("--message-kib").map_or(Ok(16), |s| s.parse())?;
    let only = arg("--only");
    if reps == 0 {
        return Err("--reps must be at least 1".into());
    }
    let release = verilated::verilator_release().unwrap_or_else(|e| format!("unknown ({e})"));
    eprintln!(
        "verilator: {} (release {release})",
        verilated::verilator_exe().display()
    );
    if only.as_deref() != Some("core") {
        let mut rng = Rng::new(1);
        let frames: Vec<Vec<u8>> = (0..frames_n).map(|i| parser_frames::frame(i, &mut rng)).collect();
        let rtl = emit_block("mrc_rx_parser", &mut RxParser::default());
        let t = Instant::now();
        let built = build(
            &rtl.verilog,
            "mrc_rx_parser",
            &BuildOptions::default(),
            &default_cache_dir(),
        )?;
        eprintln!("parser model ready in {:.1} s", t.elapsed().as_secs_f64());
        bench("parser", &built, reps, &|record| parser_run(&built, &frames, record))?;
    }
    if only.as_deref() != Some("parser") {
        let t = Instant::now();
        let built = build_core(&BuildOptions::default())?;
        eprintln!("core model ready in {:.1} s", t.elapsed().as_secs_f64());
        bench("core_idle", &built, reps, &|record| {
            core_idle_run(&built, idle_cycles, record)
        })?;
        bench("core_traffic", &built, reps, &|record| {
            core_traffic_run(&built, message_kib, record)
        })?;
    }
    Ok(())
}
