//! The bot's Matrix session and state directory (`<db>.matrix/`, mode 0700):
//! `session.json` (user, device, access token and the passphrase of the SDK's stores; 0600
//! from its first byte) and `store/`, the SDK's SQLite state and crypto stores (the device's
//! keys, the room keys, the sync token; each file 0600 from its first byte). A restart
//! restores the session over the same stores: the same device, no new login, the sync goes
//! on from its stored token. `ZONEGRAPH_MATRIX_STORE_PASSPHRASE`, when set, is the stores'
//! passphrase instead (and is then never written down). The directory is locked
//! ([`StateLock`]): a second process on it refuses to start rather than share one device's
//! olm state.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result};
use matrix_sdk::authentication::matrix::MatrixSession;
use matrix_sdk::config::RequestConfig;
use matrix_sdk::encryption::{BackupDownloadStrategy, EncryptionSettings};
use matrix_sdk::{Client, SessionMeta, SessionTokens};
use serde::{Deserialize, Serialize};

use super::{Config, Login};
use crate::secret::Secret;

/// The SDK's store files, created empty with mode 0600 before the SDK opens them (SQLite gives
/// its `-wal` and `-shm` files the database file's mode).
const STORE_FILES: [&str; 4] = [
    "matrix-sdk-state.sqlite3",
    "matrix-sdk-crypto.sqlite3",
    "matrix-sdk-event-cache.sqlite3",
    "matrix-sdk-media.sqlite3",
];

/// The state directory's lock (`<state>/lock`, an advisory lock held while the bot runs):
/// released when dropped, or when the process ends however it ends.
#[derive(Debug)]
pub struct StateLock {
    _file: std::fs::File,
}

