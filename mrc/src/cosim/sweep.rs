//! `mrc cosim --scenario sweep[/FILTER]`: the grid of issue 15, MTU x
//! message size x messages in flight x QP pairs x fault. Every cell is an
//! ordinary co-simulated run (two verilated NICs over the fabric, the
//! scoreboard) compared with the golden model and judged by the named
//! scenarios' rule (`cosim::verdict::judge_qps`) with the allowances of
//! the named scenario of its fault. The output names every failing cell,
//! why it failed and the command that runs it alone, then what the
//! failing cells have in common (the classification).

use std::collections::BTreeSet;
use std::time::Instant;

use cosim::system::{compare_with_golden_qps, System, SEND_WINDOW_PSNS};
use cosim::verdict::{judge_qps, Expectations, Figures, QpFigures, Verdict};
use proto::loopback::MessageSpec;
use proto::time::Duration;

use super::{
    build_core, config, no_faults, print_trace_paths, rto_above_the_queue, trace_paths, CosimArgs, CosimError,
    DEAD_EV_MARKED_BY_EVERY_QP, MARKS_NET_OF_READMISSIONS, RESENDS_SPLIT_BY_SERVICE_ORDER, SCENARIO_EV,
};

/// The scenario name of the family: `sweep` runs the grid, `sweep/TOKENS`
/// the cells that have every token (`sweep/m4096/window`), or the one
/// cell that the five tokens name, in the grid or not
/// (`sweep/m2048/mtu+1/d8/q2/loss`).
pub const FAMILY: &str = "sweep";

/// The message sizes of a cell, relative to its MTU: the packet
/// boundaries and the 256-PSN send window (`SEND_WINDOW_PSNS`, the MPR
/// window of 2 x 128).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Size {
    /// One byte: the smallest message, one packet.
    OneByte,
    /// MTU - 1: one packet, one byte short of full.
    MtuMinusOne,
    /// MTU: one full packet.
    Mtu,
    /// MTU + 1: a full packet and a one-byte last packet.
    MtuPlusOne,
    /// The depth's messages fill the send window exactly: 256 / depth
    /// packets each (at depth 1, one message of 256 packets).
    Window,
    /// One message beyond the whole window: 256 full packets and one byte.
    Beyond,
}

const SIZES: [Size; 6] = [
    Size::OneByte,
    Size::MtuMinusOne,
    Size::Mtu,
    Size::MtuPlusOne,
    Size::Window,
    Size::Beyond,
];

impl Size {
    fn token(self) -> &'static str {
        match self {
            Size::OneByte => "1B",
            Size::MtuMinusOne => "mtu-1",
            Size::Mtu => "mtu",
            Size::MtuPlusOne => "mtu+1",
            Size::Window => "window",
            Size::Beyond => "beyond",
        }
    }

    /// Bytes of each message at this MTU and depth.
    fn bytes(self, mtu: u32, depth: u32) -> u32 {
        let window_packets = SEND_WINDOW_PSNS as u32;
        match self {
            Size::OneByte => 1,
            Size::MtuMinusOne => mtu - 1,
            Size::Mtu => mtu,
            Size::MtuPlusOne => mtu + 1,
            Size::Window => (window_packets / depth).max(1) * mtu,
            Size::Beyond => window_packets * mtu + 1,
        }
    }
}

/// A cell's fault, the shape of the named scenario it borrows its
/// allowances from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// No loss, no fault (`lossless`).
    None,
    /// 1% keyed loss each way (`loss-1`).
    Loss,
    /// EV 3 drops everything from [`FAULT_AT_US`] on (`ev-blackholed`;
    /// with several QPs, `16-qps`'s split among them).
    Hole,
    /// EV 3 down for half of every [`FLAP_PERIOD_US`] from [`FAULT_AT_US`]
    /// on (`ev-flapping`).
    Flap,
}

const FAULTS: [Fault; 4] = [Fault::None, Fault::Loss, Fault::Hole, Fault::Flap];

impl Fault {
    fn token(self) -> &'static str {
        match self {
            Fault::None => "none",
            Fault::Loss => "loss",
            Fault::Hole => "hole",
            Fault::Flap => "flap",
        }
    }

    /// What the named scenario of the same fault allows, and no more.
    fn expectations(self, qps: u16) -> Expectations {
        match (self, qps > 1) {
            (Fault::None | Fault::Flap, _) | (Fault::Hole, false) => PLAIN,
            (Fault::Loss, _) => LOSS,
            (Fault::Hole, true) => HOLE_QPS,
        }
    }
}

