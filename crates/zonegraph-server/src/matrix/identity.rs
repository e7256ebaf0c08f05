//! The bot's identity as players' clients judge it. Element's default since 2026 ("exclude
//! insecure devices", MSC4153) shares room keys only with devices their owner cross-signed
//! and does not decrypt messages from any other, so a bot must be cross-signed to be heard.
//!
//! At every start, after the device's keys are on the homeserver ([`ensure`]):
//! - an account with no cross-signing identity gets one (master, self-signing and
//!   user-signing keys, uploaded with the password through interactive auth), secret storage
//!   holding their private parts and a key backup, protected by the recovery key;
//! - a device whose store lacks the private keys (a new instance, a lost store, a stand-by)
//!   takes them from secret storage with the recovery key;
//! - the device is signed with the self-signing key, and checked to be.
//!
//! The recovery key comes from `ZONEGRAPH_MATRIX_RECOVERY_KEY` (never a flag), else from the
//! file beside the database that the first start wrote (mode 0600 from its first byte). An
//! account that has an identity but no recovery key here is refused ([`Refused`]): an
//! identity is never reset by the bot.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use matrix_sdk::Client;
use matrix_sdk::encryption::recovery::RecoveryError;
use matrix_sdk::ruma::api::client::uiaa;

use super::{Config, Login};

/// The environment variable with the recovery key (or the passphrase it was made with).
pub const RECOVERY_ENV: &str = "ZONEGRAPH_MATRIX_RECOVERY_KEY";

/// A start the bot refuses (the operator must act): no retry can fix it.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Whether `e` is a refusal (see [`Refused`]) rather than a failure that may pass.
pub fn is_refusal(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<Refused>())
}

/// `<db>.matrix-recovery-key`: beside the database, outside the state directory (a lost
/// store does not lose it).
pub fn recovery_key_file(state_dir: &Path) -> PathBuf {
    let mut s = state_dir.as_os_str().to_owned();
    s.push("-recovery-key");
    PathBuf::from(s)
}

/// Where this start's recovery key comes from.
enum Key {
    Env(String),
    File(PathBuf, String),
    /// None given: a new identity's key is written to this file.
    None(PathBuf),
}

impl Key {
    fn find(config: &Config) -> Result<Key> {
        if let Some(k) = &config.recovery_key {
            return Ok(Key::Env(k.expose().to_string()));
        }
        let file = recovery_key_file(&config.state_dir);
        match std::fs::read_to_string(&file) {
            Ok(k) if !k.trim().is_empty() => Ok(Key::File(file, k.trim().to_string())),
            Ok(_) => Ok(Key::None(file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Key::None(file)),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", file.display())),
        }
    }

    fn given(&self) -> Option<&str> {
        match self {
            Key::Env(k) | Key::File(_, k) => Some(k),
            Key::None(_) => None,
        }
    }

    fn source(&self) -> String {
        match self {
            Key::Env(_) => RECOVERY_ENV.to_string(),
            Key::File(p, _) | Key::None(p) => p.display().to_string(),
        }
    }
}

/// What [`ensure`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A new identity; its recovery key was written to this file (none: it was given).
    Created(Option<PathBuf>),
    /// This device took the identity's private keys from secret storage.
    Recovered,
    /// The store already held them (a resumed device).
    Kept,
}

