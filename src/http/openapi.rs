//! The OpenAPI 3.1 document, built from the route declarations ([`crate::http::api`]) and
//! served at `GET /api/openapi.json`.
//!
//! Who may call an operation is its `security`: console operations need the session cookie or
//! a system access token, each with the `New-Api-User` header, and name the least role as the
//! requirement's scope (`user`, `admin`, `root`, OpenAPI 3.1 "role names"); relay operations
//! need an API key; public operations have no `security`. Bodies are loosely typed (any JSON)
//! except where a route says otherwise: rate limits are the `Limits` schema ([`limits_schema`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Extension;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use utoipa::openapi::path::{Operation, Parameter, ParameterIn, PathItem};
use utoipa::openapi::request_body::RequestBody;
use utoipa::openapi::response::{Response as ApiResponse, Responses};
use utoipa::openapi::schema::{
    Array, Object, ObjectBuilder, Schema, SchemaFormat, SchemaType, Type,
};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, Http, HttpAuthScheme, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{
    Components, Content, HttpMethod, Info, OpenApi, Paths, Ref, RefOr, Required,
};

use super::api::{Access, Body, Endpoint, Method};
use crate::console::service::session::SESSION_COOKIE;
use crate::http::extract::USER_HEADER;

/// Security scheme: the console's signed session cookie.
pub const SCHEME_SESSION: &str = "session";
/// Security scheme: a system access token in `Authorization`.
pub const SCHEME_ACCESS_TOKEN: &str = "access_token";
/// Security scheme: the `New-Api-User` header every authenticated console call carries.
pub const SCHEME_USER_HEADER: &str = "new_api_user";
/// Security scheme: an `sk-` API key (`Authorization: Bearer`).
pub const SCHEME_API_KEY: &str = "api_key";
/// Security scheme: an API key in `x-api-key` (Anthropic clients).
pub const SCHEME_X_API_KEY: &str = "x_api_key";

/// The serialized document, shared by the route that serves it.
#[derive(Debug, Clone)]
pub struct Document(pub Bytes);

/// `GET /api/openapi.json`.
pub async fn serve(Extension(doc): Extension<Arc<Document>>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], doc.0.clone()).into_response()
}

/// The document for `endpoints`.
pub fn document(endpoints: &[Endpoint]) -> OpenApi {
    let mut paths: BTreeMap<String, PathItem> = BTreeMap::new();
    for endpoint in endpoints {
        let (path, params) = openapi_path(&endpoint.path);
        let operation = operation(endpoint, &path, params);
        let method = http_method(endpoint.method);
        let item = paths.entry(path).or_default();
        item.merge_operations(PathItem::new(method, operation));
    }
    let mut all = Paths::new();
    all.paths = paths.into_iter().collect();
    let mut doc = OpenApi::new(Info::new("Tollgate", env!("CARGO_PKG_VERSION")), all);
    doc.components = Some(components());
    doc
}

/// The document as JSON bytes (what `/api/openapi.json` answers).
pub fn to_json(doc: &OpenApi) -> Bytes {
    // A document of strings and maps always serializes; an empty body would be the only outcome.
    Bytes::from(serde_json::to_vec(doc).unwrap_or_default())
}

fn http_method(method: Method) -> HttpMethod {
    match method {
        Method::Get => HttpMethod::Get,
        Method::Post => HttpMethod::Post,
        Method::Put => HttpMethod::Put,
        Method::Patch => HttpMethod::Patch,
        Method::Delete => HttpMethod::Delete,
    }
}

/// `/v1/files/{*rest}` → `/v1/files/{rest}` and its path parameters.
fn openapi_path(path: &str) -> (String, Vec<Parameter>) {
    let mut params = Vec::new();
    let segments: Vec<String> = path
        .split('/')
        .map(
            |segment| match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => {
                    let name = name.trim_start_matches('*');
                    params.push(path_parameter(name));
                    format!("{{{name}}}")
                }
                None => segment.to_owned(),
            },
        )
        .collect();
    (segments.join("/"), params)
}

