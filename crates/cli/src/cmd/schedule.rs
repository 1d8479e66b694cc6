//! `vernier schedule install|list|remove`: systemd units that run a suite on a calendar and
//! after every boot (a service and its timer), monitor latency continuously (a service
//! restarted on failure), or continue a bisection of kernels after every boot. The units name
//! this executable and the database by absolute path, so they run the same vernier on the same
//! results whoever starts them (docs/farm.md).
//!
//! Units are only written and removed here; systemd is not asked to do anything (the commands
//! to enable and disable them are printed), so installing needs no running systemd and a test
//! can write units into a directory of its own.
//!
//! Every value of the user's that reaches a unit (the executable's path, `--db`, `--sync`,
//! `--suite`, `--tag`, `--on-calendar`) is checked first ([`check_unit_value`]: one line of
//! UTF-8 without control characters, so that no value can end its line and start another
//! setting) and then written as systemd reads it back: command lines word by word with
//! [`exec_word`], other settings with [`specifiers_escaped`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use vernier_engine::suite::{find_suite, SuiteSource};

use crate::cli::{ScheduleCommand, ScheduleInstallArgs, ScheduledService};
use crate::db;
use crate::out::{out, outln};

/// Every unit file written here starts with this line, so `list` and `remove` touch only
/// vernier's own units.
const MARKER: &str =
    "# Written by `vernier schedule install`; remove with `vernier schedule remove`.";

/// How long after boot the run after every boot starts (`OnBootSec=`): enough for the services
/// a benchmark disturbs or needs (network, time synchronisation) to have settled.
const ON_BOOT_DELAY: &str = "5min";

/// The environment file of a schedule whose database URLs hold a password: `VERNIER_DB` and
/// `VERNIER_SYNC_TO`, which vernier reads in place of `--db` and `sync --to`.
const ENV_FILE_SUFFIX: &str = "env";

pub fn schedule(command: ScheduleCommand, db_arg: Option<&Path>) -> Result<ExitCode> {
    match command {
        ScheduleCommand::Install(args) => install(*args, db_arg),
        ScheduleCommand::List { unit_dir } => list(unit_dir.as_deref()),
        ScheduleCommand::Remove { name, unit_dir } => remove(&name, unit_dir.as_deref()),
    }
}

/// One unit file (or the environment file beside the units): its name, its text, and whether
/// only its owner may read it (mode 0600: it holds a password).
struct Unit {
    file: String,
    text: String,
    private: bool,
}

/// The databases as the units name them.
struct Databases {
    /// `--db`: a file by its absolute path, a URL as it is.
    database: PathBuf,
    /// `--sync`, as `database`.
    sync: Option<PathBuf>,
    /// Whether `database` holds a password, so goes into the environment file, not a unit.
    database_secret: bool,
    /// Whether `sync` holds a password.
    sync_secret: bool,
    /// Whether a run needs the network: it records into PostgreSQL, or syncs.
    network: bool,
}

