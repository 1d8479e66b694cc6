//! `vernier serve`: the pages of `vernier report` generated from the database when they are
//! requested, so a browser shows what is stored now: the sessions are read and analysed again
//! when something was committed to the database since they were read (its
//! `vernier_store::ChangeToken` changed: for SQLite its files' modification times and sizes, for
//! PostgreSQL the server's snapshot), and each file is drawn when it is asked for. The database is opened read-only; the
//! server listens on 127.0.0.1 unless `--bind` says otherwise, and answers GET and HEAD for the
//! site's paths only (nothing is read from disk by path). A port in use is an error (status 2)
//! naming it.
//!
//! Each connection has a thread of its own and gets one answer, with `Connection: close`
//! (RFC 9112, 9.6): a browser opens several connections at once and keeps idle ones open, and a
//! server with a fixed pool of keep-alive connection threads can leave a request unread while
//! those idle connections hold every thread. Requests are parsed by `httparse`.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{anyhow, Result};
use vernier_site::Site;
use vernier_store::{Access, ChangeToken, Location, Store};

use crate::cli::{ServeArgs, SiteArgs};
use crate::cmd::report::site_input;
use crate::db;
use crate::out::{flush, outln};

/// The largest request head read; the site's requests are a line and a few headers.
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// How long a connection may take to send its request before it is answered 408 and closed.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

pub fn serve(args: ServeArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
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
    outln!("serving {url} from the database, read-only; Ctrl-C stops");
    flush()?;
    let site = Mutex::new(site);
    std::thread::scope(|scope| {
        for stream in listener.incoming() {
            // A connection that failed before it was accepted concerns only its client.
            let Ok(stream) = stream else { continue };
            let (site, args) = (&site, &args.site);
            scope.spawn(move || connection(stream, args, site));
        }
    });
    Ok(ExitCode::SUCCESS)
}

/// The site of the database as it was when `token` was read.
struct Current {
    database: Location,
    /// The connection the site was read with, kept to read the change token.
    store: Option<Box<dyn Store>>,
    /// `None` when it could not be read (a PostgreSQL server older than version 13): the site
    /// is then read again on every request.
    token: Option<ChangeToken>,
    site: Option<Site>,
}

impl Current {
    /// The site of the database as it is now: the last one while nothing was committed to the
    /// database since, else made anew from a new read-only connection (an SQLite one may be
    /// `immutable` and keep what it read; a PostgreSQL one may have broken). The token is read
    /// before the sessions, so a commit during the reading makes the next request read again.
    fn get(&mut self, args: &SiteArgs) -> Result<&Site> {
        let now = self.store.as_ref().and_then(|s| s.change_token().ok());
        if self.site.is_none() || now.is_none() || now != self.token {
            self.site = None;
            self.store = None;
            let store = vernier_store::open(&self.database, Access::Read)?;
            self.token = store.change_token().ok();
            self.site = Some(Site::new(site_input(store.as_ref(), args)?)?);
            self.store = Some(store);
        }
        self.site
            .as_ref()
            .ok_or_else(|| anyhow!("the site was not made"))
    }
}

/// An answer: status, content type and body.
#[derive(Debug)]
struct Answer {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
}

impl Answer {
    fn text(status: u16, body: &str) -> Self {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.as_bytes().to_vec(),
        }
    }
}

/// Reads one request from `stream`, answers it and closes the connection. Errors of the
/// connection itself (the client went away) end it silently: they concern only that client.
fn connection(mut stream: TcpStream, args: &SiteArgs, site: &Mutex<Current>) {
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let (answer, head_only) = match read_head(&mut stream) {
        Ok(head) => match parse(&head) {
            Ok((method, target)) => {
                let head_only = method == "HEAD";
                if method == "GET" || head_only {
                    (page(args, site, &site_path(&target)), head_only)
                } else {
                    (Answer::text(405, "only GET and HEAD are served\n"), false)
                }
            }
            Err(answer) => (answer, false),
        },
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => (
            Answer::text(408, "the request did not arrive in time\n"),
            false,
        ),
        Err(_) => return,
    };
    let _ = respond(&mut stream, &answer, head_only);
}

/// The request's head: the bytes up to and including the empty line that ends its headers.
fn read_head(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD_BYTES {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(head)
}

/// The method and target of a request head, or the answer to a malformed one.
fn parse(head: &[u8]) -> Result<(String, String), Answer> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => match (request.method, request.path) {
            (Some(method), Some(path)) => Ok((method.to_string(), path.to_string())),
            _ => Err(Answer::text(400, "malformed request\n")),
        },
        Ok(httparse::Status::Partial) if head.len() >= MAX_HEAD_BYTES => {
            Err(Answer::text(431, "request head too large\n"))
        }
        Ok(httparse::Status::Partial) => Err(Answer::text(400, "incomplete request\n")),
        Err(e) => Err(Answer::text(400, &format!("malformed request: {e}\n"))),
    }
}

/// The site's file at `path`, 404 for another path, 500 with the reason when the page cannot
/// be made. One page is made at a time: they share the site and its database connection.
fn page(args: &SiteArgs, site: &Mutex<Current>, path: &str) -> Answer {
    let mut current = match site.lock() {
        Ok(current) => current,
        // A panic while making another page leaves nothing half-changed that matters here:
        // the site is made again when the database changes.
        Err(poisoned) => poisoned.into_inner(),
    };
    let rendered = current
        .get(args)
        .and_then(|site| Ok(site.render(path).transpose()?));
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

fn respond(stream: &mut TcpStream, answer: &Answer, head_only: bool) -> std::io::Result<()> {
    let reason = match answer.status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        _ => "Internal Server Error",
    };
    let mut head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n",
        answer.status,
        answer.content_type,
        answer.body.len()
    );
    if answer.status == 405 {
        head.push_str("Allow: GET, HEAD\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(&answer.body)?;
    }
    stream.flush()?;
    stream.shutdown(std::net::Shutdown::Both)
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
mod tests {
    use super::*;

    #[test]
    fn request_urls_map_to_site_paths() {
        assert_eq!(site_path("/"), "index.html");
        assert_eq!(site_path("/bench/0-pipe.html?x=1"), "bench/0-pipe.html");
        assert_eq!(site_path("/monitors/"), "monitors/index.html");
    }

    #[test]
    fn request_heads_are_parsed_or_answered() {
        let (method, target) = parse(b"GET /a.html?x HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
        assert_eq!((method.as_str(), target.as_str()), ("GET", "/a.html?x"));
        assert_eq!(parse(b"GET /a HTTP/1.1\r\n").err().unwrap().status, 400);
        assert_eq!(
            parse(b"\x01\x02 nonsense\r\n\r\n").err().unwrap().status,
            400
        );
    }
}
