//! A client nobody here wrote: the OCP MRC benchmark (`mrc_example.c`,
//! `utils.c`, `utils.h` from `../shared/third_party/ocp-mrc-benchmark/`,
//! unmodified) built against our `mrc.h` and `lib_mrc.so`
//! (`scripts/libmrc.sh`) and run as server and client in two processes,
//! each on its own soft NIC on loopback: a short sweep of WRITE sizes, the
//! server validating every size's data. The same program linked against
//! the system's real libibverbs then runs on our library through the
//! library path, and the benchmark runs against two co-simulated cards
//! (the RTL) on UDP sockets.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn shared() -> PathBuf {
    std::env::var_os("MRC_SHARED").map_or_else(|| root().join("../shared"), PathBuf::from)
}

/// The static library of the crate (`libmrc_core.a`) that this test
/// build has compiled, with the co-simulation in it (libmrc's
/// dev-dependency on itself): its path from cargo's own report of the
/// workspace's test build, the command `scripts/test.sh` builds with, which
/// has nothing left to compile when this test runs there (run alone,
/// `cargo test -p libmrc` first builds every target of the workspace).
/// The tests link it rather than let `scripts/libmrc.sh` build the crate
/// again: that
/// build resolves features for libmrc alone, unlike the workspace's, and
/// would compile the whole dependency tree a second time (most of this
/// file's time in CI), for no check the link does not make. One archive
/// for all: the tests run in parallel.
fn core_archive() -> &'static Path {
    static CORE: OnceLock<PathBuf> = OnceLock::new();
    CORE.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let o = Command::new(cargo)
            .current_dir(root())
            .args([
                "build",
                "--workspace",
                "--all-targets",
                "--locked",
                "--message-format=json",
            ])
            .stderr(Stdio::inherit())
            .output()
            .expect("run cargo");
        assert!(o.status.success(), "cargo build --workspace --all-targets failed");
        let archive = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "mrc_core")
            .filter(|m| m["features"].as_array().is_some_and(|f| f.iter().any(|f| f == "cosim")))
            .flat_map(|m| m["filenames"].as_array().cloned().unwrap_or_default())
            .filter_map(|f| f.as_str().map(PathBuf::from))
            .find(|f| f.extension().is_some_and(|e| e == "a"));
        let archive = archive.expect("cargo reported no libmrc_core.a built with the co-simulation");
        // A copy of this test run's own: cargo reports the archive at the
        // profile's shared path, which a `cargo build -p libmrc` (without
        // the co-simulation) run meanwhile would overwrite.
        let own = root().join("target/libmrc-test-core/libmrc_core.a");
        std::fs::create_dir_all(own.parent().unwrap()).unwrap();
        std::fs::copy(&archive, &own).unwrap_or_else(|e| panic!("copy {}: {e}", archive.display()));
        own
    })
}

/// Build lib_mrc.so into `out` (`scripts/libmrc.sh`: the C layer, the
/// export map, the headers) from `core_archive`. Soft devices work the
/// same in a library that also links the co-simulation.
fn build_lib(out: &Path) -> PathBuf {
    let st = Command::new(root().join("scripts/libmrc.sh"))
        .arg(out)
        .env("MRC_LIBMRC_CORE", core_archive())
        .status()
        .expect("run scripts/libmrc.sh");
    assert!(
        st.success(),
        "scripts/libmrc.sh failed (libibverbs-dev and gcc: scripts/deps.sh)"
    );
    out.join("lib")
}

/// Compile the benchmark, unmodified, linking `libs` in order.
fn build_benchmark(out: &Path, name: &str, libs: &[PathBuf]) -> PathBuf {
    let src = shared().join("third_party/ocp-mrc-benchmark");
    assert!(
        src.join("mrc_example.c").is_file(),
        "the OCP benchmark is not at {} (set MRC_SHARED)",
        src.display()
    );
    let exe = out.join(name);
    let o = Command::new("gcc")
        .args(["-O2", "-std=gnu11", "-I"])
        .arg(out.join("include"))
        .arg("-o")
        .arg(&exe)
        .arg(src.join("mrc_example.c"))
        .arg(src.join("utils.c"))
        .args(libs)
        .arg("-lm")
        .output()
        .expect("gcc");
    assert!(
        o.status.success(),
        "the benchmark does not build: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    exe
}

/// A TCP port for the benchmark's exchange that no other test holds: one
/// the kernel hands out as free (a port derived from the process id
/// could be another test process's, started just before or after).
fn free_tcp_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Whether a socket listens on TCP `port` (/proc/net/tcp: the benchmark's
/// client does not retry its connection, and the server's stdout is
/// buffered, so this is how the test knows the server is ready).
fn listening(port: u16) -> bool {
    let want = format!(":{port:04X} ");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().any(|l| {
                l.split_whitespace()
                    .nth(1)
                    .is_some_and(|a| format!("{a} ").ends_with(&want))
                    && l.split_whitespace().nth(3) == Some("0A")
            })
        })
    })
}

