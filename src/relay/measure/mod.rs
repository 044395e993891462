//! Counting and pricing: what a request's head says, its prompt tokens (estimated and exact),
//! the tokenizers, the usage an answer reports, prices and component prices.

pub mod components;
pub mod estimate;
pub mod price;
pub mod prompt;
pub mod prompt_count;
pub mod request_head;
pub mod tokenize;
pub mod usage;
