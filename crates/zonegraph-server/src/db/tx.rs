//! [`Tx`]: everything the store reads and writes for players, notices and the Matrix
//! transport, each statement written once for both databases (see `sql`).

use anyhow::{Context as _, Result};
use zonegraph_core::engine::{Character, Run};

use super::sql::{Conn, Row, Stmt, Value, vals};
use super::{
    GogobeeCharacter, GogobeeProgress, Keys, LegacyColumns, MAX_QUEUED_NOTICES, Notice, RunColumns,
    StoredCharacter, StoredRun, keys_json, random_hex, values,
};

/// One transaction on the bot's rows (or one read). Writes that race are compare-and-sets on
/// a version column (`false`: another writer got there first, recompute); the same contract
/// on both databases, so `crate::store` does not know which one it talks to.
pub struct Tx<'c> {
    pub(super) conn: &'c dyn Conn,
    /// gogobee's old run columns, written beside ours while the table still has them (SQLite
    /// only: a PostgreSQL database never had them).
    legacy: LegacyColumns,
}

impl std::fmt::Debug for Tx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tx").field("legacy", &self.legacy).finish()
    }
}

/// The columns [`run_columns`] reads, in order, keyed by the database's run key.
fn run_select(key: &str) -> String {
    format!(
        "SELECT {key}, user_id, version, link_token, run_id, zone_id,
           current_node, visited_nodes, node_choices, cleared_regions, harvested_nodes,
           keys_granted, revealed_secrets, started_at_ms, last_action_at_ms, completed_at_ms,
           boss_defeated, abandoned, outcome, missed_passages, zone_file_seq FROM dnd_zone_run"
    )
}

fn run_columns(r: &Row) -> Result<RunColumns> {
    Ok(RunColumns {
        id: r.int(0)?,
        user_id: r.text(1)?,
        version: r.int(2)?,
        link_token: r.text(3)?,
        run_id: r.text(4)?,
        zone_id: r.text(5)?,
        current_node: r.text(6)?,
        visited_nodes: r.text(7)?,
        node_choices: r.text(8)?,
        cleared_regions: r.text(9)?,
        harvested_nodes: r.text(10)?,
        keys_granted: r.text(11)?,
        revealed_secrets: r.text(12)?,
        started_at_ms: r.int(13)?,
        last_action_at_ms: r.int(14)?,
        completed_at_ms: r.opt_int(15)?,
        boss_defeated: r.flag(16)?,
        abandoned: r.flag(17)?,
        outcome: r.text(18)?,
        missed_passages: r.text(19)?,
        zone_file_seq: r.opt_int(20)?,
    })
}

/// Unix milliseconds (SQL parameter `?{p}`) as gogobee's DATETIME text, NULL stays NULL
/// (SQLite's `datetime`: gogobee's columns exist only there).
fn datetime_sql(p: usize) -> String {
    format!("CASE WHEN ?{p} IS NULL THEN NULL ELSE datetime(?{p} / 1000, 'unixepoch') END")
}

/// The texts of each column of one row (`zone_notice`'s and `dnd_zone_run`'s lists).
fn texts(rows: Vec<Row>) -> Result<Vec<String>> {
    rows.iter().map(|r| r.text(0)).collect()
}

/// A player's stored character (see [`character_of`]).
fn character_stmt(user: &str) -> Stmt {
    Stmt::new(
        "SELECT level, str, dex, con, int, wis, cha, keys_json, version
         FROM player_character WHERE user_id = ?1",
        vals![user],
    )
}

fn character_of(user: &str, mut rows: Vec<Row>) -> Result<Option<StoredCharacter>> {
    anyhow::ensure!(rows.len() <= 1, "more than one character of {user}");
    let Some(r) = rows.pop() else {
        return Ok(None);
    };
    let mut scores = [10; 6];
    for (i, s) in scores.iter_mut().enumerate() {
        *s = r.small(1 + i)?;
    }
    let Keys { keys, xp } =
        serde_json::from_str(&r.text(7)?).with_context(|| format!("bad keys_json of {user}"))?;
    Ok(Some(StoredCharacter {
        character: Character {
            level: r.small(0)?,
            scores,
            keys,
            xp,
        },
        version: r.int(8)?,
    }))
}

