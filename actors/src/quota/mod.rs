//! `QuotaBook`: every user's ledger ([`ledger::Ledger`]) in memory, the only place balances are
//! decided. The relay reserves before forwarding and settles (or releases) after; console
//! operations that change a balance go through [`QuotaBook::adjust`]. Persistence is the log
//! writer's: every settled change is queued to it with its log row.
//!
//! Why not a mailbox actor per user (DESIGN.md step 4)? The same single-owner guarantee is kept
//! with a per-user mutex that is held for a few hundred nanoseconds and never across an
//! `.await`: different users never contend, and a reservation costs no cross-thread hand-off
//! (DESIGN.md measured those at tens of µs). A ledger is built from storage on a user's first
//! request and kept while used: [`QuotaBook::evict_idle`] drops idle ones ([`evict`]), and the
//! next request builds the ledger again, exactly.
//!
//! The files, by concept: [`book`] (the book itself and loading a ledger), [`pin`] (a ledger
//! in memory and its pins), [`reserve`] (reservations), [`hold`] (a running reservation and its
//! settlement), [`credit`] (balance changes outside requests), [`accounts`] (what the console
//! and admission read or edit of a loaded ledger), [`evict`] (idle ledgers leave memory).

mod accounts;
mod book;
pub mod budget;
mod credit;
mod evict;
mod hold;
pub mod ledger;
pub mod output;
mod pin;
mod reserve;

pub use book::{QuotaBook, SettleWatch, UnixClock};
pub use credit::Credit;
pub use hold::Hold;
pub use ledger::{Billed, BudgetView, Refusal};
pub use output::OutputAsk;
pub use reserve::{Gate, QuotaError, Reservation, no_gate};
