//! The one rule for text that vernier stores: no control characters (Unicode's general category
//! Cc: the C0 controls, DEL and the C1 controls). Every text a record carries (names, options,
//! specs, environment values, findings, errors, monitor keys) is one line of printable
//! characters, so that tables, terminals, CSV files and the site's SVG figures (XML 1.0 allows no
//! C0 control but tab, newline and carriage return, https://www.w3.org/TR/xml/#charsets) show it
//! as it is, and PostgreSQL's text can hold it (it cannot hold NUL,
//! https://www.postgresql.org/docs/15/datatype-character.html).
//!
//! - Text from the user (tags, notes, specs) is refused at input with a message naming it.
//! - Text from outside (a child's or a tool's output, a file under /proc, another tool's results
//!   file) is escaped where it is recorded: [`escape_controls`], the same escaping with which
//!   every command shows stored text, so `run` and `show` print a benchmark's error alike.
//! - An import refuses a vernier export whose records carry a control character
//!   ([`crate::validate`], with [`Texts::find_control`]), since vernier never writes one.
//!
//! [`Texts`] walks every text of a record; its implementations destructure each type in full,
//! so a text field added to a record cannot be left out of the rule without a compile error.

use std::borrow::Cow;
use std::collections::BTreeMap;

use uuid::Uuid;

use crate::benchmark::MetricInfo;
use crate::environment::{CpuTopology, Environment};
use crate::finding::{Finding, Severity};
use crate::histogram::RunHistogram;
use crate::monitor::{MonitorFailure, MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind};
use crate::options::{OptionValue, Options};
use crate::profile::{FoldedStack, FoldedStacks, ProfileRecord, ProfileScope, ProfileSettings};
use crate::record::{
    ChangedSetting, ConfigurationRecord, RunRecord, Rusage, SessionInfo, SessionStatus, SetupStep,
    StopReason, StoredConfiguration, StoredSession,
};
use crate::settings::{Settings, StoppingRule};
use crate::trace::{ThreadTrace, TraceEvent};
use crate::values::RunValues;

/// The first character of `text` that vernier never stores, if any.
pub fn first_control(text: &str) -> Option<char> {
    text.chars().find(|c| c.is_control())
}

/// `text` with every control character written as a Rust escape (`\n`, `\r`, `\t`, `\0`,
/// `\u{1b}`), the rest unchanged: how stored text from outside is recorded and how every
/// command shows text. Escaping text that has none changes nothing, so escaping twice is
/// escaping once.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    escape(text, char::is_control)
}

/// `text` for a terminal, a page or a figure: every control character as a Rust escape, as
/// text from outside is recorded ([`escape_controls`]), so `run` and `show` print alike. Raw, a
/// control character could break a line or carry an ANSI sequence that rewrites the screen.
pub fn printable(text: &str) -> Cow<'_, str> {
    escape_controls(text)
}

/// Text made of stored text for a terminal (tables, reports): its own line breaks stay, every
/// other control character is escaped as [`printable`] escapes it.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    escape(text, |c| c.is_control() && c != '\n')
}

/// A finished HTML or SVG document with every character that a markup document may not hold
/// escaped: control characters other than tab, line feed and carriage return, and the
/// noncharacters U+FFFE and U+FFFF (XML 1.0, 2.2 "Characters": not a `Char`, so an SVG holding
/// one is not XML; HTML Living Standard, 13.2.3.5 "Preprocessing the input stream": each is a
/// parse error). The markup vernier writes is ASCII without such characters, so only stored
/// text changes; the escapes hold none of `& < > " '`, so escaped text stays text.
pub fn printable_in_markup(document: &str) -> Cow<'_, str> {
    escape(document, |c| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{fffe}' | '\u{ffff}')
    })
}

