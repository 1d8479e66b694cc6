//! `vernier serve`: the pages of `vernier report` generated from the database when they are
//! requested, so a browser shows what is stored now: the sessions are read and analysed again
//! when something was committed to the database since they were read (its
//! `vernier_store::ChangeToken` changed: for SQLite its files' modification times and sizes, for
//! PostgreSQL the server's snapshot), and each file is drawn when it is asked for. The database is opened read-only; the
//! server listens on 127.0.0.1 unless `--bind` says otherwise, and answers GET and HEAD for the
//! site's paths only (nothing is read from disk by path). A port in use is an error (status 2)
//! naming it.
//!
//! The HTTP server is [`http`]: one thread of connections and a small pool of threads that
//! render, with a deadline for each request, a connection limit and a bound on the answers in
//! progress, so that no client can exhaust it. Requests are answered only when their Host names
//! this server: the address the connection came in on, `localhost`, or a name given by
//! `--allow-host`. A web page in the user's browser could otherwise read the results through
//! DNS rebinding: its own name, made to resolve to 127.0.0.1, turns its requests into
//! same-origin ones to this server, but they still carry that name as their Host.

mod http;

use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use vernier_site::Site;
use vernier_store::{Access, ChangeToken, Location, Store};

use crate::cli::{ServeArgs, SiteArgs};
use crate::cmd::report::site_input;
use crate::db;
use crate::out::{flush, outln, printable};
use http::{Answer, Request};

/// Connections open at once at most; one beyond is answered 503. A browser opens up to six
/// per server and keeps them idle; idle connections cost a file descriptor each, no thread.
const MAX_CONNECTIONS: usize = 2048;
/// File descriptors kept for everything but connections: the database's files (opened again
/// when it changes), the listener, the event loop, the standard streams.
const RESERVED_FILES: u64 = 64;
/// Requests being answered at once at most (queued, rendered or written); one beyond is
/// answered 503. It bounds the rendered pages held in memory; a browser asks for a page and
/// its figures over at most six connections.
const MAX_ANSWERING: usize = 32;
/// How long a client may take to send its whole request head, from its connection on.
const REQUEST_DEADLINE: Duration = Duration::from_secs(10);
/// How long writing an answer may take (a large page to a slow client).
const ANSWER_DEADLINE: Duration = Duration::from_secs(60);
/// How long what a client sends after its answer is read before the connection is closed.
const LINGER: Duration = Duration::from_secs(2);
/// Render threads at most: the site is read from the database by one request at a time, and
/// its pages render side by side.
const MAX_WORKERS: usize = 4;

pub fn serve(args: ServeArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let allowed = args
        .allow_host
        .iter()
        .map(|name| allowed_name(name))
        .collect::<Result<Vec<String>>>()?;
    let mut site = Current {
        database: db::location(db_arg)?,
        store: None,
        token: None,
        site: None,
    };
    // Bad selectors and an empty database are errors before anything listens.
    site.get(&args.site)?;
    let address = SocketAddr::new(args.bind, args.port);
    let listener = TcpListener::bind(address).map_err(|e| match e.kind() {
        ErrorKind::AddrInUse => anyhow!(
            "port {} on {} is in use; choose another with --port (0 picks a free one)",
            args.port,
            args.bind
        ),
        ErrorKind::AddrNotAvailable => anyhow!(
            "--bind {}: no interface of this machine has that address",
            args.bind
        ),
        _ => anyhow!("cannot listen on {address}: {e}"),
    })?;
    let url = format!("http://{}/", listener.local_addr()?);
    if !args.bind.is_loopback() {
        eprintln!(
            "warning: --bind {} shows the results to every machine that can reach this one, \
             unencrypted and without a password; requests must name this machine by an \
             address it listens on, localhost or a name given with --allow-host",
            args.bind
        );
    }
    let limits = http::Limits {
        connections: connection_limit(),
        answering: MAX_ANSWERING,
        request_deadline: REQUEST_DEADLINE,
        answer_deadline: ANSWER_DEADLINE,
        linger: LINGER,
        workers: std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_WORKERS),
    };
    let server =
        http::Server::new(listener, limits).map_err(|e| anyhow!("cannot serve on {url}: {e}"))?;
    outln!("serving {url} from the database, read-only; Ctrl-C stops");
    flush()?;
    let site = Mutex::new(site);
    let handler = |request: &Request| answer(request, &args.site, &site, &allowed);
    server.run(&handler)?;
    Ok(ExitCode::SUCCESS)
}

