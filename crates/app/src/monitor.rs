//! `vernier monitor`: continuous monitoring as the OSADL QA Farm does it ("the only relevant
//! result is the maximum of consecutive 5-min maxima", RESEARCH.md 1.5). One session whose runs
//! are consecutive intervals of the `latency` benchmark, each stored with its histograms as it
//! ends, so a crash or a reboot loses at most the interval in progress. It is a session as
//! `vernier run` makes one, with the repetition fixed: no warmup, no stopping rule, as many runs
//! as the time allows, and a signal as the way it ends ([`OnSignal::End`]).

use vernier_model::{parse_spec, SettingsLayer, StoppingRule};

use crate::request::{SessionRequest, TimeLimit};
use crate::signals::OnSignal;
use crate::AppError;

/// Benchmarks that can be monitored: those whose runs are intervals of a given length.
pub const MONITORABLE: &[&str] = &["latency"];

/// How much longer than its interval a run may take before it counts as hung: starting the
/// child, locking memory, preparing histograms and sending them back.
const RUN_SLACK_S: f64 = 120.0;

/// Without an end: runs until a signal ends it (about 30,000 years of 5-minute intervals).
const UNTIL_STOPPED: u32 = u32::MAX;

/// What `vernier monitor` asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MonitorRequest {
    /// A monitorable benchmark with its options, but not its duration: the interval is.
    pub spec: String,
    /// Length of one interval, seconds.
    pub interval_s: f64,
    /// How long to monitor, seconds (whole intervals); `None`: until a signal ends it.
    pub for_s: Option<f64>,
    /// Tags; `monitor=BENCHMARK` unless a `monitor` tag is given.
    pub tags: Vec<(String, String)>,
    pub note: Option<String>,
    pub monitors: Vec<String>,
    pub setup: Vec<String>,
    pub loads: Vec<String>,
}

/// The session of `request`: checked here as far as monitoring goes, and by
/// [`crate::run_session`] as any other.
pub fn monitoring_session(request: MonitorRequest) -> Result<SessionRequest, AppError> {
    let spec = parse_spec(&request.spec)?;
    if !MONITORABLE.contains(&spec.name.as_str()) {
        return Err(AppError::NotMonitorable {
            name: spec.name,
            valid: MONITORABLE.join(", "),
        });
    }
    if spec.options.iter().any(|(k, _)| k == "duration") {
        return Err(AppError::DurationOfInterval);
    }
    let interval = request.interval_s;
    let intervals = match request.for_s {
        Some(total) if total < interval => {
            return Err(AppError::ShorterThanInterval { total, interval })
        }
        Some(total) => (total / interval).floor() as u32,
        None => UNTIL_STOPPED,
    };
    let mut tags = request.tags;
    if !tags.iter().any(|(k, _)| k == "monitor") {
        tags.push(("monitor".to_string(), spec.name));
    }
    Ok(SessionRequest {
        specs: vec![format!("{}:duration={interval}", request.spec)],
        suite: None,
        settings: SettingsLayer {
            warmup: Some(0),
            // With min_runs = max_runs nothing but the count and the time ends it.
            min_runs: Some(intervals),
            max_runs: Some(intervals),
            max_time_s: Some(if intervals == UNTIL_STOPPED {
                1e15
            } else {
                f64::from(intervals) * (interval + RUN_SLACK_S)
            }),
            run_timeout_s: Some(interval + RUN_SLACK_S),
            stopping_rule: Some(StoppingRule::FixedN),
            ..SettingsLayer::default()
        },
        monitors: request.monitors,
        setup: request.setup,
        loads: request.loads,
        tags,
        note: request.note,
        busy: Default::default(),
        on_signal: OnSignal::End,
        // A monitor runs until it is stopped, or for its count of intervals.
        time_limit: TimeLimit::Off,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn request(spec: &str, interval_s: f64, for_s: Option<f64>) -> MonitorRequest {
        MonitorRequest {
            spec: spec.to_string(),
            interval_s,
            for_s,
            ..MonitorRequest::default()
        }
    }

    #[test]
    fn whole_intervals_are_the_runs_and_the_interval_their_duration() {
        let session = monitoring_session(request("latency:cpus=0", 300.0, Some(1000.0))).unwrap();
        assert_eq!(session.specs, ["latency:cpus=0:duration=300"]);
        let s = &session.settings;
        assert_eq!(
            (s.warmup, s.min_runs, s.max_runs),
            (Some(0), Some(3), Some(3))
        );
        assert_eq!(s.max_time_s, Some(3.0 * 420.0));
        assert_eq!(s.run_timeout_s, Some(420.0));
        assert_eq!(
            session.tags,
            [("monitor".to_string(), "latency".to_string())]
        );
        assert_eq!(session.on_signal, OnSignal::End);
        let endless = monitoring_session(request("latency", 60.0, None)).unwrap();
        assert_eq!(endless.settings.max_runs, Some(u32::MAX));
    }

    #[test]
    fn what_cannot_be_monitored_is_refused() {
        for (request, expect) in [
            (
                request("pipe", 60.0, None),
                "'pipe' cannot be monitored; valid: latency",
            ),
            (
                request("latency:duration=5", 60.0, None),
                "give --interval instead of duration=",
            ),
            (
                request("latency", 60.0, Some(30.0)),
                "--for 30 s is shorter than one --interval of 60 s",
            ),
        ] {
            let error = monitoring_session(request).unwrap_err().to_string();
            assert!(error.contains(expect), "{error}");
        }
    }
}
