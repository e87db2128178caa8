//! `mrc rtl`: the hardware flow (Verilog emission, Verilator lint, Yosys
//! synthesis estimates). A thin front end over `hw::flow`.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use hw::csr::BuildInfo;
use hw::flow;

#[derive(Args)]
pub struct RtlArgs {
    #[command(subcommand)]
    cmd: RtlCmd,
}

#[derive(Subcommand)]
enum RtlCmd {
    /// Write each block's Verilog (`<block>.v`, stable module names).
    Verilog {
        #[arg(long, default_value = "target/rtl")]
        out: PathBuf,
        /// Bake a fixed build ID (git hash 0x0123456789abcdef, date 0)
        /// instead of the current commit and time: byte-identical output.
        #[arg(long)]
        fixed_build_id: bool,
    },
    /// Emit, run the width check (`hw::flow::widen`), then `verilator
    /// --lint-only -Wall` each block (waived statements and warning
    /// classes are listed with their reasons).
    Lint {
        #[arg(long, default_value = "target/rtl")]
        out: PathBuf,
    },
    /// Emit, then `yosys synth_xilinx -family xcup` each block; writes
    /// synth.json and synth.md into the output directory.
    Synth {
        #[arg(long, default_value = "target/rtl")]
        out: PathBuf,
        /// Only these blocks (default: all).
        #[arg(long)]
        block: Vec<String>,
    },
    /// Print the register map as markdown (docs/hw/regmap.md).
    Regmap,
    /// Resource estimate of the whole core (`mrc_core`) against each Alveo
    /// board; fails (exit 2) when it exceeds the budget on `--board`
    /// (<= 15% LUT, <= 30% BRAM). Writes budget.json and budget.md.
    Budget {
        #[arg(long, default_value = "u250")]
        board: String,
        #[arg(long, default_value = "target/rtl")]
        out: PathBuf,
        /// Use this `synth.json` (from `mrc rtl synth`) instead of running
        /// Yosys again.
        #[arg(long)]
        from: Option<PathBuf>,
        /// The block to check (the full core by default).
        #[arg(long, default_value = "mrc_core")]
        block: String,
    },
}

/// A flow step failed, or the core is over its resource budget.
#[derive(Debug, thiserror::Error)]
pub enum RtlError {
    #[error(transparent)]
    Flow(#[from] flow::FlowError),
    #[error(transparent)]
    Budget(#[from] bitstreams::BudgetError),
    #[error("unknown block '{name}' (blocks: {known})")]
    UnknownBlock { name: String, known: String },
}

/// Generate the blocks named in `only` (every block when empty) and write
/// their Verilog into `out`; an unknown name is refused before anything is
/// written.
fn emit(out: &Path, fixed: bool, only: &[String]) -> Result<Vec<flow::BlockRtl>, RtlError> {
    let build = if fixed {
        BuildInfo::FIXED
    } else {
        BuildInfo::from_environment()
    };
    let all = flow::blocks(build);
    if let Some(name) = only.iter().find(|n| !all.iter().any(|b| b.name == n.as_str())) {
        let known: Vec<&str> = all.iter().map(|b| b.name).collect();
        return Err(RtlError::UnknownBlock {
            name: name.clone(),
            known: known.join(", "),
        });
    }
    let blocks: Vec<_> = all
        .into_iter()
        .filter(|b| only.is_empty() || only.iter().any(|n| n == b.name))
        .collect();
    for p in flow::write_verilog(out, &blocks)? {
        println!("wrote {}", p.display());
    }
    Ok(blocks)
}

pub fn run(args: &RtlArgs) -> Result<(), RtlError> {
    match &args.cmd {
        RtlCmd::Verilog { out, fixed_build_id } => {
            emit(out, *fixed_build_id, &[])?;
        }
        RtlCmd::Lint { out } => {
            let blocks = emit(out, true, &[])?;
            println!("width check (hw::flow::widen: arithmetic evaluated wider in Verilog than in rust-hdl), waived statements:");
            for w in flow::widen::WIDEN_WAIVERS {
                println!("  `{}`: {}", w.statement, w.reason);
            }
            println!("verilator --lint-only -Wall, waived:");
            for (w, why) in flow::LINT_WAIVERS {
                println!("  -Wno-{w}: {why}");
            }
            flow::lint(out, &blocks)?;
            for b in &blocks {
                println!("lint ok: {}", b.name);
            }
        }
        RtlCmd::Synth { out, block } => {
            let blocks = emit(out, true, block)?;
            println!("yosys: {}", flow::synth_script(&out.join("<block>.v"), "<block>"));
            announce_synth(&blocks.iter().map(|b| b.name).collect::<Vec<_>>());
            let stats = flow::synth(out, &blocks)?;
            print!("{}", flow::report_markdown(&stats));
            let (j, m) = flow::write_report(out, &stats)?;
            println!("wrote {} and {}", j.display(), m.display());
        }
        RtlCmd::Regmap => print!("{}", contract::regmap::render_markdown()),
        RtlCmd::Budget {
            board,
            out,
            from,
            block,
        } => budget(board, out, from.as_deref(), block)?,
    }
    Ok(())
}

/// Say on stderr that Yosys is starting, and how long the whole core
/// takes: the run prints nothing until it ends.
fn announce_synth(blocks: &[&str]) {
    let core = blocks.contains(&"mrc_core");
    eprintln!(
        "mrc rtl: synthesising {} with Yosys{}",
        blocks.join(", "),
        if core {
            " (mrc_core alone takes about 10 CPU minutes, one thread)"
        } else {
            ""
        }
    );
}

fn budget(board: &str, out: &Path, from: Option<&Path>, block: &str) -> Result<(), RtlError> {
    let target = bitstreams::board(board).ok_or_else(|| bitstreams::BudgetError::UnknownBoard(board.into()))?;
    let io = |path: &Path, source| flow::FlowError::Io {
        path: path.into(),
        source,
    };
    let stats: Vec<flow::SynthStats> = match from {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| io(p, e))?;
            serde_json::from_str(&text).map_err(|e| flow::FlowError::Parse {
                tool: "mrc rtl budget",
                block: block.into(),
                what: format!("{}: {e}", p.display()),
            })?
        }
        None => {
            let blocks = emit(out, true, &[block.to_string()])?;
            println!("yosys: {}", flow::synth_script(&out.join(format!("{block}.v")), block));
            announce_synth(&[block]);
            eprintln!("mrc rtl budget: (`--from DIR/synth.json` reuses the report of an earlier `mrc rtl synth`)");
            flow::synth(out, &blocks)?
        }
    };
    let s = stats
        .iter()
        .find(|s| s.block == block)
        .ok_or_else(|| bitstreams::BudgetError::MissingBlock(block.into()))?;
    let budget = bitstreams::DEFAULT_BUDGET;
    let md = bitstreams::report_markdown(s, &budget, target);
    print!("{md}");
    std::fs::create_dir_all(out).map_err(|e| io(out, e))?;
    let (j, m) = (out.join("budget.json"), out.join("budget.md"));
    let json = serde_json::to_string_pretty(&bitstreams::report_json(s, &budget, target)).expect("report serializes");
    std::fs::write(&j, json + "\n").map_err(|e| io(&j, e))?;
    std::fs::write(&m, &md).map_err(|e| io(&m, e))?;
    println!("wrote {} and {}", j.display(), m.display());
    let u = bitstreams::check_budget(&stats, block, target, &budget)?;
    println!(
        "budget ok: {block} uses {:.2}% LUT (<= {}%) and {:.2}% BRAM (<= {}%) of the {}",
        u.lut_pct, budget.lut_pct, u.bram_pct, budget.bram_pct, target.name
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: RtlCmd,
    }