/// `text` with each character that `escaped` selects as its Rust escape (`char::escape_debug`
/// gives `\n`, `\t`, `\0` and `\u{..}` for these), borrowed when there is none.
fn escape(text: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The name of a control character in messages: `ESC (U+001B)`.
pub fn control_name(c: char) -> String {
    let name = match c {
        '\0' => "NUL ",
        '\t' => "TAB ",
        '\n' => "LF ",
        '\r' => "CR ",
        '\u{1b}' => "ESC ",
        '\u{7f}' => "DEL ",
        _ => "",
    };
    format!("{name}(U+{:04X})", u32::from(c))
}

/// The problem of a stored text that holds a control character, for messages: `field` names it
/// (`options.cmd`).
fn problem(field: &str, text: &str, c: char, key: bool) -> String {
    let what = if key {
        format!("a key of field '{field}'")
    } else {
        format!("field '{field}'")
    };
    format!(
        "{what} ('{}') contains the control character {}; vernier stores text as one line of \
         printable characters",
        text.escape_debug(),
        control_name(c)
    )
}

/// Refuses a text that holds a control character, naming `field`.
pub fn check_text(field: &str, text: &str) -> Result<(), String> {
    match first_control(text) {
        Some(c) => Err(problem(field, text, c, false)),
        None => Ok(()),
    }
}

/// A text with a control character, where [`Texts::find_control`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The field's path, innermost first (`["cmd", "options"]`); indexes as `[3]`.
    path_rev: Vec<String>,
    text: String,
    control: char,
    /// The text is a map's key, not a value.
    key: bool,
}

impl Found {
    fn within(mut self, segment: impl Into<String>) -> Self {
        self.path_rev.push(segment.into());
        self
    }

    /// The field's path: `environment.sysctls[kernel.printk]`, `configurations[0].options`.
    pub fn field(&self) -> String {
        let mut path = String::new();
        for segment in self.path_rev.iter().rev() {
            if !path.is_empty() && !segment.starts_with('[') {
                path.push('.');
            }
            path.push_str(segment);
        }
        path
    }

    /// What is wrong, in one line, with the field and the character named.
    pub fn problem(&self) -> String {
        problem(&self.field(), &self.text, self.control, self.key)
    }
}

/// The texts a record carries, for the one rule of the module documentation.
pub trait Texts {
    /// The first text (a value or a map's key) that holds a control character.
    fn find_control(&self) -> Option<Found>;
    /// Escapes every control character of every text ([`escape_controls`]).
    fn escape_controls(&mut self);
}

impl Texts for String {
    fn find_control(&self) -> Option<Found> {
        first_control(self).map(|control| Found {
            path_rev: Vec::new(),
            text: self.clone(),
            control,
            key: false,
        })
    }

    fn escape_controls(&mut self) {
        if let Cow::Owned(escaped) = escape_controls(self) {
            *self = escaped;
        }
    }
}

impl<T: Texts> Texts for Option<T> {
    fn find_control(&self) -> Option<Found> {
        self.as_ref().and_then(Texts::find_control)
    }

    fn escape_controls(&mut self) {
        if let Some(v) = self {
            v.escape_controls();
        }
    }
}

impl<T: Texts> Texts for Box<T> {
    fn find_control(&self) -> Option<Found> {
        (**self).find_control()
    }

    fn escape_controls(&mut self) {
        (**self).escape_controls();
    }
}

/// Metric names are keys, as in a map.
impl Texts for RunValues {
    fn find_control(&self) -> Option<Found> {
        self.keys().find_map(|k| {
            first_control(k).map(|control| Found {
                path_rev: Vec::new(),
                text: k.to_string(),
                control,
                key: true,
            })
        })
    }

    fn escape_controls(&mut self) {
        if self.keys().any(|k| first_control(k).is_some()) {
            *self = self
                .iter()
                .map(|(k, v)| (escape_controls(k).into_owned(), *v))
                .collect();
        }
    }
}

impl<T: Texts> Texts for Vec<T> {
    fn find_control(&self) -> Option<Found> {
        self.iter()
            .enumerate()
            .find_map(|(i, v)| v.find_control().map(|f| f.within(format!("[{i}]"))))
    }

    fn escape_controls(&mut self) {
        self.iter_mut().for_each(Texts::escape_controls);
    }
}

