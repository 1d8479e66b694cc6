//! `compile`: how long a real Linux kernel tree takes to build, as mmtests' kernbench
//! (`shellpack_src/src/kernbench/kernbench-bench`: `make -jN vmlinux`, `make clean` between
//! iterations) and the Phoronix Test Suite's `pts/build-linux-kernel` (WERROR off,
//! `make clean` between runs) time it.
//!
//! - **Source**: `source=PATH`, a tarball (anything tar(1) unpacks) or a directory, or by
//!   default `debian`: the newest `/usr/src/linux-source-*.tar.xz` of Debian's `linux-source`
//!   packages ("the source tarball is available at /usr/src/linux-source-version.tar.xz",
//!   Debian Kernel Handbook ch. 3).
//! - **What the results depend on** is part of the configuration, filled in when the plan is
//!   made ([`Benchmark::complete_options`]): `source_sha256` (the tarball's sha256; of a
//!   directory, the sha256 over its regular files' paths and contents, `.git` left out),
//!   `gcc` (`gcc --version`'s first line) and `binutils` (`ld --version`'s). `compare`
//!   matches configurations by their options, so builds of different sources or toolchains
//!   are never compared as if they were the same; a value given in the spec must match.
//! - **Preparation, once per session** for all configurations that share source, `config` and
//!   toolchain ([`Benchmark::preparation`], in a work directory the engine removes at the end):
//!   unpack, `make CONFIG` (defconfig, tinyconfig or allnoconfig), `scripts/config --disable
//!   WERROR` and `make olddefconfig` (Phoronix turns WERROR off the same way: a new compiler's
//!   warning must not fail a benchmark), then one discarded warm-up build of `target` with as
//!   many jobs as CPUs are online, so the first measured run does not pay for cold caches and
//!   the one-off host tools (fixdep, kconfig) alone.
//! - **Every run**: `make clean` (untimed; keeps `.config`), then the timed `make -jN TARGET`,
//!   from just before it is spawned to just after wait4(2) reaped it (CLOCK_MONOTONIC). Its
//!   user and system CPU time are wait4's rusage of make and every descendant it waited for,
//!   stored as `user_time` and `system_time`. Output goes to `build.log` in the work directory;
//!   a failed build's error quotes its last line.
//!
//! `CCACHE_DISABLE=1` keeps a ccache that wraps the compiler from turning a build into cache
//! lookups, `LC_ALL=C` keeps make's and the compiler's messages stable, and
//! `KBUILD_BUILD_TIMESTAMP` and `KBUILD_BUILD_USER`/`HOST` are fixed so no run differs by them.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use vernier_model::{BenchmarkInfo, MetricInfo, OptionDefault, OptionKind, OptionSpec};
use vernier_model::{OptionValue, Options};
use vernier_sys::clock::monotonic_ns;
use vernier_sys::process::Group;
use vernier_sys::MachineLimits;

use crate::opts::{choice_spec, text_spec, uint};
use crate::tool::{Header, Tool};
use crate::{BenchError, Benchmark, Measurement, RunContext};

pub const TIME: &str = "time";
pub const USER_TIME: &str = "user_time";
pub const SYSTEM_TIME: &str = "system_time";

/// Options filled in when the plan is made, from the source and the machine's toolchain.
const FACTS: [&str; 3] = ["source_sha256", "gcc", "binutils"];
/// The value of a fact left to the plan to fill in.
const AUTO: &str = "auto";
/// Where Debian's `linux-source-*` packages put their tarball.
const DEBIAN_SOURCE_DIR: &str = "/usr/src";

/// The programs and headers a kernel build needs, with the Debian package of each.
/// From the kernel's Documentation/process/changes.rst (make, gcc, binutils, flex, bison, bc,
/// libelf for objtool, OpenSSL for certificate handling) and Phoronix's dependency list.
const PROGRAMS: [Tool; 8] = [
    tool("make", "make"),
    tool("gcc", "gcc"),
    tool("ld", "binutils"),
    tool("flex", "flex"),
    tool("bison", "bison"),
    tool("bc", "bc"),
    tool("perl", "perl"),
    tool("tar", "tar"),
];
const HEADERS: [Header; 2] = [
    Header {
        path: "/usr/include/gelf.h",
        package: "libelf-dev",
    },
    Header {
        path: "/usr/include/openssl/opensslv.h",
        package: "libssl-dev",
    },
];

