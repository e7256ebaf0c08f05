//! Notices: the sweeper picks for an idle player at a fork and queues a notice, handed out
//! before the next reply until it is acknowledged.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Ctx, say, take_notices};

#[test]
fn the_sweeper_picks_for_an_idle_player_and_queues_a_notice() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path())
        .fork_timeout(Duration::from_millis(300))
        .spawn();
    let user = "@idle:test";
    say(&mut c, user, "!zone enter crypt_valdris");
    say(&mut c, user, "!zone advance");
    say(&mut c, user, "!zone advance");
    let deadline = Instant::now() + Duration::from_secs(10);
    let notices = loop {
        let list = take_notices(&mut c, user);
        if !list.is_empty() || Instant::now() > deadline {
            break list;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(notices.len(), 1, "{notices:?}");
    let text = notices[0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("option 1 was picked for you: Main Hall"),
        "{text}"
    );
    // Not acknowledged yet: handed out again, and before the next command's replies.
    assert_eq!(take_notices(&mut c, user), notices);
    let r = c
        .command(user, "!zone status", None)
        .expect("status")
        .json();
    assert_eq!(
        r["notices"].as_array().cloned().unwrap_or_default(),
        notices
    );
    assert!(
        r["replies"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("You are in Main Hall"),
        "{r}"
    );
    // Acknowledged: delivered once.
    let ack = c
        .post_json(
            "/api/notices/ack",
            &serde_json::json!({ "user": user, "ids": [notices[0]["id"]] }),
        )
        .expect("ack");
    assert_eq!(ack.status, 200, "{}", ack.text());
    assert_eq!(ack.json()["acknowledged"], 1);
    assert_eq!(take_notices(&mut c, user), Vec::<Value>::new());
    let r = c
        .command(user, "!zone status", None)
        .expect("status")
        .json();
    assert_eq!(r["notices"], serde_json::json!([]));
}

#[test]
fn queued_notices_come_before_the_next_reply() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, mut c) = Ctx::new(dir.path())
        .fork_timeout(Duration::from_millis(200))
        .spawn();
    let user = "@later:test";
    say(&mut c, user, "!zone enter crypt_valdris");
    say(&mut c, user, "!zone advance");
    say(&mut c, user, "!zone advance");
    // Either the sweeper queued the notice or the command applies the timeout itself:
    // the player hears about it first, exactly once.
    std::thread::sleep(Duration::from_millis(1200));
    let answer = c
        .command(user, "!zone status", None)
        .expect("status")
        .json();
    let texts = |a: &Value, key: &str| -> Vec<String> {
        a[key]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|r| r["text"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    // Queued notices (with ids, to acknowledge) come before the replies.
    let shown: Vec<String> = [texts(&answer, "notices"), texts(&answer, "replies")].concat();
    assert_eq!(shown.len(), 2, "{answer}");
    assert!(shown[0].contains("picked for you"), "{answer}");
    assert!(shown[1].contains("You are in Main Hall"), "{answer}");
    let ids: Vec<Value> = answer["notices"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|n| n["id"].clone())
        .collect();
    c.post_json(
        "/api/notices/ack",
        &serde_json::json!({ "user": user, "ids": ids }),
    )
    .expect("ack");
    let again = c
        .command(user, "!zone status", None)
        .expect("status")
        .json();
    assert_eq!(
        texts(&again, "notices").len() + texts(&again, "replies").len(),
        1,
        "{again}"
    );
}