impl<V: Texts> Texts for BTreeMap<String, V> {
    fn find_control(&self) -> Option<Found> {
        for (k, v) in self {
            if let Some(control) = first_control(k) {
                return Some(Found {
                    path_rev: Vec::new(),
                    text: k.clone(),
                    control,
                    key: true,
                });
            }
            if let Some(found) = v.find_control() {
                return Some(found.within(format!("[{}]", k.escape_debug())));
            }
        }
        None
    }

    fn escape_controls(&mut self) {
        if self.keys().any(|k| first_control(k).is_some()) {
            *self = std::mem::take(self)
                .into_iter()
                .map(|(k, v)| (escape_controls(&k).into_owned(), v))
                .collect();
        }
        self.values_mut().for_each(Texts::escape_controls);
    }
}

/// Types that hold no text.
macro_rules! no_texts {
    ($($ty:ty),* $(,)?) => {
        $(impl Texts for $ty {
            fn find_control(&self) -> Option<Found> {
                None
            }
            fn escape_controls(&mut self) {}
        })*
    };
}

no_texts!(
    u32,
    i32,
    u64,
    i64,
    f64,
    bool,
    Uuid,
    Severity,
    SessionStatus,
    StopReason,
    StoppingRule,
    SeriesKind,
    ProfileSettings,
    ProfileScope,
    FoldedStack,
    MonitorPoint,
    Rusage,
    CpuTopology,
    (u64, u64),
);

/// A struct's texts, field by field. The struct is destructured in full: a field added to it
/// must be listed here (a compile error otherwise), and a field that holds no text costs
/// nothing.
macro_rules! texts {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        impl Texts for $ty {
            fn find_control(&self) -> Option<Found> {
                let $ty { $($field),* } = self;
                $(
                    if let Some(found) = $field.find_control() {
                        return Some(found.within(stringify!($field)));
                    }
                )*
                None
            }

            fn escape_controls(&mut self) {
                let $ty { $($field),* } = self;
                $($field.escape_controls();)*
            }
        }
    };
}

texts!(SessionInfo {
    id,
    started_at_ns,
    ended_at_ns,
    status,
    suite,
    specs,
    tags,
    note,
    settings,
    vernier_version,
    environment,
    fingerprint,
    findings,
    setup,
    monitors,
});
texts!(Settings {
    warmup,
    target,
    min_runs,
    max_runs,
    min_time_s,
    max_time_s,
    interleave,
    seed,
    stopping_rule,
    confidence_level,
    profile,
});
texts!(Environment {
    kernel_release,
    kernel_version,
    kernel_cmdline,
    arch,
    cpu_model,
    online_cpus,
    online_cpu_list,
    memory_bytes,
    hostname,
    machine_id,
    distro,
    virtualization,
    clocksource,
    preemption,
    governor,
    kernel_config_sha256,
    cpufreq_driver,
    turbo,
    sysctls,
    mitigations,
    thp_enabled,
    thp_defrag,
    smt_control,
    smt_active,
    cpuidle_driver,
    cpuidle_governor,
    tick,
    tick_hz,
    nohz_full_cpus,
    cgroup_version,
    topology,
    schedstat_version,
    tool_versions,
    unsupported,
});
texts!(Finding {
    id,
    severity,
    title,
    detail,
    fix,
});
texts!(ConfigurationRecord {
    id,
    position,
    benchmark,
    benchmark_version,
    options,
    metric,
    secondary_metrics,
    loads,
    stop_reason,
    converged,
    error,
});
texts!(MetricInfo {
    name,
    unit,
    higher_is_better,
});
// Frame names come from the symbols of the profiled programs.
texts!(FoldedStacks { frames, stacks });
texts!(ProfileRecord {
    id,
    index,
    event,
    frequency_hz,
    scope,
    started_at_ns,
    ended_at_ns,
    value,
    stacks,
});
texts!(RunRecord {
    id,
    index,
    warmup,
    round,
    preceding_executions,
    started_at_ns,
    ended_at_ns,
    values,
    histograms,
    rusage,
    foreign_cpu_ns,
    controller_cpu_ns,
    load_cpu_ns,
    monitors,
    setup_steps,
    setup_changed,
});
texts!(ChangedSetting {
    setting,
    set,
    found,
});
texts!(RunHistogram {
    quantity,
    thread,
    cpu,
    count,
    min_ns,
    max_ns,
    max_index,
    sum_ns,
    overflows,
    missed,
    buckets,
    trace,
});
texts!(ThreadTrace {
    threshold_ns,
    latency_ns,
    expiry_ns,
    wake_ns,
    tid,
    absent_events,
    truncated,
    events,
});
texts!(TraceEvent {
    ts_ns,
    cpu,
    pid,
    comm,
    flags,
    name,
    fields,
});
texts!(RunMonitorData {
    series,
    summary,
    unsupported,
    failures,
    sampler_priority,
    sampler_cpu_ns,
    rounds,
});
texts!(MonitorSeries {
    monitor,
    metric,
    unit,
    kind,
    points,
});
texts!(MonitorFailure {
    monitor,
    t_ns,
    message,
});
texts!(SetupStep {
    plugin,
    waited_ms,
    timed_out,
    detail,
});

