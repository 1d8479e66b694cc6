//! Profiles of runs: where a configuration spends its CPU time, sampled with `perf record -g`
//! in runs of their own after the timed ones (`--profile`), never part of the statistics.
//!
//! A profile is stored as folded stacks (one line per distinct call stack, outermost frame
//! first, with its sample count: the format of Brendan Gregg's `stackcollapse` scripts and of
//! `inferno`), kept compact as a table of distinct frames and stacks of indexes into it
//! ([`FoldedStacks`]).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The sampling rate when none is given: 999 Hz, not 1000, so that the samples do not run in
/// lockstep with a timer of the kernel or of the benchmark (the rate perf's own examples and
/// Brendan Gregg's flame graph pages use, 99 or 999 Hz).
pub const DEFAULT_FREQUENCY_HZ: u32 = 999;

/// The profiled runs of a configuration when `--profile` is given without a number.
pub const DEFAULT_PROFILE_RUNS: u32 = 3;

/// What a profile samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileScope {
    /// The run's process and every process it starts (perf's inherited per-task events).
    #[default]
    Process,
    /// Every CPU of the machine while the run lasts (`perf record -a`).
    System,
}

impl ProfileScope {
    pub fn as_str(self) -> &'static str {
        match self {
            ProfileScope::Process => "process",
            ProfileScope::System => "system",
        }
    }
}

impl fmt::Display for ProfileScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProfileScope {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "process" => Ok(ProfileScope::Process),
            "system" => Ok(ProfileScope::System),
            other => Err(format!(
                "unknown profile scope '{other}'; valid: process, system"
            )),
        }
    }
}

/// How a session profiles its configurations (`--profile`, `--profile-scope`,
/// `--profile-frequency`, or a suite's settings). Stored with the session's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileSettings {
    /// Profiled runs per configuration, after its timed runs; 0: none.
    pub runs: u32,
    pub scope: ProfileScope,
    pub frequency_hz: u32,
}

impl Default for ProfileSettings {
    fn default() -> Self {
        ProfileSettings {
            runs: 0,
            scope: ProfileScope::Process,
            frequency_hz: DEFAULT_FREQUENCY_HZ,
        }
    }
}

impl ProfileSettings {
    /// No profiled runs.
    pub fn is_off(&self) -> bool {
        self.runs == 0
    }
}

/// The highest sampling rate accepted: perf's own default limit
/// (`/proc/sys/kernel/perf_event_max_sample_rate`) is 100,000 Hz, and far below it a profile
/// already costs more than the run it profiles.
pub const MAX_FREQUENCY_HZ: u32 = 100_000;

/// Checks a sampling rate given by a user.
pub fn check_frequency(hz: u32) -> Result<(), String> {
    if (1..=MAX_FREQUENCY_HZ).contains(&hz) {
        Ok(())
    } else {
        Err(format!(
            "profile frequency {hz} Hz is out of range; valid: 1 to {MAX_FREQUENCY_HZ} Hz"
        ))
    }
}

/// One profiled run of a configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRecord {
    pub id: Uuid,
    /// 0, 1, 2, ... among the configuration's profiled runs.
    pub index: u32,
    /// The perf event sampled (`cycles`, `cpu-clock`).
    pub event: String,
    pub frequency_hz: u32,
    pub scope: ProfileScope,
    pub started_at_ns: i64,
    pub ended_at_ns: i64,
    /// The primary metric of the profiled run, as the benchmark reported it under the
    /// profiler: beside the timed runs' values it shows what profiling cost.
    pub value: Option<f64>,
    pub stacks: FoldedStacks,
}

impl ProfileRecord {
    pub fn duration_ns(&self) -> i64 {
        self.ended_at_ns - self.started_at_ns
    }
}

/// Sampled call stacks and their counts, each stack a list of indexes into `frames`, outermost
/// frame first. Every frame name and every stack is stored once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoldedStacks {
    pub frames: Vec<String>,
    pub stacks: Vec<FoldedStack>,
}

/// One distinct stack and its weight: the sum of its samples' periods (nanoseconds of CPU time
/// for `cpu-clock`, cycles for `cycles`), or its sample count where no period is known.
///
/// Serialized as one string, its frame indexes folded as the stacks are and its weight after a
/// space (`"0;1;2 2002002"`): a line per stack in a pretty-printed export, not a line per
/// number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldedStack {
    pub frames: Vec<u32>,
    pub count: u64,
}

