//! `vernier serve` cannot be exhausted by its clients and answers only requests that name it:
//! a thousand idle connections hold no thread and leave a real request answered at once; a
//! request whose Host is another name (DNS rebinding) is refused; binding beyond loopback
//! warns. The deadline of a slow request head, the connection limit and the bound on answers
//! in progress are tested on the server itself (`cmd/serve/http.rs`), with short limits.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod site_fixture;

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::net::TcpStream;
use std::process::Stdio;

use site_fixture::{database, get, request, Server};
use vernier_testkit::{vernier, vernier_command};

/// The host and port of a server's URL.
fn address(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string()
}

/// The number of threads of process `pid` (proc(5), /proc/PID/status).
fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_thousand_idle_connections_hold_no_thread_and_a_request_is_still_answered() {
    // The test holds a thousand sockets itself.
    use vernier_sys::limits::{raise_soft_limit, Resource};
    let files = raise_soft_limit(Resource::OpenFiles, 4096).map_or(0, |(_, now)| now);
    if files < 1100 {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "RLIMIT_NOFILE's hard limit is below 1100"
        );
        println!("skipped: this process may open {files} files, fewer than 1100");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let (server, url) = Server::start(&db, &[]);
    let address = address(&url);
    // The workers are started before the first connection is accepted: after one answer,
    // every thread the server will have is there.
    assert_eq!(get(&address, "index.html").0, 200);
    let before = threads(server.pid());
    let idle: Vec<TcpStream> = (0..1000)
        .map(|_| TcpStream::connect(&address).unwrap())
        .collect();
    let (status, body) = get(&address, "index.html");
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&body).contains("<html"));
    // The idle connections are all open and unanswered still: the request did not wait for
    // them, and they took no thread.
    for mut stream in idle {
        stream.set_nonblocking(true).unwrap();
        let mut byte = [0u8; 1];
        let e = stream.read(&mut byte).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::WouldBlock,
            "an idle connection was answered"
        );
    }
    let during = threads(server.pid());
    assert_eq!(
        during, before,
        "threads before {before}, with 1000 connections {during}"
    );
    assert!(
        during <= 6,
        "{during} threads: the event loop and at most 4 workers"
    );
}

#[test]
fn a_request_for_another_host_is_refused_and_allowed_names_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let (_server, url) = Server::start(&db, &["--allow-host", "Bench.Lab"]);
    let address = address(&url);
    let port = address.rsplit(':').next().unwrap();
    let with_host = |host: &str| {
        request(
            &address,
            &format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        )
    };
    // A page of another origin whose name was made to resolve to 127.0.0.1 (DNS rebinding).
    let (status, body) = with_host(&format!("rebind.example:{port}"));
    assert_eq!(status, 421);
    let body = String::from_utf8(body).unwrap();
    assert!(body.contains("not for 'rebind.example:"), "{body}");
    assert!(!body.contains("<html"));
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("bench.lab:{port}"),
        "BENCH.LAB".to_string(),
    ] {
        let (status, body) = with_host(&host);
        assert_eq!(status, 200, "{host}");
        assert!(String::from_utf8_lossy(&body).contains("<html"), "{host}");
    }
    // HTTP/1.1 without a Host header is malformed (RFC 9112, 3.2).
    let (status, _) = request(&address, "GET / HTTP/1.1\r\n\r\n");
    assert_eq!(status, 400);
    // A name that is not one is refused before anything listens.
    vernier(&db)
        .args(["serve", "--port", "0", "--allow-host", "bench.lab:8080"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--allow-host 'bench.lab:8080': expected a host name",
        ));
}

#[test]
fn binding_beyond_loopback_warns_and_still_refuses_foreign_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let mut command = vernier_command(&db);
    command
        .args(["serve", "--port", "0", "--bind", "0.0.0.0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut warning = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut warning)
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // The server stops with the test, also when it fails.
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _child = Kill(child);
    assert!(
        warning.starts_with("warning: --bind 0.0.0.0 shows the results to every machine"),
        "{warning}"
    );
    let port = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://0.0.0.0:"))
        .unwrap_or_else(|| panic!("{line}"))
        .trim_end_matches('/')
        .to_string();
    let address = format!("127.0.0.1:{port}");
    assert_eq!(get(&address, "").0, 200);
    let (status, _) = request(
        &address,
        "GET / HTTP/1.1\r\nHost: rebind.example\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 421);
}
