//! `vernier serve`: the pages of `vernier report` generated from the database when they are
//! requested (tiny_http, one request at a time), so a browser shows what is stored now: the
//! sessions are read and analysed again when the database's files have changed since the last
//! request (their modification times and sizes; a PostgreSQL database is read for every
//! request), and each file is drawn when it is asked for. The
//! database is opened read-only; the server listens on 127.0.0.1 unless `--bind` says
//! otherwise, and answers GET and HEAD for the site's paths only (nothing is read from disk
//! by path). A port in use is an error (status 2) naming it.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::{anyhow, Result};
use tiny_http::{Header, Method, Request, Response, Server};
use vernier_site::Site;
use vernier_store::{Access, Location};

use crate::cli::{ServeArgs, SiteArgs};
use crate::cmd::report::site_input;
use crate::db;
use crate::out::{flush, outln};

pub fn serve(args: ServeArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let mut site = Current {
        database: db::location(db_arg)?,
        version: None,
        site: None,
    };
    // Bad selectors and an empty database are errors before anything listens.
    site.get(&args.site)?;
    let address = SocketAddr::new(args.bind, args.port);
    let server = Server::http(address).map_err(|e| {
        match e.downcast_ref::<std::io::Error>().map(std::io::Error::kind) {
            Some(ErrorKind::AddrInUse) => anyhow!(
                "port {} on {} is in use; choose another with --port (0 picks a free one)",
                args.port,
                args.bind
            ),
            Some(ErrorKind::AddrNotAvailable) => anyhow!(
                "--bind {}: no interface of this machine has that address",
                args.bind
            ),
            _ => anyhow!("cannot listen on {address}: {e}"),
        }
    })?;
    let url = match server.server_addr() {
        tiny_http::ListenAddr::IP(a) => format!("http://{a}/"),
        other => other.to_string(),
    };
    outln!("serving {url} from the database, read-only; Ctrl-C stops");
    flush()?;
    for request in server.incoming_requests() {
        answer(&args.site, &mut site, request);
    }
    Ok(ExitCode::SUCCESS)
}

/// The site of the database as it was at `version`.
struct Current {
    database: Location,
    /// `None` when the version cannot be known (a PostgreSQL database): read on every request.
    version: Option<Vec<Option<(SystemTime, u64)>>>,
    site: Option<Site>,
}

impl Current {
    /// The site of the database as it is now: the last one while the database's files are
    /// unchanged, else made anew from a new read-only connection (one that has read a
    /// database may keep what it read). The version is read before the sessions, so a write
    /// during the reading makes the next request read again.
    fn get(&mut self, args: &SiteArgs) -> Result<&Site> {
        let version = database_version(&self.database);
        if self.site.is_none() || version.is_none() || version != self.version {
            self.site = None;
            let store = vernier_store::open(&self.database, Access::Read)?;
            self.site = Some(Site::new(site_input(store.as_ref(), args)?)?);
            self.version = version;
        }
        self.site
            .as_ref()
            .ok_or_else(|| anyhow!("the site was not made"))
    }
}

/// The modification time and size of the database file and of its write-ahead log and shared
/// memory files (SQLite's WAL mode: commits change the `-wal` file first); `None` for a
/// PostgreSQL database, which has no files here.
fn database_version(database: &Location) -> Option<Vec<Option<(SystemTime, u64)>>> {
    let Location::File(database) = database else {
        return None;
    };
    let version = ["", "-wal", "-shm"]
        .iter()
        .map(|suffix| {
            let mut name = database.as_os_str().to_owned();
            name.push(suffix);
            let meta = std::fs::metadata(PathBuf::from(name)).ok()?;
            Some((meta.modified().ok()?, meta.len()))
        })
        .collect();
    Some(version)
}

/// Answers one request: the site's file at the request's path, 404 for another path, 405 for
/// a method other than GET and HEAD, 500 with the reason when the page cannot be made.
fn answer(args: &SiteArgs, current: &mut Current, request: Request) {
    if !matches!(request.method(), Method::Get | Method::Head) {
        let _ = request.respond(text(405, "only GET and HEAD are served\n"));
        return;
    }
    let path = site_path(request.url());
    let rendered = current
        .get(args)
        .and_then(|site| Ok(site.render(&path).transpose()?));
    let response = match rendered {
        Ok(Some(bytes)) => {
            // With its length rather than in chunks, whatever its size: the simplest answer
            // for any client.
            let mut r = Response::from_data(bytes).with_chunked_threshold(usize::MAX);
            if let Ok(h) =
                Header::from_bytes(&b"Content-Type"[..], Site::content_type(&path).as_bytes())
            {
                r.add_header(h);
            }
            if let Ok(h) = Header::from_bytes(&b"Cache-Control"[..], &b"no-store"[..]) {
                r.add_header(h);
            }
            r
        }
        Ok(None) => text(404, "no such page; start at /\n"),
        Err(e) => text(500, &format!("{}\n", crate::out::error_line(&e))),
    };
    let _ = request.respond(response);
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

fn text(status: u16, body: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    let mut r = Response::from_string(body).with_status_code(status);
    if let Ok(h) = Header::from_bytes(&b"Content-Type"[..], &b"text/plain; charset=utf-8"[..]) {
        r.add_header(h);
    }
    r
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
}
