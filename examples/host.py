#!/usr/bin/env python3
"""A host game for `zonegraph serve --host-hook http://127.0.0.1:8765`: Python stdlib only.

It keeps each player's sheet in memory and decides encounters with a coin toss weighted by
level, so you can watch zonegraph hand both decisions over. Run it, then start the server:

    python3 examples/host.py &
    ZONEGRAPH_HOST_HOOK_TOKEN=let-me-in zonegraph serve --host-hook http://127.0.0.1:8765

The contract (docs/guide/game.md, "Host game hook"):
    POST /character {"user"} -> {"level", "scores": {"str", ...}, "keys": [...]}
    POST /encounter {"user", "run_token", "zone_id", "tier", "room", "character"}
                    -> {"outcome": "won" | "lost" | "fled", "message"?, "keys"?}
"""
import json
import os
import random
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = os.environ.get("ZONEGRAPH_HOST_HOOK_TOKEN", "")
SHEETS = {}  # user -> sheet


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
    def do_POST(self):
        if TOKEN and self.headers.get("authorization") != f"Bearer {TOKEN}":
            return self.answer(401, {"error": "bad token"})
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
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
