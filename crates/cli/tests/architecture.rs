//! The crate graph stays as documented: a crate that gains a dependency the architecture
//! forbids fails this test, with the rule's reason, and the rules here and in
//! docs/architecture.md stay the same list.
//!
//! The graph is read from `cargo metadata --no-deps` (the manifests, nothing resolved or
//! fetched), with the cargo that runs the tests (`CARGO`). The rules cover every kind of
//! dependency, dev and build included: a test that needs two crates together lives in the
//! crate that depends on both (the binary's, `cli`), so a library's tests never pull in what
//! the library itself must not see. For example, the engine's tests record through a test
//! double of `vernier_model::Recorder`, not through SQLite.
#![allow(clippy::expect_used)] // the helpers expect cargo metadata's documented output

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// (crate, dependency it must never have, why). A crate is named by its directory under
/// `crates/` (the binary's package `vernier` is `cli`); `*` is every crate of the workspace.
const FORBIDDEN: &[(&str, &str, &str)] = &[
    (
        "stats",
        "*",
        "statistics are a leaf library on plain slices",
    ),
    (
        "model",
        "*",
        "plain data shared by every crate depends on none of them",
    ),
    (
        "formats",
        "store",
        "a format turns bytes into sessions and back; storing them is the caller's",
    ),
    (
        "formats",
        "analysis",
        "an export carries what was recorded, never what was computed from it",
    ),
    (
        "formats",
        "sys",
        "a file reads the same on every machine; formats parse bytes, never the machine",
    ),
    (
        "report",
        "formats",
        "report presents loaded sessions; reading and writing files is formats'",
    ),
    (
        "setup",
        "bench",
        "the system check measures wake-ups with sys::pingpong; setup runs no benchmark",
    ),
    (
        "report",
        "store",
        "report presents data it is given; it never reads a database",
    ),
    ("report", "bench", "report presents results, not benchmarks"),
    (
        "report",
        "monitor",
        "report presents stored monitor data, not monitors",
    ),
    (
        "plot",
        "store",
        "figures are drawn from data they are given; they never read a database",
    ),
    ("plot", "bench", "figures show results, not benchmarks"),
    (
        "plot",
        "monitor",
        "figures show stored monitor data, not monitors",
    ),
    (
        "site",
        "store",
        "the site is made from loaded sessions; it never reads a database",
    ),
    ("site", "bench", "the site shows results, not benchmarks"),
    (
        "site",
        "monitor",
        "the site shows stored monitor data, not monitors",
    ),
    (
        "analysis",
        "store",
        "analysis works on loaded sessions, not on a database",
    ),
    (
        "analysis",
        "report",
        "summaries and validity are analysis; report presents them",
    ),
    ("engine", "cli", "only the binary wires the parts together"),
    (
        "engine",
        "app",
        "the engine runs the plan it is given; the application layer makes and drives it",
    ),
    (
        "engine",
        "store",
        "the engine records through vernier_model::Recorder",
    ),
    (
        "engine",
        "setup",
        "a child's own setup is in sys::sched; session setup and restore are the application \
         layer's",
    ),
    (
        "load",
        "bench",
        "a load runs benchmark code (hackbench) only through the binary's `__load`",
    ),
    (
        "engine",
        "load",
        "the engine reaches loads through its per-run hooks, which the application layer fills",
    ),
    (
        "app",
        "cli",
        "the application layer returns what happened; only the binary parses flags and prints",
    ),
    (
        "app",
        "report",
        "the application layer returns data; the binary presents it through report",
    ),
    (
        "app",
        "plot",
        "the application layer returns data; figures are drawn by the binary's commands",
    ),
    (
        "app",
        "site",
        "the application layer runs sessions; the site is made by the binary's commands",
    ),
    (
        "report",
        "app",
        "report presents results; it never runs a session",
    ),
    (
        "plot",
        "app",
        "figures show results; they never run a session",
    ),
    (
        "site",
        "app",
        "the site shows stored sessions; it never runs one",
    ),
];

/// The directory under `crates/` that holds a manifest path or a crate path.
fn crate_dir(path: &str) -> String {
    let path = Path::new(path);
    let dir = if path.ends_with("Cargo.toml") {
        path.parent().expect("a manifest in a directory")
    } else {
        path
    };
    let name = dir.file_name().expect("a directory name");
    name.to_string_lossy().into_owned()
}

/// Every workspace crate with its workspace dependencies (path dependencies) of any kind.
fn workspace_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let packages = metadata["packages"].as_array().expect("a package list");
    let mut graph = BTreeMap::new();
    for package in packages {
        let manifest = package["manifest_path"].as_str().expect("a manifest path");
        let deps: BTreeSet<String> = package["dependencies"]
            .as_array()
            .expect("a dependency list")
            .iter()
            .filter_map(|d| d["path"].as_str())
            .map(crate_dir)
            .collect();
        graph.insert(crate_dir(manifest), deps);
    }
    graph
}

#[test]
fn no_crate_has_a_forbidden_dependency() {
    let graph = workspace_graph();
    let mut violations = Vec::new();
    for (krate, forbidden, why) in FORBIDDEN {
        let deps = graph
            .get(*krate)
            .unwrap_or_else(|| panic!("the rules name crate '{krate}', which does not exist"));
        for dep in deps {
            if *forbidden == "*" || dep == forbidden {
                violations.push(format!("{krate} depends on {dep}: {why}"));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_rules_name_existing_crates_and_nothing_depends_on_the_binary() {
    let graph = workspace_graph();
    for (krate, forbidden, _) in FORBIDDEN {
        assert!(graph.contains_key(*krate), "no crate '{krate}'");
        assert!(
            *forbidden == "*" || graph.contains_key(*forbidden),
            "no crate '{forbidden}'"
        );
    }
    let cli_users: Vec<&String> = graph
        .iter()
        .filter(|(_, deps)| deps.contains("cli"))
        .map(|(k, _)| k)
        .collect();
    assert!(cli_users.is_empty(), "{cli_users:?} depend on the binary");
}

/// The application layer runs sessions for the binary's commands: a crate below it cannot
/// depend on it (cargo refuses the cycle), and none beside it may (report, plot and site by
/// FORBIDDEN, any crate added later by this test).
#[test]
fn only_the_binary_depends_on_the_application_layer() {
    let graph = workspace_graph();
    let app_users: Vec<&String> = graph
        .iter()
        .filter(|(krate, deps)| deps.contains("app") && krate.as_str() != "cli")
        .map(|(k, _)| k)
        .collect();
    assert!(
        app_users.is_empty(),
        "{app_users:?} depend on the application layer"
    );
}

/// The forbidden dependencies as docs/architecture.md lists them, one line per rule.
fn documented_rules() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md");
    let text = std::fs::read_to_string(&path).expect("docs/architecture.md is readable");
    text.lines()
        .filter(|l| l.starts_with("- `") && l.contains("` -> "))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_architecture_document_lists_the_same_rules() {
    let expected: BTreeSet<String> = FORBIDDEN
        .iter()
        .map(|(krate, forbidden, why)| {
            let target = if *forbidden == "*" {
                "any crate".to_string()
            } else {
                format!("`{forbidden}`")
            };
            format!("- `{krate}` -> {target}: {why}")
        })
        .collect();
    let documented = documented_rules();
    let missing: Vec<&String> = expected.difference(&documented).collect();
    let extra: Vec<&String> = documented.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "docs/architecture.md and FORBIDDEN differ; missing from the document: {missing:#?}; \
         not in FORBIDDEN: {extra:#?}"
    );
}
