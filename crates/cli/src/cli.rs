//! The command-line interface, defined once: help text comes from here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use vernier_model::validate::MAX_DURATION_S;

#[derive(Debug, Parser)]
#[command(
    name = "vernier",
    version,
    about = "High-accuracy benchmarks of Linux systems and kernels",
    long_about = "High-accuracy benchmarks of Linux systems and kernels.\n\n\
        vernier runs each benchmark run in a fresh process, repeats it until the 95% confidence \
        interval of the median is narrow enough, and keeps every run in a SQLite database (or a PostgreSQL one, --db postgres://...)."
)]
pub struct Cli {
    /// SQLite database file, or a PostgreSQL database as postgres://user@host/dbname (or
    /// postgresql://) [default: $XDG_DATA_HOME/vernier/vernier.db]
    #[arg(long, global = true, env = "VERNIER_DB", value_name = "PATH|URL")]
    pub db: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

/// The command line definition: [`parsing_command`] with the help of the plugins and
/// benchmarks from their registries.
pub fn command() -> clap::Command {
    parsing_command()
        .mut_subcommand("run", |run| {
            plugin_help(run).mut_arg("specs", |a| {
                let list = format!(
                    "{}and the executables in $XDG_CONFIG_HOME/vernier/benchmarks; `vernier list \
                     -v` shows every benchmark with its options",
                    crate::cmd::list::benchmark_text()
                );
                described(a, "", &list)
            })
        })
        .mut_subcommand("monitor", plugin_help)
        .mut_subcommand("calibrate", plugin_help)
}

/// The command line with the settings that derive cannot express once for all: every option's
/// value may start with a hyphen, so that `--min-runs -1` or `--target -2%` reaches the
/// option's own check (one line naming the valid range) instead of reading as an unknown flag
/// `-1`. Without the help texts built from the registries (the plugins and benchmarks with
/// their options), which only help shows: building them was half of the instructions of
/// parsing `vernier run` (callgrind), spent on every start-up.
fn parsing_command() -> clap::Command {
    fn hyphen_values(command: clap::Command) -> clap::Command {
        command
            .mut_args(|a| {
                if !a.is_positional() && a.get_action().takes_values() {
                    a.allow_hyphen_values(true)
                } else {
                    a
                }
            })
            .mut_subcommands(hyphen_values)
    }
    hyphen_values(<Cli as clap::CommandFactory>::command())
        // Without a command: the help, not an error listing internal commands.
        .arg_required_else_help(true)
        // `--compare BASE NEW [NEW...]` takes selectors, none of which starts with a hyphen,
        // up to the next option (`-o DIR`).
        .mut_subcommand("report", compare_ends_at_an_option)
        .mut_subcommand("serve", compare_ends_at_an_option)
}

fn compare_ends_at_an_option(command: clap::Command) -> clap::Command {
    command.mut_arg("compare", |a| a.allow_hyphen_values(false))
}

/// The help of `--setup`, `--monitor` and `--load` of `command`, where it has them, from the
/// registries: the names in the short help, each plugin with its options in the long help.
fn plugin_help(mut command: clap::Command) -> clap::Command {
    use crate::cmd::list::{load_text, monitor_text, setup_text};
    use vernier_model::Describe;
    let names = |names: Vec<&str>| format!("({})", names.join(", "));
    let has = |command: &clap::Command, id: &str| command.get_arguments().any(|a| a.get_id() == id);
    if has(&command, "setup") {
        let suffix = names(vernier_setup::registry().names());
        command = command.mut_arg("setup", |a| described(a, &suffix, &setup_text(true)));
    }
    if has(&command, "monitors") {
        let registry = vernier_monitor::registry();
        let default: Vec<&str> = registry
            .iter()
            .filter(|m| m.in_default_set())
            .map(|m| m.description().name.as_ref())
            .collect();
        // What benchmarks explain their results with, sampled with the default set.
        let explaining: Vec<String> = vernier_bench::builtins()
            .iter()
            .filter(|b| !b.benchmark().explaining_monitors().is_empty())
            .map(|b| {
                format!(
                    "; with {} also {}",
                    b.info().name(),
                    b.benchmark().explaining_monitors().join(", ")
                )
            })
            .collect();
        let suffix = format!(
            "{} [default: default = {}{}]",
            names(registry.names()),
            default.join(", "),
            explaining.concat()
        );
        command = command.mut_arg("monitors", |a| described(a, &suffix, &monitor_text(true)));
    }
    if has(&command, "loads") {
        let suffix = names(vernier_load::registry().names());
        command = command.mut_arg("loads", |a| described(a, &suffix, &load_text(true)));
    }
    command
}

/// `arg` with `suffix` after its short help, and `list` after that in its long help.
fn described(arg: clap::Arg, suffix: &str, list: &str) -> clap::Arg {
    let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
    let short = if suffix.is_empty() {
        help
    } else {
        format!("{help} {suffix}")
    };
    arg.help(short.clone())
        .long_help(format!("{short}\n\n{}", list.trim_end()))
}

/// Parses the process arguments with [`command`]: first without the registries' help texts,
/// which only help and error messages show; when that fails (`--help`, `--version`, any error)
/// again with them, so that what is printed is [`command`]'s.
pub fn try_parse() -> Result<Cli, clap::Error> {
    let parse = |command: clap::Command| {
        let matches = command.try_get_matches()?;
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches)
    };
    parse(parsing_command()).or_else(|_| parse(command()))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run benchmarks (the `quick` suite when no SPEC is given) and store every run
    Run(RunArgs),
    /// List benchmarks and suites
    List(ListArgs),
    /// Show the results of a session
    Show(ShowArgs),
    /// List the stored sessions, or those a selector names
    Sessions(SessionsArgs),
    /// Set or remove tags of sessions
    Tag(TagArgs),
    /// Set or clear the note of sessions
    Note(NoteArgs),
    /// Delete sessions with their runs and monitor data
    Delete(DeleteArgs),
    /// Show the environment of a session, or what differs between two
    #[command(subcommand)]
    Env(EnvCommand),
    /// Check what threatens the validity of measurements here; tune and reset the system
    #[command(subcommand)]
    System(SystemCommand),
    /// Run a suite from a systemd timer (on a calendar and after every boot) or monitor
    /// latency as a service: install, list and remove the units
    #[command(subcommand)]
    Schedule(ScheduleCommand),
    /// Find the commit that made a configuration slower, under session noise: each step a
    /// session of a commit built in a work tree of its own (docs/bisect.md)
    #[command(subcommand)]
    Bisect(BisectCommand),
    /// The database itself: `migrate` brings its schema to this vernier's version
    #[command(subcommand)]
    Db(DbCommand),
    /// Monitor continuously, OSADL style: `latency` runs one interval after another, each stored
    /// as a run of one session, until stopped (SIGTERM, SIGINT) or for a given time
    Monitor(MonitorArgs),
    /// Compare two result sets: ratio NEW/BASE with CI, p-values and a verdict per configuration
    #[command(after_long_help = COMPARE_COLUMNS)]
    Compare(CompareArgs),
    /// Results over time per configuration and machine: session medians, change points, steps
    History(HistoryArgs),
    /// Measure this machine's session-to-session noise with short repeated sessions, for compare
    Calibrate(CalibrateArgs),
    /// Write sessions with every run as JSON (a documented format) or CSV
    Export(ExportArgs),
    /// Read a vernier export, hyperfine's --export-json or cyclictest's output into the database
    Import(ImportArgs),
    /// Copy every session that another database lacks, and the runs since the last sync of one
    /// still running (by id, one transaction per session, so it resumes where it stopped): a
    /// machine's results to the central database
    Sync(SyncArgs),
    /// Merge the databases of several machines into a new one (-o) or an existing one (--into)
    Merge(MergeArgs),
    /// Draw a figure of stored results as SVG or PNG: box, latency, line, forest, monitor, bars
    Plot(PlotArgs),
    /// Print or write the kernel's events of a session's traced latencies (`latency:trace=US`)
    /// in ftrace's text form, as `trace-cmd report` prints them
    Trace(TraceArgs),
    /// Write the results website into a directory: every page and figure as files that work
    /// offline, from file:// or any static web server (docs/report.md)
    Report(ReportArgs),
    /// Serve the pages of `report` from the database as they are requested, read-only
    /// (docs/report.md)
    Serve(ServeArgs),
    /// Print a shell completion script, e.g. `vernier completions bash > /etc/bash_completion.d/vernier`
    Completions {
        #[arg(value_enum, value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), of vernier or of one command: `vernier man | man -l -`
    Man {
        /// A command, e.g. `run` (or `vernier-run`, as the top page names it), for its own page
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
    },
    /// Runs one measurement in a fresh process (used by `run`)
    #[command(name = "__child", hide = true)]
    Child {
        /// Serves runs, one request per line, until standard input ends
        #[arg(long)]
        serve: bool,
    },
    /// Runs one load until SIGTERM (used by `run --load`)
    #[command(name = "__load", hide = true)]
    Load {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What to run: BENCHMARK[:OPTION=VALUE[,VALUE...]]...; comma-separated values sweep
    #[arg(value_name = "SPEC")]
    pub specs: Vec<String>,

    /// Run a suite: a built-in's name, NAME for $XDG_CONFIG_HOME/vernier/suites/NAME.toml, or a
    /// path to a .toml file (see `vernier list`, docs/benchmarks.md); flags given win over the
    /// suite's settings, and a --monitor, --setup or --load list replaces the suite's
    #[arg(long, value_name = "NAME", conflicts_with = "specs")]
    pub suite: Option<String>,

    #[command(flatten)]
    pub limits: LimitsArgs,

    /// Target relative half-width of the median's 95% CI, e.g. 2% or 0.02 [default: 2%]
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub target: Option<f64>,

    /// Minimum measured time per configuration, unless --max-time ends it first: seconds or
    /// with units, 30, 90s, 1m30s [default: 0]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_or_zero)]
    pub min_time: Option<f64>,

    /// Limit of one run: seconds or with units, 600, 10m; a run still going then is killed and
    /// fails [default: 10x the configuration's longest run, 10x its duration option + 60, at
    /// least 60; 600 at first]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub run_timeout: Option<f64>,

    /// Stop the session if it is still running after this long (from its first run), with a
    /// time-limit finding and exit status 2: a duration (90m, 6h); budget (twice the session's
    /// budget, --max-time times its configurations, and at least the budget plus 30m); or off
    /// [default: off]
    #[arg(long, value_name = "DURATION|off", value_parser = parse_time_limit)]
    pub time_limit: Option<TimeLimitArg>,
    /// The stopping rule's interval: confidence-sequence (anytime-valid) or fixed-n (the old
    /// rule, for measuring its coverage) [default: confidence-sequence]
    #[arg(long, value_name = "RULE", hide = true)]
    pub stopping_rule: Option<vernier_model::StoppingRule>,

    /// Run the configurations in randomized rounds, so slow drift spreads over all of them
    #[arg(long, overrides_with = "no_interleave")]
    pub interleave: bool,

    /// Run each configuration to its end before the next, also when the suite interleaves
    #[arg(long, overrides_with = "interleave")]
    pub no_interleave: bool,

    /// Seed of the interleaving order, when interleaving (--interleave or the suite's)
    /// [default: random, stored with the session]
    #[arg(long, value_name = "N", value_parser = parse_seed)]
    pub seed: Option<u64>,

    /// After each configuration's timed runs, N more under `perf record -g`, never counted in
    /// its statistics: where the time goes, for `compare` and `plot flame` (needs perf,
    /// Debian's linux-perf) [default: none; --profile alone: 3]
    #[arg(long, value_name = "N", num_args = 0..=1, require_equals = true, default_missing_value = "3")]
    pub profile: Option<u32>,

    /// What a profiled run samples: process (the run's processes and their children) or
    /// system (every CPU while it lasts, perf -a) [default: process]
    #[arg(long, value_name = "SCOPE")]
    pub profile_scope: Option<vernier_model::ProfileScope>,

    /// Samples per second of a profiled run, 1 to 100000 [default: 999]
    #[arg(long, value_name = "HZ", value_parser = parse_profile_frequency)]
    pub profile_frequency: Option<u32>,

    /// Tag the session, e.g. --tag kernel=6.18 (repeatable)
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag)]
    pub tags: Vec<(String, String)>,

