//! `mpirun -np N mrc sim` (issue 19): the same scenario on 1, 2 and 4 MPI
//! ranks writes the same per-flow CSV, byte for byte, and the same EV
//! events and goodput series. Real OpenMPI (`mpirun` from apt, installed
//! by scripts/deps.sh); the ranks oversubscribe this machine's cores.

use std::path::Path;
use std::process::Command;

/// `mpirun -np ranks mrc sim ARGS --out DIR`; the run's stdout.
fn mpirun(ranks: u32, args: &[&str], out: &Path) -> String {
    let o = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", &ranks.to_string()])
        .arg(env!("CARGO_BIN_EXE_mrc"))
        .arg("sim")
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("mpirun runs (scripts/deps.sh installs openmpi-bin)");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{ranks} ranks: {}\n{stdout}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn one_two_and_four_ranks_write_the_same_flows() {
    let dir = std::env::temp_dir().join(format!("mrc-sim-mpi-{}", std::process::id()));
    // A 64-host fat tree with 2 planes (Port Status Updates cross ranks),
    // a permutation, 0.1% random loss and a link going down.
    let args = [
        "--hosts",
        "64",
        "--planes",
        "2",
        "--traffic",
        "perm",
        "--size",
        "128KiB",
        "--evs",
        "16",
        "--loss",
        "0.001",
        "--fault",
        "down@5us:host3",
        "--quiet",
    ];
    let mut outputs = Vec::new();
    for ranks in [1, 2, 4] {
        let out = dir.join(format!("np{ranks}"));
        let stdout = mpirun(ranks, &args, &out);
        if ranks > 1 {
            assert!(stdout.contains(&format!("{ranks} parts (MPI ranks)")), "{stdout}");
        }
        // Rank 0 alone reports: one summary, whatever the ranks.
        assert_eq!(stdout.matches("== MRC ==").count(), 1, "{stdout}");
        outputs.push((
            ranks,
            read(&out.join("flows-mrc.csv")),
            read(&out.join("ev-events-mrc.csv")),
            read(&out.join("goodput-mrc.csv")),
        ));
    }
    let (_, flows, evs, goodput) = &outputs[0];
    let csv = String::from_utf8_lossy(flows);
    assert_eq!(csv.lines().count(), 65, "a header and 64 flows:\n{csv}");
    for (ranks, f, e, g) in &outputs[1..] {
        assert!(f == flows, "{ranks} ranks: per-flow CSV differs from 1 rank");
        assert!(e == evs, "{ranks} ranks: EV events differ from 1 rank");
        assert!(g == goodput, "{ranks} ranks: goodput series differs from 1 rank");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn parts_under_mpi_ranks_are_refused_in_one_line() {
    let o = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "2"])
        .arg(env!("CARGO_BIN_EXE_mrc"))
        .args(["sim", "--hosts", "16", "--parts", "2", "--quiet"])
        .output()
        .expect("mpirun runs");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("mrc sim:")).collect();
    assert_eq!(ours.len(), 1, "rank 0 alone reports the refusal:\n{err}");
    assert!(ours[0].contains("--parts 2 under 2 MPI ranks"), "{err}");
}

/// `mpirun -np ranks PROGRAM ARGS` with a deadline: the run's status and
/// stderr, or a panic if it hangs (mpirun is stopped first, with SIGTERM
/// so that it stops its ranks).
fn mpirun_within(ranks: u32, program: &Path, args: &[&str], secs: u64) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    let mut child = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", &ranks.to_string()])
        .arg(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mpirun runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            std::thread::sleep(std::time::Duration::from_secs(2));
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "mpirun -np {ranks} {} {args:?} hung (stopped after {secs} s)",
                program.display()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("stderr");
    (status, err)
}

/// The lines `mrc sim` itself wrote to stderr.
fn ours(err: &str) -> Vec<&str> {
    err.lines().filter(|l| l.starts_with("mrc sim:")).collect()
}

#[test]
fn an_error_on_rank_0_alone_ends_every_rank() {
    // Only rank 0 writes --out, so only rank 0 finds it unwritable: the
    // other ranks must not wait for it in the run's first reduction.
    let (status, err) = mpirun_within(
        2,
        Path::new(env!("CARGO_BIN_EXE_mrc")),
        &["sim", "--hosts", "16", "--quiet", "--out", "/proc/no-such-dir/out"],
        30,
    );
    assert_eq!(status.code(), Some(2), "{err}");
    let ours = ours(&err);
    assert_eq!(ours.len(), 1, "reported once:\n{err}");
    assert!(ours[0].contains("cannot write"), "{err}");
}

#[test]
fn an_error_on_another_rank_alone_is_reported_by_rank_0() {
    // A traffic file that rank 1 alone cannot read (each rank reads its
    // own: on a cluster, a file missing on one node).
    let dir = std::env::temp_dir().join(format!("mrc-sim-mpi-tm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let tm = dir.join("one.cm");
    std::fs::write(&tm, "Nodes 16\nConnections 1\n0->1 id 1 start 0 size 4096\n").expect("cm");
    let script = dir.join("rank1-missing.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntm={tm}\n[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && tm={tm}.missing\nexec {mrc} sim --hosts 16 --quiet --tm $tm\n",
            mrc = env!("CARGO_BIN_EXE_mrc"),
            tm = tm.display()
        ),
    )
    .expect("script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (status, err) = mpirun_within(2, &script, &[], 30);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(status.code(), Some(2), "{err}");
    let ours = ours(&err);
    assert_eq!(ours.len(), 1, "reported once:\n{err}");
    assert!(ours[0].contains("rank 1") && ours[0].contains("missing"), "{err}");
}
