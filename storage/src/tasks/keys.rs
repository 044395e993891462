//! The filter keys a task is indexed under in [`crate::tables::TASK_BY_KEY`]: the list's
//! prefix (`mj` or `t`) followed by one dimension, so that every filter the console sends
//! (owner, channel, both, upstream id) reads one key's range in time order.
//!
//! - `mj` — every drawing task; `mj:u:17` — user 17's; `mj:c:3` — channel 3's;
//!   `mj:uc:17:3` — user 17's on channel 3; `mj:id:<upstream id>` — by upstream id.
//! - The same with `t` for the task list.

use super::{List, Task};

/// Every key `task` is listed under.
pub fn of(task: &Task) -> Vec<String> {
    let p = task.kind.list().prefix();
    let (u, c) = (task.user_id.0, task.channel_id.0);
    let mut keys = vec![
        p.to_owned(),
        format!("{p}:u:{u}"),
        format!("{p}:c:{c}"),
        format!("{p}:uc:{u}:{c}"),
    ];
    if !task.upstream_id.is_empty() {
        keys.push(upstream(task.kind.list(), &task.upstream_id));
    }
    keys
}

/// The key of one upstream id in `list`.
pub fn upstream(list: List, id: &str) -> String {
    format!("{}:id:{id}", list.prefix())
}

/// The key that answers a filter on owner and/or channel (neither: the whole list).
pub fn scope(list: List, user: Option<i64>, channel: Option<i64>) -> String {
    let p = list.prefix();
    match (user, channel) {
        (None, None) => p.to_owned(),
        (Some(u), None) => format!("{p}:u:{u}"),
        (None, Some(c)) => format!("{p}:c:{c}"),
        (Some(u), Some(c)) => format!("{p}:uc:{u}:{c}"),
    }
}
