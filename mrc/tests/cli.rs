//! End-to-end checks of the `mrc` binary.

use std::path::PathBuf;
use std::process::Command;

fn mrc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mrc"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mrc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn json_transfer(args: &[&str]) -> (bool, serde_json::Value) {
    let out = mrc().arg("transfer").args(args).arg("--json").output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    (out.status.success(), v)
}

#[test]
fn mrc_survives_a_failed_ev_and_rc_on_that_path_does_not() {
    let common = [
        "--evs",
        "8",
        "--fail-ev",
        "0@50us",
        "--messages",
        "150",
        "--size",
        "64KiB",
        "--seed",
        "7",
    ];
    let (ok, mrc_report) = json_transfer(&[&["--transport", "mrc"][..], &common].concat());
    assert!(ok, "{mrc_report:#}");
    assert_eq!(mrc_report["messages_completed"], 150);
    assert_eq!(mrc_report["ok"], true);
    assert_eq!(mrc_report["final_state_a"], "Rts");
    assert!(
        mrc_report["link_ab"]["blackholed"].as_u64().unwrap() > 0,
        "the failure must have hit traffic"
    );
    let marked_bad = mrc_report["ev_changes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["ev_index"] == 0 && c["to"] == "AssumedBad");
    assert!(
        marked_bad,
        "EV 0 must be marked ASSUMED_BAD: {:#}",
        mrc_report["ev_changes"]
    );

    let (ok, rc_report) = json_transfer(&[&["--transport", "rc"][..], &common].concat());
    assert!(!ok, "RC's only path failed; it cannot complete");
    assert_eq!(rc_report["final_state_a"], "Error");
    assert_eq!(rc_report["error_completions"][0]["status"], "RetryExceeded");
}

#[test]
fn both_transports_deliver_under_loss_and_the_same_seed_gives_the_same_report() {
    for t in ["mrc", "rc"] {
        let args = [
            "--transport",
            t,
            "--loss",
            "0.01",
            "--duplicate",
            "0.01",
            "--corrupt",
            "0.01",
            "--messages",
            "60",
            "--size",
            "20000",
        ];
        let (ok, a) = json_transfer(&args);
        assert!(ok, "{t}: {a:#}");
        let (_, b) = json_transfer(&args);
        assert_eq!(a, b, "{t}: same seed, same report");
        assert!(
            a["counters_a"]["retransmitted_packets"].as_u64().unwrap() > 0,
            "{t}: 1% loss must cause retransmissions"
        );
    }
}

#[test]
fn bad_options_are_refused_with_a_message() {
    for args in [
        &["--evs", "0"][..],
        &["--loss", "1.5"],
        &["--fail-ev", "9@1us"],
        &["--size", "3GiB"],
        &["--mtu", "100"],
        &["--size", "lots"],
    ] {
        let out = mrc().arg("transfer").args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.trim().is_empty(), "{args:?}: no message");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A real MRC transfer, written by `--pcap`, is MRC 1.0 on the wire: our
/// own parser (`mrc decode`) gives every packet the MRC 1.0 verdict, and
/// stock tshark with the project's dissector decodes every frame as MRC 1.0
/// with no malformed packet and no expert error.
#[test]
fn pcap_of_a_transfer_is_mrc10_and_decodes_in_tshark() {
    let pcap = tmp("transfer.pcap");
    let out = mrc()
        .args([
            "transfer",
            "--messages",
            "20",
            "--size",
            "10000",
            "--loss",
            "0.02",
            "--imm-every",
            "2",
            "--pcap",
        ])
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));

    let decoded = mrc().arg("decode").arg("--json").arg(&pcap).output().unwrap();
    assert!(decoded.status.success(), "{}", String::from_utf8_lossy(&decoded.stderr));
    let text = String::from_utf8_lossy(&decoded.stdout);
    let records: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let (summary, packets) = records.split_last().expect("a summary line");
    assert!(packets.len() > 60, "too few packets: {}", packets.len());
    for p in packets {
        assert_eq!(p["verdict"], "mrc1.0", "{p}");
    }
    eprintln!("mrc decode: {summary}");

    if std::env::var_os("MRC_SKIP_TSHARK").is_some() {
        eprintln!("MRC_SKIP_TSHARK set: skipping the tshark check");
        return;
    }
    let lua = format!(
        "lua_script:{}",
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tools/wireshark/mrc.lua")
            .display()
    );
    let tshark = Command::new("tshark")
        .args(["-X", &lua, "-r"])
        .arg(&pcap)
        .args([
            "-T",
            "fields",
            "-e",
            "frame.protocols",
            "-e",
            "mrc10.bth.opcode",
            "-e",
            "mrc10.bth.destqp",
        ])
        .output()
        .expect("tshark not found: install it (apt-get install tshark) or set MRC_SKIP_TSHARK=1");
    let err = String::from_utf8_lossy(&tshark.stderr);
    assert!(tshark.status.success(), "{err}");
    assert!(!err.contains("Lua"), "dissector error: {err}");
    let text = String::from_utf8_lossy(&tshark.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), packets.len());
    let mut opcodes = std::collections::BTreeSet::new();
    for l in &lines {
        let f: Vec<&str> = l.split('\t').collect();
        assert_eq!(f.len(), 3, "{l:?}");
        assert!(f[0].ends_with("udp:mrc10"), "not decoded as MRC 1.0: {l:?}");
        let qp = u32::from_str_radix(f[2].trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("QP in {l:?}"));
        // The loopback scenario's QPs are 0x11 (A) and 0x22 (B).
        assert!(qp == 0x11 || qp == 0x22, "{l:?}");
        opcodes.insert(
            u8::from_str_radix(f[1].trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("opcode in {l:?}")),
        );
    }
    // WRITE FIRST, MIDDLE, LAST, LAST with immediate and SACK all appear.
    for op in [0xC6, 0xC7, 0xC8, 0xC9, 0xDC] {
        assert!(opcodes.contains(&op), "opcode {op:#x} missing from {opcodes:x?}");
    }
    let verbose = Command::new("tshark")
        .args(["-X", &lua, "-r"])
        .arg(&pcap)
        .arg("-V")
        .output()
        .expect("run tshark -V");
    let v = String::from_utf8_lossy(&verbose.stdout);
    assert!(!v.contains("Malformed"), "malformed packet");
    let errors: Vec<&str> = v
        .lines()
        .filter(|l| l.contains("Expert Info (Error") && !l.contains("Illegal checksum value (0)"))
        .collect();
    assert!(errors.is_empty(), "expert errors: {errors:#?}");
    let _ = std::fs::remove_file(&pcap);
}