const PLAIN: Expectations = Expectations {
    allowances: &[],
    qp_error: false,
};
const LOSS: Expectations = Expectations {
    allowances: &[MARKS_NET_OF_READMISSIONS],
    qp_error: false,
};
const HOLE_QPS: Expectations = Expectations {
    allowances: &[RESENDS_SPLIT_BY_SERVICE_ORDER, DEAD_EV_MARKED_BY_EVERY_QP],
    qp_error: false,
};

/// The cells' keyed loss rate each way (`loss-1`'s).
const LOSS_RATE: f64 = 0.01;
/// When a cell's EV fails or starts flapping, us: early, so that even a
/// cell of a few small messages is in flight (a message's round trip is
/// about 3 us), and a window-full cell has its whole window out.
const FAULT_AT_US: u64 = 5;
/// A flapping EV's period, us; it is down for the first half of each.
const FLAP_PERIOD_US: u64 = 10;
/// Each cell's least RTO exponent (the default's), raised above the queue
/// its windows build at the link (`rto_above_the_queue`, as
/// `mpr-window-failure`): an RTO shorter than the queue is another
/// scenario (`16-qps`'s history).
const SWEEP_TIMEOUT_EXP: u8 = 4;
/// Messages each QP pair sends, at most `depth + 1` (the depth in flight
/// and one waiting for a record), at least 2, and no more than this many
/// PSNs' worth: two whole windows, so a big-message cell stays short.
const MAX_PSNS_PER_QP: u64 = 2 * SEND_WINDOW_PSNS;
/// The least messages per QP pair: one to follow the first.
const MIN_MESSAGES_PER_QP: u64 = 2;
/// Every third message is a WRITE-with-immediate (`--imm-pct`'s
/// default), so both completion paths are in every cell of 3 or more.
const IMM_EVERY: usize = 3;
/// A cell's cycle limit: this many cycles, plus [`CYCLES_PER_IDEAL`] times
/// the cycles its bytes take at the line rate. A stalled cell costs that
/// much and no more; a cell that completes takes well under it (the RTOs
/// of a lossy cell included).
const BASE_CYCLE_LIMIT: u64 = 400_000;
const CYCLES_PER_IDEAL: u64 = 20;
/// The counter of frames a NIC's RX ingress discarded (the link's drop).
const RX_DISCARDS: &str = "rx_discards";
/// Of `rx_discards`, those refused for want of a join credit of the RX
/// path (the rest lacked RX buffer room).
const RX_DISCARDS_JOIN: &str = "rx_discards_join";
/// One core clock cycle, ps (99/32 ns).
const CYCLE_PS: f64 = 3093.75;

/// One cell of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Cell {
    pub mtu: u32,
    pub size: Size,
    /// Messages each QP keeps in flight (`--in-flight`).
    pub depth: u32,
    pub qps: u16,
    pub fault: Fault,
}

impl Cell {
    /// The cell's name: its five tokens, `m4096/mtu+1/d16/q4/hole`.
    pub fn name(&self) -> String {
        format!(
            "m{}/{}/d{}/q{}/{}",
            self.mtu,
            self.size.token(),
            self.depth,
            self.qps,
            self.fault.token()
        )
    }

    fn tokens(&self) -> [String; 5] {
        [
            format!("m{}", self.mtu),
            self.size.token().to_string(),
            format!("d{}", self.depth),
            format!("q{}", self.qps),
            self.fault.token().to_string(),
        ]
    }

    fn message_bytes(&self) -> u32 {
        self.size.bytes(self.mtu, self.depth)
    }

    /// Messages of each QP pair: `depth + 1`, at least
    /// [`MIN_MESSAGES_PER_QP`], at most [`MAX_PSNS_PER_QP`] PSNs' worth.
    fn messages_per_qp(&self) -> u64 {
        let psns = u64::from(self.message_bytes()).div_ceil(u64::from(self.mtu)).max(1);
        (u64::from(self.depth) + 1)
            .min(MAX_PSNS_PER_QP / psns)
            .max(MIN_MESSAGES_PER_QP)
    }

