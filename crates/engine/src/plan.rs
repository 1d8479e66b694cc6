//! A plan: the validated list of configurations and the settings that repeat them.
//!
//! Everything a user can get wrong is checked here, before any benchmark runs and before the
//! system or the database is touched.

use vernier_model::plugin::{self, Kind, PluginError};
use vernier_model::spec::SpecError;
use vernier_model::{BenchmarkInfo, Describe, Options, Settings};

use crate::spec::{expand, parse_benchmark_spec};

/// One configuration to measure: a benchmark with every option resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedConfiguration {
    pub info: BenchmarkInfo,
    pub options: Options,
}

impl PlannedConfiguration {
    /// `benchmark:opt=value:...` with every option, as stored and shown.
    pub fn label(&self) -> String {
        if self.options.0.is_empty() {
            self.info.name().to_string()
        } else {
            format!("{}:{}", self.info.name(), self.options.label())
        }
    }
}

/// A validated plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub configurations: Vec<PlannedConfiguration>,
    pub settings: Settings,
    /// The specs as given, stored with the session.
    pub specs: Vec<String>,
}

impl Plan {
    /// The external programs the plan's configurations run, each once, in plan order
    /// ([`vernier_bench::Benchmark::tools`]): their versions belong in the environment.
    pub fn tools(&self) -> Vec<&'static str> {
        let mut tools = Vec::new();
        for configuration in &self.configurations {
            if let Some(benchmark) = builtin(&configuration.info) {
                for tool in benchmark.tools(&configuration.options) {
                    if !tools.contains(&tool) {
                        tools.push(tool);
                    }
                }
            }
        }
        tools
    }
}

/// What is wrong with a plan.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// An unknown benchmark, an unknown option or a value its option's type refuses.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    #[error("configuration '{0}' is given twice")]
    DuplicateConfiguration(String),
    #[error("nothing to run: no spec given")]
    NoConfigurations,
    #[error("invalid setting {setting}: {detail}")]
    Setting {
        setting: &'static str,
        detail: String,
    },
    /// A configuration of a spec has options that break a rule of its benchmark.
    #[error("spec '{spec}': {detail}")]
    Options { spec: String, detail: String },
    /// A configuration needs more than the machine allows (tasks, files, memory, CPUs).
    #[error("{configuration} cannot run on this machine: {detail}")]
    Machine {
        configuration: String,
        detail: String,
    },
}

/// Checks the repetition settings.
pub fn validate_settings(s: &Settings) -> Result<(), PlanError> {
    let bad = |setting, detail: String| Err(PlanError::Setting { setting, detail });
    if !(s.target.is_finite() && s.target > 0.0 && s.target < 1.0) {
        return bad(
            "--target",
            format!("{} is not a fraction in (0, 1), e.g. 0.02 for 2%", s.target),
        );
    }
    if s.min_runs < 1 {
        return bad("--min-runs", "must be at least 1".into());
    }
    if s.max_runs < s.min_runs {
        return bad(
            "--max-runs",
            format!(
                "{} is below --min-runs {}; give --min-runs {} or less too",
                s.max_runs, s.min_runs, s.max_runs
            ),
        );
    }
    if !(s.min_time_s.is_finite() && s.min_time_s >= 0.0) {
        return bad(
            "--min-time",
            format!("{} is not a duration >= 0", s.min_time_s),
        );
    }
    if !(s.max_time_s.is_finite() && s.max_time_s > 0.0) {
        return bad(
            "--max-time",
            format!("{} is not a duration > 0", s.max_time_s),
        );
    }
    if s.max_time_s < s.min_time_s {
        return bad(
            "--max-time",
            format!("{} s is below --min-time {} s", s.max_time_s, s.min_time_s),
        );
    }
    Ok(())
}