    /// A free-text note stored with the session
    #[arg(long, value_name = "TEXT", value_parser = parse_note)]
    pub note: Option<String>,

    /// Monitors sampled during each measured run: NAME[:OPTION=VALUE]...,... or `default`,
    /// `all`, `none`
    #[arg(long = "monitor", value_name = "LIST")]
    pub monitors: Vec<String>,

    /// Prepare the system, restored afterwards: NAME[?][:OPTION=VALUE]..., `?` marking a plugin
    /// optional
    #[arg(long = "setup", value_name = "LIST")]
    pub setup: Vec<String>,

    /// Loads that run during every measured run, started before and stopped after it,
    /// repeatable: NAME[:OPTION=VALUE]...
    #[arg(long = "load", value_name = "LIST")]
    pub loads: Vec<String>,

    /// No progress output, only the summary
    #[arg(long, short)]
    pub quiet: bool,

    #[command(flatten)]
    pub busy: BusyArgs,
}

/// How long a session measures each configuration: the flags of `run` that `bisect start` and
/// `bisect judge` pass to the sessions they run.
#[derive(Debug, Clone, Default, Args)]
pub struct LimitsArgs {
    /// Warmup runs per configuration, discarded from the statistics [default: 1]
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,

    /// Minimum measured runs per configuration, unless --max-time ends it first [default: 6]
    #[arg(long, value_name = "N")]
    pub min_runs: Option<u32>,

