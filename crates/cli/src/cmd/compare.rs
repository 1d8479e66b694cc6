//! `vernier compare BASE NEW`: the comparison of two result sets (docs/compare.md).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use vernier_analysis::DEFAULT_THRESHOLD;
use vernier_report::compare::{csv, markdown, side_findings, table};
use vernier_report::markup::Markdown;
use vernier_report::profile::{profile_markup, profile_text};
use vernier_report::why::{monitor_differences_markup, monitor_differences_text};

use crate::cli::{CompareArgs, CompareFormat};
use crate::db;
use crate::out::{out, printable_lines};

pub fn compare(args: CompareArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let store = db::open_for_reading(db_arg)?;
    let threshold = args.threshold.unwrap_or(DEFAULT_THRESHOLD);
    let (base, new, report) =
        db::compare_sides(store.as_ref(), &args.base, &args.new, threshold, None)?;
    let text = match args.format {
        CompareFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
        CompareFormat::Table => {
            table(&report, crate::out::terminal_width().map(usize::from))
                + &monitor_differences_text(&report)
                + &profile_text(&report.profiles, report.level)
        }
        CompareFormat::Markdown => {
            markdown(&report)
                + &monitor_differences_markup(&Markdown, &report)
                + &profile_markup(&Markdown, &report.profiles, report.level)
        }
        CompareFormat::Csv => csv(&report)?,
    };
    match args.format {
        // Data formats escape in their own way (JSON strings, CSV quoting).
        CompareFormat::Json | CompareFormat::Csv => out!("{text}"),
        CompareFormat::Markdown => out!("{}", printable_lines(&text)),
        CompareFormat::Table => {
            let findings = side_findings("BASE", &base) + &side_findings("NEW", &new);
            out!("{}", printable_lines(&(text + &findings)));
        }
    }
    if args.fail_on_regression && report.has_regression() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
