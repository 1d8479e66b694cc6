//! Suites: named lists of specs with the settings, monitors, setup, loads and tags that suit
//! them, written as TOML files (docs/benchmarks.md, "Suites"). The built-in suites are files of
//! this crate (`suites/*.toml`), compiled in and read by the same parser as a user's.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;
use vernier_model::{Settings, SettingsLayer};

use crate::spec::parse_benchmark_spec;

/// The built-in suites: (name, TOML text), in listing order.
const BUILTIN: [(&str, &str); 2] = [
    ("quick", include_str!("../suites/quick.toml")),
    ("scheduler", include_str!("../suites/scheduler.toml")),
];

/// The file name extension of suite files.
pub const SUITE_EXTENSION: &str = "toml";

/// Where a suite was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SuiteSource {
    /// Compiled into vernier.
    Builtin,
    /// A file: in the user's suite directory or given by path.
    File(PathBuf),
}

impl fmt::Display for SuiteSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SuiteSource::Builtin => f.write_str("built-in"),
            SuiteSource::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// A suite, read and checked (its specs against the grammar; the benchmarks and their options
/// are checked when a plan is made of it).
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub name: String,
    pub description: String,
    pub specs: Vec<String>,
    /// The settings the suite sets (`[settings]`), each the value of the `vernier run` flag
    /// of the same name; a flag given on the command line wins.
    pub settings: SettingsLayer,
    /// `--monitor` lists, as the flag takes them; empty: the flag's default.
    pub monitors: Vec<String>,
    /// `--setup` lists.
    pub setup: Vec<String>,
    /// `--load` lists.
    pub loads: Vec<String>,
    pub tags: BTreeMap<String, String>,
    pub source: SuiteSource,
}

/// A suite file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    description: String,
    specs: Spanned<Vec<String>>,
    #[serde(default)]
    settings: Option<Spanned<SettingsLayer>>,
    #[serde(default)]
    monitors: Vec<String>,
    #[serde(default)]
    setup: Vec<String>,
    #[serde(default)]
    loads: Vec<String>,
    #[serde(default)]
    tags: Option<Spanned<BTreeMap<String, String>>>,
}

/// Why a suite cannot be used: one line naming the file, the line and what is valid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SuiteError {
    #[error("{}", unknown_suite(.name, .valid))]
    Unknown { name: String, valid: String },
    #[error("cannot read suite {}: {detail}", .path.display())]
    Read { path: PathBuf, detail: String },
    #[error("suite {origin}{}: {detail}", .line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        origin: SuiteSource,
        line: Option<usize>,
        detail: String,
    },
}

fn unknown_suite(name: &str, valid: &str) -> String {
    format!(
        "unknown suite '{name}'; valid suites: {valid} (or a path to a .{SUITE_EXTENSION} file)"
    )
}