/// Makes this device cross-signed by the account's identity, creating the identity on the
/// account's first start. The device's keys must be on the homeserver already.
pub async fn ensure(client: &Client, config: &Config) -> Result<Outcome> {
    let enc = client.encryption();
    let me = client.user_id().context("not logged in")?.to_owned();
    let key = Key::find(config)?;
    let on_server = enc
        .request_user_identity(&me)
        .await
        .context("cannot ask the homeserver for the bot's cross-signing identity")?;
    let local = enc.cross_signing_status().await;
    let outcome = match on_server {
        None => {
            bootstrap(client, config).await?;
            Outcome::Created(create_recovery(client, &key).await?)
        }
        Some(_) if local.is_some_and(|s| s.is_complete()) && signed(client).await? => Outcome::Kept,
        Some(_) => {
            let Some(k) = key.given() else {
                return Err(Refused(format!(
                    "{me} already has a cross-signing identity, and this device has no recovery \
                     key to join it: give the key in {RECOVERY_ENV} (or put it in {}). The first \
                     start wrote it to its own {} and said so. zonegraph never resets an \
                     identity by itself: if the key is lost, reset the account's identity from \
                     a client logged in as the bot (Element: Settings, Encryption, reset), then \
                     start again with no key to make a new one.",
                    key.source(),
                    key.source(),
                ))
                .into());
            };
            if let Err(e) = enc.recovery().recover(k).await {
                return Err(Refused(format!(
                    "the recovery key in {} does not open {me}'s secret storage ({e}): give \
                     the key the first start made (or the one the identity was reset with)",
                    key.source()
                ))
                .into());
            }
            Outcome::Recovered
        }
    };
    if !signed(client).await? {
        let own = enc
            .get_own_device()
            .await?
            .context("the crypto store does not know this device")?;
        own.verify()
            .await
            .context("cannot sign this device with the self-signing key")?;
    }
    // The homeserver's view, not only the store's: what players' clients will see.
    enc.request_user_identity(&me).await?;
    if !signed(client).await? {
        bail!(
            "this device is still not cross-signed by {me} after signing it: its keys and the \
             identity on the homeserver disagree (was the identity reset elsewhere?)"
        );
    }
    Ok(outcome)
}

/// Whether the store holds this device as cross-signed by its owner.
async fn signed(client: &Client) -> Result<bool> {
    Ok(client
        .encryption()
        .get_own_device()
        .await?
        .is_some_and(|d| d.is_cross_signed_by_owner()))
}

/// Uploads a new cross-signing identity: the homeserver asks for the password (interactive
/// auth) unless it lets a first upload through without.
async fn bootstrap(client: &Client, config: &Config) -> Result<()> {
    let enc = client.encryption();
    let Err(e) = enc.bootstrap_cross_signing(None).await else {
        return Ok(());
    };
    let Some(uiaa) = e.as_uiaa_response() else {
        return Err(e).context("cannot upload the bot's cross-signing keys");
    };
    let Login::Password(pw) = &config.secret else {
        return Err(Refused(format!(
            "the homeserver asks for {}'s password to upload its new cross-signing keys, and \
             the bot logs in with a token: start it once with ZONEGRAPH_MATRIX_PASSWORD set \
             (the token may stay), or set up cross-signing and recovery for the account in a \
             client logged in as the bot and give its recovery key in {RECOVERY_ENV}",
            config.user
        ))
        .into());
    };
    let mut password = uiaa::Password::new(
        uiaa::UserIdentifier::Matrix(uiaa::MatrixUserIdentifier::new(config.user.clone())),
        pw.expose().to_string(),
    );
    password.session = uiaa.session.clone();
    enc.bootstrap_cross_signing(Some(uiaa::AuthData::Password(password)))
        .await
        .context("cannot upload the bot's cross-signing keys (the password was refused?)")
}

/// Secret storage with the new identity's private keys and a key backup, under the given key
/// (as a passphrase) or a new recovery key written to its file.
async fn create_recovery(client: &Client, key: &Key) -> Result<Option<PathBuf>> {
    let recovery = client.encryption().recovery();
    let enable = recovery.enable();
    let made = match key.given() {
        Some(k) => enable.with_passphrase(k).await,
        None => enable.await,
    };
    let made = match made {
        Ok(made) => made,
        Err(RecoveryError::BackupExistsOnServer) => {
            return Err(Refused(format!(
                "{} has a key backup but had no cross-signing identity: zonegraph does not \
                 replace a backup it cannot open. Delete the backup from a client logged in as \
                 the bot, or set up recovery there and give its key in {RECOVERY_ENV}",
                config_user(client)
            ))
            .into());
        }
        Err(e) => return Err(e).context("cannot set up secret storage and the key backup"),
    };
    match key {
        Key::None(file) => {
            crate::private::write(file, format!("{made}\n").as_bytes())?;
            Ok(Some(file.clone()))
        }
        Key::Env(_) | Key::File(..) => Ok(None),
    }
}

fn config_user(client: &Client) -> String {
    client
        .user_id()
        .map_or_else(|| "the bot".into(), |u| u.to_string())
}
