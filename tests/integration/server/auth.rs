//! Who may drive the server: the API token (given, or made beside the database and kept),
//! `--no-auth` only for requests that name this machine, and the flags that choose.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use zonegraph_server::server::{self as serve, Auth};
use zonegraph_server::store::CharacterRules;
use zonegraph_tests::client::Conn;

use super::{spawn_process, token_of};
use crate::support::Ctx;

#[test]
fn an_api_token_is_required_when_configured() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Ctx::new(dir.path())
        .auth(Auth::Token("s3cret".into()))
        .start();
    let mut c = Conn::connect(server.addr).expect("connect");
    let r = c.command("@a:test", "!zone help", None).expect("request");
    assert_eq!(r.status, 401, "{}", r.text());
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap_or_default()
            .contains("Bearer")
    );
    let r = c
        .command("@a:test", "!zone help", Some("wrong"))
        .expect("request");
    assert_eq!(r.status, 401);
    let r = c
        .command("@a:test", "!zone enter crypt_valdris", Some("s3cret"))
        .expect("request");
    assert_eq!(r.status, 200);
    for path in ["/api/zones", "/api/zones/crypt_valdris"] {
        assert_eq!(c.get(path).expect("zones").status, 401, "{path}");
    }
    for (path, body) in [
        ("/api/notices", serde_json::json!({ "user": "@a:test" })),
        (
            "/api/notices/ack",
            serde_json::json!({ "user": "@a:test", "ids": [1] }),
        ),
    ] {
        assert_eq!(
            c.post_json(path, &body).expect("post").status,
            401,
            "{path}"
        );
    }
    let map = c
        .command("@a:test", "!zone map", Some("s3cret"))
        .expect("map")
        .json();
    let token = token_of(map["replies"][0]["text"].as_str().unwrap_or_default());
    // The run link is its own capability; health and the viewer are public.
    assert_eq!(
        c.get(&format!("/api/runs/{token}")).expect("view").status,
        200
    );
    assert_eq!(c.get("/healthz").expect("health").status, 200);
    assert_eq!(c.get("/").expect("viewer").status, 200);
}