fn install(args: ScheduleInstallArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    check_name(&args.name)?;
    let system = is_root();
    let dir = unit_dir(args.unit_dir.as_deref(), system)?;
    let exe = std::env::current_exe().context("cannot find the vernier executable")?;
    // Databases as the unit names them: a file by its absolute path (the unit runs in another
    // directory), a URL as it is.
    let as_in_unit = |location: vernier_store::Location| -> Result<PathBuf> {
        Ok(match location {
            vernier_store::Location::File(path) => absolute(&path)?,
            vernier_store::Location::Postgres(url) => PathBuf::from(url),
        })
    };
    let database_location = db::location(db_arg)?;
    let sync_location = args.sync.as_deref().map(db::parse).transpose()?;
    let databases = Databases {
        database_secret: database_location.holds_password(),
        sync_secret: sync_location
            .as_ref()
            .is_some_and(vernier_store::Location::holds_password),
        network: sync_location.is_some()
            || matches!(database_location, vernier_store::Location::Postgres(_)),
        database: as_in_unit(database_location)?,
        sync: sync_location.map(as_in_unit).transpose()?,
    };
    let (database, sync) = (&databases.database, &databases.sync);
    // Everything of the user's that the units will hold is checked before anything is
    // written or printed.
    check_unit_path("the vernier executable's path", &exe)?;
    check_unit_path("--db (or VERNIER_DB)", database)?;
    if let Some(sync) = &sync {
        check_unit_path("--sync", sync)?;
    }
    if let Some(suite) = &args.suite {
        check_unit_value("--suite", suite)?;
    }
    for (key, value) in &args.tags {
        check_unit_value("--tag", &format!("{key}={value}"))?;
    }
    for value in args.monitors.iter().chain(&args.setup).chain(&args.loads) {
        check_unit_value("--monitor, --setup or --load", value)?;
    }
    let units = units(&args, &exe, &databases, &absolute(&dir)?)?;
    if args.dry_run {
        for unit in &units {
            outln!("# {}", dir.join(&unit.file).display());
            if unit.private {
                outln!("# (mode 0600; holds the password, not printed)\n");
            } else {
                out!("{}\n", unit.text);
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    for unit in &units {
        let path = dir.join(&unit.file);
        if path.exists() && !is_ours(&path) {
            bail!(
                "{} exists and was not written by vernier; choose another name",
                path.display()
            );
        }
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_units(&dir, &units)?;
    for unit in &units {
        outln!("wrote {}", dir.join(&unit.file).display());
    }
    if let Some(env) = units.iter().find(|u| u.private) {
        eprintln!(
            "warning: the database password is in {} (mode 0600, read by the service as \
             EnvironmentFile=), not in the units; whoever can read that file (or a backup of \
             it) can use it",
            dir.join(&env.file).display()
        );
    }
    let user = if system { "" } else { " --user" };
    let start = units
        .iter()
        .rfind(|u| !u.private)
        .map(|u| u.file.as_str())
        .unwrap_or_default();
    // The after-boot unit of a bisection starts at the next boot, not now: started now, its
    // timer (whose OnBootSec= has passed) would run a step at once.
    let now = if args.bisect { "" } else { " --now" };
    outln!("enable it with: systemctl{user} daemon-reload && systemctl{user} enable{now} {start}");
    if !system {
        outln!(
            "units of a user run only while the user is logged in, unless lingering is on: \
             loginctl enable-linger"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The after-boot units of a bisection of kernels (docs/bisect.md, "Kernels"): a oneshot
/// service running `vernier bisect resume`, which checks the kernel the step booted and
/// measures, builds and boots the next one; and a timer that starts it once after every boot,
/// when the machine has settled (`OnBootSec=`).
fn bisect_units(
    args: &ScheduleInstallArgs,
    base: &str,
    vernier: &dyn Fn(&[String]) -> String,
    network: &str,
    environment_file: &str,
    sync_line: &str,
) -> Vec<Unit> {
    let name = &args.name;
    let run = vernier(&["bisect".to_string(), "resume".to_string()]);
    vec![
        Unit {
            file: format!("{base}.service"),
            text: format!(
                "{MARKER}\n[Unit]\nDescription=vernier: the bisection's step after a boot \
                 ({name})\n{network}\n\
                 [Service]\nType=oneshot\n{environment_file}ExecStart={run}\n{sync_line}\
                 # A step builds, measures and boots the next kernel; a build that hangs is\n\
                 # stopped after --time-limit (systemd.service(5)).\n\
                 TimeoutStartSec={limit}\nTimeoutStopSec=30min\n",
                limit = seconds(args.time_limit),
            ),
            private: false,
        },
        Unit {
            file: format!("{base}.timer"),
            text: format!(
                "{MARKER}\n[Unit]\nDescription=vernier: the bisection's step after every boot \
                 ({name})\n\n\
                 [Timer]\n# Once after every boot, when the machine has settled; no calendar.\n\
                 OnBootSec={ON_BOOT_DELAY}\n\
                 \n[Install]\nWantedBy=timers.target\n"
            ),
            private: false,
        },
    ]
}

/// The service (and for a suite the timer) that `args` describe.
/// `dir` is where they are written, absolute.
fn units(
    args: &ScheduleInstallArgs,
    exe: &Path,
    databases: &Databases,
    dir: &Path,
) -> Result<Vec<Unit>> {
    let base = format!("vernier-{}", args.name);
    // Paths were checked to be UTF-8 (check_unit_path), so nothing is lost here. A database
    // with a password is named by the environment file instead (VERNIER_DB), which keeps it
    // out of the world-readable unit and out of the command line that `ps` shows.
    let vernier = |words: &[String]| -> String {
        let mut line = vec![exec_word(&exe.to_string_lossy())];
        if !databases.database_secret {
            line.push("--db".to_string());
            line.push(exec_word(&databases.database.to_string_lossy()));
        }
        line.extend(words.iter().map(|w| exec_word(w)));
        line.join(" ")
    };
    let mut environment = Vec::new();
    if databases.database_secret {
        environment.push(env_assignment("VERNIER_DB", &databases.database)?);
    }
    let tags: Vec<String> = args
        .tags
        .iter()
        .flat_map(|(k, v)| ["--tag".to_string(), format!("{k}={v}")])
        .collect();
    // --monitor, --setup and --load, as `run` and `monitor latency` take them.
    let plugins: Vec<String> = [
        ("--monitor", &args.monitors),
        ("--setup", &args.setup),
        ("--load", &args.loads),
    ]
    .into_iter()
    .flat_map(|(flag, values)| {
        values
            .iter()
            .flat_map(move |v| [flag.to_string(), v.clone()])
    })
    .collect();
    // How the running monitor syncs (--sync-every): the target as `sync` gets it, from the
    // environment file when it holds a password.
    let mut sync_while_running = Vec::new();
    if let (Some(target), Some(every)) = (&databases.sync, args.sync_every) {
        if !databases.sync_secret {
            sync_while_running.extend([
                "--sync-to".to_string(),
                target.to_string_lossy().into_owned(),
            ]);
        }
        sync_while_running.extend(["--sync-every".to_string(), seconds(every)]);
    }
    let sync = match &databases.sync {
        Some(target) if databases.sync_secret => {
            environment.push(env_assignment("VERNIER_SYNC_TO", target)?);
            Some(vernier(&["sync".to_string()]))
        }
        Some(target) => Some(vernier(&[
            "sync".to_string(),
            "--to".to_string(),
            target.to_string_lossy().into_owned(),
        ])),
        None => None,
    };
    let network = if databases.network {
        // Recording into PostgreSQL or syncing needs the network: the run starts once
        // network-online.target is reached (systemd.special(7)); a run syncing to a server
        // that is down still records locally, and the next sync copies it.
        "Wants=network-online.target\nAfter=network-online.target\n"
    } else {
        ""
    };
    let env_file = format!("{base}.{ENV_FILE_SUFFIX}");
    let environment_file = if environment.is_empty() {
        String::new()
    } else {
        let path = dir.join(&env_file);
        check_unit_path("--unit-dir", &path)?;
        // EnvironmentFile= resolves specifiers (systemd.exec(5)).
        format!(
            "EnvironmentFile={}\n",
            specifiers_escaped(&path.to_string_lossy())
        )
    };
    // ExecStopPost runs after the run however it ended, so sessions recorded earlier and not
    // yet copied (the server was down) are copied as soon as the network is back.
    let sync_line = sync
        .map(|line| format!("ExecStopPost={line}\n"))
        .unwrap_or_default();

    let mut units = Vec::new();
    if args.bisect {
        if args.on_calendar.is_some() || args.sync_every.is_some() {
            bail!("--bisect runs after every boot: --on-calendar and --sync-every are not for it");
        }
        units.extend(bisect_units(
            args,
            &base,
            &vernier,
            network,
            &environment_file,
            &sync_line,
        ));
        if !environment.is_empty() {
            units.insert(
                0,
                Unit {
                    file: env_file,
                    text: format!("{MARKER}\n{}", environment.join("")),
                    private: true,
                },
            );
        }
        return Ok(units);
    }
    match (&args.suite, args.service) {
        (Some(_), None) if args.sync_every.is_some() => {
            bail!(
                "--sync-every is for --service latency-monitor, which runs continuously; a \
                 suite's --sync copies after every run"
            );
        }
        (Some(suite), None) => {
            // A suite of a file is named by its absolute path: the service may run as another
            // user, with another configuration directory, or none.
            let found = find_suite(suite, vernier_app::config::suite_dir().as_deref())?;
            let suite_arg = match &found.source {
                SuiteSource::Builtin => suite.clone(),
                SuiteSource::File(path) => {
                    let path = absolute(path)?;
                    check_unit_path("--suite", &path)?;
                    path.to_string_lossy().into_owned()
                }
            };
            let mut words = vec!["run".to_string(), "--suite".to_string(), suite_arg];
            words.extend(tags);
            words.extend(plugins);
            words.extend(["--quiet".to_string(), "--if-busy".to_string()]);
            words.push(args.if_busy.as_str().to_string());
            if let Some(load) = args.busy_load {
                words.extend(["--busy-load".to_string(), load.to_string()]);
            }
            if let Some(wait) = args.busy_wait {
                words.extend(["--busy-wait".to_string(), format!("{wait}s")]);
            }
            let calendar = args.on_calendar.as_deref().unwrap_or("daily");
            check_calendar(calendar)?;
            // Description= and OnCalendar= resolve specifiers (systemd.unit(5), "Specifiers";
            // systemd.timer(5)) but take the rest of the line as it is.
            let suite = specifiers_escaped(suite);
            let calendar = specifiers_escaped(calendar);
            units.push(Unit {
                file: format!("{base}.service"),
                text: format!(
                    "{MARKER}\n[Unit]\nDescription=vernier: the {suite} suite ({name})\n\
                     {network}\n\
                     [Service]\nType=oneshot\n{environment_file}ExecStart={run}\n{sync_line}\
                     # A suite that hangs is stopped after --time-limit (a oneshot service has no\n\
                     # start timeout otherwise, and RuntimeMaxSec= does not apply to it:\n\
                     # systemd.service(5)); the sync after it gets TimeoutStopSec=.\n\
                     TimeoutStartSec={limit}\nTimeoutStopSec=30min\n",
                    name = args.name,
                    run = vernier(&words),
                    limit = seconds(args.time_limit),
                ),
                private: false,
            });
            units.push(Unit {
                file: format!("{base}.timer"),
                text: format!(
                    "{MARKER}\n[Unit]\nDescription=vernier: the {suite} suite ({name}) on \
                     {calendar} and after every boot\n\n\
                     [Timer]\nOnCalendar={calendar}\nOnBootSec={ON_BOOT_DELAY}\n\
                     {delay}\
                     # Not Persistent=true: it would start a run missed while the machine was\n\
                     # off at once at boot (systemd.timer(5)), before the settle time of\n\
                     # OnBootSec=, and a second one then; the run after boot is the one missed.\n\
                     \n[Install]\nWantedBy=timers.target\n",
                    name = args.name,
                    delay = if args.randomized_delay > 0.0 {
                        format!(
                            "# Spreads the machines of a farm over this time.\n\
                             RandomizedDelaySec={}\n",
                            seconds(args.randomized_delay)
                        )
                    } else {
                        String::new()
                    },
                ),
                private: false,
            });
        }
        (None, Some(ScheduledService::LatencyMonitor)) => {
            if args.on_calendar.is_some() {
                bail!("--on-calendar is for --suite; the latency monitor runs continuously");
            }
            let mut words = vec![
                "monitor".to_string(),
                "latency".to_string(),
                "--interval".to_string(),
                format!("{}s", args.interval),
                "--quiet".to_string(),
            ];
            words.extend(tags);
            words.extend(plugins);
            words.extend(sync_while_running);
            units.push(Unit {
                file: format!("{base}.service"),
                text: format!(
                    "{MARKER}\n[Unit]\nDescription=vernier: continuous latency monitoring \
                     ({name})\n{network}\n\
                     [Service]\nType=simple\n{environment_file}ExecStart={run}\n{sync_line}\
                     # SIGTERM ends the monitor's session cleanly (the interval in progress is \
                     discarded);\n# only the main process gets it, which then ends its runs.\n\
                     KillMode=mixed\nKillSignal=SIGTERM\nTimeoutStopSec=120\n\
                     Restart=on-failure\nRestartSec=30\n\
                     # The measuring thread runs at real-time priority with its memory locked,\n\
                     # which a service of a user may only do within these limits\n\
                     # (systemd.exec(5), setrlimit(2) RLIMIT_RTPRIO and RLIMIT_MEMLOCK). The\n\
                     # service itself keeps the normal policy (no CPUSchedulingPolicy=): only\n\
                     # the measuring thread takes SCHED_FIFO, the recorder must not compete\n\
                     # with it.\n\
                     LimitRTPRIO=99\nLimitMEMLOCK=infinity\n\n\
                     [Install]\nWantedBy=multi-user.target\n",
                    name = args.name,
                    run = vernier(&words),
                ),
                private: false,
            });
        }
        _ => bail!("give what to schedule: --suite NAME or --service latency-monitor"),
    }
    if !environment.is_empty() {
        // First, so that the units are renamed into place after it (write_units).
        units.insert(
            0,
            Unit {
                file: env_file,
                text: format!("{MARKER}\n{}", environment.join("")),
                private: true,
            },
        );
    }
    Ok(units)
}

fn list(unit_dir_arg: Option<&Path>) -> Result<ExitCode> {
    let dir = unit_dir(unit_dir_arg, is_root())?;
    let mut found = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let file = entry.file_name().to_string_lossy().into_owned();
            let Some(name) = file
                .strip_prefix("vernier-")
                .and_then(|f| f.strip_suffix(".service"))
            else {
                continue;
            };
            if !is_ours(&path) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let timer = std::fs::read_to_string(dir.join(format!("vernier-{name}.timer")))
                .unwrap_or_default();
            let what = setting(&text, "Description")
                .map(|d| specifiers_unescaped(&d))
                .unwrap_or_default();
            let when = match setting(&timer, "OnCalendar").map(|c| specifiers_unescaped(&c)) {
                Some(calendar) => format!("{calendar}, and {ON_BOOT_DELAY} after boot"),
                None if setting(&timer, "OnBootSec").is_some() => {
                    format!("{ON_BOOT_DELAY} after boot")
                }
                None => "continuously".to_string(),
            };
            found.push(format!("{name}\t{when}\t{what}"));
        }
    }
    found.sort();
    if found.is_empty() {
        outln!("no scheduled runs in {}", dir.display());
    }
    for line in found {
        outln!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

fn remove(name: &str, unit_dir_arg: Option<&Path>) -> Result<ExitCode> {
    check_name(name)?;
    let system = is_root();
    let dir = unit_dir(unit_dir_arg, system)?;
    let files: Vec<PathBuf> = ["service", "timer", ENV_FILE_SUFFIX]
        .iter()
        .map(|kind| dir.join(format!("vernier-{name}.{kind}")))
        .filter(|p| p.exists())
        .collect();
    if files.is_empty() {
        bail!(
            "no scheduled run '{name}' in {}; `vernier schedule list` shows them",
            dir.display()
        );
    }
    if let Some(foreign) = files.iter().find(|p| !is_ours(p)) {
        bail!(
            "{} was not written by vernier; left as it is",
            foreign.display()
        );
    }
    for file in &files {
        std::fs::remove_file(file).with_context(|| format!("cannot remove {}", file.display()))?;
        outln!("removed {}", file.display());
    }
    let user = if system { "" } else { " --user" };
    outln!(
        "if it was enabled: systemctl{user} disable --now vernier-{name}.timer \
         vernier-{name}.service; systemctl{user} daemon-reload"
    );
    Ok(ExitCode::SUCCESS)
}

/// A schedule's name becomes part of unit names: letters, digits, `-` and `_` only
/// (systemd.unit(5) allows more, but these need no escaping anywhere).
fn check_name(name: &str) -> Result<()> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        bail!(
            "'{}' is not a schedule name; valid: letters, digits, '-' and '_'",
            name.escape_debug()
        );
    }
    Ok(())
}

/// `--unit-dir`, else where systemd reads units of the system (as root) or of this user
/// (systemd.unit(5), "Unit File Load Path").
fn unit_dir(explicit: Option<&Path>, system: bool) -> Result<PathBuf> {
    if let Some(dir) = explicit {
        return Ok(dir.to_path_buf());
    }
    if system {
        return Ok(PathBuf::from("/etc/systemd/system"));
    }
    let config = dirs::config_dir()
        .context("cannot find the configuration directory (set HOME or give --unit-dir)")?;
    Ok(config.join("systemd/user"))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))
}

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.starts_with(MARKER))
}

/// The value of the first `KEY=value` line of a unit file.
fn setting(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .map(str::to_string)
}

/// Checks a calendar expression: a value for a unit ([`check_unit_value`]) without a
/// backslash (none is part of the grammar of systemd.time(7), and one at the end of the line
/// would join the next line to it), then with systemd's own parser (`systemd-analyze
/// calendar`) when systemd-analyze is installed; without it the expression is written as given
/// and systemd reports a bad one when it loads the timer.
fn check_calendar(calendar: &str) -> Result<()> {
    check_unit_value("--on-calendar", calendar)?;
    let not_one = || {
        anyhow::anyhow!(
            "--on-calendar '{calendar}' is not a calendar expression of systemd.time(7); valid \
             e.g. daily, weekly, 'Mon..Fri 02:00', '*-*-* 03:30:00'"
        )
    };
    if calendar.contains('\\') {
        return Err(not_one());
    }
    let Ok(output) = std::process::Command::new("systemd-analyze")
        .args(["calendar", calendar])
        .output()
    else {
        return Ok(());
    };
    if !output.status.success() {
        return Err(not_one());
    }
    Ok(())
}

/// Refuses a value that cannot be written into a unit file as one setting: one with a control
/// character (a newline would end the setting and start another, such as an
/// `ExecStartPre=` of the value's choosing; systemd.syntax(7) reads a unit line by line).
/// `option` names where the value came from.
fn check_unit_value(option: &str, value: &str) -> Result<()> {
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        bail!(
            "{option} '{}' contains the control character {c:?}, which a systemd unit cannot \
             hold; valid: one line of printable text",
            value.escape_debug()
        );
    }
    Ok(())
}

