//! A value kept out of logs and `Debug` output: a token, a password, a signing secret.
//! [`Secret`] prints as `<set>`; [`Secret::expose`] is the one way to its text, so a secret
//! that reaches a log line was asked for by name.

/// A secret's text, hidden from `Debug`.
#[derive(Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps `text`.
    pub fn new(text: impl Into<String>) -> Secret {
        Secret(text.into())
    }

    /// The secret's text, for the one place that sends or compares it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The environment variable `name`, trimmed, when it is set and not blank.
    pub fn from_env(name: &str) -> Option<Secret> {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .map(Secret)
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<set>")
    }
}

impl From<String> for Secret {
    fn from(text: String) -> Secret {
        Secret(text)
    }
}

impl From<&str> for Secret {
    fn from(text: &str) -> Secret {
        Secret(text.to_string())
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Secret, Self::Err> {
        Ok(Secret(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_shows_in_debug() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?}"), "<set>");
        assert_eq!(format!("{:?}", Some(&s)), "Some(<set>)");
        assert_eq!(s.expose(), "hunter2");
    }
}
