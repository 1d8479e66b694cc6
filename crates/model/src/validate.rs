//! What a stored session may hold: the checks an import applies to every session, whatever
//! file it came from (a vernier export or hyperfine output), so that a database only ever holds
//! what a recording session of vernier could have written itself.
//!
//! Each error names the place (session, configuration, run) and the field, in one line.

use std::collections::{BTreeMap, HashMap, HashSet};

use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::benchmark::MetricInfo;
use crate::record::{ConfigurationRecord, RunRecord, StoredSession};
use crate::settings::Settings;
use crate::text::Texts;
use crate::values::RunValues;

/// A record that vernier could not have written, with where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {problem}")]
pub struct Invalid {
    /// `session ID, configuration N (LABEL), run M`, as far as known.
    pub place: String,
    /// The field and what is wrong with it, with what is valid.
    pub problem: String,
}

/// Units of metrics that measure a duration, with how many make a second: their values are
/// positive, since no run takes zero or negative time, and at most [`MAX_DURATION_S`]. Rates
/// (`forks/s`) and counts may be anything finite.
const TIME_UNITS: &[(&str, f64)] = &[
    ("s", 1.0),
    ("ms", 1e3),
    ("us", 1e6),
    ("µs", 1e6),
    ("ns", 1e9),
];

/// The longest duration a value may hold, in seconds: 1e9 s (31.7 years), the longest that
/// vernier takes anywhere (`--run-timeout`, `--max-time`, `--interval`). A longer one read from
/// another tool's file (hyperfine times of 1e300 s) is no measurement, and would overflow the
/// nanoseconds of the run's end.
pub const MAX_DURATION_S: f64 = 1e9;

/// True for a metric whose values are durations.
pub fn is_time_unit(unit: &str) -> bool {
    TIME_UNITS.iter().any(|(u, _)| *u == unit)
}

/// The longest text of a stored session, in bytes (1 MiB): a command, a note, an error, an
/// environment value, a name. Longer than any vernier writes: a run's error keeps at most
/// 128 KiB of the child's standard error, and a command is one argument of a command line
/// (at most 128 KiB, MAX_ARG_STRLEN of execve(2)).
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// The longest host name or machine id stored, in bytes: 255, the longest DNS name (RFC 1035,
/// 2.3.4); Linux's host names have at most 64 (HOST_NAME_MAX, gethostname(2)).
pub const MAX_HOSTNAME_BYTES: usize = 255;

/// The longest kernel configuration text stored, in bytes: 16 MiB (a distribution kernel's
/// `/proc/config.gz` holds about 300 KB).
pub const MAX_KERNEL_CONFIG_BYTES: usize = 16 << 20;

/// Refuses a text longer than `max` bytes, naming the field and the bound.
fn check_length(field: &str, text: &str, max: usize) -> Result<(), String> {
    if text.len() > max {
        return Err(format!(
            "field '{field}' is {} bytes long, longer than {max}, the most vernier stores there",
            text.len()
        ));
    }
    Ok(())
}

/// Checks every text of `value` (string values and object keys of its JSON form) against
/// [`MAX_TEXT_BYTES`], naming the first one too long by its path (`environment.sysctls`).
fn check_text_lengths(value: &impl serde::Serialize) -> Result<(), String> {
    fn walk(path: &str, value: &serde_json::Value) -> Result<(), String> {
        use serde_json::Value;
        match value {
            Value::String(text) => check_length(path, text, MAX_TEXT_BYTES),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .try_for_each(|(i, item)| walk(&format!("{path}[{i}]"), item)),
            Value::Object(map) => map.iter().try_for_each(|(key, item)| {
                let inner = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                check_length(&format!("{path} (a key)"), key, MAX_TEXT_BYTES)?;
                walk(&inner, item)
            }),
            _ => Ok(()),
        }
    }
    let value = serde_json::to_value(value).map_err(|e| format!("cannot be encoded: {e}"))?;
    walk("", &value)
}

/// Checks the values a run reported against its configuration's primary metric: at least one
/// value, the primary one present, every value finite, a duration positive. The engine applies
/// the same check to what a child reports, so a recorded run always passes it.
pub fn check_values(metric: &MetricInfo, values: &BTreeMap<String, f64>) -> Result<(), String> {
    check_entries(metric, values.iter().map(|(name, v)| (name.as_str(), *v)))
}

