//! [`LinkedTail`]: the bytes a static library links after the data.

use webnn_weights_artifacts::{DataRange, DATA_ALIGN};

/// The constant table and the graph JSON as a static library links them after the data:
/// the table at the data's end, the graph JSON at the next multiple of [`DATA_ALIGN`],
/// zeros up to the one after.
pub(super) struct LinkedTail {
    /// The bytes after the data.
    pub(super) tail: Vec<u8>,
    /// Where the table is, counted from the data's first byte.
    pub(super) table: DataRange,
    /// Where the graph JSON is, counted from the data's first byte.
    pub(super) graph: DataRange,
}

impl LinkedTail {
    /// The tail after `data_len` bytes of data: `table`, then `graph_json`.
    pub(super) fn new(data_len: u64, table: &[u8], graph_json: &[u8]) -> LinkedTail {
        let align = |n: usize| n.next_multiple_of(DATA_ALIGN as usize);
        let mut tail = Vec::with_capacity(align(table.len()) + align(graph_json.len()));
        tail.extend_from_slice(table);
        tail.resize(align(table.len()), 0);
        let graph_at = tail.len();
        tail.extend_from_slice(graph_json);
        tail.resize(align(tail.len()), 0);
        LinkedTail {
            tail,
            table: DataRange {
                offset: data_len,
                length: table.len() as u64,
            },
            graph: DataRange {
                offset: data_len + graph_at as u64,
                length: graph_json.len() as u64,
            },
        }
    }
}