/// Parses and expands `specs` against the known benchmarks and checks `settings`.
/// `online_cpus` resolves defaults such as the number of workers.
pub fn build_plan(
    specs: &[String],
    settings: Settings,
    benchmarks: &[BenchmarkInfo],
    online_cpus: u32,
) -> Result<Plan, PlanError> {
    validate_settings(&settings)?;
    if specs.is_empty() {
        return Err(PlanError::NoConfigurations);
    }
    let mut configurations: Vec<PlannedConfiguration> = Vec::new();
    for text in specs {
        let spec = parse_benchmark_spec(text)?;
        let info = plugin::find(Kind::Benchmark, benchmarks, &[], &spec.name)?;
        // Every name is checked before any value of any configuration.
        info.description().check_names(
            Kind::Benchmark,
            &[],
            spec.options.iter().map(|(k, _)| k.as_str()),
        )?;
        for combo in expand(&spec) {
            let options = configuration_options(info, &combo, online_cpus)?;
            let mut configuration = PlannedConfiguration {
                info: info.clone(),
                options,
            };
            check_options(&mut configuration, &spec.text)?;
            // An adapter's metrics follow the tool's benchmark its options choose.
            if let Some(benchmark) = builtin(&configuration.info) {
                let (metric, secondary) = benchmark.metrics(&configuration.options);
                configuration.info.set_metrics(metric, secondary);
            }
            if configurations.contains(&configuration) {
                return Err(PlanError::DuplicateConfiguration(configuration.label()));
            }
            configurations.push(configuration);
        }
    }
    Ok(Plan {
        configurations,
        settings,
        specs: specs.to_vec(),
    })
}

/// The options of one configuration of benchmark `info`, `given` as a spec gives them (names
/// and values as text), checked and typed by the benchmark's description, with the defaults of
/// those not given (`online_cpus` resolves defaults such as the number of workers). The grammar
/// leaves no value empty; what a parameter must be is the benchmark's to check
/// ([`check_options`]). `vernier run` plans with it and `vernier history` matches stored
/// configurations with it, so that `interval=1ms` means 1000 to both.
pub fn configuration_options(
    info: &BenchmarkInfo,
    given: &[(String, String)],
    online_cpus: u32,
) -> Result<Options, PlanError> {
    Ok(info.description().resolve(
        Kind::Benchmark,
        &[],
        given.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        online_cpus,
    )?)
}

/// The built-in benchmark `info` describes: the same name, version and options (tests plan
/// scripted benchmarks of their own that may share a built-in's name). The metrics are left
/// out of the match: a plan sets them per configuration ([`vernier_bench::Benchmark::metrics`]).
pub(crate) fn builtin(info: &BenchmarkInfo) -> Option<Box<dyn vernier_bench::Benchmark>> {
    vernier_bench::builtin(info.name()).filter(|b| {
        let own = b.info();
        own.version() == info.version() && own.options() == info.options()
    })
}

/// Checks the options of a configuration of a built-in benchmark against the rules its types
/// cannot say, through [`vernier_bench::Benchmark::check_options`] (a command's placeholders,
/// its shell), then fills in the facts it depends on
/// ([`vernier_bench::Benchmark::complete_options`]). Configurations of benchmarks that are not
/// built in (tests' scripted ones) are not checked.
fn check_options(configuration: &mut PlannedConfiguration, spec: &str) -> Result<(), PlanError> {
    let Some(benchmark) = builtin(&configuration.info) else {
        return Ok(());
    };
    benchmark
        .check_options(&configuration.options)
        .and_then(|()| benchmark.complete_options(&mut configuration.options))
        .map_err(|e| PlanError::Options {
            spec: spec.to_string(),
            detail: match e {
                vernier_bench::BenchError::Options(detail) => detail,
                other => other.to_string(),
            },
        })
}