fn path_parameter(name: &str) -> Parameter {
    let mut param = Parameter::new(name);
    param.parameter_in = ParameterIn::Path;
    param.required = Required::True;
    let schema = if name == "id" {
        Object::builder()
            .schema_type(SchemaType::Type(Type::Integer))
            .format(Some(SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::Int64,
            )))
            .build()
    } else {
        Object::builder()
            .schema_type(SchemaType::Type(Type::String))
            .min_length(Some(1))
            .build()
    };
    param.schema = Some(RefOr::T(Schema::Object(schema)));
    param
}

fn operation(endpoint: &Endpoint, path: &str, params: Vec<Parameter>) -> Operation {
    let mut op = Operation::new();
    op.operation_id = Some(operation_id(endpoint.method, path));
    op.summary = Some(handler_name(endpoint.handler));
    op.tags = Some(vec![tag(path)]);
    op.parameters = (!params.is_empty()).then(|| params.into_iter().map(RefOr::T).collect());
    op.request_body = request_body(endpoint.body).map(RefOr::T);
    op.security = security(endpoint.access);
    let mut responses = Responses::new();
    responses.responses.insert(
        "default".to_owned(),
        RefOr::T(ApiResponse::new("Any answer")),
    );
    op.responses = responses;
    op
}

/// `get /api/token/{id}` → `get_api_token_id` (unique per method and path).
fn operation_id(method: Method, path: &str) -> String {
    let mut id = method.name().to_owned();
    for part in path.split(|c: char| !c.is_ascii_alphanumeric()) {
        if !part.is_empty() {
            id.push('_');
            id.push_str(part);
        }
    }
    if path.ends_with('/') {
        id.push_str("_slash");
    }
    id
}

/// `tollgate::console::token::list_tokens` → `token::list_tokens`; closures keep their module.
fn handler_name(full: &str) -> String {
    let parts: Vec<&str> = full
        .split("::")
        .filter(|p| !p.starts_with('{') && *p != "tollgate")
        .collect();
    parts[parts.len().saturating_sub(2)..].join("::")
}

/// The first meaningful path segment: `/api/token/…` → `token`, `/v1/…` → `relay`.
fn tag(path: &str) -> String {
    let mut segments = path.split('/').filter(|s| !s.is_empty());
    match segments.next() {
        Some("api") => segments.next().unwrap_or("api").to_owned(),
        Some("pg") => "playground".to_owned(),
        _ => "relay".to_owned(),
    }
}

fn request_body(body: Body) -> Option<RequestBody> {
    let content_type = match body {
        Body::None => return None,
        Body::Json | Body::Limits => "application/json",
        Body::Multipart => "multipart/form-data",
        Body::Form => "application/x-www-form-urlencoded",
    };
    let schema = match body {
        Body::Limits => RefOr::Ref(Ref::from_schema_name(LIMITS_SCHEMA)),
        Body::Json => RefOr::T(Schema::Object(Object::builder().build())),
        _ => RefOr::T(Schema::Object(
            Object::builder()
                .schema_type(SchemaType::Type(Type::Object))
                .build(),
        )),
    };
    let mut request = RequestBody::new();
    request.content.insert(
        content_type.to_owned(),
        RefOr::T(Content::new(Some(schema))),
    );
    Some(request)
}

/// The name of the rate limits' schema.
pub const LIMITS_SCHEMA: &str = "Limits";

/// One limit: a whole number, 0 meaning none.
fn limit_field(description: &str) -> Object {
    Object::builder()
        .schema_type(SchemaType::Type(Type::Integer))
        .minimum(Some(0.0))
        .description(Some(description))
        .build()
}