/// A player's active run, or else their latest one (`?1`: the user). Each is found by its
/// key alone (the active one through the one-active-run index) and only that row is read:
/// sorting all of a player's rows (their last 20 ended runs, JSON and all) made a regular's
/// every command read twenty rows (BENCHMARKS.md, "A season's data").
fn player_run_sql(key: &str) -> String {
    format!(
        "{} WHERE {key} = COALESCE(
           (SELECT {key} FROM dnd_zone_run
            WHERE user_id = ?1 AND outcome = '' AND current_node != ''
            ORDER BY {key} DESC LIMIT 1),
           (SELECT {key} FROM dnd_zone_run WHERE user_id = ?1 AND current_node != ''
            ORDER BY {key} DESC LIMIT 1))",
        run_select(key)
    )
}

fn stored_runs(rows: &[Row]) -> Result<Vec<StoredRun>> {
    rows.iter().map(|r| Ok(run_columns(r)?.decode()?)).collect()
}

/// A player's notices not delivered yet, oldest first (see [`notices_of`]).
fn notices_stmt(user: &str) -> Stmt {
    Stmt::new(
        "SELECT notice_id, text, html, created_at_ms, dropped_before FROM zone_notice
         WHERE user_id = ?1 AND delivered_at_ms IS NULL ORDER BY notice_id",
        vals![user],
    )
}

fn notices_of(rows: &[Row]) -> Result<Vec<Notice>> {
    rows.iter()
        .map(|r| {
            Ok(Notice {
                id: r.int(0)?,
                text: r.text(1)?,
                html: r.text(2)?,
                created_at_ms: r.int(3)?,
                dropped_before: r.int(4)?,
            })
        })
        .collect()
}

/// What [`Tx::player_rows`] reads.
#[derive(Debug)]
pub struct PlayerRows {
    pub character: Option<StoredCharacter>,
    pub run: Option<StoredRun>,
    pub notices: Vec<Notice>,
}

