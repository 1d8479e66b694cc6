//! How the `vernier` binary is linked.
//!
//! Every `vernier` process (a session, and every run's `vernier __child`) starts by relocating
//! the binary: a position-independent executable holds some 35,000 relative relocations, which
//! the dynamic loader reads as 24-byte entries (~400 KiB of `.rela.dyn`) and applies one by one
//! (`LD_DEBUG=statistics`). Packed as DT_RELR (`-z pack-relative-relocs`, GNU ld 2.38, lld 15;
//! glibc 2.36 applies them) they take a few KiB and a tight loop: bench/startup.sh.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" && relr_supported() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// Whether the C library the binary links against applies DT_RELR (glibc 2.36 or later:
/// its `libc.so.6` defines the version `GLIBC_ABI_DT_RELR` that the linker then requires). An
/// older glibc would refuse to start the binary, so without it the relocations stay as they
/// are.
fn relr_supported() -> bool {
    let Ok(output) = std::process::Command::new("ldd").arg("--version").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(version) = text
        .lines()
        .next()
        .and_then(|line| line.split_whitespace().last())
    else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}
