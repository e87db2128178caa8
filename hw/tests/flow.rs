//! The RTL flow end to end: emit, Verilator lint, Yosys synthesis smoke.
//! Verilator and Yosys are required (scripts/deps.sh installs them); set
//! MRC_SKIP_EDA=1 to skip when they are absent.

use hw::csr::BuildInfo;
use hw::flow;
use rust_hdl::prelude::*;

/// Whether the test should skip (`tool` missing and MRC_SKIP_EDA set).
fn skip_without(tool: &str) -> bool {
    verilated::skip_without_tool(tool, flow::tool_available(tool), "the RTL flow")
}

fn out_dir(name: &str) -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn verilog_is_deterministic_with_stable_names() {
    let a = flow::blocks(BuildInfo::FIXED);
    let b = flow::blocks(BuildInfo::FIXED);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.verilog, y.verilog, "{} differs between runs", x.name);
        assert!(
            x.verilog.contains(&format!("module {}(", x.name)),
            "{} top module name",
            x.name
        );
        // Module names never hold a `$` (ports may: `cfg$valid` is a
        // field of a bus bundle).
        for line in x.verilog.lines().filter(|l| l.starts_with("module ")) {
            let name = line["module ".len()..].split('(').next().unwrap_or("");
            assert!(!name.contains('$'), "module name with $: {line}");
        }
    }
}

#[test]
fn lint_passes() {
    if skip_without("verilator") || skip_without("yosys") {
        return;
    }
    let dir = out_dir("lint");
    let blocks = flow::blocks(BuildInfo::FIXED);
    flow::write_verilog(&dir, &blocks).unwrap();
    if let Err(e) = flow::lint(&dir, &blocks) {
        panic!("{e}");
    }
}

#[test]
fn synth_smoke() {
    if skip_without("yosys") {
        return;
    }
    let dir = out_dir("synth");
    let blocks: Vec<_> = flow::blocks(BuildInfo::FIXED)
        .into_iter()
        .filter(|b| b.name == "mrc_csr")
        .collect();
    flow::write_verilog(&dir, &blocks).unwrap();
    let stats = flow::synth(&dir, &blocks).unwrap_or_else(|e| panic!("{e}"));
    let s = &stats[0];
    // Registers: scratch 32, fault injection 185 (ctrl 3, seed 32, seed
    // pulse 1, probability 17, EV enables 4, 4 compares 128), config staging
    // 293 (table 4, index 16, 8 data words 256, go 1, row count 16),
    // doorbell 41, read data + valid 33; plus 32 per counter.
    let want = 32 + 185 + 293 + 41 + 33 + 32 * contract::regmap::N_COUNTERS as u64;
    assert!(
        s.ff >= want * 9 / 10 && s.ff <= want * 11 / 10,
        "want about {want}: {s:?}"
    );
    assert!(s.lut > 0 && s.logic_depth > 0, "{s:?}");
    assert!(s.lut_levels >= 1 && s.lut_levels <= s.logic_depth, "{s:?}");
    // The weighted levels lie between the LUT levels on that path and the
    // cell count; the CSR block is shallow (4 with this flow).
    assert!(
        s.levels >= s.levels_path.0 && s.levels <= s.logic_depth && s.levels <= 8,
        "{s:?}"
    );
    assert!(s.critical_path.len() as u64 > s.levels_path.0, "{s:?}");
    let (j, m) = flow::write_report(&dir, &stats).unwrap();
    assert!(std::fs::read_to_string(j).unwrap().contains("\"lut\""));
    assert!(std::fs::read_to_string(m).unwrap().contains("| mrc_csr |"));
}

