//! `vernier bisect start|status|report|resume|reset|judge`: find the commit that made a
//! configuration slower (docs/bisect.md). The workflow is `vernier_app::bisect`'s, the decision
//! rule `vernier_analysis::bisect`'s; this file parses, calls and prints.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use vernier_analysis::bisect::Call;
use vernier_app::bisect::{
    self as app, BisectEnd, BisectNotice, BisectState, JudgeEnd, JudgeRequest, ResumeOptions,
    StartRequest,
};
use vernier_app::exit_status_after;
use vernier_model::{BisectTerms, SessionLimits};
use vernier_plot::{Format, Size};
use vernier_report::bisect::{percent, short};

use crate::cli::{BisectCommand, BisectJudgeArgs, BisectStartArgs, Budget};
use crate::db;
use crate::out::{outln, stream_output};
use crate::progress::Progress;

/// Sessions a bisection may run when `--budget` is not given.
const DEFAULT_BUDGET_SESSIONS: u32 = 40;

pub fn bisect(command: BisectCommand, db_arg: Option<&Path>) -> Result<ExitCode> {
    match command {
        BisectCommand::Start(args) => start(*args, db_arg),
        BisectCommand::Resume(args) => resume(
            db_arg,
            ResumeOptions {
                this_boot: args.this_boot,
                boot_again: args.boot_again,
            },
        ),
        BisectCommand::Status => {
            let st = load(db_arg)?;
            print_state(&st, false)?;
            Ok(ExitCode::SUCCESS)
        }
        BisectCommand::Report(args) => {
            let st = load(db_arg)?;
            if let Some(path) = &args.plot {
                let format = Format::from_file_name(&path.to_string_lossy())?;
                let bytes = figure(&st, format)?;
                stream_output(Some(path), |w| Ok(w.write_all(&bytes)?))?;
            }
            print_state(&st, true)?;
            Ok(ExitCode::SUCCESS)
        }
        BisectCommand::Reset => {
            let b = app::reset(&db::location(db_arg)?)?;
            outln!(
                "bisection {} ended: its work tree is removed; its sessions stay (tag bisect={})",
                b.id,
                b.id
            );
            Ok(ExitCode::SUCCESS)
        }
        BisectCommand::Judge(args) => judge(args, db_arg),
    }
}

fn start(args: BisectStartArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let (budget_sessions, budget_s) = match args.budget {
        None => (DEFAULT_BUDGET_SESSIONS, None),
        Some(Budget::Sessions(n)) => (n, None),
        // A time budget alone bounds by time; the sessions bound is then generous.
        Some(Budget::Seconds(s)) => (10_000, Some(s)),
    };
    let request = StartRequest {
        repo: args.repo,
        good: args.good,
        bad: args.bad,
        terms: BisectTerms {
            build: args.build,
            boot: args.boot,
            kernel_release: args.kernel_release,
            specs: args.specs,
            metric: args.metric,
            limits: args.limits.into(),
            threshold: args.threshold,
            budget_sessions,
            budget_s,
            commit_sessions: args.commit_sessions,
        },
    };
    let location = db::location(db_arg)?;
    let b = app::start(&request, &location)?;
    outln!(
        "bisection {} of {} commits after {} (good) up to {} (bad)",
        b.id,
        b.commits.len() - 1,
        short(b.commits.first().map_or("", String::as_str)),
        short(b.commits.last().map_or("", String::as_str)),
    );
    if args.no_run {
        return Ok(ExitCode::SUCCESS);
    }
    resume(db_arg, ResumeOptions::default())
}

