#!/usr/bin/env python3
"""A host game for `zonegraph serve --host-hook http://127.0.0.1:8765`: Python stdlib only.

It keeps each player's sheet in memory and decides encounters with a coin toss weighted by
level, so you can watch zonegraph hand both decisions over. Run it, then start the server:

    python3 examples/host.py &
    ZONEGRAPH_HOST_HOOK_TOKEN=let-me-in zonegraph serve --host-hook http://127.0.0.1:8765

It also takes zonegraph's events (`--events-url http://127.0.0.1:8765/events`, with the same
ZONEGRAPH_EVENTS_SECRET on both sides): each is checked against its signature, taken once
(by its id), and a key a room grants goes into the player's sheet.

The contract (docs/guide/game.md, "Host game hook" and "Events out"):
    POST /character {"user"} -> {"level", "scores": {"str", ...}, "keys": [...]}
    POST /encounter {"user", "run_token", "zone_id", "tier", "room", "character"}
                    -> {"outcome": "won" | "lost" | "fled", "message"?, "keys"?}
    POST /events    {"id", "user", "zone_id", "run_token", "at_ms", "event"}
                    X-Zonegraph-Signature: t=<ms>,v1=<hex HMAC-SHA256 of "<t>.<body>">
    GET  /events    the events taken so far (to look at)
"""
import hashlib
import hmac
import json
import os
import random
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = os.environ.get("ZONEGRAPH_HOST_HOOK_TOKEN", "")
EVENTS_SECRET = os.environ.get("ZONEGRAPH_EVENTS_SECRET", "").strip().encode()
SHEETS = {}  # user -> sheet
TAKEN = {}  # event id -> body, each event once however often it arrives


def signed(headers, body):
    """Whether the body carries zonegraph's signature, made in the last five minutes."""
    try:
        parts = dict(p.split("=", 1) for p in headers.get("x-zonegraph-signature", "").split(","))
        t = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs(time.time() * 1000 - t) > 5 * 60 * 1000:
        return False  # an old request played again
    mac = hmac.new(EVENTS_SECRET, f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(mac, parts.get("v1", ""))


def take(event):
    """A new event: keys granted in a run join the player's sheet."""
    if event["id"] in TAKEN:
        return
    TAKEN[event["id"]] = event
    e = event["event"]
    if e["event"] == "key_granted":
        keys = sheet(event["user"])["keys"]
        if e["key_id"] not in keys:
            keys.append(e["key_id"])


def sheet(user):
    return SHEETS.setdefault(user, {
        "level": 3,
        "scores": {"str": 14, "dex": 12, "con": 13, "int": 10, "wis": 11, "cha": 9},
        "keys": [],
    })


def encounter(q):
    s = sheet(q["user"])
    room = q["room"]
    odds = min(0.9, 0.4 + 0.05 * s["level"] - 0.05 * q["tier"])
    if random.random() < odds:
        s["level"] = min(20, s["level"] + (1 if room["kind"] == "boss" else 0))
        return {"outcome": "won",
                "message": f"You best the {room['encounter_override'] or room['kind']} "
                           f"of {room['label']}."}
    return {"outcome": "lost",
            "message": f"{room['label']} is too much for you this time."}


class Host(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.endswith("/events"):
            return self.answer(200, [TAKEN[i] for i in sorted(TAKEN)])
        self.answer(404, {"error": "no such route"})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path.endswith("/events"):
            if not EVENTS_SECRET or not signed(self.headers, raw):
                return self.answer(401, {"error": "bad signature"})
            take(json.loads(raw))
            return self.answer(200, {})
        if TOKEN and self.headers.get("authorization") != f"Bearer {TOKEN}":
            return self.answer(401, {"error": "bad token"})
        body = json.loads(raw or b"{}")
        if self.path.endswith("/character"):
            return self.answer(200, sheet(body["user"]))
        if self.path.endswith("/encounter"):
            return self.answer(200, encounter(body))
        self.answer(404, {"error": "no such route"})

    def answer(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    port = int(os.environ.get("PORT", "8765"))
    print(f"host game on http://127.0.0.1:{port}")
    ThreadingHTTPServer(("127.0.0.1", port), Host).serve_forever()