/// Fails naming every program and header of a kernel build that is not installed, with the
/// Debian packages to install (checked when the plan is made).
pub fn check_build_tools() -> Result<(), BenchError> {
    crate::tool::require("compile", &PROGRAMS, &HEADERS)
}

const fn tool(program: &'static str, package: &'static str) -> Tool {
    Tool { program, package }
}

pub struct Compile;

fn seconds(name: &str) -> MetricInfo {
    MetricInfo::lower(name, "s")
}

impl Benchmark for Compile {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo::new(
            "compile",
            "1",
            "wall time of make -jN of a Linux kernel tree (as kernbench)",
            seconds(TIME),
        )
        .with_secondary_metrics(vec![seconds(USER_TIME), seconds(SYSTEM_TIME)])
        .with_options(vec![
            text_spec(
                "source",
                "debian",
                "a kernel tarball or directory; debian: /usr/src/linux-source-*.tar.xz",
            ),
            choice_spec(
                "config",
                &["defconfig", "tinyconfig", "allnoconfig"],
                "the kernel configuration made once per session, WERROR off",
            ),
            OptionSpec::new(
                "jobs",
                OptionKind::UInt { min: 1, max: 4096 },
                OptionDefault::OnlineCpus,
            )
            .help("make -jN"),
            text_spec("target", "vmlinux", "the make target that is timed"),
            text_spec(
                "source_sha256",
                AUTO,
                "filled in when the plan is made: the source's sha256",
            ),
            text_spec(
                "gcc",
                AUTO,
                "filled in when the plan is made: gcc --version",
            ),
            text_spec(
                "binutils",
                AUTO,
                "filled in when the plan is made: ld --version",
            ),
        ])
    }

    /// make and as many compilers as jobs; their further helpers are the build's business.
    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        limits.check_tasks(uint(&self.info(), options, "jobs")?.saturating_add(2))?;
        Ok(())
    }

    fn check_options(&self, options: &Options) -> Result<(), BenchError> {
        check_target(options.text("target"))?;
        source_path(options.text("source"))?;
        check_build_tools()
    }

    fn complete_options(&self, options: &mut Options) -> Result<(), BenchError> {
        let source = source_path(options.text("source"))?;
        let facts = [
            ("source_sha256", source_sha256(&source)?),
            ("gcc", first_line_of("gcc")?),
            ("binutils", first_line_of("ld")?),
        ];
        for (name, actual) in facts {
            let given = options.text(name);
            if given != AUTO && given != actual {
                return Err(BenchError::Options(format!(
                    "{name} is '{given}' in the spec but '{actual}' here"
                )));
            }
            options
                .0
                .insert(name.to_string(), OptionValue::Text(actual));
        }
        Ok(())
    }

    fn tools(&self, _options: &Options) -> Vec<&'static str> {
        vec!["gcc", "ld", "make"]
    }

    fn preparation(&self, options: &Options) -> Option<String> {
        // Everything but jobs and target: a sweep of either shares one tree.
        let mut key: Vec<String> = ["source", "config"]
            .iter()
            .chain(FACTS.iter())
            .map(|name| format!("{name}={}", options.text(name)))
            .collect();
        key.insert(0, "compile".into());
        Some(key.join(":"))
    }

    fn prepare(
        &self,
        options: &Options,
        dir: &Path,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Option<f64>, BenchError> {
        let source = source_path(options.text("source"))?;
        let tree = dir.join(TREE);
        std::fs::create_dir_all(&tree)
            .map_err(|e| BenchError::Command(format!("cannot create {}: {e}", tree.display())))?;
        let log = dir.join(LOG);
        let step = |what: &str, command: &mut Command| -> Result<f64, BenchError> {
            let finished = run_logged(command, &log, cancelled)?;
            if cancelled() {
                return Err(BenchError::Command(format!("{what}: interrupted")));
            }
            check_status(what, &finished, &log)?;
            Ok(finished.wall_ns as f64 / 1e9)
        };
        if source.is_dir() {
            let copy = format!(
                "tar -C {} --exclude=.git -cf - . | tar -C {} -xf -",
                shell_quote(&source),
                shell_quote(&tree)
            );
            step("copying the source", Command::new("sh").args(["-c", &copy]))?;
        } else {
            step(
                "unpacking the source",
                Command::new("tar")
                    .arg("-xf")
                    .arg(&source)
                    .arg("-C")
                    .arg(&tree)
                    .arg("--strip-components=1"),
            )?;
        }
        let config = options.text("config");
        step(&format!("make {config}"), &mut make(&tree, &[config]))?;
        step(
            "scripts/config --disable WERROR",
            Command::new(tree.join("scripts/config"))
                .current_dir(&tree)
                .args(["--disable", "WERROR"]),
        )?;
        step("make olddefconfig", &mut make(&tree, &["olddefconfig"]))?;
        let online = vernier_sys::cpulist::online_cpus().len().max(1);
        let jobs = format!("-j{online}");
        let target = options.text("target");
        let warmup_s = step(
            &format!("the warm-up build (make {jobs} {target})"),
            &mut make(&tree, &[&jobs, target]),
        )?;
        // With fewer jobs than the warm-up build, a run takes up to that many times longer.
        let slower = online as f64 / uint(&self.info(), options, "jobs")?.max(1) as f64;
        Ok(Some(warmup_s * slower.max(1.0)))
    }

    fn run(&self, options: &Options, ctx: &RunContext) -> Result<Measurement, BenchError> {
        let dir = ctx.work_dir.as_deref().ok_or_else(|| {
            BenchError::Command("compile runs only in a prepared work directory".into())
        })?;
        let tree = dir.join(TREE);
        let log = dir.join(LOG);
        let never = || false;
        let cleaned = run_logged(&mut make(&tree, &["clean"]), &log, &never)?;
        check_status("make clean", &cleaned, &log)?;
        let jobs = format!("-j{}", uint(&self.info(), options, "jobs")?);
        let target = options.text("target");
        let built = run_logged(&mut make(&tree, &[&jobs, target]), &log, &never)?;
        check_status(&format!("make {jobs} {target}"), &built, &log)?;
        let mut values = BTreeMap::new();
        values.insert(TIME.to_string(), built.wall_ns as f64 / 1e9);
        values.insert(USER_TIME.to_string(), built.user_ns as f64 / 1e9);
        values.insert(SYSTEM_TIME.to_string(), built.system_ns as f64 / 1e9);
        Ok(Measurement {
            values,
            histograms: Vec::new(),
        })
    }
}

