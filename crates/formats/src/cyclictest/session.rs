//! cyclictest's results as one vernier session, for `vernier import`: the file is parsed by
//! [`super`] (the parser the `cyclictest` benchmark uses too), and becomes a `cyclictest`
//! configuration with one measured run whose histograms are the threads'.

use vernier_model::{
    ConfigurationRecord, Options, RunRecord, Rusage, StopReason, StoredConfiguration,
    StoredSession, Texts,
};

use super::{metrics, run_values, Cyclictest, CyclictestError, Output};
use crate::ids::IdHasher;
use crate::import::Imported;
use crate::ReadError;

impl From<CyclictestError> for ReadError {
    fn from(e: CyclictestError) -> Self {
        match e {
            CyclictestError::Line { line, problem } => ReadError::CyclictestLine { line, problem },
            CyclictestError::Json(e) => ReadError::CyclictestJson(e),
            CyclictestError::Invalid(problem) => ReadError::Cyclictest(problem),
            CyclictestError::Io(e) => ReadError::Io(e),
        }
    }
}

/// A time as cyclictest writes it (`Mon, 23 Nov 2026 17:36:22 +0000`), ns since the epoch.
fn json_time(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc2822(text.trim())
        .ok()
        .and_then(|t| t.timestamp_nanos_opt())
}

/// The file's start and end, ns since the epoch, when it gives both in order (JSON only).
pub(crate) fn times(c: &Cyclictest) -> Option<(i64, i64)> {
    match (
        c.start_time.as_deref().and_then(json_time),
        c.end_time.as_deref().and_then(json_time),
    ) {
        (Some(start), Some(end)) if end >= start && start >= 0 => Some((start, end)),
        _ => None,
    }
}

/// Why the start and end of a `--json` file cannot date its session, in one line naming the
/// field and its text; `None` when they can, and for the histogram output, which has no times.
/// cyclictest writes them with strftime's `%a, %d %b %Y %T %z` in the C locale (RFC 2822); the
/// day and month names of another locale, an edited file or an end before the start are not
/// read. Such a session is still imported, dated at its first import ([`session`] says so in
/// its note), since its histograms do not depend on when they were taken.
pub fn unreadable_times(c: &Cyclictest) -> Option<String> {
    if c.output != Output::Json || times(c).is_some() {
        return None;
    }
    let field = |name: &str, text: &Option<String>| match text {
        None => Some(format!("it has no {name}")),
        Some(t) if json_time(t).is_none() => Some(format!(
            "its {name} '{}' is not a date as cyclictest writes them (RFC 2822, 'Mon, 23 Nov \
             2026 17:36:22 +0000')",
            vernier_model::escape_controls(t)
        )),
        Some(_) => None,
    };
    let problems: Vec<String> = [
        field("start_time", &c.start_time),
        field("end_time", &c.end_time),
    ]
    .into_iter()
    .flatten()
    .collect();
    Some(if problems.is_empty() {
        "its end_time is before its start_time".to_string()
    } else {
        problems.join(" and ")
    })
}

