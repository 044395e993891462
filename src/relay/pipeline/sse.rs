//! Server-sent events read incrementally from an upstream's bytes. Lines are split and their
//! fields read by `sseer`'s parser; [`SseReader`] gathers the lines into events and tells, for
//! every event, where it ends in the bytes just fed — so a caller can forward the upstream's
//! own bytes (no re-framing, no copy) and still cut between events.
//!
//! Nothing is allocated per event: the event's name and data go into two buffers that are
//! reused, and bytes are kept across reads only when a read ends inside a line. An event may
//! not grow past [`EVENT_MAX`] bytes (an upstream that never ends one would otherwise take all
//! memory), and a long line arriving in many reads is scanned once, not once per read.
//! [`event_stream`] is the other direction: the response that carries events to the client.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::{Buf, Bytes, BytesMut};
use sseer::parser::{RawEventLine, parse_line};

/// A `200 text/event-stream` response (not cached) whose body is `body`'s events.
pub fn event_stream(body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The largest event read, in bytes (its lines, comments included, with their line breaks):
/// room for an inline image of several megabytes in one event, far beyond any text delta.
pub const EVENT_MAX: usize = 64 << 20;

/// The upstream's current event grew past the reader's limit ([`EVENT_MAX`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an upstream event grew past {limit} bytes")]
pub struct EventTooLarge {
    /// The limit it passed.
    pub limit: usize,
}

/// One event, borrowed from the reader until the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<'a> {
    /// The `event:` field, empty when absent.
    pub name: &'a str,
    /// The `data:` lines, joined by `\n`.
    pub data: &'a str,
}

/// An incremental SSE reader: bytes in, events out (with where each ends).
#[derive(Debug)]
pub struct SseReader {
    /// The start of a line the last read ended inside of.
    partial: BytesMut,
    name: String,
    data: String,
    has_data: bool,
    /// Bytes of the complete lines of the event being read.
    pending: usize,
    /// The largest event accepted.
    limit: usize,
}

impl Default for SseReader {
    fn default() -> SseReader {
        SseReader::with_limit(EVENT_MAX)
    }
}

impl SseReader {
    /// A reader that refuses events larger than `limit` bytes.
    pub fn with_limit(limit: usize) -> SseReader {
        SseReader {
            partial: BytesMut::new(),
            name: String::new(),
            data: String::new(),
            has_data: false,
            pending: 0,
            limit,
        }
    }

