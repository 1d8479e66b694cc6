//! perf_event_open(2) counters of a run's child process and the tasks it forks.
//!
//! The counters are opened with pid = child, cpu = -1 (any CPU) and `inherit`, so the
//! benchmark's forked workers and threads count too; a read of the parent event returns the
//! sum over the inherited events (kernel/events/core.c, perf_event_read_value). They must be
//! opened before the child starts its work: the engine holds the child (for example on a pipe)
//! until [`crate::RunSampler::start`] has returned.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::MonitorError;

/// `PERF_TYPE_*` (include/uapi/linux/perf_event.h).
pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
/// `PERF_COUNT_HW_*`.
pub const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
pub const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
/// `PERF_COUNT_SW_*`.
pub const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
pub const PERF_COUNT_SW_PAGE_FAULTS: u64 = 2;
pub const PERF_COUNT_SW_CONTEXT_SWITCHES: u64 = 3;
pub const PERF_COUNT_SW_CPU_MIGRATIONS: u64 = 4;
/// `PERF_FORMAT_*`.
pub const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
pub const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
/// Flag of perf_event_open(2): the descriptor is close-on-exec.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// Bit 1 of the flags word that follows `read_format` (bit 0 is `disabled`).
const FLAG_INHERIT: u64 = 1 << 1;

/// `struct perf_event_attr` as of PERF_ATTR_SIZE_VER8 (136 bytes, Linux 6.3). The kernel
/// accepts any published size, zero-filling what an older caller does not pass, and the
/// unnamed bit fields after `read_format` are one u64 (`flags`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct PerfEventAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub flags: u64,
    pub wakeup_events: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved_2: u16,
    pub aux_sample_size: u32,
    pub aux_action: u32,
    pub sig_data: u64,
    pub config3: u64,
}

/// PERF_ATTR_SIZE_VER8.
pub const PERF_ATTR_SIZE: usize = 136;
const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == PERF_ATTR_SIZE);

/// A counter the `perf` monitor records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterDef {
    /// Metric name (unit suffix included).
    pub metric: &'static str,
    pub unit: &'static str,
    pub type_: u32,
    pub config: u64,
}

/// The counters of the `perf` monitor, software first (perf-list(1) names in the comments).
pub const COUNTERS: [CounterDef; 6] = [
    // context-switches
    CounterDef {
        metric: "context_switches",
        unit: "count",
        type_: PERF_TYPE_SOFTWARE,
        config: PERF_COUNT_SW_CONTEXT_SWITCHES,
    },
    // cpu-migrations
    CounterDef {
        metric: "cpu_migrations",
        unit: "count",
        type_: PERF_TYPE_SOFTWARE,
        config: PERF_COUNT_SW_CPU_MIGRATIONS,
    },
    // page-faults
    CounterDef {
        metric: "page_faults",
        unit: "count",
        type_: PERF_TYPE_SOFTWARE,
        config: PERF_COUNT_SW_PAGE_FAULTS,
    },
    // task-clock: CPU time of the tasks in ns.
    CounterDef {
        metric: "task_clock_ns",
        unit: "ns",
        type_: PERF_TYPE_SOFTWARE,
        config: PERF_COUNT_SW_TASK_CLOCK,
    },
    // cycles
    CounterDef {
        metric: "cycles",
        unit: "count",
        type_: PERF_TYPE_HARDWARE,
        config: PERF_COUNT_HW_CPU_CYCLES,
    },
    // instructions
    CounterDef {
        metric: "instructions",
        unit: "count",
        type_: PERF_TYPE_HARDWARE,
        config: PERF_COUNT_HW_INSTRUCTIONS,
    },
];

/// An open counting event.
#[derive(Debug)]
pub struct PerfCounter {
    fd: OwnedFd,
}

/// A read of a counter with PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerfValue {
    pub value: u64,
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
}

impl PerfValue {
    /// The count extrapolated to the whole enabled time when the kernel multiplexed the
    /// counter (perf_event_open(2), "read_format"); the raw count when it ran all the time.
    pub fn scaled(&self) -> f64 {
        if self.time_running_ns > 0 && self.time_running_ns < self.time_enabled_ns {
            self.value as f64 * self.time_enabled_ns as f64 / self.time_running_ns as f64
        } else {
            self.value as f64
        }
    }
}

