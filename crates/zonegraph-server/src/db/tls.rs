//! PostgreSQL over TLS, as libpq reads a URL: `sslmode` and `sslrootcert` in its query.
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | — |
//! | `allow`, `prefer` (the default) | when the server offers it, else plain | checked against `sslrootcert` when one is given, else not |
//! | `require` | always | as `prefer` (libpq: a root file makes it `verify-ca`) |
//! | `verify-ca` | always | signed by a root of `sslrootcert` |
//! | `verify-full` | always | that, and issued for the host name in the URL |
//!
//! `sslrootcert` is a PEM file of roots, or `system` for the system's roots; without it
//! `verify-ca` and `verify-full` read libpq's default, `~/.postgresql/root.crt`. One
//! difference from libpq: `allow` tries TLS first (as `prefer`), not plain first.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// What a URL asks of TLS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub mode: Mode,
    /// `sslrootcert`: a file, or `system`.
    pub root_cert: Option<String>,
}

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(s: &str) -> Result<Mode> {
        Ok(match s {
            "disable" => Mode::Disable,
            "allow" => Mode::Allow,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            other => bail!(
                "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, \
                 verify-full"
            ),
        })
    }

    /// As the URL writes it.
    fn name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Allow => "allow",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }

    /// What tokio-postgres negotiates.
    pub fn negotiated(self) -> SslMode {
        match self {
            Mode::Disable => SslMode::Disable,
            Mode::Allow | Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }
}

/// `url` without its `sslmode` and `sslrootcert` (tokio-postgres knows only some of
/// libpq's modes and no root file), and what they asked.
pub fn split(url: &str) -> Result<(String, Settings)> {
    let mut settings = Settings {
        mode: Mode::Prefer,
        root_cert: None,
    };
    let Some(at) = query_at(url) else {
        return Ok((url.to_string(), settings));
    };
    let (base, query) = (&url[..at], &url[at + 1..]);
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "sslmode" => settings.mode = Mode::parse(&decoded(value)?)?,
            "sslrootcert" => settings.root_cert = Some(decoded(value)?),
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, settings))
}

/// The start-up warning when `config` reaches a host other than this machine and `settings`
/// check no server certificate (`disable`; `allow`, `prefer` or `require` without
/// `sslrootcert`), as libpq does without a word: whoever is on the way could read and change
/// what the bot stores. `None` for loopback hosts and Unix sockets, or a checked certificate.
pub fn unchecked_warning(config: &tokio_postgres::Config, settings: &Settings) -> Option<String> {
    let checked = match settings.mode {
        Mode::Disable => false,
        Mode::Allow | Mode::Prefer | Mode::Require => settings.root_cert.is_some(),
        Mode::VerifyCa | Mode::VerifyFull => true,
    };
    let remote = config.get_hosts().iter().any(|h| match h {
        tokio_postgres::config::Host::Tcp(name) => {
            !name.eq_ignore_ascii_case("localhost")
                && !name
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        #[cfg(unix)]
        tokio_postgres::config::Host::Unix(_) => false,
    });
    if checked || !remote {
        return None;
    }
    let how = if settings.mode == Mode::Disable {
        "in clear (sslmode=disable)".to_string()
    } else {
        format!(
            "without checking its certificate (sslmode={})",
            settings.mode.name()
        )
    };
    Some(format!(
        "the database is reached over the network {how}: whoever is on the way could read and \
         change what the bot stores; add sslmode=verify-full&sslrootcert=system (or a file of \
         roots) to the URL"
    ))
}

/// Where the query (`?…`) of a URL starts, as tokio-postgres reads it: the credentials run to
/// the first `@` (a password may hold a `?`), the query from the first `?` after them.
fn query_at(url: &str) -> Option<usize> {
    let rest = url.find("://").map_or(0, |i| i + 3);
    let from = url[rest..].find('@').map_or(rest, |i| rest + i + 1);
    url[from..].find('?').map(|i| from + i)
}

/// A URL query value, its `%XX` escapes decoded.
fn decoded(v: &str) -> Result<String> {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = v
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .with_context(|| format!("{v:?}: a % not followed by two hex digits"))?;
                out.push(hex);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).with_context(|| format!("{v:?} is not UTF-8 once decoded"))
}

/// The connector for `settings`: which roots, and how much of the certificate is checked.
pub fn connector(settings: &Settings) -> Result<MakeRustlsConnect> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("TLS for PostgreSQL")?;
    let roots = match (settings.mode, &settings.root_cert) {
        (Mode::Disable, _) => None,
        (Mode::VerifyCa | Mode::VerifyFull, None) => Some(default_roots()?),
        (_, Some(r)) => Some(roots_of(r)?),
        (_, None) => None,
    };
    let config = match (roots, settings.mode) {
        (Some(roots), Mode::VerifyFull) => builder.with_root_certificates(roots),
        (Some(roots), _) => {
            let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .context("the roots of sslrootcert")?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(CaOnly(webpki)))
        }
        (None, _) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(provider))),
    }
    .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// libpq's default root file for `verify-ca` and `verify-full`.
