//! The open half of the Alveo build flow: the Yosys resource estimate of
//! the core (`hw::flow::synth`, `synth_xilinx -family xcup`) set against
//! each supported board's device, and the CI budget check (the default
//! configuration must fit in 15% of a U250's LUTs and 30% of its block
//! RAM). The Vivado half (Tcl, XDC, board tops) lives in `bitstreams/` next
//! to this crate; see `docs/bitstreams.md`.

use hw::flow::SynthStats;
use serde::Serialize;

/// A supported card and the capacity of its FPGA.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Board {
    /// Short name used on the command line and in `bitstreams/<name>/`.
    pub name: &'static str,
    /// Vivado part name.
    pub part: &'static str,
    /// Six-input LUTs (CLB LUTs).
    pub lut: u64,
    /// CLB flip-flops.
    pub ff: u64,
    /// Block RAM in 36 Kb units.
    pub bram36: u64,
    /// UltraRAM blocks (288 Kb).
    pub uram: u64,
    pub dsp: u64,
    /// Where the figures come from.
    pub source: &'static str,
}

/// The three cards. XCU250 is the Virtex UltraScale+ VU13P die set,
/// XCU280 and XCU55C the VU37P (HBM) one; the capacities are the device's,
/// not what a shell leaves free (this flow uses no shell: the whole device
/// is ours).
pub const BOARDS: [Board; 3] = [
    Board {
        name: "u250",
        part: "xcu250-figd2104-2L-e",
        lut: 1_728_000,
        ff: 3_456_000,
        bram36: 2_688,
        uram: 1_280,
        dsp: 12_288,
        source: "DS962 (Alveo U200/U250 data sheet), card resources table; = XCVU13P in DS890 (UltraScale Architecture and Product Data Sheet: Overview), Virtex UltraScale+ device table",
    },
    Board {
        name: "u280",
        part: "xcu280-fsvh2892-2L-e",
        lut: 1_303_680,
        ff: 2_607_360,
        bram36: 2_016,
        uram: 960,
        dsp: 9_024,
        source: "DS963 (Alveo U280 data sheet), card resources table; = XCVU37P in DS890, Virtex UltraScale+ HBM device table",
    },
    Board {
        name: "u55c",
        part: "xcu55c-fsvh2892-2L-e",
        lut: 1_303_680,
        ff: 2_607_360,
        bram36: 2_016,
        uram: 960,
        dsp: 9_024,
        source: "DS978 (Alveo U55C data sheet), card resources table; same die set as the U280 (XCVU37P-class, 16 GB HBM)",
    },
];

/// The board called `name` (case-insensitive).
pub fn board(name: &str) -> Option<&'static Board> {
    BOARDS.iter().find(|b| b.name.eq_ignore_ascii_case(name))
}

/// The limits the default configuration must stay under, in percent of
/// the board's capacity.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Budget {
    pub lut_pct: f64,
    pub bram_pct: f64,
}

/// The budget: <= 15% LUT, <= 30% BRAM (of a U250).
pub const DEFAULT_BUDGET: Budget = Budget {
    lut_pct: 15.0,
    bram_pct: 30.0,
};

/// LUTs a distributed-RAM primitive occupies (UG574: a RAM64M/RAM32M is
/// four LUTs of one SLICEM, a dual-port single-bit RAM two, a 128-deep
/// dual-port or 256-deep single-port four, a single-port 32/64 one).
fn lutram_luts(cell: &str) -> u64 {
    match cell {
        "RAM32M" | "RAM64M" | "RAM32M16" | "RAM64M8" | "RAM128X1D" | "RAM256X1S" => {
            if cell == "RAM32M16" || cell == "RAM64M8" {
                8
            } else {
                4
            }
        }
        "RAM32X1D" | "RAM64X1D" | "RAM128X1S" => 2,
        "RAM32X1S" | "RAM64X1S" => 1,
        _ => 0,
    }
}

/// A block's resources as fractions of one board.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Utilisation {
    pub board: &'static str,
    pub block: String,
    /// Logic LUTs plus the LUTs distributed RAM occupies.
    pub lut: u64,
    pub ff: u64,
    pub bram36: f64,
    pub uram: u64,
    pub dsp: u64,
    pub lut_pct: f64,
    pub ff_pct: f64,
    pub bram_pct: f64,
    pub uram_pct: f64,
    pub dsp_pct: f64,
}

fn pct(used: f64, cap: u64) -> f64 {
    100.0 * used / cap as f64
}