#[test]
fn without_a_token_the_server_makes_one_beside_the_database_and_keeps_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db_path = dir.path().join("z.db");
    let file = serve::token_file(&db_path);
    assert_eq!(file, dir.path().join("z.db.api-token"));
    let mut p = spawn_process(&db_path);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file)
            .expect("token file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    assert_eq!(p.token.len(), 32, "128 random bits in hex");
    // The start-up message says where the token is and how to pass it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let said = loop {
        let said = p.stdout.lock().expect("stdout").join("\n");
        if said.contains("authorization: Bearer") || Instant::now() > deadline {
            break said;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(said.contains(&file.display().to_string()), "{said}");
    assert!(
        said.contains(&format!("authorization: Bearer $(cat {})", file.display())),
        "{said}"
    );
    let mut c = Conn::connect(p.addr).expect("connect");
    let r = c.command("@a:test", "!zone help", None).expect("request");
    assert_eq!(r.status, 401, "closed by default: {}", r.text());
    let r = c
        .command("@a:test", "!zone help", Some(&p.token))
        .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    let _ = p.child.kill();
    let _ = p.child.wait();

    // A restart reuses it.
    let first = p.token.clone();
    let mut p = spawn_process(&db_path);
    assert_eq!(p.token, first);
    let mut c = Conn::connect(p.addr).expect("connect");
    let r = c
        .command("@a:test", "!zone help", Some(&first))
        .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
    let _ = p.child.kill();
    let _ = p.child.wait();
}

/// `POST /api/command` with `Host: host` (and no token).
fn command_for_host(addr: SocketAddr, host: &str) -> zonegraph_tests::client::Response {
    let body = r#"{"user":"@local:test","text":"!zone help"}"#;
    let req = format!(
        "POST /api/command HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    Conn::connect(addr)
        .expect("connect")
        .raw(req.as_bytes())
        .expect("request")
}

#[test]
fn no_auth_answers_only_requests_that_name_this_machine() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Ctx::new(dir.path()).auth(Auth::Off).start();
    assert_eq!(server.api_token(), None);
    let listen = server.addr.to_string();
    for host in [
        "localhost",
        "localhost:8080",
        "LocalHost:1",
        "127.0.0.1",
        "127.0.0.1:9",
        "[::1]",
        "[::1]:8080",
        listen.as_str(),
    ] {
        let r = command_for_host(server.addr, host);
        assert_eq!(r.status, 200, "Host {host}: {}", r.text());
    }
    // A page on another name, its DNS rebound to 127.0.0.1, must not drive the bot.
    for host in [
        "evil.example",
        "evil.example:8080",
        "localhost.evil.example",
        "127.0.0.1.nip.io:80",
        "[::1].evil",
        "localhost:http",
        "",
    ] {
        let r = command_for_host(server.addr, host);
        assert_eq!(r.status, 403, "Host {host:?}: {}", r.text());
        let err = r.json()["error"].as_str().unwrap_or_default().to_string();
        assert!(err.contains("--no-auth"), "{err}");
        assert!(err.contains("DNS rebinding"), "{err}");
    }
}

#[test]
fn serve_flags_close_the_api_by_default() {
    use clap::Parser;
    let args = |args: &[&str]| {
        let argv = ["zonegraph", "serve"].iter().chain(args).copied();
        zonegraph_server::cli::Cli::try_parse_from(argv).map(|cli| match cli.command {
            zonegraph_server::cli::Cmd::Serve(a) => a,
            _ => unreachable!("a serve command"),
        })
    };
    let parse = |a: &[&str]| zonegraph_server::cli::serve::config(&args(a).expect("arguments"));
    // No token given: one is made (on any address).
    for listen in ["127.0.0.1:8080", "0.0.0.0:8080"] {
        let c = parse(&["--listen", listen]).expect("ok");
        assert!(matches!(c.auth, Auth::TokenFile), "{listen}: {:?}", c.auth);
    }
    let c = parse(&["--api-token", "t"]).expect("ok");
    assert!(matches!(c.auth, Auth::Token(ref t) if t.expose() == "t"));
    let c = parse(&["--no-auth"]).expect("ok");
    assert!(matches!(c.auth, Auth::Off));
    let err = parse(&["--listen", "0.0.0.0:8080", "--no-auth"]).expect_err("refused");
    assert!(err.to_string().contains("refusing --no-auth"), "{err}");
    let err = args(&["--no-auth", "--api-token", "t"]).expect_err("conflict");
    assert!(err.to_string().contains("cannot be used with"), "{err}");
    // Who sets character sheets.
    let c = parse(&["--admin", "@a:test", "--admin", "@b:test", "--sandbox"]).expect("ok");
    assert_eq!(c.admins, ["@a:test", "@b:test"]);
    assert_eq!(c.characters, CharacterRules::Sandbox);
    let c = parse(&[]).expect("ok");
    assert!(c.admins.is_empty());
    assert_eq!(c.characters, CharacterRules::AdminsOnly);
    // Rate limits.
    use zonegraph_core::limits::Rate;
    assert_eq!(parse(&[]).expect("ok").limits.rate, Some(Rate::new(2, 10)));
    assert_eq!(
        parse(&["--rate-limit", "off"]).expect("ok").limits.rate,
        None
    );
    assert_eq!(
        parse(&["--rate-limit", "0.5/5"]).expect("ok").limits.rate,
        Some(Rate {
            per_second_milli: 500,
            burst: 5
        })
    );
    for bad in ["2", "fast", "2/x", "0/10", "2/0", "1.0001/2", "-1/2"] {
        let err = args(&[&format!("--rate-limit={bad}")]).expect_err(bad);
        assert!(err.to_string().contains("--rate-limit"), "{bad}: {err}");
    }
    let ok = parse(&["--listen", "127.0.0.1:9000", "--fork-timeout", "1h30m"]).expect("ok");
    assert_eq!(ok.fork_timeout, Duration::from_secs(5400));
    let bad = args(&["--fork-timeout", "soon"]).expect_err("not a duration");
    assert!(bad.to_string().contains("not a duration like 6h"), "{bad}");
}

/// A page on another site cannot drive the API, with `--no-auth` or with a token it found:
/// a cross-site `Origin` or `Sec-Fetch-Site` is refused (the server's own origin, or the
/// host a reverse proxy forwards, is not); a zone arrives as JSON only (a `text/plain` POST
/// needs no preflight); and every answer says not to be framed, sniffed or referred.
#[test]
fn cross_site_requests_are_refused_and_pages_carry_security_headers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zones = crate::support::copy_zones(dir.path());
    for auth in [Auth::Off, Auth::Token("s3cret".into())] {
        let token = match &auth {
            Auth::Token(t) => Some(t.expose().to_string()),
            _ => None,
        };
        let server = Ctx::new(dir.path()).zones(zones.clone()).auth(auth).start();
        let host = format!("127.0.0.1:{}", server.addr.port());
        let send = |extra: &str, path: &str, content_type: &str, body: &str| {
            let auth = token
                .as_ref()
                .map(|t| format!("authorization: Bearer {t}\r\n"))
                .unwrap_or_default();
            let req = format!(
                "POST {path} HTTP/1.1\r\nhost: {host}\r\n{auth}{extra}content-type: \
                 {content_type}\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            Conn::connect(server.addr)
                .expect("connect")
                .raw(req.as_bytes())
                .expect("request")
        };
        let command = r#"{"user":"@x:test","text":"!zone enter crypt_valdris"}"#;
        let json = "application/json";
        for extra in [
            "origin: https://evil.example\r\n".to_string(),
            "origin: null\r\n".to_string(),
            "sec-fetch-site: cross-site\r\n".to_string(),
        ] {
            let r = send(&extra, "/api/command", json, command);
            assert_eq!(r.status, 403, "{extra:?}: {}", r.text());
            let err = r.json()["error"].as_str().unwrap_or_default().to_string();
            assert!(err.contains("another site"), "{err}");
        }
        for extra in [
            format!("origin: http://{host}\r\nsec-fetch-site: same-origin\r\n"),
            "origin: https://zones.example\r\nx-forwarded-host: zones.example\r\n".to_string(),
            String::new(),
        ] {
            let r = send(&extra, "/api/command", json, command);
            assert_eq!(r.status, 200, "{extra:?}: {}", r.text());
        }
        // The zone file as text/plain (what a form or a plain fetch elsewhere can send).
        let zone =
            crate::support::zone_text("crypt_valdris").replace("crypt_valdris", "crypt_plain");
        let before = std::fs::read_dir(&zones).expect("zones").count();
        let r = send("", "/api/zones", "text/plain", &zone);
        assert_eq!(r.status, 415, "{}", r.text());
        assert_eq!(
            std::fs::read_dir(&zones).expect("zones").count(),
            before,
            "nothing written"
        );
        // A page may not be framed, sniffed or referred from; an API answer not sniffed.
        let page = Conn::connect(server.addr)
            .expect("connect")
            .get("/")
            .expect("page");
        assert_eq!(page.status, 200, "{}", page.text());
        // (The viewer's pages have a whole policy of their own, `http::page_policy`; this
        // is the page a server without a built viewer answers with.)
        assert_eq!(
            page.header("content-security-policy"),
            Some("default-src 'none'; frame-ancestors 'none'")
        );
        assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
        let api = Conn::connect(server.addr)
            .expect("connect")
            .get("/healthz")
            .expect("health");
        assert_eq!(api.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(api.header("content-security-policy"), None);
        server.stop().expect("stops");
    }
}
