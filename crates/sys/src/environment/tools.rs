//! Versions of the external tools a plan runs (hackbench, cyclictest, perf, stress-ng, ...),
//! so a result says which implementation produced it.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use vernier_model::Environment;

use crate::process::Group;

/// A tool that does not answer `--version` or `--help` within this time is killed.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Output beyond this is not needed to find a version line.
const MAX_OUTPUT_BYTES: u64 = 64 * 1024;

/// Version lines of the tools that are on PATH, keyed by the name given. A tool that is not on
/// PATH, or that prints no recognizable version, is left out; use [`record_tool_versions`] to
/// also record why.
pub fn capture_tool_versions(tools: &[&str]) -> BTreeMap<String, String> {
    tools
        .iter()
        .filter_map(|tool| Some((tool.to_string(), tool_version(tool).ok()?)))
        .collect()
}

/// Fills `env.tool_versions` for `tools` and lists each tool without a version in
/// `env.unsupported` as `tool_versions.<tool>`.
pub fn record_tool_versions(env: &mut Environment, tools: &[&str]) {
    for tool in tools {
        match tool_version(tool) {
            Ok(version) => {
                env.tool_versions.insert(tool.to_string(), version);
            }
            Err(reason) => {
                env.unsupported
                    .insert(format!("tool_versions.{tool}"), reason);
            }
        }
    }
}

/// The version line of one tool: from `--version`, else from `--help` (rt-tests programs such
/// as hackbench print `hackbench V 2.40` as the first line of their usage text).
pub fn tool_version(tool: &str) -> Result<String, String> {
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    let program = find_on_path(tool, &path_var).ok_or_else(|| format!("{tool} is not on PATH"))?;
    for arg in ["--version", "--help"] {
        if let Some(line) = run(&program, arg).as_deref().and_then(pick_version_line) {
            return Ok(line);
        }
    }
    Err(format!(
        "{} printed no version for --version or --help",
        program.display()
    ))
}

/// The executable `tool` names: itself when it contains a `/`, else the first executable file
/// of that name in the PATH directories (execvp(3)).
pub fn find_on_path(tool: &str, path_var: &OsStr) -> Option<PathBuf> {
    let is_executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if tool.contains('/') {
        let p = PathBuf::from(tool);
        return is_executable(&p).then_some(p);
    }
    if tool.is_empty() {
        return None;
    }
    std::env::split_paths(path_var)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(tool))
        .find(|p| is_executable(p))
}

/// Runs `program arg` with no input and returns stdout followed by stderr, or `None` when it
/// cannot start or does not finish in time. It runs in a process group of its own, killed as
/// a whole at the time limit, so that nothing it started keeps running or holds its output.
fn run(program: &Path, arg: &str) -> Option<String> {
    let mut group = Group::new();
    let spawned = group
        .spawn(
            Command::new(program)
                .arg(arg)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .env("LC_ALL", "C"),
        )
        .ok()?;
    // Both pipes are drained in threads, so a tool that writes much to one of them cannot block
    // while this thread waits for it.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(MAX_OUTPUT_BYTES).read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = drain(spawned.stdout.map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = drain(spawned.stderr.map(|p| Box::new(p) as Box<dyn Read + Send>));
    let finished = matches!(group.wait_within(spawned.pid, TIMEOUT), Ok(Some(_)));
    if !finished {
        group.kill();
        let _ = group.wait(spawned.pid);
    }
    let mut bytes = out.join().unwrap_or_default();
    bytes.push(b'\n');
    bytes.extend(err.join().unwrap_or_default());
    finished.then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// The first line that looks like a version: it contains a number with a dot (`2.40`,
/// `6.1.187`) or a `V`/`version` word followed by a number.
pub fn pick_version_line(output: &str) -> Option<String> {
    output
        .lines()
        .map(str::trim)
        .find(|line| has_dotted_number(line) || has_version_word(line))
        .map(|line| line.chars().take(200).collect())
}

fn has_dotted_number(line: &str) -> bool {
    let b = line.as_bytes();
    (1..b.len().saturating_sub(1))
        .any(|i| b[i] == b'.' && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit())
}

fn has_version_word(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.windows(2).any(|w| {
        matches!(w[0].to_ascii_lowercase().as_str(), "v" | "version")
            && w[1]
                .trim_start_matches('v')
                .starts_with(|c: char| c.is_ascii_digit())
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn picks_version_lines() {
        assert_eq!(
            pick_version_line(
                "hackbench: unrecognized option '--version'\nhackbench V 2.40\nUsage:\n"
            )
            .unwrap(),
            "hackbench V 2.40"
        );
        assert_eq!(
            pick_version_line("perf version 6.1.187\n").unwrap(),
            "perf version 6.1.187"
        );
        assert_eq!(
            pick_version_line("tool version 7\n").unwrap(),
            "tool version 7"
        );
        assert_eq!(pick_version_line("Usage: x [options]\n  -h  help\n"), None);
        assert_eq!(pick_version_line(""), None);
    }

    #[test]
    fn finds_executables_on_path_only() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("mytool");
        std::fs::write(&exe, "#!/bin/sh\necho 'mytool 1.2.3'\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let plain = dir.path().join("notexec");
        std::fs::write(&plain, "").unwrap();
        let path_var = std::env::join_paths(["/nonexistent".as_ref(), dir.path()]).unwrap();
        assert_eq!(find_on_path("mytool", &path_var), Some(exe.clone()));
        assert_eq!(find_on_path("notexec", &path_var), None);
        assert_eq!(find_on_path("absent", &path_var), None);
        assert_eq!(find_on_path("", &path_var), None);
        assert_eq!(
            find_on_path(exe.to_str().unwrap(), OsStr::new("")),
            Some(exe.clone())
        );
        // Runs the script by its path: the version comes from its output.
        assert_eq!(tool_version(exe.to_str().unwrap()).unwrap(), "mytool 1.2.3");
    }

    #[test]
    fn records_missing_tools_as_unsupported() {
        let mut env = Environment::default();
        record_tool_versions(&mut env, &["vernier-no-such-tool"]);
        assert!(env
            .unsupported
            .get("tool_versions.vernier-no-such-tool")
            .is_some_and(|r| r.contains("not on PATH")));
        assert!(!env.tool_versions.contains_key("vernier-no-such-tool"));
        assert!(capture_tool_versions(&["vernier-no-such-tool"]).is_empty());
    }
}
