//! The phases every relayed request runs through, wired once in [`spine`]: the caller's key
//! ([`auth`]), admission and the reservation, the detached task, picking channels and the
//! attempt loop, reading the answer whole or streamed into the one meter, settlement and the
//! crash journal, with the limits on bodies and streams they enforce.

pub mod admission;
pub mod attempt;
pub mod auth;
pub mod body_budget;
pub mod body_limit;
pub mod body_read;
pub mod budget;
pub mod ceiling;
pub mod count_guard;
pub mod detach;
pub mod durable;
pub mod ending;
pub mod failure;
pub mod keepalive;
pub mod max_cost;
pub mod media;
pub mod meter;
pub mod meter_tally;
pub mod outcome;
pub mod pick;
pub mod pipe;
pub mod redact;
pub mod settle;
pub mod spine;
pub mod sse;
pub mod stream;
pub mod whole;
