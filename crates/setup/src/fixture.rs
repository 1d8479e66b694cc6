//! A fixture tree for the tests: a machine with two CPUs, cpufreq, boost and the files the
//! plugins and checks read.

use std::path::Path;

use vernier_sys::Roots;

pub(crate) fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

pub(crate) fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

/// Builds the tree under `dir` and returns its roots.
pub(crate) fn tree(dir: &Path) -> Roots {
    let w = |rel: &str, text: &str| write(dir, rel, text);
    w("proc/sys/vm/drop_caches", "");
    w("proc/sys/kernel/timer_migration", "1\n");
    w("proc/sys/kernel/numa_balancing", "0\n");
    w("proc/sys/kernel/randomize_va_space", "2\n");
    w(
        "proc/swaps",
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n",
    );
    w("proc/loadavg", "0.10 0.20 0.30 1/100 4242\n");
    w(
        "proc/stat",
        "cpu  100 0 50 1000 5 0 1 7 0 0\ncpu0 50 0 25 500 2 0 0 3 0 0\n",
    );
    w(
        "proc/meminfo",
        "MemTotal: 1000 kB\nSwapTotal: 2048 kB\nSwapFree: 1024 kB\n",
    );
    w(
        "proc/cpuinfo",
        "processor\t: 0\nflags\t\t: fpu vme hypervisor\n",
    );
    w("proc/cmdline", "root=/dev/vda ro quiet\n");
    w("sys/devices/system/cpu/online", "0-1\n");
    w("sys/devices/system/cpu/isolated", "\n");
    for cpu in 0..2 {
        let d = format!("sys/devices/system/cpu/cpu{cpu}/cpufreq");
        w(&format!("{d}/scaling_governor"), "powersave\n");
        w(
            &format!("{d}/scaling_available_governors"),
            "performance powersave\n",
        );
    }
    w("sys/devices/system/cpu/cpufreq/boost", "1\n");
    w(
        "sys/kernel/mm/transparent_hugepage/enabled",
        "[always] madvise never\n",
    );
    w("dev/cpu_dma_latency", "");
    Roots::under(dir)
}
