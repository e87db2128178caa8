//! Where the htsim reference scenarios live.
//!
//! The project's shared folder sits beside the repository (`../shared` from
//! the workspace root) on developer machines and in CI; `MRC_SHARED` points
//! elsewhere when it does not.

use std::path::PathBuf;

/// The folder with htsim's `.topo` and `.cm` anchor files, if present.
pub fn htsim_dir() -> Option<PathBuf> {
    let shared = match std::env::var_os("MRC_SHARED") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    };
    let dir = shared.join("anchors/htsim");
    dir.is_dir().then_some(dir)
}

/// [`htsim_dir`] for tests: panics with a clear message when missing.
pub fn htsim_dir_or_panic() -> PathBuf {
    htsim_dir().unwrap_or_else(|| {
        panic!("htsim anchors not found: expected ../shared/anchors/htsim beside the repository, or set MRC_SHARED")
    })
}
