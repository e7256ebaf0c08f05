//! Scoped API tokens, made with the real `zonegraph token` command on the server's own
//! database while the server runs: each scope does what it says and nothing else, a refusal
//! changes nothing, a revoked token is refused within seconds, and hostile tokens (garbage,
//! our shape with a wrong secret, huge) get a clear 401. And `--allow-origin`: the one site
//! allowed passes the cross-site check with CORS, every other stays refused.

use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zonegraph_server::server::Auth;
use zonegraph_tests::client::{Conn, Response};

use crate::support::{self, Ctx};

const OPERATOR: &str = "operator-s3cret";
const ADMIN_USER: &str = "discord:boss";

/// `zonegraph token ARGS… --db DB`.
pub(crate) fn token_cmd(db: &str, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_zonegraph-under-test"))
        .arg("token")
        .args(["--db", db])
        .args(args)
        .env_remove("ZONEGRAPH_DATABASE_URL")
        .output()
        .expect("zonegraph token runs")
}

/// A new token of `scope` on `db`, as `zonegraph token new` prints it.
pub(crate) fn new_token(db: &str, scope: &str) -> String {
    let out = token_cmd(db, &["new", "--scope", scope, "--label", "test"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(token.starts_with("zgt_"), "{token}");
    token
}

fn command(c: &mut Conn, token: &str, user: &str, text: &str) -> Response {
    c.command(user, text, Some(token)).expect("request")
}

fn publish(c: &mut Conn, token: &str, text: &str) -> Response {
    let auth = format!("Bearer {token}");
    c.request(
        "POST",
        "/api/zones",
        &[
            ("content-type", "application/json"),
            ("authorization", &auth),
        ],
        text.as_bytes(),
    )
    .expect("publish")
}

fn with(c: &mut Conn, token: &str, method: &str, path: &str, body: &Value) -> Response {
    let auth = format!("Bearer {token}");
    c.request(
        method,
        path,
        &[
            ("content-type", "application/json"),
            ("authorization", &auth),
        ],
        body.to_string().as_bytes(),
    )
    .expect("request")
}

fn error_of(r: &Response) -> String {
    r.json()["error"].as_str().unwrap_or_default().to_string()
}

/// Whether `user` has a run, as the operator asks.
fn has_run(c: &mut Conn, user: &str) -> bool {
    let r = command(c, OPERATOR, user, "!zone status");
    assert_eq!(r.status, 200, "{}", r.text());
    !support::replies(&r.json()).contains("not in a zone")
}

fn copy_zone(id: &str) -> String {
    support::zone_text("crypt_valdris")
        .replace("\"crypt_valdris", &format!("\"{id}"))
        .replace("Crypt of Valdris", "Copied Crypt")
}

#[test]
fn each_scoped_token_does_only_what_its_scope_says() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zones = support::copy_zones(dir.path());
    let db_path = dir.path().join("z.db");
    let db = db_path.to_string_lossy().into_owned();
    let server = Ctx::new(dir.path())
        .zones(zones.clone())
        .auth(Auth::Token(OPERATOR.into()))
        .with(|c| c.admins = vec![ADMIN_USER.into()])
        .start();
    // Made while the server runs: each works at its first use.
    let publish_t = new_token(&db, "publish");
    let discord = new_token(&db, "transport:discord:");
    let admin = new_token(&db, "admin");
    let mut c = Conn::connect(server.addr).expect("connect");

    // publish: publishes and lists; never plays, never withdraws.
    let r = publish(&mut c, &publish_t, &copy_zone("crypt_studio"));
    assert_eq!(r.status, 200, "{}", r.text());
    let r = with(
        &mut c,
        &publish_t,
        "GET",
        "/api/zones/crypt_studio/versions",
        &json!(null),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let source = r.json()["versions"][0]["source"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let publish_id = &publish_t[4..12];
    assert!(
        source.contains(&format!("zgt_{publish_id}")),
        "the version names its token: {source}"
    );
    assert_eq!(
        with(&mut c, &publish_t, "GET", "/api/zones", &json!(null)).status,
        200
    );
    let r = command(&mut c, &publish_t, "@p:test", "!zone enter crypt_valdris");
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(error_of(&r).contains("publish token"), "{}", error_of(&r));
    assert!(
        !has_run(&mut c, "@p:test"),
        "a refused command changes nothing"
    );
    let r = with(
        &mut c,
        &publish_t,
        "DELETE",
        "/api/zones/crypt_studio",
        &json!(null),
    );
    assert_eq!(r.status, 403, "{}", r.text());

    // transport:discord: acts as discord users only, never as an admin, and not on zones.
    let r = command(&mut c, &discord, "discord:42", "!zone enter crypt_valdris");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(has_run(&mut c, "discord:42"));
    for user in ["@a:test", "x-discord:42", ADMIN_USER] {
        let r = command(&mut c, &discord, user, "!zone enter crypt_valdris");
        assert_eq!(r.status, 403, "{user}: {}", r.text());
        assert!(
            error_of(&r).contains("nothing was changed"),
            "{}",
            error_of(&r)
        );
        assert!(!has_run(&mut c, user), "{user}");
    }
    let r = with(
        &mut c,
        &discord,
        "POST",
        "/api/notices",
        &json!({"user": "@a:test"}),
    );
    assert_eq!(r.status, 403, "{}", r.text());
    let r = with(
        &mut c,
        &discord,
        "POST",
        "/api/notices",
        &json!({"user": "discord:42"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let r = publish(&mut c, &discord, &copy_zone("crypt_transport"));
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(
        !zones.join("crypt_transport.json").exists(),
        "nothing written"
    );

    // admin: everything.
    let r = command(&mut c, &admin, ADMIN_USER, "!zone enter crypt_valdris");
    assert_eq!(r.status, 200, "{}", r.text());
    let r = with(
        &mut c,
        &admin,
        "DELETE",
        "/api/zones/crypt_studio",
        &json!(null),
    );
    assert_eq!(r.status, 200, "{}", r.text());

    // Revoked: every use refused within seconds, and told as revoked.
    let out = token_cmd(&db, &["revoke", &publish_t[..12]]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = Instant::now();
    let refused = loop {
        let r = with(&mut c, &publish_t, "GET", "/api/zones", &json!(null));
        if r.status == 401 || start.elapsed() > Duration::from_secs(5) {
            break r;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(refused.status, 401, "{}", refused.text());
    assert!(
        error_of(&refused).contains("revoked"),
        "{}",
        error_of(&refused)
    );
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    // Again is no news.
    let again = token_cmd(&db, &["revoke", publish_id]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("nothing was changed"));

    // Hostile tokens: each a plain 401, the server still answering the others.
    let huge = format!("zgt_{}", "a".repeat(6000));
    let wrong_secret = format!("{}{}", &discord[..13], "0".repeat(32));
    for bad in [
        "zgt_",
        "zgt_zzzzzzzz_",
        "Bearer",
        wrong_secret.as_str(),
        huge.as_str(),
        "ünïcödé",
    ] {
        let r = command(&mut c, bad, "discord:42", "!zone status");
        assert_eq!(r.status, 401, "{bad:.20}: {}", r.text());
        assert!(
            error_of(&r).contains("wrong bearer token"),
            "{}",
            error_of(&r)
        );
    }
    assert_eq!(
        command(&mut c, &discord, "discord:42", "!zone status").status,
        200
    );

    // The list shows ids and scopes, never a token.
    let out = token_cmd(&db, &["list"]);
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(listed.contains("3 token(s), 2 active"), "{listed}");
    assert!(listed.contains("transport:discord:"), "{listed}");
    for t in [&publish_t, &discord, &admin] {
        assert!(!listed.contains(&t[13..]), "a secret is listed: {listed}");
    }
    // A scope that is none is refused before anything is written.
    let out = token_cmd(&db, &["new", "--scope", "root"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown scope"));
    let out = token_cmd(&db, &["new", "--scope", "transport:"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs the prefix"));
    let listed = String::from_utf8_lossy(&token_cmd(&db, &["list"]).stdout).to_string();
    assert!(listed.contains("3 token(s)"), "{listed}");
    server.stop().expect("stops");
}

/// `--allow-origin https://game.example`: that site's pages pass (with CORS headers, and a
/// preflight answered); any other site, `null` and a look-alike stay refused.
#[test]
fn an_allowed_origin_passes_the_cross_site_check_and_no_other_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Ctx::new(dir.path())
        .auth(Auth::Token(OPERATOR.into()))
        .with(|c| c.allow_origins = vec!["https://game.example".into()])
        .start();
    let mut c = Conn::connect(server.addr).expect("connect");
    let body = json!({"user": "@o:test", "text": "!zone help"}).to_string();
    let auth = format!("Bearer {OPERATOR}");
    let send = |c: &mut Conn, origin: &str| {
        c.request(
            "POST",
            "/api/command",
            &[
                ("content-type", "application/json"),
                ("authorization", &auth),
                ("origin", origin),
                ("sec-fetch-site", "cross-site"),
            ],
            body.as_bytes(),
        )
        .expect("request")
    };
    let r = send(&mut c, "https://game.example");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("https://game.example")
    );
    for other in [
        "https://evil.example",
        "null",
        "https://game.example.evil.example",
        "http://game.example",
    ] {
        let r = send(&mut c, other);
        assert_eq!(r.status, 403, "{other}: {}", r.text());
        assert_eq!(r.header("access-control-allow-origin"), None, "{other}");
    }
    let pre = c
        .request(
            "OPTIONS",
            "/api/command",
            &[
                ("origin", "https://game.example"),
                ("access-control-request-method", "POST"),
                (
                    "access-control-request-headers",
                    "authorization, content-type",
                ),
            ],
            b"",
        )
        .expect("preflight");
    assert!(pre.status < 300, "{}: {}", pre.status, pre.text());
    assert_eq!(
        pre.header("access-control-allow-origin"),
        Some("https://game.example")
    );
    let allowed = pre
        .header("access-control-allow-headers")
        .unwrap_or_default();
    assert!(
        allowed.contains("authorization") && allowed.contains("content-type"),
        "{allowed}"
    );
    server.stop().expect("stops");

    // What is not one origin is refused at the command line, saying why.
    for (bad, says) in [
        ("*", "not *"),
        ("null", "not null"),
        ("https://game.example/path", "no path"),
        ("ftp://game.example", "http:// or https://"),
        ("game.example", "scheme://host"),
    ] {
        let e = zonegraph_server::server::parse_origin(bad).expect_err(bad);
        assert!(e.contains(says), "{bad}: {e}");
    }
    assert_eq!(
        zonegraph_server::server::parse_origin("HTTPS://Game.Example:8443/").as_deref(),
        Ok("https://game.example:8443")
    );
}

/// A made-up token is refused at once (never parked for the next read of the tokens), and a
/// token made just after it, while the once-a-second read is taken, works at its first use,
/// as do a new token's first requests sent at once (as the studio sends them).
#[test]
fn an_unknown_token_is_refused_at_once_and_a_new_one_works_at_its_first_use() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Ctx::new(dir.path())
        .auth(Auth::Token(OPERATOR.into()))
        .start();
    let db = dir.path().join("z.db").to_string_lossy().into_owned();
    let mut c = Conn::connect(server.addr).expect("connect");
    for n in 0..3 {
        let made_up = format!("zgt_{n:08x}_{:032x}", 2);
        let started = Instant::now();
        let r = with(&mut c, &made_up, "GET", "/api/zones", &json!(null));
        assert_eq!(r.status, 401, "{}", r.text());
        assert!(
            started.elapsed() < Duration::from_millis(900),
            "parked for {:?}",
            started.elapsed()
        );
    }
    let token = new_token(&db, "publish");
    let r = with(&mut c, &token, "GET", "/api/zones", &json!(null));
    assert_eq!(r.status, 200, "a new token after a miss: {}", r.text());
    let token = new_token(&db, "publish");
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let token = token.clone();
                s.spawn(move || {
                    let mut c = Conn::connect(server.addr).expect("connect");
                    with(&mut c, &token, "GET", "/api/zones", &json!(null)).status
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a request"))
            .collect()
    });
    assert_eq!(statuses, vec![200; 8]);
}