#[test]
fn sim_runs_both_transports_and_writes_results_and_plots() {
    let out_dir = tmp("sim-out");
    let out = mrc()
        .args([
            "sim",
            "--tiers",
            "3",
            "--hosts",
            "16",
            "--traffic",
            "perm",
            "--size",
            "200KB",
            "--transport",
            "both",
            "--quiet",
        ])
        .args(["--fault", "down@20us:agg0.up0", "--time-limit", "5ms"])
        .args(["--queue-series", "--flow-series", "4", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // MRC routes around the dead link; RC flows hashed onto it cannot
    // finish, so the run as a whole reports failure (exit 1).
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("== MRC ==") && stdout.contains("== RC =="), "{stdout}");
    assert!(stdout.contains("conservation        balanced"), "{stdout}");
    for f in [
        "flows-mrc.csv",
        "flows-rc.csv",
        "summary-mrc.json",
        "summary-rc.json",
        "fct_cdf.png",
        "fct_cdf.svg",
        "goodput.png",
        "goodput.svg",
        "goodput-mrc.csv",
        "ev-events-rc.csv",
        "queues-mrc.csv",
        "flow-goodput-rc.csv",
    ] {
        let p = out_dir.join(f);
        assert!(
            std::fs::metadata(&p).map(|m| m.len() > 0).unwrap_or(false),
            "{} missing",
            p.display()
        );
    }
    let csv = std::fs::read_to_string(out_dir.join("flows-mrc.csv")).unwrap();
    assert_eq!(csv.lines().count(), 17, "header + 16 flows:\n{csv}");
    // The time series: one line per EV marked (the summary's count), and
    // goodput of the first four flows only.
    let events = std::fs::read_to_string(out_dir.join("ev-events-mrc.csv")).unwrap();
    assert!(events.starts_with("at_us,flow,ev_index,ev,event,reason\n"), "{events}");
    let marked: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary-mrc.json")).unwrap()).unwrap();
    assert_eq!(
        Some(events.lines().count() as u64 - 1),
        marked["ev_marked_bad"].as_u64(),
        "{events}"
    );
    let per_flow = std::fs::read_to_string(out_dir.join("flow-goodput-mrc.csv")).unwrap();
    let flows_seen: std::collections::BTreeSet<&str> =
        per_flow.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(flows_seen, ["0", "1", "2", "3"].into(), "{per_flow}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary-mrc.json")).unwrap()).unwrap();
    assert_eq!(summary["flows_completed"], 16);
    assert_eq!(summary["qp_errors"], 0);
    let rc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary-rc.json")).unwrap()).unwrap();
    assert!(
        rc["flows_completed"].as_u64().unwrap() < 16,
        "the dead link must stall some RC flow: {rc:#}"
    );
}