/// [`MAX_CONNECTIONS`], or fewer when the process may not open enough files: the soft
/// RLIMIT_NOFILE (often 1024, with a far higher hard limit) is raised toward what they need.
fn connection_limit() -> usize {
    use vernier_sys::limits::{raise_soft_limit, Resource};
    let want = MAX_CONNECTIONS as u64 + RESERVED_FILES;
    match raise_soft_limit(Resource::OpenFiles, want) {
        Some((_, files)) => {
            let room = files.saturating_sub(RESERVED_FILES).max(8);
            usize::try_from(room).map_or(MAX_CONNECTIONS, |r| r.min(MAX_CONNECTIONS))
        }
        None => MAX_CONNECTIONS,
    }
}

/// The answer to one request: 421 when its Host does not name this server, 405 for a method
/// other than GET and HEAD, else the site's file.
fn answer(request: &Request, args: &SiteArgs, site: &Mutex<Current>, allowed: &[String]) -> Answer {
    if !host_allowed(request.host.as_deref(), request.local.ip(), allowed) {
        return Answer::text(
            421,
            &format!(
                "this server answers requests for {}, localhost and the names given with \
                 --allow-host, not for '{}'\n",
                request.local.ip(),
                printable(request.host.as_deref().unwrap_or_default())
            ),
        );
    }
    if request.method != "GET" && request.method != "HEAD" {
        return Answer::text(405, "only GET and HEAD are served\n");
    }
    page(args, site, &site_path(&request.target))
}

/// An `--allow-host` value as Host headers are compared with it: a host name (letters,
/// digits, `-`, `_`, `.`) in lower case, or an IP address, without a port.
fn allowed_name(name: &str) -> Result<String> {
    let host = name.trim().trim_end_matches('.').to_ascii_lowercase();
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
    if let Ok(ip) = bare.unwrap_or(&host).parse::<IpAddr>() {
        return Ok(ip.to_string());
    }
    let is_name = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if is_name {
        return Ok(host);
    }
    bail!(
        "--allow-host '{}': expected a host name (letters, digits, '-', '_', '.') or an IP \
         address, without a port",
        printable(name)
    )
}

/// Whether a request's Host header names this server: the address `local` the connection came
/// in on, `localhost`, or a name of `allowed` (from [`allowed_name`]); the port is not
/// compared. A request without Host (HTTP/1.0; browsers always send one) is answered.
fn host_allowed(host: Option<&str>, local: IpAddr, allowed: &[String]) -> bool {
    let Some(host) = host else { return true };
    // `[v6]:port`, `v4:port`, `name:port`, or either without the port.
    let name = match host.trim().strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((inside, _)) => inside,
            None => return false,
        },
        None => host.trim().split(':').next().unwrap_or_default(),
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if let Ok(ip) = name.parse::<IpAddr>() {
        return ip.to_canonical() == local.to_canonical()
            || allowed.iter().any(|a| a.parse() == Ok(ip));
    }
    name == "localhost" || allowed.contains(&name)
}

/// The site of the database as it was when `token` was read.
struct Current {
    database: Location,
    /// The connection the site was read with, kept to read the change token.
    store: Option<Box<dyn Store>>,
    /// `None` when it could not be read (a PostgreSQL server older than version 13): the site
    /// is then read again on every request.
    token: Option<ChangeToken>,
    site: Option<Arc<Site>>,
}