/// Locks `state_dir` for this process, or refuses: two processes on one directory would
/// share one device's olm state (its one-time keys, its sessions), which breaks encryption
/// for both.
pub fn lock_state_dir(state_dir: &Path) -> Result<StateLock> {
    crate::private::dir(state_dir)?;
    let path = state_dir.join("lock");
    let file = crate::private::open(&path)?;
    match file.try_lock() {
        Ok(()) => Ok(StateLock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => Err(super::identity::Refused(format!(
            "another process runs the Matrix bot over {} (its lock is held): each instance \
             needs a state directory of its own (on PostgreSQL: its own working directory)",
            state_dir.display()
        ))
        .into()),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
}

/// The persisted session.
#[derive(Debug, Serialize, Deserialize)]
struct SavedSession {
    homeserver: String,
    user_id: String,
    device_id: String,
    #[serde(serialize_with = "written_down")]
    access_token: Secret,
    /// Encrypts the SDK's stores (the device's private keys among them).
    #[serde(default, serialize_with = "written_down")]
    store_passphrase: Secret,
}

/// A secret's text in the session file (mode 0600, in the private state directory): the one
/// place a [`Secret`] is serialized.
fn written_down<S: serde::Serializer>(secret: &Secret, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(secret.expose())
}

/// `<state>/store`, with its files private before the SDK creates them.
fn store_dir(state_dir: &Path) -> Result<PathBuf> {
    let dir = state_dir.join("store");
    crate::private::dir(&dir)?;
    for name in STORE_FILES {
        let path = dir.join(name);
        crate::private::open(&path)?;
    }
    Ok(dir)
}

/// A client for `homeserver` over the stores in `state_dir`, with retries: the SDK retries
/// rate limits (honouring `retry_after`) and network errors with exponential backoff.
pub async fn build_client(homeserver: &str, store: Option<(&Path, &str)>) -> Result<Client> {
    let mut b = Client::builder().homeserver_url(homeserver).request_config(
        RequestConfig::new()
            .retry_limit(6)
            // A minute of backoff per request; a second in the mock-homeserver tests.
            .max_retry_time(Duration::from_secs(if cfg!(test) { 1 } else { 60 })),
    );
    if let Some((dir, passphrase)) = store {
        b = b.sqlite_store(dir, Some(passphrase));
    }
    // A room key this device missed (sent while another instance synced) is fetched from
    // the key backup when a message fails to decrypt.
    b = b.with_encryption_settings(EncryptionSettings {
        backup_download_strategy: BackupDownloadStrategy::AfterDecryptionFailure,
        ..EncryptionSettings::default()
    });
    b.build()
        .await
        .with_context(|| format!("cannot set up a Matrix client for {homeserver}"))
}

/// 32 random bytes as hex.
fn new_passphrase() -> Result<String> {
    Ok(format!(
        "{}{}",
        crate::db::random_hex()?,
        crate::db::random_hex()?
    ))
}

/// Logs in, or restores the session saved in the state directory over its stores.
pub async fn login(config: &Config) -> Result<Client> {
    crate::private::dir(&config.state_dir)?;
    let session_path = config.state_dir.join("session.json");
    let given = config
        .store_passphrase
        .as_ref()
        .map(|p| p.expose().to_string());
    let saved = std::fs::read_to_string(&session_path)
        .ok()
        .and_then(|t| serde_json::from_str::<SavedSession>(&t).ok())
        .filter(|s| {
            s.homeserver == config.homeserver
                && s.user_id == config.user
                && (given.is_some() || !s.store_passphrase.expose().is_empty())
        });
    if let Some(saved) = saved {
        let store = store_dir(&config.state_dir)?;
        let passphrase = given
            .clone()
            .unwrap_or_else(|| saved.store_passphrase.expose().to_string());
        let client = build_client(&config.homeserver, Some((&store, &passphrase)))
            .await
            .context(
                "cannot open the bot's encrypted stores (was ZONEGRAPH_MATRIX_STORE_PASSPHRASE \
                 changed since they were made?)",
            )?;
        client
            .restore_session(MatrixSession {
                meta: SessionMeta {
                    user_id: saved.user_id.as_str().try_into()?,
                    device_id: saved.device_id.as_str().into(),
                },
                tokens: SessionTokens {
                    access_token: saved.access_token.expose().to_string(),
                    refresh_token: None,
                },
            })
            .await
            .context("cannot restore the saved Matrix session")?;
        match client.whoami().await {
            Ok(_) => {
                tracing::info!(
                    "resumed the session of {} (device {})",
                    config.user,
                    saved.device_id
                );
                return Ok(client);
            }
            Err(e)
                if e.as_client_api_error()
                    .is_some_and(|a| a.status_code.as_u16() == 401) =>
            {
                tracing::warn!(
                    error = %e,
                    "the saved session was signed out; logging in again as a new device"
                );
            }
            Err(e) => {
                // The homeserver is away: the session stays, the sync retries.
                tracing::warn!(error = %e, "cannot check the saved session yet; going on");
                return Ok(client);
            }
        }
    }
    // A new device: a fresh store (a device's keys belong to that device only).
    let store = config.state_dir.join("store");
    if store.exists() {
        std::fs::remove_dir_all(&store)
            .with_context(|| format!("cannot clear {}", store.display()))?;
    }
    let store = store_dir(&config.state_dir)?;
    let passphrase = match &given {
        Some(p) => p.clone(),
        None => new_passphrase()?,
    };
    let client = build_client(&config.homeserver, Some((&store, &passphrase))).await?;
    match &config.secret {
        Login::Password(pw) => {
            client
                .matrix_auth()
                .login_username(&config.user, pw.expose())
                .initial_device_display_name("zonegraph bot")
                .await
                .with_context(|| format!("cannot log in as {}", config.user))?;
        }
        Login::Token(token) => {
            // Learn the token's device, then use it as the session.
            let probe = build_client(&config.homeserver, None).await?;
            probe
                .restore_session(MatrixSession {
                    meta: SessionMeta {
                        user_id: config.user.as_str().try_into()?,
                        device_id: "ZONEGRAPH".into(),
                    },
                    tokens: SessionTokens {
                        access_token: token.expose().to_string(),
                        refresh_token: None,
                    },
                })
                .await?;
            let who = probe
                .whoami()
                .await
                .context("the Matrix access token was refused")?;
            let device_id = who
                .device_id
                .context("the access token belongs to no device")?;
            client
                .restore_session(MatrixSession {
                    meta: SessionMeta {
                        user_id: who.user_id,
                        device_id,
                    },
                    tokens: SessionTokens {
                        access_token: token.expose().to_string(),
                        refresh_token: None,
                    },
                })
                .await?;
        }
    }
    let session = client
        .matrix_auth()
        .session()
        .context("logged in, but the SDK has no session")?;
    let saved = SavedSession {
        homeserver: config.homeserver.clone(),
        user_id: session.meta.user_id.to_string(),
        device_id: session.meta.device_id.to_string(),
        access_token: Secret::new(session.tokens.access_token),
        // A passphrase from the environment is not written down.
        store_passphrase: if given.is_some() {
            Secret::default()
        } else {
            Secret::new(passphrase)
        },
    };
    crate::private::write(&session_path, &serde_json::to_vec_pretty(&saved)?)?;
    tracing::info!(
        "logged in as {} (device {})",
        saved.user_id,
        saved.device_id
    );
    Ok(client)
}