/// The kernel tree and the build's output, inside the work directory.
const TREE: &str = "linux";
const LOG: &str = "build.log";

/// `make -C TREE ARGS` with the environment of the module documentation.
fn make(tree: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("make");
    command
        .arg("--no-print-directory")
        .arg("-C")
        .arg(tree)
        .args(args)
        .env("CCACHE_DISABLE", "1")
        .env("LC_ALL", "C")
        .env("KBUILD_BUILD_TIMESTAMP", "vernier")
        .env("KBUILD_BUILD_USER", "vernier")
        .env("KBUILD_BUILD_HOST", "vernier");
    command
}

/// A make target: one word of the characters targets are made of (`vmlinux`, `bzImage`,
/// `kernel/`, `fs/ext4/`), not an option.
fn check_target(target: &str) -> Result<(), BenchError> {
    let word = target
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    if target.is_empty() || target.starts_with('-') || !word {
        return Err(BenchError::Options(format!(
            "target '{target}' is not a make target (one word such as vmlinux, bzImage or kernel/)"
        )));
    }
    Ok(())
}

/// The source `source` names: `debian` is the newest Debian tarball under /usr/src.
fn source_path(source: &str) -> Result<PathBuf, BenchError> {
    if source == "debian" {
        return debian_source(Path::new(DEBIAN_SOURCE_DIR));
    }
    let path = PathBuf::from(source);
    if !path.exists() {
        return Err(BenchError::Options(format!(
            "source '{source}' does not exist (give a kernel tarball or directory)"
        )));
    }
    std::fs::canonicalize(&path).map_err(|e| BenchError::Options(format!("source '{source}': {e}")))
}

/// The `linux-source-VERSION.tar.*` in `dir` with the highest version.
fn debian_source(dir: &Path) -> Result<PathBuf, BenchError> {
    let mut found: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let version = name.strip_prefix("linux-source-")?.split(".tar").next()?;
            name.contains(".tar").then_some(())?;
            let key = version
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|n| n.parse().ok())
                .collect();
            Some((key, entry.path()))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, path)| path).ok_or_else(|| {
        BenchError::Options(format!(
            "no kernel source: {} has no linux-source-*.tar.xz; apt-get install linux-source, \
             or give source=PATH",
            dir.display()
        ))
    })
}