impl Texts for OptionValue {
    fn find_control(&self) -> Option<Found> {
        match self {
            OptionValue::Text(t) => t.find_control(),
            OptionValue::UInt(_) | OptionValue::Float(_) => None,
        }
    }

    fn escape_controls(&mut self) {
        if let OptionValue::Text(t) = self {
            t.escape_controls();
        }
    }
}

impl Texts for Options {
    fn find_control(&self) -> Option<Found> {
        self.0.find_control()
    }

    fn escape_controls(&mut self) {
        self.0.escape_controls();
    }
}

/// A configuration's texts are its record's (flattened into it in the export format) and its
/// runs'.
impl Texts for StoredConfiguration {
    fn find_control(&self) -> Option<Found> {
        let StoredConfiguration {
            record,
            runs,
            profiles,
        } = self;
        record
            .find_control()
            .or_else(|| runs.find_control().map(|f| f.within("runs")))
            .or_else(|| profiles.find_control().map(|f| f.within("profiles")))
    }

    fn escape_controls(&mut self) {
        self.record.escape_controls();
        self.runs.escape_controls();
        self.profiles.escape_controls();
    }
}

/// A session's texts are its header's (flattened into it in the export format) and its
/// configurations'.
impl Texts for StoredSession {
    fn find_control(&self) -> Option<Found> {
        let StoredSession {
            info,
            configurations,
        } = self;
        info.find_control().or_else(|| {
            configurations
                .find_control()
                .map(|f| f.within("configurations"))
        })
    }

    fn escape_controls(&mut self) {
        self.info.escape_controls();
        self.configurations.escape_controls();
    }
}

