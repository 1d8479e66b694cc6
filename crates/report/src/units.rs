//! How times and quantities read, for every output (terminal, pages, figures): one formatter of
//! instants ([`time`]) and of durations ([`duration_s`]), and one scaler that picks the unit a
//! set of values reads best in ([`unit_for`] on a ladder of units: [`NS`], [`US`], [`BYTES`],
//! [`SPAN_NS`], [`DECIMAL`]).

use chrono::{DateTime, Local, TimeZone};

/// The clock an instant is shown on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    /// The reader's local time (the terminal).
    Local,
    /// UTC (pages and figures, which are read on other machines).
    Utc,
}

/// How much of an instant is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeForm {
    /// `2026-11-23`
    Day,
    /// `2026-11-23 17:36`
    Minute,
    /// `2026-11-23 17:36:22`
    Second,
    /// `11-23 17:36`: instants of one year apart by their minute (a figure's labels).
    MonthMinute,
    /// `17:36:22`: instants of one day apart by their second (a figure's labels).
    Clock,
}

impl TimeForm {
    /// Its strftime pattern (chrono's `format::strftime`).
    fn pattern(self) -> &'static str {
        match self {
            TimeForm::Day => "%Y-%m-%d",
            TimeForm::Minute => "%Y-%m-%d %H:%M",
            TimeForm::Second => "%Y-%m-%d %H:%M:%S",
            TimeForm::MonthMinute => "%m-%d %H:%M",
            TimeForm::Clock => "%H:%M:%S",
        }
    }
}

/// An instant, `ns` nanoseconds since the Unix epoch, on `zone`'s clock in `form`.
pub fn time(ns: i64, zone: Zone, form: TimeForm) -> String {
    match zone {
        Zone::Utc => DateTime::from_timestamp_nanos(ns)
            .format(form.pattern())
            .to_string(),
        Zone::Local => Local.timestamp_nanos(ns).format(form.pattern()).to_string(),
    }
}

/// `time(ns, Zone::Utc, TimeForm::Second)` with the zone named: `2026-11-23 17:36:22 UTC`.
pub fn utc_named(ns: i64) -> String {
    format!("{} UTC", time(ns, Zone::Utc, TimeForm::Second))
}

/// Seconds as a short duration: "4 s", "1 min 05 s", "2 h 05 min", "3 d 04 h", "over a year".
pub fn duration_s(s: f64) -> String {
    const MINUTE: u64 = 60;
    const HOUR: u64 = 60 * MINUTE;
    const DAY: u64 = 24 * HOUR;
    if !s.is_finite() || s < 0.0 {
        return "?".to_string();
    }
    if s < 60.0 {
        return format!("{s:.0} s");
    }
    let total = s.round() as u64;
    if total < HOUR {
        format!("{} min {:02} s", total / MINUTE, total % MINUTE)
    } else if total < DAY {
        format!("{} h {:02} min", total / HOUR, total % HOUR / MINUTE)
    } else if total < 365 * DAY {
        format!("{} d {:02} h", total / DAY, total % DAY / HOUR)
    } else {
        // A session that runs until it is stopped (`vernier monitor` without --for).
        "over a year".to_string()
    }
}

