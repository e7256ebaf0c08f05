//! Zone versions (`zone_file_version`, schema version 8): every zone file imported or
//! published, the newest of each zone being what every instance serves, and the sequence
//! (`zone_version.version`) that numbers them. Statements only; which file becomes a version
//! is decided in `crate::catalog`.

use anyhow::{Context as _, Result};

use super::Tx;
use super::sql::{Row, vals};

/// One version's record, without its file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct VersionRow {
    pub seq: i64,
    pub zone_id: String,
    /// SHA-256 of the file, lowercase hex (empty for a withdrawal).
    pub content_hash: String,
    pub withdrawn: bool,
    /// Where it came from: `folder <file>`, `POST /api/zones`, `DELETE /api/zones`,
    /// `zonegraph zones withdraw`, `tables` (the zone tables of a database from before
    /// versions).
    pub source: String,
    /// Who made it: the user an API caller or the command line names, else the instance.
    pub made_by: String,
    /// The instance that wrote it (host and process).
    pub instance: String,
    /// A folder file's modification time (Unix ms), when it came from one.
    pub file_mtime_ms: Option<i64>,
    pub created_at_ms: i64,
    /// Whether the file is still kept (withdrawals and pruned versions have none).
    pub has_file: bool,
}

/// A version to add (its `seq` is the sequence's next value).
#[derive(Clone, Debug)]
pub struct NewVersion<'a> {
    pub zone_id: &'a str,
    pub content_hash: &'a str,
    /// `None`: a withdrawal.
    pub file_json: Option<&'a str>,
    pub source: &'a str,
    pub made_by: &'a str,
    pub instance: &'a str,
    pub file_mtime_ms: Option<i64>,
    pub now: i64,
}

const VERSION_COLUMNS: &str = "v.seq, v.zone_id, v.content_hash, v.withdrawn, v.source, \
    v.made_by, v.instance, v.file_mtime_ms, v.created_at_ms, v.file_json IS NOT NULL";

fn version_row(r: &Row) -> Result<VersionRow> {
    Ok(VersionRow {
        seq: r.int(0)?,
        zone_id: r.text(1)?,
        content_hash: r.text(2)?,
        withdrawn: r.flag(3)?,
        source: r.text(4)?,
        made_by: r.text(5)?,
        instance: r.text(6)?,
        file_mtime_ms: r.opt_int(7)?,
        created_at_ms: r.int(8)?,
        has_file: r.flag(9)?,
    })
}