/// `n` things, the noun in the plural unless `n` is 1: "1 configuration", "4 configurations".
/// `what` is a noun whose plural adds an s. Here, below every crate that words a count (the
/// warnings of analysis, the terminal's report, the binary), so that none says "1 runs".
pub fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_for_a_terminal() {
        assert!(matches!(printable("kernel 6.18"), Cow::Borrowed(_)));
        assert_eq!(printable("a\nb"), "a\\nb");
        assert_eq!(printable("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(printable("tab\there"), "tab\\there");
        assert_eq!(printable("naïve ü"), "naïve ü");
        assert_eq!(printable_lines("a\u{1b}[2J\nb\n"), "a\\u{1b}[2J\nb\n");
    }

    #[test]
    fn markup_keeps_its_whitespace_and_escapes_what_xml_forbids() {
        assert_eq!(
            printable_in_markup("<p>a\tb\r\nc</p>\n"),
            "<p>a\tb\r\nc</p>\n"
        );
        assert_eq!(
            printable_in_markup("<text>\0\u{1}\u{1b}[2J\u{7f}\u{85}\u{ffff}\u{fffe}</text>"),
            "<text>\\0\\u{1}\\u{1b}[2J\\u{7f}\\u{85}\\u{ffff}\\u{fffe}</text>"
        );
        // Other noncharacters and private use are XML characters, left as they are.
        assert_eq!(printable_in_markup("\u{fdd0}\u{e000}"), "\u{fdd0}\u{e000}");
    }

    #[test]
    fn control_characters_are_escaped_once() {
        assert_eq!(escape_controls("plain ünïcode"), "plain ünïcode");
        assert!(matches!(escape_controls("plain"), Cow::Borrowed(_)));
        let escaped = escape_controls("a\u{1b}[31mb\rc\0d\te\nf\u{85}g\u{7f}");
        assert_eq!(escaped, "a\\u{1b}[31mb\\rc\\0d\\te\\nf\\u{85}g\\u{7f}");
        assert_eq!(escape_controls(&escaped), escaped);
        assert_eq!(control_name('\u{1b}'), "ESC (U+001B)");
        assert_eq!(control_name('\u{85}'), "(U+0085)");
    }

    #[test]
    fn every_text_of_a_session_is_found_with_its_field() {
        let mut session: StoredSession = serde_json::from_str(
            r#"{"id": "00000000-0000-0000-0000-000000000001", "started_at_ns": 1,
                "ended_at_ns": 2, "status": "completed", "suite": null, "specs": ["pipe"],
                "tags": {}, "note": null, "settings": {"warmup": 0, "target": 0.02,
                "min_runs": 1, "max_runs": 1, "min_time_s": 0, "max_time_s": 1,
                "interleave": false, "seed": 0, "stopping_rule": "fixed-n",
                "confidence_level": 0.95}, "vernier_version": "1", "environment": {},
                "fingerprint": "f", "configurations": [{"id":
                "00000000-0000-0000-0000-000000000002", "position": 0, "benchmark": "pipe",
                "benchmark_version": "1", "options": {"cmd": "true", "n": 3},
                "metric": {"name": "time", "unit": "s", "higher_is_better": false},
                "stop_reason": "max-runs", "converged": false, "error": null, "runs": [{"id":
                "00000000-0000-0000-0000-000000000003", "index": 0, "warmup": false,
                "round": 0, "preceding_executions": 0, "started_at_ns": 1, "ended_at_ns": 2,
                "values": {"time": 1.0}, "rusage": {"user_cpu_ns": 0, "system_cpu_ns": 0,
                "voluntary_cs": 0, "involuntary_cs": 0, "max_rss_bytes": 0},
                "foreign_cpu_ns": 0, "controller_cpu_ns": 0}]}]}"#,
        )
        .unwrap();
        assert_eq!(session.find_control(), None);
        let clean = session.clone();
        session
            .info
            .environment
            .sysctls
            .insert("kernel.printk".into(), "4\u{1b}[2J".into());
        let found = session.find_control().unwrap();
        assert_eq!(found.field(), "environment.sysctls[kernel.printk]");
        assert_eq!(
            found.problem(),
            "field 'environment.sysctls[kernel.printk]' ('4\\u{1b}[2J') contains the control \
             character ESC (U+001B); vernier stores text as one line of printable characters"
        );
        session.escape_controls();
        assert_eq!(
            session.info.environment.sysctls["kernel.printk"],
            "4\\u{1b}[2J"
        );
        assert_eq!(session.find_control(), None);

        let mut session = clean.clone();
        session.configurations[0]
            .record
            .options
            .0
            .insert("cmd".into(), OptionValue::Text("a\rb".into()));
        assert_eq!(
            session.find_control().unwrap().field(),
            "configurations[0].options[cmd]"
        );
        let mut session = clean.clone();
        session.configurations[0].runs[0]
            .values
            .insert("ti\0me", 2.0);
        let found = session.find_control().unwrap();
        assert_eq!(found.field(), "configurations[0].runs[0].values");
        assert!(found.problem().starts_with("a key of field"), "{found:?}");
        session.escape_controls();
        assert!(session.configurations[0].runs[0]
            .values
            .contains_key("ti\\0me"));
        let mut session = clean;
        session
            .info
            .findings
            .push(Finding::new("x", Severity::Info, "t", "line\nbreak"));
        assert_eq!(
            session.find_control().unwrap().field(),
            "findings[0].detail"
        );
    }
}