impl PerfCounter {
    /// Opens `def` counting the task `pid` and its future children on any CPU, enabled at once.
    pub fn open(def: &CounterDef, pid: i32) -> Result<Self, MonitorError> {
        let attr = PerfEventAttr {
            type_: def.type_,
            size: PERF_ATTR_SIZE as u32,
            config: def.config,
            read_format: PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
            // Not `disabled`: counting starts now, before the child is released to work.
            flags: FLAG_INHERIT,
            ..Default::default()
        };
        // SAFETY: `attr` is a valid perf_event_attr of the size it declares, alive for the call;
        // the other arguments are plain integers (group_fd -1: no group, flags: close-on-exec).
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                pid,
                -1i32,
                -1i32,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            let source = std::io::Error::last_os_error();
            // ENOENT / EOPNOTSUPP / ENODEV: the event does not exist here (no PMU in a VM,
            // perf_event_open(2) ERRORS); EACCES / EPERM: perf_event_paranoid forbids it.
            let missing = matches!(
                source.raw_os_error(),
                Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EACCES | libc::EPERM)
            );
            return Err(if missing {
                MonitorError::Unsupported {
                    what: format!("perf event {}: {source}", def.metric),
                }
            } else {
                MonitorError::Syscall {
                    call: "perf_event_open",
                    source,
                }
            });
        }
        let fd = i32::try_from(fd).map_err(|_| MonitorError::Syscall {
            call: "perf_event_open",
            source: std::io::Error::other("descriptor out of range"),
        })?;
        Ok(PerfCounter {
            // SAFETY: the kernel just returned this descriptor and nothing else owns it.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Reads the current count (the inherited events included).
    pub fn read(&self) -> Result<PerfValue, MonitorError> {
        let mut buf = [0u64; 3];
        // SAFETY: `buf` is 24 writable bytes, exactly the layout of this read_format.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr().cast::<libc::c_void>(),
                std::mem::size_of_val(&buf),
            )
        };
        if n < 0 {
            return Err(MonitorError::last_os("read(perf_event)"));
        }
        if n as usize != std::mem::size_of_val(&buf) {
            return Err(MonitorError::Syscall {
                call: "read(perf_event)",
                source: std::io::Error::other(format!("short read of {n} bytes")),
            });
        }
        Ok(PerfValue {
            value: buf[0],
            time_enabled_ns: buf[1],
            time_running_ns: buf[2],
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn attr_layout_matches_the_kernel_header() {
        assert_eq!(std::mem::size_of::<PerfEventAttr>(), 136);
        assert_eq!(std::mem::offset_of!(PerfEventAttr, read_format), 32);
        assert_eq!(std::mem::offset_of!(PerfEventAttr, flags), 40);
        // PERF_ATTR_SIZE_VER0 ends after config1, VER5 after sample_max_stack's u32 pair.
        assert_eq!(std::mem::offset_of!(PerfEventAttr, config2), 64);
        assert_eq!(std::mem::offset_of!(PerfEventAttr, aux_sample_size), 112);
        assert_eq!(std::mem::offset_of!(PerfEventAttr, config3), 128);
    }

    #[test]
    fn scaling_extrapolates_only_when_multiplexed() {
        let full = PerfValue {
            value: 100,
            time_enabled_ns: 10,
            time_running_ns: 10,
        };
        assert_eq!(full.scaled(), 100.0);
        let half = PerfValue {
            time_running_ns: 5,
            ..full
        };
        assert_eq!(half.scaled(), 200.0);
        let never = PerfValue {
            time_running_ns: 0,
            ..full
        };
        assert_eq!(never.scaled(), 100.0);
    }

    #[test]
    fn counts_this_process() {
        // Software events exist on every Linux with perf events; we are the measured task.
        // Counting the kernel side too needs root or kernel.perf_event_paranoid <= 1.
        let c = match PerfCounter::open(&COUNTERS[3], 0) {
            Err(MonitorError::Unsupported { what }) => {
                eprintln!("skipped: {what} (perf events need root or perf_event_paranoid <= 1)");
                return;
            }
            other => other.unwrap(),
        };
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let v = c.read().unwrap();
        assert!(v.value > 0, "task clock {v:?}");
        assert!(v.time_enabled_ns > 0);
    }
}