/// The line (from 1) of byte offset `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// Parses the suite `name` from the TOML `text` read from `source`.
pub fn parse_suite(name: &str, text: &str, source: SuiteSource) -> Result<Suite, SuiteError> {
    let invalid = |span: Option<Range<usize>>, detail: String| SuiteError::Invalid {
        origin: source.clone(),
        line: span.map(|s| line_of(text, s.start)),
        detail,
    };
    let file: SuiteFile = toml::from_str(text).map_err(|e| {
        // toml's message may run over several lines (a snippet of the file); the first names
        // the problem and, for an unknown key, the valid ones.
        let detail = e.message().lines().next().unwrap_or("").trim().to_string();
        invalid(e.span(), detail)
    })?;
    let specs_span = file.specs.span();
    let specs = file.specs.into_inner();
    if specs.is_empty() {
        return Err(invalid(
            Some(specs_span),
            "specs is empty; a suite needs at least one BENCHMARK[:OPTION=VALUE...]".into(),
        ));
    }
    for spec in &specs {
        parse_benchmark_spec(spec)
            .map_err(|e| invalid(Some(specs_span.clone()), format!("specs: {e}")))?;
    }
    let settings = match file.settings {
        Some(settings) => {
            let span = settings.span();
            let settings = settings.into_inner();
            let mut resolved = Settings::default();
            settings.apply(&mut resolved);
            crate::plan::validate_settings(&resolved)
                .map_err(|e| invalid(Some(span.clone()), format!("settings: {e}")))?;
            if let Some(t) = settings.run_timeout_s {
                if !(t.is_finite() && t > 0.0) {
                    return Err(invalid(
                        Some(span),
                        format!("settings: run-timeout {t} is not a number of seconds > 0"),
                    ));
                }
            }
            settings
        }
        None => SettingsLayer::default(),
    };
    let tags = match file.tags {
        Some(tags) => {
            let span = tags.span();
            let tags = tags.into_inner();
            for (key, value) in &tags {
                let checked = if key.trim().is_empty() {
                    Err("a tag key is empty".to_string())
                } else {
                    vernier_model::check_user_text("tag key", key)
                        .and_then(|()| vernier_model::check_user_text("tag value", value))
                };
                checked.map_err(|e| invalid(Some(span.clone()), format!("tags: {e}")))?;
            }
            tags
        }
        None => BTreeMap::new(),
    };
    Ok(Suite {
        name: name.to_string(),
        description: file.description,
        specs,
        settings,
        monitors: file.monitors,
        setup: file.setup,
        loads: file.loads,
        tags,
        source,
    })
}

/// All built-in suites.
pub fn builtin_suites() -> Vec<Suite> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            // A built-in that does not parse fails the test `every_builtin_parses_and_plans`;
            // should one slip through, it reads as a suite that names its problem.
            parse_suite(name, text, SuiteSource::Builtin).unwrap_or_else(|e| Suite {
                name: (*name).to_string(),
                description: format!("broken: {e}"),
                specs: Vec::new(),
                settings: SettingsLayer::default(),
                monitors: Vec::new(),
                setup: Vec::new(),
                loads: Vec::new(),
                tags: BTreeMap::new(),
                source: SuiteSource::Builtin,
            })
        })
        .collect()
}

/// The suite files of `dir` (the user's suite directory): (name, path), sorted by name. A
/// directory that does not exist has none.
pub fn user_suite_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == SUITE_EXTENSION) && p.is_file())
        .filter_map(|p| Some((p.file_stem()?.to_str()?.to_string(), p)))
        .collect();
    files.sort();
    files
}

/// The largest suite file read, in bytes (1 MiB): a suite is specs and settings, the built-in
/// ones under 2 KiB. A path that gives more (`/dev/zero`, a log given by mistake) is refused
/// instead of read until memory runs out.
pub const MAX_SUITE_BYTES: u64 = 1 << 20;