fn resume(db_arg: Option<&Path>, options: ResumeOptions) -> Result<ExitCode> {
    let location = db::location(db_arg)?;
    let mut signals = crate::session::signals();
    let mut progress = Progress::new(true);
    let mut notice = |n: BisectNotice| match n {
        BisectNotice::Building { index, commit } => {
            eprintln!("building {} (commit {index})", short(&commit));
        }
        BisectNotice::BuildFailed { index, commit, log } => eprintln!(
            "build of {} (commit {index}) failed: skipped (output in {})",
            short(&commit),
            log.display()
        ),
        BisectNotice::Measuring {
            index,
            commit,
            sessions,
        } => eprintln!(
            "measuring {} (commit {index}), session {}",
            short(&commit),
            sessions + 1
        ),
        BisectNotice::Booting {
            index,
            commit,
            release,
            attempt,
            log,
        } => eprintln!(
            "booting {} (commit {index}), which must come up as {release} (attempt {attempt}; \
             output in {})",
            short(&commit),
            log.display()
        ),
        BisectNotice::KernelChecked {
            index,
            commit,
            release,
        } => eprintln!(
            "the kernel running is {release}, of {} (commit {index})",
            short(&commit)
        ),
        BisectNotice::BootFailed {
            index,
            failure,
            skipped,
        } => eprintln!(
            "boot {} of {} (commit {index}) failed: {}; {}",
            failure.attempt,
            short(&failure.commit),
            failure.finding,
            if skipped {
                "the commit is skipped"
            } else {
                "it is booted again"
            }
        ),
    };
    match app::resume(&location, options, &mut signals, &mut progress, &mut notice)? {
        BisectEnd::Finished(st) => {
            print_state(&st, true)?;
            Ok(ExitCode::SUCCESS)
        }
        BisectEnd::AwaitingBoot {
            index,
            commit,
            release,
        } => {
            outln!(
                "waiting for the boot of {} (commit {index}) as {release}: `vernier bisect \
                 resume` after it (the after-boot unit of `vernier schedule install NAME \
                 --bisect`) checks the kernel and measures; if that boot will not happen, \
                 `vernier bisect resume --boot-again` boots it again",
                short(&commit)
            );
            Ok(ExitCode::SUCCESS)
        }
        BisectEnd::OtherKernel { index, commit } => {
            outln!(
                "the next step needs the kernel of {} (commit {index}): this boot's steps are \
                 done",
                short(&commit)
            );
            Ok(ExitCode::SUCCESS)
        }
        BisectEnd::Interrupted { signal } => {
            eprintln!("interrupted: `vernier bisect resume` continues where it stopped");
            Ok(ExitCode::from(exit_status_after(signal)))
        }
    }
}

fn load(db_arg: Option<&Path>) -> Result<BisectState> {
    let store = db::open_for_reading(db_arg)?;
    let b = app::current(store.as_ref())?;
    Ok(app::state(store.as_ref(), b)?)
}

