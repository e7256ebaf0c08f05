//! Files only this user may read: the database's copies (they hold every run link's token)
//! and the Matrix session, keys and stores. Each is made with mode 0600 before its first byte
//! (0700 for a directory), and never through a symlink: a link planted where such a file
//! goes makes the write fail instead of leaking or overwriting what it points at. A new file
//! is never made over one already there.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

/// Options that create with mode 0600 and refuse to follow a symlink at the last component.
fn options() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    o
}

/// A new private file at `path`; fails when anything (a file, a symlink) is already there.
pub fn create_new(path: &Path) -> Result<File> {
    options()
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {} (mode 0600, new)", path.display()))
}

/// The private file at `path`, created empty when missing, its content kept; fails on a
/// symlink.
pub fn open(path: &Path) -> Result<File> {
    options()
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))
}

/// Writes `bytes` to `path` atomically: a new private `<path>.tmp`, synced, renamed over it.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    // A `.tmp` left by a crash (a plain file of ours, or whatever is there: unlinking a
    // symlink never touches what it points at).
    let _ = std::fs::remove_file(&tmp);
    let mut f = create_new(&tmp)?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Creates `dir` with mode 0700 (and narrows an existing one to it).
pub fn dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot make {} private", dir.display()))?;
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(())
}
