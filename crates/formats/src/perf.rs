//! The text `perf script` prints of a `perf record -g` file (perf-script(1)), collapsed into
//! folded stacks by inferno's perf collapser (the Rust port of Brendan Gregg's
//! `stackcollapse-perf.pl`): one line per distinct stack, outermost frame first, kernel frames
//! marked `_[k]`. A stack's count is the sum of its samples' periods (perf's weight): for the
//! `cpu-clock` event nanoseconds of CPU time, for `cycles` cycles.

use vernier_model::profile::FoldedError;
use vernier_model::FoldedStacks;

use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;

/// Why `perf script` output could not be collapsed.
#[derive(Debug, thiserror::Error)]
pub enum PerfScriptError {
    #[error("cannot collapse the output of perf script: {0}")]
    Collapse(#[from] std::io::Error),
    #[error("the collapsed stacks cannot be read: {0}")]
    Folded(#[from] FoldedError),
}

/// Collapses the output of `perf script` into folded stacks.
pub fn collapse_perf_script(script: &[u8]) -> Result<FoldedStacks, PerfScriptError> {
    let mut options = Options::default();
    // Kernel frames get `_[k]`, so that a kernel function and a user one of the same name stay
    // apart and read as what they are.
    options.annotate_kernel = true;
    // One thread: the collapse of a run's few MiB is quick, and the session's other work (or
    // the next run) should not compete with a pool of threads.
    options.nthreads = 1;
    let mut folded = Vec::new();
    Folder::from(options).collapse(script, &mut folded)?;
    Ok(FoldedStacks::from_folded(&String::from_utf8_lossy(
        &folded,
    ))?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_perf_script_of_hackbench_collapses_into_its_stacks() {
        let script = include_bytes!("../tests/fixtures/perf-script.txt");
        let stacks = collapse_perf_script(script).unwrap();
        // Each sample weighs its period: 1,001,001 ns of cpu-clock at 999 Hz.
        assert_eq!(stacks.total(), 4 * 1_001_001);
        let folded = stacks.to_folded();
        assert!(
            folded.contains(
                "hackbench;sender;__GI___libc_write;entry_SYSCALL_64_after_hwframe_[k];\
                 do_syscall_64_[k];ksys_write_[k];vfs_write_[k];sock_write_iter_[k];\
                 unix_stream_sendmsg_[k];sock_alloc_send_pskb_[k];alloc_skb_with_frags_[k];\
                 __alloc_skb_[k];kmem_cache_alloc_node_[k] 2002002\n"
            ),
            "{folded}"
        );
        assert!(folded.contains("hackbench;receiver 1001001\n"), "{folded}");
        let functions = stacks.function_samples();
        assert_eq!(functions["kmem_cache_free_[k]"].self_samples, 1_001_001);
        assert_eq!(functions["hackbench"].inclusive_samples, 4 * 1_001_001);
    }

    #[test]
    fn an_empty_script_has_no_stacks() {
        assert_eq!(collapse_perf_script(b"").unwrap().total(), 0);
    }
}
