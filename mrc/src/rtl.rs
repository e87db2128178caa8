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
    /// Emit, then `verilator --lint-only -Wall` each block (waived
    /// warning classes are listed with their reasons).
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
}

fn emit(out: &Path, fixed: bool) -> Result<Vec<flow::BlockRtl>, flow::FlowError> {
    let build = if fixed { BuildInfo::FIXED } else { BuildInfo::from_environment() };
    let blocks = flow::blocks(build);
    for p in flow::write_verilog(out, &blocks)? {
        println!("wrote {}", p.display());
    }
    Ok(blocks)
}

pub fn run(args: &RtlArgs) -> Result<(), flow::FlowError> {
    match &args.cmd {
        RtlCmd::Verilog { out, fixed_build_id } => {
            emit(out, *fixed_build_id)?;
        }
        RtlCmd::Lint { out } => {
            let blocks = emit(out, true)?;
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
            let blocks: Vec<_> =
                emit(out, true)?.into_iter().filter(|b| block.is_empty() || block.iter().any(|n| n == b.name)).collect();
            println!("yosys: {}", flow::synth_script(&out.join("<block>.v"), "<block>"));
            let stats = flow::synth(out, &blocks)?;
            print!("{}", flow::report_markdown(&stats));
            let (j, m) = flow::write_report(out, &stats)?;
            println!("wrote {} and {}", j.display(), m.display());
        }
        RtlCmd::Regmap => print!("{}", hw::regmap::render_markdown()),
    }
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
        assert!(std::fs::read_to_string(dir.join("mrc_rx_parser.v")).unwrap().contains("module mrc_rx_parser("));
        let _ = std::fs::remove_dir_all(dir);
    }
}