    fn messages(&self) -> Vec<MessageSpec> {
        let n = self.messages_per_qp() as usize * usize::from(self.qps);
        let len = self.message_bytes();
        (0..n)
            .map(|i| MessageSpec {
                len,
                // A fixed immediate per message: the scoreboard checks it
                // arrives, in order.
                imm: (i % IMM_EVERY == IMM_EVERY - 1).then_some(0x5EE9_0000 | i as u32),
            })
            .collect()
    }

    /// The cell's options: the user's (wire, seed, EVs, delays, rate),
    /// with the cell's MTU, depth, QPs and fault.
    fn args(&self, user: &CosimArgs) -> CosimArgs {
        let mut a = user.clone();
        no_faults(&mut a);
        a.mtu = self.mtu;
        a.in_flight = self.depth;
        a.qps = self.qps;
        a.messages = (self.messages_per_qp() as usize * usize::from(self.qps)).max(1);
        // The messages are the cell's (`messages`), not drawn: keep the
        // drawn ones small so that `config` refuses nothing of theirs.
        a.max_size = 1;
        let at = proto::Instant::from_us(FAULT_AT_US);
        match self.fault {
            Fault::None => {}
            Fault::Loss => a.loss = LOSS_RATE,
            Fault::Hole => {
                a.no_failure = false;
                a.fail_ev = vec![(SCENARIO_EV, at)];
            }
            Fault::Flap => {
                a.flap_ev = vec![(
                    SCENARIO_EV,
                    at,
                    Duration::from_us(FLAP_PERIOD_US),
                    Duration::from_us(FLAP_PERIOD_US / 2),
                )]
            }
        }
        a
    }

    /// The cycle limit: [`BASE_CYCLE_LIMIT`] + [`CYCLES_PER_IDEAL`] x the
    /// cycles the cell's bytes take at the line rate.
    fn cycle_limit(&self, rate_gbps: f64) -> u64 {
        let bytes = u64::from(self.message_bytes()) * self.messages_per_qp() * u64::from(self.qps);
        let ideal_ps = bytes as f64 * 8.0 / rate_gbps * 1000.0;
        BASE_CYCLE_LIMIT + CYCLES_PER_IDEAL * (ideal_ps / CYCLE_PS) as u64
    }
}

/// A slice of the grid: every combination of its values.
struct Slice {
    mtus: &'static [u32],
    sizes: &'static [Size],
    depths: &'static [u32],
    qps: &'static [u16],
    faults: &'static [Fault],
}

/// Every MTU the RTL's send context takes (`log2_mtu` 8 to 13, the
/// contract's `SqContext`) and `mrc cosim --mtu` accepts.
const MTUS: [u32; 6] = [256, 512, 1024, 2048, 4096, 8192];

/// The grid: the union of these slices.
///
/// * boundaries: every MTU x every size at depth 1 and 16, one QP, no
///   fault (72 cells): the packet boundaries, the window full, one
///   message beyond it;
/// * depths: 4 and 64 (the requester's retransmit records) for sizes
///   around one packet and the window (24 cells);
/// * QPs: 4 and 16 pairs at the smallest, the middle and the largest MTUs
///   (one-byte and two-packet messages), and every QP's window full at
///   256 B and 1 KiB (32 cells);
/// * faults: loss, a blackholed EV and a flapping one across every MTU,
///   at the sizes that matter to a resend (a one-packet message, a
///   two-packet one, the window full), depth 16, one and four QPs (108
///   cells).
const GRID: &[Slice] = &[
    Slice {
        mtus: &MTUS,
        sizes: &SIZES,
        depths: &[1, 16],
        qps: &[1],
        faults: &[Fault::None],
    },
    Slice {
        mtus: &[256, 1024, 4096, 8192],
        sizes: &[Size::OneByte, Size::MtuPlusOne, Size::Window],
        depths: &[4, 64],
        qps: &[1],
        faults: &[Fault::None],
    },
    Slice {
        mtus: &[256, 1024, 8192],
        sizes: &[Size::OneByte, Size::MtuPlusOne],
        depths: &[1, 16],
        qps: &[4, 16],
        faults: &[Fault::None],
    },
    // Every QP's window full at the small MTUs only: at 8 KiB, 16 QPs'
    // two windows are 64 MiB, minutes of simulation for one cell.
    Slice {
        mtus: &[256, 1024],
        sizes: &[Size::Window],
        depths: &[1, 16],
        qps: &[4, 16],
        faults: &[Fault::None],
    },
    Slice {
        mtus: &MTUS,
        sizes: &[Size::Mtu, Size::MtuPlusOne, Size::Window],
        depths: &[16],
        qps: &[1, 4],
        faults: &[Fault::Loss, Fault::Hole, Fault::Flap],
    },
];

