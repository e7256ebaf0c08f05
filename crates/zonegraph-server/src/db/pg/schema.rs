//! PostgreSQL's schema: the same tables and columns as SQLite's in PostgreSQL's types, the
//! versioned migrations, and the notify trigger that wakes other instances.

use crate::db::{ACTIVE_INDEX, RUN_COLUMNS};
/// The advisory lock key the migrations hold ("zonegraph" in ASCII, cut to 63 bits): every
/// instance that starts takes it before reading the schema version, so each migration runs
/// once however many start together.
pub(super) const MIGRATION_LOCK: i64 = 0x7a6f_6e65_6772_6170;

/// The schema version table (SQLite keeps it in `PRAGMA user_version`).
pub(super) const VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS zonegraph_schema (
    id      BIGINT PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
)";

/// Version 1: as SQLite's, in PostgreSQL's types.
const SCHEMA_V1: &str = r#"
CREATE TABLE zone_node (
    node_id        TEXT PRIMARY KEY,
    zone_id        TEXT NOT NULL,
    region_id      TEXT NOT NULL DEFAULT '',
    kind           TEXT NOT NULL,
    label          TEXT NOT NULL DEFAULT '',
    is_entry       BIGINT NOT NULL DEFAULT 0,
    is_boss        BIGINT NOT NULL DEFAULT 0,
    pos_x          BIGINT NOT NULL DEFAULT 0,
    pos_y          BIGINT NOT NULL DEFAULT 0,
    content_json   TEXT NOT NULL DEFAULT '{}',
    seq            BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX idx_zone_node_zone ON zone_node(zone_id);

CREATE TABLE zone_edge (
    edge_id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    zone_id        TEXT NOT NULL,
    from_node      TEXT NOT NULL,
    to_node        TEXT NOT NULL,
    lock_kind      TEXT NOT NULL DEFAULT 'none',
    lock_data_json TEXT NOT NULL DEFAULT '{}',
    hint           TEXT NOT NULL DEFAULT '',
    weight         BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX idx_zone_edge_from ON zone_edge(zone_id, from_node);

CREATE TABLE zone_meta (
    zone_id        TEXT PRIMARY KEY,
    ord            BIGINT NOT NULL,
    name           TEXT NOT NULL,
    tier           BIGINT NOT NULL,
    min_level      BIGINT NOT NULL,
    max_level      BIGINT NOT NULL,
    regions_json   TEXT NOT NULL DEFAULT '[]',
    allow_loops    BIGINT NOT NULL DEFAULT 0,
    legacy         BIGINT NOT NULL DEFAULT 0,
    source_file    TEXT NOT NULL DEFAULT '',
    imported_at_ms BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE player_character (
    user_id        TEXT PRIMARY KEY,
    level          BIGINT NOT NULL DEFAULT 1,
    str            BIGINT NOT NULL DEFAULT 10,
    dex            BIGINT NOT NULL DEFAULT 10,
    con            BIGINT NOT NULL DEFAULT 10,
    int            BIGINT NOT NULL DEFAULT 10,
    wis            BIGINT NOT NULL DEFAULT 10,
    cha            BIGINT NOT NULL DEFAULT 10,
    keys_json      TEXT NOT NULL DEFAULT '[]',
    updated_at_ms  BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE zone_notice (
    notice_id       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id         TEXT NOT NULL,
    run_id          TEXT NOT NULL DEFAULT '',
    text            TEXT NOT NULL,
    html            TEXT NOT NULL,
    created_at_ms   BIGINT NOT NULL,
    delivered_at_ms BIGINT
);
CREATE INDEX idx_zone_notice_user ON zone_notice(user_id, delivered_at_ms);

CREATE TABLE dnd_zone_run (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id        TEXT NOT NULL,
    zone_id        TEXT NOT NULL
);
"#;

/// The run columns (SQLite's list, in PostgreSQL's types) and the run table's indexes: what
/// SQLite's migrations 2 and 4 end with. No legacy table comes to PostgreSQL, so there is
/// nothing to carry over.
fn run_columns_sql() -> String {
    let mut sql = String::new();
    for (name, decl) in RUN_COLUMNS {
        sql.push_str(&format!(
            "ALTER TABLE dnd_zone_run ADD COLUMN IF NOT EXISTS {name} {};\n",
            pg_types(decl)
        ));
    }
    sql.push_str(
        "CREATE UNIQUE INDEX IF NOT EXISTS idx_zone_run_run_id ON dnd_zone_run(run_id);
         CREATE UNIQUE INDEX IF NOT EXISTS idx_zone_run_link ON dnd_zone_run(link_token);
         CREATE INDEX IF NOT EXISTS idx_zone_run_user ON dnd_zone_run(user_id);
         CREATE INDEX IF NOT EXISTS idx_zone_run_fork
           ON dnd_zone_run(fork_created_at_ms) WHERE fork_created_at_ms IS NOT NULL;
         CREATE UNIQUE INDEX IF NOT EXISTS idx_zone_run_active
           ON dnd_zone_run(user_id) WHERE outcome = '' AND current_node != '';",
    );
    sql
}

/// SQLite's column types in PostgreSQL's: every `INTEGER` is a `BIGINT` (the rest of the SQL
/// of migrations 3, 5 and 6 means the same on both, so it is written once, in `schema`).
fn pg_types(sql: &str) -> String {
    sql.replace("INTEGER", "BIGINT")
}

/// The migrations, one per SQLite version (the same numbers: version `i + 1` after
/// migration `i`).
pub(super) fn migrations() -> [String; 15] {
    [
        SCHEMA_V1.to_string(),
        run_columns_sql(),
        pg_types(crate::db::schema::SCHEMA_V3),
        run_columns_sql(),
        pg_types(crate::db::schema::SCHEMA_V5),
        pg_types(crate::db::schema::SCHEMA_V6),
        // Version 7, as SQLite's: the one-active-run index under our own name.
        format!(
            "CREATE UNIQUE INDEX IF NOT EXISTS {ACTIVE_INDEX}
               ON dnd_zone_run(user_id) WHERE outcome = '' AND current_node != '';
             DROP INDEX IF EXISTS idx_zone_run_active;"
        ),
        // Version 8: zone versions, as SQLite's, and the wake-up every instance listens
        // for: a notification at the commit of any change to runs, sheets or zones.
        format!(
            "{}ALTER TABLE dnd_zone_run ADD COLUMN IF NOT EXISTS zone_file_seq BIGINT;{NOTIFY_TRIGGERS}",
            pg_types(crate::db::schema::SCHEMA_V8),
        ),
        // Version 9: the ended runs' history, as SQLite's; and no notification inside the
        // players' transactions any more (see [`Pg::played`]): a transaction that notifies
        // commits under a lock of the whole cluster, one at a time, which cut the commit
        // rate by two thirds (BENCHMARKS.md). The zone sequence's trigger stays (rare).
        format!(
            "{}DROP TRIGGER IF EXISTS zonegraph_run_changed ON dnd_zone_run;
             DROP TRIGGER IF EXISTS zonegraph_sheet_changed ON player_character;",
            pg_types(crate::db::schema::SCHEMA_V9)
        ),
        // Version 10: scoped API tokens, as SQLite's.
        pg_types(crate::db::schema::SCHEMA_V10),
        // Version 11: the names of keys and harvests, as SQLite's.
        pg_types(crate::db::schema::SCHEMA_V11),
        // Version 12: the events outbox, as SQLite's (an identity key for AUTOINCREMENT).
        pg_types(crate::db::schema::SCHEMA_V12).replace(
            "event_id         BIGINT PRIMARY KEY AUTOINCREMENT",
            "event_id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
        ),
        // Version 13: the history keeps a run's way through the zone, as SQLite's.
        pg_types(crate::db::schema::SCHEMA_V13),
        // Version 14: the outbox's dead letters, as SQLite's.
        pg_types(crate::db::schema::SCHEMA_V14),
        // Version 15: the runs of a version by start, as SQLite's.
        pg_types(crate::db::schema::SCHEMA_V15),
    ]
}

/// The channel every instance listens on ([`CHANNEL`]) is told, at the commit of a
/// statement that changed a run, a sheet or the zone sequence, the table's name: a wake-up
/// only (the rows are the truth, and a listener that missed it catches up by polling).
/// Since version 9 only the zone sequence's trigger is left; runs and sheets are told by
/// [`Pg::played`].
const NOTIFY_TRIGGERS: &str = "
CREATE OR REPLACE FUNCTION zonegraph_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('zonegraph', TG_TABLE_NAME);
    RETURN NULL;
END
$$;
CREATE TRIGGER zonegraph_run_changed AFTER INSERT OR UPDATE ON dnd_zone_run
    FOR EACH STATEMENT EXECUTE FUNCTION zonegraph_notify();
CREATE TRIGGER zonegraph_sheet_changed AFTER INSERT OR UPDATE ON player_character
    FOR EACH STATEMENT EXECUTE FUNCTION zonegraph_notify();
CREATE TRIGGER zonegraph_zones_changed AFTER UPDATE ON zone_version
    FOR EACH STATEMENT EXECUTE FUNCTION zonegraph_notify();
";