    /// Maximum measured runs per configuration [default: 100]
    #[arg(long, value_name = "N")]
    pub max_runs: Option<u32>,

    /// Maximum time per configuration including warmups and setup waits: seconds or with
    /// units, 60, 90s, 1m30s; a bound that wins over --min-runs and --min-time [default: 60]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub max_time: Option<f64>,
}

impl From<LimitsArgs> for vernier_model::SessionLimits {
    fn from(a: LimitsArgs) -> Self {
        vernier_model::SessionLimits {
            warmup: a.warmup,
            min_runs: a.min_runs,
            max_runs: a.max_runs,
            max_time_s: a.max_time,
        }
    }
}

/// What a run does when it finds the machine busy: another vernier session recording into the
/// same database, or a load average at or above `--busy-load`.
#[derive(Debug, Clone, Default, Args)]
pub struct BusyArgs {
    /// When the machine is busy (another session holds the host's setup, or records into this
    /// database, or --busy-load): `run` anyway (a setup that changes the host is still refused
    /// while another session holds it), `wait` up to --busy-wait for it to become idle and skip
    /// if it does not, or `skip` at once; a skipped run is stored as a session with status
    /// `skipped` and the reason as its note
    #[arg(long, value_enum, value_name = "ACTION", default_value_t = IfBusy::Run)]
    pub if_busy: IfBusy,

    /// The 1-minute load average from which the machine counts as busy [default: not checked]
    #[arg(long, value_name = "LOAD", value_parser = parse_load)]
    pub busy_load: Option<f64>,

    /// How long --if-busy wait waits for an idle machine: 600, 10m, 1h [default: 10m]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub busy_wait: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum IfBusy {
    #[default]
    Run,
    Wait,
    Skip,
}

impl IfBusy {
    pub fn as_str(self) -> &'static str {
        match self {
            IfBusy::Run => "run",
            IfBusy::Wait => "wait",
            IfBusy::Skip => "skip",
        }
    }
}

impl From<BusyArgs> for vernier_app::BusyPolicy {
    fn from(args: BusyArgs) -> Self {
        vernier_app::BusyPolicy {
            if_busy: match args.if_busy {
                IfBusy::Run => vernier_app::IfBusy::Run,
                IfBusy::Wait => vernier_app::IfBusy::Wait,
                IfBusy::Skip => vernier_app::IfBusy::Skip,
            },
            busy_load: args.busy_load,
            busy_wait_s: args.busy_wait,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum ScheduleCommand {
    /// Write a systemd service and timer that run a suite on a calendar and 5 minutes after
    /// every boot (--suite), or a service that monitors latency continuously (--service)
    Install(Box<ScheduleInstallArgs>),
    /// The scheduled runs installed in the unit directory
    List {
        /// Where the units are [default: /etc/systemd/system as root, else
        /// ~/.config/systemd/user]
        #[arg(long, value_name = "DIR")]
        unit_dir: Option<PathBuf>,
    },
    /// Remove a scheduled run's units (disable them with systemctl first)
    Remove {
        #[arg(value_name = "NAME")]
        name: String,
        /// Where the units are [default: as for install]
        #[arg(long, value_name = "DIR")]
        unit_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Bring the database (--db) to this vernier's schema version: the one way a PostgreSQL
    /// database shared by a farm is migrated (docs/farm.md, "Upgrading a farm")
    Migrate,
}

#[derive(Debug, Args)]
pub struct ScheduleInstallArgs {
    /// The schedule's name: the units are vernier-NAME.service and vernier-NAME.timer
    #[arg(value_name = "NAME")]
    pub name: String,

    /// The built-in suite to run (see `vernier list`)
    #[arg(long, value_name = "SUITE", conflicts_with = "service")]
    pub suite: Option<String>,

    /// A continuous service instead of a timed suite
    #[arg(long, value_enum, value_name = "SERVICE")]
    pub service: Option<ScheduledService>,

    /// The after-boot unit of a bisection of kernels (`bisect start --boot`): a service and a
    /// timer that run `vernier bisect resume` 5 minutes after every boot
    #[arg(long, conflicts_with_all = ["suite", "service"])]
    pub bisect: bool,

    /// When the suite runs, a systemd calendar expression (systemd.time(7)): daily, weekly,
    /// 'Mon..Fri 02:00' [default: daily]
    #[arg(long, value_name = "CALENDAR")]
    pub on_calendar: Option<String>,

    /// The latency monitor's interval, each stored as a run [default: 5m]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5m")]
    pub interval: f64,

    /// Tag every session, e.g. --tag rack=3 (repeatable)
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag)]
    pub tags: Vec<(String, String)>,

    /// After every run (also a failed one), copy the sessions the database there lacks
    /// (`vernier sync --to`)
    #[arg(long, value_name = "DB")]
    pub sync: Option<PathBuf>,

    /// With --service latency-monitor and --sync: also sync while the monitor runs, this often
    /// (e.g. 1m), so that the central database follows it interval by interval
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "sync")]
    pub sync_every: Option<f64>,

