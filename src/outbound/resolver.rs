//! The resolver of the guarded clients: names are looked up (the system resolver, or a test's
//! fixed answers), and only the addresses [`super::address`] allows are handed to the
//! connector. reqwest connects to exactly the addresses the resolver returned, so the checked
//! address is the one used: no second lookup, no rebinding gap.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::address::{Forbidden, forbidden};

/// Fixed name → address answers and names exempt from the address check. Tests only: the
/// command line cannot set them (`Config::outbound_overrides`).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Names answered with these addresses instead of DNS (still checked).
    pub hosts: HashMap<String, Vec<IpAddr>>,
    /// Names whose addresses are not checked (a test's local mock).
    pub trusted: Vec<String>,
}

/// Why a name gave no address to connect to. It travels through reqwest's error chain as the
/// source of a connect error; [`super::refusal_of`] finds it again.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Refusal {
    /// Every address of the name is refused.
    #[error("{host} resolves to {}", .why.describe())]
    Address {
        /// The name.
        host: String,
        /// What kind of address it resolved to.
        why: Forbidden,
    },
    /// A URL names a refused address directly.
    #[error("{} is {}", .host, .why.describe())]
    Literal {
        /// The address as written.
        host: String,
        /// What kind of address it is.
        why: Forbidden,
    },
    /// The URL is not http(s) or has no host.
    #[error("only http and https URLs with a host can be fetched")]
    Scheme,
}

/// The filtering resolver.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    overrides: Arc<Overrides>,
    /// Loopback addresses are allowed (`--webhook-allow-loopback-http` for webhooks).
    allow_loopback: bool,
}

impl GuardedResolver {
    /// A resolver with these overrides.
    pub fn new(overrides: Arc<Overrides>, allow_loopback: bool) -> GuardedResolver {
        GuardedResolver {
            overrides,
            allow_loopback,
        }
    }

    /// Whether `host`'s addresses need no check (a test's trusted name).
    fn trusted(&self, host: &str) -> bool {
        self.overrides
            .trusted
            .iter()
            .any(|t| t.eq_ignore_ascii_case(host))
    }

    /// Why `ip` may not be reached, under this resolver's allowances.
    pub fn refuses(&self, ip: IpAddr) -> Option<Forbidden> {
        forbidden(ip).filter(|why| !(self.allow_loopback && *why == Forbidden::Loopback))
    }

    /// The allowed addresses of `host` (a name, not an address literal).
    pub async fn lookup(
        &self,
        host: &str,
    ) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
        let host = host.trim_end_matches('.');
        let found: Vec<SocketAddr> = match self
            .overrides
            .hosts
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(host))
        {
            Some((_, ips)) => ips.iter().map(|ip| SocketAddr::new(*ip, 0)).collect(),
            None => tokio::net::lookup_host((host, 0)).await?.collect(),
        };
        if self.trusted(host) {
            return Ok(found);
        }
        let mut refused = None;
        let allowed: Vec<SocketAddr> = found
            .into_iter()
            .filter(|addr| match self.refuses(addr.ip()) {
                Some(why) => {
                    refused = Some(why);
                    false
                }
                None => true,
            })
            .collect();
        match (allowed.is_empty(), refused) {
            // A name with both kinds of address is refused whole: which one a client would get
            // is up to the name's owner.
            (_, Some(why)) => Err(Box::new(Refusal::Address {
                host: host.to_owned(),
                why,
            })),
            (true, None) => Err(format!("{host} has no address").into()),
            (false, None) => Ok(allowed),
        }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let this = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = this.lookup(&host).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}
