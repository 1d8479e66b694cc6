//! The database that the binary's tests of the site show: the sessions of
//! `vernier_testkit::site` (two kernels, A's texts hostile, with a sweep, monitor series and
//! latency histograms, so that every kind of page and figure is made), stored. Also reading a
//! written site back, and `vernier serve` on a free port.

#![allow(clippy::unwrap_used, dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use uuid::Uuid;
use vernier_store::{SqliteStore, Store};
use vernier_testkit::site::{site_session, site_sessions, with_profiles};

/// Stores `vernier_testkit::site::site_session(kernel, scale, started_at_ns, hostile)` into
/// the database at `path`; returns its id.
pub fn record(path: &Path, kernel: &str, scale: f64, started_at_ns: i64, hostile: bool) -> Uuid {
    let session = site_session(kernel, scale, started_at_ns, hostile);
    store(path, std::slice::from_ref(&session));
    session.info.id
}

fn store(path: &Path, sessions: &[vernier_model::StoredSession]) {
    SqliteStore::open(path)
        .unwrap()
        .import_sessions(sessions, &BTreeMap::new())
        .unwrap();
}

/// A database of the two kernels of `vernier_testkit::site::site_sessions`, with profiled
/// runs of two configurations each (`vernier_testkit::site::with_profiles`), so that the site
/// has flame graphs.
pub fn database(dir: &Path) -> PathBuf {
    let db = dir.join("results.db");
    let sessions: Vec<_> = site_sessions()
        .into_iter()
        .zip([20, 40])
        .map(|(s, share)| with_profiles(s, share))
        .collect();
    store(&db, &sessions);
    db
}

/// Every file of the directory `root`, by its path relative to it.
pub fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// A `vernier serve` on a free port of 127.0.0.1, killed when dropped (also when a test fails).
pub struct Server(Child);

impl Server {
    /// Starts `vernier serve --port 0 ARGS` on `db`; returns it with its URL
    /// (`http://127.0.0.1:PORT/`), read from its first line.
    pub fn start(db: &Path, args: &[&str]) -> (Server, String) {
        Server::start_with(vernier_testkit::vernier_command(db), args)
    }

    /// [`Server::start`] from `vernier`, the binary on its database.
    pub fn start_with(mut vernier: Command, args: &[&str]) -> (Server, String) {
        let mut child = vernier
            .args(["serve", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let server = Server(child);
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        (server, url)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// GET `path` from `address`: the status and the body.
pub fn get(address: &str, path: &str) -> (u16, Vec<u8>) {
    request(
        address,
        &format!("GET /{path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"),
    )
}

/// Sends the request `head` to `address`: the status and the body of the answer.
pub fn request(address: &str, head: &str) -> (u16, Vec<u8>) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    // Long enough for a site read from a large database; a server that never answers fails.
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&response[..split]).into_owned();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, response[split + 4..].to_vec())
}

/// A bisection stored as `vernier bisect` leaves it: five commits, the last three 10% slower
/// (the first bad one is commit 2), sessions at both ends, at commit 2 and at commit 1.
pub fn stored_bisection(db: &Path) -> vernier_model::Bisection {
    use vernier_model::bisect::{BISECT_TAG, COMMIT_TAG};
    let commits: Vec<String> = (0..5)
        .map(|i| format!("{:x}", 0xc0ffee + i).repeat(6))
        .collect();
    let bisection = vernier_model::Bisection {
        id: Uuid::from_u128(0xb15ec7),
        created_at_ns: vernier_testkit::site::STARTED_AT_NS,
        repo: "/src/app".into(),
        commits: commits.clone(),
        terms: vernier_model::bisect::BisectTerms {
            build: Some("make".into()),
            boot: None,
            kernel_release: None,
            specs: vec!["command".into()],
            metric: None,
            limits: vernier_model::bisect::SessionLimits::default(),
            threshold: None,
            budget_sessions: 40,
            budget_s: None,
            commit_sessions: 4,
        },
        unbuildable: Vec::new(),
        build_s: 12.0,
        kernel_boot: None,
        boot_failures: Vec::new(),
    };
    // Each session's runs spread by 0.5% around its level; the sessions of a commit a few
    // tenths of a percent apart.
    let visits = [
        (0, 0.998),
        (4, 1.101),
        (0, 1.002),
        (4, 1.099),
        (2, 1.1015),
        (1, 0.9995),
    ];
    let sessions: Vec<_> = visits
        .iter()
        .enumerate()
        .map(|(n, &(commit, level))| {
            let values: Vec<f64> = [0.0, 0.3, -0.2, 0.5, -0.5, 0.1, -0.3, 0.2, -0.1, 0.4]
                .iter()
                .map(|w| level * (1.0 + w / 100.0))
                .collect();
            let mut s = vernier_testkit::stored_session(
                vernier_testkit::site::STARTED_AT_NS + n as i64 * 1_000_000_000_000,
                &values,
            );
            s.info
                .tags
                .insert(BISECT_TAG.into(), bisection.id.to_string());
            s.info
                .tags
                .insert(COMMIT_TAG.into(), commits[commit].clone());
            s
        })
        .collect();
    let mut store = SqliteStore::open(db).unwrap();
    store.import_sessions(&sessions, &BTreeMap::new()).unwrap();
    store.put_bisection(&bisection).unwrap();
    bisection
}