/// Every cell of the grid, once, in order.
pub fn grid() -> Vec<Cell> {
    let mut cells = BTreeSet::new();
    for s in GRID {
        for &mtu in s.mtus {
            for &size in s.sizes {
                for &depth in s.depths {
                    for &qps in s.qps {
                        for &fault in s.faults {
                            cells.insert(Cell {
                                mtu,
                                size,
                                depth,
                                qps,
                                fault,
                            });
                        }
                    }
                }
            }
        }
    }
    cells.into_iter().collect()
}

/// Whether `--scenario` names the sweep: `sweep` or `sweep/...`.
pub fn is_sweep(which: &str) -> bool {
    which == FAMILY || which.starts_with(&format!("{FAMILY}/"))
}

/// The cells `--scenario sweep[/TOKENS]` selects: the grid, the grid's
/// cells with every token, or the one cell five tokens name.
pub fn select(which: &str) -> Result<Vec<Cell>, CosimError> {
    let filter = which.strip_prefix(FAMILY).unwrap_or("").trim_start_matches('/');
    let tokens: Vec<&str> = filter.split('/').filter(|t| !t.is_empty()).collect();
    let usage = |why: String| CosimError::Usage(format!("--scenario {which}: {why}"));
    if let Some(cell) = parse_cell(&tokens).map_err(usage)? {
        return Ok(vec![cell]);
    }
    let cells: Vec<Cell> = grid()
        .into_iter()
        .filter(|c| {
            let own = c.tokens();
            tokens.iter().all(|t| own.iter().any(|o| o == t))
        })
        .collect();
    if cells.is_empty() {
        return Err(usage(format!(
            "no cell of the grid has all of {} (`mrc cosim --scenario list` shows the grid)",
            tokens.join(", ")
        )));
    }
    Ok(cells)
}

/// Five tokens, one of each axis, name a cell; fewer filter the grid.
/// A token of no axis is refused.
fn parse_cell(tokens: &[&str]) -> Result<Option<Cell>, String> {
    let (mut mtu, mut size, mut depth, mut qps, mut fault) = (None, None, None, None, None);
    for t in tokens {
        if let Some(s) = SIZES.iter().find(|s| s.token() == *t) {
            size = Some(*s);
        } else if let Some(f) = FAULTS.iter().find(|f| f.token() == *t) {
            fault = Some(*f);
        } else if let Some(v) = t.strip_prefix('m').and_then(|v| v.parse::<u32>().ok()) {
            if !MTUS.contains(&v) {
                return Err(format!("MTU {v}: the RTL takes 256, 512, 1024, 2048, 4096 or 8192"));
            }
            mtu = Some(v);
        } else if let Some(v) = t.strip_prefix('d').and_then(|v| v.parse::<u32>().ok()) {
            if v == 0 || v as usize > hw::requester::RTX_SLOTS {
                return Err(format!("depth {v}: 1 to {}", hw::requester::RTX_SLOTS));
            }
            depth = Some(v);
        } else if let Some(v) = t.strip_prefix('q').and_then(|v| v.parse::<u16>().ok()) {
            if v == 0 || v > cosim::system::MAX_QPS {
                return Err(format!("{v} QPs: 1 to {}", cosim::system::MAX_QPS));
            }
            qps = Some(v);
        } else {
            return Err(format!(
                "`{t}` is no token of a cell (m<MTU>, 1B|mtu-1|mtu|mtu+1|window|beyond, d<depth>, q<QPs>, none|loss|hole|flap)"
            ));
        }
    }
    Ok(match (mtu, size, depth, qps, fault) {
        (Some(mtu), Some(size), Some(depth), Some(qps), Some(fault)) => Some(Cell {
            mtu,
            size,
            depth,
            qps,
            fault,
        }),
        _ => None,
    })
}

/// What went wrong in a failing cell, worst first: the class a failure
/// is grouped under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Failure {
    /// The hardware reached the cycle limit: a stall.
    Stall,
    /// The scoreboard failed otherwise (data, order, once, QP error).
    Scoreboard,
    /// The model delivered or completed other messages.
    Delivery,
    /// Resends or EVs marked beyond the rule and the allowances, and a
    /// NIC discarded frames the fabric delivered at its RX ingress
    /// (`rx_discards`): losses the model's receiver, which takes every
    /// frame, does not have.
    Discards,
    /// Only resends or EVs marked beyond the rule and the allowances,
    /// the hardware's above the model's.
    MoreThanModel,
    /// Only resends or EVs marked beyond the rule and the allowances,
    /// the hardware's below the model's.
    FewerThanModel,
}

