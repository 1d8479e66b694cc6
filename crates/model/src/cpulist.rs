//! The kernel's CPU list format (`0-3,8,10-11`), as in /sys/devices/system/cpu/online
//! (Documentation/admin-guide/cputopology.rst) and in `taskset -c`: read by `sys` from the
//! machine and by options and setup specs from users, so it lives here, below both.

/// The most CPUs a list may name: the kernel's largest NR_CPUS (arch/x86/Kconfig, MAXSMP), so
/// that a typo such as `0-4000000000` is refused instead of allocated.
pub const MAX_CPUS: usize = 8192;

/// Parses a CPU list such as `0-3,8`. Returns the CPUs in ascending order, each once.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo, hi),
            None => (part, part),
        };
        let lo: usize = lo.trim().parse().map_err(|_| format!("bad CPU '{lo}'"))?;
        let hi: usize = hi.trim().parse().map_err(|_| format!("bad CPU '{hi}'"))?;
        if hi < lo {
            return Err(format!("bad range '{part}'"));
        }
        if hi >= MAX_CPUS {
            return Err(format!(
                "CPU {hi} is beyond the largest CPU number {}",
                MAX_CPUS - 1
            ));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The canonical list of `cpus` (ascending, each once): consecutive CPUs as a range `a-b`, as
/// the kernel writes them (`%*pbl`, lib/bitmap-str.c): `[0, 1, 2, 3, 8]` is `0-3,8`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        if j == i {
            parts.push(sorted[i].to_string());
        } else {
            parts.push(format!("{}-{}", sorted[i], sorted[j]));
        }
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_and_singles() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n").unwrap(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("3,1,1-2").unwrap(), vec![1, 2, 3]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").is_err());
        assert!(parse_cpu_list("0-4000000000").is_err());
    }

    #[test]
    fn formats_canonically() {
        assert_eq!(format_cpu_list(&[8, 0, 1, 2, 3, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_cpu_list(&[5]), "5");
        assert_eq!(format_cpu_list(&[]), "");
        for text in ["0-3,8,10-12", "1,3", "0-1"] {
            let cpus = parse_cpu_list(text).unwrap();
            assert_eq!(format_cpu_list(&cpus), text);
        }
    }
}
