//! `mrc rdma` between two processes, each with its own soft NIC, over real
//! UDP sockets on loopback: the WRITEs complete, the server's buffer ends
//! equal to the client's source, with and without loss; a capture of the
//! traffic on `lo` is MRC 1.0 to `mrc decode` (offloaded runs split) and,
//! without segmentation offload, to tshark with our dissector; the same
//! over IPv6, in a network namespace of its own.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn mrc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mrc"))
}

/// A TCP port for the exchange that no other test holds: one the kernel
/// hands out as free. (Derived from the process id plus a per-test
/// offset, two tests run as consecutive processes could get the same
/// port, and a client met the other test's server.)
fn tcp_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port().to_string()
}

fn server(ip: &str, port: &str, extra: &[&str]) -> Child {
    mrc()
        .args(["rdma", "--device", &format!("soft:{ip}"), "--tcp-port", port])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Run a client with options `extra` against a fresh server, both sides
/// with options `both`; both exit codes and the client's JSON report.
fn run_pair(net: u8, both: &[&str], extra: &[&str]) -> (i32, i32, serde_json::Value) {
    let port = tcp_port();
    let (sip, cip) = (format!("127.0.{net}.2"), format!("127.0.{net}.1"));
    let srv = server(&sip, &port, both);
    let out = mrc()
        .args(["rdma", "--device", &format!("soft:{cip}"), "--connect", "127.0.0.1"])
        .args(["--tcp-port", &port, "--json"])
        .args(both)
        .args(extra)
        .output()
        .unwrap();
    let s = srv.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {}\n{}\nserver: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&s.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), s.status.code().unwrap_or(-1), v)
}