/// One cell's outcome (`--json`: one record per cell).
#[derive(serde::Serialize)]
pub struct CellOutcome {
    pub cell: String,
    #[serde(flatten)]
    pub axes: Cell,
    pub message_bytes: u32,
    pub messages: usize,
    pub ok: bool,
    /// The worst failure, when not OK.
    pub failure: Option<Failure>,
    /// Why, in words: the failed checks and the scoreboard's first
    /// failures.
    pub why: Vec<String>,
    /// The command that runs this cell alone.
    pub command: String,
    pub hw_completed: usize,
    pub golden_completed: Option<usize>,
    /// Frames each NIC's RX ingress discarded (`rx_discards`): A's are
    /// ACKs, B's data.
    pub rx_discards_a: u64,
    pub rx_discards_b: u64,
    pub cycles: u64,
    pub cycle_limit: u64,
    pub wall_seconds: f64,
    pub verdict: Verdict,
}

/// One axis of a class: each value its failing cells have.
#[derive(Debug, PartialEq, serde::Serialize)]
pub struct AxisFailures {
    pub axis: &'static str,
    pub values: Vec<ValueFailures>,
}

/// How many cells with one value of an axis failed (in the class), of
/// how many run.
#[derive(Debug, PartialEq, serde::Serialize)]
pub struct ValueFailures {
    pub value: String,
    pub failed: usize,
    pub run: usize,
}

/// What the failing cells have in common: per axis, the values of the
/// failing cells and how many of the cells run with each failed.
#[derive(serde::Serialize)]
pub struct Classification {
    pub failure: Failure,
    pub cells: usize,
    /// Per axis, the values with a failure only.
    pub axes: Vec<AxisFailures>,
    /// The axes whose failing cells share one value: "what they have in
    /// common".
    pub common: Vec<String>,
    pub cell_names: Vec<String>,
}

#[derive(serde::Serialize)]
struct SweepReport {
    sweep: String,
    wire: cosim::system::Wire,
    seed: u64,
    cells: usize,
    failed: usize,
    wall_seconds: f64,
    classes: Vec<Classification>,
    outcomes: Vec<CellOutcome>,
}

/// The command that runs `cell` alone with the same wire and seed.
fn command(cell: &Cell, args: &CosimArgs) -> String {
    format!(
        "mrc cosim --scenario {FAMILY}/{} --wire {} --seed {}",
        cell.name(),
        cosim::system::Wire::from(args.wire).name(),
        args.seed
    )
}