    /// Feeds one read's bytes. `on_event` gets every event they complete, with the offset in
    /// `chunk` just past the blank line that ends it. Fails once the event being read is larger
    /// than the limit (the events completed before it have been handed out).
    pub fn feed(
        &mut self,
        chunk: &[u8],
        mut on_event: impl FnMut(Event<'_>, usize),
    ) -> Result<(), EventTooLarge> {
        if self.continues_a_line(chunk) {
            // No line ends in this read: keep it without scanning the line again.
            self.partial.extend_from_slice(chunk);
        } else if self.partial.is_empty() {
            let left = self.lines(chunk, 0, &mut on_event);
            self.partial.extend_from_slice(&chunk[chunk.len() - left..]);
        } else {
            let carried = self.partial.len();
            let mut joined = std::mem::take(&mut self.partial);
            joined.extend_from_slice(chunk);
            let left = self.lines(&joined, carried, &mut on_event);
            joined.advance(joined.len() - left);
            self.partial = joined;
        }
        if self.pending.saturating_add(self.partial.len()) > self.limit {
            return Err(EventTooLarge { limit: self.limit });
        }
        Ok(())
    }

    /// Whether `chunk` only lengthens the line the last read ended inside of: it holds no line
    /// break, and that line does not end in a CR (which a LF may follow, or which ends a line).
    fn continues_a_line(&self, chunk: &[u8]) -> bool {
        !self.partial.is_empty()
            && self.partial.last() != Some(&b'\r')
            && memchr::memchr2(b'\n', b'\r', chunk).is_none()
    }

    /// The stream ended: a last line without its line break, then an event without its blank
    /// line, are still read (`on_event` gets offset 0).
    pub fn finish(&mut self, mut on_event: impl FnMut(Event<'_>, usize)) {
        if !self.partial.is_empty() {
            let mut last = std::mem::take(&mut self.partial);
            last.extend_from_slice(b"\n");
            self.lines(&last, last.len(), &mut on_event);
        }
        if self.has_data {
            self.dispatch(0, &mut on_event);
        }
        self.pending = 0;
    }

    /// Whether the bytes fed so far end between two events, so bytes of Tollgate's own (a
    /// keep-alive ping) may go out without splitting one of the upstream's.
    pub fn at_boundary(&self) -> bool {
        self.partial.is_empty() && self.pending == 0
    }

    /// Reads the complete lines of `buf`, whose first `carried` bytes came from an earlier
    /// read; returns how many bytes at its end are left (an unfinished line).
    fn lines(
        &mut self,
        buf: &[u8],
        carried: usize,
        on_event: &mut impl FnMut(Event<'_>, usize),
    ) -> usize {
        let mut rest = buf;
        while let Some((line, next)) = parse_line(rest) {
            self.pending = self.pending.saturating_add(rest.len() - next.len());
            rest = next;
            match line {
                RawEventLine::Empty => {
                    self.pending = 0;
                    let end = (buf.len() - rest.len()).saturating_sub(carried);
                    if self.has_data {
                        self.dispatch(end, on_event);
                    } else {
                        self.name.clear();
                    }
                }
                RawEventLine::Comment => {}
                RawEventLine::Field {
                    field_name,
                    field_value,
                } => {
                    let value = field_value.unwrap_or_default();
                    match field_name {
                        b"event" => {
                            self.name.clear();
                            push_lossy(&mut self.name, value);
                        }
                        b"data" => {
                            if self.has_data {
                                self.data.push('\n');
                            }
                            push_lossy(&mut self.data, value);
                            self.has_data = true;
                        }
                        _ => {}
                    }
                }
            }
        }
        rest.len()
    }

    fn dispatch(&mut self, end: usize, on_event: &mut impl FnMut(Event<'_>, usize)) {
        on_event(
            Event {
                name: &self.name,
                data: &self.data,
            },
            end,
        );
        self.name.clear();
        self.data.clear();
        self.has_data = false;
    }
}

/// Appends `bytes` as text: checked by `str::from_utf8` (word-at-a-time over ASCII), and only
/// text that is not UTF-8 goes through `from_utf8_lossy`'s replacement characters.
fn push_lossy(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => out.push_str(text),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

/// One event in SSE framing: an `event:` line when it has a name, a `data:` line per line of
/// `data`, and the blank line that ends it (e.g. an upstream's error event re-framed after its
/// text was masked).
pub fn frame(name: &str, data: &str) -> Bytes {
    let mut out = BytesMut::with_capacity(name.len() + data.len() + 16);
    if !name.is_empty() {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\n");
    }
    for line in data.split('\n') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(b"\n");
    }
    out.extend_from_slice(b"\n");
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(reader: &mut SseReader, chunk: &[u8]) -> Vec<(String, String, usize)> {
        let mut events = Vec::new();
        reader
            .feed(chunk, |e, end| {
                events.push((e.name.to_owned(), e.data.to_owned(), end));
            })
            .expect("within the limit");
        events
    }

    #[test]
    fn bytes_that_are_not_utf8_read_as_replacement_characters() {
        let mut r = SseReader::default();
        let events = read(
            &mut r,
            b"event: a\xffb\ndata: {\"t\":\"\xe4\xbd\xa0\xe4\"}\n\n",
        );
        assert_eq!(
            events,
            vec![(
                "a\u{fffd}b".to_owned(),
                "{\"t\":\"\u{4f60}\u{fffd}\"}".to_owned(),
                31
            )]
        );
    }

    #[test]
    fn events_split_across_reads_with_names_comments_and_crlf() {
        let mut r = SseReader::default();
        assert!(read(&mut r, b"event: message_start\r\ndata: {\"a\"").is_empty());
        assert!(!r.at_boundary());
        let events = read(&mut r, b":1}\r\n\r\n: comment\n\ndata: x\ndata: y\n\n");
        assert_eq!(
            events,
            vec![
                ("message_start".to_owned(), "{\"a\":1}".to_owned(), 7),
                (String::new(), "x\ny".to_owned(), 35),
            ]
        );
        assert!(r.at_boundary());
    }

    #[test]
    fn offsets_point_past_each_event_in_the_read() {
        let body = b"data: one\n\ndata: two\n\ndata: thr";
        let mut r = SseReader::default();
        let events = read(&mut r, body);
        assert_eq!(events.len(), 2);
        assert_eq!(&body[..events[0].2], b"data: one\n\n");
        assert_eq!(&body[events[0].2..events[1].2], b"data: two\n\n");
        let events = read(&mut r, b"ee\n\n");
        assert_eq!(events, vec![(String::new(), "three".to_owned(), 4)]);
    }

    #[test]
    fn a_line_break_split_between_cr_and_lf() {
        let mut r = SseReader::default();
        assert!(read(&mut r, b"data: a\r").is_empty());
        assert!(read(&mut r, b"\n\r").is_empty());
        let events = read(&mut r, b"\n");
        assert_eq!(events, vec![(String::new(), "a".to_owned(), 1)]);
    }

    #[test]
    fn finish_reads_an_event_left_without_its_blank_line() {
        let mut r = SseReader::default();
        assert!(read(&mut r, b"data: tail").is_empty());
        let mut events = Vec::new();
        r.finish(|e, _| events.push(e.data.to_owned()));
        assert_eq!(events, vec!["tail".to_owned()]);
        assert!(r.at_boundary());
    }

    #[test]
    fn a_long_line_in_many_reads_is_read_whole() {
        let mut r = SseReader::default();
        assert!(read(&mut r, b"data: a").is_empty());
        for _ in 0..100 {
            assert!(read(&mut r, b"bcd").is_empty());
        }
        let events = read(&mut r, b"e\n\n");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].1.len(), 1 + 300 + 1);
        // A CR at the end of a read may be the whole line break: the next read is scanned.
        assert!(read(&mut r, b"data: x\r").is_empty());
        let events = read(&mut r, b"\rmore");
        assert_eq!(events, vec![(String::new(), "x".to_owned(), 1)]);
    }

    #[test]
    fn an_event_past_the_limit_is_refused_whether_one_line_or_many() {
        let mut ok = Vec::new();
        let mut r = SseReader::with_limit(64);
        let first = r.feed(b"data: small\n\ndata: ", |e, _| ok.push(e.data.to_owned()));
        assert_eq!(first, Ok(()));
        assert_eq!(ok, vec!["small".to_owned()]);
        let past = r.feed(&[b'x'; 64], |_, _| {});
        assert_eq!(past, Err(EventTooLarge { limit: 64 }));

        // Comment lines without the blank line that ends an event count too.
        let mut r = SseReader::with_limit(64);
        let mut result = Ok(());
        for _ in 0..10 {
            result = result.and(r.feed(b": keep going\n", |_, _| {}));
        }
        assert_eq!(result, Err(EventTooLarge { limit: 64 }));

        // Events each under the limit never add up.
        let mut r = SseReader::with_limit(64);
        for _ in 0..100 {
            assert_eq!(r.feed(b"data: 0123456789\n\n", |_, _| {}), Ok(()));
        }
        assert!(r.at_boundary());
    }
}