/// The four limits of an owner (user, API key, channel, channel key, RateLimitRules rule).
fn four_limits(builder: ObjectBuilder) -> ObjectBuilder {
    builder
        .property(
            "concurrency_limit",
            limit_field("Requests in flight at once (0: none)."),
        )
        .property("rpm_limit", limit_field("Requests per minute (0: none)."))
        .property(
            "tpm_limit",
            limit_field(
                "Tokens per minute, reserved from the estimate and corrected at settlement (0: none).",
            ),
        )
        .property(
            "rpd_limit",
            limit_field("Requests per day, the last 24 hours (0: none)."),
        )
}

/// `PUT /api/{token,user,channel}/{id}/limits`' body (P15): the four limits and, for a channel,
/// its upstream keys' own (`key_limits`, by the key's 0-based line).
pub fn limits_schema() -> Schema {
    let key = four_limits(
        Object::builder()
            .schema_type(SchemaType::Type(Type::Object))
            .property(
                "index",
                limit_field("The key's line in the channel's key list, 0 being the first."),
            )
            .required("index"),
    )
    .build();
    let key_limits = Array::builder()
        .items(key)
        .description(Some(
            "A channel's upstream keys' own limits (channels only; at most one entry per key).",
        ))
        .build();
    Schema::Object(
        four_limits(Object::builder().schema_type(SchemaType::Type(Type::Object)))
            .property("key_limits", key_limits)
            .description(Some(
                "Rate limits; the strictest applicable one wins (README, Rate limits).",
            ))
            .build(),
    )
}

fn security(access: Access) -> Option<Vec<SecurityRequirement>> {
    let role = match access {
        Access::Public => return None,
        Access::ApiKey => {
            return Some(vec![
                SecurityRequirement::new(SCHEME_API_KEY, Vec::<String>::new()),
                SecurityRequirement::new(SCHEME_X_API_KEY, Vec::<String>::new()),
            ]);
        }
        Access::User | Access::Admin | Access::Root => access.name(),
    };
    Some(vec![
        SecurityRequirement::new(SCHEME_SESSION, [role])
            .add(SCHEME_USER_HEADER, Vec::<String>::new()),
        SecurityRequirement::new(SCHEME_ACCESS_TOKEN, [role])
            .add(SCHEME_USER_HEADER, Vec::<String>::new()),
    ])
}

fn components() -> Components {
    let mut components = Components::new();
    components
        .schemas
        .insert(LIMITS_SCHEMA.to_owned(), RefOr::T(limits_schema()));
    let schemes = [
        (
            SCHEME_SESSION,
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(SESSION_COOKIE))),
        ),
        (
            SCHEME_ACCESS_TOKEN,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("Authorization"))),
        ),
        (
            SCHEME_USER_HEADER,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new(USER_HEADER))),
        ),
        (
            SCHEME_API_KEY,
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        ),
        (
            SCHEME_X_API_KEY,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("x-api-key"))),
        ),
    ];
    for (name, scheme) in schemes {
        components
            .security_schemes
            .insert(name.to_owned(), RefOr::T(scheme));
    }
    components
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_become_plain_parameters_and_ids_are_integers() {
        let (path, params) = openapi_path("/v1/files/{*rest}");
        assert_eq!(path, "/v1/files/{rest}");
        assert_eq!(params.len(), 1);
        let (path, params) = openapi_path("/api/token/{id}/key");
        assert_eq!(path, "/api/token/{id}/key");
        let json = serde_json::to_value(&params[0]).unwrap_or_default();
        assert_eq!(json["schema"]["type"], "integer");
    }

    #[test]
    fn operation_ids_tell_trailing_slashes_apart() {
        assert_eq!(
            operation_id(Method::Get, "/api/token/{id}"),
            "get_api_token_id"
        );
        assert_eq!(
            operation_id(Method::Delete, "/api/token/{id}/"),
            "delete_api_token_id_slash"
        );
    }

    #[test]
    fn handler_names_keep_their_module() {
        assert_eq!(
            handler_name("tollgate::console::token::list_tokens"),
            "token::list_tokens"
        );
    }
}
