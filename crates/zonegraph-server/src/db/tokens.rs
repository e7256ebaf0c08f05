//! Scoped API tokens (`zone_api_token`, schema version 10): statements only. What a scope
//! allows is decided in `crate::tokens`.

use anyhow::Result;

use super::Tx;
use super::sql::{Row, vals};

/// One token's record. The token itself is not kept, only its SHA-256.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRow {
    /// The token's public part: `zgt_<token_id>_<secret>`.
    pub token_id: String,
    /// SHA-256 of the whole token, lowercase hex.
    pub token_sha256: String,
    /// `admin`, `publish` or `transport:<prefix>`, as `crate::tokens::Scope` writes it.
    pub scope: String,
    pub label: String,
    pub created_at_ms: i64,
    pub revoked_at_ms: Option<i64>,
}

fn token_row(r: &Row) -> Result<TokenRow> {
    Ok(TokenRow {
        token_id: r.text(0)?,
        token_sha256: r.text(1)?,
        scope: r.text(2)?,
        label: r.text(3)?,
        created_at_ms: r.int(4)?,
        revoked_at_ms: r.opt_int(5)?,
    })
}

impl Tx<'_> {
    /// Every token made, revoked ones too, oldest first.
    pub fn api_tokens(&mut self) -> Result<Vec<TokenRow>> {
        self.conn
            .query(
                "SELECT token_id, token_sha256, scope, label, created_at_ms, revoked_at_ms
                 FROM zone_api_token ORDER BY created_at_ms, token_id",
                &[],
            )?
            .iter()
            .map(token_row)
            .collect()
    }

    /// The record of the token whose SHA-256 is `sha256` (an indexed read), if one was made.
    pub fn api_token(&mut self, sha256: &str) -> Result<Option<TokenRow>> {
        self.conn
            .query(
                "SELECT token_id, token_sha256, scope, label, created_at_ms, revoked_at_ms
                 FROM zone_api_token WHERE token_sha256 = ?1",
                &vals![sha256],
            )?
            .first()
            .map(token_row)
            .transpose()
    }

    /// Adds a token's record.
    pub fn add_api_token(&mut self, t: &TokenRow) -> Result<()> {
        self.conn.execute(
            "INSERT INTO zone_api_token
               (token_id, token_sha256, scope, label, created_at_ms, revoked_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            &vals![
                &t.token_id,
                &t.token_sha256,
                &t.scope,
                &t.label,
                t.created_at_ms,
                t.revoked_at_ms
            ],
        )?;
        Ok(())
    }

    /// Revokes token `token_id` at `now`; `false` when there is no such token or it was
    /// revoked already.
    pub fn revoke_api_token(&mut self, token_id: &str, now: i64) -> Result<bool> {
        Ok(self.conn.execute(
            "UPDATE zone_api_token SET revoked_at_ms = ?2
             WHERE token_id = ?1 AND revoked_at_ms IS NULL",
            &vals![token_id, now],
        )? == 1)
    }
}