    #[test]
    fn verilog_writes_every_block_deterministically() {
        let dir = std::env::temp_dir().join(format!("mrc-rtl-test-{}", std::process::id()));
        let out = dir.to_str().unwrap();
        let cli = Cli::parse_from(["rtl", "verilog", "--out", out, "--fixed-build-id"]);
        run(&RtlArgs { cmd: cli.cmd }).unwrap();
        let a = std::fs::read_to_string(dir.join("mrc_csr.v")).unwrap();
        let cli = Cli::parse_from(["rtl", "verilog", "--out", out, "--fixed-build-id"]);
        run(&RtlArgs { cmd: cli.cmd }).unwrap();
        assert_eq!(a, std::fs::read_to_string(dir.join("mrc_csr.v")).unwrap());
        assert!(std::fs::read_to_string(dir.join("mrc_rx_parser.v"))
            .unwrap()
            .contains("module mrc_rx_parser("));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// `budget --from` reads a synthesis report and fails over budget.
    #[test]
    fn budget_reads_a_report_and_fails_over_budget() {
        let dir = std::env::temp_dir().join(format!("mrc-rtl-budget-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let report = |lut| {
            vec![flow::SynthStats {
                block: "mrc_core".into(),
                lut,
                ..Default::default()
            }]
        };
        let from = dir.join("synth.json");
        let out = dir.to_str().unwrap();
        std::fs::write(&from, serde_json::to_string(&report(1000)).unwrap()).unwrap();
        let cli = Cli::parse_from(["rtl", "budget", "--out", out, "--from", from.to_str().unwrap()]);
        run(&RtlArgs { cmd: cli.cmd }).unwrap();
        assert!(std::fs::read_to_string(dir.join("budget.md"))
            .unwrap()
            .contains("| u55c |"));
        std::fs::write(&from, serde_json::to_string(&report(300_000)).unwrap()).unwrap();
        let cli = Cli::parse_from(["rtl", "budget", "--out", out, "--from", from.to_str().unwrap()]);
        let e = run(&RtlArgs { cmd: cli.cmd }).unwrap_err();
        assert!(
            matches!(e, RtlError::Budget(bitstreams::BudgetError::Over { .. })),
            "{e}"
        );
        let cli = Cli::parse_from([
            "rtl",
            "budget",
            "--board",
            "u9",
            "--out",
            out,
            "--from",
            from.to_str().unwrap(),
        ]);
        assert!(run(&RtlArgs { cmd: cli.cmd }).is_err());
        let _ = std::fs::remove_dir_all(dir);
    }
}
