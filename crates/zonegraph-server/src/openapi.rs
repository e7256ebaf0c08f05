//! The HTTP API described for its callers: the OpenAPI 3.1 document `GET /api/openapi.json`
//! serves. Bodies that are types (a command's [`Answer`] and its typed events, a run's view, a
//! zone file) are described by their JSON Schemas, generated from the types (schemars), so the
//! document cannot drift from what the server sends; the few small ad-hoc bodies are written
//! here. [`OPERATIONS`] is the one list of what the API offers: the router's paths and this
//! document are checked against each other by a test (`server::api::*`).

use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Value, json};
use zonegraph_core::format::ZoneFile;

use crate::db::Notice;
use crate::store::{Answer, PlayerRun, RunView};

/// Who may call an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Anyone (the run's token in the path is what is secret).
    Open,
    /// A bearer token whose scope allows it (see `zonegraph token new --scope`).
    Token(&'static str),
}

/// A body of a request or an answer: a schema, generated from a type or written here.
type Body = fn(&mut SchemaGenerator) -> Value;

/// One operation of the API.
#[derive(Clone, Copy, Debug)]
pub struct Operation {
    pub method: &'static str,
    pub path: &'static str,
    pub summary: &'static str,
    pub access: Access,
    /// The JSON body it takes, if any.
    pub request: Option<Body>,
    /// The 200 answer.
    pub answer: Body,
    /// The answer's media type (`application/json` but for the event stream and the
    /// metrics).
    pub media: &'static str,
    /// The other statuses it answers, each with `{"error": "..."}` (and what else it says).
    pub errors: &'static [u16],
}

/// Statuses every operation may answer, whatever it does: too many requests in flight, the
/// request took too long.
const ANY: [u16; 2] = [503, 504];