    /// When the machine is busy at the start of a scheduled suite [default: wait]
    #[arg(long, value_enum, value_name = "ACTION", default_value_t = IfBusy::Wait)]
    pub if_busy: IfBusy,

    /// As for `run`: the load average from which the machine counts as busy
    #[arg(long, value_name = "LOAD", value_parser = parse_load)]
    pub busy_load: Option<f64>,

    /// As for `run`: how long to wait for an idle machine [default: 10m]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub busy_wait: Option<f64>,

    /// Monitors, as for `run` (repeatable)
    #[arg(long = "monitor", value_name = "LIST")]
    pub monitors: Vec<String>,

    /// Prepare the system, as for `run` (repeatable)
    #[arg(long = "setup", value_name = "LIST")]
    pub setup: Vec<String>,

    /// Loads during every measured run, as for `run` (repeatable): with two schedules of
    /// their own calendars, a machine measured under load at some hours and idle at others
    #[arg(long = "load", value_name = "LIST")]
    pub loads: Vec<String>,

    /// Start each scheduled suite at a random moment up to this long after its time, so that
    /// the machines of a farm do not all reach the database at once (RandomizedDelaySec=)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_or_zero,
          default_value = "10m")]
    pub randomized_delay: f64,

    /// The longest a scheduled suite may take, after which systemd stops it
    /// (TimeoutStartSec=) [default: 6h]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "6h")]
    pub time_limit: f64,

    /// Where to write the units [default: /etc/systemd/system as root, else
    /// ~/.config/systemd/user]
    #[arg(long, value_name = "DIR")]
    pub unit_dir: Option<PathBuf>,

    /// Print the unit files instead of writing them
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScheduledService {
    /// `vernier monitor latency`, restarted on failure
    LatencyMonitor,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Show options, defaults, units and versions
    #[arg(short, long)]
    pub verbose: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShowFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct MonitorArgs {
    /// What to monitor: `latency` with its options, e.g. `latency:cpus=0-1:priority=95`
    /// (`vernier list -v` shows them; its `duration` is the interval)
    #[arg(value_name = "SPEC")]
    pub spec: String,

    /// Length of one interval, each stored as a run with its histograms: a crash or reboot
    /// loses at most the interval in progress. A number of seconds or with units: 300, 300s,
    /// 5m, 1h, 1h30m
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub interval: f64,

    /// Stop after this long (whole intervals: 24h at 5m is 288); without it, run until SIGTERM
    /// or SIGINT, which discard the interval in progress and end the session cleanly (exit
    /// status 0; the stored intervals are complete)
    #[arg(long = "for", value_name = "DURATION", value_parser = parse_duration)]
    pub for_: Option<f64>,

    /// Tag the session: --tag kernel=6.18-rt --tag config=a (repeatable)
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag)]
    pub tags: Vec<(String, String)>,

    /// A note stored with the session
    #[arg(long, value_name = "TEXT", value_parser = parse_note)]
    pub note: Option<String>,

    /// Monitors sampled during each interval, as for `run`
    #[arg(long = "monitor", value_name = "LIST")]
    pub monitors: Vec<String>,

    /// Prepare the system, restored afterwards, as for `run`
    #[arg(long = "setup", value_name = "LIST")]
    pub setup: Vec<String>,

    /// Loads that run during every interval, as for `run`
    #[arg(long = "load", value_name = "LIST")]
    pub loads: Vec<String>,

    /// While monitoring, copy to this database what it lacks (`vernier sync --to`) every
    /// --sync-every (VERNIER_SYNC_TO, which keeps a password off the command line)
    #[arg(
        long,
        env = "VERNIER_SYNC_TO",
        value_name = "PATH|URL",
        requires = "sync_every"
    )]
    pub sync_to: Option<PathBuf>,

    /// How often to sync while monitoring, e.g. 1m: the intervals recorded since the last sync
    /// reach the central database within this time
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "sync_to")]
    pub sync_every: Option<f64>,

    /// No progress output, only the summary
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A session id (or a unique prefix), `latest` or `latest~N`
    #[arg(default_value = "latest", value_name = "SESSION")]
    pub session: String,

    /// Output format
    #[arg(long, value_enum, default_value_t = ShowFormat::Table)]
    pub format: ShowFormat,

    /// Draw the distribution and the CDF of each configuration's runs, and of every call of a
    /// `syscall` configuration
    #[arg(long)]
    pub histogram: bool,

    /// Show the monitors' per-run summaries of each configuration
    #[arg(long)]
    pub monitors: bool,

    /// Print one monitor series of every run, e.g. `stat.ctxt` (see --monitors for names)
    #[arg(long, value_name = "MONITOR.METRIC")]
    pub series: Option<String>,

    /// Also list every option of each configuration, defaults included (labels leave the
    /// defaults out; `--format json` always has them all)
    #[arg(short, long)]
    pub verbose: bool,
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    /// A session id (or a unique prefix), `latest` or `latest~N`
    #[arg(default_value = "latest", value_name = "SESSION")]
    pub session: String,

    /// Only the configurations this SPEC names, e.g. `latency:cpus=1` (options not given match
    /// any value) [default: every configuration]
    #[arg(long, value_name = "SPEC")]
    pub config: Option<String>,

    /// Write to FILE (replaced whole, or left as it was on an error); `-` is standard output
    /// [default: standard output]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Only these sessions: an id (or prefix), `latest`, `latest~N` or tags KEY=VALUE[,...]
    /// [default: every session]
    #[arg(value_name = "SELECTOR")]
    pub selector: Option<String>,
}