/// [`check_values`] of a stored run's values.
pub fn check_run_values(metric: &MetricInfo, values: &RunValues) -> Result<(), String> {
    check_entries(metric, values.iter().map(|(name, v)| (name, *v)))
}

fn check_entries<'a>(
    metric: &MetricInfo,
    mut values: impl Iterator<Item = (&'a str, f64)> + Clone,
) -> Result<(), String> {
    if values.clone().next().is_none() {
        return Err("field 'values' is empty (it holds at least the primary metric)".into());
    }
    let Some(primary) = values
        .clone()
        .find(|(name, _)| *name == metric.name)
        .map(|(_, v)| v)
    else {
        return Err(format!(
            "field 'values' lacks the primary metric '{}' of its configuration",
            metric.name
        ));
    };
    if let Some((name, v)) = values.find(|(_, v)| !v.is_finite()) {
        return Err(format!(
            "field 'values.{name}' is {v}, expected a finite number"
        ));
    }
    if let Some((unit, per_second)) = TIME_UNITS.iter().find(|(u, _)| *u == metric.unit) {
        let most = MAX_DURATION_S * per_second;
        if primary <= 0.0 || primary > most {
            // 1e300 in exponent form, not as 301 digits; ordinary numbers as they are.
            let value = if primary.abs() >= 1e15 {
                format!("{primary:e}")
            } else {
                primary.to_string()
            };
            return Err(format!(
                "field 'values.{}' is {value}, expected a positive duration in {unit} of at \
                 most {most:e} ({MAX_DURATION_S:e} s)",
                metric.name
            ));
        }
    }
    Ok(())
}

/// The settings a session could have run with: bounds that are not negative.
fn check_settings(s: &Settings) -> Result<(), String> {
    for (name, v) in [
        ("target", s.target),
        ("min_time_s", s.min_time_s),
        ("max_time_s", s.max_time_s),
    ] {
        if !(v >= 0.0 && v.is_finite()) {
            return Err(format!(
                "field 'settings.{name}' is {v}, expected a number of 0 or more"
            ));
        }
    }
    let level = s.confidence_level;
    if !(level > 0.0 && level < 1.0) {
        return Err(format!(
            "field 'settings.confidence_level' is {level}, expected a level between 0 and 1 \
             (0.95 for 95%)"
        ));
    }
    Ok(())
}

fn check_run(metric: &MetricInfo, run: &RunRecord) -> Result<(), String> {
    if run.started_at_ns < 0 {
        return Err(format!(
            "field 'started_at_ns' is {}, expected a time after 1970 (0 or more)",
            run.started_at_ns
        ));
    }
    if run.ended_at_ns < run.started_at_ns {
        return Err(format!(
            "field 'ended_at_ns' is {}, before 'started_at_ns' {}",
            run.ended_at_ns, run.started_at_ns
        ));
    }
    check_run_values(metric, &run.values)?;
    if let Some(found) = run.find_control() {
        return Err(found.problem());
    }
    for name in run.values.keys() {
        check_length("values (a name)", name, MAX_TEXT_BYTES)?;
    }
    for step in &run.setup_steps {
        check_length("setup_steps.plugin", &step.plugin, MAX_TEXT_BYTES)?;
        check_length("setup_steps.detail", &step.detail, MAX_TEXT_BYTES)?;
    }
    for h in &run.histograms {
        check_length("histograms.quantity", &h.quantity, MAX_TEXT_BYTES)?;
        h.check()
            .map_err(|e| format!("field 'histograms': {h}: {e}"))?;
    }
    for c in &run.setup_changed {
        for text in [&c.setting, &c.set, &c.found] {
            check_length("setup_changed", text, MAX_TEXT_BYTES)?;
        }
    }
    if let Some(cpu) = run.load_cpu_ns.filter(|&ns| ns < 0) {
        return Err(format!("field 'load_cpu_ns' is {cpu}, expected 0 or more"));
    }
    let r = &run.rusage;
    for (name, v) in [
        ("rusage.user_cpu_ns", r.user_cpu_ns),
        ("rusage.system_cpu_ns", r.system_cpu_ns),
        ("rusage.voluntary_cs", r.voluntary_cs),
        ("rusage.involuntary_cs", r.involuntary_cs),
        ("rusage.max_rss_bytes", r.max_rss_bytes),
        ("controller_cpu_ns", run.controller_cpu_ns),
    ] {
        if v < 0 {
            return Err(format!("field '{name}' is {v}, expected 0 or more"));
        }
    }
    if let Some(m) = &run.monitors {
        check_length(
            "monitors.sampler_priority",
            &m.sampler_priority,
            MAX_TEXT_BYTES,
        )?;
        for key in m.summary.keys() {
            check_length("monitors.summary (a key)", key, MAX_TEXT_BYTES)?;
        }
        for series in &m.series {
            for name in [&series.monitor, &series.metric, &series.unit] {
                check_length("monitors.series", name, MAX_TEXT_BYTES)?;
            }
        }
        for (key, why) in &m.unsupported {
            check_length("monitors.unsupported (a key)", key, MAX_TEXT_BYTES)?;
            check_length("monitors.unsupported", why, MAX_TEXT_BYTES)?;
        }
        check_text_lengths(&m.failures).map_err(|e| format!("monitors.failures: {e}"))?;
        if let Some((key, v)) = m.summary.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!(
                "field 'monitors.summary.{key}' is {v}, expected a finite number"
            ));
        }
        for series in &m.series {
            if let Some(p) = series.points.iter().find(|p| !p.value.is_finite()) {
                return Err(format!(
                    "field 'monitors.series' ({}) has value {} at {} ns, expected a finite \
                     number",
                    series.key(),
                    p.value,
                    p.t_ns
                ));
            }
        }
    }
    Ok(())
}

