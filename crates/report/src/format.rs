//! Formatting of numbers, sessions and findings for terminal output.

/// Formats `v` with about `digits` significant digits, without exponent for everyday ranges.
pub fn sig(v: f64, digits: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let magnitude = v.abs().log10().floor() as i32;
    if !(-4..=9).contains(&magnitude) {
        return format!("{v:.prec$e}", prec = digits.saturating_sub(1));
    }
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    format!("{v:.decimals$}")
}

/// A count as a whole number ("2", not "2.000"), anything else as [`sig`] with `digits`.
pub fn count_or_sig(v: f64, digits: usize) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        sig(v, digits)
    }
}

/// A fraction as a percentage with one decimal: 0.0123 -> "1.2%".
pub fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:.1}%", v * 100.0)
    } else {
        "inf".to_string()
    }
}

/// Counted nouns, defined in model for every crate that words a count (analysis's warnings).
pub use vernier_model::text::plural;

/// A tag's value as tables and legends show it: an id (a session's or a bisection's, a UUID)
/// by its first 8 characters and a commit hash (20 hex digits or more) by its first 12, as
/// `vernier sessions` and `vernier bisect` name them; any other value whole.
pub fn short_tag_value(value: &str) -> &str {
    let hex = value.len() >= 20 && value.bytes().all(|b| b.is_ascii_hexdigit());
    // 8-4-4-4-12 hex digits, as a UUID is written.
    let id = value.len() == 36
        && value.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    if id {
        value.get(..8).unwrap_or(value)
    } else if hex {
        value.get(..12).unwrap_or(value)
    } else {
        value
    }
}

/// What a session ran: its suite, else its specs.
pub fn describe_session(suite: Option<&str>, specs: &[String]) -> String {
    suite
        .map(|n| format!("suite {n}"))
        .unwrap_or_else(|| specs.join(" "))
}

/// Findings of a system check as lines: severity, title, detail, fix; `no findings` when there
/// are none.
pub fn findings_text(findings: &[vernier_model::Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        out.push_str(&format!("{:<8} {}: {}\n", f.severity, f.title, f.detail));
        if let Some(fix) = &f.fix {
            out.push_str(&format!("         fix: {fix}\n"));
        }
    }
    if out.is_empty() {
        out.push_str("no findings\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_commit_hashes_are_shown_short() {
        let id = "00000000-0000-0000-0000-000000b15ec7";
        assert_eq!(short_tag_value(id), "00000000");
        let sha = "c0ffeec0ffeec0ffeec0ffeec0ffeec0ffeec0ff";
        assert_eq!(short_tag_value(sha), "c0ffeec0ffee");
        for whole in [
            "6.18.0-rc4",
            "A",
            "deadbeef",
            "",
            "0000-0000-0000-0000-000000b15ec7-x",
        ] {
            assert_eq!(short_tag_value(whole), whole);
        }
    }

    #[test]
    fn significant_digits() {
        assert_eq!(sig(4.21234, 4), "4.212");
        assert_eq!(sig(2.0456, 4), "2.046");
        assert_eq!(sig(5921.3, 4), "5921");
        assert_eq!(sig(2_600_000.0, 4), "2600000");
        assert_eq!(sig(0.000123456, 3), "0.000123");
        assert_eq!(sig(0.0, 4), "0");
        assert_eq!(count_or_sig(2.0, 4), "2");
        assert_eq!(count_or_sig(501.0, 4), "501");
        assert_eq!(count_or_sig(21.5, 4), "21.50");
        assert_eq!(pct(0.0123), "1.2%");
        assert_eq!(plural(1, "configuration"), "1 configuration");
        assert_eq!(plural(0, "configuration"), "0 configurations");
        assert_eq!(plural(7, "session"), "7 sessions");
    }
}