impl Serialize for FoldedStack {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let frames: Vec<String> = self.frames.iter().map(u32::to_string).collect();
        serializer.serialize_str(&format!("{} {}", frames.join(";"), self.count))
    }
}

impl<'de> Deserialize<'de> for FoldedStack {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let invalid = || {
            serde::de::Error::custom(format!(
                "stack '{text}' is not frame indexes and a weight (\"0;1;2 12\")"
            ))
        };
        let (frames, count) = text.rsplit_once(' ').ok_or_else(invalid)?;
        let count = count.parse().map_err(|_| invalid())?;
        let frames = frames
            .split(';')
            .map(str::parse)
            .collect::<Result<Vec<u32>, _>>()
            .map_err(|_| invalid())?;
        Ok(FoldedStack { frames, count })
    }
}

/// Why folded stack text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("folded stacks, line {line}: {problem}")]
pub struct FoldedError {
    pub line: usize,
    pub problem: String,
}

impl FoldedStacks {
    /// Reads folded stack lines (`main;work;memcpy 12`); equal stacks are added up. Empty lines
    /// are skipped.
    pub fn from_folded(text: &str) -> Result<Self, FoldedError> {
        let mut builder = Builder::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            let error = |problem: &str| FoldedError {
                line: n + 1,
                problem: problem.to_string(),
            };
            let (stack, count) = line
                .rsplit_once(' ')
                .ok_or_else(|| error("no sample count after the stack"))?;
            let count: u64 = count
                .parse()
                .map_err(|_| error("the sample count is not a whole number"))?;
            if stack.is_empty() {
                return Err(error("the stack is empty"));
            }
            builder.add(stack.split(';'), count);
        }
        Ok(builder.finish())
    }

    /// The stacks as folded lines, outermost frame first, in stored order.
    pub fn to_folded(&self) -> String {
        let mut out = String::new();
        for stack in &self.stacks {
            let names: Vec<&str> = stack.frames.iter().map(|&i| self.frame(i)).collect();
            out.push_str(&names.join(";"));
            out.push(' ');
            out.push_str(&stack.count.to_string());
            out.push('\n');
        }
        out
    }

    /// The name of frame `index` (empty for an index out of range).
    pub fn frame(&self, index: u32) -> &str {
        self.frames.get(index as usize).map_or("", String::as_str)
    }

    /// All samples.
    pub fn total(&self) -> u64 {
        self.stacks.iter().map(|s| s.count).sum()
    }

    /// The stacks of all of `profiles` added up.
    pub fn merged<'a>(profiles: impl IntoIterator<Item = &'a FoldedStacks>) -> FoldedStacks {
        let mut builder = Builder::default();
        for p in profiles {
            for s in &p.stacks {
                builder.add(s.frames.iter().map(|&i| p.frame(i)), s.count);
            }
        }
        builder.finish()
    }

    /// Per function: the samples in which it is the innermost frame (self) and those in which
    /// it is anywhere on the stack (inclusive, counted once per sample however often it
    /// recurses).
    pub fn function_samples(&self) -> BTreeMap<&str, FunctionSamples> {
        let mut out: BTreeMap<&str, FunctionSamples> = BTreeMap::new();
        let mut seen: Vec<u32> = Vec::new();
        for s in &self.stacks {
            if let Some(&leaf) = s.frames.last() {
                out.entry(self.frame(leaf)).or_default().self_samples += s.count;
            }
            seen.clear();
            for &f in &s.frames {
                if !seen.contains(&f) {
                    seen.push(f);
                    out.entry(self.frame(f)).or_default().inclusive_samples += s.count;
                }
            }
        }
        out
    }

    /// Checks that every stack's frame indexes are in range and that no stack is empty.
    pub fn check(&self) -> Result<(), String> {
        for (n, s) in self.stacks.iter().enumerate() {
            if s.frames.is_empty() {
                return Err(format!("stack {n} has no frames"));
            }
            if let Some(&bad) = s.frames.iter().find(|&&i| i as usize >= self.frames.len()) {
                return Err(format!(
                    "stack {n} names frame {bad}, but there are {} frames",
                    self.frames.len()
                ));
            }
        }
        Ok(())
    }
}