/// The sha256 of a tarball's bytes; of a directory, over each regular file's relative path
/// and contents in path order, `.git` left out.
fn source_sha256(source: &Path) -> Result<String, BenchError> {
    use sha2::{Digest, Sha256};
    let io = |path: &Path, e: std::io::Error| {
        BenchError::Command(format!("cannot read {}: {e}", path.display()))
    };
    let mut hasher = Sha256::new();
    let feed = |path: &Path, hasher: &mut Sha256| -> Result<(), BenchError> {
        let mut file = File::open(path).map_err(|e| io(path, e))?;
        std::io::copy(&mut file, hasher).map_err(|e| io(path, e))?;
        Ok(())
    };
    if source.is_dir() {
        let mut files = Vec::new();
        collect_files(source, source, &mut files).map_err(|e| io(source, e))?;
        files.sort();
        for relative in files {
            hasher.update(relative.as_os_str().as_encoded_bytes());
            hasher.update([0]);
            feed(&source.join(&relative), &mut hasher)?;
        }
    } else {
        feed(source, &mut hasher)?;
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn collect_files(root: &Path, dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() && entry.file_name() != ".git" {
            collect_files(root, &path, files)?;
        } else if kind.is_file() {
            if let Ok(relative) = path.strip_prefix(root) {
                files.push(relative.to_path_buf());
            }
        }
    }
    Ok(())
}

/// The first line `PROGRAM --version` prints.
fn first_line_of(program: &str) -> Result<String, BenchError> {
    let out = Command::new(program)
        .arg("--version")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| BenchError::Command(format!("cannot run {program} --version: {e}")))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .ok_or_else(|| BenchError::Command(format!("{program} --version printed nothing")))
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// How one command ended and what it took.
struct Finished {
    /// The wait status (wait4(2)).
    status: i32,
    wall_ns: u64,
    user_ns: u64,
    system_ns: u64,
}

/// Runs `command` with its output appended to `log`, in a process group of its own that is
/// killed when `cancelled` turns true (checked every 100 ms), and reaps it with wait4(2) the
/// moment it exits.
fn run_logged(
    command: &mut Command,
    log: &Path,
    cancelled: &dyn Fn() -> bool,
) -> Result<Finished, BenchError> {
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| BenchError::Command(format!("cannot open {}: {e}", log.display())))
    };
    let program = command.get_program().to_string_lossy().into_owned();
    command.stdin(Stdio::null()).stdout(open()?).stderr(open()?);
    let mut group = Group::new();
    let start = monotonic_ns();
    let pid = group
        .spawn(command)
        .map_err(|e| BenchError::Command(format!("cannot start {program}: {e}")))?
        .pid;
    let mut killed = false;
    let exit = loop {
        if !killed && cancelled() {
            group.kill();
            killed = true;
        }
        // The wait wakes the moment the command exits (a pidfd), so that the timed build ends
        // when make does rather than at the next tick; the tick is how often a cancellation
        // is noticed.
        let tick = Duration::from_millis(if killed { 10 } else { 100 });
        if let Some(exit) = group.wait_within(pid, tick)? {
            break exit;
        }
    };
    let wall_ns = monotonic_ns().saturating_sub(start);
    let ns = |v: i64| u64::try_from(v).unwrap_or(0);
    Ok(Finished {
        status: exit.status,
        wall_ns,
        user_ns: ns(exit.rusage.user_cpu_ns),
        system_ns: ns(exit.rusage.system_cpu_ns),
    })
}