#[derive(Debug, Args)]
pub struct TagArgs {
    /// The sessions to tag: an id (or prefix), `latest`, `latest~N` or tags KEY=VALUE[,...]
    #[arg(value_name = "SELECTOR")]
    pub selector: String,

    /// Tags to set; a tag already present under KEY takes the new VALUE
    #[arg(value_name = "KEY=VALUE", value_parser = parse_tag, required_unless_present = "remove")]
    pub tags: Vec<(String, String)>,

    /// Remove the tag KEY (repeatable); a KEY that none of the sessions carries is an error,
    /// and nothing is changed
    #[arg(long, value_name = "KEY")]
    pub remove: Vec<String>,
}

#[derive(Debug, Args)]
pub struct NoteArgs {
    /// The sessions: an id (or prefix), `latest`, `latest~N` or tags KEY=VALUE[,...]
    #[arg(value_name = "SELECTOR")]
    pub selector: String,

    /// The note, replacing the one stored; an empty TEXT removes it
    #[arg(value_name = "TEXT")]
    pub text: String,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The sessions to delete: an id (or prefix), `latest`, `latest~N` or tags KEY=VALUE[,...]
    #[arg(value_name = "SELECTOR")]
    pub selector: String,

    /// Delete without asking (required when standard input is not a terminal)
    #[arg(long, short)]
    pub yes: bool,