/// How a configuration is named in messages: its position and `benchmark:options`.
fn configuration_place(c: &ConfigurationRecord) -> String {
    let key = crate::ConfigKey::new(&c.benchmark, &c.options);
    format!("configuration {} ({key})", c.position)
}

fn run_place(run: &RunRecord) -> String {
    let kind = if run.warmup { "warmup" } else { "measured" };
    format!("{kind} run {} ({})", run.index, run.id)
}

/// Checks one session alone (see the module documentation).
pub fn check_session(s: &StoredSession) -> Result<(), Invalid> {
    let session = format!("session {}", s.info.id);
    let at = |place: String| move |problem: String| Invalid { place, problem };
    let info = &s.info;
    if info.started_at_ns < 0 {
        return Err(at(session)(format!(
            "field 'started_at_ns' is {}, expected a time after 1970 (0 or more)",
            info.started_at_ns
        )));
    }
    if let Some(ended) = info.ended_at_ns {
        if ended < info.started_at_ns {
            return Err(at(session)(format!(
                "field 'ended_at_ns' is {ended}, before 'started_at_ns' {}",
                info.started_at_ns
            )));
        }
    }
    check_settings(&info.settings).map_err(at(session.clone()))?;
    check_text_lengths(info).map_err(at(session.clone()))?;
    for (field, text) in [
        ("environment.hostname", &info.environment.hostname),
        ("environment.machine_id", &info.environment.machine_id),
    ] {
        if let Some(text) = text {
            check_length(field, text, MAX_HOSTNAME_BYTES).map_err(at(session.clone()))?;
        }
    }
    // What `--tag` and `--note` refuse at input, an import refuses too.
    for (key, value) in &info.tags {
        crate::check_user_text("tag key", key).map_err(at(session.clone()))?;
        crate::check_user_text("tag value", value).map_err(at(session.clone()))?;
    }
    if let Some(note) = &info.note {
        crate::check_user_text("note", note).map_err(at(session.clone()))?;
    }
    // Every other text of the session, the one rule of crate::text.
    if let Some(found) = info.find_control() {
        return Err(at(session)(found.problem()));
    }
    let mut positions = HashSet::new();
    for c in &s.configurations {
        let config = format!("{session}, {}", configuration_place(&c.record));
        if !positions.insert(c.record.position) {
            return Err(at(config)(format!(
                "field 'position' {} is also the position of another configuration",
                c.record.position
            )));
        }
        if c.record.metric.name.is_empty() {
            return Err(at(config)("field 'metric.name' is empty".into()));
        }
        let r = &c.record;
        check_text_lengths(r).map_err(at(config.clone()))?;
        if let Some(found) = r.find_control() {
            return Err(at(config)(found.problem()));
        }
        let mut indices = HashSet::with_capacity(c.runs.len());
        for run in &c.runs {
            // Formatted only for an error: a part of an import checks 10,000 runs.
            let place = || format!("{config}, {}", run_place(run));
            if !indices.insert((run.warmup, run.index)) {
                return Err(at(place())(format!(
                    "field 'index' {} occurs twice among the {} runs",
                    run.index,
                    if run.warmup { "warmup" } else { "measured" }
                )));
            }
            check_run(&c.record.metric, run).map_err(|problem| at(place())(problem))?;
        }
        let mut profile_indices = HashSet::with_capacity(c.profiles.len());
        for p in &c.profiles {
            let place = || format!("{config}, profiled run {} ({})", p.index, p.id);
            if !profile_indices.insert(p.index) {
                return Err(at(place())(format!(
                    "field 'index' {} occurs twice among the profiled runs",
                    p.index
                )));
            }
            if p.ended_at_ns < p.started_at_ns {
                return Err(at(place())(format!(
                    "field 'ended_at_ns' is {}, before 'started_at_ns' {}",
                    p.ended_at_ns, p.started_at_ns
                )));
            }
            crate::profile::check_frequency(p.frequency_hz)
                .map_err(|problem| at(place())(problem))?;
            p.stacks.check().map_err(|problem| at(place())(problem))?;
            if let Some(found) = p.find_control() {
                return Err(at(place())(found.problem()));
            }
        }
    }
    Ok(())
}

