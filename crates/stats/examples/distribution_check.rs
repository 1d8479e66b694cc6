//! The largest relative error against SciPy (the fixture of `tests/distribution.rs`) of each
//! distribution function and quantile, statrs 0.19's (what the statistics called before) beside
//! `vernier_stats::distribution`'s, per family and degree of freedom: the before and after table
//! of the distribution functions. statrs' t quantile loops for ever at large degrees of
//! freedom, so each of its degrees of freedom is evaluated in a child process of this program
//! (`--statrs-t-quantile DF`) that is killed after `--timeout` seconds (default 5) and reported
//! as hanging.
//!
//! Usage: cargo run --release -p vernier-stats --example distribution_check [-- --timeout S]
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used
)] // a measuring program

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use statrs::distribution::{Beta, Binomial, ContinuousCDF, DiscreteCDF, Normal, StudentsT};
use vernier_stats::{beta_cdf, binomial_cdf, normal_cdf, t_cdf, t_quantile};

fn fixture() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/distribution.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn rel(got: f64, want: f64) -> f64 {
    if got == want {
        0.0
    } else if want == 0.0 {
        got.abs()
    } else if got.is_nan() {
        f64::INFINITY
    } else {
        ((got - want) / want).abs()
    }
}

fn df_of(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::INFINITY)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// The statrs t quantiles of one degree of freedom, in a child process: the largest error.
fn statrs_t_quantile_child(df: f64) {
    let doc = fixture();
    let mut worst = 0.0f64;
    for r in doc["t"]["quantile"].as_array().unwrap() {
        if df_of(&r[1]) != df {
            continue;
        }
        let (p, want) = (f(&r[0]), f(&r[2]));
        let got = if df.is_infinite() {
            Normal::standard().inverse_cdf(p)
        } else {
            StudentsT::new(0.0, 1.0, df).unwrap().inverse_cdf(p)
        };
        worst = worst.max(rel(got, want));
    }
    println!("{worst:e}");
}

fn statrs_t_quantile(df: f64, timeout: Duration) -> String {
    let me = std::env::current_exe().unwrap();
    let mut child = Command::new(me)
        .args(["--statrs-t-quantile", &df.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            if let Some(mut o) = child.stdout.take() {
                use std::io::Read;
                o.read_to_string(&mut out).unwrap();
            }
            return if status.success() {
                format!("{:.1e}", out.trim().parse::<f64>().unwrap_or(f64::NAN))
            } else {
                "fails".into()
            };
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return format!("hangs (> {} s)", timeout.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, df] = &args[..] {
        if flag == "--statrs-t-quantile" {
            statrs_t_quantile_child(df.parse().unwrap());
            return;
        }
    }
    let timeout = match args.iter().position(|a| a == "--timeout") {
        Some(i) => Duration::from_secs(args[i + 1].parse().expect("--timeout SECONDS")),
        None => Duration::from_secs(5),
    };
    let doc = fixture();

    println!("| t, degrees of freedom | quantile statrs | quantile vernier | distribution function statrs | distribution function vernier |");
    println!("|---|---|---|---|---|");
    let mut cdf: BTreeMap<String, (f64, f64, f64)> = BTreeMap::new();
    for r in doc["t"]["cdf"].as_array().unwrap() {
        let (x, df, want) = (f(&r[0]), df_of(&r[1]), f(&r[2]));
        let old = if df.is_infinite() {
            Normal::standard().cdf(x)
        } else {
            StudentsT::new(0.0, 1.0, df).unwrap().cdf(x)
        };
        let e = cdf.entry(format!("{df:e}")).or_insert((df, 0.0, 0.0));
        e.1 = e.1.max(rel(old, want));
        e.2 = e.2.max(rel(t_cdf(x, df).unwrap(), want));
    }
    let mut quantile_new: BTreeMap<String, f64> = BTreeMap::new();
    for r in doc["t"]["quantile"].as_array().unwrap() {
        let (p, df, want) = (f(&r[0]), df_of(&r[1]), f(&r[2]));
        let e = quantile_new.entry(format!("{df:e}")).or_insert(0.0);
        *e = e.max(rel(t_quantile(p, df).unwrap(), want));
    }
    let mut rows: Vec<(f64, String)> = cdf.iter().map(|(k, v)| (v.0, k.clone())).collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (df, key) in rows {
        let (_, old_cdf, new_cdf) = cdf[&key];
        println!(
            "| {df} | {} | {:.1e} | {old_cdf:.1e} | {new_cdf:.1e} |",
            statrs_t_quantile(df, timeout),
            quantile_new[&key]
        );
    }

    let (mut old, mut new) = (0.0f64, 0.0f64);
    for r in doc["normal"]["cdf"].as_array().unwrap() {
        let (x, want) = (f(&r[0]), f(&r[1]));
        old = old.max(rel(Normal::standard().cdf(x), want));
        new = new.max(rel(normal_cdf(x), want));
    }
    println!();
    println!("| family | statrs | vernier |");
    println!("|---|---|---|");
    println!("| normal distribution function | {old:.1e} | {new:.1e} |");
    let mut by_n: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for r in doc["beta"].as_array().unwrap() {
        let (x, a, b, want) = (f(&r[0]), f(&r[1]), f(&r[2]), f(&r[3]));
        // The median's order statistic of n values is Beta(m, n - m + 1).
        let n = (a + b - 1.0) as u64;
        let e = by_n.entry(n).or_insert((0.0, 0.0));
        e.0 = e.0.max(rel(Beta::new(a, b).unwrap().cdf(x), want));
        e.1 = e.1.max(rel(beta_cdf(x, a, b).unwrap(), want));
    }
    for (n, (o, v)) in by_n
        .iter()
        .filter(|(n, _)| [1000, 10_000, 100_000, 999_999, 1_000_000].contains(*n))
    {
        println!("| beta of the median of {n} values | {o:.1e} | {v:.1e} |");
    }
    let mut by_n: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for r in doc["binomial"].as_array().unwrap() {
        let (k, n, p, want) = (f(&r[0]) as u64, f(&r[1]) as u64, f(&r[2]), f(&r[3]));
        let e = by_n.entry(n).or_insert((0.0, 0.0));
        e.0 = e.0.max(rel(Binomial::new(p, n).unwrap().cdf(k), want));
        e.1 = e.1.max(rel(binomial_cdf(k, n, p).unwrap(), want));
    }
    for (n, (o, v)) in by_n.iter().filter(|(n, _)| **n >= 10_000) {
        println!("| binomial, {n} trials | {o:.1e} | {v:.1e} |");
    }
}