/// The depth pass on a hand-made netlist: FF Q `q` -> LUT a -> 16 CARRY4
/// in series -> LUT b -> MUXF7 -> D; and a side path of 3 LUTs. Levels
/// weigh a LUT 1, a MUXF 1/4, a CARRY4 1/8: 2 + 0.25 + 2 = 4.25 -> 5.
#[test]
fn netlist_depth_weighs_luts_muxes_and_carries() {
    let mut cells = Vec::new();
    let cell = |name: &str, ty: &str, ins: &[u64], outs: &[u64]| {
        let mut dirs = serde_json::Map::new();
        let mut conns = serde_json::Map::new();
        for (k, i) in ins.iter().enumerate() {
            dirs.insert(format!("I{k}"), "input".into());
            conns.insert(format!("I{k}"), serde_json::json!([i]));
        }
        dirs.insert("O".into(), "output".into());
        conns.insert("O".into(), serde_json::json!(outs));
        (
            name.to_string(),
            serde_json::json!({"type": ty, "port_directions": dirs, "connections": conns}),
        )
    };
    cells.push(cell("a", "LUT2", &[2, 3], &[10]));
    let mut prev = 10;
    for k in 0..16u64 {
        cells.push(cell(&format!("c{k}"), "CARRY4", &[prev, 3], &[100 + k]));
        prev = 100 + k;
    }
    cells.push(cell("b", "LUT6", &[prev, 2, 3], &[200]));
    cells.push(cell("m", "MUXF7", &[200, 3], &[201]));
    cells.push(cell("s1", "LUT1", &[2], &[300]));
    cells.push(cell("s2", "LUT1", &[300], &[301]));
    cells.push(cell("s3", "INV", &[301], &[302]));
    let json = serde_json::json!({"modules": {"t": {
        "cells": serde_json::Map::from_iter(cells),
        "netnames": {
            "q": {"hide_name": 0, "bits": [2]},
            "d": {"hide_name": 0, "bits": [201]},
            // Yosys' own names: one with the operator and the emitted line
            // (named on the path), one of ABC's (not).
            "$flatten\\m10.$lt$/out/t.v:7815$3886.CO": {"hide_name": 1, "bits": [200]},
            "$abc$83931$auto$blifparse.cc:525:parse_blif$89879.A": {"hide_name": 1, "bits": [10]},
        },
    }}});
    let d = flow::netlist_depth(&json.to_string(), "t").unwrap();
    assert_eq!(d.cells, 19);
    assert_eq!(d.luts, 3, "the side path has the most LUTs");
    assert_eq!(d.carries, 16);
    assert_eq!(d.levels, 5);
    assert_eq!(d.levels_path, (2, 1, 16));
    assert_eq!(d.critical_path.first().map(String::as_str), Some("from q"));
    assert_eq!(d.critical_path.last().map(String::as_str), Some("MUXF7 -> d"));
    let b = &d.critical_path[d.critical_path.len() - 2];
    assert_eq!(
        b, "LUT6 ~ m10.$lt at t.v:7815",
        "the operator and line behind an unnamed net"
    );
    assert_eq!(d.critical_path[1], "LUT2", "ABC's names say nothing and are left out");
    // Two path ends: `d` (2 LUTs, a MUXF7, 16 CARRY4: 34 eighths) and the
    // side path's unnamed INV output (3 LUT-weight cells: 24 eighths).
    assert_eq!(d.ends, [("d".to_string(), 34), ("?".to_string(), 24)]);
}

