//! The built viewer's files: run links fall back to the run page, the designer's routes to
//! its index.html, precompressed twins chosen by Accept-Encoding, cached by content hash.

use std::path::{Path, PathBuf};

use super::get_encoded;
use crate::support::Ctx;

/// A built viewer as `trunk build` lays it out: the designer's index.html and hashed assets
/// with their .br/.gz twins, and the run page's own build under run-page/.
fn fake_dist(dir: &Path) -> PathBuf {
    let web = dir.join("dist");
    std::fs::create_dir_all(web.join("run-page")).expect("dist");
    let write = |rel: &str, body: &[u8]| std::fs::write(web.join(rel), body).expect(rel);
    write("index.html", b"<!doctype html><title>viewer</title>");
    write("index.html.br", b"br index");
    write(
        "run-page/index.html",
        b"<!doctype html><title>run page</title>",
    );
    write("run-page/index.html.gz", b"gz run page");
    write("zonegraph-web-0123456789abcdef.js", b"console.log(1)");
    write("zonegraph-web-0123456789abcdef.js.br", b"br js");
    write("zonegraph-web-0123456789abcdef.js.gz", b"gz js");
    write("zonegraph-web-0123456789abcdef_bg.wasm", b"\0asm");
    write("zonegraph-web-0123456789abcdef_bg.wasm.gz", b"gz wasm");
    write("notes.txt", b"plain");
    web
}

#[test]
fn the_viewer_is_served_with_run_links_falling_back_to_the_app() {
    let dir = tempfile::tempdir().expect("temp dir");
    let web = fake_dist(dir.path());
    std::fs::write(dir.path().join("secret.txt"), "do not serve").expect("secret");
    let (_server, mut c) = Ctx::new(dir.path()).with(|c| c.web = web).spawn();
    // A run link is the run page's own HTML; the designer's routes are its index.html.
    let r = c
        .get("/run/0123456789abcdef0123456789abcdef")
        .expect("run page");
    assert_eq!(r.status, 200);
    assert!(r.text().contains("<title>run page</title>"), "{}", r.text());
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    for route in ["/", "/gallery", "/some/app/route"] {
        let r = c.get(route).expect("app route");
        assert!(
            r.text().contains("<title>viewer</title>"),
            "{route}: {}",
            r.text()
        );
        assert_eq!(r.header("cache-control"), Some("no-cache"), "{route}");
    }
    let r = c.get("/zonegraph-web-0123456789abcdef.js").expect("js");
    assert_eq!(r.header("content-type"), Some("text/javascript"));
    assert_eq!(r.text(), "console.log(1)");
    for bad in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/.hidden",
        "/missing.js",
        "/run-page/../../secret.txt",
    ] {
        let r = c.get(bad).expect("request");
        assert_eq!(r.status, 404, "{bad}: {}", r.text());
        assert!(!r.text().contains("do not serve"));
    }
}

#[test]
fn trunk_content_hashes_are_told_from_plain_names() {
    use zonegraph_server::http::is_hashed;
    for hashed in [
        "zonegraph-web-0123456789abcdef.js",
        "run-page/zonegraph-run-a3e765422aa832f_bg.wasm",
        "style-5afae6860a0200a6.css",
    ] {
        assert!(is_hashed(hashed), "{hashed}");
    }
    for plain in [
        "index.html",
        "run-page/index.html",
        "notes.txt",
        "my-file.js",
        "a-beef.css",
    ] {
        assert!(!is_hashed(plain), "{plain}");
    }
}

#[test]
fn viewer_files_are_served_precompressed_and_cached_by_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path())
        .with(|c| c.web = fake_dist(dir.path()))
        .spawn();
    let immutable = Some("public, max-age=31536000, immutable");
    let js = "/zonegraph-web-0123456789abcdef.js";
    // Brotli when the browser takes it, else gzip, else the file itself.
    for (accept, encoding, body) in [
        ("gzip, deflate, br", Some("br"), "br js"),
        ("gzip", Some("gzip"), "gz js"),
        ("", None, "console.log(1)"),
    ] {
        let r = get_encoded(&mut c, js, accept);
        assert_eq!(r.status, 200, "{accept}");
        assert_eq!(r.header("content-encoding"), encoding, "{accept}");
        assert_eq!(r.text(), body, "{accept}");
        assert_eq!(
            r.header("content-type"),
            Some("text/javascript"),
            "{accept}"
        );
        assert_eq!(r.header("cache-control"), immutable, "{accept}");
        assert_eq!(r.header("vary"), Some("accept-encoding"), "{accept}");
    }
    // A wasm with only a gzip twin: gzip for a browser that takes both.
    let r = get_encoded(
        &mut c,
        "/zonegraph-web-0123456789abcdef_bg.wasm",
        "br, gzip",
    );
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.header("content-type"), Some("application/wasm"));
    assert_eq!(r.header("cache-control"), immutable);
    // HTML is compressed too, and always revalidated.
    let r = get_encoded(&mut c, "/", "br");
    assert_eq!(r.header("content-encoding"), Some("br"));
    assert_eq!(r.text(), "br index");
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    let r = get_encoded(&mut c, "/run/0123456789abcdef0123456789abcdef", "gzip, br");
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.text(), "gz run page");
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    // A name without a content hash is revalidated.
    let r = get_encoded(&mut c, "/notes.txt", "br");
    assert_eq!(r.header("content-encoding"), None);
    assert_eq!(r.header("cache-control"), Some("no-cache"));
}
