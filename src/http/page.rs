//! Paging: the `?p=&page_size=` query every list takes, and the `{items, page, page_size,
//! total}` answer.

use serde::{Deserialize, Serialize};

/// Default page size (spec 01 §9).
pub const DEFAULT_PAGE_SIZE: usize = 10;
/// Largest page size a client may ask for.
pub const MAX_PAGE_SIZE: usize = 100;

/// `?p=<page>&page_size=<n>`. Pages count from 1 (0 is read as 1, for older clients).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct PageQuery {
    /// Page number.
    #[serde(default)]
    pub p: Option<usize>,
    /// Rows per page (`size` is accepted too, as the token list sends it).
    #[serde(default, alias = "size")]
    pub page_size: Option<usize>,
}

impl PageQuery {
    /// The 1-based page.
    pub fn page(&self) -> usize {
        self.p.unwrap_or(1).max(1)
    }

    /// Rows per page, clamped to `1..=MAX_PAGE_SIZE`.
    pub fn size(&self) -> usize {
        self.page_size
            .unwrap_or(DEFAULT_PAGE_SIZE)
            .clamp(1, MAX_PAGE_SIZE)
    }

    /// Rows to skip.
    pub fn offset(&self) -> usize {
        (self.page() - 1).saturating_mul(self.size())
    }
}

/// One page of a list.
#[derive(Debug, Serialize)]
pub struct Page<T> {
    /// The rows.
    pub items: Vec<T>,
    /// 1-based page number.
    pub page: usize,
    /// Rows per page.
    pub page_size: usize,
    /// Rows in the whole list.
    pub total: u64,
}

impl<T> Page<T> {
    /// Builds a page from the query that asked for it.
    pub fn new(query: PageQuery, items: Vec<T>, total: u64) -> Self {
        Page {
            items,
            page: query.page(),
            page_size: query.size(),
            total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging_arithmetic() {
        let q = PageQuery {
            p: Some(3),
            page_size: Some(20),
        };
        assert_eq!((q.page(), q.size(), q.offset()), (3, 20, 40));
        let q = PageQuery {
            p: Some(0),
            page_size: Some(0),
        };
        assert_eq!((q.page(), q.size(), q.offset()), (1, 1, 0));
        let q = PageQuery {
            p: None,
            page_size: Some(10_000),
        };
        assert_eq!(q.size(), MAX_PAGE_SIZE);
        let q = PageQuery {
            p: Some(usize::MAX),
            page_size: Some(100),
        };
        assert_eq!(q.offset(), usize::MAX, "saturates instead of overflowing");
    }
}
