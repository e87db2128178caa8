//! `mrc transfer`: two golden-model endpoints over a lossy multipath channel.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use proto::loopback::{Dir, EvMatch, LinkConfig, Report, Scenario};
use proto::model::cc::{CcConfig, DcqcnConfig, NsccConfig};
use proto::model::ev::SprayPolicy;
use proto::model::Transport;
use proto::time::Duration;
use proto::wire::mrc10::Profile;
use proto::wire::{pcap::PcapWriter, Encap};

use crate::units::{parse_duration, parse_ev_failure, parse_size};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    /// Multipath Reliable Connection.
    Mrc,
    /// RoCEv2 RC baseline (one path, go-back-N).
    Rc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CcArg {
    /// NSCC-style for MRC, DCQCN-style for RC.
    Auto,
    Nscc,
    Dcqcn,
    /// A fixed window of one bandwidth-delay product.
    Fixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SprayArg {
    RoundRobin,
    Weighted,
}

/// Options of `mrc transfer`.
#[derive(Args, Debug)]
pub struct TransferArgs {
    /// Transport under test.
    #[arg(long, value_enum, default_value_t = TransportArg::Mrc)]
    pub transport: TransportArg,
    /// Number of EVs (paths) in the QP's EV set (RC uses only the first).
    #[arg(long, default_value_t = 8)]
    pub evs: usize,
    /// EV INDEX drops everything from TIME on, e.g. 3@50us (repeatable).
    #[arg(long = "fail-ev", value_parser = parse_ev_failure)]
    pub fail_ev: Vec<(u16, proto::Instant)>,
    /// Random loss probability per packet, both directions.
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Duplication probability per packet.
    #[arg(long, default_value_t = 0.0)]
    pub duplicate: f64,
    /// Corruption probability per packet (the receiver's ICRC check drops it).
    #[arg(long, default_value_t = 0.0)]
    pub corrupt: f64,
    /// Number of messages A writes to B.
    #[arg(long, default_value_t = 1000)]
    pub messages: usize,
    /// Size of each message (e.g. 4096, 64KiB, 1MiB).
    #[arg(long, value_parser = parse_size, default_value = "64KiB")]
    pub size: u64,
    /// Every Nth message is a WRITE-with-immediate (0: none).
    #[arg(long, default_value_t = 4)]
    pub imm_every: usize,
    /// Payload bytes per packet (256..9000).
    #[arg(long, default_value_t = 4096)]
    pub mtu: u32,
    /// Link rate in Gb/s (serialisation of each direction).
    #[arg(long, default_value_t = 100.0)]
    pub rate_gbps: f64,
    /// One-way base delay.
    #[arg(long, value_parser = parse_duration, default_value = "2us")]
    pub delay: Duration,
    /// Extra delay spread across EVs (paths differ in length, so sprayed
    /// packets arrive out of order).
    #[arg(long, value_parser = parse_duration, default_value = "1us")]
    pub ev_spread: Duration,
    /// Random per-packet jitter.
    #[arg(long, value_parser = parse_duration, default_value = "0ns")]
    pub jitter: Duration,
    /// Receive window (MPR) in units of 128 PSNs.
    #[arg(long, default_value_t = 64)]
    pub mpr_units: u8,
    /// ACK timeout exponent t: RTO = 1.024 us x 2^t.
    #[arg(long, default_value_t = 6)]
    pub timeout_exp: u8,
    /// Retries at the fixed RTO before backing off (<= 7).
    #[arg(long, default_value_t = 7)]
    pub retry_linear: u8,
    /// Further retries with exponential backoff (<= 25; 25 = forever).
    /// When they run out the QP goes to ERR, as a NIC's retry-exceeded does.
    #[arg(long, default_value_t = 7)]
    pub retry_exp: u8,
    /// Congestion control.
    #[arg(long, value_enum, default_value_t = CcArg::Auto)]
    pub cc: CcArg,
    /// Spraying policy (MRC).
    #[arg(long, value_enum, default_value_t = SprayArg::RoundRobin)]
    pub spray: SprayArg,
    /// Minimum number of GOOD EVs kept.
    #[arg(long, default_value_t = 1)]
    pub min_active: u16,
    /// Simulated time limit.
    #[arg(long, value_parser = parse_duration, default_value = "1s")]
    pub time_limit: Duration,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write every packet, both directions, to this pcap file.
    #[arg(long)]
    pub pcap: Option<PathBuf>,
    /// Use IPv4 in the pcap (default IPv6, where the EV also rides in the flow label).
    #[arg(long)]
    pub ipv4: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Errors of `mrc transfer`.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("invalid option: {0}")]
    Usage(String),
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

fn check(args: &TransferArgs) -> Result<(), TransferError> {
    let usage = |s: String| Err(TransferError::Usage(s));
    if args.evs == 0 || args.evs > proto::model::ev::MAX_EVS {
        return usage(format!(
            "--evs must be 1..={} (the golden model's EV set per QP)",
            proto::model::ev::MAX_EVS
        ));
    }
    for p in [args.loss, args.duplicate, args.corrupt] {
        if !(0.0..1.0).contains(&p) {
            return usage("probabilities must be in [0, 1)".into());
        }
    }
    if args.size > proto::model::MAX_MESSAGE_LEN {
        return usage("--size exceeds the 2 GiB message limit".into());
    }
    if args.rate_gbps <= 0.0 || !args.rate_gbps.is_finite() {
        return usage("--rate-gbps must be positive".into());
    }
    if let Some((i, _)) = args.fail_ev.iter().find(|(i, _)| *i as usize >= args.evs) {
        return usage(format!("--fail-ev {i} names an EV beyond --evs {}", args.evs));
    }
    if args.retry_linear > proto::model::MAX_RETRY_LINEAR || args.retry_exp > proto::model::RETRY_INFINITE {
        return usage("--retry-linear must be <= 7 and --retry-exp <= 25".into());
    }
    if args.timeout_exp > proto::model::MAX_ACK_TIMEOUT_EXP {
        return usage("--timeout-exp must be <= 24".into());
    }
    if !(proto::model::MIN_MTU..=proto::model::MAX_MTU).contains(&args.mtu) {
        return usage("--mtu must be 256..=9000".into());
    }
    if args.min_active as usize > args.evs {
        return usage("--min-active exceeds --evs".into());
    }
    Ok(())
}

/// Build the scenario the options describe.
pub fn scenario(args: &TransferArgs) -> Result<Scenario, TransferError> {
    check(args)?;
    let transport = match args.transport {
        TransportArg::Mrc => Transport::Mrc,
        TransportArg::Rc => Transport::Rc,
    };
    let msgs = Scenario::messages(args.messages, args.size as u32, args.imm_every);
    let mut s = Scenario::new(transport, args.evs, msgs);
    let base_rtt = Duration::from_ps(2 * (args.delay.as_ps() + args.ev_spread.as_ps()));
    let cc = match (args.cc, transport) {
        (CcArg::Auto, Transport::Mrc | Transport::MrcLegacy) | (CcArg::Nscc, _) => {
            CcConfig::Nscc(NsccConfig::for_fabric(args.rate_gbps, base_rtt, args.mtu))
        }
        (CcArg::Auto, Transport::Rc) | (CcArg::Dcqcn, _) => CcConfig::Dcqcn(DcqcnConfig::for_line_rate(args.rate_gbps)),
        (CcArg::Fixed, _) => {
            let bdp = (args.rate_gbps * 1e9 / 8.0 * base_rtt.as_secs_f64()) as u64;
            CcConfig::Fixed {
                window: bdp.max(4 * args.mtu as u64),
            }
        }
    };
    for ep in [&mut s.a, &mut s.b] {
        ep.cfg.mtu = args.mtu;
        ep.rtr.mpr_units = args.mpr_units;
        ep.rts.send_mpr_units = args.mpr_units;
        ep.rts.ack_timeout_exp = args.timeout_exp;
        ep.rts.retry_linear = args.retry_linear;
        ep.rts.retry_exp = args.retry_exp;
        ep.rts.cc = cc;
        ep.rts.evs.min_active = args.min_active;
        ep.rts.evs.policy = match args.spray {
            SprayArg::RoundRobin => SprayPolicy::RoundRobin,
            SprayArg::Weighted => SprayPolicy::Weighted,
        };
    }
    for link in [&mut s.link_ab, &mut s.link_ba] {
        *link = LinkConfig {
            base_delay: args.delay,
            ev_delay_spread: args.ev_spread,
            jitter: args.jitter,
            loss: args.loss,
            duplicate: args.duplicate,
            corrupt: args.corrupt,
            blackholes: args.fail_ev.iter().map(|&(i, at)| (EvMatch::Index(i), at)).collect(),
            line_rate_gbps: Some(args.rate_gbps),
            ..LinkConfig::default()
        };
    }
    s.time_limit = args.time_limit;
    s.capture = args.pcap.is_some();
    s.seed = args.seed;
    Ok(s)
}

fn write_pcap(path: &PathBuf, report: &Report, ipv4: bool) -> std::io::Result<()> {
    let mut w = PcapWriter::new(BufWriter::new(File::create(path)?))?;
    let a2b = if ipv4 { Encap::test_v4() } else { Encap::test_v6() };
    let b2a = a2b.reversed();
    let mut frame = Vec::with_capacity(10_000);
    // In time order across both directions (each direction already is).
    let mut captured: Vec<_> = report.captured.iter().collect();
    captured.sort_by_key(|c| c.at);
    for c in captured {
        frame.clear();
        let encap = if c.dir == Dir::AtoB { &a2b } else { &b2a };
        // MRC 1.0 frames with the profile the QPs use (its DSCP numbers,
        // 32-bit EVs); RC frames are RoCEv2.
        c.pkt.emit_frame(encap, &Profile::DEFAULT, &mut frame);
        w.write_frame(c.at, &frame)?;
    }
    w.flush()
}

fn print_table(args: &TransferArgs, r: &Report) {
    let a = &r.counters_a;
    let b = &r.counters_b;
    let secs = r.completion_time_ps as f64 * 1e-12;
    let bad = r
        .ev_changes
        .iter()
        .filter(|c| c.to == proto::model::ev::EvState::AssumedBad)
        .count();
    let rows: Vec<(&str, String)> = vec![
        ("transport", format!("{:?}", r.transport).to_lowercase()),
        (
            "messages completed",
            format!("{} / {}", r.messages_completed, r.messages_posted),
        ),
        ("bytes delivered", format!("{}", r.bytes)),
        (
            "completion time",
            format!("{:.3} us (last successful completion)", secs * 1e6),
        ),
        (
            "goodput",
            format!(
                "{:.2} Gb/s ({:.1}% of {} Gb/s)",
                r.goodput_gbps,
                100.0 * r.goodput_gbps / args.rate_gbps,
                args.rate_gbps
            ),
        ),
        ("data packets sent", format!("{}", a.tx_data_packets)),
        (
            "retransmissions",
            format!(
                "{} (loss-inferred {}, timeout {}, trim {}, go-back-N {})",
                a.retransmitted_packets, a.retx_loss_inferred, a.retx_timeout, a.retx_trim, a.retx_go_back_n
            ),
        ),
        ("RTOs fired", format!("{}", a.rto_fired)),
        ("duplicates at receiver", format!("{}", b.rx_duplicates)),
        ("out-of-order at receiver", format!("{}", b.rx_out_of_order)),
        (
            "EV state changes",
            format!("{} ({} to ASSUMED_BAD)", r.ev_changes.len(), bad),
        ),
        (
            "link A->B lost/blackholed/corrupted",
            format!("{}/{}/{}", r.link_ab.lost, r.link_ab.blackholed, r.link_ab.corrupted),
        ),
        ("error completions", format!("{}", r.error_completions.len())),
        (
            "QP states (A, B)",
            format!("{:?}, {:?}", r.final_state_a, r.final_state_b),
        ),
        ("dropped bad packets (A, B)", format!("{}, {}", a.drops(), b.drops())),
        (
            "verdict",
            if r.ok {
                "OK: exactly once, byte-identical, completions in order".to_string()
            } else if let Some(c) = r.error_completions.first() {
                format!(
                    "FAILED: QP went to ERR ({:?}) at {:.1} us, {} of {} messages lost to error completions",
                    c.status,
                    r.first_error_ps.unwrap_or(0) as f64 / 1e6,
                    r.error_completions.len(),
                    r.messages_posted
                )
            } else {
                format!(
                    "FAILED: exactly_once={} identical={} imm_in_order={} timed_out={}",
                    r.delivered_exactly_once, r.data_identical, r.imm_in_order, r.timed_out
                )
            },
        ),
    ];
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in rows {
        println!("{k:<w$}  {v}");
    }
}

/// Run `mrc transfer`; returns whether the run met its guarantees.
pub fn run(args: &TransferArgs) -> Result<bool, TransferError> {
    let s = scenario(args)?;
    let report = s.run();
    if let Some(path) = &args.pcap {
        write_pcap(path, &report, args.ipv4).map_err(|source| TransferError::Io {
            path: path.clone(),
            source,
        })?;
    }
    if args.json {
        let mut v = serde_json::to_value(&report).expect("report serialises");
        if let Some(o) = v.as_object_mut() {
            o.remove("captured");
        }
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        print_table(args, &report);
        if let Some(p) = &args.pcap {
            println!("pcap: {} packets written to {}", report.captured.len(), p.display());
        }
    }
    Ok(report.ok)
}