/// Reads the suite file at `path`, named after the file: at most [`MAX_SUITE_BYTES`].
pub fn read_suite_file(path: &Path) -> Result<Suite, SuiteError> {
    use std::io::Read as _;
    let read = |detail: String| SuiteError::Read {
        path: path.to_path_buf(),
        detail,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SUITE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| read(e.to_string()))?;
    if bytes.len() as u64 > MAX_SUITE_BYTES {
        return Err(read(format!(
            "it holds more than {MAX_SUITE_BYTES} bytes (1 MiB), the most a suite file may"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        read(format!(
            "it is not UTF-8 text (byte {} is not), as TOML is",
            e.utf8_error().valid_up_to()
        ))
    })?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    parse_suite(&name, &text, SuiteSource::File(path.to_path_buf()))
}

/// True when `name` is a path rather than a suite's name: it has a `/` or ends in `.toml`.
fn is_path(name: &str) -> bool {
    name.contains('/') || name.ends_with(&format!(".{SUITE_EXTENSION}"))
}

/// The suite `name` as `--suite` takes it: a path to a file; else a built-in suite; else the
/// file `NAME.toml` of `user_dir`. Built-in names come first, so that `quick`, the default of
/// `vernier run`, means the same everywhere.
pub fn find_suite(name: &str, user_dir: Option<&Path>) -> Result<Suite, SuiteError> {
    if is_path(name) {
        return read_suite_file(Path::new(name));
    }
    if let Some(suite) = builtin_suites().into_iter().find(|s| s.name == name) {
        return Ok(suite);
    }
    if let Some(dir) = user_dir {
        let path = dir.join(format!("{name}.{SUITE_EXTENSION}"));
        if path.is_file() {
            return read_suite_file(&path);
        }
    }
    let mut valid: Vec<String> = builtin_suites().into_iter().map(|s| s.name).collect();
    if let Some(dir) = user_dir {
        for (name, _) in user_suite_files(dir) {
            if !valid.contains(&name) {
                valid.push(name);
            }
        }
    }
    Err(SuiteError::Unknown {
        name: name.to_string(),
        valid: valid.join(", "),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_plans() {
        let infos: Vec<_> = vernier_bench::builtin_infos();
        let suites = builtin_suites();
        assert_eq!(
            suites.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["quick", "scheduler"]
        );
        for (name, text) in BUILTIN {
            let suite = parse_suite(name, text, SuiteSource::Builtin).unwrap();
            let mut settings = Settings::default();
            suite.settings.apply(&mut settings);
            let plan = crate::build_plan(&suite.specs, settings, &infos, 2).unwrap();
            assert!(!plan.configurations.is_empty(), "{name}");
            if !suite.monitors.is_empty() {
                vernier_monitor::parse_monitor_list(&suite.monitors.join(",")).unwrap();
            }
        }
        let quick = find_suite("quick", None).unwrap();
        assert_eq!(quick.specs.len(), 4);
        assert_eq!(quick.settings.max_time_s, Some(20.0));
        assert_eq!(quick.source, SuiteSource::Builtin);
    }

    const FULL: &str = r#"
description = "pipe under load"
specs = ["pipe:placement=same-cpu,cross-cpu", "yield:duration=1"]
monitors = ["stat,meminfo"]
setup = ["drop-caches"]
loads = ["cpu:duty=50"]

[settings]
warmup = 2
target = 0.05
min-runs = 3
max-runs = 9
max-time = 30
interleave = true
seed = 7
profile = 2
profile-scope = "system"
profile-frequency = 499

[tags]
purpose = "load test"
"#;

    #[test]
    fn a_full_suite_reads_every_section_and_layers_its_settings() {
        let suite = parse_suite("x", FULL, SuiteSource::Builtin).unwrap();
        assert_eq!(suite.specs.len(), 2);
        assert_eq!(suite.monitors, ["stat,meminfo"]);
        assert_eq!(suite.setup, ["drop-caches"]);
        assert_eq!(suite.loads, ["cpu:duty=50"]);
        assert_eq!(suite.tags["purpose"], "load test");
        let mut settings = Settings::default();
        suite.settings.apply(&mut settings);
        assert_eq!(settings.warmup, 2);
        assert_eq!(settings.target, 0.05);
        assert_eq!((settings.min_runs, settings.max_runs), (3, 9));
        assert_eq!(settings.max_time_s, 30.0);
        assert_eq!(settings.min_time_s, Settings::default().min_time_s);
        assert!(settings.interleave);
        assert_eq!(settings.seed, 7);
        assert_eq!(
            settings.profile,
            vernier_model::ProfileSettings {
                runs: 2,
                scope: vernier_model::ProfileScope::System,
                frequency_hz: 499,
            }
        );
    }

    fn error(text: &str) -> String {
        parse_suite("x", text, SuiteSource::File("s.toml".into()))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn malformed_files_name_the_file_the_line_and_what_is_valid() {
        let e = error("description = \"d\"\nspecs = [\"pipe\"]\nspecz = 1\n");
        assert!(
            e.starts_with("suite s.toml:3: unknown field `specz`"),
            "{e}"
        );
        assert!(e.contains("expected one of `description`, `specs`"), "{e}");
        let e = error("description = \"d\"\nspecs = [\"pipe\"]\n[settings]\nmax-tim = 1\n");
        assert!(
            e.starts_with("suite s.toml:4: unknown field `max-tim`"),
            "{e}"
        );
        assert!(e.contains("`max-time`"), "{e}");
        let e = error("description = \"d\"\n\nspecs = []\n");
        assert!(e.starts_with("suite s.toml:3: specs is empty"), "{e}");
        let e = error("description = \"d\"\nspecs = [\"pipe:loops\"]\n");
        assert!(e.starts_with("suite s.toml:2: specs: "), "{e}");
        let e = error("specs = [\"pipe\"]\n");
        assert!(e.contains("missing field `description`"), "{e}");
        let e = error("description = \"d\"\nspecs = [\"pipe\"]\n[settings]\ntarget = 2\n");
        assert!(
            e.starts_with("suite s.toml:3: settings: invalid setting --target"),
            "{e}"
        );
        let e = error("description = \"d\"\nspecs = \"pipe\"\n");
        assert!(e.starts_with("suite s.toml:2: invalid type"), "{e}");
        let e = error("description = \"d\"\nspecs = [\"pipe\"\n");
        assert!(e.starts_with("suite s.toml:"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = error("description = \"d\"\nspecs = [\"pipe\"]\n[tags]\n\"\" = \"v\"\n");
        assert!(
            e.starts_with("suite s.toml:3: tags: a tag key is empty"),
            "{e}"
        );
    }

    #[test]
    fn a_suite_file_is_read_up_to_its_bound_and_must_be_text() {
        let e = read_suite_file(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "cannot read suite /dev/zero: it holds more than 1048576 bytes (1 MiB), the most a \
             suite file may"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.toml");
        // A valid suite padded with a comment to the bound is read; one byte more is not.
        let padding = MAX_SUITE_BYTES as usize - FULL.len() - 2;
        std::fs::write(&path, format!("{FULL}#{}\n", "x".repeat(padding))).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), MAX_SUITE_BYTES);
        read_suite_file(&path).unwrap();
        std::fs::write(&path, format!("{FULL}#{}\n", "x".repeat(padding + 1))).unwrap();
        assert!(read_suite_file(&path).is_err());
        std::fs::write(&path, b"description = \"\xff\"\n").unwrap();
        let e = read_suite_file(&path).unwrap_err().to_string();
        assert!(
            e.ends_with("it is not UTF-8 text (byte 15 is not), as TOML is"),
            "{e}"
        );
    }

    #[test]
    fn suites_are_found_by_path_builtin_name_or_in_the_user_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.toml"), FULL).unwrap();
        std::fs::write(dir.path().join("quick.toml"), FULL).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a suite").unwrap();
        let mine = find_suite("mine", Some(dir.path())).unwrap();
        assert_eq!(mine.name, "mine");
        assert_eq!(mine.source, SuiteSource::File(dir.path().join("mine.toml")));
        // A built-in name is the built-in suite, whatever the user directory holds.
        assert_eq!(
            find_suite("quick", Some(dir.path())).unwrap().source,
            SuiteSource::Builtin
        );
        let path = dir.path().join("mine.toml");
        let by_path = find_suite(path.to_str().unwrap(), None).unwrap();
        assert_eq!(by_path.specs, mine.specs);
        let e = find_suite("nope", Some(dir.path()))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "unknown suite 'nope'; valid suites: quick, scheduler, mine (or a path to a .toml file)"
        );
        let e = find_suite("./missing.toml", None).unwrap_err().to_string();
        assert!(e.starts_with("cannot read suite ./missing.toml: "), "{e}");
        assert_eq!(
            user_suite_files(dir.path())
                .into_iter()
                .map(|(n, _)| n)
                .collect::<Vec<_>>(),
            ["mine", "quick"]
        );
        assert!(user_suite_files(&dir.path().join("absent")).is_empty());
    }
}