/// Units of one quantity, largest first, each with its size in the quantity's base unit.
pub type Ladder = [(&'static str, f64)];

/// Times recorded in nanoseconds.
pub const NS: &Ladder = &[("s", 1e9), ("ms", 1e6), ("us", 1e3), ("ns", 1.0)];
/// Times recorded in microseconds.
pub const US: &Ladder = &[("s", 1e6), ("ms", 1e3), ("us", 1.0)];
/// Sizes in bytes, binary multiples.
pub const BYTES: &Ladder = &[
    ("GiB", 1_073_741_824.0),
    ("MiB", 1_048_576.0),
    ("KiB", 1024.0),
    ("B", 1.0),
];
/// Long spans of time in nanoseconds (a monitoring session's axis).
pub const SPAN_NS: &Ladder = &[("d", 86_400e9), ("h", 3_600e9), ("min", 60e9), ("s", 1e9)];
/// Decimal prefixes from a million on (tick labels of any quantity).
pub const DECIMAL: &Ladder = &[("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6)];

/// The largest unit of `ladder` in which `largest` (the largest magnitude to show) is at least
/// `at_least` (1: `1.5e9` ns reads 1.5 s; 2: a 90 s span stays in seconds, so that its axis has
/// whole-numbered ticks); `None` when `largest` is below even the smallest unit's `at_least`.
pub fn unit_for(ladder: &Ladder, largest: f64, at_least: f64) -> Option<(&'static str, f64)> {
    ladder
        .iter()
        .copied()
        .find(|&(_, size)| largest >= at_least * size)
}

/// [`unit_for`], else the ladder's smallest unit.
pub fn unit_or_smallest(ladder: &Ladder, largest: f64, at_least: f64) -> (&'static str, f64) {
    unit_for(ladder, largest, at_least).unwrap_or(ladder[ladder.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_grow_into_larger_units() {
        for (seconds, text) in [
            (4.2, "4 s"),
            (65.2, "1 min 05 s"),
            (3599.0, "59 min 59 s"),
            (2.0 * 3600.0 + 5.0 * 60.0 + 30.0, "2 h 05 min"),
            (3.0 * 86400.0 + 4.0 * 3600.0, "3 d 04 h"),
            (4.4e9, "over a year"),
            (f64::NAN, "?"),
        ] {
            assert_eq!(duration_s(seconds), text, "{seconds}");
        }
    }

    #[test]
    fn instants_in_each_form() {
        // Mon, 23 Nov 2026 17:36:22.5 UTC
        let ns = 1_795_455_382_500_000_000;
        assert_eq!(time(ns, Zone::Utc, TimeForm::Day), "2026-11-23");
        assert_eq!(time(ns, Zone::Utc, TimeForm::Minute), "2026-11-23 17:36");
        assert_eq!(time(ns, Zone::Utc, TimeForm::Second), "2026-11-23 17:36:22");
        assert_eq!(time(ns, Zone::Utc, TimeForm::MonthMinute), "11-23 17:36");
        assert_eq!(utc_named(ns), "2026-11-23 17:36:22 UTC");
        // Local time is the same instant on the machine's clock, as chrono's Local gives it.
        let local = Local
            .timestamp_nanos(ns)
            .format("%Y-%m-%d %H:%M:%S")
            .to_string();
        assert_eq!(time(ns, Zone::Local, TimeForm::Second), local);
    }

    #[test]
    fn the_unit_is_the_largest_the_values_reach() {
        assert_eq!(unit_for(NS, 1.53e9, 1.0), Some(("s", 1e9)));
        assert_eq!(unit_for(NS, 1e7, 1.0), Some(("ms", 1e6)));
        assert_eq!(unit_for(NS, 0.5, 1.0), None);
        assert_eq!(unit_or_smallest(NS, 0.5, 1.0), ("ns", 1.0));
        assert_eq!(
            unit_for(BYTES, 1.945e10, 1.0),
            Some(("GiB", 1_073_741_824.0))
        );
        assert_eq!(unit_for(DECIMAL, 2e10, 1.0), Some(("G", 1e9)));
        assert_eq!(unit_for(DECIMAL, 999_999.0, 1.0), None);
        // At least 2 of a unit: 119 s stay seconds, 120 s are 2 min.
        assert_eq!(unit_or_smallest(SPAN_NS, 119e9, 2.0).0, "s");
        assert_eq!(unit_or_smallest(SPAN_NS, 120e9, 2.0).0, "min");
        assert_eq!(unit_or_smallest(SPAN_NS, 0.0, 2.0).0, "s");
    }
}
