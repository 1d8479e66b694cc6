//! Links the `vernier` binary as a position-dependent executable (`-no-pie`).
//!
//! As a PIE the binary carries some 41,000 relative relocations (1 MB of `.rela.dyn`), which
//! the dynamic linker applies at every start, writing about 180 pages of `.data.rel.ro` (vtables
//! and the addresses in static data) that each start then copies. vernier starts often: every
//! session, every configuration's run process, and every run of a benchmark measured in a
//! process of its own. Linked at a fixed address the binary needs none of that: on a 2-vCPU KVM
//! guest a session of one `mock` run (its controller and its run process) took 635 page faults
//! instead of 995, and 10.3 ms of CPU instead of 13.3 (medians of 8 alternating rounds of
//! `perf stat -r 10`, load 0.5-0.9). The libraries, the stack and the heap are still placed at
//! random; only the binary's own code and data are not. The objects stay position-independent:
//! only the link of the binary changes.
fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