/// Wait for `child` at most `limit`; killed (and the test failed) beyond.
fn wait_or_kill(mut child: std::process::Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "{what} did not finish within {limit:?}: {}\n{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A hang guard in wall time, far above a run's seconds.
const LIMIT: Duration = Duration::from_secs(300);

/// Server and client of `exe` on devices `kind`:127.0.NET.2 / .1 (soft
/// NICs, or co-simulated cards on sockets).
fn run_pair(exe: &Path, lib: &Path, kind: &str, net: u8, port: u16, args: &[&str]) -> (Output, Output) {
    run_pair_of(exe, lib, [kind, kind], net, port, args)
}

/// [`run_pair`] with the server on a device of kind `kinds[0]` and the
/// client on one of `kinds[1]`.
fn run_pair_of(exe: &Path, lib: &Path, kinds: [&str; 2], net: u8, port: u16, args: &[&str]) -> (Output, Output) {
    let env = |c: &mut Command, host: u8| {
        let kind = kinds[usize::from(host == 1)];
        c.env("MRC_DEVICE", format!("{kind}:127.0.{net}.{host}"))
            .env("LD_LIBRARY_PATH", lib)
            .env("MRC_LOG_LEVEL", "INFO")
            .args(["-d", "mrc0", "-g", "0", "-p", &port.to_string()])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
    };
    let mut s = Command::new(exe);
    env(&mut s, 2);
    let mut server = s.spawn().expect("start the server");
    let start = Instant::now();
    while !listening(port) {
        if let Some(st) = server.try_wait().unwrap() {
            let o = server.wait_with_output().unwrap();
            panic!(
                "the server exited ({st}) before listening: {}",
                String::from_utf8_lossy(&o.stdout)
            );
        }
        if start.elapsed() > LIMIT {
            let _ = server.kill();
            panic!("the server never listened on TCP {port}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut c = Command::new(exe);
    c.arg("127.0.0.1");
    env(&mut c, 1);
    // A client that fails or hangs fails the test: the server goes with
    // it (left running, a co-simulated card holds its address and a core
    // until killed by hand).
    let guard = KillOnPanic(Some(server));
    let client = wait_or_kill(c.spawn().expect("start the client"), LIMIT, "the client");
    let server = wait_or_kill(guard.take(), LIMIT, "the server");
    (server, client)
}

/// Kills the child if dropped while it is still held (a panic unwinding).
struct KillOnPanic(Option<std::process::Child>);

impl KillOnPanic {
    fn take(mut self) -> std::process::Child {
        self.0.take().expect("held")
    }
}

impl Drop for KillOnPanic {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn check(what: &str, o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{what} failed: {out}\n{err}");
    assert!(out.contains("MRC example completed successfully"), "{what}: {out}");
    assert!(!err.contains("[MRC ERROR]"), "{what}: {err}");
    out
}

#[test]
fn the_ocp_benchmark_runs_unmodified_over_two_soft_nics() {
    let out = root().join("target/libmrc-test");
    let lib = build_lib(&out);
    let ours = build_benchmark(
        &out,
        "mrc_example",
        &[lib.join("lib_mrc.so"), "-L".into(), lib.clone(), "-libverbs".into()],
    );
    let port = free_tcp_port();
    let (s, c) = run_pair(&ours, &lib, "soft", 16, port, &["-n", "50", "-s", "1048576", "-w", "5"]);
    check("server", &s);
    check_sweep(&check("client", &c), 21, 50, true);

    // Linked against the real libibverbs (its symbol versions): our
    // library takes its place through the library path.
    let real = PathBuf::from("/usr/lib/x86_64-linux-gnu/libibverbs.so.1");
    if real.is_file() {
        let exe = build_benchmark(&out, "mrc_example_real_verbs", &[real, lib.join("lib_mrc.so")]);
        let needed = Command::new("readelf").arg("-d").arg(&exe).output().unwrap();
        assert!(String::from_utf8_lossy(&needed.stdout).contains("[libibverbs.so.1]"));
        let (s, c) = run_pair(
            &exe,
            &lib,
            "soft",
            17,
            free_tcp_port(),
            &["-n", "10", "-s", "8192", "-w", "2"],
        );
        check("server (real libibverbs link)", &s);
        check("client (real libibverbs link)", &c);
    }
}

/// The client's table: one row per size of the sweep (`sizes` of them),
/// each with `iters` operations and, with `rates`, a message rate. (A
/// co-simulated card's rate can print as 0.000000 M/s on a loaded
/// machine: the table has six decimals of millions, and a simulation's
/// rate is not what its test checks.)
fn check_sweep(table: &str, sizes: usize, iters: u32, rates: bool) {
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.split_whitespace().next().is_some_and(|w| w.parse::<u64>().is_ok()))
        .collect();
    assert_eq!(rows.len(), sizes, "{table}");
    for r in &rows {
        let f: Vec<&str> = r.split_whitespace().collect();
        assert_eq!(f[1], iters.to_string(), "{r}");
        if rates {
            assert!(f[3].parse::<f64>().unwrap() > 0.0, "a message rate: {r}");
        }
    }
}

/// The same unmodified benchmark against the RTL: two processes, each
/// with a co-simulated card (the verilated core, its clock free-running)
/// whose MAC is a UDP socket on loopback (`cosim:` devices, lib_mrc.so
/// built with the co-simulation). The server validates every size's data,
/// 1 B to 64 KiB at the benchmark's default 4 KiB MTU.
#[test]
fn the_ocp_benchmark_runs_unmodified_against_cosimulated_cards() {
    if Command::new("verilator").arg("--version").output().is_err() {
        eprintln!("skipped: no verilator on PATH (scripts/deps.sh installs it)");
        return;
    }
    let out = root().join("target/libmrc-test-cosim");
    let lib = build_lib(&out);
    let exe = build_benchmark(&out, "mrc_example", &[lib.join("lib_mrc.so")]);
    let port = free_tcp_port();
    let (s, c) = run_pair(&exe, &lib, "cosim", 23, port, &["-n", "5", "-s", "65536", "-w", "1"]);
    check("server (co-simulated card)", &s);
    check_sweep(&check("client (co-simulated card)", &c), 17, 5, false);

    // Our hardware and our golden model through the unmodified client: the
    // server on a co-simulated card (its RTL sending MRC 1.0, as libmrc
    // sets every card), the client on a soft NIC (the golden model's MRC
    // 1.0 QP), in two processes over UDP. Each side's WRITEs (the client's
    // sweep, the server's sync WRITEs with immediates) are acknowledged by
    // the other, so a frame either side could not take would stall it.
    let (s, c) = run_pair_of(
        &exe,
        &lib,
        ["cosim", "soft"],
        28,
        free_tcp_port(),
        &["-n", "5", "-s", "65536", "-w", "1"],
    );
    check("server (co-simulated card, the client on a soft NIC)", &s);
    check_sweep(
        &check("client (soft NIC, the server on a co-simulated card)", &c),
        17,
        5,
        false,
    );
}

/// Build `libmrc/tests/<name>.c` against a fresh lib_mrc.so and run it
/// on the soft NICs `devices` ($MRC_DEVICE); it must exit 0 (its exit
/// status counts failed checks, which it names on stderr).
fn run_c_test(name: &str, devices: &str) {
    let out = root().join(format!("target/libmrc-test-{name}"));
    let lib = build_lib(&out);
    let exe = out.join(name);
    let o = Command::new("gcc")
        .args(["-O1", "-std=gnu11", "-Wall", "-Werror", "-pthread", "-I"])
        .arg(out.join("include"))
        .arg("-o")
        .arg(&exe)
        .arg(root().join(format!("libmrc/tests/{name}.c")))
        .arg(lib.join("lib_mrc.so"))
        .output()
        .expect("gcc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = Command::new(&exe)
        .env("MRC_DEVICE", devices)
        .env("LD_LIBRARY_PATH", &lib)
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "{name}: exit {:?}\n{}{}",
        r.status.code(),
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
}

/// Misuse through the C API (`libmrc/tests/misuse.c`): every refusal is
/// the API's error code, freeing an object others depend on is refused
/// with EBUSY, and nothing crashes.
#[test]
fn misuse_gets_error_codes_not_crashes() {
    run_c_test("misuse", "soft:127.0.19.1");
}

/// Completion channels and asynchronous events (`libmrc/tests/events.c`):
/// two soft NICs in one process; a program asleep on a channel wakes for
/// its completions, an unarmed CQ stays silent, a WRITE the peer refuses
/// puts the QP in ERR with `IBV_EVENT_QP_FATAL`.
#[test]
fn channels_wake_sleeping_programs_and_errors_raise_async_events() {
    run_c_test("events", "soft:127.0.20.1,soft:127.0.20.2");
}

/// `mrc_ctl.h` (`libmrc/tests/ctl.c`): profiles and their life cycle, a QP
/// spraying from exactly its EV profile's source ports, a denied EV seen
/// on the EV-event CQ by profile and value, and the refusals.
#[test]
fn control_profiles_steer_qps_and_ev_events_name_them() {
    run_c_test("ctl", "soft:127.0.21.1,soft:127.0.21.2");
}

/// `mrc.h`'s binary interface (`libmrc/tests/abi.c`): every struct's size
/// and field offsets and every enum and macro value as the public libmrc
/// API lays them out, checked when the file compiles.
#[test]
fn mrc_h_lays_out_as_the_public_api() {
    run_c_test("abi", "soft:127.0.22.1");
}