impl Current {
    /// The site of the database as it is now: the last one while nothing was committed to the
    /// database since, else made anew from a new read-only connection (an SQLite one may be
    /// `immutable` and keep what it read; a PostgreSQL one may have broken). The token is read
    /// before the sessions, so a commit during the reading makes the next request read again.
    fn get(&mut self, args: &SiteArgs) -> Result<&Arc<Site>> {
        let now = self.store.as_ref().and_then(|s| s.change_token().ok());
        if self.site.is_none() || now.is_none() || now != self.token {
            self.site = None;
            self.store = None;
            let store = vernier_store::open(&self.database, Access::Read)?;
            self.token = store.change_token().ok();
            self.site = Some(Arc::new(Site::new(site_input(store.as_ref(), args)?)?));
            self.store = Some(store);
        }
        self.site
            .as_ref()
            .ok_or_else(|| anyhow!("the site was not made"))
    }
}

/// The site's file at `path`, 404 for another path, 500 with the reason when the page cannot
/// be made. The site is read from the database by one request at a time (they share its
/// connection); its pages render side by side.
fn page(args: &SiteArgs, site: &Mutex<Current>, path: &str) -> Answer {
    let current = {
        let mut current = match site.lock() {
            Ok(current) => current,
            // A panic while reading the site leaves nothing half-changed that matters here:
            // the site is read again when the database changes.
            Err(poisoned) => poisoned.into_inner(),
        };
        current.get(args).map(Arc::clone)
    };
    let rendered = current.and_then(|site| Ok(site.render(path).transpose()?));
    match rendered {
        Ok(Some(body)) => Answer {
            status: 200,
            content_type: Site::content_type(path),
            body,
        },
        Ok(None) => Answer::text(404, "no such page; start at /\n"),
        Err(e) => Answer::text(500, &format!("{}\n", crate::out::error_line(&e))),
    }
}

/// The site path of a request URL: without the query, the leading `/`, and with `index.html`
/// for a directory.
fn site_path(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let path = path.trim_start_matches('/');
    if path.is_empty() || path.ends_with('/') {
        format!("{path}index.html")
    } else {
        path.to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn request_urls_map_to_site_paths() {
        assert_eq!(site_path("/"), "index.html");
        assert_eq!(site_path("/bench/0-pipe.html?x=1"), "bench/0-pipe.html");
        assert_eq!(site_path("/monitors/"), "monitors/index.html");
    }

    #[test]
    fn hosts_are_this_server_localhost_or_allowed_names() {
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let allowed = vec![allowed_name("Bench.Lab.").unwrap()];
        assert_eq!(allowed, ["bench.lab"]);
        for host in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "localhost:8080",
            "LOCALHOST",
            "localhost.",
            "bench.lab:80",
            "BENCH.lab",
        ] {
            assert!(host_allowed(Some(host), local, &allowed), "{host}");
        }
        for host in [
            "evil.example:8080",
            "127.0.0.2:8080",
            "localhost.evil.example",
            "bench.lab.evil.example",
            "[::1]:8080",
            "",
            "[127.0.0.1",
        ] {
            assert!(!host_allowed(Some(host), local, &allowed), "{host}");
        }
        // The address a connection came in on, also of IPv6 and v4-mapped sockets.
        let v6: IpAddr = "::1".parse().unwrap();
        assert!(host_allowed(Some("[::1]:8080"), v6, &[]));
        let mapped: IpAddr = "::ffff:192.168.1.5".parse().unwrap();
        assert!(host_allowed(Some("192.168.1.5:8080"), mapped, &[]));
        assert!(host_allowed(None, local, &[]));
        // Addresses given to --allow-host, in any of their forms.
        assert_eq!(allowed_name("[::1]").unwrap(), "::1");
        let v6_allowed = [allowed_name("0:0::1").unwrap()];
        assert!(host_allowed(Some("[::1]:8080"), local, &v6_allowed));
        for bad in ["", "a b", "bench.lab:8080", "http://x", "a/b", "[x]"] {
            assert!(allowed_name(bad).is_err(), "{bad}");
        }
    }
}
