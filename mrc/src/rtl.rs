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
    /// classes are listed with their reasons) and Yosys's front end
    /// (read, hierarchy, proc).
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
    /// Print the register map: markdown (docs/hw/regmap.md), JSON, or a C
    /// header of the addresses (for drivers and scripts outside Rust).
    Regmap {
        #[arg(long, value_enum, default_value_t = RegmapFormat::Markdown)]
        format: RegmapFormat,
    },
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
        RtlCmd::Regmap { format } => print!("{}", render_regmap(*format)),
        RtlCmd::Budget {
            board,
            out,
            from,
            block,
        } => budget(board, out, from.as_deref(), block)?,
    }
    Ok(())
}

/// Output formats of `mrc rtl regmap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RegmapFormat {
    Markdown,
    Json,
    C,
}

/// The register map in `format` (every form generated from
/// `contract::regmap`, so they cannot disagree).
pub fn render_regmap(format: RegmapFormat) -> String {
    use contract::regmap::{counters, next_of, BLOCKS, COUNTERS};
    match format {
        RegmapFormat::Markdown => contract::regmap::render_markdown(),
        RegmapFormat::Json => {
            let blocks: Vec<_> = BLOCKS
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let regs: Vec<_> = b
                        .regs
                        .iter()
                        .map(|r| serde_json::json!({ "name": r.name, "offset": r.offset, "address": b.base + r.offset, "access": r.access, "reset": r.reset, "doc": r.doc }))
                        .collect();
                    serde_json::json!({ "name": b.name, "base": b.base, "type": b.block_type, "version": b.version, "next": next_of(i), "doc": b.doc, "regs": regs })
                })
                .collect();
            let counters: Vec<_> = COUNTERS
                .iter()
                .enumerate()
                .map(|(i, c)| serde_json::json!({ "index": i, "name": c.name, "group": c.group, "address": counter_address(i), "doc": c.doc }))
                .collect();
            let doc = serde_json::json!({
                "address_bits": contract::regmap::ADDR_BITS,
                "blocks": blocks,
                "counters": counters,
                "counters_base": counters::BASE,
            });
            format!("{}\n", serde_json::to_string_pretty(&doc).expect("json"))
        }
        RegmapFormat::C => {
            let mut s = String::new();
            s.push_str("/* MRC NIC CSR register map: byte addresses in BAR 0.\n");
            s.push_str(" * Generated by `mrc rtl regmap --format c` from contract::regmap; do not edit. */\n");
            s.push_str("#ifndef MRC_REGMAP_H\n#define MRC_REGMAP_H\n\n");
            for (i, b) in BLOCKS.iter().enumerate() {
                let block = c_ident(b.name);
                s.push_str(&format!("/* {}: {} */\n", b.name, b.doc.replace("*/", "* /")));
                s.push_str(&format!("#define MRC_{block}_BASE 0x{:04x}u\n", b.base));
                s.push_str(&format!("#define MRC_{block}_TYPE 0x{:08x}u\n", b.block_type));
                s.push_str(&format!("#define MRC_{block}_VERSION 0x{:08x}u\n", b.version));
                s.push_str(&format!("#define MRC_{block}_NEXT 0x{:04x}u\n", next_of(i)));
                for r in b.regs {
                    s.push_str(&format!(
                        "#define MRC_{block}_{} 0x{:04x}u /* {:?}, reset 0x{:x}: {} */\n",
                        c_ident(r.name),
                        b.base + r.offset,
                        r.access,
                        r.reset,
                        r.doc.replace("*/", "* /")
                    ));
                }
                s.push('\n');
            }
            s.push_str(&format!("#define MRC_NUM_COUNTERS {}u\n", COUNTERS.len()));
            s.push_str(&format!(
                "#define MRC_COUNTER_ADDR(i) (0x{:04x}u + 4u * (unsigned)(i))\n",
                counters::BASE + counters::FIRST
            ));
            for (i, c) in COUNTERS.iter().enumerate() {
                s.push_str(&format!(
                    "#define MRC_CNT_{} {i}u /* {} */\n",
                    c_ident(c.name),
                    c.doc.replace("*/", "* /")
                ));
            }
            s.push_str("\n#endif /* MRC_REGMAP_H */\n");
            s
        }
    }
}

/// Byte address of counter `i`.
fn counter_address(i: usize) -> u32 {
    use contract::regmap::counters;
    u32::from(counters::BASE) + u32::from(counters::FIRST) + 4 * i as u32
}

/// A C macro name part: upper case, anything else than `[A-Z0-9]` as `_`.
fn c_ident(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
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

    /// The JSON and C forms carry the contract's addresses: the config
    /// block's `go` register and counter 0, checked in JSON and by a C
    /// compiler against the header.
    #[test]
    fn regmap_json_and_c_header_carry_the_contract_addresses() {
        use contract::regmap::{cfg, counters, COUNTERS};
        let v: serde_json::Value = serde_json::from_str(&render_regmap(RegmapFormat::Json)).unwrap();
        let block = v["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == "cfg")
            .unwrap();
        let go = block["regs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "go")
            .unwrap();
        assert_eq!(go["address"], u64::from(cfg::BASE + cfg::GO));
        assert_eq!(v["counters"].as_array().unwrap().len(), COUNTERS.len());
        assert_eq!(
            v["counters"][1]["address"],
            u64::from(counters::BASE + counters::FIRST) + 4
        );

        let dir = std::env::temp_dir().join(format!("mrc-regmap-c-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mrc_regmap.h"), render_regmap(RegmapFormat::C)).unwrap();
        let check = format!(
            "#include \"mrc_regmap.h\"\n\
             _Static_assert(MRC_CFG_GO == {}u, \"go\");\n\
             _Static_assert(MRC_COUNTER_ADDR(1) == {}u, \"counter 1\");\n\
             _Static_assert(MRC_CNT_{} == 0u, \"first counter\");\n\
             _Static_assert(MRC_NUM_COUNTERS == {}u, \"count\");\n",
            cfg::BASE + cfg::GO,
            counters::BASE + counters::FIRST + 4,
            c_ident(COUNTERS[0].name),
            COUNTERS.len()
        );
        std::fs::write(dir.join("check.c"), check).unwrap();
        let out = std::process::Command::new("cc")
            .args(["-std=c11", "-Wall", "-Werror", "-fsyntax-only", "check.c"])
            .current_dir(&dir)
            .output()
            .expect("cc (the C compiler scripts/deps.sh's g++ brings)");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let _ = std::fs::remove_dir_all(&dir);
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
