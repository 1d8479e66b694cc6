//! The connection to a PostgreSQL server, with TLS as libpq's `sslmode` says
//! (https://www.postgresql.org/docs/15/libpq-ssl.html, table 34.1): a central database across
//! a lab network needs encryption, and an admin writes the URL as for `psql`.
//!
//! | `sslmode`            | encrypted           | server authenticated                  |
//! |----------------------|---------------------|---------------------------------------|
//! | `disable`            | no                  | no                                    |
//! | `prefer` (default)   | when the server can | no                                    |
//! | `require`            | yes                 | no (as `verify-ca` with `sslrootcert`) |
//! | `verify-ca`          | yes                 | its certificate chain                 |
//! | `verify-full`        | yes                 | its chain and its host name           |
//!
//! The postgres crate knows only `disable`, `prefer` and `require` and no `sslrootcert`, so both
//! are taken out of the URL here and become the TLS connector's settings. The certificates that
//! a verifying mode trusts are `sslrootcert=FILE` (PEM), else `~/.postgresql/root.crt` when it
//! exists (as libpq), else the system's; `sslrootcert=system` names the system's. A Unix socket
//! never carries TLS (the server refuses it there): `prefer` goes on without, `require` fails.

use std::path::PathBuf;

use native_tls::{Certificate, TlsConnector};
use postgres::{Client, NoTls};
use postgres_native_tls::MakeTlsConnector;

use crate::StoreError;

/// libpq's modes, in order of protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

const SSL_MODES: &str = "disable, prefer, require, verify-ca or verify-full";

/// Where a verifying mode's trusted certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RootCertificates {
    /// `sslrootcert` unset: `~/.postgresql/root.crt` if it exists, else the system's.
    Default,
    /// `sslrootcert=system`.
    System,
    File(PathBuf),
}

/// A URL with its TLS settings taken out: what the postgres crate is given, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Split {
    url: String,
    mode: SslMode,
    root: RootCertificates,
}

/// Connects to `url` (`shown` names it in errors, without its password).
pub(super) fn connect(url: &str, shown: &str) -> Result<Client, StoreError> {
    let split = split(url, shown)?;
    let connected = if split.mode == SslMode::Disable {
        Client::connect(&split.url, NoTls)
    } else {
        Client::connect(&split.url, MakeTlsConnector::new(connector(&split, shown)?))
    };
    connected.map_err(|e| super::connect_error(shown, &e))
}

fn split(url: &str, shown: &str) -> Result<Split, StoreError> {
    let bad = |what: String| StoreError::Location(format!("database {shown}: {what}"));
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept = Vec::new();
    let mut mode = SslMode::Prefer;
    let mut root = RootCertificates::Default;
    for parameter in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = parameter.split_once('=').unwrap_or((parameter, ""));
        let decoded = percent_encoding::percent_decode_str(value)
            .decode_utf8()
            .map_err(|_| bad(format!("the value of '{key}' is not UTF-8")))?;
        match key {
            "sslmode" => {
                mode = match &*decoded {
                    "disable" => SslMode::Disable,
                    "prefer" => SslMode::Prefer,
                    "require" => SslMode::Require,
                    "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => {
                        return Err(bad(format!(
                            "sslmode '{other}' is not supported; valid: {SSL_MODES}"
                        )))
                    }
                }
            }
            "sslrootcert" if &*decoded == "system" => root = RootCertificates::System,
            "sslrootcert" => root = RootCertificates::File(PathBuf::from(&*decoded)),
            _ => kept.push(parameter),
        }
    }
    // libpq: `require` with a root certificate file verifies the chain, as `verify-ca`.
    if mode == SslMode::Require && matches!(root, RootCertificates::File(_)) {
        mode = SslMode::VerifyCa;
    }
    kept.push(match mode {
        SslMode::Disable => "sslmode=disable",
        SslMode::Prefer => "sslmode=prefer",
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => "sslmode=require",
    });
    Ok(Split {
        url: format!("{base}?{}", kept.join("&")),
        mode,
        root,
    })
}

fn connector(split: &Split, shown: &str) -> Result<TlsConnector, StoreError> {
    let bad = |what: String| StoreError::Location(format!("database {shown}: {what}"));
    let mut builder = TlsConnector::builder();
    match split.mode {
        SslMode::Disable | SslMode::Prefer | SslMode::Require => {
            builder
                .danger_accept_invalid_certs(true)
                .danger_accept_invalid_hostnames(true);
        }
        SslMode::VerifyCa => {
            builder.danger_accept_invalid_hostnames(true);
        }
        SslMode::VerifyFull => {}
    }
    if matches!(split.mode, SslMode::VerifyCa | SslMode::VerifyFull) {
        let file = match &split.root {
            RootCertificates::File(file) => Some(file.clone()),
            RootCertificates::System => None,
            RootCertificates::Default => std::env::var_os("HOME")
                .map(|home| PathBuf::from(home).join(".postgresql/root.crt"))
                .filter(|file| file.exists()),
        };
        if let Some(file) = file {
            let pem = std::fs::read(&file).map_err(|e| {
                bad(format!(
                    "cannot read the root certificates {}: {e}",
                    file.display()
                ))
            })?;
            let certificate = Certificate::from_pem(&pem)
                .map_err(|e| bad(format!("{} holds no PEM certificate: {e}", file.display())))?;
            builder
                .disable_built_in_roots(true)
                .add_root_certificate(certificate);
        }
    }
    builder
        .build()
        .map_err(|e| bad(format!("TLS cannot be set up: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_ok(url: &str) -> Split {
        split(url, "db").unwrap()
    }

    #[test]
    fn the_modes_the_driver_lacks_become_connector_settings() {
        let s = split_ok("postgresql://u@h/db?sslmode=verify-full&application_name=x");
        assert_eq!(s.mode, SslMode::VerifyFull);
        assert_eq!(
            s.url,
            "postgresql://u@h/db?application_name=x&sslmode=require"
        );
        let s = split_ok("postgresql://u@h/db?sslrootcert=%2Fetc%2Fca.pem&sslmode=require");
        assert_eq!(
            s.mode,
            SslMode::VerifyCa,
            "require with a root file verifies"
        );
        assert_eq!(s.root, RootCertificates::File("/etc/ca.pem".into()));
        assert_eq!(s.url, "postgresql://u@h/db?sslmode=require");
        let s = split_ok("postgresql:///db?host=/run/pg");
        assert_eq!(s.mode, SslMode::Prefer, "libpq's default");
        assert_eq!(s.url, "postgresql:///db?host=/run/pg&sslmode=prefer");
        let s = split_ok("postgres://h/db?sslmode=verify-ca&sslrootcert=system");
        assert_eq!(
            (s.mode, s.root),
            (SslMode::VerifyCa, RootCertificates::System)
        );
        assert_eq!(
            split_ok("postgres://h/db?sslmode=disable").mode,
            SslMode::Disable
        );
    }

    #[test]
    fn an_unknown_mode_is_refused_with_the_valid_ones() {
        let e = split("postgres://h/db?sslmode=allow", "postgres://h/db")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sslmode 'allow' is not supported"), "{e}");
        assert!(e.contains("verify-full"), "{e}");
    }

    #[test]
    fn an_unreadable_root_file_is_named() {
        let s = split_ok("postgres://h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem");
        let e = connector(&s, "postgres://h/db").unwrap_err().to_string();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
    }
}