/// The one session of a cyclictest file, not yet checked: a `cyclictest` configuration with
/// one measured run whose histograms are the threads'. A file without times (the histogram
/// output) or whose times cannot be read ([`unreadable_times`]) is stamped from `now_ns`.
/// Texts of the file (its command line, host name, kernel) are recorded escaped
/// ([`vernier_model::text`]).
pub fn session(c: &Cyclictest, now_ns: i64) -> Result<StoredSession, ReadError> {
    let (values, histograms) = run_values(c)?;
    let (metric, secondary) = metrics();
    let (started, ended) = times(c).unwrap_or_else(|| {
        let cycles = c.threads.iter().map(|t| t.count()).max().unwrap_or(0);
        let duration = c
            .interval_us
            .map_or(0, |i| i.saturating_mul(1_000).saturating_mul(cycles));
        (
            now_ns,
            now_ns.saturating_add(i64::try_from(duration).unwrap_or(i64::MAX)),
        )
    });
    let digest = &c.digest[..];
    let id = |kind: &[u8]| IdHasher::new().part(kind).part(digest).id();
    let options = Options(c.options.clone());
    let label = options.label();
    let spec = if label.is_empty() {
        "cyclictest".to_string()
    } else {
        format!("cyclictest:{label}")
    };
    let configuration = id(b"cyclictest-configuration");
    let run = RunRecord {
        id: vernier_model::RunPlace {
            configuration,
            warmup: false,
            index: 0,
        }
        .derived_id(),
        index: 0,
        warmup: false,
        round: 0,
        preceding_executions: 0,
        started_at_ns: started,
        ended_at_ns: ended,
        values: values.into(),
        histograms,
        rusage: Rusage::default(),
        foreign_cpu_ns: 0,
        controller_cpu_ns: 0,
        load_cpu_ns: None,
        monitors: None,
        setup_steps: Vec::new(),
        setup_changed: Vec::new(),
    };
    let configuration = StoredConfiguration {
        record: ConfigurationRecord {
            id: configuration,
            position: 0,
            benchmark: "cyclictest".to_string(),
            benchmark_version: c.version.clone().unwrap_or_else(|| "imported".to_string()),
            options,
            metric,
            secondary_metrics: secondary,
            loads: Vec::new(),
            stop_reason: Some(StopReason::MaxRuns),
            converged: false,
            error: c
                .return_code
                .filter(|&code| code != 0)
                .map(|code| format!("cyclictest exited with return code {code}")),
        },
        runs: vec![run],
        profiles: Vec::new(),
    };
    let mut note = match (c.output, &c.cmdline) {
        (Output::Json, Some(cmd)) => format!("imported from cyclictest --json: {cmd}"),
        (Output::Json, None) => "imported from cyclictest --json".to_string(),
        (Output::Histogram, _) => "imported from cyclictest's histogram output".to_string(),
    };
    if unreadable_times(c).is_some() {
        note.push_str("; dated at its first import: its start and end times could not be read");
    }
    let mut session = StoredSession {
        info: Imported {
            id: id(b"cyclictest-session"),
            started_at_ns: started,
            ended_at_ns: ended,
            specs: vec![spec],
            source: "cyclictest",
            note,
            environment: c.environment.clone(),
        }
        .info(),
        configurations: vec![configuration],
    };
    session.escape_controls();
    Ok(session)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::cyclictest::read;
    use crate::cyclictest::tests::fixture;
    use crate::import::{parse, sniff, Kind};

    fn text(name: &str) -> Cyclictest {
        read(Output::Histogram, &fixture(name)[..]).unwrap()
    }

    #[test]
    fn every_fixture_is_recognised() {
        for (name, output) in [
            ("2.4-h400-q.txt", Output::Histogram),
            ("2.4-H1000-q.txt", Output::Histogram),
            ("2.4-h1000.txt", Output::Histogram),
            ("2.4-histfile-h100.txt", Output::Histogram),
            ("2.4-default-system-h30.txt", Output::Histogram),
            ("2.4-no-h.txt", Output::Histogram),
            ("2.10-sparse-h400-q.txt", Output::Histogram),
            ("2.10-sparse-H1000-q.txt", Output::Histogram),
            ("2.4-h400.json", Output::Json),
            ("2.4-no-h.json", Output::Json),
        ] {
            let bytes = fixture(name);
            assert_eq!(
                sniff(&bytes, true).unwrap(),
                Kind::Cyclictest(output),
                "{name}"
            );
            // From its first bytes alone.
            assert_eq!(
                sniff(&bytes[..bytes.len().min(300)], false).unwrap(),
                Kind::Cyclictest(output),
                "{name}"
            );
        }
        // Other text is named, with what import takes.
        let err = sniff(b"hello\n# Histogramm\n", true).unwrap_err();
        assert!(matches!(err, ReadError::NotImportable(_)), "{err}");
        assert!(
            err.to_string().starts_with(
                "the file is text but not cyclictest's output (no line '# Histogram', "
            ),
            "{err}"
        );
        let err = sniff(br#"{"thread": {}}"#, true).unwrap_err();
        assert!(matches!(err, ReadError::Neither), "{err}");
    }

    #[test]
    fn a_histogram_output_becomes_one_configuration_with_one_run() {
        let c = text("2.4-h400-q.txt");
        let s = session(&c, 1_000).unwrap();
        vernier_model::validate::check_session(&s).unwrap();
        let run = &s.configurations[0].runs[0];
        assert_eq!(run.histograms.len(), 2);
        assert_eq!(run.values["samples"], 9879.0 + 9943.0);
        assert!(!run.values.contains_key("missed"));
        let record = &s.configurations[0].record;
        assert_eq!(record.benchmark, "cyclictest");
        assert_eq!(record.benchmark_version, "imported");
        assert_eq!(record.metric.name, "p99");
        assert!(record.secondary_metrics.iter().all(|m| m.name != "missed"));
        assert_eq!(s.info.tags["source"], "cyclictest");
        assert_eq!(s.info.specs, vec!["cyclictest:histogram=400:threads=2"]);
        assert_eq!(run.started_at_ns, 1_000);
        // The sparse form of the same run: the same values, another file.
        let sparse = session(&text("2.10-sparse-h400-q.txt"), 1_000).unwrap();
        assert_eq!(sparse.configurations[0].runs[0].values, run.values);
        assert_ne!(sparse.info.id, s.info.id);
        // Laid out as long as the cycles took at the interval of the status lines.
        let s = session(&text("2.4-h1000.txt"), 0).unwrap();
        assert_eq!(s.info.ended_at_ns, Some(200_000 * (9902 + 4)));
        // A p99 among the overflows is refused with the parser's reason.
        let err = session(&text("2.4-default-system-h30.txt"), 0)
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with(
                "run cyclictest with a larger -h than 30 (the largest latency was 1423 us)"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_json_output_keeps_its_own_times() {
        let bytes = fixture("2.4-h400.json");
        let c = read(Output::Json, &bytes[..]).unwrap();
        let s = session(&c, 0).unwrap();
        vernier_model::validate::check_session(&s).unwrap();
        let start = chrono::DateTime::parse_from_rfc2822("Mon, 23 Nov 2026 17:36:22 +0000")
            .unwrap()
            .timestamp_nanos_opt()
            .unwrap();
        assert_eq!(s.info.started_at_ns, start);
        assert_eq!(s.info.ended_at_ns, Some(start + 2_000_000_000));
        assert_eq!(s.configurations[0].record.benchmark_version, "2.40");
        assert_eq!(s.configurations[0].runs[0].histograms[1].cpu, Some(1));
        // Parsed through `parse`, the times are the file's own.
        let parsed = parse(&bytes, 0).unwrap();
        assert!(!parsed.stamped);
        assert_eq!(parsed.sessions, vec![s]);
        // The parser's errors keep their kind: line numbers for text, the JSON's own cause.
        let err = parse(&fixture("2.4-no-h.txt"), 0).unwrap_err();
        assert!(
            matches!(err, ReadError::CyclictestLine { line: 3, .. }),
            "{err}"
        );
        let json = br#"{"rt_test_version:": "2.10", "thread": {"0": {"histogram": {"3": -3},
            "cycles": 4, "min": 3, "max": 3, "avg": 3, "cpu": 0}}}"#;
        let err = parse(json, 0).unwrap_err();
        assert!(matches!(err, ReadError::CyclictestJson(_)), "{err}");
    }

    #[test]
    fn ids_follow_the_content() {
        let a = parse(&fixture("2.4-h400-q.txt"), 5).unwrap().sessions;
        let b = parse(&fixture("2.4-h400-q.txt"), 9).unwrap().sessions;
        assert_eq!(a[0].info.id, b[0].info.id);
        assert_eq!(
            a[0].configurations[0].runs[0].id,
            b[0].configurations[0].runs[0].id
        );
        assert_ne!(a[0].info.started_at_ns, b[0].info.started_at_ns);
    }
}