/// Checks every configuration of `plan` against what this machine allows, through each
/// benchmark's own [`vernier_bench::Benchmark::check_machine`], so that a configuration that
/// would exhaust the PID space or the file table is refused before anything starts.
/// Configurations of benchmarks that are not built in (tests' scripted ones) need nothing.
pub fn check_machine(plan: &Plan, limits: &vernier_sys::MachineLimits) -> Result<(), PlanError> {
    for configuration in &plan.configurations {
        let Some(benchmark) = builtin(&configuration.info) else {
            continue;
        };
        benchmark
            .check_machine(&configuration.options, limits)
            .map_err(|e| PlanError::Machine {
                configuration: configuration.label(),
                detail: e.to_string(),
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use vernier_model::{MetricInfo, OptionDefault, OptionKind, OptionSpec, OptionValue};

    fn benchmarks() -> Vec<BenchmarkInfo> {
        vec![
            BenchmarkInfo::new("hackbench", "1", "", MetricInfo::lower("runtime", "s"))
                .with_options(vec![
                    OptionSpec::new(
                        "groups",
                        OptionKind::UInt { min: 1, max: 100 },
                        OptionDefault::Value(OptionValue::UInt(10)),
                    ),
                    OptionSpec::new(
                        "ipc",
                        OptionKind::choice(&["socket", "pipe"]),
                        OptionDefault::Value(OptionValue::Text("socket".into())),
                    ),
                    OptionSpec::new(
                        "workers",
                        OptionKind::UInt { min: 1, max: 100 },
                        OptionDefault::OnlineCpus,
                    ),
                ]),
        ]
    }

    fn plan_with(specs: &[&str]) -> Plan {
        plan(specs).unwrap()
    }

    fn plan(specs: &[&str]) -> Result<Plan, PlanError> {
        let specs: Vec<String> = specs.iter().map(|s| s.to_string()).collect();
        build_plan(&specs, Settings::default(), &benchmarks(), 2)
    }

    #[test]
    fn configuration_options_are_what_the_plan_resolves() {
        let infos = benchmarks();
        let given = |name: &str, value: &str| vec![(name.to_string(), value.to_string())];
        let resolved = configuration_options(&infos[0], &given("groups", "4"), 2).unwrap();
        assert_eq!(resolved.get("groups"), Some(&OptionValue::UInt(4)));
        let planned = plan_with(&["hackbench:groups=4"]);
        assert_eq!(planned.configurations[0].options, resolved);
        assert!(configuration_options(&infos[0], &given("groups", "0"), 2).is_err());
        let unknown = configuration_options(&infos[0], &given("group", "4"), 2)
            .unwrap_err()
            .to_string();
        assert_eq!(
            unknown,
            "benchmark 'hackbench' has no option 'group'; valid options: groups, ipc, workers"
        );
        assert_eq!(
            plan(&["hackbench:group=4"]).unwrap_err().to_string(),
            unknown
        );
    }

    #[test]
    fn resolves_defaults_and_sweeps() {
        let p = plan(&["hackbench:groups=4,8:ipc=pipe,socket"]).unwrap();
        assert_eq!(p.configurations.len(), 4);
        assert_eq!(
            p.configurations[0].label(),
            "hackbench:groups=4:ipc=pipe:workers=2"
        );
        assert_eq!(p.configurations[3].options.uint("groups"), 8);
        assert_eq!(p.configurations[3].options.text("ipc"), "socket");
    }

    #[test]
    fn errors_name_what_is_valid() {
        let e = plan(&["hackbnch"]).unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown benchmark 'hackbnch'; valid benchmarks: hackbench"
        );
        let e = plan(&["hackbench:grups=4"]).unwrap_err().to_string();
        assert!(e.contains("valid options: groups, ipc, workers"), "{e}");
        let e = plan(&["hackbench:groups=0"]).unwrap_err().to_string();
        assert!(e.contains("expected an integer in 1..=100"), "{e}");
        let e = plan(&["hackbench:ipc=tcp"]).unwrap_err().to_string();
        assert!(e.contains("one of socket, pipe"), "{e}");
        assert!(matches!(
            plan(&["hackbench", "hackbench:groups=10"]),
            Err(PlanError::DuplicateConfiguration(_))
        ));
        assert_eq!(plan(&[]), Err(PlanError::NoConfigurations));
    }

    #[test]
    fn a_benchmark_with_parameters_takes_undeclared_options_as_text_sweeps() {
        let infos: Vec<BenchmarkInfo> = benchmarks()
            .into_iter()
            .map(|i| i.with_parameters("parameters"))
            .collect();
        let specs = vec!["hackbench:t=a b,c:groups=4".to_string()];
        let p = build_plan(&specs, Settings::default(), &infos, 2).unwrap();
        assert_eq!(p.configurations.len(), 2);
        assert_eq!(p.configurations[0].options.text("t"), "a b");
        assert_eq!(p.configurations[1].options.text("t"), "c");
        assert_eq!(p.configurations[1].options.uint("groups"), 4);
        // Declared options keep their types; a parameter is named like an option.
        let plan = |spec: &str| {
            build_plan(&[spec.to_string()], Settings::default(), &infos, 2)
                .unwrap_err()
                .to_string()
        };
        assert!(plan("hackbench:groups=x").contains("expected an integer"));
        assert!(plan("hackbench:9t=1").contains("has no option '9t'"));
        // The built-in command checks its own parameters when the plan is made.
        let infos: Vec<BenchmarkInfo> = vernier_bench::builtin_infos();
        let e = build_plan(
            &["command:cmd=sleep {t}:t=1:u=2".to_string()],
            Settings::default(),
            &infos,
            2,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("spec 'command:cmd=sleep {t}:t=1:u=2': parameter 'u' fills nothing"),
            "{e}"
        );
    }

    #[test]
    fn settings_are_checked() {
        let specs = vec!["hackbench".to_string()];
        let check = |s: Settings| build_plan(&specs, s, &benchmarks(), 2);
        assert!(check(Settings {
            min_runs: 10,
            max_runs: 5,
            ..Settings::default()
        })
        .is_err());
        assert!(check(Settings {
            target: 0.0,
            ..Settings::default()
        })
        .is_err());
        assert!(check(Settings {
            max_time_s: f64::NAN,
            ..Settings::default()
        })
        .is_err());
        assert!(check(Settings::default()).is_ok());
    }

    #[test]
    fn configurations_are_checked_against_the_machine() {
        let infos: Vec<BenchmarkInfo> = vernier_bench::builtin_infos();
        let specs = vec![
            "hackbench:groups=1,10000:fds=1000".to_string(),
            "mock".to_string(),
        ];
        let plan = build_plan(&specs, Settings::default(), &infos, 2).unwrap();
        let limits = vernier_sys::MachineLimits {
            pid_max: Some(32768),
            tasks: Some(100),
            ..Default::default()
        };
        let e = check_machine(&plan, &limits).unwrap_err().to_string();
        assert!(
            e.starts_with("hackbench:datasize=100:fds=1000:groups=10000:") && e.contains(
                "cannot run on this machine: needs 20000001 tasks; only 32368 more can start here"
            ),
            "{e}"
        );
        // The first configuration alone fits; the scripted benchmarks of tests need nothing.
        let plan = build_plan(&specs[..1], Settings::default(), &infos, 2).unwrap();
        let small = Plan {
            configurations: plan.configurations[..1].to_vec(),
            ..plan
        };
        assert!(check_machine(&small, &limits).is_ok());
        // A benchmark of the same name that is not the built-in one (this module's fixture) is
        // not checked with the built-in's rules.
        let fixture = plan_with(&["hackbench"]);
        let none = vernier_sys::MachineLimits {
            pid_max: Some(0),
            ..Default::default()
        };
        assert!(check_machine(&fixture, &none).is_ok());
        assert!(check_machine(&small, &none).is_err());
    }
}