impl<'c> Tx<'c> {
    /// A transaction on `conn`, writing gogobee's columns `legacy` beside ours.
    pub fn new(conn: &'c dyn Conn, legacy: LegacyColumns) -> Tx<'c> {
        Tx { conn, legacy }
    }

    fn one(&self, sql: &str, params: &[Value]) -> Result<Option<Row>> {
        let mut rows = self.conn.query(sql, params)?;
        anyhow::ensure!(rows.len() <= 1, "more than one row where one was expected");
        Ok(rows.pop())
    }

    fn runs(&self, filter: &str, params: &[Value]) -> Result<Vec<StoredRun>> {
        let sql = format!("{} {filter}", run_select(self.conn.run_key()));
        stored_runs(&self.conn.query(&sql, params)?)
    }

    /// The player's character, when one was stored.
    pub fn character(&mut self, user: &str) -> Result<Option<StoredCharacter>> {
        let Stmt { sql, params } = character_stmt(user);
        character_of(user, self.conn.query(&sql, &params)?)
    }

    /// What a command reads of its player: the character, the run (active, else the latest)
    /// and the notices not delivered yet, in one batch (one round trip on PostgreSQL).
    pub fn player_rows(&mut self, user: &str) -> Result<PlayerRows> {
        let key = self.conn.run_key();
        let mut rows = self
            .conn
            .query_all(&[
                character_stmt(user),
                Stmt::new(player_run_sql(key), vals![user]),
                notices_stmt(user),
            ])?
            .into_iter();
        let mut next = || {
            rows.next()
                .context("a batch answered fewer statements than it had")
        };
        Ok(PlayerRows {
            character: character_of(user, next()?)?,
            run: stored_runs(&next()?)?.pop(),
            notices: notices_of(&next()?)?,
        })
    }

    /// The player's character in gogobee's tables, when the database has them and a row.
    pub fn gogobee_character(&mut self, user: &str) -> Result<Option<GogobeeCharacter>> {
        if !self.legacy.characters {
            return Ok(None);
        }
        let Some(r) = self.one(
            "SELECT dnd_level, dnd_xp, str_score, dex_score, con_score, int_score, wis_score,
               cha_score, pending_setup
             FROM dnd_character WHERE user_id = ?1",
            &vals![user],
        )?
        else {
            return Ok(None);
        };
        let mut scores = [0; 6];
        for (i, s) in scores.iter_mut().enumerate() {
            *s = r.int(2 + i)?;
        }
        let items = if self.legacy.inventory {
            let vault = if self.legacy.in_vault {
                " AND in_vault = 0"
            } else {
                ""
            };
            texts(self.conn.query(
                &format!(
                    "SELECT name FROM adventure_inventory WHERE user_id = ?1{vault} ORDER BY id"
                ),
                &vals![user],
            )?)?
        } else {
            Vec::new()
        };
        Ok(Some(GogobeeCharacter {
            level: r.int(0)?,
            xp: r.int(1)?,
            scores,
            set_up: r.int(8)? == 0,
            items,
        }))
    }

    /// A set-up gogobee character's progress, for the write-back (`None`: the database has
    /// no gogobee characters, or none set up for `user`).
    pub fn gogobee_progress(&mut self, user: &str) -> Result<Option<GogobeeProgress>> {
        if !self.legacy.characters {
            return Ok(None);
        }
        let Some(r) = self.one(
            "SELECT dnd_level, dnd_xp, class, con_score, hp_max, hp_current
             FROM dnd_character WHERE user_id = ?1 AND pending_setup = 0",
            &vals![user],
        )?
        else {
            return Ok(None);
        };
        Ok(Some(GogobeeProgress {
            level: r.int(0)?,
            xp: r.int(1)?,
            class: r.text(2)?,
            con: r.int(3)?,
            hp_max: r.int(4)?,
            hp_current: r.int(5)?,
        }))
    }

    /// Writes `new` over gogobee's row of `user` if it still holds `old`'s level and XP (as
    /// gogobee's `SaveDnDCharacter` does, with `updated_at`); whether it did.
    pub fn put_gogobee_progress(
        &mut self,
        user: &str,
        old: &GogobeeProgress,
        new: &GogobeeProgress,
    ) -> Result<bool> {
        Ok(self.conn.execute(
            "UPDATE dnd_character SET dnd_level = ?2, dnd_xp = ?3, hp_max = ?4, hp_current = ?5,
               updated_at = CURRENT_TIMESTAMP
             WHERE user_id = ?1 AND dnd_level = ?6 AND dnd_xp = ?7",
            &vals![
                user,
                new.level,
                new.xp,
                new.hp_max,
                new.hp_current,
                old.level,
                old.xp
            ],
        )? == 1)
    }

    /// Stores `c` if the row is still at `version` (`None`: no row yet).
    pub fn put_character_cas(
        &mut self,
        user: &str,
        c: &Character,
        version: Option<i64>,
        now: i64,
    ) -> Result<bool> {
        let stmt = self.character_cas(user, c, version, now)?;
        self.all_hold(&[stmt])
    }

    /// Compare-and-sets sent together (one round trip on PostgreSQL): whether each changed
    /// its one row. When one did not, the others ran all the same, and the caller rolls back.
    pub fn all_hold(&mut self, stmts: &[Stmt]) -> Result<bool> {
        let held = self.conn.execute_all(stmts)?.iter().all(|&n| n == 1);
        if held && !stmts.is_empty() {
            self.conn.played();
        }
        Ok(held)
    }

    /// [`Tx::put_character_cas`] as a statement, for [`Tx::all_hold`].
    pub fn character_cas(
        &self,
        user: &str,
        c: &Character,
        version: Option<i64>,
        now: i64,
    ) -> Result<Stmt> {
        let s = c.scores;
        let mut params = Vec::from(vals![
            user,
            c.level,
            s[0],
            s[1],
            s[2],
            s[3],
            s[4],
            s[5],
            keys_json(c)?,
            now
        ]);
        Ok(match version {
            None => Stmt::new(
                "INSERT INTO player_character (user_id, level, str, dex, con, int, wis, cha,
                   keys_json, updated_at_ms, version)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0)
                 ON CONFLICT (user_id) DO NOTHING",
                params,
            ),
            Some(v) => {
                params.push(v.into());
                Stmt::new(
                    "UPDATE player_character SET level = ?2, str = ?3, dex = ?4, con = ?5,
                       int = ?6, wis = ?7, cha = ?8, keys_json = ?9, updated_at_ms = ?10,
                       version = version + 1
                     WHERE user_id = ?1 AND version = ?11",
                    params,
                )
            }
        })
    }

    /// The player's active run, or else their latest one.
    pub fn player_run(&mut self, user: &str) -> Result<Option<StoredRun>> {
        let sql = player_run_sql(self.conn.run_key());
        Ok(stored_runs(&self.conn.query(&sql, &vals![user])?)?.pop())
    }

    /// The run a link token names.
    pub fn run_by_token(&mut self, token: &str) -> Result<Option<StoredRun>> {
        Ok(self.runs("WHERE link_token = ?1", &vals![token])?.pop())
    }

    /// The run of row `id`.
    pub fn run_by_id(&mut self, id: i64) -> Result<Option<StoredRun>> {
        let key = self.conn.run_key();
        Ok(self.runs(&format!("WHERE {key} = ?1"), &vals![id])?.pop())
    }

    /// Every run row with a graph position, oldest first.
    pub fn all_runs(&mut self) -> Result<Vec<StoredRun>> {
        let key = self.conn.run_key();
        self.runs(&format!("WHERE current_node != '' ORDER BY {key}"), &[])
    }

    /// Inserts a new run for `user` with a fresh link token; `None` when the player has an
    /// active run already (the unique index on active runs refused it: another writer started
    /// one meanwhile, recompute). `rooms`: the rooms on its zone's longest entry-to-boss
    /// route (gogobee's `total_rooms`, while the table has it); `zone_file_seq`: the zone
    /// version it starts on.
    pub fn insert_run(
        &mut self,
        user: &str,
        run: &Run,
        rooms: usize,
        zone_file_seq: Option<i64>,
    ) -> Result<Option<StoredRun>> {
        let token = random_hex()?;
        let stmt = self.run_insert(user, run, rooms, zone_file_seq, &token)?;
        if !self
            .all_hold(&[stmt])
            .with_context(|| format!("cannot store run {}", run.run_id))?
        {
            return Ok(None);
        }
        self.run_by_token(&token)?
            .map(Some)
            .context("a run just stored is not there")
    }

    /// [`Tx::insert_run`] as a statement for [`Tx::all_hold`] (it changes no row when a
    /// unique index refuses it), with `token` (fresh: [`random_hex`]) as its link token.
    pub fn run_insert(
        &self,
        user: &str,
        run: &Run,
        rooms: usize,
        zone_file_seq: Option<i64>,
        token: &str,
    ) -> Result<Stmt> {
        let v = values(run)?;
        let mut params = Vec::from(vals![
            user,
            &run.zone_id,
            &run.run_id,
            token,
            v.current_node,
            v.visited,
            v.choices,
            v.cleared,
            v.harvested,
            v.keys,
            v.revealed,
            run.started_at,
            run.last_action_at,
            run.completed_at,
            run.is_over(),
            run.boss_defeated,
            run.abandoned,
            v.outcome,
            v.fork_created,
            v.missed,
            zone_file_seq,
        ]);
        let (mut cols, mut exprs) = (String::new(), String::new());
        let mut extra = |col: &str, expr: String| {
            cols.push_str(", ");
            cols.push_str(col);
            exprs.push_str(", ");
            exprs.push_str(&expr);
        };
        let l = self.legacy;
        if l.current_room {
            params.push(v.current_room.into());
            extra("current_room", format!("?{}", params.len()));
        }
        if l.room_seq_json {
            extra("room_seq_json", "'[]'".into());
        }
        if l.started_at {
            extra("started_at", datetime_sql(12));
        }
        if l.last_action_at {
            extra("last_action_at", datetime_sql(13));
        }
        if l.completed_at {
            extra("completed_at", datetime_sql(14));
        }
        if l.rooms_traversed {
            extra("rooms_traversed", "json_array_length(?6)".into());
        }
        if l.total_rooms {
            params.push(i64::try_from(rooms)?.into());
            extra("total_rooms", format!("?{}", params.len()));
        }
        let sql = format!(
            "INSERT INTO dnd_zone_run (user_id, zone_id, run_id, link_token, current_node,
               visited_nodes, node_choices, cleared_regions, harvested_nodes, keys_granted,
               revealed_secrets, started_at_ms, last_action_at_ms, completed_at_ms, completed,
               boss_defeated, abandoned, outcome, fork_created_at_ms, missed_passages,
               zone_file_seq, version{cols})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
               ?18, ?19, ?20, ?21, 0{exprs})
             ON CONFLICT DO NOTHING"
        );
        Ok(Stmt::new(sql, params))
    }

    /// Writes `run` over row `id` if it is still at `version` (compare-and-set).
    pub fn update_run_cas(&mut self, id: i64, version: i64, run: &Run) -> Result<bool> {
        let stmt = self.run_cas(id, version, run)?;
        self.all_hold(&[stmt])
    }

    /// [`Tx::update_run_cas`] as a statement, for [`Tx::all_hold`].
    pub fn run_cas(&self, id: i64, version: i64, run: &Run) -> Result<Stmt> {
        let v = values(run)?;
        let mut params = Vec::from(vals![
            id,
            version,
            v.current_node,
            v.visited,
            v.choices,
            v.cleared,
            v.harvested,
            v.keys,
            v.revealed,
            run.last_action_at,
            run.completed_at,
            run.is_over(),
            run.boss_defeated,
            run.abandoned,
            v.outcome,
            v.fork_created,
            v.missed,
        ]);
        let mut legacy = String::new();
        let l = self.legacy;
        if l.current_room {
            params.push(v.current_room.into());
            legacy.push_str(&format!(", current_room = ?{}", params.len()));
        }
        if l.last_action_at {
            legacy.push_str(&format!(", last_action_at = {}", datetime_sql(10)));
        }
        if l.completed_at {
            legacy.push_str(&format!(", completed_at = {}", datetime_sql(11)));
        }
        if l.rooms_traversed {
            legacy.push_str(", rooms_traversed = json_array_length(?4)");
        }
        let key = self.conn.run_key();
        Ok(Stmt::new(
            format!(
                "UPDATE dnd_zone_run SET current_node = ?3, visited_nodes = ?4,
                   node_choices = ?5, cleared_regions = ?6, harvested_nodes = ?7,
                   keys_granted = ?8, revealed_secrets = ?9, last_action_at_ms = ?10,
                   completed_at_ms = ?11, completed = ?12, boss_defeated = ?13, abandoned = ?14,
                   outcome = ?15, fork_created_at_ms = ?16, missed_passages = ?17,
                   version = version + 1{legacy}
                 WHERE {key} = ?1 AND version = ?2"
            ),
            params,
        ))
    }

    /// Users whose active run has a fork offered at or before `offered_by` (the instant
    /// `engine::forks_due_offered_by` gives: the forks due then), sorted, each with their run
    /// row's version (the sweeper's work: a fork it could not pick for stays unread until
    /// the run changes).
    pub fn users_with_forks_due(&mut self, offered_by: i64) -> Result<Vec<(String, i64)>> {
        self.conn
            .query(
                "SELECT user_id, max(version) FROM dnd_zone_run
                 WHERE fork_created_at_ms IS NOT NULL AND fork_created_at_ms <= ?1
                   AND outcome = ''
                 GROUP BY user_id ORDER BY user_id",
                &vals![offered_by],
            )?
            .iter()
            .map(|r| Ok((r.text(0)?, r.int(1)?)))
            .collect()
    }

    /// Moves up to `at_most` ended runs out of `dnd_zone_run` into `zone_run_history`: those
    /// of a player past their `keep` newest ended ones (their run links stop answering; the
    /// history keeps zone, version, times, outcome and rooms visited). How many moved.
    pub fn archive_ended_runs(&mut self, keep: i64, at_most: i64, now: i64) -> Result<u64> {
        let key = self.conn.run_key();
        let old = self.conn.query(
            &format!(
                "SELECT k, run_id, user_id, zone_id, zone_file_seq, started_at_ms,
                   completed_at_ms, outcome, boss_defeated, abandoned, visited_nodes,
                   current_node, node_choices
                 FROM (SELECT {key} AS k, run_id, user_id, zone_id, zone_file_seq,
                         started_at_ms, completed_at_ms, outcome, boss_defeated, abandoned,
                         visited_nodes, current_node, node_choices,
                         ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY {key} DESC) AS n
                       FROM dnd_zone_run WHERE outcome != '') AS ended
                 WHERE n > ?1 ORDER BY k LIMIT ?2"
            ),
            &vals![keep, at_most],
        )?;
        let mut moves = Vec::with_capacity(old.len() * 2);
        for r in &old {
            let visited: Vec<serde_json::Value> =
                serde_json::from_str(&r.text(10)?).unwrap_or_default();
            moves.push(Stmt::new(
                "INSERT INTO zone_run_history (run_id, user_id, zone_id, zone_file_seq,
                   started_at_ms, completed_at_ms, outcome, boss_defeated, abandoned,
                   rooms_visited, archived_at_ms, current_node, visited_nodes, node_choices)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
                 ON CONFLICT DO NOTHING",
                vals![
                    r.text(1)?,
                    r.text(2)?,
                    r.text(3)?,
                    r.opt_int(4)?,
                    r.int(5)?,
                    r.opt_int(6)?,
                    r.text(7)?,
                    r.int(8)?,
                    r.int(9)?,
                    i64::try_from(visited.len())?,
                    now,
                    r.text(11)?,
                    r.text(10)?,
                    r.text(12)?
                ],
            ));
            moves.push(Stmt::new(
                format!("DELETE FROM dnd_zone_run WHERE {key} = ?1 AND outcome != ''"),
                vals![r.int(0)?],
            ));
        }
        let counts = self.conn.execute_all(&moves)?;
        Ok(counts.iter().skip(1).step_by(2).sum())
    }

    /// How many of `user`'s runs the history holds.
    pub fn history_count(&mut self, user: &str) -> Result<i64> {
        self.one(
            "SELECT count(*) FROM zone_run_history WHERE user_id = ?1",
            &vals![user],
        )?
        .context("a count returned no row")?
        .int(0)
    }

    /// Deletes the notices delivered before `before`; how many went.
    pub fn prune_delivered_notices(&mut self, before: i64) -> Result<u64> {
        self.conn.execute(
            "DELETE FROM zone_notice WHERE delivered_at_ms IS NOT NULL AND delivered_at_ms < ?1",
            &vals![before],
        )
    }

    /// Queues a notice for `user`; when that makes more than [`MAX_QUEUED_NOTICES`], the
    /// oldest go, and the oldest one left carries their count.
    pub fn push_notice(
        &mut self,
        user: &str,
        run_id: &str,
        text: &str,
        html: &str,
        now: i64,
    ) -> Result<()> {
        self.conn.execute(
            "INSERT INTO zone_notice (user_id, run_id, text, html, created_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            &vals![user, run_id, text, html, now],
        )?;
        let queued = self
            .one(
                "SELECT count(*) FROM zone_notice WHERE user_id = ?1 AND delivered_at_ms IS NULL",
                &vals![user],
            )?
            .map_or(Ok(0), |r| r.int(0))?;
        let excess = queued - MAX_QUEUED_NOTICES;
        if excess <= 0 {
            return Ok(());
        }
        let dropped = self.conn.query(
            "SELECT notice_id, dropped_before FROM zone_notice
             WHERE user_id = ?1 AND delivered_at_ms IS NULL ORDER BY notice_id LIMIT ?2",
            &vals![user, excess],
        )?;
        let mut count = 0;
        for r in &dropped {
            count += 1 + r.int(1)?;
            self.conn.execute(
                "DELETE FROM zone_notice WHERE notice_id = ?1",
                &vals![r.int(0)?],
            )?;
        }
        self.conn.execute(
            "UPDATE zone_notice SET dropped_before = dropped_before + ?2 WHERE notice_id =
               (SELECT min(notice_id) FROM zone_notice
                WHERE user_id = ?1 AND delivered_at_ms IS NULL)",
            &vals![user, count],
        )?;
        Ok(())
    }

    /// Users with notices not delivered yet, sorted.
    pub fn users_with_notices(&mut self) -> Result<Vec<String>> {
        texts(self.conn.query(
            "SELECT DISTINCT user_id FROM zone_notice WHERE delivered_at_ms IS NULL
             ORDER BY user_id",
            &[],
        )?)
    }

    /// `user`'s notices not delivered yet, oldest first. Reading changes nothing: they are
    /// handed out again until acknowledged.
    pub fn queued_notices(&mut self, user: &str) -> Result<Vec<Notice>> {
        let Stmt { sql, params } = notices_stmt(user);
        notices_of(&self.conn.query(&sql, &params)?)
    }

    /// Marks `user`'s notices `ids` delivered (their transport confirmed them); ids of other
    /// players or already delivered are ignored. How many were marked.
    pub fn ack_notices(&mut self, user: &str, ids: &[i64], now: i64) -> Result<usize> {
        let mut n = 0;
        for id in ids {
            n += self.conn.execute(
                "UPDATE zone_notice SET delivered_at_ms = ?3
                 WHERE user_id = ?1 AND notice_id = ?2 AND delivered_at_ms IS NULL",
                &vals![user, *id, now],
            )?;
        }
        Ok(usize::try_from(n)?)
    }

    /// Claims a chat event for handling: `true` the first time, `false` when it was claimed
    /// before (a replay after a restart or a re-join). Claimed before the command runs, so a
    /// crash in between loses the command rather than running it twice.
    pub fn claim_event(&mut self, event_id: &str, room_id: &str, now: i64) -> Result<bool> {
        let added = self.conn.execute(
            "INSERT INTO matrix_event (event_id, room_id, handled_at_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT (event_id) DO NOTHING",
            &vals![event_id, room_id, now],
        )?;
        Ok(added == 1)
    }

    /// Forgets event claims from before `before`; how many.
    pub fn prune_events(&mut self, before: i64) -> Result<usize> {
        let n = self.conn.execute(
            "DELETE FROM matrix_event WHERE handled_at_ms < ?1",
            &vals![before],
        )?;
        Ok(usize::try_from(n)?)
    }

    /// `user`'s direct-message room on Matrix.
    pub fn dm_room(&mut self, user: &str) -> Result<Option<String>> {
        self.one(
            "SELECT room_id FROM matrix_dm WHERE user_id = ?1",
            &vals![user],
        )?
        .map(|r| r.text(0))
        .transpose()
    }

    /// Remembers `room` as `user`'s direct-message room.
    pub fn set_dm_room(&mut self, user: &str, room: &str, now: i64) -> Result<()> {
        self.conn.execute(
            "INSERT INTO matrix_dm (user_id, room_id, updated_at_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT (user_id) DO UPDATE SET room_id = excluded.room_id,
               updated_at_ms = excluded.updated_at_ms
             WHERE matrix_dm.room_id != excluded.room_id",
            &vals![user, room, now],
        )?;
        Ok(())
    }

    /// Forgets `room` as `user`'s direct-message room (the bot left it or was removed).
    pub fn forget_dm_room(&mut self, user: &str, room: &str) -> Result<()> {
        self.conn.execute(
            "DELETE FROM matrix_dm WHERE user_id = ?1 AND room_id = ?2",
            &vals![user, room],
        )?;
        Ok(())
    }

    /// A one-row write (`/healthz`): fails when the database cannot be written.
    pub fn health_write(&mut self, now: i64) -> Result<()> {
        self.conn.execute(
            "INSERT INTO server_health (id, checked_at_ms) VALUES (1, ?1)
             ON CONFLICT (id) DO UPDATE SET checked_at_ms = excluded.checked_at_ms",
            &vals![now],
        )?;
        Ok(())
    }
}
