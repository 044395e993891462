//! Every route is declared once, here-shaped: path, method, who may call it, handler.
//!
//! An [`ApiRouter`] collects `.route(path, get(Access::User, handler).post(...))` lines the way
//! axum's `Router` does, and also records each [`Endpoint`] (method, path, [`Access`], handler
//! name). From that one declaration come the axum router, the OpenAPI document
//! ([`crate::http::openapi`], served at `/api/openapi.json`) and the authorization-matrix test
//! (tests/authz_matrix.rs: a declared route without a row in the matrix fails it).
//!
//! The access level is what the handler's extractor enforces (`Session`, `AdminSession`,
//! `RootSession`, the relay's `Caller`); the matrix test checks the two agree for every route.

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodFilter, MethodRouter};

use crate::state::AppState;

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    /// Anyone (sign-in, registration, public options, the payment notification, ...).
    Public,
    /// A signed-in, enabled user (session cookie or system access token, plus `New-Api-User`).
    User,
    /// An admin (role ≥ 10).
    Admin,
    /// The super admin (role ≥ 100).
    Root,
    /// A relay caller: an `sk-` API key of an enabled token of an enabled user.
    ApiKey,
}

impl Access {
    /// The name used in the OpenAPI document and the matrix test.
    pub fn name(self) -> &'static str {
        match self {
            Access::Public => "public",
            Access::User => "user",
            Access::Admin => "admin",
            Access::Root => "root",
            Access::ApiKey => "api_key",
        }
    }
}

/// An HTTP method a route can be declared for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// GET.
    Get,
    /// POST.
    Post,
    /// PUT.
    Put,
    /// PATCH.
    Patch,
    /// DELETE.
    Delete,
}

impl Method {
    /// Lower-case name (as in OpenAPI).
    pub fn name(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Post => "post",
            Method::Put => "put",
            Method::Patch => "patch",
            Method::Delete => "delete",
        }
    }

    fn filter(self) -> MethodFilter {
        match self {
            Method::Get => MethodFilter::GET,
            Method::Post => MethodFilter::POST,
            Method::Put => MethodFilter::PUT,
            Method::Patch => MethodFilter::PATCH,
            Method::Delete => MethodFilter::DELETE,
        }
    }

    /// Every method, for routes that answer any method alike.
    pub const ALL: [Method; 5] = [
        Method::Get,
        Method::Post,
        Method::Put,
        Method::Patch,
        Method::Delete,
    ];
}

/// What the OpenAPI document says about a request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// No body.
    None,
    /// A JSON body (loosely typed in the document).
    Json,
    /// A `multipart/form-data` upload.
    Multipart,
    /// A form or query-string style body (`application/x-www-form-urlencoded`).
    Form,
    /// A JSON body of rate limits (P15): typed in the document as the `Limits` schema
    /// ([`crate::http::openapi`]).
    Limits,
}

/// One declared (method, path) pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The method.
    pub method: Method,
    /// The path as axum matches it (`{id}`, `{*rest}`).
    pub path: String,
    /// Who may call it.
    pub access: Access,
    /// The handler's Rust path (e.g. `tollgate::console::token::list_tokens`).
    pub handler: &'static str,
    /// The request body.
    pub body: Body,
}

/// The declared methods of one path: an axum [`MethodRouter`] plus what was declared.
pub struct Methods {
    router: MethodRouter<AppState>,
    ops: Vec<(Method, Access, &'static str, Body)>,
}

impl Methods {
    fn new() -> Methods {
        Methods {
            router: MethodRouter::new(),
            ops: Vec::new(),
        }
    }

    fn on<H, T>(mut self, method: Method, access: Access, handler: H) -> Methods
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        let body = match method {
            Method::Get | Method::Delete => Body::None,
            Method::Post | Method::Put | Method::Patch => Body::Json,
        };
        self.router = self.router.on(method.filter(), handler);
        self.ops
            .push((method, access, std::any::type_name::<H>(), body));
        self
    }

    /// Adds a GET handler.
    pub fn get<H, T>(self, access: Access, handler: H) -> Methods
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.on(Method::Get, access, handler)
    }

    /// Adds a POST handler.
    pub fn post<H, T>(self, access: Access, handler: H) -> Methods
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.on(Method::Post, access, handler)
    }

    /// Adds a PUT handler.
    pub fn put<H, T>(self, access: Access, handler: H) -> Methods
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.on(Method::Put, access, handler)
    }

    /// Adds a DELETE handler.
    pub fn delete<H, T>(self, access: Access, handler: H) -> Methods
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.on(Method::Delete, access, handler)
    }

    /// Says the body of the methods declared so far is of `kind` (default: JSON for POST/PUT/
    /// PATCH, none otherwise).
    pub fn body(mut self, kind: Body) -> Methods {
        for op in &mut self.ops {
            if op.0 != Method::Get {
                op.3 = kind;
            }
        }
        self
    }
}

/// A GET route.
pub fn get<H, T>(access: Access, handler: H) -> Methods
where
    H: Handler<T, AppState>,
    T: 'static,
{
    Methods::new().get(access, handler)
}

/// A POST route.
pub fn post<H, T>(access: Access, handler: H) -> Methods
where
    H: Handler<T, AppState>,
    T: 'static,
{
    Methods::new().post(access, handler)
}

/// A PUT route.
pub fn put<H, T>(access: Access, handler: H) -> Methods
where
    H: Handler<T, AppState>,
    T: 'static,
{
    Methods::new().put(access, handler)
}

/// A DELETE route.
pub fn delete<H, T>(access: Access, handler: H) -> Methods
where
    H: Handler<T, AppState>,
    T: 'static,
{
    Methods::new().delete(access, handler)
}

/// A route answering every method in [`Method::ALL`] with one handler.
pub fn any<H, T>(access: Access, handler: H) -> Methods
where
    H: Handler<T, AppState>,
    T: 'static,
{
    Method::ALL
        .into_iter()
        .fold(Methods::new(), |m, method| {
            m.on(method, access, handler.clone())
        })
        .body(Body::None)
}

/// Routes plus their declarations.
#[must_use]
pub struct ApiRouter {
    router: Router<AppState>,
    endpoints: Vec<Endpoint>,
}

impl Default for ApiRouter {
    fn default() -> Self {
        ApiRouter::new()
    }
}

impl ApiRouter {
    /// No routes.
    pub fn new() -> ApiRouter {
        ApiRouter {
            router: Router::new(),
            endpoints: Vec::new(),
        }
    }

    /// Declares `path` with `methods` (like [`Router::route`]; the same path may be declared
    /// again with other methods).
    pub fn route(mut self, path: &str, methods: Methods) -> ApiRouter {
        for (method, access, handler, body) in methods.ops {
            self.endpoints.push(Endpoint {
                method,
                path: path.to_owned(),
                access,
                handler,
                body,
            });
        }
        self.router = self.router.route(path, methods.router);
        self
    }

    /// Merges another set of routes (like [`Router::merge`]).
    pub fn merge(mut self, other: ApiRouter) -> ApiRouter {
        self.endpoints.extend(other.endpoints);
        self.router = self.router.merge(other.router);
        self
    }

    /// Applies `f` to the router (layers), keeping the declarations.
    pub fn map_router(mut self, f: impl FnOnce(Router<AppState>) -> Router<AppState>) -> ApiRouter {
        self.router = f(self.router);
        self
    }

    /// The declarations so far.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// The router and the declarations.
    pub fn split(self) -> (Router<AppState>, Vec<Endpoint>) {
        (self.router, self.endpoints)
    }
}