#[test]
fn missing_tool_is_a_typed_error() {
    match flow::run_tool(
        "mrc-no-such-tool-xyz",
        "x",
        &mut std::process::Command::new("mrc-no-such-tool-xyz"),
    ) {
        Err(flow::FlowError::ToolMissing { .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn lint_fails_on_an_unwaived_warning_with_verilator_output() {
    if skip_without("verilator") || skip_without("yosys") {
        return;
    }
    let dir = out_dir("lint_bad");
    // A blocking assignment in a clocked block: BLKSEQ under -Wall.
    let v = "module bad(clock, d, q);\n  input wire clock;\n  input wire d;\n  output reg q;\n  always @(posedge clock) q = d;\nendmodule\n";
    let blocks = vec![flow::BlockRtl {
        name: "bad",
        verilog: v.into(),
    }];
    flow::write_verilog(&dir, &blocks).unwrap();
    match flow::lint(&dir, &blocks) {
        Err(flow::FlowError::ToolFailed {
            tool: "verilator",
            stderr,
            ..
        }) => assert!(stderr.contains("BLKSEQ"), "{stderr}"),
        other => panic!("expected a lint failure, got {other:?}"),
    }
}

/// A packed word for the Yosys front-end test.
#[derive(LogicStruct, Default, Clone, Copy, PartialEq, Debug)]
struct Word {
    a: Bits<8>,
    b: Bits<16>,
}

/// A field's bits read straight off a sub-block's struct-typed port
/// (`fifo.data_out.val().b.get_bits(..)`), which rust-hdl emits as a part
/// select of a part select (the TX path's send record's EV was read so).
#[derive(LogicBlock, Default)]
struct FieldOfField {
    pub clock: Signal<In, Clock>,
    pub data_in: Signal<In, Word>,
    pub write: Signal<In, Bit>,
    pub read: Signal<In, Bit>,
    pub out: Signal<Out, Bits<4>>,
    fifo: SynchronousFIFO<Word, 2, 3, 1>,
}

impl Logic for FieldOfField {
    #[hdl_gen]
    fn update(&mut self) {
        self.fifo.clock.next = self.clock.val();
        self.fifo.data_in.next = self.data_in.val();
        self.fifo.write.next = self.write.val();
        self.fifo.read.next = self.read.val();
        self.out.next = self.fifo.data_out.val().b.get_bits::<4>(4);
    }
}

/// The same bits read through a `Local` signal first.
#[derive(LogicBlock, Default)]
struct FieldThroughLocal {
    pub clock: Signal<In, Clock>,
    pub data_in: Signal<In, Word>,
    pub write: Signal<In, Bit>,
    pub read: Signal<In, Bit>,
    pub out: Signal<Out, Bits<4>>,
    fifo: SynchronousFIFO<Word, 2, 3, 1>,
    head_b: Signal<Local, Bits<16>>,
}

impl Logic for FieldThroughLocal {
    #[hdl_gen]
    fn update(&mut self) {
        self.fifo.clock.next = self.clock.val();
        self.fifo.data_in.next = self.data_in.val();
        self.fifo.write.next = self.write.val();
        self.fifo.read.next = self.read.val();
        self.head_b.next = self.fifo.data_out.val().b;
        self.out.next = self.head_b.val().get_bits::<4>(4);
    }
}

/// `lint` runs Yosys's front end after Verilator, which accepts Verilog
/// Yosys rejects: the part select of a part select fails it, with Yosys's
/// message; read through a `Local` signal it passes.
#[test]
fn lint_fails_on_verilog_yosys_rejects() {
    if skip_without("verilator") || skip_without("yosys") {
        return;
    }
    let lint = |name: &'static str, rtl: flow::BlockRtl| {
        let dir = out_dir(name);
        let blocks = vec![rtl];
        flow::write_verilog(&dir, &blocks).unwrap();
        flow::lint(&dir, &blocks)
    };
    match lint(
        "field_of_field",
        flow::emit_block("field_of_field", &mut FieldOfField::default()),
    ) {
        Err(flow::FlowError::ToolFailed {
            tool: "yosys", stderr, ..
        }) => assert!(stderr.contains("dynamic range select"), "{stderr}"),
        other => panic!("expected Yosys to refuse it, got {other:?}"),
    }
    let through = flow::emit_block("field_through_local", &mut FieldThroughLocal::default());
    if let Err(e) = lint("field_through_local", through) {
        panic!("{e}");
    }
}

// ---- Width check (hw::flow::widen) ----

use hw::flow::widen::{self, WidenSink};

/// The send CQ / requester doorbell FIFO bug as it was: the occupancy of
/// 5-bit ring pointers compared inline with 16.
#[derive(LogicBlock, Default)]
struct OldFullTest {
    pub tail: Signal<In, Bits<5>>,
    pub head: Signal<In, Bits<5>>,
    pub full: Signal<Out, Bit>,
    /// Harmless: an increment assigned straight to a 5-bit target.
    pub tail_next: Signal<Out, Bits<5>>,
}

impl Logic for OldFullTest {
    #[hdl_gen]
    fn update(&mut self) {
        self.full.next = (self.tail.val() - self.head.val()) == 16;
        self.tail_next.next = self.tail.val() + 1;
    }
}

/// The fix: the difference narrowed through a 5-bit Local first.
#[derive(LogicBlock, Default)]
struct FixedFullTest {
    pub tail: Signal<In, Bits<5>>,
    pub head: Signal<In, Bits<5>>,
    pub full: Signal<Out, Bit>,
    used: Signal<Local, Bits<5>>,
}

impl Logic for FixedFullTest {
    #[hdl_gen]
    fn update(&mut self) {
        self.used.next = self.tail.val() - self.head.val();
        self.full.next = self.used.val() == 16;
    }
}

/// The retransmit engine's bugs as they were: a 24-bit PSN difference as
/// a bit_cast shift amount, `psn + 1 != nxt`; and the requester's
/// `bit_cast::<62, 24>(psn + npkts) << 32` packing.
#[derive(LogicBlock, Default)]
struct OldPsnTest {
    pub bitmap: Signal<In, Bits<64>>,
    pub p: Signal<In, Bits<24>>,
    pub base: Signal<In, Bits<24>>,
    pub nxt: Signal<In, Bits<24>>,
    pub shifted: Signal<Out, Bits<64>>,
    pub bad_cum: Signal<Out, Bit>,
    pub packed: Signal<Out, Bits<62>>,
    /// Harmless: a mask that keeps only bits the carry cannot reach, and a
    /// carry that a constant shift and a narrow cast drop again.
    pub low: Signal<Out, Bits<12>>,
    pub beats: Signal<Out, Bits<11>>,
}

impl Logic for OldPsnTest {
    #[hdl_gen]
    fn update(&mut self) {
        self.shifted.next = self.bitmap.val() >> bit_cast::<64, 24>(self.p.val() - self.base.val());
        self.bad_cum.next = self.p.val() + 1 != self.nxt.val();
        self.packed.next = bit_cast::<62, 24>(self.p.val() + self.base.val()) << 32;
        self.low.next = bit_cast::<12, 24>((self.p.val() + 1) & 0xFF);
        self.beats.next = bit_cast::<11, 24>((self.p.val() + 63) >> 13);
    }
}

fn findings_of<U: Block>(uut: &mut U) -> (String, widen::WidenReport) {
    let rtl = flow::emit_block("widen_test", uut);
    let report = widen::check_verilog(&rtl.verilog);
    (rtl.verilog, report)
}

#[test]
fn widen_check_finds_the_old_full_test_and_passes_the_fix() {
    let (v, r) = findings_of(&mut OldFullTest::default());
    assert!(r.unparsed.is_empty(), "{:?}", r.unparsed);
    assert_eq!(r.findings.len(), 1, "{:#?}\n{v}", r.findings);
    let f = &r.findings[0];
    assert_eq!(
        (f.sink, f.operand_width, f.context_width),
        (WidenSink::Compare, 5, 32),
        "{f}"
    );
    assert_eq!(f.expression, "tail - head");
    assert_eq!(f.module, "widen_test");
    assert!(
        v.lines().nth(f.line - 1).unwrap().contains("tail - head"),
        "line {} of\n{v}",
        f.line
    );
    // The lint path reports it as a typed error.
    let blocks = vec![flow::BlockRtl {
        name: "widen_test",
        verilog: v,
    }];
    match flow::check_widths(&blocks) {
        Err(e @ flow::FlowError::Widening { .. }) => assert!(e.to_string().contains("tail - head"), "{e}"),
        other => panic!("expected a width finding, got {other:?}"),
    }
    let (v, r) = findings_of(&mut FixedFullTest::default());
    assert!(r.findings.is_empty() && r.unparsed.is_empty(), "{:#?}\n{v}", r.findings);
    assert!(r.sites >= 2);
}

#[test]
fn widen_check_finds_the_old_psn_forms() {
    let (v, r) = findings_of(&mut OldPsnTest::default());
    assert!(r.unparsed.is_empty(), "{:?}", r.unparsed);
    let got: Vec<(WidenSink, &str, u32, u32)> = r
        .findings
        .iter()
        .map(|f| (f.sink, f.expression.as_str(), f.operand_width, f.context_width))
        .collect();
    assert_eq!(
        got,
        vec![
            (WidenSink::ShiftAmount, "p - base", 24, 64),
            (WidenSink::Compare, "p + 32'h1", 24, 32),
            (WidenSink::WideAssignment, "p + base", 24, 62),
        ],
        "{v}"
    );
}

/// Verilog's sizing rules on hand-written statements.
#[test]
fn widen_check_sizing_rules() {
    let check = |body: &str| {
        let v = format!(
            "module m(a, b, c, w, x, y, z);\n    input wire [4:0] a;\n    input wire [4:0] b;\n    input wire [7:0] c;\n    \
             output reg [31:0] w;\n    output reg [4:0] x;\n    output reg y;\n    output reg [63:0] z;\n    reg [7:0] mem[15:0];\n    \
             always @(*) begin\n        {body}\n    end\nendmodule\n"
        );
        let r = widen::check_verilog(&v);
        assert!(r.unparsed.is_empty(), "{body}: {:?}", r.unparsed);
        r.findings.iter().map(|f| f.sink).collect::<Vec<_>>()
    };
    // Same-width compare: no widening.
    assert_eq!(check("y = (a - b) < b;"), vec![]);
    // A 32-bit literal widens the compare.
    assert_eq!(check("y = (a - b) < 32'h3;"), vec![WidenSink::Compare]);
    assert_eq!(check("y = a + 32'h1 == b;"), vec![WidenSink::Compare]);
    // Truncating assignment; a wide one keeps the carry.
    assert_eq!(check("x = a + 32'h1;"), vec![]);
    assert_eq!(check("w = a + 32'h1;"), vec![WidenSink::WideAssignment]);
    // Added after a widening bit_cast: no carry is lost (5-bit operands
    // cast to 8 bits cannot carry out of 8); an 8-bit add cast to 64 after
    // the fact keeps its carry (the requester's PSN packing).
    assert_eq!(check("w = ((a) & 8'hff) + ((b) & 8'hff);"), vec![]);
    assert_eq!(
        check("w = ((c) & 8'hff) + ((c) & 8'hff);"),
        vec![WidenSink::WideAssignment]
    );
    assert_eq!(
        check("z = ((c + c) & 64'hffffffffffffffff) << 32'h20;"),
        vec![WidenSink::WideAssignment]
    );
    assert_eq!(
        check("z = (((c) & 64'hffffffffffffffff) + ((c) & 64'hffffffffffffffff)) << 32'h20;"),
        vec![]
    );
    // Inversion of a zero-extended operand sets the high bits.
    assert_eq!(check("y = ~a == 32'h0;"), vec![WidenSink::Compare]);
    assert_eq!(check("y = ~y & a[32'h0];"), vec![]);
    // Shift amounts, right-shifted values, conditions, indexes, reductions.
    // A shift amount is self-sized: `a - b` stays 5 bits there.
    assert_eq!(check("z = z >> (a - b);"), vec![]);
    assert_eq!(
        check("z = z >> ((a - b) & 64'hffffffffffffffff);"),
        vec![WidenSink::ShiftAmount]
    );
    assert_eq!(check("x = (a + 32'h1) >> b;"), vec![WidenSink::ShiftedRight]);
    assert_eq!(check("x = (a + 32'h1) >> 32'h1;"), vec![WidenSink::WideAssignment]);
    assert_eq!(check("x = ((a + 32'h1) >> 32'h1) & 5'hf;"), vec![]);
    assert_eq!(check("if (a - 32'h1) begin"), vec![WidenSink::Condition]);
    assert_eq!(check("y = c[a + 32'h1];"), vec![WidenSink::Index]);
    assert_eq!(check("y = |(a - b);"), vec![]);
    assert_eq!(check("y = |(a - 32'h1);"), vec![WidenSink::Reduction]);
    assert_eq!(check("x = mem[a - b];"), vec![]);
    assert_eq!(check("x = mem[a - 32'h1];"), vec![WidenSink::Index]);
    // Concatenation elements are self-sized: a 32-bit literal shows.
    assert_eq!(check("z = {a + 32'h1, b};"), vec![WidenSink::Concatenation]);
    assert_eq!(check("z = {a + b, b};"), vec![]);
    // Non-blocking assignment and a case selector.
    assert_eq!(check("x <= a - b;"), vec![]);
    assert_eq!(check("case (a + 32'h1)"), vec![WidenSink::Compare]);
    // A literal mask below the carry removes it; a constant minuend that
    // covers the subtrahend's range cannot borrow.
    assert_eq!(check("w = (a + 32'h1) & 32'hf;"), vec![]);
    assert_eq!(
        check("z = z << ((32'h40 - ((c[(32'h0)+:(6)]) & 7'h7f)) & 10'h3ff);"),
        vec![]
    );
    assert_eq!(
        check("z = z << ((32'h40 - ((c) & 7'h7f)) & 10'h3ff);"),
        vec![WidenSink::ShiftAmount]
    );
}

/// Every block of the design: every statement parsed, no finding outside
/// the allow-list, and every waiver still matches a statement.
#[test]
fn widen_check_passes_every_block() {
    let blocks = flow::blocks(BuildInfo::FIXED);
    for b in &blocks {
        let r = widen::check_verilog(&b.verilog);
        assert!(
            r.unparsed.is_empty(),
            "{}: statements the check cannot read: {:?}",
            b.name,
            &r.unparsed[..r.unparsed.len().min(5)]
        );
        assert!(r.sites > 10, "{}: {} sites", b.name, r.sites);
        for f in &r.findings {
            assert!(widen::is_waived(f), "{}: {f}", b.name);
        }
    }
    if let Err(e) = flow::check_widths(&blocks) {
        panic!("{e}");
    }
    let (open, stale) = widen::check_blocks(&blocks);
    assert!(
        open.is_empty() && stale.is_empty(),
        "stale waivers (match no statement): {stale:?}"
    );
    for w in widen::WIDEN_WAIVERS {
        assert!(w.reason.len() > 40, "a waiver says why: {}", w.statement);
    }
}