/// Run one cell against the golden model and judge it.
fn run_cell(built: &verilated::Built, cell: &Cell, user: &CosimArgs) -> Result<CellOutcome, CosimError> {
    let start = Instant::now();
    let a = cell.args(user);
    let mut cfg = config(&a)?;
    cfg.messages = cell.messages();
    cfg.cycle_limit = cell.cycle_limit(a.rate_gbps);
    rto_above_the_queue(&mut cfg, SWEEP_TIMEOUT_EXP);
    let golden = if a.no_golden { None } else { Some(cfg.run_golden()?) };
    let messages = cfg.messages.len();
    let cycle_limit = cfg.cycle_limit;
    let mut sys = System::new(built, cfg)?;
    let report = sys.run(&mut |_| {});
    let cmp = golden.as_ref().map(|g| compare_with_golden_qps(&report, g));
    let fig = Figures::of(a.evs, &report, cmp.as_ref());
    let verdict = judge_qps(&fig, &QpFigures::all(cmp.as_ref()), &cell.fault.expectations(cell.qps));
    let counter = |c: &std::collections::BTreeMap<String, u64>, name: &str| c.get(name).copied().unwrap_or(0);
    let (discards_a, discards_b) = (
        counter(&report.counters_a, RX_DISCARDS),
        counter(&report.counters_b, RX_DISCARDS),
    );
    let (join_a, join_b) = (
        counter(&report.counters_a, RX_DISCARDS_JOIN),
        counter(&report.counters_b, RX_DISCARDS_JOIN),
    );
    let failure = (!verdict.ok).then(|| {
        if report.timed_out {
            Failure::Stall
        } else if !report.scoreboard.ok() {
            Failure::Scoreboard
        } else if fig.same_delivery == Some(false) {
            Failure::Delivery
        } else if discards_a + discards_b > 0 {
            Failure::Discards
        } else if verdict
            .checks
            .iter()
            .any(|c| !c.ok && c.golden.is_some_and(|g| c.hw > g))
        {
            Failure::MoreThanModel
        } else {
            Failure::FewerThanModel
        }
    });
    let mut why = verdict.failures();
    why.extend(
        report
            .scoreboard
            .failures
            .iter()
            .take(3)
            .map(|f| format!("scoreboard: {f}")),
    );
    if !verdict.ok && discards_a + discards_b > 0 {
        why.push(format!(
            "RX ingress discards (rx_discards): A {discards_a} (ACKs; {join_a} for want of a join credit), \
             B {discards_b} (data; {join_b} for want of a join credit); the model discards none"
        ));
    }
    Ok(CellOutcome {
        cell: cell.name(),
        axes: *cell,
        message_bytes: cell.message_bytes(),
        messages,
        ok: verdict.ok,
        failure,
        why,
        command: command(cell, user),
        hw_completed: report.messages_completed,
        golden_completed: cmp.as_ref().map(|g| g.golden_messages_completed),
        rx_discards_a: discards_a,
        rx_discards_b: discards_b,
        cycles: report.cycles_simulated,
        cycle_limit,
        wall_seconds: start.elapsed().as_secs_f64(),
        verdict,
    })
}

/// Group the failing cells by their failure, and per group say which
/// values of each axis they have and which they share.
fn classify(outcomes: &[CellOutcome]) -> Vec<Classification> {
    let kinds: BTreeSet<Failure> = outcomes.iter().filter_map(|o| o.failure).collect();
    kinds
        .into_iter()
        .map(|kind| {
            let failed: Vec<&CellOutcome> = outcomes.iter().filter(|o| o.failure == Some(kind)).collect();
            let mut axes = Vec::new();
            let mut common = Vec::new();
            for (axis, value_of) in AXES {
                // In the grid's order (numeric MTUs, sizes small to big),
                // as the values first appear among the cells run.
                let ran = in_order(outcomes.iter().map(|o| value_of(&o.axes)));
                let failing: BTreeSet<String> = failed.iter().map(|o| value_of(&o.axes)).collect();
                let values: Vec<String> = ran.iter().filter(|v| failing.contains(*v)).cloned().collect();
                let per_value: Vec<ValueFailures> = values
                    .iter()
                    .map(|v| ValueFailures {
                        value: v.clone(),
                        failed: failed.iter().filter(|o| value_of(&o.axes) == *v).count(),
                        run: outcomes.iter().filter(|o| value_of(&o.axes) == *v).count(),
                    })
                    .collect();
                if values.len() == 1 && ran.len() > 1 {
                    common.push(format!("{axis} {}", per_value[0].value));
                }
                axes.push(AxisFailures {
                    axis,
                    values: per_value,
                });
            }
            Classification {
                failure: kind,
                cells: failed.len(),
                axes,
                common,
                cell_names: failed.iter().map(|o| o.cell.clone()).collect(),
            }
        })
        .collect()
}