/// [`check_unit_value`] for a path, which must also be UTF-8: systemd reads unit files as
/// UTF-8, and a path that is not would reach vernier changed.
fn check_unit_path(option: &str, path: &Path) -> Result<()> {
    let Some(text) = path.to_str() else {
        bail!(
            "{option} '{}' is not UTF-8, which a systemd unit cannot hold; valid: a path of \
             printable UTF-8 text",
            path.display()
        );
    };
    check_unit_value(option, text)
}

/// A value for a setting that resolves specifiers but is otherwise taken as written
/// (Description=, OnCalendar=): `%` doubled, which systemd.unit(5) reads as one `%`.
fn specifiers_escaped(value: &str) -> String {
    value.replace('%', "%%")
}

/// A value written by [`specifiers_escaped`], as systemd reads it.
fn specifiers_unescaped(value: &str) -> String {
    value.replace("%%", "%")
}

/// One word of an `Exec*=` command line, written so that systemd passes exactly `word` to
/// vernier (systemd.service(5), "Command lines"; systemd.syntax(7), "Quoting"): `%` doubled
/// (a specifier otherwise) and `$` doubled (a variable otherwise, substituted when the command
/// starts); in double quotes, with `"` and `\` escaped, when it is empty or holds white space,
/// a quote, a backslash (C-style escapes are read in unquoted words too) or `;` (a lone one
/// separates commands). The value must have passed [`check_unit_value`]: no quoting can keep a
/// newline from ending the line.
fn exec_word(word: &str) -> String {
    let escaped = specifiers_escaped(word).replace('$', "$$");
    let plain = !escaped.is_empty()
        && escaped
            .chars()
            .all(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '\\' | ';'));
    if plain {
        escaped
    } else {
        format!("\"{}\"", escaped.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// A duration in whole seconds as systemd.time(7) reads it (`90s`), at least 1 s.
fn seconds(duration_s: f64) -> String {
    format!("{}s", duration_s.ceil().max(1.0))
}

/// One line of an environment file (systemd.exec(5), EnvironmentFile=): `NAME='value'`, in
/// single quotes, within which nothing is expanded or escaped. A value with a `'` cannot be
/// written so and is refused (percent-encode it in a URL: `%27`).
fn env_assignment(name: &str, value: &Path) -> Result<String> {
    let value = value.to_string_lossy();
    if value.contains('\'') {
        bail!(
            "{name} '{}' contains a single quote, which vernier cannot write into an \
             environment file; percent-encode it (%27)",
            vernier_store::Location::Postgres(value.to_string())
        );
    }
    Ok(format!("{name}='{value}'\n"))
}

/// Writes every unit: each to a temporary file beside it first, and all renamed into place
/// only when all are written, so a failure (a full disk, a read-only directory) leaves no unit
/// half written and no service without its timer.
fn write_units(dir: &Path, units: &[Unit]) -> Result<()> {
    let partial = |unit: &Unit| dir.join(format!(".{}.partial", unit.file));
    let written = units.iter().try_for_each(|unit| {
        write_file(&partial(unit), &unit.text, unit.private)
            .with_context(|| format!("cannot write {}", dir.join(&unit.file).display()))
    });
    let placed = written.and_then(|()| {
        units.iter().try_for_each(|unit| {
            std::fs::rename(partial(unit), dir.join(&unit.file))
                .with_context(|| format!("cannot write {}", dir.join(&unit.file).display()))
        })
    });
    for unit in units {
        // Only what an error left behind is still there.
        let _ = std::fs::remove_file(partial(unit));
    }
    placed
}

/// Writes `text` to a new file at `path` (replacing one there), readable by its owner only
/// when `private`: created with mode 0600, never widened for a moment.
fn write_file(path: &Path, text: &str, private: bool) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    if private {
        options.mode(0o600);
    }
    options.open(path)?.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_shows_a_description_as_systemd_reads_it() {
        for text in ["s%i.toml suite", "dir with %n", "100%%", "%"] {
            assert_eq!(specifiers_unescaped(&specifiers_escaped(text)), text);
        }
    }

    #[test]
    fn exec_words_are_quoted_as_systemd_reads_them() {
        assert_eq!(exec_word("/usr/bin/vernier"), "/usr/bin/vernier");
        assert_eq!(exec_word("kernel=6.18"), "kernel=6.18");
        assert_eq!(exec_word("a b"), "\"a b\"");
        assert_eq!(exec_word("say \"hi\""), "\"say \\\"hi\\\"\"");
        assert_eq!(exec_word("50%"), "50%%");
        assert_eq!(exec_word("$HOME"), "$$HOME");
        assert_eq!(exec_word("a;b"), "\"a;b\"");
        assert_eq!(exec_word(";"), "\";\"");
        assert_eq!(exec_word("a\\nb"), "\"a\\\\nb\"");
        assert_eq!(exec_word(""), "\"\"");
        assert_eq!(specifiers_escaped("50% of %H"), "50%% of %%H");
    }

    #[test]
    fn values_that_would_end_a_unit_line_are_refused() {
        for bad in [
            "x\nExecStartPre=/bin/touch /tmp/x",
            "a\rb",
            "tab\there",
            "esc\u{1b}[0m",
            "\u{85}",
        ] {
            let e = check_unit_value("--sync", bad).unwrap_err().to_string();
            assert!(
                e.starts_with("--sync '") && e.contains("control character"),
                "{e}"
            );
            assert!(!e.contains('\n'), "one line: {e}");
        }
        for good in ["a b;c\"d'e%f$g\\h", "/srv/vernier/central.db", "ünïcode"] {
            assert!(check_unit_value("--tag", good).is_ok(), "{good}");
        }
        use std::os::unix::ffi::OsStrExt;
        let not_utf8 = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/\xff.db"));
        let e = check_unit_path("--db (or VERNIER_DB)", not_utf8).unwrap_err();
        assert!(e.to_string().contains("is not UTF-8"), "{e}");
        assert!(check_calendar("daily\\").is_err());
    }
}
