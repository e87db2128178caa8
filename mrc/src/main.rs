//! `mrc`: the project's one command-line front end.

mod cosim;
mod decode;
mod perf;
mod rdma;
mod rtl;
mod sim;
mod transfer;
mod units;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "mrc",
    version,
    about = "Open MRC (Multipath Reliable Connection) SmartNIC toolkit"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Transfer messages between two golden-model endpoints over a lossy
    /// multipath channel; verifies exactly-once, byte-identical delivery and
    /// in-order completions.
    Transfer(transfer::TransferArgs),
    /// Packet-level fabric simulation at htsim scale: MRC against the RoCEv2
    /// RC baseline on fat trees and leaf-spines, with htsim .topo/.cm
    /// inputs, faults, per-flow CSV, JSON summary and plots.
    Sim(sim::SimArgs),
    /// Hardware flow: emit Verilog, lint (Verilator), synthesize (Yosys).
    Rtl(rtl::RtlArgs),
    /// Two verilated NICs (the RTL) over a simulated multipath fabric with
    /// a failing EV: a scoreboard checks exactly-once, byte-identical,
    /// in-order delivery; the golden model runs the same scenario.
    #[command(
        after_help = "Exit status: 0 the scoreboard passed (with --scenario: every scenario's \
                            verdict OK); 1 a check or a verdict failed; 2 bad usage (one line naming \
                            it, e.g. --qps beyond the core's 256 QPs) or a model that cannot be built."
    )]
    Cosim(cosim::CosimArgs),
    /// perftest-style WRITE bandwidth / latency through the driver's verbs
    /// API on the co-simulated RTL (the verilated core, DMA served from the
    /// driver's buffers); simulated Gb/s, message rate, latency percentiles.
    Perf(perf::PerfArgs),
    /// Run the project's parsers over every packet of a pcap and print each
    /// packet's verdict (MRC 1.0, the legacy profile, or the typed error),
    /// one line per packet, then a summary with counts per verdict.
    #[command(after_help = "Verdicts: mrc1.0, legacy (the profile the RTL still speaks), \
                            error:KIND (a RoCEv2 packet our parsers reject), other:KIND (not RoCEv2: \
                            not IP, not UDP, or another UDP port).\n\
                            Exit status: 0 every RoCEv2 packet parsed; 1 some failed to parse (or the \
                            file ends inside a record); 2 bad usage or unreadable file.")]
    Decode(decode::DecodeArgs),
    /// perftest-style RDMA WRITE bandwidth / latency between two processes
    /// or two machines, each driving its own NIC (a soft NIC over UDP, or
    /// a card): one side listens, the other connects with --connect.
    #[command(
        after_help = "Exit status: 0 every WRITE completed and the server's buffer matches the \
                            client's; 1 a WRITE failed or the buffers differ; 2 bad usage, a device that \
                            cannot be opened, or a peer that cannot be reached."
    )]
    Rdma(rdma::RdmaArgs),
}

/// End the program when stdout's reader goes away (`mrc sim | head`), as
/// Unix tools do: killed by SIGPIPE, silently (shells report status 141).
/// Rust ignores SIGPIPE by default, which turns every later `println!` into
/// a "Broken pipe" panic; restoring the default action covers every print
/// of every subcommand at once.
fn die_quietly_on_closed_stdout() {
    // SAFETY: called first in `main`, before any thread exists; setting a
    // signal's action to its default installs no handler code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// A command line clap refuses: one line naming the problem (clap's
/// message up to its first blank line, without the usage block and the
/// help hint), exit status 2. Help and version requests print as clap
/// prints them.
fn refuse_usage(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.to_string();
    let message: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let line = message.join(" ");
    eprintln!("mrc: {}", line.strip_prefix("error: ").unwrap_or(&line));
    ExitCode::from(2)
}

fn main() -> ExitCode {
    die_quietly_on_closed_stdout();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return refuse_usage(e),
    };
    match cli.command {
        Command::Transfer(args) => match transfer::run(&args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(e) => {
                eprintln!("mrc transfer: {e}");
                ExitCode::from(2)
            }
        },
        Command::Cosim(args) => match cosim::run(&args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(e) => {
                eprintln!("mrc cosim: {e}");
                ExitCode::from(2)
            }
        },
        Command::Perf(args) => match perf::run(&args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(e) => {
                eprintln!("mrc perf: {e}");
                ExitCode::from(2)
            }
        },
        Command::Rdma(args) => match rdma::run(&args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(e) => {
                eprintln!("mrc rdma: {e}");
                ExitCode::from(2)
            }
        },
        Command::Decode(args) => match decode::run(&args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(e) => {
                eprintln!("mrc decode: {e}");
                ExitCode::from(2)
            }
        },
        Command::Rtl(args) => rtl::run(&args).map_or_else(
            |e| {
                eprintln!("mrc rtl: {e}");
                ExitCode::from(2)
            },
            |()| ExitCode::SUCCESS,
        ),
        Command::Sim(args) => {
            // Under an MPI launcher every rank runs this; rank 0 speaks.
            let mut ranks = match sim::join_ranks() {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("mrc sim: {e}");
                    return ExitCode::from(2);
                }
            };
            let speaks = ranks.as_ref().is_none_or(|r| r.rank().0 == 0);
            match sim::run_cli(&args, &mut ranks) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => {
                    if speaks {
                        eprintln!("mrc sim: {e}");
                    }
                    ExitCode::from(2)
                }
            }
        }
    }
}
