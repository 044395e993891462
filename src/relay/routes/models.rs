//! GET /v1/models and /v1/models/{model}: the models this key may use (its group's routes,
//! narrowed by the key's model limits).

use axum::Json;
use axum::extract::{Path, State};
use serde_json::{Value, json};

use crate::error::RelayError;
use crate::relay::pipeline::auth::Caller;
use crate::state::AppState;

fn model_object(id: &str) -> Value {
    json!({ "id": id, "object": "model", "created": 0, "owned_by": "tollgate" })
}

fn usable(state: &AppState, caller: &Caller) -> Vec<String> {
    let table = state.channel_pool.table().load();
    table
        .models_in(&caller.group)
        .into_iter()
        .filter(|m| caller.token.allows_model(m))
        .map(str::to_owned)
        .collect()
}

/// GET /v1/models.
pub async fn list_models(State(state): State<AppState>, caller: Caller) -> Json<Value> {
    let data: Vec<Value> = usable(&state, &caller)
        .iter()
        .map(|m| model_object(m))
        .collect();
    Json(json!({ "object": "list", "data": data }))
}

/// GET /v1/models/{model}.
pub async fn get_model(
    State(state): State<AppState>,
    caller: Caller,
    Path(model): Path<String>,
) -> Result<Json<Value>, RelayError> {
    if usable(&state, &caller).contains(&model) {
        Ok(Json(model_object(&model)))
    } else {
        Err(RelayError::UnknownRoute {
            method: "GET".into(),
            path: format!("/v1/models/{model}"),
        })
    }
}