/// The distinct values, in the order they first come.
fn in_order(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = Vec::new();
    for v in values {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen
}

type AxisValue = fn(&Cell) -> String;

/// The axes of a cell, by name, and the value of each.
const AXES: [(&str, AxisValue); 5] = [
    ("MTU", |c| c.mtu.to_string()),
    ("size", |c| c.size.token().to_string()),
    ("depth", |c| c.depth.to_string()),
    ("QPs", |c| c.qps.to_string()),
    ("fault", |c| c.fault.token().to_string()),
];

/// `--scenario list`'s lines for the family.
pub fn list() {
    let cells = grid();
    println!(
        "{:<14} the grid of {} cells: MTU x message size x messages in flight x QP pairs x fault \
         (docs/cosim.md, \"The sweep\")",
        FAMILY,
        cells.len()
    );
    println!(
        "{:<14}   sizes: 1B, mtu-1, mtu, mtu+1, window (the depth's messages fill the 256-PSN \
         window), beyond (256 packets + 1 byte)",
        ""
    );
    println!(
        "{:<14}   faults: none, loss ({}% each way), hole (EV {SCENARIO_EV} dead from {FAULT_AT_US} us), \
         flap (EV {SCENARIO_EV} down {} of every {FLAP_PERIOD_US} us from {FAULT_AT_US} us); \
         the named scenario's allowances",
        "",
        LOSS_RATE * 100.0,
        FLAP_PERIOD_US / 2
    );
    println!(
        "{:<14}   sweep/TOKENS runs the cells with every token (sweep/m4096/window); five tokens \
         name one cell (sweep/m2048/mtu+1/d8/q2/loss)",
        ""
    );
}

/// Run the selected cells; returns whether every one is OK.
pub fn run(args: &CosimArgs, which: &str) -> Result<bool, CosimError> {
    let cells = select(which)?;
    // One trace per run: of one cell (its five tokens), as of one scenario.
    let traced = args.trace.is_some();
    if traced && cells.len() != 1 {
        return Err(CosimError::Usage(format!(
            "--trace traces one cell, and --scenario {which} names {} (five tokens name one)",
            cells.len()
        )));
    }
    let start = Instant::now();
    let built = build_core(args)?;
    if !args.json {
        println!(
            "{which}: {} cells, wire {}, seed {}",
            cells.len(),
            cosim::system::Wire::from(args.wire).name(),
            args.seed
        );
        println!(
            "{:<28} {:>7} {:>6} {:>11} {:>9} {:>7} {:>9} {:>6}  verdict",
            "cell", "bytes", "msgs", "completed", "resends", "to BAD", "discards", "wall"
        );
    }
    let mut outcomes = Vec::new();
    for cell in &cells {
        let o = run_cell(&built, cell, args)?;
        if !args.json {
            let check = |what: &str| {
                o.verdict.checks.iter().find(|c| c.what.starts_with(what)).map_or_else(
                    || "-".into(),
                    |c| format!("{}/{}", c.hw, c.golden.map_or("-".into(), |g| g.to_string())),
                )
            };
            println!(
                "{:<28} {:>7} {:>6} {:>11} {:>9} {:>7} {:>9} {:>5.1}s  {}",
                o.cell,
                o.message_bytes,
                o.messages,
                format!(
                    "{}/{}",
                    o.hw_completed,
                    o.golden_completed.map_or("-".into(), |g| g.to_string())
                ),
                check("resends"),
                check("EVs marked"),
                format!("{}/{}", o.rx_discards_a, o.rx_discards_b),
                o.wall_seconds,
                match o.failure {
                    None => "OK".to_string(),
                    Some(f) => format!(
                        "FAILED ({})",
                        serde_json::to_value(f).expect("json").as_str().unwrap_or("?")
                    ),
                }
            );
        }
        outcomes.push(o);
    }
    if let (Some(t), false) = (&args.trace, args.json) {
        print_trace_paths(&trace_paths(t));
    }
    let classes = classify(&outcomes);
    let failed = outcomes.iter().filter(|o| !o.ok).count();
    let wall = start.elapsed().as_secs_f64();
    if args.json {
        let r = SweepReport {
            sweep: which.to_string(),
            wire: args.wire.into(),
            seed: args.seed,
            cells: outcomes.len(),
            failed,
            wall_seconds: wall,
            classes,
            outcomes,
        };
        println!("{}", serde_json::to_string_pretty(&r).expect("json"));
    } else {
        print_failures(&outcomes, &classes, wall);
    }
    Ok(failed == 0)
}

fn failure_name(f: Failure) -> String {
    serde_json::to_value(f)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn print_failures(outcomes: &[CellOutcome], classes: &[Classification], wall: f64) {
    let failed: Vec<&CellOutcome> = outcomes.iter().filter(|o| !o.ok).collect();
    println!(
        "{} of {} cells OK in {wall:.0} s{}",
        outcomes.len() - failed.len(),
        outcomes.len(),
        if failed.is_empty() { "" } else { "; failed:" }
    );
    for o in &failed {
        println!("  {} ({})", o.cell, o.failure.map(failure_name).unwrap_or_default());
        for w in &o.why {
            println!("      {w}");
        }
        println!("      run alone: {}", o.command);
    }
    for c in classes {
        println!(
            "class {}: {} cell(s){}",
            failure_name(c.failure),
            c.cells,
            if c.common.is_empty() {
                String::new()
            } else {
                format!("; all have {}", c.common.join(", "))
            }
        );
        for a in &c.axes {
            let v: Vec<String> = a
                .values
                .iter()
                .map(|v| format!("{} {}/{}", v.value, v.failed, v.run))
                .collect();
            println!("      {:<6} (failed/run) {}", a.axis, v.join(", "));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cell's messages are what its size says at its MTU and depth,
    /// and a cell's name selects it alone.
    #[test]
    fn cells_size_their_messages_and_select_by_name() {
        let c = Cell {
            mtu: 4096,
            size: Size::MtuPlusOne,
            depth: 16,
            qps: 4,
            fault: Fault::Hole,
        };
        assert_eq!(c.message_bytes(), 4097);
        assert_eq!(c.messages_per_qp(), 17);
        assert_eq!(c.messages().len(), 68);
        assert_eq!(select(&format!("sweep/{}", c.name())).unwrap(), vec![c]);
        let w = Cell {
            size: Size::Window,
            ..c
        };
        // 16 messages of 16 packets fill the 256-PSN window.
        assert_eq!(w.message_bytes(), 16 * 4096);
        let b = Cell {
            size: Size::Beyond,
            depth: 1,
            ..c
        };
        assert_eq!(b.message_bytes(), 256 * 4096 + 1);
        // Two whole windows' worth at most, and never fewer than two.
        assert_eq!(b.messages_per_qp(), 2);
    }

    /// The classification groups failing cells by failure and names the
    /// axis values they all share (and only axes where the run had more
    /// than one value).
    #[test]
    fn failing_cells_are_grouped_by_what_they_share() {
        let outcome = |mtu, fault, failure: Option<Failure>| {
            let axes = Cell {
                mtu,
                size: Size::Window,
                depth: 16,
                qps: 1,
                fault,
            };
            CellOutcome {
                cell: axes.name(),
                axes,
                message_bytes: 0,
                messages: 0,
                ok: failure.is_none(),
                failure,
                why: Vec::new(),
                command: String::new(),
                hw_completed: 0,
                golden_completed: None,
                rx_discards_a: 0,
                rx_discards_b: 0,
                cycles: 0,
                cycle_limit: 0,
                wall_seconds: 0.0,
                verdict: Verdict {
                    ok: failure.is_none(),
                    checks: Vec::new(),
                },
            }
        };
        let outcomes = [
            outcome(256, Fault::Hole, Some(Failure::Stall)),
            outcome(4096, Fault::Hole, Some(Failure::Stall)),
            outcome(4096, Fault::None, None),
            outcome(256, Fault::Loss, Some(Failure::MoreThanModel)),
        ];
        let classes = classify(&outcomes);
        assert_eq!(classes.len(), 2);
        let stall = &classes[0];
        assert_eq!(stall.failure, Failure::Stall);
        assert_eq!(stall.cells, 2);
        // Both stalls have the hole; the MTU differs; size, depth and QPs
        // never varied, so they say nothing.
        assert_eq!(stall.common, ["fault hole"]);
        let fault = &stall.axes.iter().find(|a| a.axis == "fault").unwrap().values;
        assert_eq!(
            fault,
            &[ValueFailures {
                value: "hole".into(),
                failed: 2,
                run: 2
            }]
        );
        let counts = &classes[1];
        assert_eq!(counts.failure, Failure::MoreThanModel);
        assert_eq!(counts.common, ["MTU 256", "fault loss"]);
        assert_eq!(counts.cell_names, ["m256/window/d16/q1/loss"]);
    }

    /// Filters select the grid's cells with every token; unknown tokens
    /// and empty selections are refused.
    #[test]
    fn filters_select_cells_with_every_token() {
        let all = select("sweep").unwrap();
        assert_eq!(all.len(), grid().len());
        let some = select("sweep/m8192/window").unwrap();
        assert!(!some.is_empty());
        assert!(some.iter().all(|c| c.mtu == 8192 && c.size == Size::Window));
        assert!(select("sweep/m300").is_err());
        assert!(select("sweep/x").is_err());
        assert!(select("sweep/d64/hole").is_err(), "no such slice in the grid");
        // Every MTU, size and fault is in the grid.
        for m in MTUS {
            assert!(all.iter().any(|c| c.mtu == m));
        }
        for s in SIZES {
            assert!(all.iter().any(|c| c.size == s));
        }
        for f in FAULTS {
            assert!(all.iter().any(|c| c.fault == f));
        }
    }
}