#[test]
fn two_processes_write_over_soft_nics() {
    let (c, s, v) = run_pair(5, &[], &["-s", "64KiB", "-n", "200"]);
    assert_eq!((c, s), (0, 0), "{v:#}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["buffers_match"], true);
    assert!(
        v["tx_datagrams"].as_u64().unwrap() >= 200 * 16,
        "64 KiB at 4 KiB MTU: {v:#}"
    );
    assert!(v["gbps"].as_f64().unwrap() > 0.0);
}

/// With `--cq-mod`, one WRITE in N asks for a completion, and the last
/// one does too when N does not divide the count (else the run would
/// wait for it until `--timeout`): every WRITE lands, and the report says
/// the moderation.
#[test]
fn moderated_completions_cover_every_write() {
    let (c, s, v) = run_pair(
        11,
        &[],
        &[
            "-s",
            "4KiB",
            "-n",
            "1001",
            "-t",
            "32",
            "--cq-mod",
            "8",
            "--timeout",
            "5s",
        ],
    );
    assert_eq!((c, s), (0, 0), "{v:#}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["buffers_match"], true);
    assert_eq!(v["cq_mod"], 8);
    assert_eq!(v["iters"], 1001);
}

#[test]
fn every_write_completes_with_loss_on_the_socket_path() {
    let (c, s, v) = run_pair(6, &[], &["-s", "20000", "-n", "300", "--loss", "0.01", "-m", "1024"]);
    assert_eq!((c, s), (0, 0), "{v:#}");
    assert_eq!(v["buffers_match"], true);
    assert!(v["tx_lost"].as_u64().unwrap() > 0, "the knob dropped something: {v:#}");
}

/// By default the server polls its CQ until the client's end of run (its
/// soft NIC runs on the server's thread); `--server-waits` leaves the NIC
/// to the NIC's own thread while the server waits on the exchange. Both
/// deliver every WRITE (the client ignores the option).
#[test]
fn a_waiting_server_leaves_its_nic_to_its_thread() {
    let (c, s, v) = run_pair(15, &["--server-waits"], &["-s", "4KiB", "-n", "300", "-t", "32"]);
    assert_eq!((c, s), (0, 0), "{v:#}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["buffers_match"], true);
}

#[test]
fn latency_mode_reports_percentiles() {
    let (c, s, v) = run_pair(7, &[], &["--mode", "lat", "-s", "64", "-n", "200"]);
    assert_eq!((c, s), (0, 0), "{v:#}");
    let (p50, p99) = (v["lat_us_p50"].as_f64().unwrap(), v["lat_us_p99"].as_f64().unwrap());
    assert!(p50 > 0.0 && p99 >= p50, "{v:#}");
}

#[test]
fn rdma_refuses_bad_usage_in_one_line() {
    for (args, what) in [
        (vec!["rdma"], "--device"),
        (vec!["rdma", "--device", "card0"], "soft:IP"),
        (vec!["rdma", "--device", "soft:127.0.0.1", "--mtu", "3000"], "--mtu"),
        (vec!["rdma", "--device", "soft:127.0.0.1", "--evs", "0"], "--evs"),
        (
            vec!["rdma", "--device", "soft:127.0.0.1", "--timeout-exp", "25"],
            "--timeout-exp",
        ),
        (vec!["rdma", "--device", "soft:127.0.0.1", "--cq-mod", "0"], "--cq-mod"),
        (
            vec!["rdma", "--device", "soft:127.0.0.1", "-t", "16", "--cq-mod", "32"],
            "--cq-mod 32: 1..=--tx-depth (16)",
        ),
        (
            vec!["rdma", "--device", "soft:127.0.0.1", "--mode", "lat", "--cq-mod", "2"],
            "lat mode",
        ),
        (vec!["rdma", "--device", "vfio:0000:00:00.0"], "soft NICs"),
        (vec!["rdma", "--device", "soft:0.0.0.0"], "not one host's address"),
    ] {
        let out = mrc().args(&args).env_remove("MRC_DEVICE").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
    }
}

/// The EVs of `mrc rdma`'s QP by default: 8 from 0xC000.
const CLIENT_EVS: std::ops::Range<u64> = 0xC000..0xC008;

/// The packets of a capture of 50 WRITEs of 10,000 B at 2 KiB MTU as `mrc
/// decode --json` reads them: more than 250, every one MRC 1.0 with a
/// valid ICRC.
fn decoded_packets(file: &std::path::Path) -> Vec<serde_json::Value> {
    let decoded = mrc().arg("decode").arg("--json").arg(file).output().unwrap();
    let text = String::from_utf8_lossy(&decoded.stdout);
    assert!(decoded.status.success(), "{text}");
    let mut records: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    records.pop().expect("a summary line");
    assert!(
        records.len() > 250,
        "50 x 10000 B at 2 KiB MTU: {} packets",
        records.len()
    );
    for p in &records {
        assert_eq!(p["verdict"], "mrc1.0", "{p}");
    }
    records
}

/// The EVs the data packets (WRITEs) travelled on.
fn data_evs(packets: &[serde_json::Value]) -> std::collections::BTreeSet<u64> {
    packets
        .iter()
        .filter(|p| p["opcode"].as_str().is_some_and(|o| o.starts_with("WRITE")))
        .filter_map(|p| p["ev"].as_u64())
        .collect()
}

fn capture_tool() -> Option<PathBuf> {
    let ok = Command::new("dumpcap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then(|| PathBuf::from("dumpcap"))
}

/// A running dumpcap, stopped (SIGINT, so it closes its file) when
/// dropped: also when the test panics. A capture left behind runs its
/// filter on every loopback packet from then on, and slowed every later
/// soft-NIC benchmark on the host.
struct Capture(Child);

impl Drop for Capture {
    fn drop(&mut self) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGINT) };
        let _ = self.0.wait();
    }
}

/// Start dumpcap on `lo` for the given loopback network; `None` when it
/// cannot capture here (not installed, no permission).
fn start_capture(file: &PathBuf, net: u8) -> Option<Capture> {
    capture_tool()?;
    let _ = std::fs::remove_file(file);
    let mut child = Command::new("dumpcap")
        .args(["-i", "lo", "-q", "-P", "-f"])
        .arg(format!("udp port 4791 and net 127.0.{net}.0/24"))
        .arg("-w")
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    // dumpcap creates the file once the capture runs.
    let start = Instant::now();
    while !file.exists() {
        if start.elapsed() > Duration::from_secs(10) || child.try_wait().ok().flatten().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    Some(Capture(child))
}

/// Capture `mrc rdma` between two soft NICs on 127.0.`net`.0/24 (50 WRITEs
/// of 10,000 B at 2 KiB MTU, 2% loss, options `both` on both sides); the
/// capture file, or `None` when dumpcap cannot capture here.
fn capture_pair(net: u8, both: &[&str]) -> Option<PathBuf> {
    let file = std::env::temp_dir().join(format!("mrc-soft-{net}-{}.pcap", std::process::id()));
    let Some(cap) = start_capture(&file, net) else {
        assert!(
            std::env::var_os("MRC_REQUIRE_CAPTURE").is_none(),
            "dumpcap cannot capture on lo here"
        );
        eprintln!("dumpcap cannot capture on lo here (not installed or no permission): skipped");
        return None;
    };
    let (c, s, v) = run_pair(net, both, &["-s", "10000", "-n", "50", "-m", "2048", "--loss", "0.02"]);
    std::thread::sleep(Duration::from_millis(300));
    drop(cap);
    assert_eq!((c, s), (0, 0), "{v:#}");
    Some(file)
}

/// By default the soft NICs send runs of datagrams to a loopback peer
/// with segmentation offload, which a capture on `lo` records as one
/// oversized datagram per run: `mrc decode` splits them into their
/// packets, every one MRC 1.0 with a valid ICRC.
#[test]
fn a_capture_of_offloaded_runs_decodes_as_their_packets() {
    let Some(file) = capture_pair(10, &[]) else { return };
    let packets = decoded_packets(&file);
    let runs = packets.iter().filter(|p| p["segment"].as_u64() == Some(1)).count();
    assert!(runs > 0, "some records are offloaded runs, split");
    assert_eq!(
        data_evs(&packets),
        CLIENT_EVS.collect(),
        "source ports of the data packets"
    );
    let _ = std::fs::remove_file(&file);
}

/// Without segmentation offload every packet is its own frame, as on a
/// card's wire: `mrc decode` and tshark with our dissector read the same
/// packets.
#[test]
fn a_capture_of_soft_nic_traffic_is_mrc10_on_the_wire() {
    let Some(file) = capture_pair(8, &["--no-gso"]) else {
        return;
    };
    let packets = decoded_packets(&file);
    assert!(packets.iter().all(|p| p.get("segment").is_none()), "no offloaded run");
    // Each EV left from its own UDP source port (the EV value over IPv4):
    // the client's data packets came from all eight of its EVs' ports,
    // none from the NIC's own.
    assert_eq!(
        data_evs(&packets),
        CLIENT_EVS.collect(),
        "source ports of the data packets"
    );
    if std::env::var_os("MRC_SKIP_TSHARK").is_some() {
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
        .arg(&file)
        .args(["-T", "fields", "-e", "frame.protocols"])
        .output()
        .expect("tshark not found: install it (apt-get install tshark) or set MRC_SKIP_TSHARK=1");
    let out = String::from_utf8_lossy(&tshark.stdout);
    assert_eq!(out.lines().count(), packets.len());
    assert!(out.lines().all(|l| l.ends_with("udp:mrc10")), "{out}");
    let verbose = Command::new("tshark")
        .args(["-X", &lua, "-r"])
        .arg(&file)
        .arg("-V")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&verbose.stdout).contains("Malformed"));
    let _ = std::fs::remove_file(&file);
}

/// Two soft NICs on IPv6 addresses: a network namespace of the test's own
/// (`unshare -n`, which needs root or user namespaces; skipped otherwise)
/// whose `lo` takes two addresses, `mrc rdma` between them, and a capture
/// of the traffic that `mrc decode` reads as MRC 1.0 with valid ICRCs
/// (over IPv6 the ICRC covers the IPv6 header with the flow label
/// masked) and the client's EVs in the UDP source ports.
#[test]
fn two_processes_write_over_ipv6() {
    let probe = Command::new("unshare").args(["-n", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("unshare -n is not permitted here: skipped");
        return;
    }
    let exe = env!("CARGO_BIN_EXE_mrc");
    let file = std::env::temp_dir().join(format!("mrc-soft-v6-{}.pcapng", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let capture = capture_tool().is_some();
    let port = tcp_port();
    // Inside the namespace: lo up (127.0.0.1 for the TCP exchange) with
    // two IPv6 addresses, an optional capture, server, client.
    let script =
        format!(
        "set -e; ip link set lo up; ip -6 addr add fd01::1/128 dev lo nodad; ip -6 addr add fd01::2/128 dev lo nodad; \
         {cap} \
         {exe} rdma --device 'soft:[fd01::2]' --tcp-port {port} > /dev/null 2>&1 & srv=$!; \
         sleep 0.5; \
         {exe} rdma --device 'soft:[fd01::1]' --connect 127.0.0.1 --tcp-port {port} -s 10000 -n 50 -m 2048 --json; \
         wait $srv; \
         {stop}",
        cap = if capture {
            format!("dumpcap -q -P -i lo -f udp -w {} > /dev/null 2>&1 & cap=$!; sleep 1;", file.display())
        } else {
            String::new()
        },
        stop = if capture { "sleep 0.3; kill -INT $cap; wait $cap || true" } else { "true" },
    );
    let out = Command::new("unshare")
        .args(["-n", "sh", "-c", &script])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let json_start = text.find('{').expect("the client's JSON report");
    let v: serde_json::Value = serde_json::from_str(&text[json_start..]).unwrap();
    assert_eq!(v["ok"], true, "{v:#}");
    assert_eq!(v["buffers_match"], true, "{v:#}");
    assert_eq!(v["device"], "soft:[fd01::1]:4791", "the client's NIC is on IPv6");
    if !capture {
        eprintln!("no dumpcap: the IPv6 capture is skipped");
        return;
    }
    let packets = decoded_packets(&file);
    assert_eq!(data_evs(&packets), CLIENT_EVS.collect(), "the client's EVs");
    let _ = std::fs::remove_file(&file);
}