/// Checks every session of one file: each alone, and ids that occur once (a session,
/// configuration or run id twice in one file is an error).
pub fn check_sessions(sessions: &[StoredSession]) -> Result<(), Invalid> {
    let total_ids: usize = sessions
        .iter()
        .flat_map(|s| &s.configurations)
        .map(|c| c.runs.len() + 1)
        .sum::<usize>()
        + sessions.len();
    let mut check = FileCheck::with_capacity(total_ids);
    sessions.iter().try_for_each(|s| check.session(s))
}

/// [`check_sessions`] one session at a time, for a file read as a stream: it keeps only the ids
/// seen so far (16 bytes each), never the sessions.
#[derive(Debug, Default)]
pub struct FileCheck {
    seen: HashSet<Uuid>,
}

impl FileCheck {
    pub fn new() -> Self {
        Self::default()
    }

    fn with_capacity(ids: usize) -> Self {
        FileCheck {
            seen: HashSet::with_capacity(ids),
        }
    }

    /// Checks the next session of the file: alone, and against the ids of those before it.
    pub fn session(&mut self, s: &StoredSession) -> Result<(), Invalid> {
        check_session(s)?;
        let session = format!("session {}", s.info.id);
        if !self.seen.insert(s.info.id) {
            return Err(Invalid {
                place: session,
                problem: "the id occurs more than once in the file".into(),
            });
        }
        for c in &s.configurations {
            let config = format!("{session}, {}", configuration_place(&c.record));
            if !self.seen.insert(c.record.id) {
                return Err(Invalid {
                    place: config,
                    problem: format!("id {} occurs more than once in the file", c.record.id),
                });
            }
            for run in &c.runs {
                if !self.seen.insert(run.id) {
                    return Err(Invalid {
                        place: format!("{config}, {}", run_place(run)),
                        problem: "the id occurs more than once in the file".into(),
                    });
                }
            }
            for p in &c.profiles {
                if !self.seen.insert(p.id) {
                    return Err(Invalid {
                        place: format!("{config}, profiled run {}", p.index),
                        problem: "the id occurs more than once in the file".into(),
                    });
                }
            }
        }
        Ok(())
    }
}