/// A function's samples in a profile ([`FoldedStacks::function_samples`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FunctionSamples {
    pub self_samples: u64,
    pub inclusive_samples: u64,
}

/// Builds [`FoldedStacks`], interning frames and adding up equal stacks.
#[derive(Default)]
struct Builder {
    frames: Vec<String>,
    frame_index: HashMap<String, u32>,
    stacks: Vec<FoldedStack>,
    stack_index: HashMap<Vec<u32>, usize>,
}

impl Builder {
    fn add<'a>(&mut self, names: impl Iterator<Item = &'a str>, count: u64) {
        let frames: Vec<u32> = names
            .map(|name| match self.frame_index.get(name) {
                Some(&i) => i,
                None => {
                    let i = self.frames.len() as u32;
                    self.frames.push(name.to_string());
                    self.frame_index.insert(name.to_string(), i);
                    i
                }
            })
            .collect();
        match self.stack_index.get(&frames) {
            Some(&at) => self.stacks[at].count += count,
            None => {
                self.stack_index.insert(frames.clone(), self.stacks.len());
                self.stacks.push(FoldedStack { frames, count });
            }
        }
    }

    fn finish(self) -> FoldedStacks {
        FoldedStacks {
            frames: self.frames,
            stacks: self.stacks,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn folded_lines_are_interned_added_up_and_written_back() {
        let text = "main;work;memcpy 3\nmain;idle 2\nmain;work;memcpy 4\n\nmain;work 1\n";
        let stacks = FoldedStacks::from_folded(text).unwrap();
        assert_eq!(stacks.frames, ["main", "work", "memcpy", "idle"]);
        assert_eq!(stacks.stacks.len(), 3);
        assert_eq!(stacks.total(), 10);
        assert_eq!(
            stacks.to_folded(),
            "main;work;memcpy 7\nmain;idle 2\nmain;work 1\n"
        );
        stacks.check().unwrap();
    }

    #[test]
    fn self_and_inclusive_samples_count_a_recursive_function_once_per_sample() {
        let stacks = FoldedStacks::from_folded("main;f;f;g 4\nmain;f 1\nmain 5\n").unwrap();
        let f = stacks.function_samples();
        assert_eq!(f["main"].inclusive_samples, 10);
        assert_eq!(f["main"].self_samples, 5);
        assert_eq!(f["f"].inclusive_samples, 5);
        assert_eq!(f["f"].self_samples, 1);
        assert_eq!(f["g"].self_samples, 4);
    }

    #[test]
    fn merged_profiles_add_up_by_name() {
        let a = FoldedStacks::from_folded("main;a 1\nmain;b 2\n").unwrap();
        let b = FoldedStacks::from_folded("main;b 3\nmain;c 4\n").unwrap();
        let m = FoldedStacks::merged([&a, &b]);
        assert_eq!(m.to_folded(), "main;a 1\nmain;b 5\nmain;c 4\n");
    }

    #[test]
    fn bad_lines_are_refused_with_their_number() {
        let e = FoldedStacks::from_folded("main 1\nmain;x\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(FoldedStacks::from_folded("main;x -1\n").is_err());
        let bad = FoldedStacks {
            frames: vec!["a".into()],
            stacks: vec![FoldedStack {
                frames: vec![0, 1],
                count: 1,
            }],
        };
        assert!(bad.check().is_err());
    }

    #[test]
    fn a_stack_serializes_as_one_string() {
        let stacks = FoldedStacks::from_folded("main;work 7\nmain 2\n").unwrap();
        let json = serde_json::to_string(&stacks).unwrap();
        assert_eq!(
            json,
            r#"{"frames":["main","work"],"stacks":["0;1 7","0 2"]}"#
        );
        assert_eq!(serde_json::from_str::<FoldedStacks>(&json).unwrap(), stacks);
        for bad in [r#""0;x 1""#, r#""0;1""#, r#""0 -1""#] {
            assert!(serde_json::from_str::<FoldedStack>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn scope_and_frequency_are_checked() {
        assert_eq!("system".parse::<ProfileScope>(), Ok(ProfileScope::System));
        assert!("cgroup".parse::<ProfileScope>().is_err());
        assert!(check_frequency(999).is_ok());
        assert!(check_frequency(0).is_err());
        assert!(check_frequency(MAX_FREQUENCY_HZ + 1).is_err());
    }
}