    /// Also delete sessions recorded as running (whose process may still be writing them)
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Subcommand)]
pub enum EnvCommand {
    /// The environment a session ran in (the running machine without SESSION)
    Show {
        /// A session id (or prefix), `latest` or `latest~N`
        #[arg(value_name = "SESSION")]
        session: Option<String>,
    },
    /// What differs between the environments of two sessions, grouped, with a kernel config diff
    Diff {
        #[arg(value_name = "A")]
        a: String,
        #[arg(value_name = "B")]
        b: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum SystemCommand {
    /// List what threatens the validity of measurements on this machine, with fixes
    Check,
    /// Apply the recommended settings this machine supports; `system reset` undoes them
    Tune {
        /// Only show what would change
        #[arg(long)]
        dry_run: bool,
    },
    /// Restore what `system tune` (or a killed session's setup) changed, from the host's
    /// restore records in /run/vernier (VERNIER_RUN_DIR), whichever user wrote them
    Reset,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Table,
    Json,
    Markdown,
    Csv,
}

/// What `compare`'s columns mean (docs/compare.md has the methods).
const COMPARE_COLUMNS: &str = "\
Columns of the table:
  ratio    NEW/BASE of the configuration's runs (above 1: NEW larger; for a rate, faster)
  95% CI   the interval of the ratio at the comparison's confidence level, session-to-session
           noise included; the verdict is read from it
  MDC      minimum detectable change: the change this comparison reports as faster or slower
           with 80% probability; smaller changes mostly come out inconclusive
  p        two-sided Mann-Whitney U test of the runs
  p adj    p adjusted across all configurations of the comparison (Benjamini-Hochberg, the
           false discovery rate): read this one when many configurations are compared
  verdict  faster or slower (the interval is outside the threshold's band), equivalent (inside
           it), inconclusive (it reaches across a boundary of the band, or there is no interval:
           a warning says why)
A narrow terminal loses p, MDC and the medians first; --format markdown, csv or json keep them.";

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a session id (or prefix), `latest`, `latest~N`, or tags KEY=VALUE[,KEY=VALUE...]
    /// (all sessions carrying them, pooled)
    #[arg(value_name = "BASE")]
    pub base: String,

    /// The result set compared against BASE, in the same forms
    #[arg(value_name = "NEW")]
    pub new: String,

    /// Practical threshold: changes within it count as equivalent, e.g. 2% or 0.02 [default: 2%]
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub threshold: Option<f64>,

    /// Output format
    #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,

    /// Exit with status 1 when any configuration is slower
    #[arg(long)]
    pub fail_on_regression: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryFormat {
    Table,
    Json,
    Markdown,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Sessions (an id or prefix, `latest`, `latest~N`, tags KEY=VALUE[,...], `host=NAME`;
    /// several are joined) and configurations (a SPEC such as `hackbench:groups=4,8`; options
    /// not given match any value) [default: every session and configuration]
    #[arg(value_name = "SELECTOR|SPEC")]
    pub args: Vec<String>,

    /// Practical threshold of each step's verdict, as for `vernier compare` [default: 2%]
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub threshold: Option<f64>,

    /// Keep a change point when the t-test of the sessions on either side gives p below this
    #[arg(long, value_name = "P", value_parser = parse_fraction, default_value = "0.001")]
    pub max_pvalue: f64,

    /// Sessions per window of the detector's split step (at least 2)
    #[arg(long, value_name = "SESSIONS", default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(2..))]
    pub window: u32,

    /// Measure each series' newest level against these sessions (a selector, as above)
    /// [default: each series' first level, its sessions before its first change point]
    #[arg(long, value_name = "SELECTOR")]
    pub baseline: Option<String>,

    /// Output format
    #[arg(long, value_enum, default_value_t = HistoryFormat::Table)]
    pub format: HistoryFormat,

    /// Exit with status 1 when any series is worse now beyond the threshold (compare's
    /// `slower`): its newest change point, the drift of its newest level, or its newest level
    /// against the baseline
    #[arg(long)]
    pub fail_on_regression: bool,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// What to calibrate, as for `run` [default: the configurations of the `quick` suite]
    #[arg(value_name = "SPEC")]
    pub specs: Vec<String>,

    /// Calibrate the configurations of a suite, found as `run --suite` finds it (see
    /// `vernier list`)
    #[arg(long, value_name = "NAME", conflicts_with = "specs")]
    pub suite: Option<String>,

    /// Sessions to run, one after the other (at least 2)
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub sessions: u32,

    /// Measured runs per configuration and session (at least 2)
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub runs: u32,

    /// Warmup runs per configuration and session
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub warmup: u32,

    /// Maximum time per configuration and session including warmups: seconds or with units,
    /// 5, 30s, 1m
    #[arg(long, value_name = "DURATION", default_value_t = 5.0, value_parser = parse_duration)]
    pub max_time: f64,

    /// Spread the session starts evenly over this long (seconds or with units: 600, 10m, 2h),
    /// waiting in between, so the estimate sees how the machine drifts on that time scale
    /// [default: back to back]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub spread: Option<f64>,

    /// Prepare the system for each session as `run --setup` does (use what you run with)
    #[arg(long = "setup", value_name = "LIST")]
    pub setup: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum BisectCommand {
    /// Start a bisection of GOOD..BAD and run it until it names the first bad commit or the
    /// budget is spent
    Start(Box<BisectStartArgs>),
    /// The steps so far, the range left and the budget spent
    Status,
    /// The first bad commit, its effect with an interval, and every step (a figure with --plot)
    Report(BisectReportArgs),
    /// Continue a bisection after an interruption or a reboot (the after-boot unit of
    /// `vernier schedule install NAME --bisect` runs it)
    Resume(BisectResumeArgs),
    /// End the bisection: remove its work tree (its sessions stay)
    Reset,
    /// Run one session of the current directory and exit 0 (good), 1 (bad) or 125 (cannot
    /// tell), for `git bisect run`
    Judge(BisectJudgeArgs),
}

/// A sessions budget (`40`) or a time budget (`2h`, `90m`, `600s`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    Sessions(u32),
    Seconds(f64),
}

fn parse_budget(text: &str) -> Result<Budget, String> {
    if let Ok(n) = text.trim().parse::<u32>() {
        return if n > 0 {
            Ok(Budget::Sessions(n))
        } else {
            Err("a budget of 0 sessions measures nothing".to_string())
        };
    }
    duration_s(text)
        .filter(|v| *v > 0.0)
        .map(Budget::Seconds)
        .ok_or_else(|| {
            format!(
                "'{text}' is not a budget: a number of sessions (40) or a duration with units \
                 (90m, 2h, 600s)"
            )
        })
}

#[derive(Debug, Args)]
pub struct BisectStartArgs {
    /// What each step measures, as for `run` (one configuration), e.g.
    /// 'command:cmd=./app --bench:shell=none'; it runs in the commit's work tree
    #[arg(value_name = "SPEC", required = true)]
    pub specs: Vec<String>,

    /// The git repository to bisect (left untouched: steps run in a work tree of their own)
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,

    /// A commit without the regression
    #[arg(long, value_name = "REV")]
    pub good: String,

    /// A later commit with it
    #[arg(long, value_name = "REV")]
    pub bad: String,

    /// The metric to follow, e.g. user_time (the CPU time of `command`, steadier than wall
    /// time on a loaded machine) [default: the benchmark's primary metric]
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,

    /// Shell command that builds a commit in its work tree; a commit whose build fails is
    /// skipped
    #[arg(long, value_name = "CMD")]
    pub build: Option<String>,

    /// Shell command run after each build to install and boot its kernel (kexec, a reboot, or
    /// a virtual machine that runs `vernier bisect resume --this-boot`); it runs in the
    /// commit's work tree with VERNIER_BISECT_COMMIT, VERNIER_BISECT_TREE and
    /// VERNIER_BISECT_RELEASE set. Steps are measured only once the running kernel is checked
    /// to be the commit's
    #[arg(long, value_name = "CMD")]
    pub boot: Option<String>,

    /// With --boot: shell command that prints, in the built tree, the release its kernel
    /// reports (`uname -r`) [default: make -s kernelrelease]
    #[arg(long, value_name = "CMD", requires = "boot")]
    pub kernel_release: Option<String>,

    /// What the bisection may spend in all: sessions (40) or time (2h, 90m) [default: 40]
    #[arg(long, value_name = "N|DURATION", value_parser = parse_budget)]
    pub budget: Option<Budget>,

    /// The change that counts, e.g. 5% or 0.05 [default: half the regression measured between
    /// the ends]
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub threshold: Option<f64>,

    /// Sessions at one commit after which, still undecided, it is skipped
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub commit_sessions: u32,

    #[command(flatten)]
    pub limits: LimitsArgs,

    /// Only store the bisection; `bisect resume` runs it
    #[arg(long)]
    pub no_run: bool,
}

#[derive(Debug, Args)]
pub struct BisectResumeArgs {
    /// Measure only while the kernel running is the one the step booted, and build or boot
    /// nothing: the resume that a --boot command runs inside a virtual machine
    #[arg(long)]
    pub this_boot: bool,

    /// The boot a step asked for did not happen (the boot id is unchanged): count it as a
    /// failed boot and run the boot command again (a commit is skipped after 2 failed boots)
    #[arg(long, conflicts_with = "this_boot")]
    pub boot_again: bool,
}

#[derive(Debug, Args)]
pub struct BisectReportArgs {
    /// Also draw the steps (median per commit in commit order, with intervals) into this SVG
    /// or PNG file
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BisectJudgeArgs {
    /// What to measure, as for `run` (one configuration)
    #[arg(value_name = "SPEC", required = true)]
    pub specs: Vec<String>,

    /// The sessions of the good end (a selector: commit=SHA, a tag, an id)
    #[arg(long, value_name = "SELECTOR")]
    pub good: String,

    /// The sessions of the bad end
    #[arg(long, value_name = "SELECTOR")]
    pub bad: String,

    /// The metric to follow [default: the benchmark's primary metric]
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,

    /// The change that counts, e.g. 5% [default: half the regression between the ends]
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub threshold: Option<f64>,

    /// Most sessions to run here: another while the call is undecided (each is a look of the
    /// same rule as a bisection's step)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub sessions: u32,

    /// Tag the session KEY=VALUE (repeatable), e.g. commit=$(git rev-parse HEAD)
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag)]
    pub tags: Vec<(String, String)>,

    #[command(flatten)]
    pub limits: LimitsArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Json,
    Csv,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Sessions to export: ids (or prefixes), `latest`, `latest~N` or tags KEY=VALUE[,...];
    /// several are joined, each session once [default: every session]
    #[arg(value_name = "SELECTOR")]
    pub selectors: Vec<String>,

    /// Output file: a regular file is replaced atomically, a device, FIFO or symbolic link is
    /// written through; `-` is standard output [default: standard output]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// json: the vernier export format (docs/export-format.md); csv: one row per run
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlotKind {
    /// Per configuration, a box of the runs of each SELECTOR side by side, the median's
    /// interval marked and every run a dot
    Box,
    /// Per configuration, a bar of the median of each SELECTOR side by side with its interval
    /// as a whisker: many configurations at once
    Bars,
    /// Per CPU, the latency histogram (1 us bins, logarithmic counts) with its worst case
    Latency,
    /// The median against a swept option (--option) with its interval as a band, a line per
    /// SELECTOR
    Line,
    /// The ratios NEW/BASE of `--compare BASE NEW` with their intervals, coloured by verdict
    Forest,
    /// The time series of a monitor key (--key) during the runs of each configuration
    Monitor,
    /// The distribution of each configuration's samples, as `show --histogram` prints it:
    /// the per-call times of `syscall` (share and CDF, the SELECTORs on one axis), else the
    /// latency histograms per CPU
    Histogram,
    /// A configuration's session medians over time with their intervals and the change points
    /// `vernier history` finds in them (one configuration: narrow with --benchmark)
    History,
    /// The flame graph of a configuration's profiled runs (`run --profile`), SVG; with two
    /// SELECTORs, BASE NEW, the differential one
    Flame,
    /// The differential flame graph of BASE NEW: NEW's stacks coloured by the change of each
    /// frame's share (red larger, blue smaller), SVG
    FlameDiff,
}

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The kind of figure
    #[arg(value_enum, value_name = "KIND")]
    pub kind: PlotKind,

    /// Sessions, one series each: an id (or prefix), `latest`, `latest~N`, or tags
    /// KEY=VALUE[,...] (the sessions carrying them pooled as one series)
    #[arg(value_name = "SELECTOR")]
    pub selectors: Vec<String>,

    /// The figure's file: its extension, .svg or .png, chooses the format; a regular file is
    /// replaced atomically
    #[arg(short, long, value_name = "FILE", required = true)]
    pub output: PathBuf,

    /// forest: the two result sets compared, as for `vernier compare`
    #[arg(long, num_args = 2, value_names = ["BASE", "NEW"])]
    pub compare: Option<Vec<String>>,

    /// forest: practical threshold, as for `vernier compare` [default: 2%]
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub threshold: Option<f64>,

    /// monitor: the series to draw, as `show --series` names it (e.g. stat.ctxt)
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,

    /// line: the swept option on the x axis [default: the one option whose values differ]
    #[arg(long, value_name = "NAME")]
    pub option: Option<String>,

    /// Only the configurations of this benchmark
    #[arg(long, value_name = "NAME")]
    pub benchmark: Option<String>,

    /// The figure's title [default: the kind and what it shows]
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,

    /// Width in pixels, 200 to 16384 (a PNG at most 33554432 pixels in all, such as 8192x4096)
    #[arg(long, value_name = "PIXELS", default_value_t = 1200,
          value_parser = clap::value_parser!(u32)
              .range(i64::from(vernier_plot::MIN_WIDTH)..=i64::from(vernier_plot::MAX_SIDE)))]
    pub width: u32,