impl FileCheck {
    /// Checks a part of the next session of a file read in parts (the session's information
    /// and a configuration with some of its runs), before [`FileCheck::session`] checks the
    /// session's outline (the same session without its runs) at its end: the part alone, and
    /// its run ids against each other and against the ids of the sessions before it. Run ids
    /// are not kept: memory would grow with the runs of the file. A run id or place that
    /// occurs again in another part is refused when the parts are stored, by the database's
    /// keys in the same transaction (`vernier_store::Import::add_runs`).
    pub fn part(&self, s: &StoredSession) -> Result<(), Invalid> {
        check_session(s)?;
        let session = format!("session {}", s.info.id);
        for c in &s.configurations {
            let mut ids = HashSet::with_capacity(c.runs.len());
            for run in &c.runs {
                if self.seen.contains(&run.id) || !ids.insert(run.id) {
                    return Err(Invalid {
                        place: format!(
                            "{session}, {}, {}",
                            configuration_place(&c.record),
                            run_place(run)
                        ),
                        problem: "the id occurs more than once in the file".into(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// The SHA-256 of a text, as lowercase hex: the key a kernel configuration text is stored
/// under (`Environment::kernel_config_sha256`).
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Checks that each kernel configuration text is stored under its own SHA-256 and is lines of
/// printable text: a file of many lines, the one text that vernier stores with line breaks (and
/// tabs), and no other control character ([`crate::text`]).
pub fn check_kernel_configs(configs: &BTreeMap<String, String>) -> Result<(), Invalid> {
    for (sha, text) in configs {
        check_length("text", text, MAX_KERNEL_CONFIG_BYTES).map_err(|problem| Invalid {
            place: format!("kernel config {sha}"),
            problem,
        })?;
        if let Some(c) = text
            .chars()
            .find(|c| c.is_control() && !matches!(c, '\n' | '\t'))
        {
            let line = text.split('\n').find(|l| l.contains(c)).unwrap_or_default();
            return Err(Invalid {
                place: format!("kernel config {sha}"),
                problem: format!(
                    "the line '{}' contains the control character {}; a kernel configuration \
                     is lines of printable text",
                    line.escape_debug(),
                    crate::text::control_name(c)
                ),
            });
        }
        let actual = sha256_hex(text);
        if *sha != actual {
            return Err(Invalid {
                place: format!("kernel config {sha}"),
                problem: format!("the text has SHA-256 {actual}, not the key it is stored under"),
            });
        }
    }
    Ok(())
}

/// Where two versions of one session differ, as a field path (`configurations[0].runs[3]
/// .values`), or `None` when they hold the same content. Runs are matched by id, so their order
/// does not matter; numbers compare bit for bit.
pub fn difference(a: &StoredSession, b: &StoredSession) -> Option<String> {
    if let Some(path) = value_difference(&a.info, &b.info) {
        return Some(path);
    }
    if a.configurations.len() != b.configurations.len() {
        return Some(format!(
            "configurations (the stored session has {}, the file {})",
            a.configurations.len(),
            b.configurations.len()
        ));
    }
    for (i, (ca, cb)) in a.configurations.iter().zip(&b.configurations).enumerate() {
        if let Some(path) = value_difference(&ca.record, &cb.record) {
            return Some(format!("configurations[{i}].{path}"));
        }
        if ca.runs.len() != cb.runs.len() {
            return Some(format!(
                "configurations[{i}].runs (the stored session has {}, the file {})",
                ca.runs.len(),
                cb.runs.len()
            ));
        }
        if let Some(path) = runs_difference(&ca.runs, &cb.runs, 0) {
            return Some(format!("configurations[{i}].{path}"));
        }
    }
    None
}

/// Where the runs `b` of a configuration differ from those of `a`, as a field path
/// (`runs[3].values`), or `None` when each run of `b` is in `a` with the same content. Runs are
/// matched by id; `first` is the index of `b[0]` among the configuration's runs, for the path
/// (a session compared part by part). That `a` holds no other runs is the caller's to check.
pub fn runs_difference(a: &[RunRecord], b: &[RunRecord], first: usize) -> Option<String> {
    let by_id: HashMap<Uuid, &RunRecord> = a.iter().map(|r| (r.id, r)).collect();
    for (j, rb) in b.iter().enumerate() {
        let j = first + j;
        let Some(ra) = by_id.get(&rb.id) else {
            return Some(format!(
                "runs[{j}] (run {} is not in the stored session)",
                rb.id
            ));
        };
        if let Some(path) = run_difference(ra, rb) {
            return Some(format!("runs[{j}].{path}"));
        }
    }
    None
}

fn run_difference(a: &RunRecord, b: &RunRecord) -> Option<String> {
    // The common case (equal runs) without building JSON trees.
    let same_bits = a.values.len() == b.values.len()
        && a.values
            .iter()
            .zip(b.values.iter())
            .all(|((ka, va), (kb, vb))| ka == kb && va.to_bits() == vb.to_bits());
    if !same_bits {
        return Some("values".into());
    }
    if a == b {
        return None;
    }
    value_difference(a, b)
}

/// The first field (a dotted path) where the JSON forms of `a` and `b` differ.
fn value_difference<T: serde::Serialize + PartialEq>(a: &T, b: &T) -> Option<String> {
    if a == b {
        return None;
    }
    let (Ok(va), Ok(vb)) = (serde_json::to_value(a), serde_json::to_value(b)) else {
        return Some("(unencodable)".into());
    };
    Some(json_path(&va, &vb).unwrap_or_default())
}

fn json_path(a: &serde_json::Value, b: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(ma), Value::Object(mb)) => {
            for key in ma.keys().chain(mb.keys()) {
                match (ma.get(key), mb.get(key)) {
                    (Some(x), Some(y)) => {
                        if let Some(rest) = json_path(x, y) {
                            return Some(join(key, &rest));
                        }
                    }
                    _ => return Some(key.clone()),
                }
            }
            None
        }
        (Value::Array(xa), Value::Array(xb)) => {
            if xa.len() != xb.len() {
                return Some(String::new());
            }
            xa.iter()
                .zip(xb)
                .enumerate()
                .find_map(|(i, (x, y))| json_path(x, y).map(|rest| join(&format!("[{i}]"), &rest)))
        }
        (Value::Number(x), Value::Number(y)) => {
            let bits = |n: &serde_json::Number| n.as_f64().map(f64::to_bits);
            (x != y || bits(x) != bits(y)).then(String::new)
        }
        _ => (a != b).then(String::new),
    }
}

fn join(head: &str, rest: &str) -> String {
    if rest.is_empty() {
        head.to_string()
    } else if rest.starts_with('[') {
        format!("{head}{rest}")
    } else {
        format!("{head}.{rest}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn metric(unit: &str) -> MetricInfo {
        MetricInfo {
            name: "time".into(),
            unit: unit.into(),
            higher_is_better: false,
        }
    }

    #[test]
    fn durations_are_positive_and_at_most_the_longest_vernier_takes() {
        let values = |v: f64| BTreeMap::from([("time".to_string(), v)]);
        for (unit, most) in [("s", 1e9), ("ms", 1e12), ("us", 1e15), ("ns", 1e18)] {
            assert!(check_values(&metric(unit), &values(most)).is_ok(), "{unit}");
            let e = check_values(&metric(unit), &values(most * 1.5)).unwrap_err();
            assert!(
                e.ends_with(&format!("in {unit} of at most {most:e} (1e9 s)")),
                "{e}"
            );
        }
        let e = check_values(&metric("s"), &values(1e300)).unwrap_err();
        assert!(
            e.starts_with("field 'values.time' is 1e300, expected"),
            "{e}"
        );
        // A rate or a count has no such bound.
        assert!(check_values(&metric("forks/s"), &values(1e300)).is_ok());
    }

    #[test]
    fn texts_are_bounded_and_the_first_too_long_is_named() {
        #[derive(serde::Serialize)]
        struct Texts {
            name: String,
            map: BTreeMap<String, Vec<String>>,
        }
        let short = Texts {
            name: "a".repeat(MAX_TEXT_BYTES),
            map: BTreeMap::from([("k".to_string(), vec!["v".to_string()])]),
        };
        assert!(check_text_lengths(&short).is_ok());
        let long_value = Texts {
            map: BTreeMap::from([(
                "k".to_string(),
                vec!["v".into(), "x".repeat(MAX_TEXT_BYTES + 1)],
            )]),
            ..short
        };
        assert_eq!(
            check_text_lengths(&long_value).unwrap_err(),
            "field 'map.k[1]' is 1048577 bytes long, longer than 1048576, the most vernier \
             stores there"
        );
        let long_key = Texts {
            name: String::new(),
            map: BTreeMap::from([("k".repeat(MAX_TEXT_BYTES + 1), Vec::new())]),
        };
        assert!(check_text_lengths(&long_key)
            .unwrap_err()
            .starts_with("field 'map (a key)' is 1048577 bytes long"));
        assert!(check_length(
            "environment.hostname",
            &"h".repeat(70_000),
            MAX_HOSTNAME_BYTES
        )
        .unwrap_err()
        .contains("is 70000 bytes long, longer than 255"));
    }
}
