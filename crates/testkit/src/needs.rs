//! What a test needs from the machine beyond the README's set-up (`build-essential`): the
//! established tools the adapters run, the kernel build's tools, a browser, a PostgreSQL
//! server. `.ci/run` installs all of them and sets `CI=true`; there a missing one fails the
//! test, so that a green CI run means every test ran. Elsewhere the test prints
//! `skipped: ...` with what to install and passes, so that `cargo test --workspace` passes on
//! a fresh machine too.

use std::ffi::OsStr;

/// Whether the tests run in CI (`CI=true`, as `.ci/run` and most CI services set it), where
/// everything a test needs is installed and nothing may be skipped for want of it.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// A program a test runs, and the Debian package that installs it.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    pub name: &'static str,
    pub package: &'static str,
}

/// The programs of `needs` that are not on PATH, as one line naming them and their packages,
/// or `None` when all are there.
pub fn missing_programs(needs: &[Program]) -> Option<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&Program> = needs.iter().filter(|p| !on_path(p.name, &path)).collect();
    if missing.is_empty() {
        return None;
    }
    let names: Vec<&str> = missing.iter().map(|p| p.name).collect();
    let mut packages: Vec<&str> = Vec::new();
    for p in &missing {
        if !packages.contains(&p.package) {
            packages.push(p.package);
        }
    }
    Some(format!(
        "{} not on PATH (apt-get install {})",
        names.join(", "),
        packages.join(" ")
    ))
}

fn on_path(name: &str, path: &OsStr) -> bool {
    vernier_sys::environment::tools::find_on_path(name, path).is_some()
}

/// Whether `test` can run: `missing` is what it lacks (`None` when nothing). Outside CI a
/// test that lacks something prints `skipped: TEST: WHAT` and returns `false`, so that the
/// caller returns; under CI it panics, since `.ci/run` installs everything.
///
/// # Panics
/// Under `CI=true` when something is missing.
pub fn can_run(test: &str, missing: Option<String>) -> bool {
    let Some(what) = missing else {
        return true;
    };
    assert!(
        !in_ci(),
        "{test} must run in CI, where .ci/run installs what it needs: {what}"
    );
    #[allow(clippy::print_stderr)] // a skip says why, as every skipped test does
    {
        eprintln!("skipped: {test}: {what}");
    }
    false
}

/// [`can_run`] for a test that needs `programs`.
pub fn has_programs(test: &str, programs: &[Program]) -> bool {
    can_run(test, missing_programs(programs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_is_named_with_its_package_once() {
        let needs = [
            Program {
                name: "vernier-no-such-a",
                package: "pkg-a",
            },
            Program {
                name: "sh",
                package: "dash",
            },
            Program {
                name: "vernier-no-such-b",
                package: "pkg-a",
            },
        ];
        assert_eq!(
            missing_programs(&needs).as_deref(),
            Some("vernier-no-such-a, vernier-no-such-b not on PATH (apt-get install pkg-a)")
        );
        assert_eq!(missing_programs(&needs[1..2]), None);
    }
}