    /// Height in pixels, 150 to 16384 [default: 700, or more for figures of several panels,
    /// each at least 300 high]
    #[arg(long, value_name = "PIXELS",
          value_parser = clap::value_parser!(u32)
              .range(i64::from(vernier_plot::MIN_HEIGHT)..=i64::from(vernier_plot::MAX_SIDE)))]
    pub height: Option<u32>,
}

/// What the pages of `report` and `serve` show.
#[derive(Debug, Args)]
pub struct SiteArgs {
    /// The sessions shown: ids (or prefixes), `latest`, `latest~N`, or tags KEY=VALUE[,...]
    /// [default: every session]
    #[arg(value_name = "SELECTOR")]
    pub selectors: Vec<String>,

    /// One series per value of this tag (its sessions pooled, as a tag selector pools them),
    /// e.g. `--by kernel` [default: a series per session]
    #[arg(long, value_name = "KEY")]
    pub by: Option<String>,

    /// Compare each NEW against BASE, as `vernier compare BASE NEW` does: a compare page and an
    /// answer on the index each [default: the values of the one tag that splits the sessions
    /// (--by's tag when given), each against the oldest session's value]
    #[arg(long, num_args = 2.., value_names = ["BASE", "NEW"])]
    pub compare: Option<Vec<String>>,

    /// The comparison's practical threshold, as for `vernier compare` [default: 2%]
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub threshold: Option<f64>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub site: SiteArgs,

    /// The site's directory: new, empty, or a previous report, which is replaced as a whole
    /// once the new one is complete
    #[arg(short, long, value_name = "DIR", required = true)]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub site: SiteArgs,

    /// The TCP port; 0 picks a free one (the address is printed)
    #[arg(long, value_name = "N", default_value_t = 8080)]
    pub port: u16,

    /// The address to listen on; another than 127.0.0.1 shows the results to the network
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,

    /// Also answer requests that name this server NAME (a host name or address, no port),
    /// besides the address it listens on and localhost (repeatable)
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A vernier export file, hyperfine's --export-json output, or cyclictest's histogram
    /// (-h/-H, --histfile) or --json output
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// The database to copy to; created if missing (VERNIER_SYNC_TO, which keeps a password
    /// off the command line that other users can read)
    #[arg(long, env = "VERNIER_SYNC_TO", value_name = "PATH|URL")]
    pub to: PathBuf,

    /// The database to copy from [default: --db]
    #[arg(long, value_name = "PATH")]
    pub from: Option<PathBuf>,

    /// Name every session copied, added to or left for later
    #[arg(short, long)]
    pub verbose: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The databases to merge (vernier SQLite files)
    #[arg(value_name = "DB", required = true)]
    pub inputs: Vec<PathBuf>,

    /// A new database to create with the sessions of every input; an existing file is refused.
    /// Built as .NEW.merging beside it: a merge stopped midway leaves that file, and the same
    /// merge run again resumes it
    #[arg(short, long, value_name = "NEW", conflicts_with = "into")]
    pub output: Option<PathBuf>,