/// Every operation of the API, in the order of the document.
pub const OPERATIONS: &[Operation] = &[
    Operation {
        method: "post",
        path: "/api/command",
        summary: "One chat command of a user: the replies, the typed events, the run after it",
        access: Access::Token("transport:PREFIX (acts as users with that prefix), admin"),
        request: Some(command_body),
        answer: |g| g.subschema_for::<Answer>().to_value(),
        media: "application/json",
        errors: &[401, 403, 408, 413, 415, 422, 429],
    },
    Operation {
        method: "get",
        path: "/api/zones",
        summary: "The zones served, with their newest versions",
        access: Access::Token("publish, transport, admin"),
        request: None,
        answer: |_| zones_list(),
        media: "application/json",
        errors: &[401, 403],
    },
    Operation {
        method: "post",
        path: "/api/zones",
        summary: "Publish a zone file (checked with the zones served first; nothing changes \
                  when it has errors; ?force=true, with the admin scope, when it removes the \
                  room or a way on of players in the zone)",
        access: Access::Token("publish, admin"),
        request: Some(|g| g.subschema_for::<ZoneFile>().to_value()),
        answer: |_| published(),
        media: "application/json",
        errors: &[400, 401, 403, 408, 409, 413, 415, 422],
    },
    Operation {
        method: "get",
        path: "/api/zones/{zone_id}",
        summary: "A served zone's file",
        access: Access::Token("publish, transport, admin"),
        request: None,
        answer: |g| g.subschema_for::<ZoneFile>().to_value(),
        media: "application/json",
        errors: &[401, 403, 404],
    },
    Operation {
        method: "delete",
        path: "/api/zones/{zone_id}",
        summary: "Withdraw a zone on every instance (?force=true while players have runs there)",
        access: Access::Token("admin"),
        request: None,
        answer: |_| withdrawn(),
        media: "application/json",
        errors: &[400, 401, 403, 404, 409, 422],
    },
    Operation {
        method: "get",
        path: "/api/zones/{zone_id}/versions",
        summary: "Every version of a zone, oldest first",
        access: Access::Token("publish, transport, admin"),
        request: None,
        answer: |_| {
            object(
                &[
                    ("zone_id", json!({"type": "string"})),
                    ("versions", array(version())),
                ],
                &["zone_id", "versions"],
            )
        },
        media: "application/json",
        errors: &[401, 403, 404],
    },
    Operation {
        method: "get",
        path: "/api/zones/{zone_id}/insight",
        summary: "What players do in a zone version (`?version=SEQ`, the newest by default; \
                  `?since=YYYY-MM-DD`): reach and drop-off per room, the split at forks, each \
                  lock's observed pass rate against the rules' prediction, routes, the win \
                  rate; counts of 1 to 4, and those a sum would give them back by, read \"hidden\"; \
                  no player named",
        access: Access::Token("publish, admin"),
        request: None,
        answer: |g| {
            g.subschema_for::<crate::store::insight::VersionInsight>()
                .to_value()
        },
        media: "application/json",
        errors: &[400, 401, 403, 404],
    },
    Operation {
        method: "post",
        path: "/api/zones/{zone_id}/review",
        summary: "What publishing this zone file over the served version would do, written \
                  nowhere: the change and the zone's figures before and after (`impact`, as \
                  `zonegraph diff --json`), the players in the zone now whose room or fork it \
                  removes or locks, the most recent ended runs (`--review-runs`) replayed on \
                  it with their own rolls (`left_out`: the older ones not replayed), and all \
                  of that in sentences (`words`). One review of a zone at a time: 429 with \
                  `Retry-After` while another runs",
        access: Access::Token("publish, admin"),
        request: Some(|g| g.subschema_for::<ZoneFile>().to_value()),
        answer: |g| {
            let review = g
                .subschema_for::<zonegraph_core::review::Review>()
                .to_value();
            let mut answer = object(
                &[
                    ("version", json!({"type": "integer"})),
                    (
                        "impact",
                        json!({
                            "type": "object",
                            "description": "renamed, changes, before, after, findings_added, findings_gone: as `zonegraph diff --json` prints"
                        }),
                    ),
                    ("words", array(json!({"type": "string"}))),
                ],
                &[
                    "version", "impact", "players", "replay", "left_out", "words",
                ],
            );
            answer["allOf"] = json!([review]);
            answer
        },
        media: "application/json",
        errors: &[401, 403, 404, 408, 413, 415, 422, 429],
    },
    Operation {
        method: "get",
        path: "/api/runs/{token}",
        summary: "What a run's page shows: the player view and the status words",
        access: Access::Open,
        request: None,
        answer: |g| g.subschema_for::<RunView>().to_value(),
        media: "application/json",
        errors: &[404],
    },
    Operation {
        method: "get",
        path: "/api/runs/{token}/events",
        summary: "Server-sent events: one `data:` line per change of the run, each the body \
                  GET /api/runs/{token} would answer then",
        access: Access::Open,
        request: None,
        answer: |g| g.subschema_for::<RunView>().to_value(),
        media: "text/event-stream",
        errors: &[404],
    },
    Operation {
        method: "get",
        path: "/api/players/{user}/run",
        summary: "A player's run (active, else the latest): its link and token, and its view",
        access: Access::Token("transport:PREFIX (users with that prefix), admin"),
        request: None,
        answer: |g| g.subschema_for::<PlayerRun>().to_value(),
        media: "application/json",
        errors: &[401, 403, 404, 422],
    },
    Operation {
        method: "post",
        path: "/api/notices",
        summary: "A user's queued notices, oldest first; they come again until acknowledged",
        access: Access::Token("transport:PREFIX, admin"),
        request: Some(|_| object(&[("user", json!({"type": "string"}))], &["user"])),
        answer: |g| {
            let notice = g.subschema_for::<Notice>().to_value();
            object(&[("notices", array(notice))], &["notices"])
        },
        media: "application/json",
        errors: &[401, 403, 408, 413, 415, 422],
    },
    Operation {
        method: "post",
        path: "/api/notices/ack",
        summary: "Notices delivered: they leave the queue",
        access: Access::Token("transport:PREFIX, admin"),
        request: Some(|_| {
            object(
                &[
                    ("user", json!({"type": "string"})),
                    ("ids", array(json!({"type": "integer"}))),
                ],
                &["user", "ids"],
            )
        }),
        answer: |_| {
            object(
                &[("acknowledged", json!({"type": "integer"}))],
                &["acknowledged"],
            )
        },
        media: "application/json",
        errors: &[401, 403, 408, 413, 415, 422],
    },
    Operation {
        method: "get",
        path: "/api/openapi.json",
        summary: "This document",
        access: Access::Open,
        request: None,
        answer: |_| json!({"type": "object"}),
        media: "application/json",
        errors: &[],
    },
    Operation {
        method: "get",
        path: "/healthz",
        summary: "200 when a write can be committed, 503 when not (why: to a caller with a token)",
        access: Access::Open,
        request: None,
        answer: |_| {
            object(
                &[
                    ("status", json!({"const": "ok"})),
                    ("zones", json!({"type": "integer"})),
                ],
                &["status", "zones"],
            )
        },
        media: "application/json",
        errors: &[],
    },
    Operation {
        method: "get",
        path: "/metrics",
        summary: "The server's metrics in Prometheus's text format (0.0.4): commands by verb \
                  and outcome, command latency, live streams, the events outbox, the host \
                  game's calls, fork timeouts, Matrix sends (the operator's guide lists them)",
        access: Access::Token("metrics, admin"),
        request: None,
        answer: |_| json!({"type": "string"}),
        media: "text/plain",
        errors: &[401, 403],
    },
];

