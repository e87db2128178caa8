//! Runs the Vivado flow's Tcl and XDC against stubbed Vivado commands
//! (`bitstreams/common/check/check.tcl`, see there for what it checks) with
//! tclsh. tclsh is a required tool (scripts/deps.sh installs it): the test
//! fails when it is missing rather than passing without checking.

use std::path::Path;
use std::process::Command;

#[test]
fn vivado_tcl_and_xdc_pass_the_stubbed_check() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("common/check/check.tcl");
    let out = Command::new("tclsh")
        .arg(&script)
        .output()
        .unwrap_or_else(|e| panic!("cannot run tclsh ({e}); scripts/deps.sh installs it (Debian package `tcl`)"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(out.status.success(), "check.tcl failed:\n{stderr}");
    for board in ["u250", "u280", "u55c"] {
        assert!(stdout.contains(&format!("ok: {board} (")), "{board} not checked");
    }
    assert!(stdout.contains("all Tcl and XDC checks passed"));
}