fn print_state(st: &BisectState, full: bool) -> Result<()> {
    let b = &st.bisection;
    let hib = st.higher_is_better;
    outln!(
        "bisection {} of {}: {} commits after {} (good) up to {} (bad)",
        b.id,
        b.repo,
        b.commits.len() - 1,
        short(st.commit(0)),
        short(st.commit(b.commits.len() - 1))
    );
    if let Some(c) = &st.configuration {
        outln!("configuration: {c}");
    }
    if let Some(r) = &st.plan.regression {
        outln!(
            "regression between the ends: {} (threshold {:.1}%)",
            percent(r, hib),
            st.plan.threshold.unwrap_or(0.0) * 100.0
        );
    }
    if let Some(n) = &st.plan.noise {
        let source = if n.df.is_infinite() {
            "the default, no session is repeated yet".to_string()
        } else if n.calibrated {
            format!("{:.0} degrees of freedom, with a calibration", n.df)
        } else {
            format!("{:.0} degrees of freedom", n.df)
        };
        outln!(
            "session noise: {:.1}% ({source})",
            n.mean_square.sqrt() * 100.0
        );
    }
    let budget = match b.terms.budget_s {
        Some(s) => format!("{:.0} s", s),
        None => format!("{} sessions", b.terms.budget_sessions),
    };
    outln!(
        "spent: {} sessions ({:.0} s) and {:.0} s of builds, of a budget of {budget}",
        st.plan.spent,
        st.session_s,
        b.build_s
    );
    if !b.unbuildable.is_empty() {
        let list: Vec<&str> = b.unbuildable.iter().map(|c| short(c)).collect();
        outln!("failed builds (skipped): {}", list.join(", "));
    }
    let unbootable = b.unbootable();
    if !unbootable.is_empty() {
        let list: Vec<&str> = unbootable.iter().map(|c| short(c)).collect();
        outln!(
            "kernels that did not come up (skipped): {}",
            list.join(", ")
        );
    }
    if let Ok(cache) = app::build_cache(b) {
        if cache.commits > 0 {
            outln!(
                "build cache: {} commits built, {:.1} MB in {} (`bisect reset` removes it)",
                cache.commits,
                cache.bytes as f64 / 1e6,
                cache.dir.display()
            );
        }
    }
    if let Some(kb) = &b.kernel_boot {
        match &kb.booted {
            Some(_) => outln!(
                "kernel: {} of {} checked running",
                kb.release,
                short(&kb.commit)
            ),
            None => outln!(
                "kernel: boot {} of {} as {} under way (boot id before: {})",
                kb.attempt,
                short(&kb.commit),
                kb.release,
                kb.boot_id_before
            ),
        }
    }
    for f in &b.boot_failures {
        outln!(
            "failed boot {} of {}: {}",
            f.attempt,
            short(&f.commit),
            f.finding
        );
    }
    if !st.plan.steps.is_empty() {
        outln!("steps:");
        for s in &st.plan.steps {
            let vs = s
                .from_good
                .as_ref()
                .map_or("-".to_string(), |d| percent(d, hib));
            outln!(
                "  {:>4} {}  {:>2} sessions  {:<28} {}",
                s.index,
                short(st.commit(s.index)),
                s.sessions,
                vs,
                s.call.as_str()
            );
        }
    }
    if full {
        outln!("levels by commit (geometric mean of the session medians, 95% interval):");
        for l in &st.levels {
            outln!(
                "  {:>4} {}  {:>2} sessions  {:.6} [{:.6}, {:.6}]{}",
                l.index,
                short(st.commit(l.index)),
                l.sessions,
                l.level,
                l.low,
                l.high,
                st.unit.as_ref().map_or(String::new(), |u| format!(" {u}"))
            );
        }
    }
    for line in vernier_report::bisect::outcome(st) {
        outln!("{line}");
    }
    Ok(())
}

/// The steps as a figure: the level of each measured commit in commit order with its
/// interval, the first bad commit marked (`vernier_plot::bisection`).
fn figure(st: &BisectState, format: Format) -> Result<Vec<u8>> {
    Ok(vernier_plot::bisection(st, format, Size::default())?)
}

/// `judge`'s status when it cannot judge at all (no established regression between the ends,
/// a database it cannot open): above 127, which makes `git bisect run` stop instead of taking
/// the commit for a bad one, as it takes every status from 1 to 127 but 125 (git-bisect(1),
/// "Bisect run").
const JUDGE_CANNOT: u8 = 128;

fn judge(args: BisectJudgeArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    judged(args, db_arg).or_else(|error| {
        eprintln!("error: {}", crate::out::error_line(&error));
        Ok(ExitCode::from(JUDGE_CANNOT))
    })
}

fn judged(args: BisectJudgeArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let request = JudgeRequest {
        specs: args.specs,
        good: args.good,
        bad: args.bad,
        metric: args.metric,
        threshold: args.threshold,
        settings: SessionLimits::from(args.limits).layer(),
        tags: args.tags,
        sessions: args.sessions,
    };
    let location = db::location(db_arg)?;
    let mut signals = crate::session::signals();
    let mut progress = Progress::new(true);
    match app::judge(&request, &location, &mut signals, &mut progress)? {
        JudgeEnd::Judged {
            session,
            step,
            call,
            higher_is_better,
        } => {
            let vs = step
                .as_ref()
                .and_then(|s| s.from_good.as_ref())
                .map_or("-".to_string(), |d| percent(d, higher_is_better));
            outln!(
                "session {session}: {vs} against the good end: {}",
                call.as_str()
            );
            // git bisect run: 0 good, 1 bad, 125 cannot be tested (skip).
            Ok(ExitCode::from(match call {
                Call::Good => 0,
                Call::Bad | Call::Partial => 1,
                Call::Undecided | Call::Skipped => 125,
            }))
        }
        JudgeEnd::Interrupted { signal } => Ok(ExitCode::from(exit_status_after(signal))),
    }
}