/// `stats` (one Yosys report) against `board`.
pub fn utilisation(stats: &SynthStats, board: &Board) -> Utilisation {
    let lutram: u64 = stats.cells.iter().map(|(c, n)| lutram_luts(c) * n).sum();
    let lut = stats.lut + lutram;
    Utilisation {
        board: board.name,
        block: stats.block.clone(),
        lut,
        ff: stats.ff,
        bram36: stats.bram36,
        uram: stats.uram,
        dsp: stats.dsp,
        lut_pct: pct(lut as f64, board.lut),
        ff_pct: pct(stats.ff as f64, board.ff),
        bram_pct: pct(stats.bram36, board.bram36),
        uram_pct: pct(stats.uram as f64, board.uram),
        dsp_pct: pct(stats.dsp as f64, board.dsp),
    }
}

/// The default configuration is over its budget.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BudgetError {
    #[error("no synthesis report for block `{0}` (run `mrc rtl synth --block {0}` first)")]
    MissingBlock(String),
    #[error("unknown board `{0}` (known: u250, u280, u55c)")]
    UnknownBoard(String),
    #[error("{block} exceeds its budget on the {board}: {}", .over.join("; "))]
    Over {
        block: String,
        board: String,
        over: Vec<String>,
    },
}

/// The budget check: `block`'s report in `stats` against `budget` on
/// `board`. Returns the utilisation when it fits; otherwise
/// [`BudgetError::Over`] naming each exceeded resource with its figure.
pub fn check_budget(
    stats: &[SynthStats],
    block: &str,
    board: &Board,
    budget: &Budget,
) -> Result<Utilisation, BudgetError> {
    let s = stats
        .iter()
        .find(|s| s.block == block)
        .ok_or_else(|| BudgetError::MissingBlock(block.into()))?;
    let u = utilisation(s, board);
    let mut over = Vec::new();
    if u.lut_pct > budget.lut_pct {
        over.push(format!(
            "LUT {} = {:.2}% of {} > {}%",
            u.lut, u.lut_pct, board.lut, budget.lut_pct
        ));
    }
    if u.bram_pct > budget.bram_pct {
        over.push(format!(
            "BRAM {} = {:.2}% of {} > {}%",
            u.bram36, u.bram_pct, board.bram36, budget.bram_pct
        ));
    }
    if over.is_empty() {
        Ok(u)
    } else {
        Err(BudgetError::Over {
            block: block.into(),
            board: board.name.into(),
            over,
        })
    }
}

/// The report for `block` on every board, as markdown.
pub fn report_markdown(s: &SynthStats, budget: &Budget, budget_board: &Board) -> String {
    let mut m = format!(
        "# `{}` against the Alveo devices (Yosys 0.23 `synth_xilinx -family xcup` estimate)\n\n\
         Estimate only; Vivado's report_utilization is the real figure. LUT includes the LUTs \
         used as distributed RAM. Budget: <= {}% LUT and <= {}% BRAM of the {}.\n\n\
         | board | part | LUT | % | FF | % | BRAM36 | % | URAM | % | DSP | % |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
        s.block,
        budget.lut_pct,
        budget.bram_pct,
        budget_board.name.to_uppercase()
    );
    for b in &BOARDS {
        let u = utilisation(s, b);
        m.push_str(&format!(
            "| {} | {} | {} / {} | {:.2} | {} / {} | {:.2} | {} / {} | {:.2} | {} / {} | {:.2} | {} / {} | {:.2} |\n",
            b.name,
            b.part,
            u.lut,
            b.lut,
            u.lut_pct,
            u.ff,
            b.ff,
            u.ff_pct,
            u.bram36,
            b.bram36,
            u.bram_pct,
            u.uram,
            b.uram,
            u.uram_pct,
            u.dsp,
            b.dsp,
            u.dsp_pct
        ));
    }
    m.push_str("\nCapacity sources:\n\n");
    for b in &BOARDS {
        m.push_str(&format!("* {}: {}\n", b.name, b.source));
    }
    m
}