#[test]
fn sim_reads_htsim_files_and_is_deterministic() {
    let anchors = sim::anchors::htsim_dir_or_panic();
    let run = || {
        let out = mrc()
            .args(["sim", "--json", "--topo"])
            .arg(anchors.join("fat_tree_128_1os.topo"))
            .arg("--tm")
            .arg(anchors.join("perm_128n_128c_2MB.cm"))
            .args(["--evs", "32", "--seed", "3"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let a = run();
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    let w: serde_json::Value = serde_json::from_str(&run()).unwrap();
    // Everything but the wall time is the same.
    assert_eq!(
        v["runs"][0]["summary"], w["runs"][0]["summary"],
        "same seed, same summary"
    );
    assert_eq!(v["settings"], w["settings"]);
    assert!(v["runs"][0]["wall_s"].as_f64().unwrap() > 0.0);
    assert_eq!(v["runs"][0]["summary"]["flows_completed"], 128);
    assert_eq!(v["settings"]["evs"], 32);
    assert_eq!(v["settings"]["seed"], 3);
}

/// `--transport all`: MRC, lossy RC and the RoCE + PFC baseline, one JSON
/// document; the PFC run is lossless (no drop, trim or resend) and paused.
#[test]
fn sim_runs_the_roce_pfc_baseline_beside_mrc_and_rc() {
    let out = mrc()
        .args(["sim", "--hosts", "16", "--traffic", "incast", "--size", "300KB"])
        .args(["--buffer", "100KB", "--transport", "all", "--json", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|r| r["transport"].as_str().unwrap()).collect();
    assert_eq!(names, ["mrc", "rc", "roce-pfc"]);
    let pfc = &runs[2]["summary"];
    for k in ["drops", "trims", "retransmissions", "timeouts"] {
        assert_eq!(pfc[k], 0, "{k}: {pfc:#}");
    }
    assert!(pfc["pfc_pauses"].as_u64().unwrap() > 0, "{pfc:#}");
    assert_eq!(pfc["flows_completed"], 15);
    assert!(
        runs[1]["summary"]["retransmissions"].as_u64().unwrap() > 0,
        "lossy RC resends"
    );
    assert_eq!(v["settings"]["pfc_xoff_bytes"], 64000);
}

#[test]
fn sim_refuses_bad_faults_and_options() {
    for args in [
        &["--fault", "explode@1us:agg0.up0"][..],
        &["--fault", "down@1us:agg99.up0"],
        &["--fault", "degrade=2@1us:tor0.up0"],
        &["--fault", "down:agg0.up0"],
        &["--fault", "down@1us:plane1"],
        &["--fault", "down@1us:plane0.spine99"],
        &["--fault", "down@1us:plane0.router0"],
        &["--fault", "down@1us:host3.p1"],
        &["--radix", "7"],
        &["--radix", "10", "--oversub", "3"],
        &["--evs", "0"],
        &["--ecn", "9,1"],
        &["--loss", "1.5"],
        &["--loss", "NaN"],
        &["--evs", "200", "--backup-evs", "57"],
        &["--reverse-evs", "65"],
        &["--transport", "roce-pfc", "--pfc-xoff", "10KB", "--pfc-xon", "20KB"],
        &["--transport", "roce-pfc", "--pfc-timeout-exp", "25"],
    ] {
        let out = mrc()
            .args(["sim", "--hosts", "16", "--size", "10KB", "--quiet"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("mrc sim: ") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
    let out = mrc().args(["sim", "--topo", "/nonexistent.topo"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("mrc sim: cannot read /nonexistent.topo"), "{err}");
}

/// `mrc cosim`, small: two verilated NICs, 40 messages, an EV failing
/// early and 1% loss; the scoreboard passes, the golden model delivers the
/// same messages, and the report has the figures the docs promise.
#[test]
fn cosim_runs_two_nics_and_the_golden_model_side_by_side() {
    if verilated::skip_without_verilator("mrc cosim") {
        return;
    }
    let args = [
        "cosim",
        "--messages",
        "40",
        "--max-size",
        "3KiB",
        "--fail-ev",
        "2@10us",
        "--loss",
        "0.01",
        "--seed",
        "3",
        "--json",
    ];
    let out = mrc().args(args).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {} {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(out.status.success(), "{v:#}");
    let hw = &v["hardware"];
    assert_eq!(hw["ok"], true, "{hw:#}");
    assert_eq!(hw["messages_completed"], 40);
    assert!(hw["goodput_gbps"].as_f64().unwrap() > 0.0);
    assert!(hw["latency_p99_ns"].as_f64().unwrap() >= hw["latency_p50_ns"].as_f64().unwrap());
    assert!(hw["cycles_per_second"].as_f64().unwrap() > 0.0);
    let blackholed: u64 = hw["link_ab"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["blackholed"].as_u64().unwrap())
        .sum();
    assert!(
        blackholed > 0,
        "the failed EV must have swallowed traffic: {:#}",
        hw["link_ab"]
    );
    assert!(hw["retransmissions"].as_u64().unwrap() > 0);
    let g = &v["golden"];
    assert_eq!(g["golden_ok"], true, "{g:#}");
    assert_eq!(g["same_delivery"], true, "{g:#}");

    // A bad option is refused with a message and exit code 2.
    let out = mrc().args(["cosim", "--fail-ev", "9@1us"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--fail-ev"));
}

/// `mrc cosim --scenario`: `list` names the set; a flapping EV swallows
/// traffic while it is down and every message still arrives as the
/// golden model delivers it, on the legacy wire by default; unknown
/// names, bad flaps, a QP count beyond the core and an unknown wire are
/// refused in one line with exit code 2.
#[test]
fn cosim_scenarios_run_by_name() {
    let out = mrc().args(["cosim", "--scenario", "list"]).output().unwrap();
    assert!(out.status.success());
    let list = String::from_utf8_lossy(&out.stdout);
    for name in [
        "lossless",
        "loss-5",
        "ev-blackholed",
        "ev-flapping",
        "rate-25",
        "16-qps",
        "incast",
        "incast-nscc",
        "mpr-window-failure",
        "psn-wrap",
        "remote-access",
    ] {
        assert!(list.lines().any(|l| l.starts_with(name)), "{name}: {list}");
    }
    // Every allowance is listed with its reason.
    assert!(list.contains("allowance (resends):"), "{list}");
    assert!(list.contains("allowance (EVs marked ASSUMED_BAD):"), "{list}");
    for (args, what) in [
        (vec!["cosim", "--scenario", "nope"], "--scenario nope"),
        (vec!["cosim", "--flap-ev", "2@1us/4us/5us"], "--flap-ev"),
        (vec!["cosim", "--flap-ev", "2@1us"], "not an EV flap"),
        (vec!["cosim", "--start-psn", "16777216"], "--start-psn"),
        // Beyond the core's 256 QPs, or QPs without messages.
        (vec!["cosim", "--qps", "257"], "--qps 257: the core has 256 QPs per NIC"),
        (vec!["cosim", "--qps", "0"], "--qps 0: the core has 256 QPs"),
        (
            vec!["cosim", "--wire", "mrc10", "--qps", "140"],
            "--qps 140: with --wire mrc10 at most 139",
        ),
        (vec!["cosim", "--in-flight", "65"], "--in-flight 65: a QP keeps 1 to 64"),
        (vec!["cosim", "--in-flight", "0"], "--in-flight 0: a QP keeps 1 to 64"),
        // A wire the NICs do not speak.
        (vec!["cosim", "--wire", "mrc2"], "invalid value 'mrc2' for '--wire"),
        (
            vec!["cosim", "--qps", "16", "--messages", "8"],
            "--messages must be at least --qps",
        ),
        // A window the CC gate cannot hold, or one NSCC would move.
        (vec!["cosim", "--cwnd", "0"], "--cwnd 0: a window is 1 byte"),
        (vec!["cosim", "--cwnd", "4GiB"], "--cwnd 4294967296: a window is 1 byte"),
        (
            vec!["cosim", "--scenario", "incast-nscc", "--cwnd", "10KiB"],
            "--cwnd: scenario incast-nscc runs NSCC",
        ),
        // One trace per run: of one scenario, not of several.
        (
            vec!["cosim", "--scenario", "all", "--trace", "t.fst"],
            "--trace traces one scenario, and --scenario all names",
        ),
    ] {
        let out = mrc().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
    }
    if verilated::skip_without_verilator("mrc cosim --scenario") {
        return;
    }
    let out = mrc()
        .args(["cosim", "--scenario", "ev-flapping", "--messages", "60", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    assert!(out.status.success(), "{v:#}");
    let run = &v[0];
    assert_eq!(run["scenario"], "ev-flapping");
    assert_eq!(run["wire"], "legacy", "the default wire");
    assert_eq!(run["ok"], true, "{run:#}");
    assert_eq!(run["verdict"]["ok"], true, "{run:#}");
    assert_eq!(run["hardware"]["messages_completed"], 60);
    let swallowed: u64 = run["hardware"]["link_ab"][3]["blackholed"].as_u64().unwrap();
    assert!(
        swallowed > 0,
        "EV 3 was down half the time: {:#}",
        run["hardware"]["link_ab"]
    );
    assert_eq!(run["golden"]["same_delivery"], true);
}

/// `mrc cosim --scenario sweep/...`: a tiny slice of the sweep (MTU
/// 1 KiB, depth 1, one QP: the six message sizes) runs cell by cell
/// against the golden model and reports each cell with its verdict and
/// the command that runs it alone; `list` shows the family; tokens of no
/// axis, and filters no cell of the grid has, are refused in one line
/// with exit status 2.
#[test]
fn cosim_sweep_runs_cells_and_reports_each() {
    let out = mrc().args(["cosim", "--scenario", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(list.lines().any(|l| l.starts_with("sweep ")), "{list}");
    for (args, what) in [
        (vec!["cosim", "--scenario", "sweep/m300"], "MTU 300"),
        (vec!["cosim", "--scenario", "sweep/x"], "`x` is no token of a cell"),
        (
            vec!["cosim", "--scenario", "sweep/d64/hole"],
            "no cell of the grid has all of d64, hole",
        ),
        (
            vec!["cosim", "--scenario", "sweep/m4096/window", "--trace", "t.fst"],
            "--trace traces one cell, and --scenario sweep/m4096/window names",
        ),
    ] {
        let out = mrc().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
    }
    if verilated::skip_without_verilator("mrc cosim --scenario sweep") {
        return;
    }
    let out = mrc()
        .args(["cosim", "--scenario", "sweep/m1024/d1/q1", "--wire", "mrc10", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["wire"], "mrc10");
    let cells = v["outcomes"].as_array().unwrap();
    let names: Vec<&str> = cells.iter().map(|c| c["cell"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "m1024/1B/d1/q1/none",
            "m1024/mtu-1/d1/q1/none",
            "m1024/mtu/d1/q1/none",
            "m1024/mtu+1/d1/q1/none",
            "m1024/window/d1/q1/none",
            "m1024/beyond/d1/q1/none",
        ]
    );
    let bytes: Vec<u64> = cells.iter().map(|c| c["message_bytes"].as_u64().unwrap()).collect();
    assert_eq!(bytes, [1, 1023, 1024, 1025, 256 * 1024, 256 * 1024 + 1]);
    for c in cells {
        assert_eq!(c["ok"], true, "{c:#}");
        assert_eq!(c["hw_completed"], c["messages"], "{c:#}");
        assert_eq!(c["golden_completed"], c["messages"], "{c:#}");
        assert_eq!(
            c["command"].as_str().unwrap(),
            format!(
                "mrc cosim --scenario sweep/{} --wire mrc10 --seed 1",
                c["cell"].as_str().unwrap()
            )
        );
    }
    assert_eq!(v["failed"], 0);
    assert!(out.status.success(), "{v:#}");
}

fn json_perf(args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = mrc().arg("perf").args(args).arg("--json").output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {} {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), v)
}

/// `mrc perf` on the co-simulated RTL, one card in loopback: every WRITE completes, the data is
/// in place, the figures are consistent with each other; latency mode
/// posts one at a time. Needs `verilator` (skipped with MRC_SKIP_EDA=1).
#[test]
fn perf_measures_writes_on_the_cosimulated_rtl() {
    if verilated::skip_without_verilator("mrc perf") {
        return;
    }
    let (code, bw) = json_perf(&[
        "--endpoints",
        "loopback",
        "--qps",
        "2",
        "--tx-depth",
        "4",
        "--iters",
        "12",
        "--size",
        "4KiB",
        "--seed",
        "3",
    ]);
    assert_eq!(code, Some(0), "{bw:#}");
    // MRC 1.0 by default; two QPs per side on one card are QPs 0, 1, 3
    // and 4 (QP 2, MRC 1.0's endpoint QPN, would take no data).
    assert_eq!(bw["wire"], "mrc10");
    assert_eq!(bw["completed"], 24);
    assert_eq!(bw["bytes"], 24 * 4096);
    assert_eq!(bw["data_ok"], true);
    let sim_us = bw["sim_time_us"].as_f64().unwrap();
    let gbps = bw["bandwidth_gbps"].as_f64().unwrap();
    assert!(
        sim_us > 0.0 && (gbps - 24.0 * 4096.0 * 8.0 / (sim_us * 1000.0)).abs() < 1e-6,
        "{bw:#}"
    );
    let lat = &bw["latency"];
    assert!(lat["min_ns"].as_f64().unwrap() <= lat["p50_ns"].as_f64().unwrap());
    assert!(lat["p50_ns"].as_f64().unwrap() <= lat["p99_ns"].as_f64().unwrap());
    assert!(lat["p99_ns"].as_f64().unwrap() <= lat["max_ns"].as_f64().unwrap());
    assert_eq!(bw["retransmits"], 0, "no loss, no resend");

    let (code, l) = json_perf(&[
        "--endpoints",
        "loopback",
        "--mode",
        "lat",
        "--iters",
        "8",
        "--size",
        "64",
        "--tx-depth",
        "16",
    ]);
    assert_eq!(code, Some(0), "{l:#}");
    assert_eq!(l["tx_depth"], 1, "latency mode posts one WRITE at a time");
    assert_eq!(l["completed"], 8);
    // One at a time: the run lasts at least the sum of the latencies' minimum.
    assert!(l["sim_time_us"].as_f64().unwrap() * 1000.0 >= 8.0 * l["latency"]["min_ns"].as_f64().unwrap());
    // A one-packet WRITE does not take longer than a 4 KiB one in flight behind others.
    assert!(
        l["latency"]["p50_ns"].as_f64().unwrap() < bw["latency"]["p50_ns"].as_f64().unwrap(),
        "{l:#} {bw:#}"
    );
}

/// The PCIe host (`--host gen3x16`, the default) bounds what the card
/// reads: with one tag of 512 B and 2 us per read, no more than 512 B per
/// 2 us (2.05 Gb/s), while the ideal host with the same latency moves
/// several times that; the link's counters add up.
#[test]
fn perf_on_the_pcie_host_is_bounded_by_its_tags_and_latency() {
    if verilated::skip_without_verilator("mrc perf") {
        return;
    }
    let args = [
        "--size",
        "8KiB",
        "--iters",
        "4",
        "--tx-depth",
        "2",
        "--mtu",
        "4096",
        "--dma-latency",
        "2us",
        "--time-limit",
        "20ms",
    ];
    let (code, p) = json_perf(&[&args[..], &["--pcie-tags", "1"]].concat());
    assert_eq!(code, Some(0), "{p:#}");
    assert_eq!(p["host"], "gen3x16");
    let gbps = p["bandwidth_gbps"].as_f64().unwrap();
    let bound = 512.0 * 8.0 / 2000.0;
    assert!(
        gbps > 0.0 && gbps <= bound,
        "{gbps} Gb/s above one tag's {bound}: {p:#}"
    );
    // Card A reads (payload, descriptors), card B writes (placement).
    let (a, b) = (&p["pcie_a"], &p["pcie_b"]);
    assert!(a["tag_wait_cycles"].as_u64().unwrap() > 0, "{a:#}");
    // 32 KiB sent at least once: 64 requests of 512 B, each two
    // completions of 256 B.
    let reqs = a["read_requests"].as_u64().unwrap();
    assert!(reqs >= 64, "{a:#}");
    assert!(a["completions"].as_u64().unwrap() >= 2 * 64, "{a:#}");
    assert!(b["write_tlps"].as_u64().unwrap() >= 32 * 1024 / 256, "{b:#}");
    assert_eq!(b["read_requests"], 0, "{b:#}");
    let ratio = p["wire_ratio"].as_f64().unwrap();
    assert!(
        (ratio * p["wire_limit_gbps"].as_f64().unwrap() - gbps).abs() < 1e-9,
        "{p:#}"
    );

    let (code, i) = json_perf(&[&args[..], &["--host", "ideal"]].concat());
    assert_eq!(code, Some(0), "{i:#}");
    assert!(i["pcie_a"].is_null(), "{i:#}");
    let ideal = i["bandwidth_gbps"].as_f64().unwrap();
    assert!(ideal > 3.0 * gbps, "ideal {ideal} vs one tag {gbps}");
}

/// On the PCIe host a posted write takes `--posted-latency` to arrive:
/// the doorbell (an MMIO write) to reach the card and the completion (a
/// DMA write) to show in host memory. A 64-byte WRITE's latency, post to
/// completion, grows by both: twice the posted latency. (Both runs post:
/// with a latency of 0 the MMIO writes block one by one instead, and the
/// push's 31 writes would cost their round trips there.)
#[test]
fn perf_pays_the_posted_latency_for_the_doorbell_and_the_completion() {
    if verilated::skip_without_verilator("mrc perf") {
        return;
    }
    let lat = |posted: &str| {
        let (code, v) = json_perf(&[
            "--endpoints",
            "loopback",
            "--mode",
            "lat",
            "--iters",
            "4",
            "--size",
            "64",
            "--posted-latency",
            posted,
        ]);
        assert_eq!(code, Some(0), "{v:#}");
        assert_eq!(v["completed"], 4, "{v:#}");
        assert_eq!(v["data_ok"], true, "{v:#}");
        v["latency"]["min_ns"].as_f64().unwrap()
    };
    let (one_us, three_us) = (lat("1us"), lat("3us"));
    let added = three_us - one_us;
    assert!(
        (3_900.0..=4_300.0).contains(&added),
        "posted latency 2 us more added {added} ns to a WRITE's latency ({one_us} -> {three_us}), not about 4 us"
    );
}

#[test]
fn perf_refuses_bad_options() {
    for args in [
        &["--size", "0"][..],
        &["--evs", "0"],
        &["--fail-ev", "9@1us"],
        &["--qps", "65"],
        &["--mtu", "1000"],
        &["--iters", "0"],
        &["--loss", "1.5"],
        &["--endpoints", "loopback", "--loss", "0.1"],
        &["--pcie-max-payload", "100"],
        &["--pcie-max-read", "8192"],
        &["--pcie-tags", "0"],
    ] {
        let out = mrc().arg("perf").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("mrc perf: invalid option") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

/// `mrc perf` between two co-simulated cards over `cosim::fabric` (the
/// default endpoints), with the fabric's delays, the cards on the legacy
/// profile: completes, data in place, and the latency includes at least
/// the fabric's round trip.
#[test]
fn perf_runs_between_two_cards_over_the_fabric() {
    if verilated::skip_without_verilator("mrc perf") {
        return;
    }
    let (code, r) = json_perf(&[
        "--endpoints",
        "fabric",
        "--iters",
        "8",
        "--size",
        "8KiB",
        "--tx-depth",
        "4",
        "--delay",
        "1us",
        "--wire",
        "legacy",
    ]);
    assert_eq!(code, Some(0), "{r:#}");
    assert_eq!(r["endpoints"], "fabric");
    assert_eq!(r["wire"], "legacy");
    assert_eq!(r["completed"], 8);
    assert_eq!(r["data_ok"], true);
    assert!(
        r["latency"]["min_ns"].as_f64().unwrap() > 2000.0,
        "a WRITE's ACK crosses the fabric twice (1 us each way): {r:#}"
    );
    let (code, l) = json_perf(&[
        "--endpoints",
        "fabric",
        "--mode",
        "lat",
        "--iters",
        "4",
        "--size",
        "64",
        "--delay",
        "3us",
    ]);
    assert_eq!(code, Some(0), "{l:#}");
    assert!(
        l["latency"]["min_ns"].as_f64().unwrap() > 6000.0,
        "3 us each way: {l:#}"
    );
}

/// 64-byte WRITEs of 8 QPs at depth 32: card A sends faster than its
/// retransmit engine can take both the send records and the SACKs, and
/// the admission holds its packets (`adm_ack_backlog`) so that no ACK
/// frame is discarded at its ingress. Without the hold card A discarded
/// 75 of the 1,200 ACK frames of this run.
#[test]
fn perf_pushes_back_on_sending_instead_of_discarding_acks() {
    if verilated::skip_without_verilator("mrc perf") {
        return;
    }
    let (code, r) = json_perf(&[
        "--size",
        "64",
        "--iters",
        "150",
        "--mtu",
        "4096",
        "--qps",
        "8",
        "--tx-depth",
        "32",
    ]);
    assert_eq!(code, Some(0), "{r:#}");
    assert_eq!(r["completed"], 1200, "{r:#}");
    assert_eq!(r["data_ok"], true);
    let counter = |name: &str| {
        r["counters_a"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c[0] == name)
            .map_or(0, |c| c[1].as_u64().unwrap())
    };
    assert!(counter("adm_ack_backlog") > 0, "the engine falls behind here: {r:#}");
    assert_eq!(counter("rx_discards"), 0, "{r:#}");
    assert_eq!(r["retransmits"], 0, "{r:#}");
}

/// A path failing mid-run between two cards: the WRITEs still complete
/// with their data in place, the fabric swallowed frames, the card resent
/// them and marked the EV bad.
#[test]
fn perf_survives_a_failed_path_over_the_fabric() {
    if verilated::skip_without_verilator("mrc perf") {
        return;
    }
    let (code, r) = json_perf(&[
        "--iters",
        "30",
        "--size",
        "4KiB",
        "--tx-depth",
        "4",
        "--fail-ev",
        "2@10us",
    ]);
    assert_eq!(code, Some(0), "{r:#}");
    assert_eq!(
        (r["completed"].as_u64(), r["data_ok"].as_bool()),
        (Some(30), Some(true)),
        "{r:#}"
    );
    assert!(
        r["frames_blackholed"].as_u64().unwrap() > 0,
        "the failure hit traffic: {r:#}"
    );
    assert!(r["retransmits"].as_u64().unwrap() > 0, "{r:#}");
    assert!(r["evs_marked_bad"].as_u64().unwrap() > 0, "{r:#}");
}

/// A reader that stops early (`mrc sim | head -1`) closes stdout: the
/// program ends as Unix tools do, killed by SIGPIPE, with no panic message.
#[test]
fn a_closed_stdout_ends_the_program_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    for args in [
        &["sim", "--hosts", "16", "--size", "10KB", "--quiet"][..],
        &["transfer", "--messages", "20"],
        &["rtl", "regmap"],
    ] {
        // The reader is gone before the program starts: a pipe whose read
        // end is closed (dropping a piped stdout after `spawn` raced with
        // a fast program on a loaded machine, which then wrote everything
        // into the pipe and exited 0).
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `pipe` fills both descriptors; each is owned once below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: fds[0] is the read end just created and used nowhere else.
        unsafe { libc::close(fds[0]) };
        // SAFETY: fds[1] is the write end just created; the File owns it.
        let write_end = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) };
        let child = mrc()
            .args(args)
            .stdout(Stdio::from(write_end))
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
        assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{args:?}: {:?}", out.status);
    }
}

/// An unknown `--block` is refused before anything is emitted.
#[test]
fn rtl_synth_refuses_an_unknown_block() {
    let dir = tmp("rtl-unknown-block");
    let out = mrc()
        .args(["rtl", "synth", "--block", "foo", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("'foo'") && err.contains("mrc_core"), "{err}");
    assert!(!dir.exists(), "nothing is written for a refused block");
}

/// A topology too large for this machine's memory is refused, with the
/// estimate and the host count that fits, before it is built.
#[test]
fn sim_refuses_a_topology_larger_than_memory() {
    let out = mrc().args(["sim", "--hosts", "100000000", "--quiet"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("GB") && err.contains("at most"), "{err}");
}

/// Flags that another flag makes meaningless are refused, not ignored.
#[test]
fn sim_refuses_conflicting_flags() {
    let anchors = sim::anchors::htsim_dir_or_panic();
    let topo = anchors.join("fat_tree_128_1os.topo");
    let cm = anchors.join("perm_128n_128c_2MB.cm");
    let (topo, cm) = (topo.to_str().unwrap(), cm.to_str().unwrap());
    let out_dir = tmp("sim-bench-out");
    for args in [
        &["--topo", topo, "--hosts", "64"][..],
        &["--topo", topo, "--link-gbps", "400"],
        &["--hosts", "16", "--traffic", "incast", "--tm", cm],
        &["--hosts", "16", "--traffic", "perm", "--incast-senders", "4"],
        &["--hosts", "16", "--bench", "--out", out_dir.to_str().unwrap()],
    ] {
        let out = mrc()
            .args(["sim", "--quiet", "--time-limit", "10us"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: ran anyway");
        assert!(err.contains("cannot be used with"), "{args:?}: {err}");
    }
}

/// An `--out` that cannot be written is refused before the run.
#[test]
fn sim_checks_out_before_running() {
    let file = tmp("sim-out-is-a-file");
    std::fs::write(&file, "").unwrap();
    let out = mrc()
        .args(["sim", "--hosts", "16", "--size", "10KB", "--quiet", "--out"])
        .arg(file.join("sub"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        out.stdout.is_empty(),
        "ran before checking --out: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(err.starts_with("mrc sim: cannot write") && err.contains("sub"), "{err}");
}

/// A run that leaves flows unfinished says so on stderr, not only by exit 1.
#[test]
fn sim_says_why_it_fails() {
    let out = mrc()
        .args([
            "sim",
            "--hosts",
            "16",
            "--size",
            "200KB",
            "--transport",
            "rc",
            "--quiet",
        ])
        .args(["--fault", "down@20us:agg0.up0", "--time-limit", "5ms"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("mrc sim: RC: ") && err.contains("of 16 flows did not complete"),
        "{err}"
    );
}

/// `--json` prints one JSON document whatever the transports (two
/// documents, one per transport, are not JSON), with the run's settings.
#[test]
fn sim_json_is_one_document_with_its_settings() {
    let out = mrc()
        .args([
            "sim",
            "--json",
            "--hosts",
            "16",
            "--tiers",
            "2",
            "--size",
            "64KiB",
            "--transport",
            "both",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not one JSON document ({e}): {text}"));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["transport"], "mrc");
    assert_eq!(runs[1]["transport"], "rc");
    assert_eq!(v["settings"]["hosts"], 16);
    assert_eq!(v["settings"]["transport"], "both");
    assert_eq!(v["settings"]["size_bytes"], 65536);
}

/// perftest's habits: `-a` sweeps 2 B up to `-s` (one report each), `-n`
/// and `-q` set iterations and QPs, and the text output has perftest's
/// columns, in MB/s unless `--report_gbits`.
#[test]
fn perf_takes_perftest_flags() {
    if verilated::skip_without_verilator("mrc perf") {
        return;
    }
    let (code, v) = json_perf(&[
        "-a",
        "-s",
        "8",
        "-n",
        "2",
        "-q",
        "1",
        "--endpoints",
        "loopback",
        "--quiet",
    ]);
    assert_eq!(code, Some(0), "{v:#}");
    let sizes: Vec<u64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["size"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [2, 4, 8]);
    assert!(v.as_array().unwrap().iter().all(|r| r["ok"] == true && r["iters"] == 2));
    let out = mrc()
        .args([
            "perf",
            "-s",
            "64",
            "-n",
            "2",
            "--endpoints",
            "loopback",
            "--quiet",
            "--report_gbits",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(" #bytes     #iterations    BW average[Gb/sec]   MsgRate[Mpps]"),
        "{text}"
    );
}

/// MRC's fabric of planes (issue 19): a whole plane, one switch of a plane
/// and one host port fail; MRC finishes every flow on the other planes.
#[test]
fn sim_fails_a_plane_a_switch_and_a_host_port() {
    for link in [
        "plane1",
        "plane1.agg0",
        "plane2.tor1",
        "host3.p2",
        "plane3.tor0.up1",
        "plane0.spine1",
    ] {
        let out = mrc()
            .args(["sim", "--tiers", "3", "--hosts", "32", "--planes", "4", "--evs", "16"])
            .args(["--traffic", "perm", "--size", "64KB", "--json", "--quiet"])
            .args(["--fault", &format!("down@5us:{link}"), "--time-limit", "20ms"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{link}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let s = &v["runs"][0]["summary"];
        assert_eq!(s["flows_completed"], 32, "{link}: {s:#}");
        assert!(
            s["drop_link_down"].as_u64().unwrap() > 0,
            "{link}: nothing crossed the failed links: {s:#}"
        );
    }
}

/// `--radix 512 --tiers 2` builds the MRC paper's plane: 512 leaves of 256
/// hosts, 256 spines of radix 512 (here with 1,024 hosts: 4 leaves).
#[test]
fn sim_radix_sets_the_leaf_and_spine_counts() {
    let out = mrc()
        .args([
            "sim", "--tiers", "2", "--radix", "512", "--hosts", "1024", "--planes", "2",
        ])
        .args(["--traffic", "perm", "--size", "4KB", "--quiet"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout
            .starts_with("2-tier leaf-spine, 1024 hosts, 256 per leaf, 4 leaves (256 uplinks), 256 spines, 2 plane(s)"),
        "{stdout}"
    );
}

/// `--radix K --oversub O` needs K to split into hosts and uplinks at O:1,
/// that is a multiple of O + 1: the refusal says so (8 runs at 3:1).
#[test]
fn sim_radix_refusal_names_the_multiple_that_works() {
    let out = mrc()
        .args(["sim", "--tiers", "2", "--hosts", "24", "--size", "4KB", "--quiet"])
        .args(["--radix", "8", "--oversub", "3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = mrc()
        .args(["sim", "--tiers", "2", "--hosts", "24", "--size", "4KB", "--quiet"])
        .args(["--radix", "10", "--oversub", "3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a multiple of 4 is needed"), "{err}");
}