/// The OpenAPI 3.1 document of [`OPERATIONS`]; the same bytes for the same build.
pub fn document() -> Value {
    let mut settings = SchemaSettings::draft2020_12().for_serialize();
    settings.definitions_path = "/components/schemas".into();
    let mut generator = settings.into_generator();
    let mut paths = serde_json::Map::new();
    for op in OPERATIONS {
        let entry = paths
            .entry(op.path.to_string())
            .or_insert_with(|| json!({}));
        entry[op.method] = operation(op, &mut generator);
    }
    let mut schemas = generator.take_definitions(true);
    schemas.insert(
        "Error".into(),
        object(&[("error", json!({"type": "string"}))], &["error"]),
    );
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "zonegraph",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The zonegraph bot's HTTP API: chat commands as a transport sends \
                them, zones published and withdrawn, runs as their pages show them. Send the \
                token as `Authorization: Bearer TOKEN`; a browser on another site needs the \
                operator's `--allow-origin`.",
        },
        "components": {
            "schemas": schemas,
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
        },
        "paths": paths,
    })
}

fn operation(op: &Operation, g: &mut SchemaGenerator) -> Value {
    let mut responses = serde_json::Map::new();
    responses.insert(
        "200".into(),
        json!({ "description": "OK", "content": { op.media: { "schema": (op.answer)(g) } } }),
    );
    for status in op.errors.iter().chain(&ANY) {
        responses.insert(
            status.to_string(),
            json!({
                "description": reason(*status),
                "content": { "application/json": {
                    "schema": { "$ref": "#/components/schemas/Error" } } },
            }),
        );
    }
    let mut out = json!({
        "summary": op.summary,
        "operationId": operation_id(op),
        "responses": responses,
    });
    let params: Vec<Value> = path_params(op.path)
        .map(|name| {
            json!({"name": name, "in": "path", "required": true,
                           "schema": {"type": "string"}})
        })
        .collect();
    if !params.is_empty() {
        out["parameters"] = Value::Array(params);
    }
    if let Some(body) = op.request {
        out["requestBody"] = json!({
            "required": true,
            "content": { "application/json": { "schema": body(g) } },
        });
    }
    match op.access {
        Access::Open => out["security"] = json!([]),
        Access::Token(scopes) => {
            out["security"] = json!([{ "bearer": [] }]);
            out["description"] = json!(format!("Token scopes allowed: {scopes}."));
        }
    }
    out
}

/// `post_api_notices_ack` for `POST /api/notices/ack`.
fn operation_id(op: &Operation) -> String {
    let mut id = op.method.to_string();
    for part in op.path.split('/').filter(|p| !p.is_empty()) {
        id.push('_');
        id.extend(
            part.chars()
                .filter(|c| !matches!(c, '{' | '}'))
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
        );
    }
    id
}

