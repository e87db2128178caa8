//! The workspace's layering rules, checked against the real crate graph.
//!
//! The rules are the table "Layering rules" in docs/architecture.md: this
//! test reads that table, asks `cargo metadata` for every workspace
//! member's dependencies, and fails when a crate depends on a workspace
//! crate its row does not allow, or when the table and the workspace name
//! different crates. So the page and the graph cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one row of the table allows.
#[derive(Debug, Default)]
struct Allowed {
    /// Normal (and build) dependencies.
    normal: BTreeSet<String>,
    /// Extra dev-dependencies (tests, benches, examples).
    dev: BTreeSet<String>,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Crate names in a table cell: backquoted names, or "-" for none.
fn crates_in(cell: &str) -> BTreeSet<String> {
    cell.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// The rows of the "Layering rules" table: `| crate | may depend on | may
/// also dev-depend on | why |`.
fn rules() -> BTreeMap<String, Allowed> {
    let page = std::fs::read_to_string(workspace_root().join("docs/architecture.md")).unwrap();
    let section = page
        .split("\n## ")
        .find(|s| s.starts_with("Layering rules"))
        .expect("docs/architecture.md has a section \"## Layering rules\"");
    let mut rules = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // cells[0] is the empty text before the first '|'.
        let name = crates_in(cells[1]);
        if name.len() != 1 {
            continue; // header and separator rows
        }
        let name = name.into_iter().next().unwrap();
        let row = Allowed {
            normal: crates_in(cells[2]),
            dev: crates_in(cells[3]),
        };
        assert!(rules.insert(name.clone(), row).is_none(), "crate `{name}` has two rows");
    }
    assert!(!rules.is_empty(), "the layering table has no rows");
    rules
}

/// Every workspace member and its dependencies on other members, as
/// (dependency, is a dev-dependency).
fn graph() -> Graph {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let members: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| members.contains(d["name"].as_str().unwrap()))
                .map(|d| {
                    (
                        d["name"].as_str().unwrap().to_string(),
                        d["kind"].as_str() == Some("dev"),
                    )
                })
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

type Graph = BTreeMap<String, Vec<(String, bool)>>;

/// Every edge the rules do not allow, and every crate on one side only.
fn violations(rules: &BTreeMap<String, Allowed>, graph: &Graph) -> Vec<String> {
    let mut broken = Vec::new();
    for (krate, deps) in graph {
        let Some(allowed) = rules.get(krate) else {
            broken.push(format!(
                "`{krate}` is a workspace member with no row in the layering table"
            ));
            continue;
        };
        // A crate's dev-dependency on itself (to turn on its own test
        // features) is no edge of the graph.
        for (dep, dev) in deps.iter().filter(|(dep, _)| dep != krate) {
            let ok = allowed.normal.contains(dep) || (*dev && allowed.dev.contains(dep));
            if !ok {
                let kind = if *dev { "dev-dependency" } else { "dependency" };
                broken.push(format!(
                    "`{krate}` has a {kind} on `{dep}`, which its row does not allow"
                ));
            }
        }
    }
    for krate in rules.keys().filter(|k| !graph.contains_key(*k)) {
        broken.push(format!(
            "the layering table has a row for `{krate}`, which is not a workspace member"
        ));
    }
    for (krate, allowed) in rules {
        for dep in allowed
            .normal
            .iter()
            .chain(&allowed.dev)
            .filter(|d| !rules.contains_key(*d))
        {
            broken.push(format!("`{krate}` may depend on `{dep}`, which has no row"));
        }
    }
    broken
}

#[test]
fn the_crate_graph_follows_the_layering_rules() {
    let broken = violations(&rules(), &graph());
    assert!(
        broken.is_empty(),
        "docs/architecture.md \"Layering rules\":\n  {}",
        broken.join("\n  ")
    );
}

/// The check can fail: the real graph plus one forbidden edge (the driver
/// depending on the RTL, which would make every host build rust-hdl), and
/// a dev-only permission used for a normal dependency.
#[test]
fn a_forbidden_edge_is_reported() {
    let rules = rules();
    let mut graph = graph();
    graph.get_mut("driver").unwrap().push(("hw".into(), false));
    assert_eq!(
        violations(&rules, &graph),
        ["`driver` has a dependency on `hw`, which its row does not allow"]
    );
    let mut graph = self::graph();
    graph.get_mut("hw").unwrap().push(("tb".into(), false));
    assert_eq!(
        violations(&rules, &graph),
        ["`hw` has a dependency on `tb`, which its row does not allow"]
    );
}