    /// An existing vernier database to add the sessions of every input to
    #[arg(long, value_name = "EXISTING")]
    pub into: Option<PathBuf>,
}

/// A seed: a whole number in 0..=18446744073709551615 (u64), said in the message, as clap
/// says the range of the u32 options (its u64 parser only says "invalid digit").
/// `--profile-frequency`: samples per second (vernier_model::profile::check_frequency).
fn parse_profile_frequency(text: &str) -> Result<u32, String> {
    let hz: u32 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number of samples per second"))?;
    vernier_model::profile::check_frequency(hz)?;
    Ok(hz)
}

fn parse_seed(text: &str) -> Result<u64, String> {
    text.trim().parse::<u64>().map_err(|_| {
        format!(
            "{} is not in 0..={} (a seed is a whole number)",
            text.trim(),
            u64::MAX
        )
    })
}

/// `2%`, `0.02` -> 0.02.
fn parse_fraction(text: &str) -> Result<f64, String> {
    let (number, scale) = match text.strip_suffix('%') {
        Some(n) => (n, 100.0),
        None => (text, 1.0),
    };
    let v: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a fraction such as 0.02 or 2%"))?;
    let v = v / scale;
    if v.is_finite() && v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(format!("'{text}' is outside (0, 1) (0%-100%)"))
    }
}

/// The forms every duration flag takes, for its error message.
const DURATION_FORMS: &str =
    "(such as 30 or 0.5), or with units (such as 90s, 1m30s, 5m, 1.5h or 2d)";

/// A duration the user gave, in seconds: a plain number of seconds (`60`, `0.5`, what every
/// duration flag has always taken) or humantime's form (`90s`, `1m30s`, `5m`, `1.5h`, `2d`;
/// cyclictest's `-D` units s, m, h and d are among them, rt-tests src/lib/rt-utils.c
/// `parse_time_string`). `None` for anything else, a negative duration and one beyond
/// [`MAX_DURATION_S`].
fn duration_s(text: &str) -> Option<f64> {
    let t = text.trim();
    let seconds = match t.parse::<f64>() {
        Ok(v) => v,
        Err(_) => humantime::parse_duration(t).ok()?.as_secs_f64(),
    };
    (seconds.is_finite() && (0.0..=MAX_DURATION_S).contains(&seconds)).then_some(seconds)
}

/// `run --time-limit`: a duration, or none at all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeLimitArg {
    Seconds(f64),
    Budget,
    Off,
}

fn parse_time_limit(text: &str) -> Result<TimeLimitArg, String> {
    match text.trim() {
        "off" => return Ok(TimeLimitArg::Off),
        "budget" => return Ok(TimeLimitArg::Budget),
        _ => {}
    }
    parse_duration(text)
        .map(TimeLimitArg::Seconds)
        .map_err(|_| {
            format!(
                "'{text}' is not a time limit: a duration greater than 0 {DURATION_FORMS}, \
                 budget or off"
            )
        })
}

/// A duration greater than 0 ([`duration_s`]), in seconds.
pub fn parse_duration(text: &str) -> Result<f64, String> {
    match duration_s(text) {
        Some(v) if v > 0.0 => Ok(v),
        _ => Err(format!(
            "'{text}' is not a duration: a number of seconds greater than 0 {DURATION_FORMS}"
        )),
    }
}

/// A duration of 0 or more ([`duration_s`]), in seconds.
fn parse_duration_or_zero(text: &str) -> Result<f64, String> {
    duration_s(text).ok_or_else(|| {
        format!("'{text}' is not a duration: a number of seconds of 0 or more {DURATION_FORMS}")
    })
}

/// A load average limit: a number of at least 0.
fn parse_load(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "'{text}' is not a load average: a number of at least 0 (such as 0.5 or 2)"
        )),
    }
}

/// `key=value` with a non-empty key, one line of printable text.
fn parse_tag(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => {
            vernier_model::check_user_text("tag key", k)?;
            vernier_model::check_user_text("tag value", v)?;
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => {
            vernier_model::check_user_text("tag", text)?;
            Err(format!("'{text}' is not KEY=VALUE"))
        }
    }
}

/// A note: one line of printable text.
fn parse_note(text: &str) -> Result<String, String> {
    vernier_model::check_user_text("note", text)?;
    Ok(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
        command().debug_assert();
    }

    #[test]
    fn fractions_and_tags() {
        assert_eq!(parse_fraction("2%"), Ok(0.02));
        assert_eq!(parse_fraction("0.05"), Ok(0.05));
        assert!(parse_fraction("0").is_err());
        assert!(parse_fraction("150%").is_err());
        assert!(parse_fraction("x").is_err());
        assert_eq!(parse_tag("kernel=A"), Ok(("kernel".into(), "A".into())));
        assert!(parse_tag("=A").is_err());
        assert!(parse_tag("kernel").is_err());
    }

    #[test]
    fn durations_are_plain_seconds_or_with_units() {
        for (text, seconds) in [
            ("60", 60.0),
            ("0.5", 0.5),
            (" 300 ", 300.0),
            ("90s", 90.0),
            ("1m30s", 90.0),
            ("5m", 300.0),
            ("1.5h", 5400.0),
            ("24h", 86_400.0),
            ("2d", 172_800.0),
            ("250ms", 0.25),
            ("1e9", 1e9),
        ] {
            assert_eq!(parse_duration(text), Ok(seconds), "{text}");
        }
        for bad in [
            "0", "0s", "-1", "5x", "m", "", "NaN", "inf", "1e10", "40years",
        ] {
            let e = parse_duration(bad).unwrap_err();
            assert_eq!(
                e,
                format!(
                    "'{bad}' is not a duration: a number of seconds greater than 0 (such as 30 \
                     or 0.5), or with units (such as 90s, 1m30s, 5m, 1.5h or 2d)"
                )
            );
        }
        assert_eq!(parse_duration_or_zero("0"), Ok(0.0));
        assert_eq!(parse_duration_or_zero("0s"), Ok(0.0));
        assert_eq!(parse_duration_or_zero("1m"), Ok(60.0));
        assert!(parse_duration_or_zero("-1")
            .unwrap_err()
            .contains("a number of seconds of 0 or more"));
    }
}