/// The `{name}` segments of a path.
pub fn path_params(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .filter_map(|p| p.strip_prefix('{').and_then(|p| p.strip_suffix('}')))
}

fn reason(status: u16) -> &'static str {
    match status {
        400 => "Bad request (an unknown query)",
        401 => "No token, or one the server does not know or that was revoked",
        403 => "The token's scope does not allow it, or a page on another site sent it",
        404 => "No such zone, run or player's run",
        409 => "Conflicts with what is there (another zone's file, players in the zone)",
        408 => "The body did not arrive in time (10 s by default)",
        413 => "The body is too large",
        415 => "The body is not application/json",
        422 => "The body does not say what it must (which field, and why)",
        429 => "Too many at once (a user's commands, a zone's reviews): Retry-After says when",
        503 => "The server is busy or cannot write its database",
        504 => "The request took too long",
        _ => "Error",
    }
}

fn object(props: &[(&str, Value)], required: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> = props
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect();
    json!({ "type": "object", "properties": properties, "required": required })
}

fn array(items: Value) -> Value {
    json!({ "type": "array", "items": items })
}

fn command_body(_: &mut SchemaGenerator) -> Value {
    let mut body = object(
        &[
            (
                "user",
                json!({"type": "string", "description": "The chat user id",
                            "examples": ["@alice:example.org"]}),
            ),
            (
                "text",
                json!({"type": "string", "description": "The line they wrote",
                            "examples": ["!zone help"]}),
            ),
        ],
        &["user", "text"],
    );
    body["additionalProperties"] = json!(false);
    body
}

fn version() -> Value {
    let int = json!({"type": "integer"});
    let text = json!({"type": "string"});
    object(
        &[
            ("seq", int.clone()),
            ("content_hash", text.clone()),
            ("withdrawn", json!({"type": "boolean"})),
            ("source", text.clone()),
            ("made_by", text.clone()),
            ("instance", text),
            ("created_at_ms", int),
            ("file_kept", json!({"type": "boolean"})),
        ],
        &[
            "seq",
            "content_hash",
            "withdrawn",
            "source",
            "made_by",
            "instance",
        ],
    )
}

fn zones_list() -> Value {
    let int = json!({"type": "integer"});
    let zone = object(
        &[
            ("zone_id", json!({"type": "string"})),
            ("name", json!({"type": "string"})),
            ("tier", int.clone()),
            ("min_level", int.clone()),
            ("max_level", int.clone()),
            ("rooms", int.clone()),
            ("passages", int.clone()),
            ("version", json!({"oneOf": [version(), {"type": "null"}]})),
        ],
        &["zone_id", "name", "rooms", "passages"],
    );
    object(
        &[("zones", array(zone)), ("sequence", int)],
        &["zones", "sequence"],
    )
}

fn published() -> Value {
    object(
        &[
            (
                "published",
                json!({"type": "string", "description": "The zone id"}),
            ),
            ("file", json!({"type": "string"})),
            ("replaced", json!({"type": "boolean"})),
            ("seq", json!({"type": "integer"})),
            ("unchanged", json!({"type": "boolean"})),
            (
                "players_affected",
                json!({"type": "integer",
                "description": "Players whose room or way on the new version removes (forced)"}),
            ),
            ("zones", json!({"type": "integer"})),
            (
                "findings",
                json!({"type": "object",
                "description": "Warnings, in `zonegraph check --json`'s shape"}),
            ),
            ("warning", json!({"type": ["string", "null"]})),
        ],
        &["published", "file", "replaced", "seq", "zones"],
    )
}

fn withdrawn() -> Value {
    object(
        &[
            (
                "withdrawn",
                json!({"type": "string", "description": "The zone id"}),
            ),
            ("seq", json!({"type": "integer"})),
            ("players_told", json!({"type": "integer"})),
            ("zones", json!({"type": "integer"})),
        ],
        &["withdrawn", "seq", "players_told", "zones"],
    )
}