/// The same report as JSON: the boards, the utilisation on each, the
/// budget and whether `block` meets it on `budget_board`.
pub fn report_json(s: &SynthStats, budget: &Budget, budget_board: &Board) -> serde_json::Value {
    let per: Vec<Utilisation> = BOARDS.iter().map(|b| utilisation(s, b)).collect();
    let verdict = check_budget(std::slice::from_ref(s), &s.block, budget_board, budget);
    serde_json::json!({
        "block": s.block,
        "estimator": "yosys synth_xilinx -family xcup",
        "boards": BOARDS,
        "utilisation": per,
        "budget": { "board": budget_board.name, "lut_pct": budget.lut_pct, "bram_pct": budget.bram_pct },
        "within_budget": verdict.is_ok(),
        "over": match verdict { Err(BudgetError::Over { over, .. }) => over, _ => Vec::new() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(lut: u64, bram36: f64, cells: &[(&str, u64)]) -> SynthStats {
        SynthStats {
            block: "mrc_core".into(),
            lut,
            ff: 2 * lut,
            bram36,
            cells: cells.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn capacities_are_the_device_tables() {
        let u250 = board("U250").unwrap();
        assert_eq!(
            (u250.lut, u250.ff, u250.bram36, u250.uram),
            (1_728_000, 3_456_000, 2_688, 1_280)
        );
        assert_eq!(board("u280").unwrap().lut, board("u55c").unwrap().lut);
        assert!(board("u50").is_none());
        // FFs are two per LUT in every UltraScale+ CLB.
        assert!(BOARDS.iter().all(|b| b.ff == 2 * b.lut));
    }

    #[test]
    fn a_small_core_passes() {
        // 10% LUT, 20% BRAM of a U250.
        let r = [report(172_800, 537.6, &[])];
        let u = check_budget(&r, "mrc_core", board("u250").unwrap(), &DEFAULT_BUDGET).unwrap();
        assert!((u.lut_pct - 10.0).abs() < 1e-9 && (u.bram_pct - 20.0).abs() < 1e-9);
    }

    #[test]
    fn exactly_at_the_limit_passes_and_one_over_fails() {
        let b = board("u250").unwrap();
        // 15% of 1,728,000 = 259,200 LUTs.
        assert!(check_budget(&[report(259_200, 0.0, &[])], "mrc_core", b, &DEFAULT_BUDGET).is_ok());
        let e = check_budget(&[report(259_201, 0.0, &[])], "mrc_core", b, &DEFAULT_BUDGET).unwrap_err();
        let BudgetError::Over { over, .. } = &e else {
            panic!("{e}")
        };
        assert_eq!(over.len(), 1);
        assert!(over[0].starts_with("LUT 259201"), "{}", over[0]);
        assert!(e.to_string().contains("exceeds its budget on the u250"));
    }

    #[test]
    fn too_much_bram_fails_with_both_reasons() {
        // 30% of 2,688 = 806.4 BRAM36.
        let e = check_budget(
            &[report(300_000, 806.5, &[])],
            "mrc_core",
            board("u250").unwrap(),
            &DEFAULT_BUDGET,
        )
        .unwrap_err();
        let BudgetError::Over { over, .. } = e else { panic!() };
        assert_eq!(over.len(), 2, "{over:?}");
        assert!(over[1].starts_with("BRAM 806.5"));
    }

    #[test]
    fn distributed_ram_counts_as_luts() {
        // 259,000 logic LUTs + 100 RAM64M (400 LUTs) crosses 259,200.
        let r = [report(259_000, 0.0, &[("RAM64M", 100), ("LUT6", 259_000)])];
        assert!(check_budget(&r, "mrc_core", board("u250").unwrap(), &DEFAULT_BUDGET).is_err());
        assert_eq!(utilisation(&r[0], board("u250").unwrap()).lut, 259_400);
    }

    #[test]
    fn the_same_core_is_a_larger_share_of_the_smaller_devices() {
        let r = [report(200_000, 700.0, &[])];
        let b250 = board("u250").unwrap();
        let b280 = board("u280").unwrap();
        assert!(check_budget(&r, "mrc_core", b250, &DEFAULT_BUDGET).is_ok());
        assert!(check_budget(&r, "mrc_core", b280, &DEFAULT_BUDGET).is_err());
    }

    #[test]
    fn a_missing_block_is_an_error() {
        let r = [report(1, 0.0, &[])];
        assert_eq!(
            check_budget(&r, "mrc_other", board("u250").unwrap(), &DEFAULT_BUDGET),
            Err(BudgetError::MissingBlock("mrc_other".into()))
        );
    }

    #[test]
    fn reports_name_every_board_and_the_verdict() {
        let s = report(300_000, 10.0, &[]);
        let md = report_markdown(&s, &DEFAULT_BUDGET, board("u250").unwrap());
        for b in &BOARDS {
            assert!(md.contains(&format!("| {} | {} |", b.name, b.part)));
        }
        let j = report_json(&s, &DEFAULT_BUDGET, board("u250").unwrap());
        assert_eq!(j["within_budget"], false);
        assert_eq!(j["utilisation"].as_array().unwrap().len(), 3);
        assert!(j["over"][0].as_str().unwrap().starts_with("LUT 300000"));
    }
}