fn default_roots() -> Result<RootCertStore> {
    let file = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".postgresql/root.crt"))
        .filter(|p| p.is_file())
        .context(
            "sslmode=verify-ca and verify-full need the roots to check the server against: \
             give sslrootcert=FILE (PEM) or sslrootcert=system (libpq's default \
             ~/.postgresql/root.crt is not there)",
        )?;
    roots_of(&file.to_string_lossy())
}

/// The roots of `sslrootcert`: `system`, or a PEM file.
fn roots_of(root_cert: &str) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    if root_cert == "system" {
        let found = rustls_native_certs::load_native_certs();
        let (added, _) = roots.add_parsable_certificates(found.certs);
        if added == 0 {
            bail!("sslrootcert=system: no system root certificates were found");
        }
        return Ok(roots);
    }
    let path = Path::new(root_cert);
    let certs = CertificateDer::pem_file_iter(path)
        .with_context(|| format!("cannot read sslrootcert {}", path.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("sslrootcert {} is not PEM certificates", path.display()))?;
    let (added, _) = roots.add_parsable_certificates(certs);
    if added == 0 {
        bail!("sslrootcert {} holds no certificate", path.display());
    }
    Ok(roots)
}

/// `require` without roots, as libpq: the link is encrypted, the certificate is not checked
/// (its handshake signature is).
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a root; the name it was issued for is not checked.
#[derive(Debug)]
struct CaOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for CaOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    /// A non-loopback host without a checked certificate is warned of; loopback, a Unix
    /// socket or a checked certificate is not.
    #[test]
    fn an_unchecked_remote_database_is_warned_of() {
        let warned = |url: &str| {
            let (plain, settings) = split(url).unwrap();
            unchecked_warning(&plain.parse().unwrap(), &settings)
        };
        for url in [
            "postgres://zg@db.example/zg",
            "postgres://zg@db.example/zg?sslmode=require",
            "postgres://zg@10.0.0.5/zg?sslmode=prefer",
            "postgres://zg@127.0.0.1,db.example/zg",
        ] {
            let w = warned(url).unwrap_or_else(|| panic!("{url}: no warning"));
            assert!(w.contains("without checking its certificate"), "{url}: {w}");
        }
        assert!(
            warned("postgres://zg@db.example/zg?sslmode=disable")
                .unwrap()
                .contains("in clear (sslmode=disable)")
        );
        for url in [
            "postgres://zg@127.0.0.1/zg",
            "postgres://zg@localhost/zg?sslmode=disable",
            "postgres://zg@[::1]/zg",
            "postgres://zg@%2Frun%2Fpostgresql/zg",
            "postgres://zg@db.example/zg?sslmode=verify-full",
            "postgres://zg@db.example/zg?sslmode=verify-ca&sslrootcert=system",
            "postgres://zg@db.example/zg?sslmode=require&sslrootcert=%2Fetc%2Fca.pem",
        ] {
            assert_eq!(warned(url), None, "{url}");
        }
    }

    /// A password may hold a `?`: the query starts after the credentials, as the driver reads
    /// the URL, so `sslmode` still applies.
    #[test]
    fn a_question_mark_in_the_password_is_not_the_query() {
        let (url, s) = split("postgres://zg:pa?ss@db/zg?sslmode=require").unwrap();
        assert_eq!(url, "postgres://zg:pa?ss@db/zg");
        assert_eq!(s.mode, Mode::Require);
        let c: tokio_postgres::Config = url.parse().unwrap();
        assert_eq!(c.get_password(), Some(&b"pa?ss"[..]));
        assert_eq!(c.get_dbname(), Some("zg"));
    }

    #[test]
    fn the_ssl_parameters_leave_the_url_and_the_rest_stays() {
        let (url, s) = split(
            "postgres://u:p@db:5432/zg?application_name=x&sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem",
        )
        .unwrap();
        assert_eq!(url, "postgres://u:p@db:5432/zg?application_name=x");
        assert_eq!(s.mode, Mode::VerifyFull);
        assert_eq!(s.root_cert.as_deref(), Some("/etc/ca.pem"));
        let (url, s) = split("postgres://db/zg").unwrap();
        assert_eq!((url.as_str(), s.mode), ("postgres://db/zg", Mode::Prefer));
        let (url, s) = split("postgres://db/zg?sslmode=require").unwrap();
        assert_eq!((url.as_str(), s.mode), ("postgres://db/zg", Mode::Require));
        let e = split("postgres://db/zg?sslmode=verify").unwrap_err();
        assert!(format!("{e:#}").contains("verify-full"), "{e:#}");
        assert!(split("postgres://db/zg?sslrootcert=%zz").is_err());
    }
}
