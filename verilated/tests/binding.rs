//! The Verilator binding on a small design with narrow, 64-bit and wide
//! ports: values cross the FFI boundary intact, registers update at the
//! edge, combinational outputs are sampled before it, builds are cached,
//! two instances are independent, and waveform and coverage files appear.

use verilated::{build, parse_ports, BuildOptions, Dir, Model};

const V: &str = r#"
module wide_demo(clock, en, a, b, sum, count, en_and, big);
    input wire clock;
    input wire en;
    input wire [99:0] a;
    input wire [47:0] b;
    output reg [99:0] sum;
    output reg [15:0] count;
    output reg en_and;
    output reg [511:0] big;
    initial count = 16'd0;
    always @(posedge clock) begin
        sum <= a + {52'd0, b};
        if (en) count <= count + 16'd1;
    end
    always @(*) begin
        en_and = en & count[0];
        big = {a[99:0], a[99:0], a[99:0], a[99:0], a[99:0], 12'hABC};
    end
endmodule
"#;

#[test]
fn parses_non_ansi_ports_without_the_clock() {
    let s = parse_ports(V, "wide_demo").unwrap();
    let names: Vec<_> = s
        .ports
        .iter()
        .map(|p| (p.name.as_str(), p.dir, p.width, p.offset))
        .collect();
    assert_eq!(
        names,
        vec![
            ("en", Dir::In, 1, 0),
            ("a", Dir::In, 100, 1),
            ("b", Dir::In, 48, 5),
            ("sum", Dir::Out, 100, 0),
            ("count", Dir::Out, 16, 4),
            ("en_and", Dir::Out, 1, 5),
            ("big", Dir::Out, 512, 6),
        ]
    );
    assert_eq!((s.in_words, s.out_words), (7, 22));
    assert!(parse_ports("module x(a); input wire [3:z] a; endmodule", "x").is_err());
}

/// A rust-hdl interface field is a port named `bundle$field`.
const BUNDLE_V: &str = r#"
module bundle_demo(clock, s$a, s$b, m$sum);
    input wire clock;
    input wire [7:0] s$a;
    input wire [7:0] s$b;
    output reg [8:0] m$sum;
    always @(posedge clock) m$sum <= s$a + s$b;
endmodule
"#;

#[test]
fn ports_of_interfaces_keep_their_dollar_names() {
    let spec = parse_ports(BUNDLE_V, "bundle_demo").unwrap();
    let names: Vec<_> = spec.ports.iter().map(|p| (p.name.as_str(), p.cpp_name())).collect();
    assert_eq!(
        names,
        vec![
            ("s$a", "s__024a".to_string()),
            ("s$b", "s__024b".to_string()),
            ("m$sum", "m__024sum".to_string())
        ]
    );
    if verilated::skip_without_verilator("the binding") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("mrc-verilated-bundle-{}", std::process::id()));
    let opts = BuildOptions {
        quick_compile: true,
        ..BuildOptions::default()
    };
    let built = build(BUNDLE_V, "bundle_demo", &opts, &dir).unwrap();
    let mut m = Model::load(&built).unwrap();
    let (a, b, sum) = (m.port("s$a").unwrap(), m.port("s$b").unwrap(), m.port("m$sum").unwrap());
    m.set(a, 200);
    m.set(b, 100);
    m.step_n(2);
    assert_eq!(m.get(sum), 300);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn steps_wide_ports_and_caches_builds() {
    if verilated::skip_without_verilator("the binding") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("mrc-verilated-test-{}", std::process::id()));
    let opts = BuildOptions {
        trace: true,
        coverage: true,
        quick_compile: false,
    };
    let built = build(V, "wide_demo", &opts, &dir).unwrap();
    let modified = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).unwrap();
    let stamp = modified(&built.library);
    let again = build(V, "wide_demo", &opts, &dir).unwrap();
    assert_eq!(built.library, again.library);
    // A cache hit leaves the library alone (a rebuild renames a new one in).
    assert_eq!(modified(&again.library), stamp, "second build should be a cache hit");

    let mut m = Model::load(&built).unwrap();
    let mut other = Model::load(&built).unwrap();
    let (en, a, b, sum, count, en_and, big) = (
        m.port("en").unwrap(),
        m.port("a").unwrap(),
        m.port("b").unwrap(),
        m.port("sum").unwrap(),
        m.port("count").unwrap(),
        m.port("en_and").unwrap(),
        m.port("big").unwrap(),
    );
    assert!(m.port("nope").is_err());
    assert!(m.set_by_name("sum", 1).is_err(), "outputs cannot be set");
    m.trace(&dir.join("wave.fst")).unwrap();
    // a = 2^99 + 2^64 - 1 (crosses three words), b = 2^48 - 1.
    let mut a_bytes = vec![0xffu8; 8];
    a_bytes.extend([0, 0, 0, 0, 0]);
    a_bytes.push(0);
    a_bytes.resize(13, 0);
    a_bytes[12] = 0x08; // bit 99
    m.set_bytes(a, &a_bytes);
    m.set(b, (1 << 48) - 1);
    m.set(en, 1);
    // Before the first edge the register still holds its initial value.
    m.step();
    assert_eq!(m.get(count), 0, "outputs are sampled before the edge");
    m.step();
    assert_eq!(m.get(count), 1);
    // sum = a + b: 2^99 + 2^64 - 1 + 2^48 - 1 = 2^99 + 2^64 + 2^48 - 2.
    let s = m.get_bytes(sum);
    let want = {
        let mut w = [0u8; 13];
        let lo: u64 = (1u64 << 48) - 2; // low 64 bits after the carry
        w[..8].copy_from_slice(&lo.to_le_bytes());
        w[8] = 1; // bit 64
        w[12] = 0x08; // bit 99
        w
    };
    assert_eq!(s, want);
    // Combinational output follows the inputs within the cycle.
    assert!(m.get_bit(en_and), "count = 1 and en = 1");
    m.set(en, 0);
    m.settle();
    assert!(!m.get_bit(en_and));
    let bg = m.get_bytes(big);
    assert_eq!(bg.len(), 64);
    assert_eq!(u16::from_le_bytes([bg[0], bg[1]]) & 0xfff, 0xABC);
    m.step_n(10);
    assert_eq!(m.get(count), 2, "en low: count holds");
    assert_eq!(m.cycles(), 12);
    // The other instance has its own state.
    other.step();
    assert_eq!(other.get(count), 0);
    m.write_coverage(&dir.join("coverage.dat")).unwrap();
    drop(m);
    let fst = std::fs::metadata(dir.join("wave.fst")).unwrap();
    assert!(fst.len() > 100, "FST written ({} bytes)", fst.len());
    let cov = std::fs::read_to_string(dir.join("coverage.dat")).unwrap();
    assert!(cov.contains("wide_demo"), "coverage names the module");
    check_coverage_sources(&dir, &cov);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every source file a coverage point names (the `f` key of each `C`
/// line) still exists after the build, so `verilator_coverage --annotate`
/// can read it: the build must not point at its scratch directory. With
/// `verilator_coverage` on PATH, the annotation is made and counts the
/// design's lines.
fn check_coverage_sources(dir: &std::path::Path, cov: &str) {
    let mut files: Vec<&str> = cov
        .lines()
        .filter(|l| l.starts_with("C '"))
        .flat_map(|l| l.split('\u{1}'))
        .filter_map(|kv| kv.strip_prefix("f\u{2}"))
        .collect();
    files.sort_unstable();
    files.dedup();
    assert!(!files.is_empty(), "coverage points name their source file");
    for f in &files {
        assert!(
            std::path::Path::new(f).is_file(),
            "coverage names {f}, which is not there after the build"
        );
    }
    let out = dir.join("annotated");
    let run = std::process::Command::new("verilator_coverage")
        .arg("--annotate")
        .arg(&out)
        // Every file: by default only the poorly covered ones are written.
        .args(["--annotate-all", "--annotate-min", "1"])
        .arg(dir.join("coverage.dat"))
        .output();
    let Ok(run) = run else {
        eprintln!("verilator_coverage not on PATH: annotation not checked");
        return;
    };
    assert!(
        run.status.success(),
        "verilator_coverage --annotate: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let annotated = std::fs::read_to_string(out.join("wide_demo.v")).expect("the annotated design");
    // Count columns: ` 000012` on covered lines, `%000000` on the others.
    assert!(
        annotated
            .lines()
            .any(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())),
        "covered lines counted:\n{annotated}"
    );
    assert!(
        annotated.contains("count <= count + 16'd1"),
        "the design's text annotated"
    );
}
