//! Built-in suites: named lists of specs with settings that suit them.

/// A built-in suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub name: &'static str,
    pub description: &'static str,
    pub specs: &'static [&'static str],
    /// Per-configuration time limit of the suite, in seconds, unless the user sets one.
    pub max_time_s: Option<f64>,
}

/// All built-in suites.
pub fn suites() -> Vec<Suite> {
    vec![
        Suite {
            name: "quick",
            description: "the four scheduler benchmarks with short settings (at most ~2 minutes)",
            specs: &[
                "hackbench:loops=200",
                "pipe:loops=20000",
                "fork:duration=1",
                "yield:duration=1",
            ],
            max_time_s: Some(20.0),
        },
        Suite {
            name: "scheduler",
            description: "the scheduler benchmarks at their defaults: hackbench in its four \
                          variants, pipe on one and on two CPUs, fork and yield",
            specs: &[
                "hackbench:ipc=socket,pipe:tasks=process,thread",
                "pipe:placement=same-cpu,cross-cpu",
                "fork",
                "yield",
            ],
            max_time_s: None,
        },
    ]
}

/// The suite called `name`.
pub fn find_suite(name: &str) -> Option<Suite> {
    suites().into_iter().find(|s| s.name == name)
}

/// The names of all suites, for error messages.
pub fn suite_names() -> String {
    suites()
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}
