//! The connection pools behind an [`HttpClient`](super::HttpClient), one per
//! policy.
//!
//! Rules: a pool is never shared between policies, since a connection
//! kept alive for one would otherwise serve another; every checked pool
//! resolves through a [`CheckedResolver`] and follows redirects only as
//! its policy allows, and never uses a proxy from the environment. Pools
//! for endpoints saved as local are made on first use and kept.

use std::sync::{Arc, Mutex, PoisonError};

use reqwest::dns::Resolve;

use super::allow::{AllowList, Destination};
use super::policy::{self, CheckedResolver, Delegate, Policy, Reach};
use crate::tool::NetworkScope;

/// One connection pool and the policy its connections were checked
/// against. Pools are never shared between policies: a connection kept
/// alive for one would otherwise serve another.
pub(super) struct Lane {
    pub(super) client: reqwest::Client,
    /// `None` for the unrestricted lane.
    pub(super) policy: Option<Arc<Policy>>,
}

impl Lane {
    fn checked(
        scope: NetworkScope,
        reach: Reach,
        allow: AllowList,
        resolver: &Arc<dyn Resolve>,
    ) -> Result<Self, String> {
        let policy = Arc::new(Policy::new(scope, reach, allow));
        let client = reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(Arc::new(CheckedResolver {
                policy: policy.clone(),
                inner: resolver.clone(),
            }))
            .redirect(policy.redirects())
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            client,
            policy: Some(policy),
        })
    }

    fn unrestricted(resolver: Option<&Arc<dyn Resolve>>) -> Result<Self, String> {
        let mut builder = reqwest::Client::builder();
        if let Some(resolver) = resolver {
            builder = builder.dns_resolver(Arc::new(Delegate(resolver.clone())));
        }
        let client = builder.build().map_err(|e| e.to_string())?;
        Ok(Self {
            client,
            policy: None,
        })
    }
}

pub(super) struct Pools {
    pub(super) local: Arc<Lane>,
    pub(super) internet: Arc<Lane>,
    pub(super) unrestricted: Arc<Lane>,
    /// What the checked lanes resolve with.
    resolver: Arc<dyn Resolve>,
    /// Lanes for endpoints an operator saved as local (loopback plus
    /// exactly that destination), made when first asked for.
    endpoints: Mutex<Vec<(Destination, Arc<Lane>)>>,
}

impl Pools {
    pub(super) fn build(
        allow: AllowList,
        resolver: Option<Arc<dyn Resolve>>,
    ) -> Result<Self, String> {
        let checked: Arc<dyn Resolve> = resolver
            .clone()
            .unwrap_or_else(|| Arc::new(policy::SystemResolver));
        Ok(Self {
            local: Arc::new(Lane::checked(
                NetworkScope::Local,
                Reach::Loopback,
                AllowList::default(),
                &checked,
            )?),
            internet: Arc::new(Lane::checked(
                NetworkScope::Internet,
                Reach::Public,
                allow,
                &checked,
            )?),
            unrestricted: Arc::new(Lane::unrestricted(resolver.as_ref())?),
            resolver: checked,
            endpoints: Mutex::new(Vec::new()),
        })
    }

    /// The lane for an endpoint saved as local: loopback, plus `saved`.
    pub(super) fn saved_local(&self, saved: Destination) -> Arc<Lane> {
        // The list is only ever appended to, so a poisoned lock still
        // holds usable lanes.
        let mut endpoints = self
            .endpoints
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((_, lane)) = endpoints.iter().find(|(d, _)| *d == saved) {
            return lane.clone();
        }
        let allow = AllowList::new(vec![saved.clone()]);
        match Lane::checked(NetworkScope::Local, Reach::Loopback, allow, &self.resolver) {
            Ok(lane) => {
                let lane = Arc::new(lane);
                endpoints.push((saved, lane.clone()));
                lane
            }
            // Building only fails where the other lanes failed to build
            // too; the plain loopback lane then refuses the endpoint.
            Err(_) => self.local.clone(),
        }
    }
}
