//! /proc/stat: aggregate CPU times, the basis of the foreign-CPU contamination signal (proc(5)).

use std::path::Path;

use crate::{read_file, SysError};

/// The aggregate `cpu` line of /proc/stat, in clock ticks (USER_HZ).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// Time the CPUs spent running something. Idle, iowait (idle with I/O pending) and steal
    /// (time the hypervisor ran someone else) are not busy time of this machine. Guest time is
    /// already included in user and nice (proc(5)).
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }
}

/// Parses the aggregate `cpu` line of /proc/stat.
pub fn parse_proc_stat_cpu(text: &str) -> Result<CpuTimes, String> {
    let line = text
        .lines()
        .find(|l| l.starts_with("cpu "))
        .ok_or("no aggregate 'cpu' line")?;
    // The first eight fields into an array: the monitors parse this at every sample, where
    // nothing is to be allocated.
    let mut fields = [0u64; 8];
    let mut n = 0;
    for f in line.split_whitespace().skip(1) {
        let v = f.parse::<u64>().map_err(|_| format!("bad number '{f}'"))?;
        if let Some(slot) = fields.get_mut(n) {
            *slot = v;
        }
        n += 1;
    }
    let get = |i: usize| fields[i];
    if n < 4 {
        return Err(format!("only {n} fields on the cpu line"));
    }
    Ok(CpuTimes {
        user: get(0),
        nice: get(1),
        system: get(2),
        idle: get(3),
        iowait: get(4),
        irq: get(5),
        softirq: get(6),
        steal: get(7),
    })
}

/// Reads `<proc_root>/stat`.
pub fn read_proc_stat_cpu(proc_root: &Path) -> Result<CpuTimes, SysError> {
    let path = proc_root.join("stat");
    parse_proc_stat_cpu(&read_file(&path)?).map_err(|e| SysError::parse(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_line() {
        let text = "cpu  993 1 715 15689 82 2 11 6 0 0\ncpu0 342 0 319 8061 11 0 3 2 0 0\n";
        let t = parse_proc_stat_cpu(text).unwrap();
        assert_eq!(t.user, 993);
        assert_eq!(t.steal, 6);
        assert_eq!(t.busy(), 993 + 1 + 715 + 2 + 11);
        assert!(parse_proc_stat_cpu("intr 1 2\n").is_err());
        assert!(parse_proc_stat_cpu("cpu  1 x 3 4\n").is_err());
    }

    #[test]
    fn reads_real_proc() {
        let a = read_proc_stat_cpu(Path::new("/proc")).unwrap();
        assert!(a.user + a.system + a.idle > 0);
    }
}
