//! /proc/loadavg: the one parser of it, for the cooldown plugin (the 1-minute average), the
//! load check and the machine limits (the number of tasks).
//!
//! The line is `0.89 0.91 0.46 5/119 25859` (proc(5)): the load averages over 1, 5 and 15
//! minutes, the runnable and the existing kernel scheduling entities, and the last PID used.

use std::path::Path;

use crate::{read_file, SysError};

/// The fields of /proc/loadavg.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadAvg {
    /// Runnable and uninterruptible tasks, exponentially damped over 1 minute and updated
    /// every 5 s (kernel/sched/loadavg.c).
    pub load_1m: f64,
    pub load_5m: f64,
    pub load_15m: f64,
    /// Kernel scheduling entities (processes and threads) that are runnable now.
    pub runnable: u64,
    /// Kernel scheduling entities that exist now.
    pub tasks: u64,
    /// The PID most recently handed out.
    pub last_pid: u64,
}

/// Parses /proc/loadavg.
pub fn parse_loadavg(text: &str) -> Result<LoadAvg, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let [l1, l5, l15, entities, last_pid] = words[..] else {
        return Err(format!(
            "expected 5 fields ('0.89 0.91 0.46 5/119 25859'), got {}",
            words.len()
        ));
    };
    let load = |w: &str| {
        w.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("bad load average '{w}'"))
    };
    let count = |w: &str| w.parse::<u64>().map_err(|_| format!("bad number '{w}'"));
    let (runnable, tasks) = entities
        .split_once('/')
        .ok_or_else(|| format!("bad entity count '{entities}', expected RUNNABLE/TOTAL"))?;
    Ok(LoadAvg {
        load_1m: load(l1)?,
        load_5m: load(l5)?,
        load_15m: load(l15)?,
        runnable: count(runnable)?,
        tasks: count(tasks)?,
        last_pid: count(last_pid)?,
    })
}

/// Reads `<proc_root>/loadavg`.
pub fn read_loadavg(proc_root: &Path) -> Result<LoadAvg, SysError> {
    let path = proc_root.join("loadavg");
    parse_loadavg(&read_file(&path)?).map_err(|e| SysError::parse(&path, e))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_field() {
        let l = parse_loadavg("0.89 0.91 0.46 5/119 25859\n").unwrap();
        assert_eq!(
            l,
            LoadAvg {
                load_1m: 0.89,
                load_5m: 0.91,
                load_15m: 0.46,
                runnable: 5,
                tasks: 119,
                last_pid: 25859,
            }
        );
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in [
            "",
            "0.89 0.91 0.46 5/119",
            "0.89 0.91 0.46 5/119 25859 7",
            "x 0.91 0.46 5/119 25859",
            "-1 0.91 0.46 5/119 25859",
            "0.89 0.91 0.46 119 25859",
            "0.89 0.91 0.46 5/x 25859",
        ] {
            assert!(parse_loadavg(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn reads_real_proc() {
        let l = read_loadavg(Path::new("/proc")).unwrap();
        assert!(l.tasks >= 1 && l.runnable <= l.tasks);
        assert!(l.last_pid > 0);
    }

    #[test]
    fn missing_file_is_unsupported() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_loadavg(dir.path()).unwrap_err().is_unsupported());
    }
}
