//! Third-party sign-in and binding (spec 01 §2, §7): the authorization-code providers (GitHub,
//! OIDC, LinuxDO) on one state machinery, the Telegram widget and the WeChat server.

pub mod fetch;
pub mod github;
pub mod link;
pub mod linuxdo;
pub mod oidc;
pub mod state;
pub mod telegram;
pub mod wechat;

use tollgate_actors::options::OptionsSnapshot;
use tollgate_storage::users::Provider;

use self::github::GitHub;
use self::link::Identity;
use self::linuxdo::LinuxDo;
use self::oidc::OidcProvider;
use self::state::Pending;
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// The providers signed in by redirecting the browser (authorization-code flow).
pub fn redirect_provider(name: &str) -> Result<Provider, ConsoleError> {
    match name {
        "github" => Ok(Provider::GitHub),
        "oidc" => Ok(Provider::Oidc),
        "linuxdo" => Ok(Provider::LinuxDo),
        _ => Err(ConsoleError::NotFound("sign-in provider")),
    }
}

/// The callback address of `provider`: the console page `/oauth/<provider>` under the
/// `ServerAddress` option (the address to register at the provider).
pub fn redirect_uri(options: &OptionsSnapshot, provider: Provider) -> String {
    format!(
        "{}/oauth/{}",
        options.text("ServerAddress").trim().trim_end_matches('/'),
        provider.name()
    )
}

/// A configured authorization-code provider.
#[derive(Debug, Clone)]
pub enum Flow {
    /// GitHub.
    GitHub(GitHub),
    /// OpenID Connect.
    Oidc(Box<OidcProvider>),
    /// LinuxDO.
    LinuxDo(LinuxDo),
}

impl Flow {
    /// The provider's configuration (OIDC reads its discovery document).
    pub async fn of(state: &AppState, provider: Provider) -> Result<Flow, ConsoleError> {
        match provider {
            Provider::GitHub => github::provider(state).map(Flow::GitHub),
            Provider::Oidc => oidc::provider(state).await.map(|p| Flow::Oidc(Box::new(p))),
            Provider::LinuxDo => linuxdo::provider(state).map(Flow::LinuxDo),
            Provider::Telegram | Provider::WeChat => {
                Err(ConsoleError::NotFound("sign-in provider"))
            }
        }
    }

    /// Where the browser is sent to sign in.
    pub fn authorize_url(&self, pending: &Pending) -> Result<String, ConsoleError> {
        match self {
            Flow::GitHub(p) => p.authorize_url(pending),
            Flow::Oidc(p) => p.authorize_url(pending),
            Flow::LinuxDo(p) => p.authorize_url(pending),
        }
    }

    /// Exchanges the callback's code for the verified identity.
    pub async fn identity(
        &self,
        state: &AppState,
        pending: &Pending,
        code: &str,
    ) -> Result<Identity, ConsoleError> {
        if code.is_empty() {
            return Err(ConsoleError::of(ErrorCode::OauthNoCode));
        }
        match self {
            Flow::GitHub(p) => p.identity(state, pending, code).await,
            Flow::Oidc(p) => p.identity(state, pending, code).await,
            Flow::LinuxDo(p) => p.identity(state, pending, code).await,
        }
    }
}
