//! Unit tests of the channel records, the indexes and listing.

use super::abilities::{self, AbilityKey};
use super::query::{ChannelQuery, Order};
use super::*;
use crate::Store;

pub(crate) fn sample(name: &str) -> Channel {
    Channel {
        id: ChannelId(0),
        name: name.to_owned(),
        channel_type: 1,
        key: Secret::new("sk-a\nsk-b"),
        openai_organization: String::new(),
        max_input_tokens: 0,
        base_url: String::new(),
        other: String::new(),
        model_mapping: String::new(),
        status_code_mapping: String::new(),
        models: "gpt-4o, gpt-4o-mini".to_owned(),
        group: "default,vip".to_owned(),
        auto_ban: 1,
        test_model: String::new(),
        proxy: String::new(),
        priority: 0,
        weight: 0,
        tag: String::new(),
        setting: String::new(),
        param_override: String::new(),
        used_quota: Quota::ZERO,
        balance: 0.0,
        response_time: 0,
        status: STATUS_ENABLED,
        other_info: String::new(),
        created_time: 0,
        test_time: 0,
        balance_updated_time: 0,
    }
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("open");
    (dir, store)
}

#[test]
fn insert_update_delete_keep_the_ability_and_tag_indexes_in_step() {
    let (_dir, store) = store();
    let ch = store
        .write_blocking(|wtx| insert(wtx, sample("a")))
        .expect("insert");
    assert_eq!(ch.id, ChannelId(1));
    let rows = store.read_blocking(abilities::list).expect("list");
    assert_eq!(rows.len(), 4, "2 groups × 2 models");
    assert!(rows.contains_key(&AbilityKey {
        group: "vip".into(),
        model: "gpt-4o-mini".into(),
        channel: ch.id
    }));

    let mut changed = ch.clone();
    changed.models = "o3".into();
    changed.tag = "t1".into();
    changed.status = STATUS_AUTO_DISABLED;
    store
        .write_blocking(|wtx| update(wtx, &changed))
        .expect("update");
    let rows = store.read_blocking(abilities::list).expect("list");
    assert_eq!(rows.len(), 2);
    assert!(rows.values().all(|a| !a.enabled && a.tag == "t1"));
    assert_eq!(store.read_blocking(abilities::verify).expect("verify"), 0);
    let tagged = store
        .write_blocking(|wtx| ids_by_tag_rw(wtx, "t1"))
        .expect("tag");
    assert_eq!(tagged, vec![ch.id]);

    store
        .write_blocking(|wtx| delete(wtx, ch.id))
        .expect("delete");
    assert!(
        store
            .read_blocking(abilities::list)
            .expect("list")
            .is_empty()
    );
    let tagged = store
        .write_blocking(|wtx| ids_by_tag_rw(wtx, "t1"))
        .expect("tag");
    assert!(tagged.is_empty());
}

#[test]
fn rebuild_repairs_a_damaged_index() {
    let (_dir, store) = store();
    store
        .write_blocking(|wtx| insert(wtx, sample("a")))
        .expect("insert");
    store
        .write_blocking(|wtx| -> crate::Result<()> {
            let mut t = wtx.open_table(crate::tables::ABILITIES)?;
            t.remove(("default", "gpt-4o", 1))?;
            t.insert(("ghost", "m", 99), [0u8, 0, 0, 0].as_slice())?;
            Ok(())
        })
        .expect("damage");
    assert_eq!(store.read_blocking(abilities::verify).expect("verify"), 2);
    let report = store.write_blocking(abilities::rebuild).expect("rebuild");
    assert_eq!(
        (report.channels, report.abilities, report.repaired),
        (1, 4, 2)
    );
    assert_eq!(store.read_blocking(abilities::verify).expect("verify"), 0);
}

fn with(id: i64, priority: i64, tag: &str) -> Channel {
    let mut c = sample(&format!("c{id}"));
    c.id = ChannelId(id);
    c.priority = priority;
    c.tag = tag.to_owned();
    c
}

#[test]
fn query_orders_filters_and_pages() {
    let all = vec![
        with(1, 0, ""),
        with(2, 5, "x"),
        with(3, 0, "x"),
        with(4, 1, ""),
    ];
    let q = ChannelQuery {
        limit: 2,
        ..ChannelQuery::default()
    };
    let page = q.apply(all.clone());
    assert_eq!(page.total, 4);
    let ids: Vec<i64> = page.items.iter().map(|c| c.id.0).collect();
    assert_eq!(ids, vec![2, 4], "priority desc");
    let q = ChannelQuery {
        order: Order::IdDesc,
        offset: 2,
        limit: 2,
        ..ChannelQuery::default()
    };
    let ids: Vec<i64> = q.apply(all.clone()).items.iter().map(|c| c.id.0).collect();
    assert_eq!(ids, vec![2, 1]);
    let q = ChannelQuery {
        tag_mode: true,
        limit: 10,
        ..ChannelQuery::default()
    };
    let page = q.apply(all.clone());
    assert_eq!(page.total, 3, "tag x is one unit");
    let q = ChannelQuery {
        keyword: "C3".into(),
        limit: 10,
        ..ChannelQuery::default()
    };
    assert_eq!(q.apply(all.clone()).total, 1);
    let q = ChannelQuery {
        model: "mini".into(),
        group: "vip".into(),
        limit: 10,
        ..ChannelQuery::default()
    };
    assert_eq!(q.apply(all.clone()).total, 4);
    let q = ChannelQuery {
        group: "vi".into(),
        limit: 10,
        ..ChannelQuery::default()
    };
    assert_eq!(q.apply(all).total, 0, "group matches whole items only");
}