impl Tx<'_> {
    /// The zone sequence now: raised by every new version, on any instance.
    pub fn zone_sequence(&mut self) -> Result<i64> {
        self.conn
            .query("SELECT version FROM zone_version WHERE id = 1", &[])?
            .first()
            .context("no zone_version row")?
            .int(0)
    }

    /// The newest version of every zone that has one (a withdrawal included), in the order
    /// the zones first appeared.
    pub fn newest_versions(&mut self) -> Result<Vec<VersionRow>> {
        self.conn
            .query(
                &format!(
                    "SELECT {VERSION_COLUMNS} FROM zone_file_version v
                     JOIN (SELECT zone_id, max(seq) AS top, min(seq) AS first
                           FROM zone_file_version GROUP BY zone_id) m
                       ON v.zone_id = m.zone_id AND v.seq = m.top
                     ORDER BY m.first"
                ),
                &[],
            )?
            .iter()
            .map(version_row)
            .collect()
    }

    /// Every version of `zone_id`, oldest first.
    pub fn versions_of(&mut self, zone_id: &str) -> Result<Vec<VersionRow>> {
        self.conn
            .query(
                &format!(
                    "SELECT {VERSION_COLUMNS} FROM zone_file_version v
                     WHERE v.zone_id = ?1 ORDER BY v.seq"
                ),
                &vals![zone_id],
            )?
            .iter()
            .map(version_row)
            .collect()
    }

    /// Every `(zone_id, content_hash)` a version ever had (pruned ones too).
    pub fn known_hashes(&mut self) -> Result<Vec<(String, String)>> {
        self.conn
            .query(
                "SELECT DISTINCT zone_id, content_hash FROM zone_file_version
                 WHERE withdrawn = 0",
                &[],
            )?
            .iter()
            .map(|r| Ok((r.text(0)?, r.text(1)?)))
            .collect()
    }

    /// The file of version `seq`, while it is kept.
    pub fn version_file(&mut self, seq: i64) -> Result<Option<String>> {
        let rows = self.conn.query(
            "SELECT file_json FROM zone_file_version WHERE seq = ?1 AND file_json IS NOT NULL",
            &vals![seq],
        )?;
        rows.first().map(|r| r.text(0)).transpose()
    }

    /// Adds a version, numbered with the sequence's next value (the row lock on the sequence
    /// makes instances adding versions at once take turns); returns its `seq`.
    pub fn add_version(&mut self, v: &NewVersion<'_>) -> Result<i64> {
        self.conn
            .execute("UPDATE zone_version SET version = version + 1", &[])?;
        let seq = self.zone_sequence()?;
        self.conn.execute(
            "INSERT INTO zone_file_version (seq, zone_id, content_hash, file_json, withdrawn,
               source, made_by, instance, file_mtime_ms, created_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            &vals![
                seq,
                v.zone_id,
                v.content_hash,
                v.file_json,
                v.file_json.is_none(),
                v.source,
                v.made_by,
                v.instance,
                v.file_mtime_ms,
                v.now
            ],
        )?;
        Ok(seq)
    }

    /// Takes the zone sequence's row lock for the rest of the transaction (instances that
    /// change the zones at once take turns; the first statement of such a transaction).
    pub fn lock_zone_sequence(&mut self) -> Result<()> {
        self.conn.execute(
            "UPDATE zone_version SET version = version WHERE id = 1",
            &[],
        )?;
        Ok(())
    }

    /// Empties the file of every version no one needs: not its zone's newest file, not the
    /// version of an active run, nor of a run that ended after `kept_since` (Unix ms: its map
    /// link still shows the graph it was played on). Their records stay. Returns how many
    /// were emptied.
    pub fn prune_versions(&mut self, kept_since: i64) -> Result<u64> {
        self.conn.execute(
            "UPDATE zone_file_version SET file_json = NULL
             WHERE file_json IS NOT NULL
               AND seq NOT IN (SELECT max(seq) FROM zone_file_version
                               WHERE file_json IS NOT NULL GROUP BY zone_id)
               AND seq NOT IN (SELECT zone_file_seq FROM dnd_zone_run
                               WHERE zone_file_seq IS NOT NULL
                                 AND (outcome = '' OR completed_at_ms > ?1))",
            &vals![kept_since],
        )
    }

    /// The players with an active run in `zone_id`.
    pub fn players_in(&mut self, zone_id: &str) -> Result<Vec<String>> {
        self.conn
            .query(
                "SELECT user_id FROM dnd_zone_run
                 WHERE zone_id = ?1 AND outcome = '' AND current_node != '' ORDER BY user_id",
                &vals![zone_id],
            )?
            .iter()
            .map(|r| r.text(0))
            .collect()
    }

    /// The room of each active run in `zone_id`, whatever version it plays.
    pub fn active_rooms(&mut self, zone_id: &str) -> Result<Vec<String>> {
        self.conn
            .query(
                "SELECT current_node FROM dnd_zone_run
                 WHERE zone_id = ?1 AND outcome = '' AND current_node != ''",
                &vals![zone_id],
            )?
            .iter()
            .map(|r| r.text(0))
            .collect()
    }

    /// Active runs started before zone versions (no `zone_file_seq`) are given the version
    /// `seq` of their zone, the graph they have walked so far.
    pub fn pin_unversioned_runs(&mut self, zone_id: &str, seq: i64) -> Result<u64> {
        self.conn.execute(
            "UPDATE dnd_zone_run SET zone_file_seq = ?2
             WHERE zone_id = ?1 AND zone_file_seq IS NULL AND outcome = ''",
            &vals![zone_id, seq],
        )
    }

    /// The change stamp of each run link in `tokens` that exists: the run row's version and
    /// its player's sheet's (-1 without a sheet). Any committed change to what the run page
    /// shows moves it.
    pub fn run_stamps(&mut self, tokens: &[String]) -> Result<Vec<(String, i64, i64)>> {
        let mut out = Vec::with_capacity(tokens.len());
        // Bounded statements: a few hundred links at a time.
        for chunk in tokens.chunks(500) {
            let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("?{i}")).collect();
            let params: Vec<super::Value> = chunk.iter().map(super::Value::from).collect();
            let rows = self.conn.query(
                &format!(
                    "SELECT r.link_token, r.version, COALESCE(c.version, -1)
                     FROM dnd_zone_run r LEFT JOIN player_character c ON c.user_id = r.user_id
                     WHERE r.link_token IN ({})",
                    marks.join(", ")
                ),
                &params,
            )?;
            for r in rows {
                out.push((r.text(0)?, r.int(1)?, r.int(2)?));
            }
        }
        Ok(out)
    }
}

impl Tx<'_> {
    /// The zones the zone tables hold, with their files' names (a database from before zone
    /// versions: the tables were the record of what was served).
    pub fn table_zones(&mut self) -> Result<Vec<(String, zonegraph_core::zone::Zone)>> {
        super::read_zones(self.conn)
    }

    /// Writes the zones served (`(file, zone)`, in order) into the zone tables, replacing
    /// what they held.
    pub fn write_zone_tables(
        &mut self,
        zones: &[(String, zonegraph_core::zone::Zone)],
        now: i64,
    ) -> Result<()> {
        let rows = super::zone_rows(zones)?;
        super::write_zone_rows(self.conn, &rows, now)
    }
}
