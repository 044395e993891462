//! Online top-up orders (Epay) and their indexes: by trade number (unique) and by user.
//!
//! An order is created pending; the payment notification completes it with a compare-and-swap
//! from pending to success ([`complete`]) inside the transaction that credits the balance and
//! writes the top-up log, so an order is credited exactly once however often the gateway
//! notifies.

use redb::{ReadTransaction, ReadableTable, ReadableTableMetadata, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::tables::{TOPUP_BY_TRADE_NO, TOPUPS, TOPUPS_BY_USER};
use crate::{Quota, Result, StorageError, TopUpId, UserId, codec, meta};

/// Order status: waiting for the payment notification.
pub const STATUS_PENDING: &str = "pending";
/// Order status: paid and credited.
pub const STATUS_SUCCESS: &str = "success";

/// One online top-up order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopUp {
    /// Id.
    pub id: TopUpId,
    /// Who pays and is credited.
    pub user_id: UserId,
    /// Amount bought, in US$ of quota (the console's top-up amount).
    pub amount: i64,
    /// Quota credited when paid (`amount × QuotaPerUnit` at order time).
    pub quota: Quota,
    /// Money payable, in cents of the payment currency (exact; compared with the notification).
    pub money_cents: i64,
    /// Unique trade number sent to the gateway (`out_trade_no`).
    pub trade_no: String,
    /// Epay payment type asked for (`alipay`, `wxpay`).
    pub payment_method: String,
    /// Payment type the gateway reported when paid.
    pub paid_type: String,
    /// The gateway's own trade number, when paid.
    pub gateway_trade_no: String,
    /// `pending` or `success`.
    pub status: String,
    /// Unix seconds of creation.
    pub created_time: i64,
    /// Unix seconds of completion, 0 while pending.
    pub complete_time: i64,
}

fn load(table: &impl ReadableTable<i64, &'static [u8]>, id: TopUpId) -> Result<Option<TopUp>> {
    match table.get(id.0)? {
        Some(bytes) => Ok(Some(codec::decode(bytes.value())?)),
        None => Ok(None),
    }
}

/// Stores a new order (its `id` is assigned here); a taken trade number is a
/// [`StorageError::Duplicate`].
pub fn insert(wtx: &WriteTransaction, mut order: TopUp) -> Result<TopUp> {
    let mut by_trade = wtx.open_table(TOPUP_BY_TRADE_NO)?;
    if by_trade.get(order.trade_no.as_str())?.is_some() {
        return Err(StorageError::Duplicate {
            what: "trade number",
        });
    }
    order.id = TopUpId(meta::next_id(wtx, "topups")?);
    by_trade.insert(order.trade_no.as_str(), order.id.0)?;
    wtx.open_table(TOPUPS_BY_USER)?
        .insert((order.user_id.0, order.id.0), ())?;
    wtx.open_table(TOPUPS)?
        .insert(order.id.0, codec::encode(&order)?.as_slice())?;
    Ok(order)
}

/// Finds an order by trade number.
pub fn find_by_trade_no(rtx: &ReadTransaction, trade_no: &str) -> Result<Option<TopUp>> {
    let by_trade = rtx.open_table(TOPUP_BY_TRADE_NO)?;
    let Some(id) = by_trade.get(trade_no)?.map(|id| TopUpId(id.value())) else {
        return Ok(None);
    };
    load(&rtx.open_table(TOPUPS)?, id)
}

/// Completes the pending order `trade_no`: sets it to success with the gateway's facts and
/// returns it; `None` when there is no such order or it is not pending any more (a replayed
/// notification). The caller credits `quota` in the same transaction.
pub fn complete(
    wtx: &WriteTransaction,
    trade_no: &str,
    paid_type: &str,
    gateway_trade_no: &str,
    now: i64,
) -> Result<Option<TopUp>> {
    let by_trade = wtx.open_table(TOPUP_BY_TRADE_NO)?;
    let Some(id) = by_trade.get(trade_no)?.map(|id| TopUpId(id.value())) else {
        return Ok(None);
    };
    let mut table = wtx.open_table(TOPUPS)?;
    let Some(mut order) = load(&table, id)? else {
        return Ok(None);
    };
    if order.status != STATUS_PENDING {
        return Ok(None);
    }
    order.status = STATUS_SUCCESS.to_owned();
    order.paid_type = paid_type.to_owned();
    order.gateway_trade_no = gateway_trade_no.to_owned();
    order.complete_time = now;
    table.insert(order.id.0, codec::encode(&order)?.as_slice())?;
    Ok(Some(order))
}

/// A user's orders, newest first: one page and the number of their orders.
pub fn list_for_user(
    rtx: &ReadTransaction,
    user: UserId,
    offset: usize,
    limit: usize,
) -> Result<(Vec<TopUp>, u64)> {
    let index = rtx.open_table(TOPUPS_BY_USER)?;
    let orders = rtx.open_table(TOPUPS)?;
    let range = index.range((user.0, i64::MIN)..=(user.0, i64::MAX))?;
    let mut items = Vec::with_capacity(limit.min(128));
    let mut total = 0u64;
    for entry in range.rev() {
        let (key, _) = entry?;
        if total >= offset as u64 && items.len() < limit {
            let (_, id) = key.value();
            if let Some(order) = load(&orders, TopUpId(id))? {
                items.push(order);
            }
        }
        total += 1;
    }
    Ok((items, total))
}

/// Every user's orders, newest first: one page and the number of orders.
pub fn list(rtx: &ReadTransaction, offset: usize, limit: usize) -> Result<(Vec<TopUp>, u64)> {
    let table = rtx.open_table(TOPUPS)?;
    let total = table.len()?;
    let mut items = Vec::with_capacity(limit.min(128));
    for entry in table.iter()?.rev().skip(offset).take(limit) {
        let (_, bytes) = entry?;
        items.push(codec::decode(bytes.value())?);
    }
    Ok((items, total))
}