/// Fails unless the command exited with status 0, quoting the last line of `log`.
fn check_status(what: &str, finished: &Finished, log: &Path) -> Result<(), BenchError> {
    let status = finished.status;
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        return Ok(());
    }
    let how = if libc::WIFSIGNALED(status) {
        format!("was killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    };
    let last = last_line(log).map(|l| format!(": {l}")).unwrap_or_default();
    Err(BenchError::Command(format!("{what} {how}{last}")))
}

/// The line of the last 8 KiB of the file at `path` that says what went wrong: the first that
/// speaks of an error (a compiler's `error:`), else make's last `*** ... Error 2`, else the
/// last line.
fn last_line(path: &Path) -> Option<String> {
    let mut file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(8192))).ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    let text = String::from_utf8_lossy(&tail);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let first_error = lines
        .iter()
        .find(|l| l.contains("error:") || l.contains("Error:"));
    first_error
        .or_else(|| lines.iter().rev().find(|l| l.contains("***")))
        .or(lines.last())
        .map(|l| l.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;

    fn options(overrides: &[(&str, &str)]) -> Options {
        resolve_options(&Compile.info(), overrides).unwrap()
    }

    #[test]
    fn targets_are_one_make_word() {
        for good in ["vmlinux", "bzImage", "kernel/", "fs/ext4/", "all"] {
            check_target(good).unwrap();
        }
        for bad in ["", "-j9", "vmlinux modules", "a;rm", "$(x)"] {
            let e = check_target(bad).unwrap_err().to_string();
            assert!(e.contains("is not a make target"), "{bad}: {e}");
        }
    }

    #[test]
    fn debian_source_is_the_newest_tarball_or_says_how_to_install_one() {
        let dir = tempfile::tempdir().unwrap();
        let e = debian_source(dir.path()).unwrap_err().to_string();
        assert!(e.contains("apt-get install linux-source"), "{e}");
        assert!(!e.contains('\n'));
        for name in [
            "linux-source-6.1.tar.xz",
            "linux-source-6.12.tar.xz",
            "linux-source-6.9.tar.bz2",
            "linux-source-7.0",
            "python3.11",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        assert_eq!(
            debian_source(dir.path()).unwrap(),
            dir.path().join("linux-source-6.12.tar.xz")
        );
    }

    #[test]
    fn a_missing_source_is_an_option_error() {
        let e = source_path("/nonexistent/linux.tar.xz").unwrap_err();
        assert!(matches!(e, BenchError::Options(_)));
        assert!(e.to_string().contains("does not exist"), "{e}");
    }

    #[test]
    fn directory_hash_covers_names_and_contents_but_not_git() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/.git")).unwrap();
        std::fs::write(dir.path().join("a/x.c"), "int x;").unwrap();
        let first = source_sha256(dir.path()).unwrap();
        std::fs::write(dir.path().join("a/.git/HEAD"), "ref").unwrap();
        assert_eq!(source_sha256(dir.path()).unwrap(), first);
        std::fs::write(dir.path().join("a/x.c"), "int y;").unwrap();
        assert_ne!(source_sha256(dir.path()).unwrap(), first);
        let file = dir.path().join("a/x.c");
        assert_eq!(
            source_sha256(&file).unwrap(),
            vernier_sys::environment::sha256_hex("int y;")
        );
    }

    #[test]
    fn given_facts_must_match_the_machine() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Makefile"), "").unwrap();
        let source = dir.path().to_str().unwrap();
        let mut o = options(&[("source", source), ("source_sha256", "abc")]);
        let Err(e) = Compile.complete_options(&mut o) else {
            // Without gcc or ld the facts cannot be read at all; nothing more to check here.
            return;
        };
        let e = e.to_string();
        assert!(
            e.contains("source_sha256 is 'abc' in the spec but '"),
            "{e}"
        );
        let mut o = options(&[("source", source)]);
        if Compile.complete_options(&mut o).is_ok() {
            assert_eq!(o.text("source_sha256").len(), 64);
            assert!(o.text("gcc").contains("gcc"), "{}", o.text("gcc"));
            assert_ne!(o.text("binutils"), AUTO);
        }
    }

    #[test]
    fn configurations_share_a_tree_unless_source_config_or_toolchain_differ() {
        let key = |o: &[(&str, &str)]| Compile.preparation(&options(o)).unwrap();
        assert_eq!(
            key(&[("jobs", "1")]),
            key(&[("jobs", "2"), ("target", "all")])
        );
        assert_ne!(key(&[]), key(&[("config", "tinyconfig")]));
        assert_ne!(key(&[]), key(&[("gcc", "gcc 13")]));
    }

    #[test]
    fn a_failed_command_quotes_the_last_line_of_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let never = || false;
        let finished = run_logged(
            Command::new("sh").args(["-c", "echo one; echo 'error: two' >&2; exit 3"]),
            &log,
            &never,
        )
        .unwrap();
        let e = check_status("the step", &finished, &log)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "the step exited with status 3: error: two");
    }

    #[test]
    fn cancelling_kills_the_command_and_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let start = std::time::Instant::now();
        let soon = move || start.elapsed() > Duration::from_millis(200);
        let finished = run_logged(
            Command::new("sh").args(["-c", "sleep 30 & sleep 30; wait"]),
            &log,
            &soon,
        )
        .unwrap();
        assert!(libc::WIFSIGNALED(finished.status));
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_run_without_a_work_directory_fails() {
        let e = Compile
            .run(&options(&[]), &RunContext::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("prepared work directory"), "{e}");
    }
}
